//! A child's piped stdin, stdout and stderr as streams of the runtime's
//! reactor: reading and writing park only the calling green thread.

use crate::net::registration::Registration;
use crate::runtime::reactor::Direction;
use mio::Interest;
use mio::unix::pipe::{Receiver, Sender};
use std::fmt;
use std::io::{self, Read, Write};
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd, RawFd};
use std::process::Stdio;

/// The write end of a child's stdin (as [`std::process::ChildStdin`]): writes
/// park only the calling green thread while the pipe is full. Dropping it
/// closes the pipe, which the child reads as the end of its input.
pub struct ChildStdin {
    inner: Registration<Sender>,
}

impl ChildStdin {
    pub(super) fn new(stdin: std::process::ChildStdin) -> io::Result<ChildStdin> {
        let sender = Sender::from(stdin);
        // Only this process's end of the pipe: the child's end keeps its
        // blocking mode.
        sender.set_nonblocking(true)?;
        Ok(ChildStdin {
            inner: Registration::with_interest(sender, Interest::WRITABLE)?,
        })
    }

    /// The pipe's descriptor, out of the reactor and blocking again: for a
    /// program that is not a green thread, or another child.
    ///
    /// # Errors
    ///
    /// If the descriptor cannot be duplicated (`EMFILE`: the process has as
    /// many open as it may) or made blocking again.
    pub fn into_owned_fd(self) -> io::Result<OwnedFd> {
        let pipe = Sender::from(self.as_fd().try_clone_to_owned()?);
        // The reactor forgets the original as it closes; the copy shares its
        // file status flags, blocking mode included.
        drop(self);
        pipe.set_nonblocking(false)?;
        Ok(pipe.into())
    }

    fn registration(&self) -> &Registration<Sender> {
        &self.inner
    }
}

impl Write for &ChildStdin {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.inner.io(Direction::Write, |mut s| s.write(buf))
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl Write for ChildStdin {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        (&*self).write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Reads from the read end of a pipe, parking while it is empty.
fn read(pipe: &Registration<Receiver>, buf: &mut [u8]) -> io::Result<usize> {
    let n = pipe.io(Direction::Read, |mut r| r.read(buf))?;
    // A read that filled less than its buffer (and was not the end) emptied
    // the pipe: the next one waits for the reactor instead of first failing
    // with `WouldBlock`. New data brings a new edge-triggered event.
    if n > 0 && n < buf.len() {
        pipe.clear_ready(Direction::Read);
    }
    Ok(n)
}

/// A child's output pipe: `Read` for the type and for a shared reference to
/// it, and its descriptor.
macro_rules! output_pipe {
    ($(#[$doc:meta])* $name:ident, $std:ty) => {
        $(#[$doc])*
        pub struct $name {
            inner: Registration<Receiver>,
        }

        impl $name {
            pub(super) fn new(pipe: $std) -> io::Result<$name> {
                let receiver = Receiver::from(pipe);
                // Only this process's end of the pipe: the child's end keeps
                // its blocking mode.
                receiver.set_nonblocking(true)?;
                Ok($name {
                    inner: Registration::with_interest(receiver, Interest::READABLE)?,
                })
            }

            /// The pipe's descriptor, out of the reactor and blocking
            /// again: for a program that is not a green thread, or another
            /// child (see [`Stdio`]'s `TryFrom`).
            ///
            /// # Errors
            ///
            /// If the descriptor cannot be duplicated (`EMFILE`: the
            /// process has as many open as it may) or made blocking again.
            pub fn into_owned_fd(self) -> io::Result<OwnedFd> {
                let pipe = Receiver::from(self.as_fd().try_clone_to_owned()?);
                // The reactor forgets the original as it closes; the copy
                // shares its file status flags, blocking mode included.
                drop(self);
                pipe.set_nonblocking(false)?;
                Ok(pipe.into())
            }

            fn registration(&self) -> &Registration<Receiver> {
                &self.inner
            }
        }

        impl Read for &$name {
            fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
                read(&self.inner, buf)
            }
        }

        impl Read for $name {
            fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
                read(&self.inner, buf)
            }
        }
    };
}

output_pipe!(
    /// The read end of a child's stdout (as [`std::process::ChildStdout`]):
    /// reads park only the calling green thread while the pipe is empty, and
    /// return 0 once the child has closed it (exited, usually).
    ChildStdout,
    std::process::ChildStdout
);

output_pipe!(
    /// The read end of a child's stderr (as [`std::process::ChildStderr`]):
    /// as [`ChildStdout`].
    ChildStderr,
    std::process::ChildStderr
);

/// `AsRawFd`, `AsFd` and `Debug` for each pipe type: its descriptor, for
/// what fibra does not wrap (do not change its blocking mode or close it);
/// and a [`Stdio`] made of it, to hand it to another child.
macro_rules! impl_fd {
    ($($pipe:ident),*) => {$(
        /// The pipe as another child's stdio, blocking again (as its
        /// `into_owned_fd`): the way to build a pipeline, `a | b`.
        impl TryFrom<$pipe> for Stdio {
            type Error = io::Error;

            fn try_from(pipe: $pipe) -> io::Result<Stdio> {
                pipe.into_owned_fd().map(Stdio::from)
            }
        }

        impl AsRawFd for $pipe {
            fn as_raw_fd(&self) -> RawFd {
                self.registration().source().as_raw_fd()
            }
        }

        impl AsFd for $pipe {
            fn as_fd(&self) -> BorrowedFd<'_> {
                self.registration().source().as_fd()
            }
        }

        impl fmt::Debug for $pipe {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.debug_struct(stringify!($pipe))
                    .field("fd", &self.as_raw_fd())
                    .finish()
            }
        }
    )*};
}

impl_fd!(ChildStdin, ChildStdout, ChildStderr);
