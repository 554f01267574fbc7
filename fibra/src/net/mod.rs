//! Sockets for green threads: [`TcpListener`], [`TcpStream`] and [`UdpSocket`],
//! shaped like their `std::net` namesakes, and the Unix domain sockets
//! [`UnixListener`], [`UnixStream`] and [`UnixDatagram`], shaped like
//! `std::os::unix::net`'s, whose blocking operations park only
//! the calling green thread while the runtime's reactor (epoll) waits for the
//! kernel. Errors are `std::io::Error`s: a refused connection or a peer reset
//! is an `Err`, never a panic.
//!
//! Every operation takes `&self`, and any number of green threads may wait on
//! one socket in the same direction: several accepting on one
//! `Rc<TcpListener>`, several reading one stream or receiving on one UDP
//! socket. They are served in turns, oldest first: when the socket becomes
//! ready one waiter is woken (not all of them), and if its operation leaves
//! the socket still ready — more connections in the backlog, more bytes —
//! the next one is woken in turn. A waiter that leaves without using its turn
//! (cancelled, say) passes it on, so none is left waiting while the socket
//! has something for it.
//!
//! ```
//! use fibra::net::{TcpListener, TcpStream};
//! use std::rc::Rc;
//!
//! fibra::run(|| {
//!     let listener = Rc::new(TcpListener::bind("127.0.0.1:0").unwrap());
//!     let addr = listener.local_addr().unwrap();
//!     let acceptors: Vec<_> = (0..4)
//!         .map(|_| {
//!             let listener = listener.clone();
//!             fibra::spawn(move || listener.accept().unwrap().1)
//!         })
//!         .collect();
//!     let clients: Vec<_> = (0..4).map(|_| TcpStream::connect(addr).unwrap()).collect();
//!     let mut accepted: Vec<_> = acceptors.into_iter().map(|a| a.join().unwrap()).collect();
//!     let mut connected: Vec<_> = clients.iter().map(|c| c.local_addr().unwrap()).collect();
//!     accepted.sort();
//!     connected.sort();
//!     assert_eq!(accepted, connected); // each acceptor got one connection
//! });
//! ```
//!
//! Every address argument takes a [`ToSocketAddrs`] (implemented for the
//! same types as `std`'s): a numeric address is used as it is, and a host
//! name (`"example.com:80"`, `("example.com", 80)`) is resolved by
//! [`lookup_host`] on the [`blocking`](crate::blocking()) pool, parking only
//! the calling green thread. Each socket type bounds its waits with
//! `set_read_timeout` (for a listener: its accepts) and, where it writes,
//! `set_write_timeout`; [`TcpStream::connect_timeout`] bounds a connect.
//!
//! A socket belongs to the runtime of the OS thread that made it (it is neither
//! `Send` nor `Sync`). To hand a connection to another OS thread, move the
//! `std` socket there (a Unix socket's `into_std` gives one back) and take it
//! over with `from_std`.

mod lookup;
pub(crate) mod registration;
mod socket_io;
mod tcp;
mod udp;
mod unix_datagram;
mod unix_stream;

pub use lookup::{ToSocketAddrs, lookup_host};
pub use tcp::{TcpListener, TcpStream};
pub use udp::UdpSocket;
pub use unix_datagram::UnixDatagram;
pub use unix_stream::{UnixListener, UnixStream};

/// `AsRawFd` and `AsFd` for each socket type: its descriptor, for socket
/// options fibra does not wrap. Do not change its blocking mode or close it.
macro_rules! impl_as_fd {
    ($($socket:ty: $($via:ident()).+;)*) => {$(
        impl std::os::fd::AsRawFd for $socket {
            fn as_raw_fd(&self) -> std::os::fd::RawFd {
                self$(.$via())+.as_raw_fd()
            }
        }

        impl std::os::fd::AsFd for $socket {
            fn as_fd(&self) -> std::os::fd::BorrowedFd<'_> {
                self$(.$via())+.as_fd()
            }
        }
    )*};
}

/// `Read` and `Write` for an owned stream, through those of `&stream`,
/// which do the work (so that two green threads may read and write one
/// shared stream at once).
macro_rules! impl_io_by_ref {
    ($($stream:ty),*) => {$(
        impl std::io::Read for $stream {
            fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
                (&*self).read(buf)
            }

            fn read_vectored(
                &mut self,
                bufs: &mut [std::io::IoSliceMut<'_>],
            ) -> std::io::Result<usize> {
                (&*self).read_vectored(bufs)
            }
        }

        impl std::io::Write for $stream {
            fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
                (&*self).write(buf)
            }

            fn write_vectored(&mut self, bufs: &[std::io::IoSlice<'_>]) -> std::io::Result<usize> {
                (&*self).write_vectored(bufs)
            }

            fn flush(&mut self) -> std::io::Result<()> {
                Ok(())
            }
        }
    )*};
}

impl_io_by_ref!(TcpStream, UnixStream);

impl_as_fd! {
    TcpListener: registration().source();
    TcpStream: registration().source();
    UdpSocket: registration().source();
    UnixListener: io();
    UnixStream: io();
    UnixDatagram: io();
}
