//! Seeing what green threads do: their names, the line fibra writes when one
//! holds its OS thread too long, and the dump of every runtime.

#[path = "support/crowd.rs"]
mod crowd;
mod support;

use fibra::ractor::{Context, Pool, Ractor};
use fibra::runtime::{
    self, Dump, RactorDump, RactorState, RuntimeState, SocketDirection, ThreadBuilder, ThreadDump,
    ThreadState, WaitReason,
};
use fibra::signal::Signal;
use fibra::sync::channel;
use std::io;
use std::io::{BufRead, BufReader};
use std::process::{Output, Stdio};
use std::rc::Rc;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// Runs the test `child_process` of this binary with `CHILD=which` and `env`.
fn child(which: &str, env: &[(&str, &str)]) -> Output {
    support::target_command(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "child_process",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD, which)
        .env_remove("FIBRA_STALL_MS")
        .envs(env.iter().copied())
        .output()
        .unwrap()
}

const CHILD: &str = "FIBRA_OBSERVE_CHILD";

/// The lines of a child's stderr that fibra wrote.
fn fibra_lines(out: &Output) -> Vec<String> {
    String::from_utf8_lossy(&out.stderr)
        .lines()
        .filter(|l| l.starts_with("fibra: "))
        .map(str::to_owned)
        .collect()
}

#[test]
fn a_named_thread_knows_its_name_and_an_unnamed_one_has_none() {
    fibra::run(|| {
        let named = ThreadBuilder::new()
            .name("worker-7")
            .spawn(|| runtime::current().name().map(str::to_owned))
            .unwrap();
        let plain = fibra::spawn(|| runtime::current().name().map(str::to_owned));
        assert_eq!(named.join().unwrap().as_deref(), Some("worker-7"));
        assert_eq!(plain.join().unwrap(), None);
        assert!(format!("{:?}", runtime::current()).contains("name: None"));
    });
}

#[test]
fn a_thread_builder_sets_the_stack_size() {
    fibra::run(|| {
        // A recursion that needs more than the minimum stack.
        fn depth(n: u32) -> u32 {
            let pad = std::hint::black_box([0u8; 512]);
            if n == 0 {
                pad[0] as u32
            } else {
                depth(n - 1) + 1
            }
        }
        let deep = ThreadBuilder::new()
            .stack_size(4 * 1024 * 1024)
            .spawn(|| depth(2000))
            .unwrap();
        assert_eq!(deep.join().unwrap(), 2000);
    });
}

#[test]
fn a_thread_builder_refuses_what_it_cannot_do() {
    let err = ThreadBuilder::new().spawn(|| ()).unwrap_err();
    assert!(err.to_string().contains("inside a fibra runtime"), "{err}");
    fibra::run(|| {
        let err = ThreadBuilder::new()
            .stack_size(usize::MAX)
            .spawn(|| ())
            .unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidInput);
    });
}

#[test]
fn a_named_thread_that_panics_is_named_on_stderr() {
    let out = child("named_panic", &[]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("boom"), "{stderr}");
    assert!(
        fibra_lines(&out).contains(&"fibra: the panic above was in green thread 'bomber'".into()),
        "{stderr}"
    );
}

#[test]
fn a_thread_that_holds_its_os_thread_is_named_once_when_it_stalls_and_once_when_it_ends() {
    let out = child("stall", &[("FIBRA_STALL_MS", "50")]);
    assert!(out.status.success(), "{out:?}");
    let lines = fibra_lines(&out);
    let started: Vec<_> = lines
        .iter()
        .filter(|l| l.contains("without parking or yielding"))
        .collect();
    let ended: Vec<_> = lines
        .iter()
        .filter(|l| l.contains("parked or yielded after"))
        .collect();
    assert_eq!((started.len(), ended.len()), (1, 1), "{lines:#?}");
    for line in [started[0], ended[0]] {
        assert!(line.contains("green thread 'sleeper' (#"), "{line}");
        assert!(line.contains("on OS thread 'stall-child'"), "{line}");
    }
}

#[test]
fn a_ractor_that_holds_its_worker_is_named_with_the_worker() {
    let out = child("ractor_stall", &[("FIBRA_STALL_MS", "50")]);
    assert!(out.status.success(), "{out:?}");
    let lines = fibra_lines(&out);
    assert_eq!(lines.len(), 2, "{lines:#?}");
    assert!(
        lines[0].contains("on OS thread 'fibra-ractor-"),
        "{lines:#?}"
    );
    assert!(lines[1].contains("parked or yielded after"), "{lines:#?}");
}

#[test]
fn the_builder_sets_the_stall_threshold_and_overrides_the_environment() {
    let out = child("stall_builder", &[("FIBRA_STALL_MS", "0")]);
    assert!(out.status.success(), "{out:?}");
    let lines = fibra_lines(&out);
    assert_eq!(lines.len(), 2, "{lines:#?}");
    assert!(lines[0].contains("green thread #"), "{lines:#?}");
}

#[test]
fn fibra_stall_ms_0_silences_the_stall_detector() {
    let out = child("stall", &[("FIBRA_STALL_MS", "0")]);
    assert!(out.status.success(), "{out:?}");
    assert_eq!(fibra_lines(&out), Vec::<String>::new());
}

#[test]
fn a_runtime_whose_threads_park_says_nothing() {
    let out = child("well_behaved", &[("FIBRA_STALL_MS", "50")]);
    assert!(out.status.success(), "{out:?}");
    assert_eq!(fibra_lines(&out), Vec::<String>::new());
}

#[test]
fn a_bad_fibra_stall_ms_is_reported_not_ignored_silently() {
    let out = child("well_behaved", &[("FIBRA_STALL_MS", "soon")]);
    assert!(out.status.success(), "{out:?}");
    let lines = fibra_lines(&out);
    assert_eq!(lines.len(), 1, "{lines:#?}");
    assert!(
        lines[0].contains("FIBRA_STALL_MS=soon is not a whole number"),
        "{lines:#?}"
    );
}

/// Runs `f` on an OS thread of that name, as a runtime's first green thread
/// would be named in the stall line.
fn on_os_thread(name: &str, f: impl FnOnce() + Send + 'static) {
    std::thread::Builder::new()
        .name(name.into())
        .spawn(f)
        .unwrap()
        .join()
        .unwrap();
}

/// The threads of the runtime on the OS thread named `os_thread`.
fn threads_on<'a>(dump: &'a Dump, os_thread: &str) -> &'a [ThreadDump] {
    let runtime = dump
        .runtimes
        .iter()
        .find(|r| r.os_thread_name.as_deref() == Some(os_thread))
        .unwrap_or_else(|| panic!("no runtime on {os_thread}:\n{dump}"));
    match &runtime.state {
        RuntimeState::Threads(threads) => threads,
        busy => panic!("{os_thread} is {busy:?}"),
    }
}

fn named<'a>(threads: &'a [ThreadDump], name: &str) -> &'a ThreadDump {
    threads
        .iter()
        .find(|t| t.name.as_deref() == Some(name))
        .unwrap_or_else(|| panic!("no thread '{name}' in {threads:#?}"))
}

/// The function a test thread parks in, to be found in its backtrace.
#[inline(never)]
fn waits_for_the_order(orders: &channel::Receiver<u32>) -> u32 {
    orders.recv().unwrap_or(0)
}

#[test]
fn a_dump_from_a_plain_os_thread_names_the_function_a_thread_is_parked_in() {
    let (ready_tx, ready_rx) = std::sync::mpsc::channel();
    let (done_tx, done_rx) = std::sync::mpsc::channel::<()>();
    let runtime = std::thread::Builder::new()
        .name("dumped".into())
        .spawn(move || {
            fibra::run(move || {
                let (tx, rx) = channel::unbounded::<u32>();
                let clerk = ThreadBuilder::new()
                    .name("clerk")
                    .spawn(move || waits_for_the_order(&rx))
                    .unwrap();
                runtime::yield_now();
                ready_tx.send(()).unwrap();
                // Wait (parked) until the dump is taken.
                fibra::blocking(move || done_rx.recv()).unwrap();
                tx.send(7).unwrap();
                clerk.join().unwrap()
            })
        })
        .unwrap();
    ready_rx.recv().unwrap();
    let dump = runtime::dump();
    let clerk = named(threads_on(&dump, "dumped"), "clerk");
    assert!(
        matches!(
            clerk.state,
            ThreadState::Parked {
                reason: WaitReason::ChannelReceive,
                ..
            }
        ),
        "{clerk:?}"
    );
    assert!(
        clerk
            .backtrace
            .iter()
            .any(|f| f.function.ends_with("waits_for_the_order")),
        "{dump}"
    );
    let text = dump.to_string();
    assert!(
        text.contains("green thread 'clerk' (#2): parked on channel receive"),
        "{text}"
    );
    assert!(text.contains("waits_for_the_order"), "{text}");
    let main = threads_on(&dump, "dumped")
        .iter()
        .find(|t| t.id == 1)
        .unwrap();
    assert!(
        matches!(
            main.state,
            ThreadState::Parked {
                reason: WaitReason::Blocking,
                ..
            }
        ),
        "{main:?}"
    );
    done_tx.send(()).unwrap();
    assert_eq!(runtime.join().unwrap(), 7);
}

#[test]
fn a_dump_says_what_each_parked_thread_waits_for() {
    on_os_thread("reasons", || {
        fibra::run(|| {
            let (_orders, rx) = channel::unbounded::<u32>();
            let (full, _kept) = channel::bounded::<u32>(1);
            full.send(0).unwrap();
            let (_other, selected) = channel::unbounded::<u32>();
            let lock = Rc::new(fibra::sync::Mutex::new(()));
            let cond = Rc::new((fibra::sync::Mutex::new(()), fibra::sync::Condvar::new()));
            let listener = fibra::net::TcpListener::bind("127.0.0.1:0").unwrap();
            let guard = lock.lock();
            let spawn = |name: &str, f: Box<dyn FnOnce()>| {
                ThreadBuilder::new().name(name).spawn(f).unwrap()
            };
            let forever = spawn("forever", Box::new(runtime::park));
            let forever_id = 2;
            let lock2 = lock.clone();
            let cond2 = cond.clone();
            let inbox = Ractor::<u32, u32, ()>::new(|cx| while cx.receive().is_ok() {});
            let outbox = Ractor::<(), u32, ()>::new(|cx| {
                let _ = cx.yield_value(1);
            });
            let inbox = Rc::new(inbox);
            let (inbox2, inbox3) = (inbox.clone(), inbox.clone());
            let handles = vec![
                forever,
                spawn("park", Box::new(runtime::park)),
                spawn(
                    "sleep",
                    Box::new(|| fibra::time::sleep(Duration::from_secs(60))),
                ),
                spawn(
                    "timeout",
                    Box::new(|| {
                        let _ = fibra::time::timeout(Duration::from_secs(60), runtime::park);
                    }),
                ),
                spawn(
                    "recv",
                    Box::new(move || {
                        let _ = rx.recv();
                    }),
                ),
                spawn(
                    "send",
                    Box::new(move || {
                        let _ = full.send(1);
                    }),
                ),
                spawn(
                    "select",
                    Box::new(move || {
                        let mut select = channel::Select::new();
                        select.recv(&selected);
                        let _ = select.wait();
                    }),
                ),
                spawn("mutex", Box::new(move || drop(lock2.lock()))),
                spawn(
                    "condvar",
                    Box::new(move || {
                        let (m, c) = &*cond2;
                        drop(c.wait(m.lock()));
                    }),
                ),
                spawn(
                    "join",
                    Box::new(move || {
                        let _ = fibra::spawn(runtime::park).join();
                    }),
                ),
                spawn(
                    "blocking",
                    Box::new(|| fibra::blocking(|| std::thread::sleep(Duration::from_millis(500)))),
                ),
                spawn(
                    "block_on",
                    Box::new(|| fibra::block_on(std::future::pending::<()>())),
                ),
                spawn("socket", Box::new(move || drop(listener.accept()))),
                spawn("take", Box::new(move || drop(inbox2.take()))),
                spawn(
                    "ractor_select",
                    Box::new(move || drop(fibra::ractor::select(&[&*inbox3]))),
                ),
            ];
            let _ = forever_id;
            for _ in 0..3 {
                runtime::yield_now();
            }
            // Let the Ractors reach their waits.
            fibra::time::sleep(Duration::from_millis(50));
            let dump = runtime::dump();
            let threads = threads_on(&dump, "reasons");
            let reason = |name: &str| match named(threads, name).state {
                ThreadState::Parked { reason, .. } => reason,
                other => panic!("'{name}' is {other:?}\n{dump}"),
            };
            assert_eq!(reason("park"), WaitReason::Park);
            assert!(matches!(reason("sleep"), WaitReason::Sleep { .. }));
            // A timeout's work runs on its caller's thread: the wait inside it shows.
            assert_eq!(reason("timeout"), WaitReason::Park);
            assert_eq!(reason("recv"), WaitReason::ChannelReceive);
            assert_eq!(reason("send"), WaitReason::ChannelSend);
            assert_eq!(reason("select"), WaitReason::ChannelSelect);
            assert_eq!(reason("mutex"), WaitReason::Mutex);
            assert_eq!(reason("condvar"), WaitReason::Condvar);
            assert!(matches!(reason("join"), WaitReason::Join { .. }));
            assert_eq!(reason("blocking"), WaitReason::Blocking);
            assert_eq!(reason("block_on"), WaitReason::BlockOn);
            assert!(matches!(
                reason("socket"),
                WaitReason::Socket { direction: SocketDirection::Read, fd } if fd >= 0
            ));
            assert_eq!(reason("take"), WaitReason::RactorTake);
            assert_eq!(reason("ractor_select"), WaitReason::RactorSelect);
            // The Ractors run on the workers' runtimes.
            let on_workers: Vec<WaitReason> = dump
                .runtimes
                .iter()
                .filter(|r| {
                    r.os_thread_name
                        .as_deref()
                        .is_some_and(|n| n.starts_with("fibra-ractor"))
                })
                .filter_map(|r| match &r.state {
                    RuntimeState::Threads(threads) => Some(threads.clone()),
                    RuntimeState::Busy { .. } => None,
                })
                .flatten()
                .filter_map(|t| match t.state {
                    ThreadState::Parked { reason, .. } => Some(reason),
                    _ => None,
                })
                .collect();
            assert!(on_workers.contains(&WaitReason::RactorReceive), "{dump}");
            assert!(on_workers.contains(&WaitReason::RactorYield), "{dump}");
            // Let everything end: the runtime's end cancels the parked threads.
            drop(guard);
            inbox.close_incoming();
            assert_eq!(outbox.take().unwrap(), 1);
            drop(handles);
        })
    });
}

#[test]
fn a_runtime_busy_in_a_long_computation_is_reported_busy_and_the_dump_returns() {
    let spinning = Arc::new(AtomicBool::new(false));
    let stop = Arc::new(AtomicBool::new(false));
    let (spin, halt) = (spinning.clone(), stop.clone());
    let busy = std::thread::Builder::new()
        .name("busy".into())
        .spawn(move || {
            runtime::Builder::new().stall_threshold(None).run(move || {
                let cruncher = ThreadBuilder::new()
                    .name("cruncher")
                    .spawn(move || {
                        spin.store(true, Ordering::Release);
                        while !halt.load(Ordering::Acquire) {
                            std::hint::spin_loop();
                        }
                    })
                    .unwrap();
                cruncher.join().unwrap();
            })
        })
        .unwrap();
    while !spinning.load(Ordering::Acquire) {
        std::thread::yield_now();
    }
    let dump = runtime::dump();
    let runtime = dump
        .runtimes
        .iter()
        .find(|r| r.os_thread_name.as_deref() == Some("busy"))
        .unwrap();
    match &runtime.state {
        RuntimeState::Busy { thread, name, .. } => {
            assert_eq!(*thread, Some(2));
            assert_eq!(name.as_deref(), Some("cruncher"));
        }
        other => panic!("{other:?}"),
    }
    let text = dump.to_string();
    assert!(
        text.contains("busy running green thread 'cruncher' (#2)"),
        "{text}"
    );
    stop.store(true, Ordering::Release);
    busy.join().unwrap();
}

#[test]
fn a_dump_of_100_000_parked_threads_groups_them_by_backtrace() {
    let n = crowd::crowd_size(100_000);
    on_os_thread("crowd", move || {
        runtime::Builder::new()
            .stack_size(fibra::fiber::MIN_STACK_SIZE)
            .stall_threshold(None)
            .run(move || {
                let (tx, rx) = channel::unbounded::<u32>();
                let crowd: Vec<_> = (0..n)
                    .map(|_| {
                        let rx = rx.clone();
                        fibra::spawn(move || waits_for_the_order(&rx))
                    })
                    .collect();
                runtime::yield_now();
                let dump = runtime::dump();
                let threads = threads_on(&dump, "crowd");
                assert_eq!(threads.len(), n + 1);
                assert_eq!(threads[0].state, ThreadState::Running);
                assert!(
                    threads[0]
                        .backtrace
                        .iter()
                        .any(|f| f.function.contains("a_dump_of_100_000")),
                    "{:?}",
                    threads[0].backtrace
                );
                let text = dump.to_string();
                let head = &text[..text.len().min(4000)];
                let group = format!("{n} green threads (#2, #3,");
                assert!(text.contains(&group), "{head}");
                let rest = format!("and {} more): parked on channel receive", n - 8);
                assert!(text.contains(&rest), "{head}");
                assert!(text.contains("waits_for_the_order"), "{head}");
                assert!(text.lines().count() < 200, "{head}");
                drop(tx);
                crowd
                    .into_iter()
                    .for_each(|t| assert_eq!(t.join().unwrap(), 0));
            })
    });
}

#[test]
fn dump_on_signal_prints_a_dump_on_stderr() {
    let mut child = support::target_command(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "child_process",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD, "dump_on_signal")
        .env("FIBRA_STALL_MS", "0")
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = BufReader::new(child.stderr.take().unwrap());
    let mut seen = Vec::new();
    for line in stderr.lines() {
        let line = line.unwrap();
        let done = line.contains("waits_for_the_order");
        seen.push(line);
        if done {
            break;
        }
    }
    let _ = child.kill();
    let _ = child.wait();
    let text = seen.join("\n");
    assert!(text.contains("fibra dump: "), "{text}");
    assert!(
        text.contains("green thread 'clerk' (#2): parked on channel receive"),
        "{text}"
    );
    assert!(text.contains("waits_for_the_order"), "{text}");
}

#[test]
fn dump_on_signal_refuses_signals_it_cannot_or_must_not_take() {
    for raw in [
        libc::SIGKILL,
        libc::SIGSTOP,
        libc::SIGSEGV,
        libc::SIGBUS,
        0,
        -3,
    ] {
        let err = runtime::dump_on_signal(Signal::from_raw(raw)).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidInput, "{raw}: {err}");
    }
    let err = runtime::dump_on_signal(Signal::Other(100_000)).unwrap_err();
    assert!(err.to_string().contains("signal 100000"), "{err}");
}

/// Takes dumps until `found` finds what it looks for in one (a Ractor's body
/// takes a moment to reach its wait on its worker), and returns both.
fn dump_until<T>(mut found: impl FnMut(&Dump) -> Option<T>) -> (Dump, T) {
    for _ in 0..500 {
        let dump = runtime::dump();
        if let Some(seen) = found(&dump) {
            return (dump, seen);
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    panic!("never found:\n{}", runtime::dump());
}

/// The Ractor dumps list every Ractor of the process, and group those alike:
/// the tests that read one Ractor's line out of a dump take turns, so that
/// another test's crowd of Ractors neither hides the line in a group nor
/// shares its worker names.
static RACTOR_DUMPS: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn ractor_dumps_alone() -> std::sync::MutexGuard<'static, ()> {
    RACTOR_DUMPS
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn ractor_in(dump: &Dump, id: u64) -> Option<RactorDump> {
    dump.ractors.iter().find(|r| r.id == id).cloned()
}

#[test]
fn a_dump_shows_a_ractors_worker_state_and_mailbox_depth() {
    let _alone = ractor_dumps_alone();
    let pool = Pool::new(2);
    let backlog = pool.spawn(|cx: &Context<u32, ()>| {
        // Offers a value before it receives anything: its mail piles up.
        cx.yield_value(()).unwrap();
        "done"
    });
    for n in 0..3 {
        backlog.send(n).unwrap();
    }
    let (dump, ractor) = dump_until(|dump| {
        ractor_in(dump, backlog.id()).filter(|r| {
            matches!(
                r.state,
                RactorState::Body(ThreadState::Parked {
                    reason: WaitReason::RactorYield,
                    ..
                })
            )
        })
    });
    assert_eq!(ractor.mailbox, 3, "{dump}");
    assert!(ractor.worker < pool.workers(), "{ractor:?}");
    let worker = format!("fibra-ractor-{}", ractor.worker);
    assert_eq!(ractor.os_thread_name.as_deref(), Some(&*worker));
    // Its body is the green thread named after it on that worker.
    let runtime = dump
        .runtimes
        .iter()
        .find(|r| r.os_thread_id == ractor.os_thread_id)
        .unwrap();
    let RuntimeState::Threads(threads) = &runtime.state else {
        panic!("{dump}")
    };
    let body = named(threads, &format!("ractor #{}", backlog.id()));
    assert_eq!(Some(body.id), ractor.thread);
    let text = dump.to_string();
    let line = format!(
        "Ractor #{} on worker {} ('{worker}'), green thread #{}: parked on Ractor outbox \
         (yield, for a taker), for ",
        backlog.id(),
        ractor.worker,
        body.id
    );
    assert!(text.contains(&line), "{text}");
    assert!(text.contains("; mailbox 3 messages"), "{text}");

    // Once its body has returned, it shows as finished until it is joined,
    // with the messages it never received.
    backlog.take().unwrap();
    let (_, ended) = dump_until(|dump| {
        ractor_in(dump, backlog.id()).filter(|r| r.state == RactorState::Finished)
    });
    assert_eq!(ended.mailbox, 3);
    let id = backlog.id();
    assert_eq!(backlog.join().unwrap(), "done");
    assert!(ractor_in(&runtime::dump(), id).is_none());
}

#[test]
fn a_dump_shows_a_ractor_parked_in_receive() {
    let _alone = ractor_dumps_alone();
    let pool = Pool::new(1);
    let echo = pool.spawn(|cx: &Context<u32, u32>| {
        while let Ok(n) = cx.receive() {
            cx.yield_value(n).unwrap();
        }
    });
    echo.send(1).unwrap();
    assert_eq!(echo.take(), Ok(1));
    let (dump, ractor) = dump_until(|dump| {
        ractor_in(dump, echo.id()).filter(|r| {
            matches!(
                r.state,
                RactorState::Body(ThreadState::Parked {
                    reason: WaitReason::RactorReceive,
                    ..
                })
            )
        })
    });
    assert_eq!((ractor.worker, ractor.mailbox), (0, 0), "{dump}");
    let text = dump.to_string();
    assert!(
        text.contains(&format!(
            "Ractor #{} on worker 0 ('fibra-ractor-0'), green thread #",
            echo.id()
        )),
        "{text}"
    );
    assert!(
        text.contains("parked on Ractor mailbox (receive), for "),
        "{text}"
    );
    echo.close_incoming();
    echo.join().unwrap();
}

#[test]
fn a_dump_of_1000_ractors_groups_them_by_worker_and_state() {
    let _alone = ractor_dumps_alone();
    const N: usize = 1000;
    let pool = Pool::new(2);
    let ractors: Vec<Ractor<u32>> = (0..N)
        .map(|_| pool.spawn(|cx: &Context<u32>| while cx.receive().is_ok() {}))
        .collect();
    ractors[0].send(7).unwrap();
    let receiving = |dump: &Dump| {
        let ours = ractors
            .iter()
            .filter_map(|r| ractor_in(dump, r.id()))
            .filter(|r| {
                matches!(
                    r.state,
                    RactorState::Body(ThreadState::Parked {
                        reason: WaitReason::RactorReceive,
                        ..
                    })
                )
            })
            .count();
        (ours == N).then_some(())
    };
    let (dump, ()) = dump_until(receiving);
    let text = dump.to_string();
    let head = &text[..text.len().min(4000)];
    // One line per worker for our Ractors (other tests' may add a few).
    let grouped: Vec<&str> = text
        .lines()
        .filter(|l| l.contains(" Ractors (#") && l.contains("parked on Ractor mailbox (receive)"))
        .collect();
    let in_groups: usize = grouped
        .iter()
        .map(|l| {
            l.trim()
                .split(' ')
                .next()
                .unwrap()
                .parse::<usize>()
                .unwrap()
        })
        .sum();
    assert!(in_groups >= N, "{grouped:#?}");
    assert!(text.contains(" more) on worker "), "{head}");
    assert!(text.lines().count() < 400, "{head}");
    drop(ractors);
    drop(pool);
}

/// The child's side of the tests above; does nothing when run as a test.
#[test]
fn child_process() {
    match std::env::var(CHILD).as_deref() {
        Ok("named_panic") => fibra::run(|| {
            let h = ThreadBuilder::new()
                .name("bomber")
                .spawn(|| panic!("boom"))
                .unwrap();
            assert!(h.join().is_err());
        }),
        Ok("stall") => on_os_thread("stall-child", || {
            fibra::run(|| {
                let ticker = fibra::spawn(|| {
                    for _ in 0..3 {
                        fibra::time::sleep(Duration::from_millis(5));
                    }
                });
                let sleeper = ThreadBuilder::new()
                    .name("sleeper")
                    .spawn(|| std::thread::sleep(Duration::from_millis(300)))
                    .unwrap();
                sleeper.join().unwrap();
                ticker.join().unwrap();
            })
        }),
        Ok("dump_on_signal") => fibra::run(|| {
            runtime::dump_on_signal(Signal::Usr1).unwrap();
            let (_tx, rx) = channel::unbounded::<u32>();
            let _clerk = ThreadBuilder::new()
                .name("clerk")
                .spawn(move || waits_for_the_order(&rx))
                .unwrap();
            runtime::yield_now();
            // SAFETY: sends this process a signal it now handles.
            unsafe { libc::kill(libc::getpid(), libc::SIGUSR1) };
            // The parent kills this process once it has read the dump; the
            // bound only keeps an orphan from living on.
            fibra::time::sleep(Duration::from_secs(60));
        }),
        Ok("ractor_stall") => {
            // A pool of its own: dropping it waits for its worker to exit, so
            // the worker has written its line by the time this process ends
            // (a join returns as soon as the body does).
            let pool = Pool::new(1);
            let sleeper =
                pool.spawn(|_: &Context<()>| std::thread::sleep(Duration::from_millis(300)));
            sleeper.join().unwrap();
            drop(pool);
        }
        Ok("stall_builder") => runtime::Builder::new()
            .stall_threshold(Some(Duration::from_millis(50)))
            .run(|| std::thread::sleep(Duration::from_millis(300))),
        Ok("well_behaved") => fibra::run(|| {
            let ticks: Vec<_> = (0..4)
                .map(|_| {
                    fibra::spawn(|| {
                        for _ in 0..20 {
                            fibra::time::sleep(Duration::from_millis(10));
                        }
                    })
                })
                .collect();
            ticks.into_iter().for_each(|t| t.join().unwrap());
        }),
        _ => {}
    }
}

#[test]
fn a_runtime_that_has_ended_is_not_in_a_dump_even_if_a_thread_it_abandoned_holds_it() {
    /// A destructor that waits for what never comes: the end of the runtime
    /// abandons its thread, stack and all.
    struct Stuck;
    impl Drop for Stuck {
        fn drop(&mut self) {
            loop {
                runtime::park();
            }
        }
    }
    on_os_thread("ended-runtime", || {
        runtime::run(|| {
            fibra::spawn(|| {
                // Keeps the runtime's scheduler alive on the leaked stack.
                let _me = runtime::current();
                let _stuck = Stuck;
                runtime::park();
            });
            runtime::yield_now();
        });
    });
    // Before: listed (as busy, after the dump waited for it) by every dump.
    let dump = runtime::dump();
    assert!(
        dump.runtimes
            .iter()
            .all(|r| r.os_thread_name.as_deref() != Some("ended-runtime")),
        "{dump}"
    );
}
