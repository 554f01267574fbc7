//! Host names to addresses without stalling the runtime: [`lookup_host`], and
//! the [`ToSocketAddrs`] trait that every address argument of [`net`](super)
//! takes.

use std::io;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, SocketAddrV4, SocketAddrV6};
use std::vec;

/// Resolves `host` — `"example.com:80"`, `("example.com", 80)`, or an address
/// that is already numeric — to its socket addresses (as
/// [`std::net::ToSocketAddrs::to_socket_addrs`]), parking only the calling
/// green thread while the system resolver works.
///
/// ```
/// use fibra::net::lookup_host;
/// use std::net::SocketAddr;
///
/// fibra::run(|| {
///     // A name: resolved on the blocking pool while other green threads run.
///     let local: Vec<SocketAddr> = lookup_host("localhost:80").unwrap().collect();
///     assert!(!local.is_empty());
///     assert!(local.iter().all(|addr| addr.ip().is_loopback() && addr.port() == 80));
///     // A numeric address: parsed where it is, with no hop.
///     let mut numeric = lookup_host(("127.0.0.1", 8080)).unwrap();
///     assert_eq!(numeric.next(), Some(SocketAddr::from(([127, 0, 0, 1], 8080))));
/// });
/// ```
///
/// **The door.** A numeric address (`"10.0.0.1:80"`, `"[::1]:80"`, a
/// [`SocketAddr`], an `(IpAddr, u16)`) is parsed on the calling green thread:
/// no system call, no hop. A name goes to the system resolver (`getaddrinfo`:
/// `/etc/hosts`, DNS, mDNS, whatever `nsswitch.conf` names) on
/// [`blocking`](crate::blocking())'s pool of OS threads: one hop there and
/// back, and only the calling green thread waits. Outside a runtime the
/// resolver runs on the calling thread.
///
/// Not glibc's asynchronous resolver, `getaddrinfo_a`: it is glibc's alone
/// (not musl's, and macOS has nothing portable: its `getaddrinfo_async_start`
/// answers on a Mach port); it runs the lookups in helper threads of its
/// own, which call the same blocking `getaddrinfo` — the same hop, on
/// threads fibra does not control — and it tells of the answer by a signal
/// or by yet another thread, which would then have to wake the runtime. The
/// pool is that hop, on every platform, with the resolver's full
/// configuration.
///
/// If the calling green thread is cancelled while it waits (or a
/// [`timeout`](crate::time::timeout) around it expires), the lookup runs to
/// its end on the pool and its answer is dropped.
///
/// # Errors
///
/// The resolver's error (an unknown name, no network), or `InvalidInput` for
/// a string that is neither an address nor `host:port`.
pub fn lookup_host(host: impl ToSocketAddrs) -> io::Result<impl Iterator<Item = SocketAddr>> {
    host.resolve()
}

/// What may name a socket address: the types for which `std` implements
/// [`std::net::ToSocketAddrs`] — [`SocketAddr`] and its V4 and V6 forms,
/// `(IpAddr, u16)` and its V4 and V6 forms, `&str` and `String` as
/// `"host:port"`, `(&str, u16)` and `(String, u16)`, `&[SocketAddr]`, and a
/// reference to any of these. fibra's sockets take it where `std`'s take
/// `std::net::ToSocketAddrs`, so that a host name is resolved by
/// [`lookup_host`], parking only the calling green thread; numeric
/// addresses are parsed where they are.
///
/// The trait is sealed: how it resolves is fibra's to change.
pub trait ToSocketAddrs: sealed::Resolve {}

mod sealed {
    use std::io;
    use std::net::SocketAddr;
    use std::vec;

    /// How a [`ToSocketAddrs`](super::ToSocketAddrs) becomes addresses.
    pub trait Resolve {
        /// The addresses: parsed here if numeric, else from the resolver on
        /// the blocking pool.
        fn resolve(&self) -> io::Result<vec::IntoIter<SocketAddr>>;
    }
}

use sealed::Resolve;

/// Types whose addresses `std` computes without the resolver.
macro_rules! numeric {
    ($($addr:ty),*) => {$(
        impl ToSocketAddrs for $addr {}

        impl Resolve for $addr {
            fn resolve(&self) -> io::Result<vec::IntoIter<SocketAddr>> {
                let addrs = std::net::ToSocketAddrs::to_socket_addrs(self)?;
                Ok(addrs.collect::<Vec<_>>().into_iter())
            }
        }
    )*};
}

numeric!(
    SocketAddr,
    SocketAddrV4,
    SocketAddrV6,
    (IpAddr, u16),
    (Ipv4Addr, u16),
    (Ipv6Addr, u16)
);

impl ToSocketAddrs for str {}

impl Resolve for str {
    fn resolve(&self) -> io::Result<vec::IntoIter<SocketAddr>> {
        if let Ok(addr) = self.parse::<SocketAddr>() {
            return Ok(vec![addr].into_iter());
        }
        let name = self.to_owned();
        crate::blocking(move || std::net::ToSocketAddrs::to_socket_addrs(name.as_str()))
    }
}

impl ToSocketAddrs for String {}

impl Resolve for String {
    fn resolve(&self) -> io::Result<vec::IntoIter<SocketAddr>> {
        self.as_str().resolve()
    }
}

impl ToSocketAddrs for (&str, u16) {}

impl Resolve for (&str, u16) {
    fn resolve(&self) -> io::Result<vec::IntoIter<SocketAddr>> {
        let (host, port) = *self;
        if let Ok(ip) = host.parse::<IpAddr>() {
            return Ok(vec![SocketAddr::new(ip, port)].into_iter());
        }
        let host = host.to_owned();
        crate::blocking(move || std::net::ToSocketAddrs::to_socket_addrs(&(host.as_str(), port)))
    }
}

impl ToSocketAddrs for (String, u16) {}

impl Resolve for (String, u16) {
    fn resolve(&self) -> io::Result<vec::IntoIter<SocketAddr>> {
        (self.0.as_str(), self.1).resolve()
    }
}

impl ToSocketAddrs for [SocketAddr] {}

impl Resolve for [SocketAddr] {
    fn resolve(&self) -> io::Result<vec::IntoIter<SocketAddr>> {
        Ok(Vec::from(self).into_iter())
    }
}

impl<T: ToSocketAddrs + ?Sized> ToSocketAddrs for &T {}

impl<T: ToSocketAddrs + ?Sized> Resolve for &T {
    fn resolve(&self) -> io::Result<vec::IntoIter<SocketAddr>> {
        (**self).resolve()
    }
}
