//! The model-based test of the runtime, shared by `tests/runtime_model.rs`
//! (seeded programs) and the `runtime_model` fuzz target (programs decoded
//! from the fuzzer's bytes).
//!
//! # How it works
//!
//! `fibra::run` starts a program of [`THREADS`] green threads (the first one
//! spawns the others). Each is an interpreter: it asks the harness for its
//! next [`Op`], runs it on real fibra objects shared by all — three channels
//! (unbounded, bounded(1), rendezvous), a `Select`, a `Mutex` and its
//! `Condvar`, the threads' `JoinHandle`s, `time::timeout` (whose work is an
//! interpreter too, with a thread number of its own, run on the caller's
//! green thread), a `TcpListener` and a `TcpStream` that a client OS
//! thread connects to and writes on — and reports what it saw ([`Seen`]).
//! Values it keeps (a mutex guard, a value whose destructor sleeps) report
//! from their destructors too, and so does the end of each thread's body, so
//! that every point where a green thread runs again after a wait is seen.
//!
//! The model assumes the run queue the scheduler has: FIFO, a woken,
//! spawned or yielding thread at its back (`yield_now`'s docs say so for a
//! yield). A scheduler that orders them otherwise needs the model changed.
//!
//! The harness holds the reference model of `model.rs` (its docs say what
//! it predicts and how it copes with timers): it checks that the thread that
//! reports is one that may run now, compares each outcome with the model's,
//! chooses each operation among those the model allows, and at the end
//! compares how `run` ended (returned, or panicked with "deadlock"). A
//! difference aborts the process with the program's label (its seed), the
//! difference and the steps that led there: the failure may be seen inside a
//! green thread or a destructor, where a panic would be taken for the
//! program's own.
//!
//! A hang (a lost wake-up) is reported by a watchdog OS thread after
//! [`HANG`] without a step.

#[path = "../support/draws.rs"]
mod draws;
mod model;

use draws::Draws;
pub use model::Features;
use model::{LIMIT, MAIN, Model, Op, Outcome, Phase, Picked, SHORT, Seen, THREADS, each};

use fibra::net::{TcpListener, TcpStream};
use fibra::runtime::{JoinError, JoinHandle};
use fibra::sync::channel::{
    self, Receiver, RecvTimeoutError, Select, SendTimeoutError, Sender, TryRecvError, TrySendError,
};
use fibra::sync::{Condvar, Mutex, MutexGuard};
use std::any::Any;
use std::cell::{OnceCell, RefCell};
use std::io::{Read as _, Write as _};
use std::net::SocketAddr;
use std::panic::{self, AssertUnwindSafe};
use std::rc::Rc;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{Once, mpsc};
use std::time::{Duration, Instant};

/// How long the watchdog waits for a step before it calls the run a hang.
pub const HANG: Duration = Duration::from_secs(30);
/// Values sent and panic tags are drawn below this.
const VALUES: u32 = 100;

/// Where operations come from: a seeded generator or the fuzzer's bytes. Once
/// it runs out (steps or bytes) the program winds down: the spawned threads
/// return, and the first joins them and returns.
pub struct Choices {
    draws: Draws,
}

impl Choices {
    /// `steps` operations chosen by a splitmix64 generator from `seed`.
    pub fn seeded(seed: u64, steps: u32) -> Choices {
        Choices {
            draws: Draws::seeded(seed, steps),
        }
    }

    /// Operations chosen by `bytes`, one byte a choice.
    pub fn from_bytes(bytes: &[u8]) -> Choices {
        Choices {
            draws: Draws::from_bytes(bytes),
        }
    }

    fn below(&mut self, n: usize) -> usize {
        self.draws.below(n)
    }

    fn winding_down(&self) -> bool {
        self.draws.used_up()
    }

    /// One of `allowed` (groups of operations listed with values 0: a group,
    /// then one of its operations), with its value drawn.
    fn pick(&mut self, allowed: &[Vec<Op>]) -> Op {
        self.draws.step();
        let group = &allowed[self.below(allowed.len())];
        let op = group[self.below(group.len())];
        let value = self.below(VALUES as usize) as u32;
        match op {
            Op::Send(c, _) => Op::Send(c, value),
            Op::TrySend(c, _) => Op::TrySend(c, value),
            Op::SendTimeout(c, _) => Op::SendTimeout(c, value),
            Op::Select(r, o, Some(_)) => Op::Select(r, o, Some(value)),
            Op::Panic(_) => Op::Panic(value),
            Op::Return(_) => Op::Return(value),
            op => op,
        }
    }
}

/// The harness of one program (module docs).
struct Harness {
    /// The models the outcomes so far agree with (module docs of `model.rs`).
    models: Vec<Model>,
    choices: Choices,
    features: Features,
    label: String,
    log: Vec<String>,
    trace: bool,
}

thread_local! {
    static HARNESS: RefCell<Option<Harness>> = const { RefCell::new(None) };
}

/// Steps taken by any program: the watchdog's measure of progress.
static PROGRESS: AtomicU64 = AtomicU64::new(0);
/// The label of the program that runs, for the watchdog.
static LABEL: std::sync::Mutex<String> = std::sync::Mutex::new(String::new());

impl Harness {
    fn note(&mut self, line: String) {
        if self.trace {
            let _ = writeln!(std::io::stderr(), "{line}");
        }
        self.log.push(line);
    }

    fn fail(&self, why: &str) -> ! {
        let models: Vec<String> = self.models.iter().map(|m| format!("{m:?}")).collect();
        let _ = writeln!(
            std::io::stderr(),
            "runtime model: {}: {why}\nmodels: {models:#?}\nthe program so far (thread: operation, -> outcome):\n{}",
            self.label,
            self.log.join("\n")
        );
        std::process::abort();
    }

    /// Runs `f` on each model that is still running; keeps what it returns.
    /// Models of a run that ended (or deadlocked) stay as they are: what
    /// threads do while `run` cancels them is not compared.
    fn advance(&mut self, mut f: impl FnMut(Model) -> Result<Vec<Model>, String>) -> bool {
        let (running, stopped): (Vec<Model>, Vec<Model>) = std::mem::take(&mut self.models)
            .into_iter()
            .partition(|m| m.phase == Phase::Running);
        let before = running.clone();
        let mut errors = Vec::new();
        let mut kept = Vec::new();
        for model in running {
            match f(model) {
                Ok(models) => kept.extend(models),
                Err(why) => errors.push(why),
            }
        }
        let agreed = !kept.is_empty();
        if !agreed && stopped.is_empty() {
            self.models = before;
            self.fail(&errors.join("; or "));
        }
        if !agreed {
            self.models = stopped;
        } else {
            kept.extend(stopped);
            self.models = kept;
        }
        agreed
    }

    fn step(&mut self, me: usize) -> Op {
        PROGRESS.fetch_add(1, Relaxed);
        let now = Instant::now();
        let arrived = self.advance(|m| {
            let models = m.arrive(me, now)?;
            each(models, |m| m.ready_for_op(me).map(|()| vec![m]))
        });
        if !arrived {
            // The run is over: threads that still start just end.
            self.note(format!("{me}: (run over) Return"));
            return Op::Return(0);
        }
        let winding_down = self.choices.winding_down();
        let allowed = self.models[0].allowed(me, winding_down, &self.features);
        let op = self.choices.pick(&allowed);
        self.note(format!("{me}: {op:?}"));
        self.advance(|m| m.apply(me, op, now));
        op
    }

    fn report(&mut self, me: usize, seen: Seen) {
        PROGRESS.fetch_add(1, Relaxed);
        let now = Instant::now();
        self.note(format!("{me}: -> {seen:?}"));
        self.advance(|m| {
            let models = m.arrive(me, now)?;
            each(models, |m| m.report(me, seen, now))
        });
    }

    /// Compares how `run` ended with the models.
    fn finish(&self, ended: Result<u32, Box<dyn Any + Send>>) {
        let wanted = match &ended {
            Ok(_) => Phase::Ended,
            Err(payload) => {
                let message = payload
                    .downcast_ref::<String>()
                    .map(String::as_str)
                    .or_else(|| payload.downcast_ref::<&str>().copied())
                    .unwrap_or("");
                if !message.contains("deadlock") {
                    self.fail(&format!("run panicked: {message:?}"));
                }
                Phase::Deadlock
            }
        };
        if self.trace {
            let _ = writeln!(std::io::stderr(), "{}: run ended: {wanted:?}", self.label);
        }
        if !self.models.iter().any(|m| m.phase == wanted) {
            self.fail(&format!("run ended as {wanted:?}, which no model predicts"));
        }
    }
}

fn with<R>(f: impl FnOnce(&mut Harness) -> R) -> R {
    HARNESS.with(|h| f(h.borrow_mut().as_mut().expect("a program runs")))
}

fn report(me: usize, seen: Seen) {
    with(|h| h.report(me, seen));
}

/// A panic of the program, with its tag.
struct Tag(u32);

/// Reports the end of a thread's body: the last of its values dropped.
struct EndReport(usize);

impl Drop for EndReport {
    fn drop(&mut self) {
        report(self.0, Seen::End);
    }
}

/// A value whose destructor waits: it sleeps.
struct SleepOnDrop(usize);

impl Drop for SleepOnDrop {
    fn drop(&mut self) {
        report(self.0, Seen::DtorSleep);
        fibra::time::sleep(SHORT);
        report(self.0, Seen::Slept);
    }
}

enum Value {
    Guard(MutexGuard<'static, ()>),
    #[allow(dead_code)] // held for its destructor
    Sleeper(SleepOnDrop),
}

/// The fibra objects the threads share.
struct World {
    senders: RefCell<Vec<Option<Sender<u32>>>>,
    receivers: RefCell<Vec<Option<Receiver<u32>>>>,
    /// Leaked (a few bytes a program), so that guards can be kept anywhere.
    mutex: &'static Mutex<()>,
    condvar: Condvar,
    handles: RefCell<Vec<Option<JoinHandle<u32>>>>,
    /// A listener, its address, and the server side of a connection from
    /// the client OS thread.
    socket: Option<(TcpListener, SocketAddr, TcpStream)>,
}

impl World {
    fn socket(&self) -> &(TcpListener, SocketAddr, TcpStream) {
        self.socket.as_ref().expect("a socket")
    }

    fn sender(&self, c: usize) -> Sender<u32> {
        self.senders.borrow()[c].clone().expect("a sender")
    }

    /// A clone of the shared receiver: the channel has a receiver while an
    /// operation holds one, even if the shared one is dropped meanwhile.
    fn receiver(&self, c: usize) -> Receiver<u32> {
        self.receivers.borrow()[c].clone().expect("a receiver")
    }
}

fn outcome(joined: Result<u32, JoinError>) -> Outcome {
    match joined {
        Ok(v) => Outcome::Value(v),
        Err(JoinError::Cancelled) => Outcome::Cancelled,
        Err(JoinError::Panicked(payload)) => match payload.downcast_ref::<Tag>() {
            Some(tag) => Outcome::Panicked(tag.0),
            None => Outcome::Panicked(u32::MAX),
        },
    }
}

/// What the client OS thread is asked to do.
enum Ask {
    /// Connect to the listener, and hang up.
    Connect(SocketAddr),
    /// Connect to the listener, and keep the stream for `Write`s.
    Open(SocketAddr),
    /// Write a byte on the stream kept.
    Write,
}

/// Asks the client OS thread of this test thread (started on first use; the
/// tests run in parallel, and each program has its stream) to do `ask`, and
/// waits until it has: an ask left over from a program that ended may
/// otherwise connect to the next program's listener (the port may be the
/// same again) and be taken for its client's connection.
fn client(ask: Ask) {
    thread_local! {
        static CLIENT: OnceCell<(mpsc::Sender<Ask>, mpsc::Receiver<()>)> = const { OnceCell::new() };
    }
    CLIENT.with(|client| {
        let (asks, done) = client.get_or_init(|| {
            let (tx, rx) = mpsc::channel::<Ask>();
            let (done_tx, done_rx) = mpsc::channel();
            std::thread::spawn(move || {
                let mut kept = None;
                // Errors are left to the program to see (its accept or read
                // waits on).
                for ask in rx {
                    // The kernel completes the handshake; accept finds it queued.
                    match ask {
                        Ask::Connect(addr) => drop(std::net::TcpStream::connect(addr)),
                        Ask::Open(addr) => kept = std::net::TcpStream::connect(addr).ok(),
                        Ask::Write => {
                            if let Some(stream) = &mut kept {
                                let _ = stream.write_all(&[1]);
                            }
                        }
                    }
                    let _ = done_tx.send(());
                }
            });
            (tx, done_rx)
        });
        asks.send(ask).unwrap();
        done.recv().unwrap();
    });
}

/// A thread's body: the interpreter.
fn body(world: &Rc<World>, me: usize, _end: EndReport) -> u32 {
    let mut held: Vec<Option<Value>> = Vec::new();
    loop {
        let op = with(|h| h.step(me));
        let seen = match op {
            Op::Yield => {
                fibra::runtime::yield_now();
                Seen::Done
            }
            Op::Send(c, v) => {
                let tx = world.sender(c);
                match tx.send(v) {
                    Ok(()) => Seen::Done,
                    Err(_) => Seen::Disconnected,
                }
            }
            Op::SendTimeout(c, v) => match world.sender(c).send_timeout(v, SHORT) {
                Ok(()) => Seen::Done,
                Err(SendTimeoutError::Timeout(_)) => Seen::TimedOut,
                Err(SendTimeoutError::Disconnected(_)) => Seen::Disconnected,
            },
            Op::TrySend(c, v) => match world.sender(c).try_send(v) {
                Ok(()) => Seen::Done,
                Err(TrySendError::Full(_)) => Seen::Full,
                Err(TrySendError::Disconnected(_)) => Seen::Disconnected,
            },
            Op::Recv(c) => world
                .receiver(c)
                .recv()
                .map_or(Seen::Disconnected, Seen::Got),
            Op::TryRecv(c) => match world.receiver(c).try_recv() {
                Ok(v) => Seen::Got(v),
                Err(TryRecvError::Empty) => Seen::Empty,
                Err(TryRecvError::Disconnected) => Seen::Disconnected,
            },
            Op::RecvTimeout(c) => match world.receiver(c).recv_timeout(SHORT) {
                Ok(v) => Seen::Got(v),
                Err(RecvTimeoutError::Timeout) => Seen::TimedOut,
                Err(RecvTimeoutError::Disconnected) => Seen::Disconnected,
            },
            Op::Close(c) => {
                world.senders.borrow_mut()[c] = None;
                Seen::Done
            }
            Op::DropReceiver(c) => {
                world.receivers.borrow_mut()[c] = None;
                Seen::Done
            }
            Op::Select(recv, other, send) => select(world, recv, other, send),
            Op::Lock => {
                held.push(Some(Value::Guard(world.mutex.lock())));
                Seen::Locked
            }
            Op::TryLock => match world.mutex.try_lock() {
                Some(guard) => {
                    held.push(Some(Value::Guard(guard)));
                    Seen::Locked
                }
                None => Seen::Busy,
            },
            Op::Unlock => {
                held.remove(guard_at(&held));
                Seen::Done
            }
            Op::Wait => {
                let at = guard_at(&held);
                let Some(Value::Guard(guard)) = held[at].take() else {
                    unreachable!("a guard")
                };
                held[at] = Some(Value::Guard(world.condvar.wait(guard)));
                Seen::Woken
            }
            Op::NotifyOne => {
                world.condvar.notify_one();
                Seen::Done
            }
            Op::NotifyAll => {
                world.condvar.notify_all();
                Seen::Done
            }
            Op::Sleep => {
                fibra::time::sleep(SHORT);
                Seen::Slept
            }
            Op::HoldSleeper => {
                held.push(Some(Value::Sleeper(SleepOnDrop(me))));
                Seen::Done
            }
            Op::Join(t) => {
                let handle = world.handles.borrow_mut()[t].take().expect("a handle");
                Seen::Joined(outcome(handle.join()))
            }
            Op::Cancel(t) => {
                world.handles.borrow()[t]
                    .as_ref()
                    .expect("a handle")
                    .cancel();
                Seen::Done
            }
            Op::Panic(tag) => panic::panic_any(Tag(tag)),
            Op::Connect => {
                client(Ask::Connect(world.socket().1));
                Seen::Done
            }
            Op::Accept => match world.socket().0.accept() {
                Ok(_) => Seen::Accepted,
                Err(_) => Seen::Empty,
            },
            Op::Write => {
                client(Ask::Write);
                Seen::Done
            }
            Op::Read => match (&world.socket().2).read(&mut [0]) {
                Ok(1) => Seen::Read,
                _ => Seen::Empty,
            },
            Op::Timeout(_, work, zero) => {
                let limit = if zero { Duration::ZERO } else { LIMIT };
                match fibra::time::timeout(limit, || body(world, work, EndReport(work))) {
                    Ok(_) => Seen::InTime,
                    Err(_) => Seen::Elapsed,
                }
            }
            Op::Return(v) => return v,
        };
        report(me, seen);
    }
}

fn guard_at(held: &[Option<Value>]) -> usize {
    held.iter()
        .position(|v| matches!(v, Some(Value::Guard(_))))
        .expect("a guard")
}

fn select(world: &World, recv: usize, other: usize, send: Option<u32>) -> Seen {
    let tx = send.map(|_| world.sender(other));
    let rx = world.receiver(recv);
    let other_rx = send.is_none().then(|| world.receiver(other));
    let mut sel = Select::new();
    sel.recv(&rx);
    match (&tx, send, &other_rx) {
        (Some(tx), Some(v), _) => sel.send(tx, v),
        (_, _, Some(other_rx)) => sel.recv(other_rx),
        _ => unreachable!("a send or a second receive"),
    };
    let op = sel.wait();
    let index = op.index();
    let picked = match (index, &tx, &other_rx) {
        (0, _, _) => op.recv(&rx).map_or(Picked::Disconnected, Picked::Got),
        (_, Some(tx), _) => op.send(tx).map_or(Picked::Disconnected, |()| Picked::Sent),
        (_, None, Some(other_rx)) => op.recv(other_rx).map_or(Picked::Disconnected, Picked::Got),
        (_, None, None) => unreachable!("a second receive"),
    };
    Seen::Selected(index, picked)
}

/// Silences the program's own panics (tags, and `run`'s deadlock report);
/// others print as usual. Starts the watchdog.
fn install() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let default = panic::take_hook();
        panic::set_hook(Box::new(move |info| {
            let payload = info.payload();
            let deadlock = payload
                .downcast_ref::<String>()
                .is_some_and(|m| m.contains("deadlock"));
            if payload.downcast_ref::<Tag>().is_none() && !deadlock {
                let label = LABEL.lock().map(|l| l.clone()).unwrap_or_default();
                let _ = writeln!(std::io::stderr(), "runtime model: a panic in {label}:");
                default(info);
            }
        }));
        std::thread::spawn(|| {
            let mut last = PROGRESS.load(Relaxed);
            let mut since = Instant::now();
            loop {
                std::thread::sleep(Duration::from_millis(500));
                let now = PROGRESS.load(Relaxed);
                if now != last {
                    (last, since) = (now, Instant::now());
                } else if since.elapsed() >= HANG && !LABEL.lock().unwrap().is_empty() {
                    let _ = writeln!(
                        std::io::stderr(),
                        "runtime model: {}: no step for {HANG:?}: a hang (a lost wake-up?); \
                         rerun it with FIBRA_MODEL_TRACE=1 to see its steps",
                        LABEL.lock().unwrap()
                    );
                    std::process::abort();
                }
            }
        });
    });
}

/// Runs one program chosen by `choices` and checks every step (module docs).
pub fn check(choices: Choices, features: Features, label: String) {
    install();
    *LABEL.lock().unwrap() = label.clone();
    PROGRESS.fetch_add(1, Relaxed);
    HARNESS.with(|h| {
        *h.borrow_mut() = Some(Harness {
            models: vec![Model::new()],
            choices,
            features,
            label,
            log: Vec::new(),
            trace: std::env::var_os("FIBRA_MODEL_TRACE").is_some(),
        })
    });
    let ended = panic::catch_unwind(AssertUnwindSafe(move || {
        fibra::run(move || {
            let (senders, receivers) = model::CAPS
                .iter()
                .map(|&cap| {
                    let (tx, rx) = match cap {
                        None => channel::unbounded(),
                        Some(0) => channel::rendezvous(),
                        Some(cap) => channel::bounded(cap),
                    };
                    (Some(tx), Some(rx))
                })
                .unzip();
            let socket = features.socket.then(|| {
                let listener = TcpListener::bind("127.0.0.1:0").expect("a listener");
                let addr = listener.local_addr().expect("its address");
                client(Ask::Open(addr));
                // Before the program starts: the model does not see this park.
                let (stream, _) = listener.accept().expect("the client's connection");
                (listener, addr, stream)
            });
            let world = Rc::new(World {
                senders: RefCell::new(senders),
                receivers: RefCell::new(receivers),
                mutex: leak_mutex(),
                condvar: Condvar::new(),
                handles: RefCell::new((0..THREADS).map(|_| None).collect()),
                socket,
            });
            for t in 1..THREADS {
                let shared = world.clone();
                // Made here, so that a thread cancelled before it starts,
                // whose closure is dropped unrun, reports its end too.
                let end = EndReport(t);
                let handle = fibra::spawn(move || body(&shared, t, end));
                world.handles.borrow_mut()[t] = Some(handle);
            }
            body(&world, MAIN, EndReport(MAIN))
        })
    }));
    let harness = HARNESS
        .with(|h| h.borrow_mut().take())
        .expect("a program ran");
    harness.finish(ended);
    LABEL.lock().unwrap().clear();
}

/// The program's mutex, leaked so that its guards are `'static` (a thread
/// holds them across operations). Each address is also kept here, so that
/// valgrind counts the mutexes as still reachable, not as lost.
fn leak_mutex() -> &'static Mutex<()> {
    static LEAKED: std::sync::Mutex<Vec<usize>> = std::sync::Mutex::new(Vec::new());
    let mutex: &'static Mutex<()> = Box::leak(Box::new(Mutex::new(())));
    let address = mutex as *const Mutex<()> as usize;
    LEAKED
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .push(address);
    mutex
}

/// Every feature: the default.
pub const DEFAULT: Features = Features {
    channels: true,
    recv_timeout: true,
    select: true,
    mutex: true,
    condvar: true,
    sleep: true,
    join: true,
    cancel: true,
    panic: true,
    socket: true,
    timeout: true,
    cancel_while_panicking: true,
};

/// The operations programs use: what `FIBRA_MODEL_FEATURES` names (`all`,
/// or a comma-separated list of [`Features`] fields), else [`DEFAULT`]
/// (all).
pub fn features() -> Features {
    let Ok(names) = std::env::var("FIBRA_MODEL_FEATURES") else {
        return DEFAULT;
    };
    if names.trim() == "all" {
        return DEFAULT;
    }
    let mut on = Features::default();
    for name in names.split(',').map(str::trim).filter(|n| !n.is_empty()) {
        let switch = match name {
            "channels" => &mut on.channels,
            "recv_timeout" => &mut on.recv_timeout,
            "select" => &mut on.select,
            "mutex" => &mut on.mutex,
            "condvar" => &mut on.condvar,
            "sleep" => &mut on.sleep,
            "join" => &mut on.join,
            "cancel" => &mut on.cancel,
            "panic" => &mut on.panic,
            "socket" => &mut on.socket,
            "timeout" => &mut on.timeout,
            "cancel_while_panicking" => &mut on.cancel_while_panicking,
            _ => panic!("FIBRA_MODEL_FEATURES: no feature {name:?}"),
        };
        *switch = true;
    }
    on
}

/// The longest program a fuzz input makes, in bytes (two a step: the
/// operation and its value); the rest of a longer input is ignored.
pub const MAX_INPUT: usize = 256;

/// The fuzz target's entry: the bytes choose the operations, among the
/// [`features`] on.
pub fn check_from_bytes(bytes: &[u8]) {
    let bytes = &bytes[..bytes.len().min(MAX_INPUT)];
    check(
        Choices::from_bytes(bytes),
        features(),
        format!("fuzz input {bytes:02x?}"),
    );
}
