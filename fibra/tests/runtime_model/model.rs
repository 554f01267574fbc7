//! The reference model of the runtime: green threads, a FIFO run queue, three
//! channels, a `Select`, a mutex with its condition variable, joins, cancels,
//! panics, timers and a shared listener, in plain Rust. It follows the
//! documented promises (and, where the docs leave the order to the run queue,
//! the run queue's documented FIFO order: a woken or yielding thread goes to
//! its back):
//!
//! - channels: a send goes straight to the first waiting receiver, else into
//!   the buffer if it has room; a receive takes from the buffer (letting the
//!   first waiting sender into the room made), else from the first waiting
//!   sender; waiters are served in arrival order; the last sender gone tells
//!   every waiting receiver, the last receiver gone every waiting sender (and
//!   the messages left are dropped); a message handed to a cancelled receiver
//!   goes to the next one or back to the front of the channel;
//! - `Select`: when operations are ready, any one of them (the model keeps a
//!   candidate per choice, see below); when none is, it waits on all, and the
//!   first counterpart completes exactly one;
//! - `Mutex`: fair, handed straight to the first waiter; `Condvar`: notified in
//!   wait order, the waiter then locks again as `Mutex::lock` does, and a
//!   cancelled notified waiter passes its notification on;
//! - `cancel`: the thread unwinds at its next park (at once if parked; one
//!   that has not started never runs, unless a thread is unwinding then), once;
//!   its destructors run and may wait; a panic does the same; `join` returns
//!   the value, the panic or `Cancelled`;
//! - `time::timeout`: its work runs at once on the caller's green thread (the
//!   model numbers it as a thread of its own, whose end hands back to the
//!   caller); at its first park past the deadline (at once for a zero limit)
//!   it unwinds as a cancel would, and `Elapsed` comes back once its
//!   destructors have run; work that does not wait returns its value; a
//!   cancel goes to the work, and on through the caller;
//! - no second unwind: while any thread is in the middle of an unwind (std
//!   counts panics per OS thread), a cancel or a deadline is not delivered
//!   but *owed*: the thread's wait goes on, and it is woken once no thread
//!   unwinds, at a time the model does not know (see [`Model::unwinding`]);
//! - every thread parked with nothing that can wake it: `run` panics with
//!   "deadlock".
//!
//! **What it cannot predict, and how it copes.** Timers and sockets wake a
//! thread at a time the model does not know: such a thread is *flexible*, and
//! may come back at any point after its wait began (a sleep or a timeout only
//! once its duration has passed, checked against the clock as a lower bound);
//! so may a thread owed a wake-up. Where the order of events is then
//! ambiguous to the model (a thread whose only step is silent — a notified
//! condvar waiter that finds the mutex held and queues again, a thread owed
//! an unwind that parks again — may have run before or after a flexible one),
//! where the clock decides (whether a deadline had passed when the runtime
//! looked; whether a timed wait found its time passed before it parked), and
//! where the outcome is random by contract (which ready operation a `Select`
//! picks), the harness keeps one model per possibility ([`Model`] is `Clone`)
//! and drops those the real outcomes contradict. The order of the waiters of
//! one socket is not promised: the model only counts them.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

/// Green threads: 0 is the first one (`run`'s closure), 1.. are spawned by it.
pub const THREADS: usize = 4;
pub const MAIN: usize = 0;
/// Channels: unbounded, bounded(1), rendezvous.
pub const CAPS: [Option<usize>; 3] = [None, Some(1), Some(0)];
pub const CHANNELS: usize = CAPS.len();
/// Values kept on a thread's stack, at most.
pub const MAX_HELD: usize = 3;
/// The duration of every sleep and receive timeout.
pub const SHORT: Duration = Duration::from_millis(1);
/// The limit of every `time::timeout`.
pub const LIMIT: Duration = Duration::from_millis(5);
/// At most this many `timeout` work threads a program (after the others).
const WORKS: usize = 4;

/// What the work of a `time::timeout` does, before it returns: keep a value
/// whose destructor sleeps (if `hold`), then one operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Work {
    pub hold: bool,
    pub then: WorkOp,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WorkOp {
    Yield,
    Sleep,
    Recv(usize),
}

impl Work {
    /// Its first two operations (a return follows).
    fn ops(self) -> (Op, Op) {
        let then = match self.then {
            WorkOp::Yield => Op::Yield,
            WorkOp::Sleep => Op::Sleep,
            WorkOp::Recv(c) => Op::Recv(c),
        };
        if self.hold {
            (Op::HoldSleeper, then)
        } else {
            (then, Op::Return(0))
        }
    }
}

/// One operation, run by the thread the model says runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    Yield,
    Send(usize, u32),
    TrySend(usize, u32),
    SendTimeout(usize, u32),
    Recv(usize),
    TryRecv(usize),
    RecvTimeout(usize),
    /// Drop the shared sender of the channel.
    Close(usize),
    /// Drop the shared receiver of the channel.
    DropReceiver(usize),
    /// A `Select` of a receive on `recv` and, on `other`, a send of this
    /// value (`Some`) or a receive (`None`).
    Select(usize, usize, Option<u32>),
    Lock,
    TryLock,
    Unlock,
    Wait,
    NotifyOne,
    NotifyAll,
    Sleep,
    /// Keep a value whose destructor sleeps.
    HoldSleeper,
    Join(usize),
    Cancel(usize),
    Panic(u32),
    /// Ask the client OS thread for one more connection to the listener.
    Connect,
    Accept,
    /// Ask the client OS thread to write a byte on the shared stream.
    Write,
    /// Read a byte from the shared stream.
    Read,
    /// `time::timeout` of this work (its limit [`LIMIT`], or zero if `true`),
    /// which the model numbers as a thread of its own: a frame of the
    /// caller's green thread, which runs it.
    Timeout(Work, usize, bool),
    Return(u32),
}

/// How a thread ended, as `join` tells it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    Value(u32),
    Panicked(u32),
    Cancelled,
    /// A `timeout`'s work unwound by its deadline (never joined).
    Expired,
}

/// The outcome of the operation a `Select` completed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Picked {
    Got(u32),
    Disconnected,
    Sent,
}

/// What a thread reports: an operation's outcome, or a point of its unwind.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Seen {
    Done,
    Full,
    Got(u32),
    Empty,
    Disconnected,
    TimedOut,
    Locked,
    Busy,
    Woken,
    Joined(Outcome),
    Selected(usize, Picked),
    Slept,
    Accepted,
    Read,
    /// `timeout` returned the work's value.
    InTime,
    /// `timeout` returned `Err(Elapsed)`.
    Elapsed,
    /// A held sleeper's destructor starts (it sleeps next).
    DtorSleep,
    /// The thread's body is over (returned or unwound).
    End,
}

/// Which operations the generator may choose, each a switch (all on by
/// default: see `runtime_model.rs`).
#[derive(Clone, Copy, Debug, Default)]
pub struct Features {
    /// Sends and receives, closing a channel, dropping its receiver.
    pub channels: bool,
    /// `recv_timeout` and `send_timeout` (a timer goes with its wait: issue
    /// 22, item 8).
    pub recv_timeout: bool,
    pub select: bool,
    pub mutex: bool,
    pub condvar: bool,
    pub sleep: bool,
    pub join: bool,
    pub cancel: bool,
    pub panic: bool,
    /// Several threads accept on one `TcpListener` and read one `TcpStream`
    /// (issue 22, item 4).
    pub socket: bool,
    /// `time::timeout`, of a limit or of zero (issue 22, items 8, 15, 16).
    pub timeout: bool,
    /// Cancel a thread that unwinds from its own panic, or panic in one that
    /// is being cancelled, with destructors that wait (issue 22, item 3).
    pub cancel_while_panicking: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Run {
    Queued,
    Running,
    Parked,
    Done,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Cancel {
    No,
    Requested,
    Delivered,
}

/// A receive waiter's state, as the channel leaves it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Status {
    Waiting,
    Done(u32),
    Disconnected,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Wait {
    None,
    Yield,
    Recv {
        c: usize,
        until: Option<Instant>,
        status: Status,
    },
    /// A send waiter's state (`Done` when its message is taken).
    Send {
        c: usize,
        v: u32,
        status: Status,
        until: Option<Instant>,
    },
    Lock {
        granted: bool,
    },
    Condvar {
        notified: bool,
    },
    /// Notified, and queued again on the mutex.
    Relock {
        granted: bool,
    },
    Join(usize),
    Sleep(Instant),
    DtorSleep(Instant),
    Select {
        recv: usize,
        other: usize,
        send: Option<u32>,
        token: Option<(usize, Picked)>,
    },
    Accept,
    Read,
    /// In `timeout`, running its work (thread `work`) until it ends; its
    /// deadline is no earlier than `until`. Neither queued nor woken: the
    /// work runs on this green thread.
    Timeout {
        work: usize,
        until: Instant,
    },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Held {
    Guard,
    Sleeper,
    /// A guard lent to a condvar wait (or given up to it by an unwind).
    Lent,
}

#[derive(Clone, Debug)]
struct Thread {
    run: Run,
    started: bool,
    wait: Wait,
    cancel: Cancel,
    /// Unwinding from its own panic.
    panicking: bool,
    held: Vec<Held>,
    /// Ending (returning or unwinding): how, and the next held value to drop.
    ending: Option<(Outcome, usize)>,
    outcome: Option<Outcome>,
    /// Its `JoinHandle` is in the shared slots (taken by a join).
    handle: bool,
    joiner: Option<usize>,
    /// What it will report next.
    expect: Option<Seen>,
    /// A `timeout`'s work thread: its next two operations (its work, then a
    /// return), and the thread that called `timeout`.
    work: Option<(Op, Op, usize)>,
    /// A work thread whose deadline has passed at a park (the model learns
    /// it when the thread comes back, see [`Model::arrive`]).
    expired: bool,
    /// Owed an unwind (a cancel, or its deadline) that it could not take
    /// because a thread was unwinding; or woken for one it no longer owes.
    /// The scheduler wakes it once no thread unwinds: it may run at a time
    /// the model does not know (see [`Model::unwinding`]).
    owed: bool,
    /// Owed an unwind, parked, when the unwinds ended: the scheduler wakes
    /// it at the end of its round, and it may run while another unwind has
    /// begun (see [`Model::arrive`]). Until it runs: a wake that queues it
    /// in the model (a cancel, a notification) may find it queued already,
    /// and leave it where it was.
    woken_owed: bool,
    /// It reports next that a timed wait ended without parking (its time had
    /// passed), which it cannot before this.
    not_before: Option<Instant>,
}

impl Thread {
    fn new(handle: bool) -> Thread {
        Thread {
            run: Run::Queued,
            started: false,
            wait: Wait::None,
            cancel: Cancel::No,
            panicking: false,
            held: Vec::new(),
            ending: None,
            outcome: None,
            handle,
            joiner: None,
            expect: None,
            work: None,
            expired: false,
            owed: false,
            woken_owed: false,
            not_before: None,
        }
    }

    /// Parked where a timer or a socket wakes it, at a time the model does
    /// not know: a timed wait, or any wait of a `timeout`'s work (whose
    /// deadline's timer wakes it).
    fn timed(&self) -> bool {
        let timed = matches!(
            self.wait,
            Wait::Sleep(_)
                | Wait::DtorSleep(_)
                | Wait::Accept
                | Wait::Read
                | Wait::Recv { until: Some(_), .. }
                | Wait::Send { until: Some(_), .. }
        );
        let work = self.work.is_some() && self.wait != Wait::None;
        (timed || work) && matches!(self.run, Run::Parked | Run::Queued)
    }

    /// In the middle of an unwind (of a panic, a cancel or a deadline).
    fn unwinding(&self) -> bool {
        self.outcome.is_none()
            && matches!(self.ending, Some((why, _)) if !matches!(why, Outcome::Value(_)))
    }
}

#[derive(Clone, Debug)]
struct Chan {
    cap: Option<usize>,
    buffer: VecDeque<u32>,
    recv_waiters: VecDeque<usize>,
    send_waiters: VecDeque<usize>,
    /// The shared sender, and the clones of operations in flight.
    senders: u32,
    shared_sender: bool,
    /// The shared receiver (the clones of receives in flight are counted
    /// from their waits: see [`Model::has_receiver`]).
    shared_receiver: bool,
}

/// Where the run is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    Running,
    /// The first thread returned: `run` cancels the rest and returns.
    Ended,
    /// Nothing can run or be woken: `run` panics with "deadlock".
    Deadlock,
}

/// The reference model (module docs).
#[derive(Clone, Debug)]
pub struct Model {
    threads: Vec<Thread>,
    queue: VecDeque<usize>,
    current: Option<usize>,
    chans: Vec<Chan>,
    locked: bool,
    mutex_waiters: VecDeque<usize>,
    cv_waiters: VecDeque<usize>,
    connects: u32,
    /// Accepts begun and not given up.
    accepts: u32,
    /// Bytes asked of the client, and reads begun and not given up.
    writes: u32,
    reads: u32,
    pub phase: Phase,
}

type Step<T> = Result<T, String>;

/// The models that `f` leaves of each of `models`, or its first error if
/// it leaves none.
pub fn each(models: Vec<Model>, mut f: impl FnMut(Model) -> Step<Vec<Model>>) -> Step<Vec<Model>> {
    let mut error = None;
    let mut kept = Vec::new();
    for model in models {
        match f(model) {
            Ok(models) => kept.extend(models),
            Err(why) => error = error.or(Some(why)),
        }
    }
    match error {
        Some(why) if kept.is_empty() => Err(why),
        _ => Ok(kept),
    }
}

impl Model {
    /// Thread 0 runs; it has spawned the others, queued in order.
    pub fn new() -> Model {
        let mut threads: Vec<Thread> = (0..THREADS).map(|t| Thread::new(t != MAIN)).collect();
        threads[MAIN].run = Run::Running;
        threads[MAIN].started = true;
        Model {
            threads,
            queue: (1..THREADS).collect(),
            current: Some(MAIN),
            chans: CAPS
                .iter()
                .map(|&cap| Chan {
                    cap,
                    buffer: VecDeque::new(),
                    recv_waiters: VecDeque::new(),
                    send_waiters: VecDeque::new(),
                    senders: 1,
                    shared_sender: true,
                    shared_receiver: true,
                })
                .collect(),
            locked: false,
            mutex_waiters: VecDeque::new(),
            cv_waiters: VecDeque::new(),
            connects: 0,
            accepts: 0,
            writes: 0,
            reads: 0,
            phase: Phase::Running,
        }
    }

    /// The operations thread `me` may choose now, with values 0, in groups:
    /// the generator picks a group, then an operation in it, so that a kind
    /// with many variants (selects) is not chosen more often for it.
    pub fn allowed(&self, me: usize, winding_down: bool, f: &Features) -> Vec<Vec<Op>> {
        let t = &self.threads[me];
        if let Some((op, _, _)) = t.work {
            return vec![vec![op]];
        }
        let others = || (1..THREADS).filter(move |&o| o != me && self.threads[o].handle);
        let guard = t.held.contains(&Held::Guard);
        if winding_down {
            return vec![vec![self.winding_down(me, guard, f)]];
        }
        let mut groups = vec![vec![Op::Yield]];
        let mut group = |ops: Vec<Op>| {
            if !ops.is_empty() {
                groups.push(ops);
            }
        };
        if f.channels {
            let senders = (0..CHANNELS).filter(|&c| self.chans[c].shared_sender);
            // Only the first thread closes a channel or drops its receiver:
            // closed early, channels would carry few messages.
            let close = me == MAIN;
            let receivers = || (0..CHANNELS).filter(|&c| self.chans[c].shared_receiver);
            group(
                senders
                    .flat_map(|c| {
                        [Op::Send(c, 0), Op::TrySend(c, 0)]
                            .into_iter()
                            .chain(close.then_some(Op::Close(c)))
                    })
                    .collect(),
            );
            group(receivers().map(Op::Recv).collect());
            group(
                receivers()
                    .flat_map(|c| {
                        [Op::TryRecv(c)]
                            .into_iter()
                            .chain(close.then_some(Op::DropReceiver(c)))
                    })
                    .collect(),
            );
            if f.recv_timeout {
                group(receivers().map(Op::RecvTimeout).collect());
                let senders = (0..CHANNELS).filter(|&c| self.chans[c].shared_sender);
                group(senders.map(|c| Op::SendTimeout(c, 0)).collect());
            }
        }
        // A thread owed a wake-up may be woken at a time the model does not
        // know, and a `Select` then joins its queues again at their back.
        if f.select && !t.owed {
            let mut selects = Vec::new();
            let receiver = |c: usize| self.chans[c].shared_receiver;
            for recv in (0..CHANNELS).filter(|&c| receiver(c)) {
                for other in (0..CHANNELS).filter(|&o| o != recv) {
                    if receiver(other) {
                        selects.push(Op::Select(recv, other, None));
                    }
                    if self.chans[other].shared_sender {
                        selects.push(Op::Select(recv, other, Some(0)));
                    }
                }
            }
            group(selects);
        }
        if f.mutex {
            group(if guard {
                vec![Op::Unlock]
            } else {
                vec![Op::Lock, Op::TryLock]
            });
        }
        if f.condvar {
            if guard {
                group(vec![Op::Wait]);
            }
            group(vec![Op::NotifyOne, Op::NotifyAll]);
        }
        if f.sleep {
            group(vec![Op::Sleep]);
            if t.held.len() < MAX_HELD {
                group(vec![Op::HoldSleeper]);
            }
        }
        if f.join {
            group(others().map(Op::Join).collect());
        }
        if f.cancel {
            let cancellable = |o: usize| {
                let other = &self.threads[o];
                f.cancel_while_panicking || !(other.panicking && other.cancel == Cancel::No)
            };
            group(
                others()
                    .filter(|&o| cancellable(o))
                    .map(Op::Cancel)
                    .collect(),
            );
        }
        if f.panic && me != MAIN && (f.cancel_while_panicking || t.cancel == Cancel::No) {
            group(vec![Op::Panic(0)]);
        }
        if f.socket {
            // A cancelled thread does not read or accept: it may find what
            // it waits for there (no park) or not (it unwinds), at a time the
            // model does not know.
            let mut socket = vec![Op::Connect, Op::Write];
            if self.connects > self.accepts && t.cancel == Cancel::No {
                socket.push(Op::Accept);
            }
            if self.writes > self.reads && t.cancel == Cancel::No {
                socket.push(Op::Read);
            }
            group(socket);
        }
        if f.timeout && self.threads.len() < THREADS + WORKS {
            let w = self.threads.len();
            let mut then = vec![WorkOp::Yield, WorkOp::Sleep];
            then.extend(
                (0..CHANNELS)
                    .filter(|&c| self.chans[c].shared_receiver)
                    .map(WorkOp::Recv),
            );
            let works = then
                .into_iter()
                .flat_map(|then| [false, true].map(|hold| Work { hold, then }));
            group(
                works
                    .flat_map(|work| [Op::Timeout(work, w, false), Op::Timeout(work, w, true)])
                    .collect(),
            );
        }
        if me != MAIN {
            group(vec![Op::Return(0)]);
            return groups;
        }
        // The first thread waits only for threads before the program winds
        // down, so that it mostly reaches its wind-down (which lets the
        // others go), and not most programs end in a deadlock.
        let may_hang = |op: &Op| {
            matches!(
                op,
                Op::Send(..) | Op::Recv(_) | Op::Select(..) | Op::Lock | Op::Wait
            )
        };
        groups
            .into_iter()
            .map(|ops| {
                ops.into_iter()
                    .filter(|op| !may_hang(op))
                    .collect::<Vec<_>>()
            })
            .filter(|ops| !ops.is_empty())
            .collect()
    }

    /// What `me` does once the program winds down: a spawned thread returns;
    /// the first lets go of the mutex, closes the channels and notifies the
    /// condvar's waiters (so that fewer programs end in a deadlock), joins the
    /// threads it has handles of, and returns.
    fn winding_down(&self, me: usize, guard: bool, f: &Features) -> Op {
        if me != MAIN {
            return Op::Return(0);
        }
        if guard {
            return Op::Unlock;
        }
        if let Some(c) = (0..CHANNELS).find(|&c| self.chans[c].shared_sender) {
            return Op::Close(c);
        }
        if !self.cv_waiters.is_empty() {
            return Op::NotifyAll;
        }
        if let Some(t) = (1..THREADS).find(|&t| self.threads[t].handle) {
            return Op::Join(t);
        }
        // `run` cancels what is left when the first thread returns: not
        // while a thread unwinds from a panic (item 3), unless asked.
        let panicking = self
            .threads
            .iter()
            .any(|t| t.panicking && t.outcome.is_none());
        if panicking && !f.cancel_while_panicking {
            Op::Sleep
        } else {
            Op::Return(0)
        }
    }

    // ---- who runs -------------------------------------------------------

    fn wake(&mut self, t: usize) {
        if self.threads[t].run == Run::Parked {
            self.threads[t].run = Run::Queued;
            self.queue.push_back(t);
        }
    }

    /// The running thread stops (parked or queued): nobody runs until the
    /// next report says who does.
    fn stop(&mut self, me: usize, run: Run) {
        self.threads[me].run = run;
        if run == Run::Queued {
            self.queue.push_back(me);
        }
        self.current = None;
    }

    /// Whether a thread of the runtime is in the middle of an unwind: std's
    /// panic count is per OS thread, so then no thread is handed one (the
    /// scheduler's `interrupt`).
    fn unwinding(&self) -> bool {
        self.threads.iter().any(Thread::unwinding)
    }

    /// `t` has an unwind to take: a cancel, or (a work) its deadline.
    fn pending(&self, t: usize) -> bool {
        let thread = &self.threads[t];
        thread.cancel == Cancel::Requested || thread.expired
    }

    /// `t`, parking or resuming now, unwinds: it has one pending, and no
    /// thread unwinds (else it is owed, and its wait goes on).
    fn unwinds_now(&self, t: usize) -> bool {
        self.pending(t) && !self.unwinding()
    }

    /// Whether `t` may run (and report) at a time the model does not know:
    /// a timed wait; or owed a wake-up, which the scheduler gives once no
    /// thread unwinds (or queued by one given before: it runs ahead of its
    /// place in the model's queue).
    fn flexible(&self, t: usize) -> bool {
        let thread = &self.threads[t];
        let owed = thread.owed
            && (thread.run == Run::Queued || thread.run == Run::Parked && !self.unwinding());
        thread.timed() || owed
    }

    /// Whether something will wake parked `t`: a timer or a socket, or the
    /// end of the unwinds for an unwind it is owed.
    fn wakeable(&self, t: usize) -> bool {
        let thread = &self.threads[t];
        let owed = thread.owed && self.pending(t) && thread.run == Run::Parked;
        thread.timed() || owed && !self.unwinding()
    }

    /// Whether what `t` waits for has come (for a wait the model can tell).
    fn wait_done(&self, t: usize) -> bool {
        match self.threads[t].wait {
            Wait::None | Wait::Yield => true,
            Wait::Recv { status, .. } => status != Status::Waiting,
            Wait::Send { status, .. } => status != Status::Waiting,
            Wait::Lock { granted } | Wait::Relock { granted } => granted,
            Wait::Condvar { notified } => notified,
            Wait::Join(of) => self.threads[of].outcome.is_some(),
            Wait::Select { token, .. } => token.is_some(),
            Wait::Sleep(_) | Wait::DtorSleep(_) | Wait::Accept | Wait::Read => false,
            Wait::Timeout { .. } => false,
        }
    }

    /// Whether queued `t`'s run would report nothing: a notified condvar
    /// waiter that will find the mutex taken, or a thread owed an unwind
    /// (while another unwinds) whose wait goes on.
    fn silent(&self, t: usize) -> bool {
        if self.unwinds_now(t) {
            return false;
        }
        let relock = self.threads[t].wait == Wait::Condvar { notified: true } && self.locked;
        let owes = self.pending(t) && !self.wait_done(t);
        relock || owes
    }

    /// The queued thread at the front, if its run reports nothing.
    fn silent_front(&self) -> Option<usize> {
        let &t = self.queue.front()?;
        self.silent(t).then_some(t)
    }

    /// Runs silent queued `t` (the front, or one queued earlier than the
    /// model knows: see [`Model::arrive`]): it queues on the mutex again, or
    /// parks again, owed its unwind (a `Select` leaves its queues and joins
    /// them again, at their back, as it does after any wake-up that finds
    /// none of its operations done).
    fn run_silent(&mut self, t: usize) {
        self.queue.retain(|&q| q != t);
        if self.pending(t) {
            self.threads[t].owed = true;
        }
        self.threads[t].run = Run::Parked;
        if self.threads[t].wait == (Wait::Condvar { notified: true }) {
            self.threads[t].wait = Wait::Relock { granted: false };
            self.mutex_waiters.push_back(t);
        }
        self.parks_again(t);
    }

    /// Parked `t` has run and parks again, its wait not over: a `Select`
    /// joins its queues again, at their back.
    fn parks_again(&mut self, t: usize) {
        self.threads[t].woken_owed = false;
        if let Wait::Select {
            recv, other, send, ..
        } = self.threads[t].wait
        {
            for c in [recv, other] {
                self.chans[c].recv_waiters.retain(|&w| w != t);
                self.chans[c].send_waiters.retain(|&w| w != t);
            }
            self.chans[recv].recv_waiters.push_back(t);
            match send {
                Some(_) => self.chans[other].send_waiters.push_back(t),
                None => self.chans[other].recv_waiters.push_back(t),
            }
        }
    }

    fn settle(&mut self) {
        while let Some(t) = self.silent_front() {
            self.run_silent(t);
        }
    }

    /// After the running thread stopped: whether anything can still run.
    fn check_deadlock(&mut self) {
        if self.current.is_some() || self.phase != Phase::Running {
            return;
        }
        // Once the silent threads have run (on a copy: a flexible thread may
        // still come before them).
        let mut settled = self.clone();
        settled.settle();
        let waiting = (0..settled.threads.len()).any(|t| settled.wakeable(t));
        if settled.queue.is_empty() && !waiting {
            self.phase = Phase::Deadlock;
        }
    }

    /// The models that `me` arriving (reporting, or choosing an operation)
    /// leaves: one, or one per number of silent threads it may have overtaken.
    /// A work whose deadline may have passed (by the clock, read after the
    /// runtime's) may have seen it passed, here or at the park it comes back
    /// from (that park then unwound at once): one model each.
    pub fn arrive(self, me: usize, now: Instant) -> Step<Vec<Model>> {
        if self.current == Some(me) {
            return Ok(vec![self]);
        }
        if let Some(other) = self.current {
            return Err(format!("thread {me} runs, but thread {other} should"));
        }
        let mut variants = vec![];
        if self.deadline(me).is_some_and(|until| now >= until) && !self.threads[me].expired {
            let mut expired = self.clone();
            expired.threads[me].expired = true;
            variants.push(expired);
        }
        variants.push(self);
        // A thread woken for its owed unwind may have run while another
        // unwind had begun, and parked again (a `Select` behind the others).
        // So may one that a later wake queued in the model (a cancel, a
        // notification): the scheduler may have queued it before, where the
        // model does not know, and that wake then left it there; there, its
        // run reports nothing if it would not at the front (`silent`).
        if variants[0].unwinding() {
            for t in 0..variants[0].threads.len() {
                let silent = |m: &Model| {
                    let thread = &m.threads[t];
                    let ran = match thread.run {
                        Run::Parked => true,
                        Run::Queued => m.silent(t),
                        Run::Running | Run::Done => false,
                    };
                    thread.woken_owed && ran && t != me
                };
                let ran: Vec<Model> = variants
                    .iter()
                    .filter(|m| silent(m))
                    .map(|m| {
                        let mut ran = m.clone();
                        if ran.threads[t].run == Run::Queued {
                            ran.run_silent(t);
                        } else {
                            ran.parks_again(t);
                        }
                        ran
                    })
                    .collect();
                variants.extend(ran);
            }
        }
        each(variants, |m| m.arrive_unchanged(me, now))
    }

    /// The deadline of work thread `w` (no earlier than this).
    fn deadline(&self, w: usize) -> Option<Instant> {
        let (_, _, caller) = self.threads[w].work?;
        match self.threads[caller].wait {
            Wait::Timeout { work, until } if work == w => Some(until),
            _ => None,
        }
    }

    /// [`arrive`](Model::arrive), once the deadline is settled.
    fn arrive_unchanged(mut self, me: usize, now: Instant) -> Step<Vec<Model>> {
        if self.flexible(me) {
            let mut variants = vec![self.clone()];
            while let Some(t) = self.silent_front() {
                self.run_silent(t);
                variants.push(self.clone());
            }
            return variants
                .into_iter()
                .map(|mut m| {
                    m.queue.retain(|&t| t != me);
                    m.resume(me, now)?;
                    Ok(m)
                })
                .collect();
        }
        self.settle();
        match self.queue.front() {
            Some(&t) if t == me => {
                self.queue.pop_front();
                self.resume(me, now)?;
                Ok(vec![self])
            }
            _ => Err(format!("thread {me} runs, but it is not its turn")),
        }
    }

    /// `t` runs again: what it will report, from how its wait ended.
    fn resume(&mut self, t: usize, now: Instant) -> Step<()> {
        self.current = Some(t);
        let thread = &mut self.threads[t];
        thread.run = Run::Running;
        thread.woken_owed = false;
        if !thread.started {
            thread.started = true;
            // Cancelled before it started: it never runs; its end is seen
            // (its closure's values drop) at its turn.
            if self.unwinds_now(t) {
                return self.deliver(t, Wait::None);
            }
            return Ok(());
        }
        let wait = std::mem::replace(&mut thread.wait, Wait::None);
        if self.unwinds_now(t) {
            return self.deliver(t, wait);
        }
        if self.pending(t) {
            // Owed: the park returns as a spurious wake-up would, and the
            // wait goes on (it reports only if it is over).
            self.threads[t].owed = true;
        }
        let seen = match wait {
            Wait::None => return Err(format!("model: thread {t} resumed without a wait")),
            Wait::Yield => Seen::Done,
            Wait::Recv { c, until, status } => match status {
                Status::Done(v) => Seen::Got(v),
                Status::Disconnected => match self.try_recv(c) {
                    Ok(v) => Seen::Got(v),
                    Err(seen) => seen,
                },
                Status::Waiting => match until {
                    Some(until) if now >= until => {
                        self.chans[c].recv_waiters.retain(|&w| w != t);
                        Seen::TimedOut
                    }
                    Some(_) => return Err(format!("thread {t} timed out early")),
                    None => return Err(format!("model: thread {t} woke in a receive")),
                },
            },
            Wait::Send {
                c,
                status: Status::Done(_),
                ..
            } => {
                self.drop_sender(c);
                Seen::Done
            }
            Wait::Send {
                c,
                status: Status::Disconnected,
                ..
            } => {
                self.drop_sender(c);
                Seen::Disconnected
            }
            Wait::Send {
                c,
                until: Some(until),
                ..
            } => {
                if now < until {
                    return Err(format!("thread {t} timed out early"));
                }
                self.chans[c].send_waiters.retain(|&w| w != t);
                self.drop_sender(c);
                Seen::TimedOut
            }
            Wait::Lock { granted: true } | Wait::Relock { granted: true } => {
                self.mutex_waiters.retain(|&w| w != t);
                if let Wait::Relock { .. } = wait {
                    self.lend_back(t);
                    Seen::Woken
                } else {
                    self.threads[t].held.push(Held::Guard);
                    Seen::Locked
                }
            }
            Wait::Condvar { notified: true } if self.locked => {
                return Err(format!("thread {t} woke, but it queues on the mutex"));
            }
            Wait::Condvar { notified: true } => {
                // Not silent: the mutex is free, and nobody waits for it.
                self.locked = true;
                self.lend_back(t);
                Seen::Woken
            }
            Wait::Join(of) => match self.threads[of].outcome {
                Some(outcome) => Seen::Joined(outcome),
                None => return Err(format!("model: thread {t} woke in a join")),
            },
            Wait::Sleep(until) | Wait::DtorSleep(until) => {
                if now < until {
                    return Err(format!("thread {t} woke from a sleep early"));
                }
                Seen::Slept
            }
            Wait::Select {
                recv,
                other,
                send,
                token: Some((index, picked)),
            } => {
                self.leave_select(t, recv, other);
                let receive = index == 0 || send.is_none();
                let picked = match picked {
                    // As `recv`: a message given back since may be there.
                    Picked::Disconnected if receive => {
                        let c = if index == 0 { recv } else { other };
                        self.try_recv(c).map_or(Picked::Disconnected, Picked::Got)
                    }
                    picked => picked,
                };
                Seen::Selected(index, picked)
            }
            Wait::Accept => Seen::Accepted,
            Wait::Read => Seen::Read,
            wait => return Err(format!("thread {t} woke in {wait:?}")),
        };
        self.threads[t].expect = Some(seen);
        self.drop_clones_of(wait);
        Ok(())
    }

    /// A notified waiter has the mutex again: its guard is back in place.
    fn lend_back(&mut self, t: usize) {
        let held = &mut self.threads[t].held;
        let lent = held
            .iter()
            .position(|&h| h == Held::Lent)
            .expect("a lent guard");
        held[lent] = Held::Guard;
    }

    /// `t` unwinds from `wait` (its cancel, else its deadline): undo the wait
    /// (what was handed to it goes on), then unwind.
    fn deliver(&mut self, t: usize, wait: Wait) -> Step<()> {
        let thread = &mut self.threads[t];
        thread.wait = Wait::None;
        let why = if thread.cancel == Cancel::Requested {
            thread.cancel = Cancel::Delivered;
            Outcome::Cancelled
        } else {
            Outcome::Expired
        };
        match wait {
            Wait::None | Wait::Yield | Wait::Join(_) | Wait::Sleep(_) => {}
            Wait::DtorSleep(_) => {
                // Cancelled in a destructor of a return: the rest unwinds.
                if let Some((_, next)) = self.threads[t].ending {
                    self.threads[t].ending = Some((why, next));
                    return self.unwind_next(t);
                }
            }
            Wait::Recv { c, status, .. } => match status {
                Status::Done(v) => self.give_back(c, v),
                Status::Disconnected => {}
                Status::Waiting => self.chans[c].recv_waiters.retain(|&w| w != t),
            },
            Wait::Send { c, status, .. } => {
                if status == Status::Waiting {
                    self.chans[c].send_waiters.retain(|&w| w != t);
                }
                self.drop_sender(c);
            }
            Wait::Lock { granted } => {
                self.mutex_waiters.retain(|&w| w != t);
                if granted {
                    self.release();
                }
            }
            Wait::Condvar { notified } => {
                self.cv_waiters.retain(|&w| w != t);
                if notified {
                    self.notify_one();
                }
            }
            Wait::Relock { granted } => {
                self.mutex_waiters.retain(|&w| w != t);
                if granted {
                    self.release();
                }
                self.notify_one();
            }
            Wait::Select {
                recv,
                other,
                send: _,
                token,
            } => {
                if let Some((index, Picked::Got(v))) = token {
                    self.give_back(if index == 0 { recv } else { other }, v);
                }
                self.leave_select(t, recv, other);
            }
            Wait::Accept => self.accepts -= 1,
            Wait::Read => self.reads -= 1,
            Wait::Timeout { .. } => return Err(format!("model: thread {t} unwinds in a timeout")),
        }
        self.drop_clones_of(wait);
        self.begin_unwind(t, why)
    }

    fn begin_unwind(&mut self, t: usize, why: Outcome) -> Step<()> {
        self.threads[t].ending = Some((why, 0));
        self.unwind_next(t)
    }

    /// Drops the ending thread's held values up to the next that reports
    /// (a sleeper), or to its end.
    fn unwind_next(&mut self, t: usize) -> Step<()> {
        let (why, mut next) = self.threads[t].ending.expect("ending");
        while next < self.threads[t].held.len() {
            let held = self.threads[t].held[next];
            next += 1;
            match held {
                Held::Guard => self.release(),
                Held::Lent => {}
                Held::Sleeper => {
                    self.threads[t].ending = Some((why, next));
                    self.threads[t].expect = Some(Seen::DtorSleep);
                    return Ok(());
                }
            }
        }
        self.threads[t].ending = Some((why, next));
        self.threads[t].expect = Some(Seen::End);
        Ok(())
    }

    // ---- reports --------------------------------------------------------

    /// `me`, running, reports `seen`: compare, and go on from there.
    pub fn report(mut self, me: usize, seen: Seen, now: Instant) -> Step<Vec<Model>> {
        let mut models = Vec::new();
        if seen == Seen::DtorSleep && self.threads[me].expect == Some(seen) {
            // The destructor's sleep may find its time passed before it
            // parks: then it neither parks nor unwinds.
            models.extend(self.late(me, Seen::Slept, now));
        }
        match self.report_one(me, seen, now) {
            Ok(()) => models.push(self),
            Err(why) if models.is_empty() => return Err(why),
            Err(_) => {}
        }
        Ok(models)
    }

    fn report_one(&mut self, me: usize, seen: Seen, now: Instant) -> Step<()> {
        let expect = self.threads[me].expect.take();
        if expect != Some(seen) {
            return Err(format!(
                "thread {me}: saw {seen:?}, the model expects {expect:?}"
            ));
        }
        if let Some(time) = self.threads[me].not_before.take()
            && now < time
        {
            return Err(format!("thread {me}: {seen:?} before its time passed"));
        }
        match seen {
            Seen::DtorSleep => {
                if self.unwinds_now(me) {
                    // It parks, and its cancel is delivered there.
                    return self.deliver(me, Wait::DtorSleep(now));
                }
                if self.pending(me) {
                    self.threads[me].owed = true;
                }
                self.threads[me].wait = Wait::DtorSleep(now + SHORT);
                self.stop(me, Run::Parked);
                self.check_deadlock();
            }
            Seen::Slept if self.threads[me].ending.is_some() => self.unwind_next(me)?,
            Seen::End => {
                let (why, _) = self.threads[me].ending.expect("ending");
                let thread = &mut self.threads[me];
                thread.outcome = Some(why);
                thread.run = Run::Done;
                self.current = None;
                if !self.unwinding() {
                    for t in 0..self.threads.len() {
                        let thread = &self.threads[t];
                        if thread.owed && self.pending(t) && thread.run == Run::Parked {
                            self.threads[t].woken_owed = true;
                        }
                    }
                }
                if let Some((_, _, caller)) = self.threads[me].work {
                    return self.timeout_returns(caller, me, why);
                }
                if let Some(joiner) = self.threads[me].joiner.take()
                    && self.threads[joiner].wait == Wait::Join(me)
                {
                    self.wake(joiner);
                }
                if me == MAIN {
                    self.phase = Phase::Ended;
                } else {
                    self.check_deadlock();
                }
            }
            _ => {}
        }
        Ok(())
    }

    /// Work `w` of the `timeout` that `caller` is in ended `why`: the caller
    /// goes on at once, on the same green thread, which takes its cancel and
    /// the wake-up it may be owed back.
    fn timeout_returns(&mut self, caller: usize, w: usize, why: Outcome) -> Step<()> {
        let (cancel, owed) = (self.threads[w].cancel, self.threads[w].owed);
        let thread = &mut self.threads[caller];
        thread.wait = Wait::None;
        thread.run = Run::Running;
        thread.owed = owed;
        thread.cancel = cancel;
        self.current = Some(caller);
        let seen = match why {
            Outcome::Value(_) => Seen::InTime,
            Outcome::Expired => Seen::Elapsed,
            // Not `timeout`'s: the unwind goes on through the caller.
            Outcome::Cancelled => return self.begin_unwind(caller, why),
            Outcome::Panicked(_) => return Err(format!("model: timeout work ended {why:?}")),
        };
        self.threads[caller].expect = Some(seen);
        Ok(())
    }

    /// Whether `me` has reported all it had to, and may choose again.
    pub fn ready_for_op(&self, me: usize) -> Step<()> {
        match self.threads[me].expect {
            None => Ok(()),
            Some(seen) => Err(format!(
                "thread {me} chose an operation, the model expects {seen:?} first"
            )),
        }
    }

    // ---- operations -----------------------------------------------------

    /// The models that `me` running `op` leaves (one per choice a `Select`
    /// may make).
    pub fn apply(mut self, me: usize, op: Op, now: Instant) -> Step<Vec<Model>> {
        let park = |m: &mut Model, wait: Wait| -> Step<()> {
            if m.unwinds_now(me) {
                return m.deliver(me, Wait::None);
            }
            if m.pending(me) {
                m.threads[me].owed = true;
            }
            m.threads[me].wait = wait;
            m.stop(me, Run::Parked);
            m.check_deadlock();
            Ok(())
        };
        if let Some((next, then, _)) = &mut self.threads[me].work {
            *next = std::mem::replace(then, Op::Return(0));
        }
        let mut seen = Seen::Done;
        match op {
            Op::Yield => {
                if self.unwinds_now(me) {
                    self.deliver(me, Wait::None)?;
                } else {
                    if self.pending(me) {
                        self.threads[me].owed = true;
                    }
                    self.threads[me].wait = Wait::Yield;
                    self.stop(me, Run::Queued);
                }
                return Ok(vec![self]);
            }
            Op::Send(c, v) | Op::SendTimeout(c, v) => {
                self.chans[c].senders += 1;
                let sent = self.try_send(c, v);
                if sent != Err(Seen::Full) {
                    self.drop_sender(c);
                    if sent.is_err() {
                        seen = Seen::Disconnected;
                    }
                } else {
                    let until = matches!(op, Op::SendTimeout(..)).then_some(now + SHORT);
                    let wait = Wait::Send {
                        c,
                        v,
                        status: Status::Waiting,
                        until,
                    };
                    let mut late = until.and_then(|_| self.late(me, Seen::TimedOut, now));
                    if let Some(late) = &mut late {
                        late.drop_sender(c);
                    }
                    if self.unwinds_now(me) {
                        self.deliver(me, wait)?;
                    } else {
                        self.chans[c].send_waiters.push_back(me);
                        park(&mut self, wait)?;
                    }
                    return Ok(late.into_iter().chain([self]).collect());
                }
            }
            Op::TrySend(c, v) => {
                if let Err(error) = self.try_send(c, v) {
                    seen = error;
                }
            }
            Op::Recv(c) | Op::RecvTimeout(c) => match self.try_recv(c) {
                Ok(v) => seen = Seen::Got(v),
                Err(Seen::Disconnected) => seen = Seen::Disconnected,
                Err(_) => {
                    let until = matches!(op, Op::RecvTimeout(_)).then_some(now + SHORT);
                    let late = until.and_then(|_| self.late(me, Seen::TimedOut, now));
                    if !self.unwinds_now(me) {
                        self.chans[c].recv_waiters.push_back(me);
                    }
                    let status = Status::Waiting;
                    park(&mut self, Wait::Recv { c, until, status })?;
                    return Ok(late.into_iter().chain([self]).collect());
                }
            },
            Op::TryRecv(c) => {
                seen = match self.try_recv(c) {
                    Ok(v) => Seen::Got(v),
                    Err(seen) => seen,
                }
            }
            Op::Close(c) => {
                self.chans[c].shared_sender = false;
                self.drop_sender(c);
            }
            Op::DropReceiver(c) => {
                self.chans[c].shared_receiver = false;
                self.drop_receiver(c);
            }
            Op::Select(recv, other, send) => return self.select(me, recv, other, send),
            Op::Lock => {
                if self.locked {
                    if !self.unwinds_now(me) {
                        self.mutex_waiters.push_back(me);
                    }
                    park(&mut self, Wait::Lock { granted: false })?;
                    return Ok(vec![self]);
                }
                self.locked = true;
                self.threads[me].held.push(Held::Guard);
                seen = Seen::Locked;
            }
            Op::TryLock => {
                if self.locked {
                    seen = Seen::Busy;
                } else {
                    self.locked = true;
                    self.threads[me].held.push(Held::Guard);
                    seen = Seen::Locked;
                }
            }
            Op::Unlock => {
                let held = &mut self.threads[me].held;
                let at = held
                    .iter()
                    .position(|&h| h == Held::Guard)
                    .expect("a guard");
                held.remove(at);
                self.release();
            }
            Op::Wait => {
                let held = &mut self.threads[me].held;
                let at = held
                    .iter()
                    .position(|&h| h == Held::Guard)
                    .expect("a guard");
                held[at] = Held::Lent;
                if !self.unwinds_now(me) {
                    self.cv_waiters.push_back(me);
                }
                self.release();
                park(&mut self, Wait::Condvar { notified: false })?;
                return Ok(vec![self]);
            }
            Op::NotifyOne => self.notify_one(),
            Op::NotifyAll => {
                while !self.cv_waiters.is_empty() {
                    self.notify_one();
                }
            }
            Op::Sleep => {
                let late = self.late(me, Seen::Slept, now);
                park(&mut self, Wait::Sleep(now + SHORT))?;
                return Ok(late.into_iter().chain([self]).collect());
            }
            Op::HoldSleeper => self.threads[me].held.push(Held::Sleeper),
            Op::Join(t) => {
                self.threads[t].handle = false;
                match self.threads[t].outcome {
                    Some(outcome) => seen = Seen::Joined(outcome),
                    None => {
                        if !self.unwinds_now(me) {
                            self.threads[t].joiner = Some(me);
                        }
                        park(&mut self, Wait::Join(t))?;
                        return Ok(vec![self]);
                    }
                }
            }
            Op::Cancel(t) => self.cancel(t),
            Op::Timeout(work, w, zero) => {
                if self.threads.len() != w {
                    return Err(format!("model: timeout work numbered {w}"));
                }
                // The work runs at once, on this green thread: its cancel
                // (and owed wake-up) go with it. A zero limit has passed at
                // its first wait.
                let caller = &mut self.threads[me];
                let mut thread = Thread::new(false);
                let (first, then) = work.ops();
                thread.work = Some((first, then, me));
                thread.run = Run::Running;
                thread.started = true;
                thread.expired = zero;
                thread.cancel = std::mem::replace(&mut caller.cancel, Cancel::No);
                thread.owed = std::mem::take(&mut caller.owed);
                let limit = if zero { Duration::ZERO } else { LIMIT };
                caller.wait = Wait::Timeout {
                    work: w,
                    until: now + limit,
                };
                caller.run = Run::Parked;
                self.threads.push(thread);
                self.current = Some(w);
                return Ok(vec![self]);
            }
            Op::Panic(_) | Op::Return(_) => {
                let why = match op {
                    Op::Panic(tag) => Outcome::Panicked(tag),
                    Op::Return(v) => Outcome::Value(v),
                    _ => unreachable!(),
                };
                if let Op::Panic(_) = op {
                    let thread = &mut self.threads[me];
                    thread.panicking = true;
                    if thread.cancel == Cancel::Requested {
                        // Its unwind is the panic's: the cancel adds none (item 3).
                        thread.cancel = Cancel::Delivered;
                    }
                }
                self.begin_unwind(me, why)?;
                return Ok(vec![self]);
            }
            Op::Connect => self.connects += 1,
            Op::Write => self.writes += 1,
            Op::Read => {
                self.reads += 1;
                self.threads[me].wait = Wait::Read;
                self.stop(me, Run::Parked);
                return Ok(vec![self]);
            }
            Op::Accept => {
                // Not chosen by a cancelled thread: it may find the connection
                // there (no park) or not (it unwinds), at a time the model
                // does not know.
                self.accepts += 1;
                self.threads[me].wait = Wait::Accept;
                self.stop(me, Run::Parked);
                return Ok(vec![self]);
            }
        }
        self.threads[me].expect = Some(seen);
        Ok(vec![self])
    }

    /// Cancels `t`'s green thread: the work of the `timeout` it is in, if it
    /// is in one.
    /// The model where `me`, which unwinds at its next park, reports `seen`
    /// instead: a timed wait of [`SHORT`] that found its time passed (the
    /// thread was held up that long) and did not park.
    fn late(&self, me: usize, seen: Seen, now: Instant) -> Option<Model> {
        self.unwinds_now(me).then(|| {
            let mut late = self.clone();
            late.threads[me].expect = Some(seen);
            late.threads[me].not_before = Some(now + SHORT);
            late
        })
    }

    fn cancel(&mut self, mut t: usize) {
        while let Wait::Timeout { work, .. } = self.threads[t].wait {
            t = work;
        }
        let target = &mut self.threads[t];
        if target.outcome.is_none() && target.cancel == Cancel::No {
            let ends = !matches!(target.ending, Some((Outcome::Expired, _)));
            if target.unwinding() && ends {
                // Already unwinding, to its end: never a second unwind (item
                // 3). (It is woken, and its destructor's sleep parks again.)
                // A deadline's unwind ends in its `timeout`: the cancel is
                // taken after (owed until then).
                target.cancel = Cancel::Delivered;
            } else {
                target.cancel = Cancel::Requested;
                self.wake(t);
            }
        }
    }

    fn select(
        mut self,
        me: usize,
        recv: usize,
        other: usize,
        send: Option<u32>,
    ) -> Step<Vec<Model>> {
        if send.is_some() {
            self.chans[other].senders += 1;
        }
        // Every ready operation is a possible pick.
        let mut picks = Vec::new();
        let ready_recv = |m: &Model, c: usize| {
            let chan = &m.chans[c];
            !chan.buffer.is_empty()
                || m.first_claimable(&chan.send_waiters).is_some()
                || chan.senders == 0
        };
        if ready_recv(&self, recv) {
            picks.push(0);
        }
        let other_ready = match send {
            Some(_) => {
                let chan = &self.chans[other];
                self.first_claimable(&chan.recv_waiters).is_some()
                    || chan.cap.is_none_or(|cap| chan.buffer.len() < cap)
                    || !self.has_receiver(other)
            }
            None => ready_recv(&self, other),
        };
        if other_ready {
            picks.push(1);
        }
        if !picks.is_empty() {
            return Ok(picks
                .into_iter()
                .map(|index| {
                    let mut m = self.clone();
                    let c = if index == 0 { recv } else { other };
                    let picked = match (index, send) {
                        (1, Some(v)) => match m.try_send(c, v) {
                            Ok(()) => Picked::Sent,
                            Err(_) => Picked::Disconnected,
                        },
                        _ => match m.try_recv(c) {
                            Ok(v) => Picked::Got(v),
                            Err(_) => Picked::Disconnected,
                        },
                    };
                    if send.is_some() {
                        m.drop_sender(other);
                    }
                    m.threads[me].expect = Some(Seen::Selected(index, picked));
                    m
                })
                .collect());
        }
        let wait = Wait::Select {
            recv,
            other,
            send,
            token: None,
        };
        if self.unwinds_now(me) {
            self.threads[me].wait = wait;
            self.deliver(me, wait)?;
            return Ok(vec![self]);
        }
        if self.pending(me) {
            self.threads[me].owed = true;
        }
        self.chans[recv].recv_waiters.push_back(me);
        match send {
            Some(_) => self.chans[other].send_waiters.push_back(me),
            None => self.chans[other].recv_waiters.push_back(me),
        }
        self.threads[me].wait = wait;
        self.stop(me, Run::Parked);
        self.check_deadlock();
        Ok(vec![self])
    }

    /// A select is over: its waiters leave the queues. (Its clones go after,
    /// in `drop_clones_of`.)
    fn leave_select(&mut self, t: usize, recv: usize, other: usize) {
        for c in [recv, other] {
            self.chans[c].recv_waiters.retain(|&w| w != t);
            self.chans[c].send_waiters.retain(|&w| w != t);
        }
    }

    // ---- channels -------------------------------------------------------

    fn claimable(&self, t: usize) -> bool {
        !matches!(self.threads[t].wait, Wait::Select { token: Some(_), .. })
    }

    fn first_claimable(&self, list: &VecDeque<usize>) -> Option<usize> {
        list.iter().copied().find(|&t| self.claimable(t))
    }

    /// Pops the first waiter that can still be taken (a select's that has
    /// its operation already leaves the queue).
    fn pop_claimed(&mut self, c: usize, send_side: bool) -> Option<usize> {
        loop {
            let chan = &mut self.chans[c];
            let list = if send_side {
                &mut chan.send_waiters
            } else {
                &mut chan.recv_waiters
            };
            let t = list.pop_front()?;
            if self.claimable(t) {
                return Some(t);
            }
        }
    }

    /// Completes waiter `t` of channel `c` with `how`.
    fn complete(&mut self, t: usize, c: usize, how: Picked) {
        match &mut self.threads[t].wait {
            Wait::Recv { status, .. } => {
                *status = match how {
                    Picked::Got(v) => Status::Done(v),
                    _ => Status::Disconnected,
                }
            }
            Wait::Send { status, .. } => {
                *status = match how {
                    Picked::Disconnected => Status::Disconnected,
                    _ => Status::Done(0),
                }
            }
            // `recv` and `other` differ: the channel names the operation.
            Wait::Select { recv, token, .. } => *token = Some((usize::from(*recv != c), how)),
            wait => unreachable!("a channel waiter in {wait:?}"),
        }
        self.wake(t);
    }

    /// The message of waiting sender `t`.
    fn message(&self, t: usize) -> u32 {
        match self.threads[t].wait {
            Wait::Send { v, .. } => v,
            Wait::Select { send: Some(v), .. } => v,
            wait => unreachable!("a sender in {wait:?}"),
        }
    }

    /// Sends without waiting, or `Seen::Disconnected` / `Seen::Full`.
    fn try_send(&mut self, c: usize, v: u32) -> Result<(), Seen> {
        if !self.has_receiver(c) {
            return Err(Seen::Disconnected);
        }
        if let Some(t) = self.pop_claimed(c, false) {
            self.complete(t, c, Picked::Got(v));
            return Ok(());
        }
        let chan = &mut self.chans[c];
        if chan.cap.is_none_or(|cap| chan.buffer.len() < cap) {
            chan.buffer.push_back(v);
            return Ok(());
        }
        Err(Seen::Full)
    }

    /// Whether channel `c` has a receiver: the shared one, or the clone that
    /// a receive in flight (parked, or woken and not yet run) holds.
    fn has_receiver(&self, c: usize) -> bool {
        let receives = |t: &Thread| match t.wait {
            Wait::Recv { c: on, .. } => on == c,
            Wait::Select {
                recv, other, send, ..
            } => recv == c || send.is_none() && other == c,
            _ => false,
        };
        self.chans[c].shared_receiver || self.threads.iter().any(receives)
    }

    /// A receiver of `c` is gone: if it was the last, the waiting senders
    /// are told, and the messages left are dropped.
    fn drop_receiver(&mut self, c: usize) {
        if self.has_receiver(c) {
            return;
        }
        while let Some(t) = self.pop_claimed(c, true) {
            self.complete(t, c, Picked::Disconnected);
        }
        self.chans[c].buffer.clear();
    }

    /// The clones of the channels' ends that `wait` held are gone, in the
    /// order the harness drops them: a select's receivers, then its sender
    /// (locals go in reverse order of declaration). The order shows when both
    /// were the last: the receiver's senders, waiting in another select, are
    /// told first.
    fn drop_clones_of(&mut self, wait: Wait) {
        match wait {
            Wait::Recv { c, .. } => self.drop_receiver(c),
            Wait::Select {
                recv, other, send, ..
            } => {
                if send.is_none() {
                    self.drop_receiver(other);
                }
                self.drop_receiver(recv);
                if send.is_some() {
                    self.drop_sender(other);
                }
            }
            _ => {}
        }
    }

    /// A message, or `Seen::Empty` / `Seen::Disconnected`.
    fn try_recv(&mut self, c: usize) -> Result<u32, Seen> {
        if let Some(v) = self.chans[c].buffer.pop_front() {
            let chan = &self.chans[c];
            if chan.cap.is_some_and(|cap| chan.buffer.len() < cap)
                && let Some(t) = self.pop_claimed(c, true)
            {
                let next = self.message(t);
                self.complete(t, c, Picked::Sent);
                self.chans[c].buffer.push_back(next);
            }
            return Ok(v);
        }
        if let Some(t) = self.pop_claimed(c, true) {
            let v = self.message(t);
            self.complete(t, c, Picked::Sent);
            return Ok(v);
        }
        if self.chans[c].senders == 0 {
            Err(Seen::Disconnected)
        } else {
            Err(Seen::Empty)
        }
    }

    fn give_back(&mut self, c: usize, v: u32) {
        match self.pop_claimed(c, false) {
            Some(t) => self.complete(t, c, Picked::Got(v)),
            None => self.chans[c].buffer.push_front(v),
        }
    }

    fn drop_sender(&mut self, c: usize) {
        self.chans[c].senders -= 1;
        if self.chans[c].senders == 0 {
            while let Some(t) = self.pop_claimed(c, false) {
                self.complete(t, c, Picked::Disconnected);
            }
        }
    }

    // ---- mutex and condvar ----------------------------------------------

    fn release(&mut self) {
        match self.mutex_waiters.pop_front() {
            Some(t) => {
                match &mut self.threads[t].wait {
                    Wait::Lock { granted } | Wait::Relock { granted } => *granted = true,
                    wait => unreachable!("a mutex waiter in {wait:?}"),
                }
                self.wake(t);
            }
            None => self.locked = false,
        }
    }

    fn notify_one(&mut self) {
        if let Some(t) = self.cv_waiters.pop_front() {
            self.threads[t].wait = Wait::Condvar { notified: true };
            self.wake(t);
        }
    }
}
