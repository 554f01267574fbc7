//! Sockets for green threads: [`TcpListener`], [`TcpStream`] and [`UdpSocket`],
//! shaped like their `std::net` namesakes, whose blocking operations park only
//! the calling green thread while the runtime's reactor (epoll) waits for the
//! kernel. Errors are `std::io::Error`s: a refused connection or a peer reset
//! is an `Err`, never a panic.
//!
//! A socket belongs to the runtime of the OS thread that made it (it is neither
//! `Send` nor `Sync`). To hand a connection to another OS thread, move the
//! `std::net` socket there and take it over with `from_std`.

mod registration;
mod tcp;
mod udp;

pub use tcp::{TcpListener, TcpStream};
pub use udp::UdpSocket;
