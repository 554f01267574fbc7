//! [`dump`]: every runtime of the process, its green threads, what each waits
//! for and since when, and where in the code it is parked.
//!
//! A runtime's threads are its own (their table, their stacks), so a dump
//! never reads them from another OS thread: it asks each runtime, through a
//! request in its [`Monitor`] and a wake of its poller, to describe itself the
//! next time it is in its own loop. A runtime that does not answer within
//! [`ANSWER_WITHIN`] is running one thread that holds its OS thread (a long
//! computation, a blocking call); it is never interrupted, and the dump says
//! so ("busy running …"). The caller's own runtime, if any, is described by
//! the caller itself.

mod format;
mod symbols;

use crate::runtime::registry::{self, Answer, Monitor, Request, lock};
use crate::runtime::scheduler;
use crate::runtime::section::{Section, ThreadState};
use crate::runtime::task::TaskId;
use std::path::PathBuf;
use std::sync::{Arc, Condvar, Mutex};
use std::thread::ThreadId;
use std::time::{Duration, Instant};
use symbols::Symbols;

/// How long a dump waits for a runtime to start describing itself before it
/// reports it busy.
pub const ANSWER_WITHIN: Duration = Duration::from_millis(200);

/// Every runtime of the process and every green thread on each, as
/// [`dump`] found them: print it (`Display`) or walk it.
#[derive(Clone, Debug)]
pub struct Dump {
    /// The runtimes, in the order they started.
    pub runtimes: Vec<RuntimeDump>,
    /// The Ractors, by id, as their workers described them (those of a worker
    /// reported [busy](RuntimeState::Busy) are missing).
    pub ractors: Vec<RactorDump>,
    /// When the dump was taken (deadlines print relative to it).
    pub taken_at: Instant,
}

/// One runtime: the OS thread it runs on, and its green threads.
#[derive(Clone, Debug)]
pub struct RuntimeDump {
    /// The name of its OS thread, if it has one.
    pub os_thread_name: Option<String>,
    /// Its OS thread's id.
    pub os_thread_id: ThreadId,
    /// Its green threads, or why they could not be listed.
    pub state: RuntimeState,
}

/// Whether a runtime could describe its green threads.
#[derive(Clone, Debug)]
pub enum RuntimeState {
    /// It did: here they are, in the order of their slots.
    Threads(Vec<ThreadDump>),
    /// One green thread has held the OS thread since before the dump asked
    /// (for at least `for_at_least`), so nothing else on it can run, the dump
    /// included. `thread` is that thread's id (`None` if the runtime was in its
    /// own loop), `name` its name.
    Busy {
        /// The id of the thread running.
        thread: Option<u64>,
        /// Its name, if it has one.
        name: Option<Arc<str>>,
        /// How long it has run, at least.
        for_at_least: Duration,
        /// What its OS thread was doing when the dump gave up waiting, where
        /// the OS can tell (Linux): "blocked in futex (a std lock, condvar
        /// or channel?)", "running (not in a system call)".
        os_thread_doing: Option<String>,
    },
}

/// One green thread.
#[derive(Clone, Debug)]
pub struct ThreadDump {
    /// Its [`Thread::id`](crate::runtime::Thread::id).
    pub id: u64,
    /// Its [`Thread::name`](crate::runtime::Thread::name).
    pub name: Option<Arc<str>>,
    /// What it is doing.
    pub state: ThreadState,
    /// Where it is, innermost frame first (see [`Frame`]); empty for a
    /// thread that has not started, and for one parked with less than 8 KiB
    /// left on its stack (the walk needs that much room).
    pub backtrace: Arc<[Frame]>,
    /// For a parked thread that the dump found compacted (see
    /// [`Builder::compact_parked_after`](crate::runtime::Builder::compact_parked_after)):
    /// the bytes of its stack that were kept on the heap — all the stack it
    /// used. The dump puts such a thread's stack back to trace it, and the
    /// runtime compacts it again at its next sweep.
    pub compacted: Option<usize>,
}

/// One [`Ractor`](crate::ractor::Ractor): where it lives, what it does, and
/// what waits in its mailbox.
#[derive(Clone, Debug)]
pub struct RactorDump {
    /// Its [`Ractor::id`](crate::ractor::Ractor::id).
    pub id: u64,
    /// The index of the worker it lives on, among its pool's workers.
    pub worker: usize,
    /// The name of that worker's OS thread (`fibra-ractor-N`).
    pub os_thread_name: Option<String>,
    /// That OS thread's id: it tells apart the workers of two pools, whose
    /// threads have the same names.
    pub os_thread_id: ThreadId,
    /// Its body's green thread on that worker, named `ractor #ID` in the
    /// worker's [`RuntimeDump`]; `None` while the Ractor waits in the
    /// worker's inbox to be started.
    pub thread: Option<u64>,
    /// What it is doing.
    pub state: RactorState,
    /// How many messages wait in its mailbox: sent and not yet received (a
    /// send still under way when the dump looked is not counted). Counted
    /// when the dump asks, on the Ractor's worker, so messaging pays nothing
    /// for it.
    pub mailbox: usize,
}

/// What a Ractor is doing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RactorState {
    /// Its body is running, ready to run, not started yet, or parked (on
    /// [`RactorReceive`](crate::runtime::WaitReason::RactorReceive) while
    /// its mailbox is empty,
    /// [`RactorYield`](crate::runtime::WaitReason::RactorYield) while nobody
    /// takes what it offers, or anything a green thread may wait on): its
    /// body's green thread's state.
    Body(ThreadState),
    /// Its body has ended (returned, panicked or been cancelled), and what it
    /// ended with waits for [`join`](crate::ractor::Ractor::join).
    Finished,
}

/// One frame of a green thread's backtrace: a function (an inlined one has a
/// frame of its own) and where it is in the source, when debug info says.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Frame {
    /// The demangled function name, or the address if no symbol covers it.
    pub function: String,
    /// The source file, if debug info is present.
    pub file: Option<PathBuf>,
    /// The line in it.
    pub line: Option<u32>,
}

/// Lists every runtime of the process — the caller's, every Ractor worker's,
/// every other OS thread's [`run`](crate::runtime::run) — with each of its green threads:
/// its id and name, what it waits for and for how long, and a symbolized
/// backtrace of where it is parked (Go's goroutine dump).
///
/// It may be called from anywhere: a green thread, a plain OS thread, a
/// [signal](crate::runtime::dump_on_signal). It stops nothing: each runtime describes itself at
/// its next pass through its scheduler, and one that is running a thread that
/// does not park within [`ANSWER_WITHIN`] is reported busy instead (a runtime
/// that is idle answers at once). The caller waits for the answers, so a green
/// thread that calls it holds its own runtime meanwhile.
///
/// ```
/// use fibra::runtime::{self, RuntimeState, ThreadState, WaitReason};
///
/// fibra::run(|| {
///     let (tx, rx) = fibra::sync::channel::unbounded::<()>();
///     let waiter = runtime::ThreadBuilder::new()
///         .name("waiter")
///         .spawn(move || rx.recv())
///         .unwrap();
///     runtime::yield_now(); // let it park
///     let dump = runtime::dump();
///     // Every runtime of the process is in it: find this OS thread's.
///     let here = std::thread::current().id();
///     let mine = dump.runtimes.iter().find(|r| r.os_thread_id == here).unwrap();
///     let RuntimeState::Threads(threads) = &mine.state else { unreachable!() };
///     let waiter_dump = threads.iter().find(|t| t.name.as_deref() == Some("waiter")).unwrap();
///     assert!(matches!(
///         waiter_dump.state,
///         ThreadState::Parked { reason: WaitReason::ChannelReceive, .. }
///     ));
///     println!("{dump}");
///     drop(tx);
///     assert!(waiter.join().unwrap().is_err());
/// });
/// ```
///
/// # Reading it
///
/// `cargo run --example dump` prints this (paths shortened):
///
/// ```text
/// fibra dump: 3 runtimes, 9 green threads, 2 Ractors
///
/// runtime on OS thread 'main': 5 green threads
///
///   green thread #1: running
///     0: dump::main::{{closure}}
///            at fibra/examples/dump.rs:42
///
///   3 green threads ('clerk-0' #2, 'clerk-1' #3, 'clerk-2' #4): parked on channel receive, for 20 ms
///     0: fibra::sync::channel::Receiver<T>::recv_until
///            at fibra/src/sync/channel/mod.rs:382
///     1: fibra::sync::channel::Receiver<T>::recv
///            at fibra/src/sync/channel/mod.rs:308
///     2: dump::wait_for_orders
///            at fibra/examples/dump.rs:17
///     3: dump::main::{{closure}}::{{closure}}::{{closure}}
///            at fibra/examples/dump.rs:28
///
///   green thread #5: parked on sleep (due in 279 ms), for 20 ms
///     0: fibra::time::sleep_until
///            at fibra/src/time.rs:36
///     1: fibra::time::sleep
///            at fibra/src/time.rs:17
///     2: dump::main::{{closure}}::{{closure}}
///            at fibra/examples/dump.rs:33
///
/// runtime on OS thread 'fibra-ractor-0': 2 green threads
///
///   green thread #1: parked on runtime::park, for 300 ms
///     0: fibra::runtime::park
///            at fibra/src/runtime/mod.rs:234
///     1: fibra::ractor::pool::dispatch
///            at fibra/src/ractor/pool.rs:166
///     …
///
///   green thread 'ractor #1' (#2): parked on Ractor mailbox (receive), for 300 ms
///     0: fibra::runtime::waiter::wait
///            at fibra/src/runtime/waiter.rs:60
///     1: fibra::ractor::mailbox::Mailbox<T>::receive
///            at fibra/src/ractor/mailbox.rs:268
///     2: fibra::ractor::Context<In,Out>::receive
///            at fibra/src/ractor/mod.rs:355
///     3: dump::main::{{closure}}::{{closure}}
///            at fibra/examples/dump.rs:36
///
/// runtime on OS thread 'fibra-ractor-1': 2 green threads
///   …
///
///   green thread 'ractor #2' (#2): parked on Ractor outbox (yield, for a taker), for 322 ms
///     …
///
/// 2 Ractors:
///
///   Ractor #1 on worker 0 ('fibra-ractor-0'), green thread #2: parked on Ractor mailbox (receive), for 300 ms; mailbox empty
///   Ractor #2 on worker 1 ('fibra-ractor-1'), green thread #2: parked on Ractor outbox (yield, for a taker), for 322 ms; mailbox 3 messages
/// ```
///
/// Each runtime is headed by its OS thread (a Ractor worker is named
/// `fibra-ractor-N`; its green thread #1 is the worker's dispatcher, parked
/// while no Ractor is placed there). Under it, each green thread — by name
/// and id, or by id — says what it does: `running` (the one that took the
/// dump), `ready to run`, `not started yet`, or `parked on` what it waits for
/// ([`WaitReason`](crate::runtime::WaitReason)) and for how long. Green
/// threads whose state and backtrace are the same are printed once, as a group with their ids (as `pprof`'s
/// goroutine profile does), so a dump of 100,000 threads parked in a few
/// places stays a few screens long. A runtime that held its OS thread through
/// the dump reads `busy running green thread 'name' (#N) for at least T ms`,
/// and on Linux what its OS thread is doing (as the stall line says it).
///
/// Last come the Ractors, by id: the worker each lives on (its index in
/// its pool, and its OS thread), its body's green thread there (named `ractor
/// #ID` above), what the body is doing — `not started yet`, `running`,
/// `ready to run`, `parked on` its mailbox (`receive`), its outbox (`yield`,
/// waiting for a taker) or anything else, or `finished, not joined yet` — and
/// how many messages wait in its mailbox ([`RactorDump`]). Ractors on the same
/// worker doing the same are printed as one line, with the range of their
/// mailboxes' depths. The depth is counted when the dump asks, by the
/// worker itself, on its own OS thread — where its Ractors receive, so it
/// may walk their queues while none of them is receiving — and sending and
/// receiving pay nothing for it. The Ractors of a worker reported busy are
/// not listed.
///
/// A backtrace starts at the fibra call that parked the thread (the
/// scheduler's own frames are left out) and ends where the thread's own code
/// begins (fibra's start-up frames are left out too). It is walked by the
/// unwinder through the DWARF CFI, as a panic's backtrace is, so it needs no
/// frame pointers and is complete in release builds too; files and lines
/// come from debug info, and without it (a stripped binary) functions are
/// still named where the symbol table has them. Inlined functions have frames
/// of their own.
///
/// A thread's stack is read by that thread itself, resumed for an instant by
/// its own runtime on its own OS thread (a parked thread's wait is not
/// disturbed: it suspends again at once), so the walk needs some room on that
/// stack: a thread parked with less than 8 KiB left is listed without a
/// backtrace. The time a thread has waited is measured from a clock
/// its runtime reads when it sleeps, wakes or handles timers, and at least
/// every 64 passes of its loop, so it may be slightly long.
///
/// # Panics
///
/// If no OS thread can be started to symbolize the backtraces (a dump does
/// that on a thread of its own, whose stack is large enough for it).
pub fn dump() -> Dump {
    let taken_at = Instant::now();
    let runtimes: Vec<Arc<Monitor>> = registry::runtimes()
        .into_iter()
        .filter(|monitor| !monitor.has_ended())
        .collect();
    // The caller's own runtime, if any, is described here, on its thread.
    let own = scheduler::try_current().and_then(|scheduler| {
        let at = runtimes.iter().position(|m| scheduler.is_monitored_by(m))?;
        Some((at, Arc::new(scheduler.section())))
    });
    make(taken_at, runtimes, own)
}

/// A [`dump`] of `scheduler`'s runtime alone, taken on its OS thread (from
/// its loop, as a deadlock report does, or from a green thread): the other
/// runtimes of the process are not asked.
pub(in crate::runtime) fn of_own(scheduler: &scheduler::Scheduler) -> Dump {
    let taken_at = Instant::now();
    let own = Arc::new(scheduler.section());
    make(taken_at, vec![scheduler.monitor().clone()], Some((0, own)))
}

/// Makes the dump of `runtimes`, the one at `own`'s index from the section
/// given there, the others by asking them.
fn make(
    taken_at: Instant,
    runtimes: Vec<Arc<Monitor>>,
    own: Option<(usize, Arc<Section>)>,
) -> Dump {
    // The rest (asking, waiting, symbolizing) runs on an OS thread of its
    // own: a green thread's stack may be too small for the symbolizer.
    let describe = move || {
        let mut symbols = Symbols::default();
        let mut ractors = Vec::new();
        let runtimes = runtimes
            .iter()
            .enumerate()
            .map(|(at, monitor)| {
                let section = match &own {
                    Some((own_at, section)) if *own_at == at => Ok(section.clone()),
                    _ => ask(monitor),
                };
                let os_thread_name = monitor.thread.name().map(str::to_owned);
                let state = match section {
                    Ok(section) => {
                        let threads = symbols.threads(&section);
                        ractors.extend(section.ractors.iter().map(|raw| {
                            RactorDump {
                                id: raw.id,
                                worker: raw.worker,
                                os_thread_name: os_thread_name.clone(),
                                os_thread_id: monitor.thread.id(),
                                thread: raw.thread,
                                state: match raw.thread {
                                    _ if raw.finished => RactorState::Finished,
                                    None => RactorState::Body(ThreadState::NotStarted),
                                    Some(id) => RactorState::Body(
                                        threads
                                            .iter()
                                            .find(|t| t.id == id)
                                            .map_or(ThreadState::NotStarted, |t| t.state),
                                    ),
                                },
                                mailbox: raw.queued,
                            }
                        }));
                        RuntimeState::Threads(threads)
                    }
                    Err(busy) => busy,
                };
                RuntimeDump {
                    os_thread_name,
                    os_thread_id: monitor.thread.id(),
                    state,
                }
            })
            .collect();
        ractors.sort_by_key(|r| r.id);
        Dump {
            runtimes,
            ractors,
            taken_at,
        }
    };
    std::thread::scope(|scope| {
        std::thread::Builder::new()
            .name("fibra-dump".into())
            .spawn_scoped(scope, describe)
            .unwrap_or_else(|err| panic!("fibra: cannot start a thread to make a dump: {err}"))
            .join()
            .unwrap_or_else(|payload| std::panic::resume_unwind(payload))
    })
}

/// Asks `monitor`'s runtime for its section, or says why it gave none.
fn ask(monitor: &Monitor) -> Result<Arc<Section>, RuntimeState> {
    let request = Arc::new(Request {
        answer: Mutex::new(Answer::Asked),
        changed: Condvar::new(),
    });
    let asked_at = Instant::now();
    monitor.ask_dump(request.clone());
    if let Some(remote) = monitor.remote.upgrade() {
        // Wakes the runtime if it sleeps in its poller; the id names no thread,
        // so the wake itself does nothing there.
        remote.push(TaskId::NOBODY);
    }
    let mut answer = lock(&request.answer);
    loop {
        match &*answer {
            Answer::Done(section) => return Ok(section.clone()),
            Answer::Gone => {
                return Ok(Arc::new(Section {
                    threads: Vec::new(),
                    ractors: Vec::new(),
                }));
            }
            Answer::Asked if asked_at.elapsed() >= ANSWER_WITHIN => {
                *answer = Answer::Gone;
                let thread = monitor.running_thread();
                return Err(RuntimeState::Busy {
                    thread,
                    name: thread.and_then(|t| monitor.name_of(t)),
                    for_at_least: monitor.held_for().max(asked_at.elapsed()),
                    os_thread_doing: monitor.os_thread_doing(),
                });
            }
            Answer::Asked => {
                let left = ANSWER_WITHIN.saturating_sub(asked_at.elapsed());
                answer = request
                    .changed
                    .wait_timeout(answer, left)
                    .unwrap_or_else(|e| e.into_inner())
                    .0;
            }
            Answer::Started => {
                answer = request
                    .changed
                    .wait(answer)
                    .unwrap_or_else(|e| e.into_inner());
            }
        }
    }
}
