//! Compacted parked green threads (`runtime::Builder::compact_parked_after`):
//! every wait of fibra's, across a compaction and a restore, with the stack's
//! contents checked after each; deep and nearly empty stacks; wakes from
//! another OS thread; cancellation; a panic right after a restore; futures
//! under `block_on` that lent themselves to tokio's timer driver. The
//! runtimes here compact at every round (`Some(Duration::ZERO)`), so every
//! park that outlasts its round is compacted; the dump (which reports a
//! compacted thread's kept bytes) shows that the compaction really happened.

use fibra::ractor::{Context, Pool, Ractor};
use fibra::runtime::{self, Builder, Dump, JoinError, RuntimeState, ThreadBuilder, ThreadDump};
use fibra::sync::{Condvar, Mutex, channel};
use std::cell::{Cell, RefCell};
use std::future::Future;
use std::hint::black_box;
use std::io::{Read, Write};
use std::pin::pin;
use std::rc::Rc;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::task::Poll;
use std::time::Duration;

#[path = "support/without_hanging.rs"]
mod hang;
use hang::without_hanging;

#[path = "support/fifo.rs"]
mod fifo;

/// A runtime that compacts every parked thread at the end of each round.
fn compacting() -> Builder {
    // SAFETY: no green thread of these tests lends its stack to another OS
    // thread while it parks.
    unsafe { Builder::new().compact_parked_after(Some(Duration::ZERO)) }
}

/// Holds the tests of this file one at a time: a dump (which every test here
/// may take) restores the compacted threads of every runtime in the process
/// to trace them, so another test's dump between a test's rounds and its own
/// dump could show fewer threads compacted than the test made.
fn serial() -> std::sync::MutexGuard<'static, ()> {
    static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());
    SERIAL.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// A stack frame full of a pattern made from `seed`, kept across `wait`, and
/// checked after it: a compaction that lost or moved a byte fails here.
#[inline(never)]
fn across<T>(seed: u64, wait: impl FnOnce() -> T) -> T {
    let mut frame = [0u64; 64];
    for (i, word) in frame.iter_mut().enumerate() {
        *word = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ i as u64;
    }
    let frame = black_box(frame);
    let local = black_box(&frame);
    let value = wait();
    for (i, word) in local.iter().enumerate() {
        assert_eq!(*word, seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ i as u64);
    }
    value
}

/// Yields until the other threads have had `rounds` rounds of the scheduler
/// (each ends with a compaction sweep).
fn rounds(rounds: usize) {
    (0..rounds).for_each(|_| runtime::yield_now());
}

/// The green threads of the runtime on this OS thread, as `dump` lists them.
fn mine(dump: &Dump) -> &[ThreadDump] {
    let here = std::thread::current().id();
    let runtime = dump.runtimes.iter().find(|r| r.os_thread_id == here);
    match runtime.map(|r| &r.state) {
        Some(RuntimeState::Threads(threads)) => threads,
        other => panic!("this runtime is not in its dump: {other:?}"),
    }
}

/// The number of this runtime's parked threads that a dump found compacted.
fn compacted_now() -> usize {
    let dump = runtime::dump();
    mine(&dump).iter().filter(|t| t.compacted.is_some()).count()
}

/// A deterministic shuffle (xorshift), so that a failure can be replayed.
fn shuffle<T>(items: &mut [T], mut state: u64) {
    for i in (1..items.len()).rev() {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        items.swap(i, (state % (i as u64 + 1)) as usize);
    }
}

/// Spawns a thread that parks `parks` times in `runtime::park`, checking a
/// frame of its stack across each; returns its handle and its unparker.
fn parker(seed: u64, parks: u64) -> (fibra::JoinHandle<()>, runtime::Unparker) {
    let unparker = Rc::new(RefCell::new(None));
    let slot = unparker.clone();
    let handle = fibra::spawn(move || {
        *slot.borrow_mut() = Some(runtime::current().unparker());
        for park in 0..parks {
            across(seed * 100 + park, runtime::park);
        }
    });
    runtime::yield_now();
    let unparker = unparker.borrow_mut().take().expect("the thread ran");
    (handle, unparker)
}

#[test]
fn threads_woken_in_random_orders_keep_their_stacks() {
    let _serial = serial();
    compacting().run(|| {
        let (handles, unparkers): (Vec<_>, Vec<_>) = (0..64).map(|seed| parker(seed, 6)).unzip();
        rounds(2);
        assert_eq!(compacted_now(), 64);
        for round in 0..6 {
            let mut order: Vec<usize> = (0..unparkers.len()).collect();
            shuffle(&mut order, round + 1);
            for (n, &i) in order.iter().enumerate() {
                unparkers[i].unpark();
                if n.is_multiple_of(7) {
                    rounds(1);
                }
            }
            rounds(3);
        }
        handles.into_iter().for_each(|h| h.join().unwrap());
    });
}

#[test]
fn wakes_from_another_os_thread_while_threads_are_compacted() {
    let _serial = serial();
    compacting().run(|| {
        let (handles, unparkers): (Vec<_>, Vec<_>) = (0..32).map(|seed| parker(seed, 200)).unzip();
        let stop = Arc::new(AtomicBool::new(false));
        let waker = {
            let stop = stop.clone();
            std::thread::spawn(move || {
                let mut i = 0usize;
                while !stop.load(Ordering::Relaxed) {
                    unparkers[i % unparkers.len()].unpark();
                    i += 1;
                    if i.is_multiple_of(64) {
                        std::thread::yield_now();
                    }
                }
            })
        };
        // Sleeping parks this thread too, so the runtime polls for the
        // other OS thread's wakes while it compacts and restores.
        handles.into_iter().for_each(|h| h.join().unwrap());
        stop.store(true, Ordering::Relaxed);
        waker.join().unwrap();
    });
}

/// Sets its flag when dropped.
struct Flag(Rc<Cell<bool>>);

impl Drop for Flag {
    fn drop(&mut self) {
        // A destructor that waits, on the restored stack, during the unwind.
        fibra::time::sleep(Duration::from_millis(1));
        self.0.set(true);
    }
}

#[test]
fn a_cancelled_compacted_thread_runs_its_destructors() {
    let _serial = serial();
    compacting().run(|| {
        let dropped = Rc::new(Cell::new(false));
        let flag = Flag(dropped.clone());
        let thread = fibra::spawn(move || {
            let _flag = flag;
            across(1, || fibra::time::sleep(Duration::from_secs(3600)));
        });
        rounds(2);
        assert_eq!(compacted_now(), 1);
        thread.cancel();
        assert!(matches!(thread.join(), Err(JoinError::Cancelled)));
        assert!(dropped.get());
    });
}

#[test]
fn threads_left_compacted_at_the_end_of_the_runtime_unwind() {
    let _serial = serial();
    let dropped = Rc::new(Cell::new(false));
    let flag = Flag(dropped.clone());
    compacting().run(move || {
        drop(fibra::spawn(move || {
            let _flag = flag;
            across(2, || fibra::time::sleep(Duration::from_secs(3600)));
        }));
        rounds(2);
        assert_eq!(compacted_now(), 1);
    });
    assert!(dropped.get());
}

#[test]
fn timers_channels_mutexes_condvars_and_joins_across_compaction() {
    let _serial = serial();
    compacting().run(|| {
        let sleeper = fibra::spawn(|| across(3, || fibra::time::sleep(Duration::from_millis(200))));
        let (tx, rx) = channel::unbounded::<u64>();
        let receiver = fibra::spawn(move || across(4, || rx.recv().unwrap()));
        let (btx, brx) = channel::bounded::<u64>(1);
        btx.send(0).unwrap();
        let sender = fibra::spawn(move || across(5, || btx.send(1).unwrap()));
        let lock = Rc::new(Mutex::new(0u64));
        let guard = lock.lock();
        let locker = {
            let lock = lock.clone();
            fibra::spawn(move || across(6, || *lock.lock() + 1))
        };
        let pair = Rc::new((Mutex::new(false), Condvar::new()));
        let waiter = {
            let pair = pair.clone();
            fibra::spawn(move || {
                across(7, || {
                    let (ready, changed) = &*pair;
                    drop(changed.wait_while(ready.lock(), |ready| !*ready));
                })
            })
        };
        let (done, finish) = channel::unbounded::<()>();
        let joiner = fibra::spawn(move || {
            across(8, || {
                fibra::spawn(move || finish.recv().unwrap()).join().unwrap()
            })
        });
        rounds(3);
        // Six wait for this thread (the joined one too); the sleeper as well,
        // unless its timer fired first (a slow machine, valgrind).
        assert!(compacted_now() >= 6);
        done.send(()).unwrap();
        tx.send(41).unwrap();
        assert_eq!(brx.recv().unwrap(), 0);
        drop(guard);
        *pair.0.lock() = true;
        pair.1.notify_all();
        assert_eq!(receiver.join().unwrap(), 41);
        sender.join().unwrap();
        assert_eq!(brx.recv().unwrap(), 1);
        assert_eq!(locker.join().unwrap(), 1);
        waiter.join().unwrap();
        joiner.join().unwrap();
        sleeper.join().unwrap();
    });
}

#[test]
fn sockets_across_compaction() {
    let _serial = serial();
    compacting().run(|| {
        let listener = fibra::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let server = fibra::spawn(move || {
            let (mut stream, _) = across(9, || listener.accept().unwrap());
            let mut buf = [0u8; 5];
            across(10, || stream.read_exact(&mut buf).unwrap());
            across(11, || stream.write_all(&buf).unwrap());
        });
        rounds(3);
        assert_eq!(compacted_now(), 1);
        let mut client = fibra::net::TcpStream::connect(addr).unwrap();
        fibra::time::sleep(Duration::from_millis(5));
        client.write_all(b"hello").unwrap();
        let mut reply = [0u8; 5];
        client.read_exact(&mut reply).unwrap();
        assert_eq!(&reply, b"hello");
        server.join().unwrap();
    });
}

#[test]
fn blocking_waits_and_ractor_ports_across_compaction() {
    let _serial = serial();
    compacting().run(|| {
        let (open, gate) = std::sync::mpsc::channel::<u64>();
        let offloaded = fibra::spawn(move || across(12, || fibra::blocking(move || gate.recv())));
        let echo = Ractor::new(|ctx: &Context<u64, u64>| {
            while let Ok(n) = ctx.receive() {
                if ctx.yield_value(n + 1).is_err() {
                    break;
                }
            }
        });
        let echo = Rc::new(echo);
        let taker = {
            let echo = echo.clone();
            fibra::spawn(move || across(13, || echo.take().unwrap()))
        };
        rounds(3);
        assert_eq!(compacted_now(), 2);
        echo.send(1).unwrap();
        open.send(42).unwrap();
        assert_eq!(taker.join().unwrap(), 2);
        assert_eq!(offloaded.join().unwrap(), Ok(42));
        echo.close_incoming();
    });
}

#[test]
fn ractors_parked_in_receive_are_compacted_on_their_worker() {
    let _serial = serial();
    let pool = Pool::with_runtime(1, compacting());
    let received = Arc::new(AtomicUsize::new(0));
    let ractors: Vec<Ractor<u64, (), ()>> = (0..16u64)
        .map(|seed| {
            let received = received.clone();
            pool.spawn(move |ctx: &Context<u64, ()>| {
                while let Ok(n) = across(seed, || ctx.receive()) {
                    received.fetch_add(n as usize, Ordering::Relaxed);
                }
            })
        })
        .collect();
    for round in 1..=3u64 {
        std::thread::sleep(Duration::from_millis(10));
        ractors.iter().for_each(|r| r.send(round).unwrap());
    }
    ractors.iter().for_each(|r| {
        r.close_incoming();
    });
    ractors.into_iter().for_each(|r| r.join().unwrap());
    assert_eq!(received.load(Ordering::Relaxed), 16 * 6);
}

/// Recurses `depth` times with a 1 KiB frame each, parks at the bottom, and
/// checks every frame on the way back.
#[inline(never)]
fn deep(depth: u64, park: &dyn Fn()) -> u64 {
    if depth == 0 {
        park();
        return 0;
    }
    across(depth, || deep(depth - 1, park) + 1)
}

#[test]
fn deep_and_nearly_empty_stacks_across_compaction() {
    let _serial = serial();
    compacting().run(|| {
        let (go, wait) = channel::unbounded::<()>();
        let deep = ThreadBuilder::new()
            .stack_size(2 << 20)
            .spawn(move || deep(400, &|| wait.recv().unwrap()))
            .unwrap();
        let empty = fibra::spawn(runtime::park);
        rounds(2);
        let dump = runtime::dump();
        let sizes: Vec<usize> = mine(&dump).iter().filter_map(|t| t.compacted).collect();
        assert_eq!(sizes.len(), 2, "{dump}");
        assert!(sizes.iter().any(|&s| s > 400 * 512), "{sizes:?}");
        // A few frames: under 4 KiB natively, 4.1 KiB under ThreadSanitizer,
        // whose instrumented frames are larger.
        assert!(sizes.iter().any(|&s| s < 16 * 1024), "{sizes:?}");
        go.send(()).unwrap();
        assert_eq!(deep.join().unwrap(), 400);
        empty.cancel();
        assert!(matches!(empty.join(), Err(JoinError::Cancelled)));
    });
}

#[test]
fn a_panic_right_after_a_restore_reaches_the_joiner() {
    let _serial = serial();
    compacting().run(|| {
        let (go, wait) = channel::unbounded::<()>();
        let thread = fibra::spawn(move || {
            across(14, || wait.recv().unwrap());
            panic!("right after the restore");
        });
        let (go_caught, wait_caught) = channel::unbounded::<()>();
        let caught = fibra::spawn(move || {
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                wait_caught.recv().unwrap();
                panic!("caught after the restore");
            }))
            .is_err()
        });
        rounds(2);
        assert_eq!(compacted_now(), 2);
        go.send(()).unwrap();
        go_caught.send(()).unwrap();
        let err = thread.join().unwrap_err().into_panic().unwrap();
        assert_eq!(err.downcast_ref::<&str>(), Some(&"right after the restore"));
        assert!(caught.join().unwrap());
    });
}

#[test]
fn a_dump_traces_compacted_threads_and_they_are_compacted_again() {
    let _serial = serial();
    compacting().run(|| {
        let (handle, unparker) = parker(15, 1);
        rounds(2);
        let dump = runtime::dump();
        let thread = mine(&dump)
            .iter()
            .find(|t| t.compacted.is_some())
            .expect("a compacted thread");
        assert!(
            thread
                .backtrace
                .iter()
                .any(|f| f.function.contains("across")),
            "{dump}"
        );
        rounds(2);
        assert_eq!(compacted_now(), 1);
        unparker.unpark();
        handle.join().unwrap();
    });
}

#[test]
fn parks_in_block_on_are_never_compacted() {
    let _serial = serial();
    compacting().run(|| {
        let ready = Rc::new(Cell::new(false));
        let waker = Rc::new(RefCell::new(None::<std::task::Waker>));
        let future = {
            let (ready, waker) = (ready.clone(), waker.clone());
            std::future::poll_fn(move |cx| {
                if ready.get() {
                    return std::task::Poll::Ready(7);
                }
                *waker.borrow_mut() = Some(cx.waker().clone());
                std::task::Poll::Pending
            })
        };
        let waiting = fibra::spawn(move || across(16, || fibra::block_on(future)));
        let parked = fibra::spawn(runtime::park);
        rounds(3);
        // The future, pinned on its thread's stack, might have lent itself
        // to what wakes it: only the plain park is compacted.
        assert_eq!(compacted_now(), 1);
        ready.set(true);
        waker.borrow_mut().take().expect("polled").wake();
        assert_eq!(waiting.join().unwrap(), 7);
        parked.cancel();
        assert!(parked.join().is_err());
    });
}

/// A tokio runtime of the test's own (tokio is a dev-dependency): its driver
/// thread fires the timers of futures that green threads pin on their stacks,
/// writing into those futures (a tokio `Sleep` is an intrusive node of the
/// driver's timer wheel) while their green threads are parked.
fn tokio_timers() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_time()
        .build()
        .unwrap()
}

/// A tokio sleep, made with `tokio`'s runtime as the current one for just as
/// long as tokio needs it to be.
fn tokio_sleep(tokio: &tokio::runtime::Handle, duration: Duration) -> tokio::time::Sleep {
    let _entered = tokio.enter();
    tokio::time::sleep(duration)
}

/// The audit's finding 1: the compaction queue named a park by its thread and
/// time, so the entry of the thread's earlier, ordinary park (a fibra sleep),
/// still waiting for its 50 ms, matched its later park in `block_on` and had
/// it compacted — while the pinned tokio `Sleep` was linked into tokio's
/// timer wheel: the driver's write when the timer fired raced with the
/// compaction (TSan saw it) and the wake was lost, so `block_on` hung.
#[test]
fn a_park_in_block_on_is_not_compacted_through_an_earlier_parks_entry() {
    let _serial = serial();
    let tokio = tokio_timers();
    let handle = tokio.handle().clone();
    let compacted = without_hanging("a tokio sleep under block_on", move || {
        // SAFETY: no green thread of this test lends its stack to another OS
        // thread while it parks, except through `block_on`.
        let builder =
            unsafe { Builder::new().compact_parked_after(Some(Duration::from_millis(50))) };
        builder.run(move || {
            let in_block_on = Rc::new(Cell::new(false));
            let sleeper = fibra::spawn({
                let in_block_on = in_block_on.clone();
                move || {
                    fibra::time::sleep(Duration::from_millis(1)); // an ordinary park first
                    in_block_on.set(true);
                    across(18, || {
                        fibra::block_on(tokio_sleep(&handle, Duration::from_millis(200)));
                    });
                }
            });
            while !in_block_on.get() {
                fibra::time::sleep(Duration::from_millis(1));
            }
            // Past the first park's 50 ms, before the tokio timer fires (if
            // it has fired, the thread is gone and the dump cannot fail).
            fibra::time::sleep(Duration::from_millis(100));
            let compacted = compacted_now();
            sleeper.join().unwrap();
            compacted
        })
    });
    assert_eq!(compacted, 0);
}

/// The audit's finding 2: a wait of fibra's made *inside* a future's poll,
/// under `block_on`, is an ordinary park, but the future pinned below it on
/// the same stack has lent its timer entry to tokio's driver thread, which
/// writes it when the timer fires: the thread must not be compacted there
/// either (it was, and the wake was lost).
#[test]
fn a_park_inside_a_block_on_future_is_never_compacted() {
    let _serial = serial();
    let tokio = tokio_timers();
    let handle = tokio.handle().clone();
    let compacted = without_hanging("a tokio sleep around a fibra wait", move || {
        compacting().run(move || {
            let (go_on, gone_on) = channel::unbounded::<()>();
            let waiting = fibra::spawn(move || {
                across(19, || {
                    fibra::block_on(async {
                        let mut sleep = pin!(tokio_sleep(&handle, Duration::from_millis(20)));
                        // Polled once: its entry is now in tokio's wheel.
                        let polled =
                            std::future::poll_fn(|cx| Poll::Ready(sleep.as_mut().poll(cx)));
                        assert!(polled.await.is_pending());
                        gone_on.recv().unwrap(); // fibra's wait, inside the poll
                        sleep.await;
                    })
                })
            });
            let parked = fibra::spawn(runtime::park);
            rounds(3);
            // Only the plain park is compacted.
            let compacted = compacted_now();
            // The tokio timer fires while the thread still waits in `recv`.
            fibra::time::sleep(Duration::from_millis(60));
            go_on.send(()).unwrap();
            waiting.join().unwrap();
            parked.cancel();
            assert!(parked.join().is_err());
            compacted
        })
    });
    assert_eq!(compacted, 1);
}

/// What `block_on` lends, it lends only while it runs: once it has returned
/// — or a panic in the future has unwound through it — its thread's parks
/// are compacted again.
#[test]
fn a_thread_is_compacted_again_once_its_block_on_has_ended() {
    let _serial = serial();
    compacting().run(|| {
        let thread = fibra::spawn(|| {
            assert_eq!(fibra::block_on(async { 3 }), 3);
            let panicked = std::panic::catch_unwind(|| {
                fibra::block_on(async { panic!("inside the future") });
            });
            assert!(panicked.is_err());
            across(20, runtime::park);
        });
        rounds(3);
        assert_eq!(compacted_now(), 1);
        thread.cancel();
        assert!(thread.join().is_err());
    });
}

/// A thread in a file call of `fibra::fs` lends the buffer it reads into, on
/// its stack, to the pool thread that reads: it is never compacted while the
/// call runs, and is again once it has returned.
#[test]
fn a_thread_in_a_file_call_is_never_compacted() {
    let _serial = serial();
    without_hanging("a read from a FIFO in a compacting runtime", || {
        let fifo = fifo::Fifo::new("compaction", b"compacted? never");
        let path = fifo.path.clone();
        compacting().run(move || {
            let reading = Rc::new(Cell::new(false));
            let reader = {
                let reading = reading.clone();
                fibra::spawn(move || {
                    let mut file = fibra::fs::File::open(&path).unwrap();
                    let read = across(17, || {
                        let mut buf = [0u8; 16];
                        reading.set(true);
                        file.read_exact(&mut buf).unwrap();
                        buf
                    });
                    assert_eq!(&read, b"compacted? never");
                    // Parked again, lending nothing now.
                    loop {
                        runtime::park();
                    }
                })
            };
            let (parked, unparker) = parker(18, 1);
            while !reading.get() {
                runtime::yield_now();
            }
            rounds(3);
            assert_eq!(compacted_now(), 1, "only the plain park is compacted");
            fifo.write();
            while compacted_now() < 2 {
                rounds(1);
            }
            unparker.unpark();
            parked.join().unwrap();
            reader.cancel();
            assert!(matches!(reader.join(), Err(JoinError::Cancelled)));
        });
    });
}
