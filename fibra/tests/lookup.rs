//! Host names from green threads: `lookup_host`, and the sockets that take a
//! name, resolve it parking only the calling green thread; numeric addresses
//! never leave it.

use fibra::net::{TcpListener, TcpStream, UdpSocket, lookup_host};
use std::cell::Cell;
use std::io::ErrorKind;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::rc::Rc;

/// A green thread that counts its turns, yielding after each: it runs only
/// when the other green threads park (or yield), so the count moves across
/// a call exactly when that call parked. A lookup of a name parks however
/// soon the resolver answers (`localhost`, from `/etc/hosts`, may be answered
/// before the caller looks): [`fibra::blocking`] parks at least once.
struct Ticker {
    ticks: Rc<Cell<u64>>,
    running: Rc<Cell<bool>>,
    thread: fibra::JoinHandle<()>,
}

impl Ticker {
    fn start() -> Ticker {
        let ticks = Rc::new(Cell::new(0));
        let running = Rc::new(Cell::new(true));
        let thread = fibra::spawn({
            let (ticks, running) = (ticks.clone(), running.clone());
            move || {
                while running.get() {
                    ticks.set(ticks.get() + 1);
                    fibra::runtime::yield_now();
                }
            }
        });
        // Let it start, so that it is queued behind the caller from now on.
        fibra::runtime::yield_now();
        Ticker {
            ticks,
            running,
            thread,
        }
    }

    /// How many times the ticker ran during `f`.
    fn during<T>(&self, f: impl FnOnce() -> T) -> (T, u64) {
        let before = self.ticks.get();
        let value = f();
        (value, self.ticks.get() - before)
    }

    fn stop(self) {
        self.running.set(false);
        self.thread.join().unwrap();
    }
}

#[test]
fn a_name_is_resolved_while_other_green_threads_run() {
    fibra::run(|| {
        let ticker = Ticker::start();
        let (addrs, ticks) =
            ticker.during(|| lookup_host("localhost:80").unwrap().collect::<Vec<_>>());
        ticker.stop();
        assert!(!addrs.is_empty(), "localhost resolves");
        for addr in &addrs {
            assert!(addr.ip().is_loopback(), "{addr} is not a loopback address");
            assert_eq!(addr.port(), 80);
        }
        assert!(
            ticks > 0,
            "the lookup held the runtime: the ticker never ran"
        );
        println!("the ticker ran {ticks} times during the lookup");
    });
}

#[test]
fn a_host_and_port_pair_is_resolved_too() {
    fibra::run(|| {
        let ticker = Ticker::start();
        let (addrs, ticks) =
            ticker.during(|| lookup_host(("localhost", 443)).unwrap().collect::<Vec<_>>());
        let (owned, owned_ticks) = ticker.during(|| {
            lookup_host((String::from("localhost"), 443))
                .unwrap()
                .collect::<Vec<_>>()
        });
        ticker.stop();
        assert!(!addrs.is_empty());
        assert!(
            addrs
                .iter()
                .all(|a| a.ip().is_loopback() && a.port() == 443)
        );
        assert_eq!(owned, addrs);
        assert!(
            ticks > 0 && owned_ticks > 0,
            "a lookup held the runtime: the ticker never ran"
        );
    });
}

#[test]
fn numeric_addresses_resolve_without_a_hop() {
    fibra::run(|| {
        let ticker = Ticker::start();
        let v4 = SocketAddr::from(([127, 0, 0, 1], 8080));
        let v6 = SocketAddr::from((Ipv6Addr::LOCALHOST, 8080));
        let one = |addrs: Vec<SocketAddr>| -> SocketAddr {
            assert_eq!(addrs.len(), 1);
            addrs[0]
        };
        let (resolved, ticks) = ticker.during(|| {
            [
                one(lookup_host("127.0.0.1:8080").unwrap().collect()),
                one(lookup_host(String::from("[::1]:8080")).unwrap().collect()),
                one(lookup_host(("127.0.0.1", 8080)).unwrap().collect()),
                one(lookup_host(("::1", 8080)).unwrap().collect()),
                one(lookup_host((IpAddr::V4(Ipv4Addr::LOCALHOST), 8080))
                    .unwrap()
                    .collect()),
                one(lookup_host((Ipv6Addr::LOCALHOST, 8080)).unwrap().collect()),
                one(lookup_host(v4).unwrap().collect()),
                one(lookup_host(&v6).unwrap().collect()),
            ]
        });
        let (slice, slice_ticks) =
            ticker.during(|| lookup_host(&[v4, v6][..]).unwrap().collect::<Vec<_>>());
        ticker.stop();
        assert_eq!(resolved, [v4, v6, v4, v6, v4, v6, v4, v6]);
        assert_eq!(slice, [v4, v6]);
        assert_eq!(ticks + slice_ticks, 0, "a numeric address went to the pool");
    });
}

#[test]
fn a_string_that_is_no_address_is_invalid_input() {
    fibra::run(|| {
        for bad in ["localhost", "localhost:port", "localhost:99999"] {
            let err = lookup_host(bad).map(|_| ()).unwrap_err();
            assert_eq!(err.kind(), ErrorKind::InvalidInput, "{bad}: {err}");
        }
    });
}

#[test]
fn tcp_connects_to_a_name() {
    fibra::run(|| {
        let listener = TcpListener::bind("localhost:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let server = fibra::spawn(move || {
            for _ in 0..2 {
                listener.accept().unwrap();
            }
        });
        let by_string = TcpStream::connect(format!("localhost:{port}")).unwrap();
        let by_pair = TcpStream::connect(("localhost", port)).unwrap();
        for stream in [by_string, by_pair] {
            let peer = stream.peer_addr().unwrap();
            assert!(peer.ip().is_loopback());
            assert_eq!(peer.port(), port);
        }
        server.join().unwrap();
    });
}

#[test]
fn udp_sends_to_a_name() {
    fibra::run(|| {
        // Both bound to localhost's first address, the one `send_to` uses.
        let receiver = UdpSocket::bind("localhost:0").unwrap();
        let at = receiver.local_addr().unwrap();
        let sender = UdpSocket::bind((at.ip(), 0)).unwrap();
        sender.send_to(b"ping", ("localhost", at.port())).unwrap();
        let mut buf = [0; 8];
        let (n, from) = receiver.recv_from(&mut buf).unwrap();
        assert_eq!(&buf[..n], b"ping");
        assert_eq!(from, sender.local_addr().unwrap());
    });
}
