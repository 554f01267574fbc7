//! fibra's defined outcomes under `panic = "abort"`, where nothing can unwind:
//! a suspended fiber that is dropped is leaked (never unwound), and a cancelled
//! green thread is abandoned (never resumed). Before this was defined, each of
//! these cases aborted the process without a word (soundness review, finding 7).
//!
//! A test harness cannot be built with `panic = "abort"` on stable Rust, so this
//! is a program: `cargo run -p fibra-check-panic-abort --profile abort` (the
//! workspace's `abort` profile). It prints one line per check and a summary,
//! and exits non-zero if a check fails. Any abort is a failure too.

use fibra::runtime::JoinError;
use fibra::{Fiber, Generator, Step};
use std::cell::Cell;
use std::rc::Rc;
use std::time::Duration;

/// One check: `Err` says what was seen instead.
type Check = fn() -> Result<(), String>;

struct Count(Rc<Cell<u32>>);
impl Drop for Count {
    fn drop(&mut self) {
        self.0.set(self.0.get() + 1);
    }
}

fn generator_dropped_early() -> Result<(), String> {
    // The Generator doc example: `take(10)` drops the generator mid-way.
    let fib = Generator::new(|out| {
        let (mut a, mut b) = (0u64, 1u64);
        loop {
            out.suspend(a);
            (a, b) = (b, a + b);
        }
    });
    let first: Vec<u64> = fib.take(10).collect();
    (first == [0, 1, 1, 2, 3, 5, 8, 13, 21, 34])
        .then_some(())
        .ok_or(format!("{first:?}"))
}

fn suspended_fiber_is_leaked() -> Result<(), String> {
    let drops = Rc::new(Cell::new(0));
    let d = drops.clone();
    let fiber: Fiber<(), (), ()> = Fiber::new(move |y, ()| {
        let _on_stack = Count(d);
        y.suspend(());
    });
    fiber.resume(()).map_err(|e| e.to_string())?;
    drop(fiber);
    // Leaked, not unwound: what was on its stack is never dropped.
    (drops.get() == 0)
        .then_some(())
        .ok_or(format!("dropped {} times", drops.get()))
}

fn unstarted_and_finished_fibers_are_dropped() -> Result<(), String> {
    let drops = Rc::new(Cell::new(0));
    let captured = Count(drops.clone());
    let never_run: Fiber<(), (), ()> = Fiber::new(move |_, ()| drop(captured));
    drop(never_run);
    let captured = Count(drops.clone());
    let finished: Fiber<(), (), u32> = Fiber::new(move |_, ()| {
        drop(captured);
        7
    });
    if finished.resume(()) != Ok(Step::Return(7)) {
        return Err("the fiber did not return".into());
    }
    drop(finished);
    (drops.get() == 2)
        .then_some(())
        .ok_or(format!("dropped {} times", drops.get()))
}

fn run_ends_with_parked_threads() -> Result<(), String> {
    let value = fibra::run(|| {
        let _parked = fibra::spawn(|| fibra::time::sleep(Duration::from_secs(60)));
        fibra::runtime::yield_now();
        7
    });
    (value == 7).then_some(()).ok_or(format!("{value}"))
}

/// A timeout's work runs on the caller's stack, which cannot be unwound: the
/// limit is not enforced, and the work runs to its end.
fn timeout_runs_its_work_to_the_end() -> Result<(), String> {
    fibra::run(|| {
        let late = fibra::time::timeout(Duration::from_millis(1), || {
            fibra::time::sleep(Duration::from_millis(20));
            7
        });
        (late == Ok(7)).then_some(()).ok_or(format!("{late:?}"))
    })
}

fn cancel_abandons_the_thread() -> Result<(), String> {
    let drops = Rc::new(Cell::new(0));
    let d = drops.clone();
    fibra::run(move || {
        let worker = fibra::spawn(move || {
            let _on_stack = Count(d);
            fibra::time::sleep(Duration::from_secs(60));
        });
        fibra::runtime::yield_now();
        worker.cancel();
        // Its sleep never ends: its timer goes with it, so that it hides no
        // deadlock and holds no memory.
        let timers = fibra::runtime::timer_entries();
        if timers != 0 {
            return Err(format!("{timers} timers left armed"));
        }
        match worker.join() {
            Err(JoinError::Cancelled) => Ok(()),
            other => Err(format!("join -> {other:?}")),
        }
    })?;
    (drops.get() == 0)
        .then_some(())
        .ok_or(format!("dropped {} times", drops.get()))
}

fn abandoned_socket_waiter_passes_its_turn() -> Result<(), String> {
    // Abandoned, the first acceptor stays in the listener's queue of
    // waiters: the connection must reach the second, not wake nobody.
    fibra::run(|| {
        let listener = Rc::new(fibra::net::TcpListener::bind("127.0.0.1:0").unwrap());
        let addr = listener.local_addr().unwrap();
        let acceptor = || {
            let listener = listener.clone();
            fibra::spawn(move || listener.accept().map(|(_, peer)| peer))
        };
        let (first, second) = (acceptor(), acceptor());
        fibra::runtime::yield_now(); // both park in accept, in this order
        first.cancel();
        let client = std::net::TcpStream::connect(addr).map_err(|e| e.to_string())?;
        match fibra::time::timeout(Duration::from_secs(10), move || second.join()) {
            Ok(Ok(Ok(peer))) if client.local_addr().ok() == Some(peer) => Ok(()),
            Err(_) => Err("the second acceptor was not woken".into()),
            other => Err(format!("{other:?}")),
        }
    })
}

/// A scoped thread cancelled is abandoned at once: its scope counts it as
/// ended (else `scope` would wait for it for ever), and what it borrowed is
/// never touched again (its stack is leaked, nothing on it dropped).
fn cancelled_scoped_thread_ends_for_its_scope() -> Result<(), String> {
    let drops = Rc::new(Cell::new(0));
    let d = drops.clone();
    fibra::run(move || {
        let borrowed = Count(d);
        fibra::scope(|s| {
            let worker = s.spawn(|| {
                let _borrows = &borrowed;
                fibra::time::sleep(Duration::from_secs(60));
            });
            fibra::runtime::yield_now();
            worker.cancel();
            match worker.join() {
                Err(JoinError::Cancelled) => Ok(()),
                other => Err(format!("join -> {other:?}")),
            }
        })
    })?;
    (drops.get() == 1)
        .then_some(())
        .ok_or(format!("the borrowed value dropped {} times", drops.get()))
}

/// A cancel through a `RemoteJoinHandle` abandons the thread, and its joiner
/// is told so.
fn remote_cancel_abandons_the_thread() -> Result<(), String> {
    fibra::run(|| {
        let worker = fibra::runtime::handle()
            .spawn(|| fibra::time::sleep(Duration::from_secs(60)))
            .map_err(|e| e.to_string())?;
        fibra::time::sleep(Duration::from_millis(1)); // it starts, and parks
        worker.cancel();
        match worker.join() {
            Err(JoinError::Cancelled) => Ok(()),
            other => Err(format!("join -> {other:?}")),
        }
    })
}

fn main() {
    if !cfg!(panic = "abort") {
        eprintln!("build this with `--profile abort` (panic = \"abort\"): it checks that strategy");
        std::process::exit(2);
    }
    let checks: [(&str, Check); 9] = [
        (
            "a generator dropped before its end",
            generator_dropped_early,
        ),
        (
            "a suspended fiber dropped is leaked",
            suspended_fiber_is_leaked,
        ),
        (
            "unstarted and finished fibers are dropped",
            unstarted_and_finished_fibers_are_dropped,
        ),
        (
            "run ends with threads still parked",
            run_ends_with_parked_threads,
        ),
        (
            "a timeout runs its work to the end",
            timeout_runs_its_work_to_the_end,
        ),
        (
            "cancel abandons a parked thread",
            cancel_abandons_the_thread,
        ),
        (
            "an abandoned socket waiter passes its turn on",
            abandoned_socket_waiter_passes_its_turn,
        ),
        (
            "a cancelled scoped thread ends for its scope",
            cancelled_scoped_thread_ends_for_its_scope,
        ),
        (
            "a remote cancel abandons the thread",
            remote_cancel_abandons_the_thread,
        ),
    ];
    let mut failed = 0;
    for (name, check) in checks {
        match check() {
            Ok(()) => println!("panic=abort: {name} ... ok"),
            Err(why) => {
                failed += 1;
                println!("panic=abort: {name} ... FAILED: {why}");
            }
        }
    }
    println!(
        "panic-abort: {} passed, {failed} failed",
        checks.len() - failed
    );
    std::process::exit(i32::from(failed > 0));
}
