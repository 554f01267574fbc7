//! `fibra::io::Async`: any pollable descriptor (here, pipes) parks only the
//! green thread that waits on it.

#[path = "support/ticking.rs"]
mod ticking;

use fibra::io::Async;
use std::io::{ErrorKind, Read, Write};
use std::rc::Rc;
use std::time::Duration;
use ticking::{TICKS, Ticker, wait_for_ticks};

#[test]
fn a_pipe_read_through_async_parks_only_its_green_thread() {
    let (reader, mut writer) = std::io::pipe().unwrap();
    let ticks = fibra::run(move || {
        let ticker = Ticker::start();
        // The writer writes only once the ticker has ticked: if the read held
        // the runtime's OS thread, it never would.
        let counter = ticker.counter();
        let peer = std::thread::spawn(move || {
            wait_for_ticks(&counter, TICKS);
            writer.write_all(b"hello").unwrap();
        });
        let reader = Async::new(reader).unwrap();
        let mut buf = [0; 5];
        (&reader).read_exact(&mut buf).unwrap();
        assert_eq!(&buf, b"hello");
        peer.join().unwrap();
        ticker.stop()
    });
    assert!(ticks >= TICKS, "{ticks} ticks");
}

#[test]
fn two_green_threads_waiting_on_one_pipe_each_get_a_byte() {
    for waits_in_readable in [false, true] {
        fibra::run(move || {
            let (reader, writer) = std::io::pipe().unwrap();
            let reader = Rc::new(Async::new(reader).unwrap());
            let mut writer = Async::new(writer).unwrap();
            let readers: Vec<_> = (0..2)
                .map(|_| {
                    let reader = reader.clone();
                    fibra::spawn(move || {
                        let mut byte = [0];
                        loop {
                            if waits_in_readable {
                                reader.readable().unwrap();
                            }
                            // One try after `readable`: the other reader may
                            // have taken the byte it was woken for.
                            match reader.get_ref().read(&mut byte) {
                                Ok(n) => {
                                    assert_eq!(n, 1);
                                    return byte[0];
                                }
                                Err(err) if err.kind() == ErrorKind::WouldBlock => {
                                    if !waits_in_readable {
                                        return reader
                                            .read_with(|mut pipe| {
                                                pipe.read_exact(&mut byte).map(|()| byte[0])
                                            })
                                            .unwrap();
                                    }
                                }
                                Err(err) => panic!("{err}"),
                            }
                        }
                    })
                })
                .collect();
            // Both readers are parked before anything is written.
            fibra::time::sleep(Duration::from_millis(5));
            writer.write_all(b"a").unwrap();
            fibra::runtime::yield_now();
            writer.write_all(b"b").unwrap();
            let mut got: Vec<u8> = readers.into_iter().map(|r| r.join().unwrap()).collect();
            got.sort();
            assert_eq!(got, b"ab", "waiting in readable: {waits_in_readable}");
        });
    }
}

#[test]
fn a_large_write_and_its_read_take_turns_in_one_runtime() {
    const SIZE: usize = 4 << 20;
    fibra::run(|| {
        let (reader, writer) = std::io::pipe().unwrap();
        let mut reader = Async::new(reader).unwrap();
        let mut writer = Async::new(writer).unwrap();
        let payload: Vec<u8> = (0..SIZE).map(|i| (i % 251) as u8).collect();
        let expected = payload.clone();
        // The pipe holds 64 KiB: the writer parks until the reader makes room.
        let writing = fibra::spawn(move || writer.write_all(&payload).unwrap());
        let mut received = Vec::with_capacity(SIZE);
        reader.read_to_end(&mut received).unwrap();
        writing.join().unwrap();
        assert!(received == expected, "{} bytes came back", received.len());
    });
}

#[test]
fn writable_waits_for_room_in_a_full_pipe() {
    fibra::run(|| {
        let (reader, writer) = std::io::pipe().unwrap();
        let writer = Async::new(writer).unwrap();
        writer.writable().unwrap(); // an empty pipe has room
        let chunk = [0u8; 4096];
        let mut written = 0;
        loop {
            match writer.get_ref().write(&chunk) {
                Ok(n) => written += n,
                Err(err) if err.kind() == ErrorKind::WouldBlock => break,
                Err(err) => panic!("{err}"),
            }
        }
        let reader = Async::new(reader).unwrap();
        let draining = fibra::spawn(move || {
            fibra::time::sleep(Duration::from_millis(5));
            let mut buf = vec![0u8; written];
            (&reader).read_exact(&mut buf).unwrap();
            reader
        });
        writer.writable().unwrap();
        writer.get_ref().write_all(b"room").unwrap();
        let reader = draining.join().unwrap();
        let mut back = [0; 4];
        (&reader).read_exact(&mut back).unwrap();
        assert_eq!(&back, b"room");
    });
}

#[test]
fn a_read_timeout_ends_a_wait_and_readable_obeys_it_too() {
    fibra::run(|| {
        let (reader, mut writer) = std::io::pipe().unwrap();
        let reader = Async::new(reader).unwrap();
        assert_eq!(reader.read_timeout().unwrap(), None);
        assert_eq!(
            reader
                .set_read_timeout(Some(Duration::ZERO))
                .unwrap_err()
                .kind(),
            ErrorKind::InvalidInput
        );
        reader
            .set_read_timeout(Some(Duration::from_millis(10)))
            .unwrap();
        assert_eq!(
            reader.read_timeout().unwrap(),
            Some(Duration::from_millis(10))
        );
        let err = (&reader).read(&mut [0; 8]).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::TimedOut);
        assert_eq!(reader.readable().unwrap_err().kind(), ErrorKind::TimedOut);
        // Data that comes is read, timeout or not.
        writer.write_all(b"late").unwrap();
        let mut buf = [0; 4];
        (&reader).read_exact(&mut buf).unwrap();
        assert_eq!(&buf, b"late");
        reader.set_read_timeout(None).unwrap();
        assert_eq!(reader.read_timeout().unwrap(), None);
    });
}

#[test]
fn into_inner_deregisters_so_the_descriptor_can_be_wrapped_again() {
    fibra::run(|| {
        let (reader, mut writer) = std::io::pipe().unwrap();
        let reader = Async::new(reader).unwrap();
        // Registered again while still registered, the reactor would refuse
        // it (`EEXIST`); after `into_inner` it takes it.
        let reader = Async::new(reader.into_inner()).unwrap();
        let waiting = fibra::spawn(move || {
            let mut buf = [0; 2];
            (&reader).read_exact(&mut buf).unwrap();
            buf
        });
        fibra::runtime::yield_now();
        writer.write_all(b"ok").unwrap();
        assert_eq!(&waiting.join().unwrap(), b"ok");
    });
}

#[test]
fn a_waiter_on_another_thread_s_pipe_end_sees_the_end_of_file() {
    let (reader, writer) = std::io::pipe().unwrap();
    fibra::run(move || {
        let mut reader = Async::new(reader).unwrap();
        std::thread::spawn(move || drop(writer));
        let mut rest = Vec::new();
        assert_eq!(reader.read_to_end(&mut rest).unwrap(), 0);
    });
}

#[cfg(target_os = "linux")]
#[test]
fn a_regular_file_is_refused_on_linux() {
    let file = std::fs::File::open(std::env::current_exe().unwrap()).unwrap();
    let err = fibra::run(move || Async::new(file).map(drop).unwrap_err());
    assert_eq!(err.kind(), ErrorKind::PermissionDenied, "{err}");
}
