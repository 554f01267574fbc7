//! Sockets for green threads: many connections on one OS thread, and every
//! failure as an `io::Error`, never a panic.

use fibra::net::{TcpListener, TcpStream, UdpSocket};
use fibra::runtime;
use std::io::{ErrorKind, IoSliceMut, Read, Write};
use std::net::Shutdown;
use std::os::fd::AsRawFd;
use std::rc::Rc;

/// Raises the soft open-file limit to the hard one (a test with thousands of
/// sockets needs more than the usual 1,024).
fn raise_fd_limit() -> u64 {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit/setrlimit with a valid rlimit struct.
    unsafe {
        libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit);
        limit.rlim_cur = limit.rlim_max;
        libc::setrlimit(libc::RLIMIT_NOFILE, &limit);
    }
    limit.rlim_cur
}

#[test]
fn echo_with_a_thousand_connections_at_once_on_one_os_thread() {
    const CONNECTIONS: usize = 1000;
    const ROUNDS: usize = 20;
    assert!(
        raise_fd_limit() >= 2 * CONNECTIONS as u64 + 64,
        "the hard open-file limit is too low for this test"
    );
    let echoed = fibra::run(|| {
        let listener = Rc::new(TcpListener::bind("127.0.0.1:0").unwrap());
        let addr = listener.local_addr().unwrap();
        let server = {
            let listener = listener.clone();
            fibra::spawn(move || {
                let mut handlers = Vec::new();
                for _ in 0..CONNECTIONS {
                    let (mut conn, _) = listener.accept().unwrap();
                    handlers.push(fibra::spawn(move || {
                        let mut buf = [0u8; 64];
                        let mut bytes = 0;
                        loop {
                            match conn.read(&mut buf).unwrap() {
                                0 => return bytes,
                                n => {
                                    conn.write_all(&buf[..n]).unwrap();
                                    bytes += n;
                                }
                            }
                        }
                    }));
                }
                handlers
                    .into_iter()
                    .map(|h| h.join().unwrap())
                    .sum::<usize>()
            })
        };
        // Every client connects first, so that all the connections are open at
        // the same time, then they talk.
        let clients: Vec<_> = (0..CONNECTIONS)
            .map(|i| {
                fibra::spawn(move || {
                    let mut conn = TcpStream::connect(addr).unwrap();
                    conn.set_nodelay(true).unwrap();
                    runtime::yield_now();
                    for round in 0..ROUNDS {
                        let msg = format!("client {i:04} round {round:02}");
                        conn.write_all(msg.as_bytes()).unwrap();
                        let mut back = vec![0; msg.len()];
                        conn.read_exact(&mut back).unwrap();
                        assert_eq!(back, msg.as_bytes());
                    }
                })
            })
            .collect();
        clients.into_iter().for_each(|c| c.join().unwrap());
        server.join().unwrap()
    });
    assert_eq!(echoed, CONNECTIONS * ROUNDS * "client 0000 round 00".len());
}

#[test]
fn a_refused_connection_is_an_error() {
    fibra::run(|| {
        // A port that was just free: nothing listens there now.
        let addr = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap();
        let err = TcpStream::connect(addr).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::ConnectionRefused);
    });
}

#[test]
fn a_reset_by_the_peer_is_an_error_on_read() {
    fibra::run(|| {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let mut client = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let (server_side, _) = listener.accept().unwrap();
        // SO_LINGER with a zero timeout makes close send a reset.
        let linger = libc::linger {
            l_onoff: 1,
            l_linger: 0,
        };
        // SAFETY: setsockopt on a valid socket with a correctly sized option.
        let rc = unsafe {
            libc::setsockopt(
                server_side.as_raw_fd(),
                libc::SOL_SOCKET,
                libc::SO_LINGER,
                (&linger as *const libc::linger).cast(),
                std::mem::size_of::<libc::linger>() as libc::socklen_t,
            )
        };
        assert_eq!(rc, 0);
        drop(server_side);
        let err = client.read(&mut [0; 16]).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::ConnectionReset);
    });
}

#[test]
fn shutdown_and_close_read_as_end_of_stream() {
    fibra::run(|| {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let client = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let (mut server_side, peer) = listener.accept().unwrap();
        assert_eq!(peer, client.local_addr().unwrap());
        assert_eq!(client.peer_addr().unwrap(), listener.local_addr().unwrap());
        (&client).write_all(b"last words").unwrap();
        client.shutdown(Shutdown::Write).unwrap();
        let mut all = String::new();
        server_side.read_to_string(&mut all).unwrap();
        assert_eq!(all, "last words");
        drop(server_side);
        assert_eq!((&client).read(&mut [0; 8]).unwrap(), 0);
    });
}

#[test]
fn one_green_thread_reads_while_another_writes_the_same_stream() {
    fibra::run(|| {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let echo = fibra::spawn(move || {
            let (mut conn, _) = listener.accept().unwrap();
            let mut buf = vec![0; 1 << 16];
            loop {
                match conn.read(&mut buf).unwrap() {
                    0 => break,
                    n => conn.write_all(&buf[..n]).unwrap(),
                }
            }
        });
        let stream = Rc::new(TcpStream::connect(addr).unwrap());
        // 4 MiB: far more than the socket buffers hold, so the writer parks
        // while the reader drains.
        let data: Vec<u8> = (0..4 << 20).map(|i| (i % 251) as u8).collect();
        let writer = {
            let (stream, data) = (stream.clone(), data.clone());
            fibra::spawn(move || {
                (&*stream).write_all(&data).unwrap();
                stream.shutdown(Shutdown::Write).unwrap();
            })
        };
        let mut back = Vec::new();
        (&*stream).read_to_end(&mut back).unwrap();
        writer.join().unwrap();
        echo.join().unwrap();
        assert!(back == data, "the echoed bytes differ");
    });
}

#[test]
fn a_thread_blocked_in_accept_can_be_cancelled() {
    fibra::run(|| {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let h = fibra::spawn(move || listener.accept().map(|_| ()));
        runtime::yield_now();
        h.cancel();
        assert!(matches!(h.join(), Err(runtime::JoinError::Cancelled)));
    });
}

#[test]
fn udp_connected_sockets_talk() {
    fibra::run(|| {
        let a = UdpSocket::bind("127.0.0.1:0").unwrap();
        let b = UdpSocket::bind("127.0.0.1:0").unwrap();
        a.connect(b.local_addr().unwrap()).unwrap();
        b.connect(a.local_addr().unwrap()).unwrap();
        let reader = fibra::spawn(move || {
            let mut buf = [0; 32];
            let n = b.recv(&mut buf).unwrap();
            b.send(&buf[..n]).unwrap();
            buf[..n].to_vec()
        });
        runtime::yield_now(); // the reader parks in recv first
        a.send(b"datagram").unwrap();
        let mut buf = [0; 32];
        let n = a.recv(&mut buf).unwrap();
        assert_eq!(&buf[..n], b"datagram");
        assert_eq!(reader.join().unwrap(), b"datagram");
    });
}

#[test]
fn end_of_stream_after_a_short_read_is_not_missed() {
    // The peer's last data and its FIN reach the reader in one readiness event,
    // which the reactor takes while the reader waits. The reader's read of the
    // data is short; the end of stream brings no new event, yet the next read
    // must return 0 at once rather than wait forever.
    let got = fibra::run(|| {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let mut client = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let (server_side, _) = listener.accept().unwrap();
        let reader = fibra::spawn(move || {
            // Wait for readability with nothing there yet.
            server_side.peek(&mut [0; 1]).unwrap();
            let mut all = Vec::new();
            let mut buf = [0; 4096];
            loop {
                match (&server_side).read(&mut buf).unwrap() {
                    0 => return all,
                    n => all.extend_from_slice(&buf[..n]),
                }
            }
        });
        runtime::yield_now(); // the reader parks in peek
        // Data and FIN back to back, before the runtime polls again.
        client.write_all(&[7; 1000]).unwrap();
        client.shutdown(Shutdown::Write).unwrap();
        reader.join().unwrap()
    });
    assert_eq!(got, vec![7; 1000]);
}

#[test]
fn a_read_that_empties_the_socket_still_sees_what_comes_after() {
    // Reads that take exactly what is queued (the socket stays "perhaps
    // ready", and the next read finds nothing) and vectored ones: the data, or
    // the end of stream, that comes later must still wake the reader, whether
    // it comes after the reader parked or before it read.
    fibra::run(|| {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let client = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let (server_side, _) = listener.accept().unwrap();
        let reader = fibra::spawn(move || {
            let mut got = Vec::new();
            for _ in 0..2 {
                let mut exact = [0; 5];
                (&server_side).read_exact(&mut exact).unwrap();
                got.extend_from_slice(&exact);
            }
            let (mut head, mut tail) = ([0; 3], [0; 2]);
            let mut bufs = [IoSliceMut::new(&mut head), IoSliceMut::new(&mut tail)];
            assert_eq!((&server_side).read_vectored(&mut bufs).unwrap(), 5);
            got.extend_from_slice(&head);
            got.extend_from_slice(&tail);
            assert_eq!((&server_side).read(&mut [0; 8]).unwrap(), 0);
            got
        });
        (&client).write_all(b"first").unwrap();
        runtime::yield_now(); // the reader takes it all, then parks
        (&client).write_all(b"secon").unwrap();
        runtime::yield_now();
        // The last data and the end of stream before the reader runs again.
        (&client).write_all(b"third").unwrap();
        client.shutdown(Shutdown::Write).unwrap();
        assert_eq!(reader.join().unwrap(), b"firstseconthird");
    });
}

#[test]
fn a_read_timeout_ends_a_wait_that_gets_no_data_and_not_one_that_does() {
    use std::time::{Duration, Instant};
    fibra::run(|| {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        // The client sends only when told, after the reads that must time out.
        let (go, told) = fibra::sync::channel::unbounded::<()>();
        let client = fibra::spawn(move || {
            let mut stream = TcpStream::connect(addr).unwrap();
            told.recv().unwrap();
            stream.write_all(b"late").unwrap();
            // Keep the connection open until the server is done.
            let mut rest = Vec::new();
            stream.read_to_end(&mut rest).unwrap();
        });
        let (mut stream, _) = listener.accept().unwrap();
        assert_eq!(stream.read_timeout().unwrap(), None);
        assert_eq!(
            stream
                .set_read_timeout(Some(Duration::ZERO))
                .unwrap_err()
                .kind(),
            ErrorKind::InvalidInput
        );
        stream
            .set_read_timeout(Some(Duration::from_millis(20)))
            .unwrap();
        let start = Instant::now();
        let err = stream.read(&mut [0; 8]).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::TimedOut);
        assert!(start.elapsed() >= Duration::from_millis(20));
        // Many timed-out waits in a row each end on their own deadline.
        for _ in 0..3 {
            assert_eq!(
                stream.read(&mut [0; 8]).unwrap_err().kind(),
                ErrorKind::TimedOut
            );
        }
        stream
            .set_read_timeout(Some(Duration::from_secs(10)))
            .unwrap();
        go.send(()).unwrap();
        let mut buf = [0; 4];
        stream.read_exact(&mut buf).unwrap();
        assert_eq!(&buf, b"late");
        drop(stream);
        client.join().unwrap();
    });
}

#[test]
fn a_write_timeout_ends_a_write_to_a_peer_that_does_not_read() {
    use std::time::Duration;
    fibra::run(|| {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let idle_peer = std::net::TcpStream::connect(addr).unwrap();
        let (mut stream, _) = listener.accept().unwrap();
        stream
            .set_write_timeout(Some(Duration::from_millis(50)))
            .unwrap();
        let chunk = vec![0u8; 1 << 16];
        let err = loop {
            if let Err(err) = stream.write(&chunk) {
                break err;
            }
        };
        assert_eq!(err.kind(), ErrorKind::TimedOut);
        drop(idle_peer);
    });
}

#[test]
fn an_accept_timeout_ends_a_wait_for_a_connection() {
    use std::time::Duration;
    fibra::run(|| {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        assert_eq!(listener.read_timeout().unwrap(), None);
        assert_eq!(
            listener
                .set_read_timeout(Some(Duration::ZERO))
                .unwrap_err()
                .kind(),
            ErrorKind::InvalidInput
        );
        listener
            .set_read_timeout(Some(Duration::from_millis(20)))
            .unwrap();
        assert_eq!(
            listener.read_timeout().unwrap(),
            Some(Duration::from_millis(20))
        );
        for _ in 0..2 {
            assert_eq!(listener.accept().unwrap_err().kind(), ErrorKind::TimedOut);
        }
        // A connection that is there is taken, timeout or not.
        let client = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let (_, peer) = listener.accept().unwrap();
        assert_eq!(peer, client.local_addr().unwrap());
    });
}

#[test]
fn udp_timeouts_end_a_wait_for_a_datagram() {
    use std::time::Duration;
    fibra::run(|| {
        let socket = UdpSocket::bind("127.0.0.1:0").unwrap();
        assert_eq!(socket.read_timeout().unwrap(), None);
        assert_eq!(socket.write_timeout().unwrap(), None);
        for set in [UdpSocket::set_read_timeout, UdpSocket::set_write_timeout] {
            let err = set(&socket, Some(Duration::ZERO)).unwrap_err();
            assert_eq!(err.kind(), ErrorKind::InvalidInput);
        }
        let limit = Some(Duration::from_millis(20));
        socket.set_read_timeout(limit).unwrap();
        socket.set_write_timeout(limit).unwrap();
        assert_eq!(socket.read_timeout().unwrap(), limit);
        assert_eq!(socket.write_timeout().unwrap(), limit);
        let err = socket.recv_from(&mut [0; 16]).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::TimedOut);
        socket.connect(socket.local_addr().unwrap()).unwrap();
        assert_eq!(
            socket.recv(&mut [0; 16]).unwrap_err().kind(),
            ErrorKind::TimedOut
        );
        // A datagram that comes is received, timeout or not.
        socket.send(b"self").unwrap();
        let mut buf = [0; 16];
        assert_eq!(socket.recv(&mut buf).unwrap(), 4);
        assert_eq!(&buf[..4], b"self");
    });
}

#[test]
fn connect_timeout_connects_or_times_out() {
    use std::time::Duration;
    fibra::run(|| {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let stream = TcpStream::connect_timeout(&addr, Duration::from_secs(10)).unwrap();
        assert_eq!(stream.peer_addr().unwrap(), addr);
        assert_eq!(stream.write_timeout().unwrap(), None);
        let err = TcpStream::connect_timeout(&addr, Duration::ZERO).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidInput);

        // A listener with a backlog of 0 whose queue is full: Linux drops
        // the SYNs of further connections, which wait until they time out.
        let full =
            socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).unwrap();
        full.bind(&SocketAddr::from(([127, 0, 0, 1], 0)).into())
            .unwrap();
        full.listen(0).unwrap();
        let full_addr = full.local_addr().unwrap().as_socket().unwrap();
        let mut connected = Vec::new();
        let err = loop {
            match TcpStream::connect_timeout(&full_addr, Duration::from_millis(100)) {
                Ok(stream) if connected.len() < 8 => connected.push(stream),
                Ok(_) => panic!("the listener's queue never filled"),
                Err(err) => break err,
            }
        };
        assert_eq!(err.kind(), ErrorKind::TimedOut);
        assert!(
            !connected.is_empty(),
            "the first connection fills the queue"
        );
    });
}

#[test]
fn a_connection_accepted_as_std_is_served_by_another_runtime() {
    let (to_worker, from_acceptor) = std::sync::mpsc::channel::<std::net::TcpStream>();
    let worker = std::thread::spawn(move || {
        fibra::run(move || {
            let mut stream = TcpStream::from_std(from_acceptor.recv().unwrap()).unwrap();
            let mut buf = [0; 5];
            stream.read_exact(&mut buf).unwrap();
            stream.write_all(&buf).unwrap();
        })
    });
    fibra::run(move || {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let client = fibra::spawn(move || {
            let mut stream = TcpStream::connect(addr).unwrap();
            stream.write_all(b"hello").unwrap();
            let mut echoed = Vec::new();
            stream.read_to_end(&mut echoed).unwrap();
            echoed
        });
        let (stream, peer) = listener.accept_std().unwrap();
        assert_eq!(stream.peer_addr().unwrap(), peer);
        to_worker.send(stream).unwrap();
        assert_eq!(client.join().unwrap(), b"hello");
    });
    worker.join().unwrap();
}

// Any number of green threads may wait on one socket in one direction, each
// woken in its turn (issue 22, item 4: the reactor kept one waiter per socket
// and direction, and a second waiter silently replaced the first).

#[path = "support/without_hanging.rs"]
mod hang;
use hang::without_hanging;
use std::collections::HashSet;
use std::net::SocketAddr;

/// Spawns `n` green threads that each accept one connection on `listener`
/// and return the peer's address.
fn acceptors(listener: &Rc<TcpListener>, n: usize) -> Vec<runtime::JoinHandle<SocketAddr>> {
    (0..n)
        .map(|_| {
            let listener = listener.clone();
            fibra::spawn(move || listener.accept().unwrap().1)
        })
        .collect()
}

#[test]
fn green_threads_accepting_on_one_shared_listener_all_get_connections() {
    const ACCEPTORS: usize = 8;
    without_hanging("acceptors sharing a listener", || {
        fibra::run(|| {
            let listener = Rc::new(TcpListener::bind("127.0.0.1:0").unwrap());
            let addr = listener.local_addr().unwrap();
            // A burst: every connection is in the backlog before an acceptor
            // runs again, so one readiness event stands for all of them.
            let waiting = acceptors(&listener, ACCEPTORS);
            runtime::yield_now(); // all of them park in accept
            let clients: Vec<_> = (0..ACCEPTORS)
                .map(|_| std::net::TcpStream::connect(addr).unwrap())
                .collect();
            let accepted: HashSet<_> = waiting.into_iter().map(|h| h.join().unwrap()).collect();
            let connected: HashSet<_> = clients.iter().map(|c| c.local_addr().unwrap()).collect();
            assert_eq!(accepted, connected);
            // One connection at a time, each a readiness event of its own.
            let waiting = acceptors(&listener, ACCEPTORS);
            runtime::yield_now();
            let clients: Vec<_> = (0..ACCEPTORS)
                .map(|_| TcpStream::connect(addr).unwrap())
                .collect();
            let accepted: HashSet<_> = waiting.into_iter().map(|h| h.join().unwrap()).collect();
            let connected: HashSet<_> = clients.iter().map(|c| c.local_addr().unwrap()).collect();
            assert_eq!(accepted, connected);
        })
    });
}

#[test]
fn two_green_threads_reading_one_stream_each_get_their_turn() {
    without_hanging("two readers of one stream", || {
        fibra::run(|| {
            let listener = TcpListener::bind("127.0.0.1:0").unwrap();
            let stream = Rc::new(TcpStream::connect(listener.local_addr().unwrap()).unwrap());
            let (mut peer, _) = listener.accept().unwrap();
            let readers = |stream: &Rc<TcpStream>| -> Vec<runtime::JoinHandle<Vec<u8>>> {
                (0..2)
                    .map(|_| {
                        let stream = stream.clone();
                        fibra::spawn(move || {
                            let mut byte = [0; 1];
                            let n = (&*stream).read(&mut byte).unwrap();
                            byte[..n].to_vec()
                        })
                    })
                    .collect()
            };
            let waiting = readers(&stream);
            runtime::yield_now(); // both park in read
            peer.write_all(b"ab").unwrap(); // one event, a byte for each
            let mut got: Vec<_> = waiting.into_iter().map(|h| h.join().unwrap()).collect();
            got.sort();
            assert_eq!(got, [b"a", b"b"]);
            // The end of the stream reaches every reader waiting for it.
            let waiting = readers(&stream);
            runtime::yield_now();
            drop(peer);
            for reader in waiting {
                assert_eq!(reader.join().unwrap(), b"");
            }
        })
    });
}

#[test]
fn two_green_threads_receiving_on_one_udp_socket_each_get_a_datagram() {
    without_hanging("two receivers on one UDP socket", || {
        fibra::run(|| {
            let socket = Rc::new(UdpSocket::bind("127.0.0.1:0").unwrap());
            let sender = UdpSocket::bind("127.0.0.1:0").unwrap();
            let receivers: Vec<_> = (0..2)
                .map(|_| {
                    let socket = socket.clone();
                    fibra::spawn(move || {
                        let mut buf = [0; 16];
                        let (n, from) = socket.recv_from(&mut buf).unwrap();
                        (buf[..n].to_vec(), from)
                    })
                })
                .collect();
            runtime::yield_now(); // both park in recv_from
            let to = socket.local_addr().unwrap();
            sender.send_to(b"one", to).unwrap();
            sender.send_to(b"two", to).unwrap();
            let mut got: Vec<_> = receivers.into_iter().map(|h| h.join().unwrap()).collect();
            got.sort();
            let from = sender.local_addr().unwrap();
            assert_eq!(got, [(b"one".to_vec(), from), (b"two".to_vec(), from)]);
        })
    });
}

#[test]
fn a_waiter_cancelled_while_others_wait_does_not_strand_them() {
    without_hanging("acceptors after a cancellation", || {
        fibra::run(|| {
            let listener = Rc::new(TcpListener::bind("127.0.0.1:0").unwrap());
            let addr = listener.local_addr().unwrap();
            let mut waiting = acceptors(&listener, 3).into_iter();
            let (first, second, third) = (
                waiting.next().unwrap(),
                waiting.next().unwrap(),
                waiting.next().unwrap(),
            );
            runtime::yield_now(); // all three park in accept, in this order
            // One in the middle of the queue leaves it.
            second.cancel();
            assert!(matches!(second.join(), Err(runtime::JoinError::Cancelled)));
            // A connection: the first in the queue is woken to take it, and
            // is cancelled before it runs; the turn goes on to the third.
            let client = std::net::TcpStream::connect(addr).unwrap();
            runtime::yield_now(); // the reactor wakes `first`, queued after this thread
            first.cancel();
            assert!(matches!(first.join(), Err(runtime::JoinError::Cancelled)));
            assert_eq!(third.join().unwrap(), client.local_addr().unwrap());
        })
    });
}

#[test]
fn acceptors_cancelled_at_random_never_strand_a_connection() {
    raise_fd_limit();
    without_hanging("acceptors cancelled at random", || {
        for seed in 1..=4u64 {
            fibra::run(move || {
                let listener = Rc::new(TcpListener::bind("127.0.0.1:0").unwrap());
                let addr = listener.local_addr().unwrap();
                let accepted = Rc::new(std::cell::Cell::new(0));
                // Each takes one connection and ends, so that a connection
                // left in the backlog is only taken if a turn reaches it.
                let acceptor = || {
                    let (listener, accepted) = (listener.clone(), accepted.clone());
                    fibra::spawn(move || {
                        drop(listener.accept().unwrap());
                        accepted.set(accepted.get() + 1);
                    })
                };
                let mut acceptors: Vec<_> = (0..8).map(|_| acceptor()).collect();
                let mut state = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15);
                let mut random = |n: usize| {
                    state ^= state << 13;
                    state ^= state >> 7;
                    state ^= state << 17;
                    (state % n as u64) as usize
                };
                let mut clients = Vec::new();
                for _ in 0..150 {
                    match random(4) {
                        // Cancelled wherever it is: queued, handed the turn
                        // and not yet run, or finished.
                        0 => {
                            let gone = acceptors.swap_remove(random(acceptors.len()));
                            gone.cancel();
                            acceptors.push(acceptor());
                        }
                        1 => runtime::yield_now(),
                        _ => {
                            // As many new acceptors as connections, parked
                            // before the burst comes (one readiness event).
                            let burst = 1 + random(4);
                            acceptors.extend((0..burst).map(|_| acceptor()));
                            runtime::yield_now();
                            for _ in 0..burst {
                                clients.push(std::net::TcpStream::connect(addr).unwrap());
                            }
                        }
                    }
                }
                // Every connection made is accepted (a stranded one would
                // wait here forever, with acceptors parked).
                while accepted.get() < clients.len() {
                    fibra::time::sleep(std::time::Duration::from_millis(1));
                }
                assert_eq!(accepted.get(), clients.len(), "seed {seed}");
            });
        }
    });
}
