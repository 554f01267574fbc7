//! Any file descriptor from a green thread: [`Async`] wraps a value with a
//! pollable descriptor — a pipe, a tty, a socket fibra has no type for, an
//! inotify, eventfd or netlink descriptor, a serial port — and parks only the
//! calling green thread while it is not ready, as [`net`](crate::net)'s
//! sockets do.
//!
//! ```
//! use fibra::io::Async;
//! use std::io::{Read, Write};
//!
//! fibra::run(|| {
//!     let (reader, writer) = std::io::pipe().unwrap();
//!     let (reader, mut writer) = (Async::new(reader).unwrap(), Async::new(writer).unwrap());
//!     // One green thread reads while another writes: each parks only itself.
//!     let echo = fibra::spawn(move || {
//!         let mut line = [0; 6];
//!         (&reader).read_exact(&mut line).unwrap();
//!         line
//!     });
//!     writer.write_all(b"hello\n").unwrap();
//!     assert_eq!(&echo.join().unwrap(), b"hello\n");
//! });
//! ```
//!
//! What can be polled is what the kernel's poller (epoll on Linux, kqueue
//! on macOS) accepts. Regular files and directories are always "ready" and
//! their reads block in the kernel all the same: on Linux `Async::new`
//! refuses them (`EPERM`); read files with [`blocking`](crate::blocking).

mod async_fd;
mod fd;

pub use async_fd::Async;
pub(crate) use fd::set_nonblocking;
