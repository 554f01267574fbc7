//! Linux: a child's exit through a pidfd (`pidfd_open`, Linux 5.3) in the
//! runtime's reactor. The pidfd becomes readable when the child exits; the
//! waiting green thread then reaps it with `std`'s `try_wait`.

use super::unix;
use crate::net::registration::Registration;
use crate::runtime::WaitReason;
use crate::runtime::reactor::Direction;
use mio::event::Source;
use mio::unix::SourceFd;
use mio::{Interest, Registry, Token};
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::process::{Child, ExitStatus};

/// Parks the calling green thread until `child` has exited, and reaps it.
///
/// # Panics
///
/// Outside a runtime.
pub(crate) fn wait(child: &mut Child) -> io::Result<ExitStatus> {
    if let Some(status) = child.try_wait()? {
        return Ok(status);
    }
    let pid = child.id();
    let pidfd = match PidFd::open(pid) {
        Ok(pidfd) => pidfd,
        Err(err) if no_pidfd(&err) => return unix::wait(child),
        Err(err) => return Err(err),
    };
    let exit = Registration::with_interest(pidfd, Interest::READABLE)?;
    // It was running a moment ago: wait for the pidfd before asking again.
    // If it exited meanwhile, the pidfd was readable when it was registered,
    // and the reactor's next poll reports it.
    exit.clear_ready(Direction::Read);
    exit.io_as(Direction::Read, WaitReason::ChildExit { pid }, |_| {
        child
            .try_wait()?
            .ok_or_else(|| io::ErrorKind::WouldBlock.into())
    })
}

/// Whether `pidfd_open` failed because the kernel cannot give one: it is
/// older than 5.3 (`ENOSYS`), or a seccomp filter refuses system calls it
/// does not know, as older container runtimes' do (`EPERM`, which
/// `pidfd_open` itself never returns).
fn no_pidfd(err: &io::Error) -> bool {
    matches!(err.raw_os_error(), Some(libc::ENOSYS | libc::EPERM))
}

/// A process's pidfd.
struct PidFd(OwnedFd);

impl PidFd {
    fn open(pid: u32) -> io::Result<PidFd> {
        let pid = libc::pid_t::try_from(pid)
            .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "pid out of range"))?;
        // SAFETY: `pidfd_open(pid, 0)` reads no memory of ours; it returns a
        // new descriptor (close-on-exec) or -1.
        let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        let fd = RawFd::try_from(fd).map_err(io::Error::other)?;
        // SAFETY: `fd` was just returned by the kernel, and nothing else owns it.
        Ok(PidFd(unsafe { OwnedFd::from_raw_fd(fd) }))
    }
}

impl AsRawFd for PidFd {
    fn as_raw_fd(&self) -> RawFd {
        self.0.as_raw_fd()
    }
}

impl Source for PidFd {
    fn register(
        &mut self,
        registry: &Registry,
        token: Token,
        interests: Interest,
    ) -> io::Result<()> {
        SourceFd(&self.0.as_raw_fd()).register(registry, token, interests)
    }

    fn reregister(
        &mut self,
        registry: &Registry,
        token: Token,
        interests: Interest,
    ) -> io::Result<()> {
        SourceFd(&self.0.as_raw_fd()).reregister(registry, token, interests)
    }

    fn deregister(&mut self, registry: &Registry) -> io::Result<()> {
        SourceFd(&self.0.as_raw_fd()).deregister(registry)
    }
}
