//! `fibra::signal`: signals sent to the process reach the green threads that
//! listen for them, parking only those threads meanwhile.
//!
//! The tests of this binary run at once in one process, and a signal goes to
//! the whole process: each test raises signals no other test here listens
//! for. None listens for `SIGTERM` or `SIGINT`: once listened for, a signal
//! stays handled, and the binary could no longer be stopped with them.

#[path = "support/without_hanging.rs"]
mod hang;
#[path = "support/ticking.rs"]
mod ticking;

use fibra::signal::{self, Signal};
use hang::without_hanging;
use std::io::ErrorKind;
use std::rc::Rc;
use std::time::Duration;
use ticking::{TICKS, Ticker, wait_for_ticks};

/// Sends `signal` to this process (to whichever of its threads takes it).
fn kill_self(signal: Signal) {
    // SAFETY: `kill` with this process's id and a signal a test listens for.
    assert_eq!(unsafe { libc::kill(libc::getpid(), signal.as_raw()) }, 0);
}

/// Sends `signal` to the calling thread, whose handler has run when it
/// returns.
fn raise(signal: Signal) {
    // SAFETY: `raise` of a signal a test listens for (or has listened for).
    assert_eq!(unsafe { libc::raise(signal.as_raw()) }, 0);
}

#[test]
fn a_signal_sent_to_the_process_reaches_a_green_thread_while_a_ticker_ticks() {
    let ticks = without_hanging("a SIGUSR1 beside a ticker", || {
        fibra::run(|| {
            let signals = signal::listen(&[Signal::Usr1]).unwrap();
            let ticker = Ticker::start();
            // Sent from another OS thread once the ticker has ticked: if `recv`
            // held the runtime's OS thread, it never would be.
            let counter = ticker.counter();
            let sender = std::thread::spawn(move || {
                wait_for_ticks(&counter, TICKS);
                kill_self(Signal::Usr1);
            });
            assert_eq!(signals.recv(), Signal::Usr1);
            sender.join().unwrap();
            ticker.stop()
        })
    });
    assert!(ticks >= TICKS, "{ticks} ticks");
}

#[test]
fn every_listener_receives_the_signal_in_one_runtime_and_in_another() {
    without_hanging(
        "SIGUSR2 to three listeners",
        every_listener_receives_sigusr2,
    );
}

fn every_listener_receives_sigusr2() {
    let (ready, listening) = std::sync::mpsc::channel();
    let (sent, go) = std::sync::mpsc::channel::<()>();
    let other_runtime = std::thread::spawn(move || {
        fibra::run(move || {
            let signals = signal::listen(&[Signal::Usr2]).unwrap();
            ready.send(()).unwrap();
            let got = signals.recv();
            drop(go);
            got
        })
    });
    listening.recv().unwrap();
    let (first, second) = fibra::run(move || {
        let one = signal::listen(&[Signal::Usr2]).unwrap();
        let two = signal::listen(&[Signal::Child, Signal::Usr2]).unwrap();
        let waiter = fibra::spawn(move || one.recv());
        fibra::runtime::yield_now();
        kill_self(Signal::Usr2);
        let got = (waiter.join().unwrap(), two.recv());
        drop(sent);
        got
    });
    assert_eq!((first, second), (Signal::Usr2, Signal::Usr2));
    assert_eq!(other_runtime.join().unwrap(), Signal::Usr2);
}

#[test]
fn each_signal_goes_to_one_of_the_green_threads_waiting_on_a_listener() {
    without_hanging("two signals for two waiters", || {
        fibra::run(|| {
            let signals = Rc::new(signal::listen(&[Signal::Hup, Signal::Winch]).unwrap());
            let waiters: Vec<_> = (0..2)
                .map(|_| {
                    let signals = signals.clone();
                    fibra::spawn(move || signals.recv())
                })
                .collect();
            // Both wait before either signal comes; both signals come before
            // either waiter runs again, so the first one woken reads both bytes
            // and must see that the other waiter is woken for the second signal.
            fibra::time::sleep(Duration::from_millis(5));
            raise(Signal::Hup);
            raise(Signal::Winch);
            let mut got: Vec<_> = waiters.into_iter().map(|w| w.join().unwrap()).collect();
            got.sort_by_key(|s| s.as_raw());
            let mut expected = vec![Signal::Hup, Signal::Winch];
            expected.sort_by_key(|s| s.as_raw());
            assert_eq!(got, expected);
            assert_eq!(signals.try_recv(), None);
        })
    });
}

#[test]
fn try_recv_never_waits_and_a_repeated_signal_is_received_once() {
    fibra::run(|| {
        let mut signals = signal::listen(&[Signal::Quit]).unwrap();
        assert_eq!(signals.try_recv(), None);
        raise(Signal::Quit);
        raise(Signal::Quit);
        assert_eq!(signals.try_recv(), Some(Signal::Quit));
        assert_eq!(signals.try_recv(), None);
        raise(Signal::Quit);
        assert_eq!(signals.next(), Some(Signal::Quit));
        raise(Signal::Quit);
        assert_eq!((&signals).next(), Some(Signal::Quit));
        assert_eq!(signals.try_recv(), None);
    });
}

#[test]
fn a_signal_without_a_name_is_received_as_the_value_listened_for() {
    #[cfg(target_os = "linux")]
    let raw = libc::SIGRTMIN() + 3;
    #[cfg(not(target_os = "linux"))]
    let raw = libc::SIGINFO;
    without_hanging("a signal by number", move || {
        fibra::run(move || {
            let signals =
                signal::listen(&[Signal::Other(raw), Signal::from_raw(raw), Signal::Pipe]).unwrap();
            assert_eq!(signals.signals(), [Signal::Other(raw), Signal::Pipe]);
            raise(Signal::Other(raw));
            assert_eq!(signals.recv(), Signal::Other(raw));
        })
    });
}

#[test]
fn what_cannot_be_listened_for_is_refused() {
    fibra::run(|| {
        let err = signal::listen(&[]).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidInput, "{err}");
        for raw in [
            libc::SIGKILL,
            libc::SIGSTOP,
            libc::SIGSEGV,
            libc::SIGBUS,
            libc::SIGILL,
            libc::SIGFPE,
            0,
            -1,
            100_000,
        ] {
            let err = signal::listen(&[Signal::Child, Signal::from_raw(raw)]).unwrap_err();
            assert_eq!(err.kind(), ErrorKind::InvalidInput, "{raw}: {err}");
        }
        let err = signal::listen(&[Signal::Other(100_000)]).unwrap_err();
        assert!(err.to_string().contains("signal 100000"), "{err}");
    });
}

#[test]
fn after_the_last_listener_the_signal_is_ignored_not_fatal() {
    fibra::run(|| {
        let signals = signal::listen(&[Signal::Alrm]).unwrap();
        drop(signals);
        // SIGALRM's default action would end this test process.
        raise(Signal::Alrm);
        let again = signal::listen(&[Signal::Alrm]).unwrap();
        raise(Signal::Alrm);
        assert_eq!(again.try_recv(), Some(Signal::Alrm));
    });
}
