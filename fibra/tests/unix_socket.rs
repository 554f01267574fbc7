//! Unix domain sockets for green threads: streams, listeners and datagrams
//! park only the green thread that waits, and fail as `std`'s do.

#[path = "support/ticking.rs"]
mod ticking;

use fibra::net::{UnixDatagram, UnixListener, UnixStream};
use std::io::{ErrorKind, Read, Write};
use std::net::Shutdown;
use std::os::fd::{AsFd, AsRawFd};
use std::path::PathBuf;
use std::rc::Rc;
use std::time::Duration;
use ticking::{TICKS, Ticker, wait_for_ticks};

/// A directory of this test's own for socket files, removed when dropped.
struct SocketDir(PathBuf);

impl SocketDir {
    fn new(test: &str) -> SocketDir {
        let dir = std::env::temp_dir().join(format!("fibra-{}-{test}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        SocketDir(dir)
    }

    fn path(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }
}

impl Drop for SocketDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[test]
fn a_unix_socket_echo_parks_only_its_green_threads() {
    let dir = SocketDir::new("echo-ticker");
    let path = dir.path("echo.sock");
    let ticks = fibra::run(move || {
        let ticker = Ticker::start();
        let listener = UnixListener::bind(&path).unwrap();
        // A plain OS thread is the client; it connects, and later writes, only
        // once the ticker has ticked: if the accept or the read held the
        // runtime's OS thread, it never would.
        let counter = ticker.counter();
        let client = std::thread::spawn(move || {
            wait_for_ticks(&counter, TICKS);
            let mut stream = std::os::unix::net::UnixStream::connect(&path).unwrap();
            wait_for_ticks(&counter, 2 * TICKS);
            stream.write_all(b"hello").unwrap();
            let mut back = [0; 5];
            stream.read_exact(&mut back).unwrap();
            back
        });
        let (mut conn, _) = listener.accept().unwrap();
        let mut buf = [0; 5];
        conn.read_exact(&mut buf).unwrap();
        conn.write_all(&buf).unwrap();
        assert_eq!(&client.join().unwrap(), b"hello");
        ticker.stop()
    });
    assert!(ticks >= 2 * TICKS, "{ticks} ticks");
}

#[test]
fn many_clients_and_their_server_share_one_os_thread() {
    const CLIENTS: usize = 100;
    let dir = SocketDir::new("many");
    let path = dir.path("many.sock");
    fibra::run(move || {
        let listener = Rc::new(UnixListener::bind(&path).unwrap());
        let server = fibra::spawn({
            let listener = listener.clone();
            move || {
                for conn in listener.incoming().take(CLIENTS) {
                    let conn = conn.unwrap();
                    fibra::spawn(move || {
                        let mut buf = [0; 64];
                        loop {
                            match (&conn).read(&mut buf).unwrap() {
                                0 => return,
                                n => (&conn).write_all(&buf[..n]).unwrap(),
                            }
                        }
                    });
                }
            }
        });
        let clients: Vec<_> = (0..CLIENTS)
            .map(|i| {
                let path = path.clone();
                fibra::spawn(move || {
                    let mut stream = UnixStream::connect(&path).unwrap();
                    for round in 0..10 {
                        let msg = format!("client {i} round {round}");
                        stream.write_all(msg.as_bytes()).unwrap();
                        let mut back = vec![0; msg.len()];
                        stream.read_exact(&mut back).unwrap();
                        assert_eq!(back, msg.as_bytes());
                    }
                })
            })
            .collect();
        clients.into_iter().for_each(|c| c.join().unwrap());
        server.join().unwrap();
    });
}

#[test]
fn a_pair_talks_and_shutdown_reads_as_end_of_stream() {
    fibra::run(|| {
        let (a, mut b) = UnixStream::pair().unwrap();
        (&a).write_all(b"over").unwrap();
        a.shutdown(Shutdown::Write).unwrap();
        let mut all = Vec::new();
        b.read_to_end(&mut all).unwrap();
        assert_eq!(all, b"over");
        // The other way still works.
        b.write_all(b"back").unwrap();
        let mut buf = [0; 4];
        (&a).read_exact(&mut buf).unwrap();
        assert_eq!(&buf, b"back");
        assert!(a.as_raw_fd() >= 0);
        assert!(a.as_fd().try_clone_to_owned().is_ok());
        assert!(a.peer_addr().unwrap().is_unnamed());
        assert!(a.take_error().unwrap().is_none());
    });
}

#[test]
fn addresses_and_connection_errors_are_std_s() {
    let dir = SocketDir::new("errors");
    let path = dir.path("server.sock");
    let gone = dir.path("gone.sock");
    fibra::run(move || {
        let err = UnixStream::connect(dir.path("missing.sock")).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::NotFound, "{err}");
        // A socket file whose listener is gone refuses.
        drop(UnixListener::bind(&gone).unwrap());
        let err = UnixStream::connect(&gone).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::ConnectionRefused, "{err}");
        let listener = UnixListener::bind(&path).unwrap();
        let err = UnixListener::bind(&path).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::AddrInUse, "{err}");
        assert_eq!(listener.local_addr().unwrap().as_pathname(), Some(&*path));
        let client = UnixStream::connect(&path).unwrap();
        let (server, from) = listener.accept().unwrap();
        assert!(from.is_unnamed());
        assert_eq!(client.peer_addr().unwrap().as_pathname(), Some(&*path));
        assert_eq!(server.local_addr().unwrap().as_pathname(), Some(&*path));
    });
}

#[test]
fn read_write_and_accept_timeouts_end_their_waits() {
    let dir = SocketDir::new("timeouts");
    let path = dir.path("t.sock");
    fibra::run(move || {
        let listener = UnixListener::bind(&path).unwrap();
        listener
            .set_read_timeout(Some(Duration::from_millis(10)))
            .unwrap();
        assert_eq!(
            listener.read_timeout().unwrap(),
            Some(Duration::from_millis(10))
        );
        assert_eq!(listener.accept().unwrap_err().kind(), ErrorKind::TimedOut);

        let (a, b) = UnixStream::pair().unwrap();
        assert_eq!(
            a.set_read_timeout(Some(Duration::ZERO)).unwrap_err().kind(),
            ErrorKind::InvalidInput
        );
        a.set_read_timeout(Some(Duration::from_millis(10))).unwrap();
        assert_eq!(
            (&a).read(&mut [0; 4]).unwrap_err().kind(),
            ErrorKind::TimedOut
        );
        // A peer that does not read fills the buffers; then writes time out.
        a.set_write_timeout(Some(Duration::from_millis(10)))
            .unwrap();
        assert_eq!(a.write_timeout().unwrap(), Some(Duration::from_millis(10)));
        let chunk = vec![0u8; 1 << 16];
        let err = loop {
            if let Err(err) = (&a).write(&chunk) {
                break err;
            }
        };
        assert_eq!(err.kind(), ErrorKind::TimedOut);
        drop(b);

        let (x, _y) = UnixDatagram::pair().unwrap();
        x.set_read_timeout(Some(Duration::from_millis(10))).unwrap();
        assert_eq!(x.recv(&mut [0; 4]).unwrap_err().kind(), ErrorKind::TimedOut);
        assert_eq!(x.read_timeout().unwrap(), Some(Duration::from_millis(10)));
    });
}

#[test]
fn datagrams_go_both_ways_by_path_by_connection_and_in_pairs() {
    let dir = SocketDir::new("datagrams");
    let (a_path, b_path) = (dir.path("a.sock"), dir.path("b.sock"));
    fibra::run(move || {
        let a = UnixDatagram::bind(&a_path).unwrap();
        let b = UnixDatagram::bind(&b_path).unwrap();
        // b waits before a sends.
        let receiver = fibra::spawn(move || {
            let mut buf = [0; 16];
            let (n, from) = b.recv_from(&mut buf).unwrap();
            assert_eq!(&buf[..n], b"ping");
            b.send_to(b"pong", from.as_pathname().unwrap()).unwrap();
            b
        });
        fibra::runtime::yield_now();
        assert_eq!(a.send_to(b"ping", &b_path).unwrap(), 4);
        let mut buf = [0; 16];
        let (n, from) = a.recv_from(&mut buf).unwrap();
        assert_eq!(
            (&buf[..n], from.as_pathname()),
            (&b"pong"[..], Some(&*b_path))
        );
        let b = receiver.join().unwrap();

        a.connect(&b_path).unwrap();
        assert_eq!(a.peer_addr().unwrap().as_pathname(), Some(&*b_path));
        a.send(b"connected").unwrap();
        let n = b.recv(&mut buf).unwrap();
        assert_eq!(&buf[..n], b"connected");

        let unbound = UnixDatagram::unbound().unwrap();
        unbound.send_to(b"anonymous", &b_path).unwrap();
        let (n, from) = b.recv_from(&mut buf).unwrap();
        assert_eq!(&buf[..n], b"anonymous");
        assert!(from.is_unnamed());

        let (x, y) = UnixDatagram::pair().unwrap();
        x.send(b"one").unwrap();
        x.send(b"two").unwrap();
        assert_eq!(y.recv(&mut buf).unwrap(), 3);
        assert_eq!(&buf[..3], b"one");
        assert_eq!(y.recv(&mut buf).unwrap(), 3);
        assert_eq!(&buf[..3], b"two");
        x.shutdown(Shutdown::Both).unwrap();
        assert!(x.take_error().unwrap().is_none());
    });
}

#[test]
fn a_connection_moves_to_another_runtime_through_std() {
    let dir = SocketDir::new("handover");
    let path = dir.path("h.sock");
    let (to_worker, from_acceptor) = std::sync::mpsc::channel();
    let worker = std::thread::spawn(move || {
        fibra::run(move || {
            let stream = UnixStream::from_std(from_acceptor.recv().unwrap()).unwrap();
            let mut buf = [0; 5];
            (&stream).read_exact(&mut buf).unwrap();
            (&stream).write_all(&buf).unwrap();
        })
    });
    fibra::run(move || {
        let listener = UnixListener::bind(&path).unwrap();
        let mut client = UnixStream::connect(&path).unwrap();
        let (conn, _) = listener.accept().unwrap();
        to_worker.send(conn.into_std()).unwrap();
        client.write_all(b"hello").unwrap();
        let mut back = [0; 5];
        client.read_exact(&mut back).unwrap();
        assert_eq!(&back, b"hello");
        // A listener goes the same way, and comes back.
        let listener = UnixListener::from_std(listener.into_std()).unwrap();
        let _second = UnixStream::connect(&path).unwrap();
        listener.accept().unwrap();
    });
    worker.join().unwrap();
}

#[cfg(target_os = "linux")]
#[test]
fn connect_waits_for_room_in_a_full_backlog() {
    use socket2::{Domain, SockAddr, Socket, Type};
    const CLIENTS: usize = 6;
    let dir = SocketDir::new("backlog");
    let path = dir.path("small.sock");
    fibra::run(move || {
        // A backlog of one: Linux queues two connections, and refuses the
        // third with `EAGAIN` until one is accepted.
        let socket = Socket::new(Domain::UNIX, Type::STREAM, None).unwrap();
        socket.bind(&SockAddr::unix(&path).unwrap()).unwrap();
        socket.listen(1).unwrap();
        let listener = UnixListener::from_std(socket.into()).unwrap();
        let clients: Vec<_> = (0..CLIENTS)
            .map(|i| {
                let path = path.clone();
                fibra::spawn(move || {
                    let mut stream = UnixStream::connect(&path).unwrap();
                    stream.write_all(&[i as u8]).unwrap();
                })
            })
            .collect();
        // Every client has tried before anything is accepted.
        fibra::time::sleep(Duration::from_millis(20));
        let mut seen: Vec<u8> = (0..CLIENTS)
            .map(|_| {
                let (mut conn, _) = listener.accept().unwrap();
                let mut byte = [0];
                conn.read_exact(&mut byte).unwrap();
                byte[0]
            })
            .collect();
        clients.into_iter().for_each(|c| c.join().unwrap());
        seen.sort();
        assert_eq!(seen, (0..CLIENTS as u8).collect::<Vec<_>>());
    });
}
