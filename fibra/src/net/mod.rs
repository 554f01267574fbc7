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

/// `AsRawFd` and `AsFd` for each socket type: its descriptor, for socket
/// options fibra does not wrap. Do not change its blocking mode or close it.
macro_rules! impl_as_fd {
    ($($socket:ty),*) => {$(
        impl std::os::fd::AsRawFd for $socket {
            fn as_raw_fd(&self) -> std::os::fd::RawFd {
                self.registration().source().as_raw_fd()
            }
        }

        impl std::os::fd::AsFd for $socket {
            fn as_fd(&self) -> std::os::fd::BorrowedFd<'_> {
                self.registration().source().as_fd()
            }
        }
    )*};
}

impl_as_fd!(TcpListener, TcpStream, UdpSocket);
