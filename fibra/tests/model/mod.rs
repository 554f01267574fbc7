//! The model-based test of the fiber state machine, shared by
//! `tests/fiber_model.rs` (seeded sequences and hand-written ones) and the
//! `fiber_model` fuzz target (sequences decoded from the fuzzer's bytes).
//!
//! # How it works
//!
//! A handful of real `Fiber<u32, u32, u32>` live in shared slots, so that they
//! can reach one another. Their bodies are interpreters: whenever a fiber runs,
//! it asks the [`Harness`] for its next [`Op`] and runs it in its own context
//! (suspend, transfer, a nested resume, return, panic, hold a value whose `Drop`
//! counts or switches, drop or make another fiber). The driver — the test's own
//! context — does the same with the operations a resumer has. The harness holds
//! a [`Model`]: the state machine of the table "Every operation in every state"
//! in `fibra::fiber`'s docs, written out in plain Rust. The model
//!
//! - chooses each operation, among those the context that asks may run (it
//!   knows which context runs: a request from any other is a failure), and only
//!   operations whose documented outcome is not a process abort;
//! - predicts what each context will see next ([`Seen`]): the value a `suspend`
//!   or `transfer` returns, a `resume`'s `Step` or `FiberError`, a panic that
//!   reaches a resumer or a dropper, a status;
//! - counts the drops of the values that live on each fiber's stack, and the
//!   handles of each fiber (its slot, and the clones held by calls in flight),
//!   so that a drop is generated only where it drops the last handle.
//!
//! Every step compares the real outcome with the prediction. A difference aborts
//! the process with the sequence's label (its seed), the difference and the
//! steps that led there: the failure may be seen deep inside a fiber, where a
//! panic would be taken for one of the sequence's own.

#[path = "../support/draws.rs"]
mod draws;

use draws::Draws;
use fibra::fiber::Status;
use fibra::{Fiber, FiberError, Generator, Step, Yielder};
use std::any::Any;
use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::fmt::Write as _;
use std::panic::{self, AssertUnwindSafe};
use std::rc::Rc;
use std::sync::Once;

/// How many fibers a sequence has (slots; a dropped fiber's slot may get a new one).
pub const FIBERS: usize = 3;
/// The context number of the driver; fibers are `0..FIBERS`.
pub const DRIVER: usize = FIBERS;
/// At most this many held values per fiber: enough for orders of drops and
/// switches to vary, few enough that unwinds stay short.
const MAX_HELD: usize = 3;
/// Values sent and panic tags are drawn below this.
const VALUES: u32 = 100;

type Real = Fiber<u32, u32, u32>;

/// One operation, run by the context that the model says is running. Values
/// (`u32`) are what is sent, suspended, returned, or a panic's tag.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// `resume` the fiber in this slot.
    Resume(usize, u32),
    /// Drop the last handle of the fiber in this slot.
    Drop(usize),
    /// Compare the fiber's `status()` with the model's.
    Status(usize),
    /// Put a new fiber in this (empty) slot.
    Create(usize),
    /// `suspend` the running fiber; with `true`, inside a `catch_unwind` that
    /// catches the forced unwind of a drop.
    Suspend(u32, bool),
    /// `transfer` to the fiber in this slot; with `true`, inside a `catch_unwind`.
    Transfer(usize, u32, bool),
    /// Return from the fiber's body.
    Return(u32),
    /// Panic with this tag.
    Panic(u32),
    /// Keep a value on the fiber's stack until it returns or unwinds.
    Hold(Held),
    /// What a [`Held::Switcher`]'s destructor may choose: do nothing.
    Skip,
    /// What the driver chooses when every fiber is gone: the sequence ends.
    Finish,
}

impl Op {
    /// The same operation carrying `value` (the model lists operations with 0).
    fn with_value(self, value: u32) -> Op {
        match self {
            Op::Resume(t, _) => Op::Resume(t, value),
            Op::Suspend(_, catch) => Op::Suspend(value, catch),
            Op::Transfer(t, _, catch) => Op::Transfer(t, value, catch),
            Op::Return(_) => Op::Return(value),
            Op::Panic(_) => Op::Panic(value),
            op => op,
        }
    }
}

/// A value a fiber keeps on its stack.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Held {
    /// Its `Drop` counts, per fiber slot.
    Counter,
    /// Its `Drop` runs one more operation (a transfer, a resume, a drop, a
    /// status, or nothing) wherever it is dropped: at a return, during a panic,
    /// during the forced unwind of a drop. The operation runs inside
    /// `catch_unwind`, as a destructor that may be run during unwinding must.
    Switcher,
}

/// What a context sees when an operation it ran completes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Seen {
    /// The body started with this value, or its `suspend`/`transfer` returned it.
    Got(u32),
    /// A `catch_unwind` around `suspend`/`transfer` caught a drop's forced unwind.
    Caught,
    /// `resume` returned `Ok(Step::Yield)`.
    Yield(u32),
    /// `resume` returned `Ok(Step::Return)`.
    Return(u32),
    /// `resume` or `transfer` returned this error.
    Err(FiberError),
    /// A panic with this tag reached the context, out of a `resume` or a drop.
    Panic(u32),
    /// A drop returned.
    Dropped,
    /// `status()` returned this.
    Status(Status),
    /// An operation without an outcome of its own (create, hold, skip) ran.
    Done,
}

/// Where operations come from: a seeded generator, the fuzzer's bytes, or a
/// hand-written script. Each source runs out — steps, bytes or script — and
/// then the sequence winds down: fibers return, and the driver drops them all.
pub struct Choices {
    source: Source,
}

enum Source {
    Drawn(Draws),
    Script(VecDeque<Op>),
}

impl Choices {
    /// `steps` operations chosen by a splitmix64 generator from `seed`.
    pub fn seeded(seed: u64, steps: u32) -> Choices {
        Choices {
            source: Source::Drawn(Draws::seeded(seed, steps)),
        }
    }

    /// Operations chosen by `bytes`, one byte a choice.
    pub fn from_bytes(bytes: &[u8]) -> Choices {
        Choices {
            source: Source::Drawn(Draws::from_bytes(bytes)),
        }
    }

    /// Exactly these operations, in the order the contexts run them; the
    /// model checks that each is one it could have chosen.
    pub fn script(ops: impl IntoIterator<Item = Op>) -> Choices {
        Choices {
            source: Source::Script(ops.into_iter().collect()),
        }
    }

    /// A number below `n` (which is at least 1).
    fn below(&mut self, n: usize) -> usize {
        match &mut self.source {
            Source::Drawn(draws) => draws.below(n),
            Source::Script(_) => 0,
        }
    }

    fn value(&mut self) -> u32 {
        self.below(VALUES as usize) as u32
    }

    fn winding_down(&self) -> bool {
        match &self.source {
            Source::Drawn(draws) => draws.used_up(),
            Source::Script(ops) => ops.is_empty(),
        }
    }

    /// The next operation for a context that may run `allowed` (listed with
    /// value 0), or `None` when a script asks for one it may not.
    fn pick(&mut self, allowed: &[Op]) -> Result<Op, Op> {
        match &mut self.source {
            Source::Script(ops) if !ops.is_empty() => {
                let op = ops.pop_front().expect("not empty");
                let shape = op.with_value(0);
                return if allowed.contains(&shape) {
                    Ok(op)
                } else {
                    Err(op)
                };
            }
            Source::Drawn(draws) => draws.step(),
            Source::Script(_) => {}
        }
        let op = allowed[self.below(allowed.len())];
        Ok(op.with_value(self.value()))
    }
}

/// A fiber's state in the model: `Status`, with *being dropped* apart.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    Created,
    Suspended,
    Transferred,
    Running,
    Dropping,
    Dead,
}

/// What a context waits for while others run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Wait {
    Nothing,
    /// The end of the chain it started by resuming this fiber.
    Resume(usize),
    /// The end of this fiber, which it is dropping.
    Drop,
    /// A `resume` of itself (or a drop); `true`: the forced unwind is caught.
    Suspend(bool),
    /// A transfer back to itself (or a drop); it holds a handle of the target.
    Transfer(usize, bool),
}

/// How a chain came back to the context that resumed (or dropped) its first fiber.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Outcome {
    Yield(u32),
    Return(u32),
    Panic(u32),
    /// The dropped fiber ended by its forced unwind.
    Unwound,
}

#[derive(Clone, Debug)]
struct FiberModel {
    state: State,
    /// Who gets the chain's outcome, while it runs: the context that resumed
    /// (or dropped) the chain's first fiber.
    parent: usize,
    /// Whether its slot holds it.
    slot: bool,
    /// Its slot and the clones held by calls in flight.
    handles: u32,
    held: Vec<Held>,
    /// While its stack unwinds or its body returns: how it will end, and the
    /// next held value to drop (a `Vec` drops from the front).
    ending: Option<(Outcome, usize)>,
    /// A panic, forced or not, is unwinding its stack and has not been caught:
    /// what `std::thread::panicking()` sees, while it lasts, in every context.
    unwinding: bool,
    /// It runs the operation of a `Switcher`'s destructor.
    in_switcher: bool,
}

impl FiberModel {
    fn created() -> FiberModel {
        FiberModel {
            state: State::Created,
            parent: DRIVER,
            slot: true,
            handles: 1,
            held: Vec::new(),
            ending: None,
            unwinding: false,
            in_switcher: false,
        }
    }
}

/// The reference model (module docs).
pub struct Model {
    fibers: Vec<FiberModel>,
    current: usize,
    wait: [Wait; FIBERS + 1],
    expect: [Option<Seen>; FIBERS + 1],
    /// Expected drops of `Held::Counter`s, per slot.
    drops: [u32; FIBERS],
    /// Every operation and outcome so far, for the failure message.
    log: Vec<(usize, Result<Op, Seen>)>,
}

impl Model {
    fn new() -> Model {
        Model {
            fibers: vec![FiberModel::created(); FIBERS],
            current: DRIVER,
            wait: [Wait::Nothing; FIBERS + 1],
            expect: [None; FIBERS + 1],
            drops: [0; FIBERS],
            log: Vec::new(),
        }
    }

    fn panicking(&self) -> bool {
        self.fibers.iter().any(|f| f.unwinding)
    }

    /// The operations context `me` may run now, with values 0.
    fn allowed(&self, me: usize, winding_down: bool) -> Vec<Op> {
        let present: Vec<usize> = (0..FIBERS).filter(|&t| self.fibers[t].slot).collect();
        // Dropping a running fiber aborts (the table): not generated. Safe code
        // can reach it, though: see `dropping_a_running_fiber_aborts` in
        // `tests/fiber_model.rs`.
        let droppable = present
            .iter()
            .filter(|&&t| self.fibers[t].handles == 1 && self.fibers[t].state != State::Running);
        // A slot takes a new fiber once the last one is gone: dropped, and dead
        // (a fiber being dropped runs on while it unwinds).
        let free =
            (0..FIBERS).filter(|&t| !self.fibers[t].slot && self.fibers[t].state == State::Dead);
        let mut ops: Vec<Op> = Vec::new();
        if me == DRIVER {
            if winding_down {
                ops.extend(droppable.map(|&t| Op::Drop(t)));
                if present.is_empty() {
                    ops.push(Op::Finish);
                }
                return ops;
            }
            ops.extend(droppable.map(|&t| Op::Drop(t)));
            for &t in &present {
                ops.extend([Op::Resume(t, 0), Op::Status(t)]);
            }
            ops.extend(free.map(Op::Create));
            return ops;
        }
        let fiber = &self.fibers[me];
        if fiber.in_switcher {
            if !winding_down {
                ops.extend(droppable.map(|&t| Op::Drop(t)));
                for &t in &present {
                    ops.extend([Op::Resume(t, 0), Op::Transfer(t, 0, true), Op::Status(t)]);
                }
            }
            ops.push(Op::Skip);
            return ops;
        }
        ops.push(Op::Return(0));
        if winding_down {
            return ops;
        }
        ops.extend(droppable.map(|&t| Op::Drop(t)));
        for &t in &present {
            ops.extend([
                Op::Resume(t, 0),
                Op::Status(t),
                Op::Transfer(t, 0, false),
                Op::Transfer(t, 0, true),
            ]);
        }
        ops.extend(free.map(Op::Create));
        ops.push(Op::Panic(0));
        // A fiber being dropped that suspends unwinds again. fibra aborts
        // instead while any stack of the thread unwinds (it takes that for a
        // destructor that suspends during the forced unwind, the table's abort):
        // see `a_caught_drop_that_suspends_while_another_fiber_unwinds` in
        // `tests/fiber_model.rs`. Such suspends are not generated.
        if fiber.state == State::Running || !self.panicking() {
            ops.extend([Op::Suspend(0, false), Op::Suspend(0, true)]);
        }
        if fiber.held.len() < MAX_HELD {
            ops.extend([Op::Hold(Held::Counter), Op::Hold(Held::Switcher)]);
        }
        ops
    }

    /// Predicts what `op`, run by `me`, leads to: states, who runs next and
    /// what it will see.
    fn apply(&mut self, me: usize, op: Op) -> Result<(), String> {
        self.log.push((me, Ok(op)));
        match op {
            Op::Resume(t, value) => match self.fibers[t].state {
                State::Created | State::Suspended => {
                    self.fibers[t].handles += 1;
                    self.wait[me] = Wait::Resume(t);
                    self.enter(t, me, value);
                }
                State::Transferred => self.expect(me, Seen::Err(FiberError::Transferring)),
                State::Running | State::Dropping => self.expect(me, Seen::Err(FiberError::Running)),
                State::Dead => self.expect(me, Seen::Err(FiberError::Dead)),
            },
            Op::Transfer(to, value, catch) => {
                let refusal = match self.fibers[to].state {
                    _ if self.fibers[me].state == State::Dropping => Some(FiberError::Dropping),
                    State::Created | State::Transferred => None,
                    State::Suspended => Some(FiberError::Yielding),
                    State::Running | State::Dropping => Some(FiberError::Running),
                    State::Dead => Some(FiberError::Dead),
                };
                match refusal {
                    Some(error) => self.expect(me, Seen::Err(error)),
                    None => {
                        self.fibers[to].handles += 1;
                        self.fibers[me].state = State::Transferred;
                        self.wait[me] = Wait::Transfer(to, catch);
                        self.enter(to, self.fibers[me].parent, value);
                    }
                }
            }
            Op::Suspend(value, catch) => {
                if self.fibers[me].state == State::Dropping {
                    self.forced_unwind(me, catch);
                } else {
                    self.fibers[me].state = State::Suspended;
                    self.wait[me] = Wait::Suspend(catch);
                    self.deliver(self.fibers[me].parent, Outcome::Yield(value))?;
                }
            }
            Op::Return(value) => self.end(me, Outcome::Return(value))?,
            Op::Panic(tag) => {
                self.fibers[me].unwinding = true;
                self.end(me, Outcome::Panic(tag))?;
            }
            Op::Hold(held) => {
                self.fibers[me].held.push(held);
                self.expect(me, Seen::Done);
            }
            Op::Drop(t) => {
                let fiber = &mut self.fibers[t];
                fiber.slot = false;
                fiber.handles -= 1;
                match fiber.state {
                    State::Created | State::Dead => {
                        fiber.state = State::Dead;
                        self.expect(me, Seen::Dropped);
                    }
                    State::Suspended | State::Transferred => {
                        fiber.state = State::Dropping;
                        fiber.parent = me;
                        self.wait[me] = Wait::Drop;
                        self.current = t;
                        let catch = match std::mem::replace(&mut self.wait[t], Wait::Nothing) {
                            Wait::Suspend(catch) => catch,
                            Wait::Transfer(to, catch) => {
                                self.fibers[to].handles -= 1;
                                catch
                            }
                            wait => return Err(format!("model: fiber {t} suspended in {wait:?}")),
                        };
                        self.forced_unwind(t, catch);
                    }
                    State::Running | State::Dropping => {
                        return Err(format!("model: generated a drop of running fiber {t}"));
                    }
                }
            }
            Op::Status(t) => {
                let status = match self.fibers[t].state {
                    State::Created => Status::Created,
                    State::Suspended => Status::Suspended,
                    State::Transferred => Status::Transferred,
                    State::Running | State::Dropping => Status::Running,
                    State::Dead => Status::Dead,
                };
                self.expect(me, Seen::Status(status));
            }
            Op::Create(t) => {
                self.fibers[t] = FiberModel::created();
                self.expect(me, Seen::Done);
            }
            Op::Skip => self.expect(me, Seen::Done),
            Op::Finish => {}
        }
        Ok(())
    }

    fn expect(&mut self, context: usize, seen: Seen) {
        self.expect[context] = Some(seen);
    }

    /// Context `t` starts or continues, as the chain of `parent`, with `value`.
    fn enter(&mut self, t: usize, parent: usize, value: u32) {
        if let Wait::Transfer(to, _) = self.wait[t] {
            // The transfer returns, and lets go of its target's handle.
            self.fibers[to].handles -= 1;
        }
        self.wait[t] = Wait::Nothing;
        let fiber = &mut self.fibers[t];
        fiber.state = State::Running;
        fiber.parent = parent;
        self.current = t;
        self.expect(t, Seen::Got(value));
    }

    /// The forced unwind of a drop reaches `t`'s pending `suspend` or `transfer`.
    fn forced_unwind(&mut self, t: usize, caught: bool) {
        if caught {
            self.expect(t, Seen::Caught);
        } else {
            self.fibers[t].unwinding = true;
            // `end` fails only for a parent that waits on no chain; a dropper
            // waits on this one.
            self.end(t, Outcome::Unwound).expect("a dropper waits");
        }
    }

    /// `f`'s body ends (returns, panics, unwinds): its held values drop, front
    /// first, then it is dead and `outcome` reaches its parent.
    fn end(&mut self, f: usize, outcome: Outcome) -> Result<(), String> {
        self.fibers[f].ending = Some((outcome, 0));
        self.advance(f)
    }

    /// Drops `f`'s held values up to the next switcher, which will ask for an
    /// operation, or to the end of the list, when `f` dies.
    fn advance(&mut self, f: usize) -> Result<(), String> {
        let fiber = &mut self.fibers[f];
        let (outcome, mut at) = fiber.ending.expect("advance only an ending fiber");
        while let Some(&held) = fiber.held.get(at) {
            at += 1;
            match held {
                Held::Counter => self.drops[f] += 1,
                Held::Switcher => {
                    fiber.ending = Some((outcome, at));
                    fiber.in_switcher = true;
                    return Ok(());
                }
            }
        }
        fiber.state = State::Dead;
        fiber.held.clear();
        fiber.ending = None;
        fiber.unwinding = false;
        let parent = fiber.parent;
        self.deliver(parent, outcome)
    }

    /// A chain's `outcome` reaches `parent`, which runs next.
    fn deliver(&mut self, parent: usize, outcome: Outcome) -> Result<(), String> {
        let seen = match (self.wait[parent], outcome) {
            (Wait::Resume(t), _) => {
                self.fibers[t].handles -= 1;
                match outcome {
                    Outcome::Yield(v) => Seen::Yield(v),
                    Outcome::Return(v) => Seen::Return(v),
                    Outcome::Panic(tag) => Seen::Panic(tag),
                    Outcome::Unwound => return Err("model: a resumed fiber unwound".into()),
                }
            }
            (Wait::Drop, Outcome::Return(_) | Outcome::Unwound) => Seen::Dropped,
            (Wait::Drop, Outcome::Panic(tag)) => Seen::Panic(tag),
            (wait, _) => {
                return Err(format!(
                    "model: {outcome:?} reaches {parent}, waiting in {wait:?}"
                ));
            }
        };
        self.wait[parent] = Wait::Nothing;
        self.current = parent;
        self.expect(parent, seen);
        Ok(())
    }

    /// Checks what `me` saw against the prediction, and moves on: a panic seen
    /// by a fiber's body goes on unwinding it, a switcher's destructor ends.
    fn observe(&mut self, me: usize, seen: Seen) -> Result<(), String> {
        self.log.push((me, Err(seen)));
        if self.current != me {
            return Err(format!(
                "context {me} runs, the model has {} running",
                self.current
            ));
        }
        let expected = self.expect[me].take();
        if expected != Some(seen) {
            return Err(format!(
                "context {me} saw {seen:?}, the model expected {expected:?}"
            ));
        }
        if me == DRIVER {
            return Ok(());
        }
        if self.fibers[me].in_switcher {
            self.fibers[me].in_switcher = false;
            return self.advance(me);
        }
        if let Seen::Panic(tag) = seen {
            // The body re-raises it.
            self.fibers[me].unwinding = true;
            return self.end(me, Outcome::Panic(tag));
        }
        Ok(())
    }

    fn history(&self) -> String {
        let mut out = String::new();
        for (context, step) in &self.log {
            let who = if *context == DRIVER {
                "driver".to_string()
            } else {
                format!("fiber {context}")
            };
            let _ = match step {
                Ok(op) => writeln!(out, "  {who:>8} runs {op:?}"),
                Err(seen) => writeln!(out, "  {who:>8}   saw {seen:?}"),
            };
        }
        out
    }
}

/// The payload of the sequence's own panics.
struct Tag(u32);

/// Keeps the sequences' own panics (thousands of them) off stderr; any other
/// panic is reported as usual.
fn quiet_tagged_panics() {
    static HOOK: Once = Once::new();
    HOOK.call_once(|| {
        let default = panic::take_hook();
        panic::set_hook(Box::new(move |info| {
            if !info.payload().is::<Tag>() {
                default(info);
            }
        }));
    });
}

/// The real fibers, the model, and the source of choices.
struct Harness {
    label: String,
    model: RefCell<Model>,
    choices: RefCell<Choices>,
    slots: RefCell<Vec<Option<Rc<Real>>>>,
    drops: [Cell<u32>; FIBERS],
}

impl Harness {
    fn fail(&self, why: &str) -> ! {
        // `try_borrow`: the failure may come from inside a model call.
        let history = self
            .model
            .try_borrow()
            .map_or_else(|_| String::new(), |m| m.history());
        eprintln!(
            "fiber model: {}: {why}\nthe sequence so far:\n{history}",
            self.label
        );
        std::process::abort();
    }

    fn check(&self, result: Result<(), String>) {
        if let Err(why) = result {
            self.fail(&why);
        }
    }

    fn check_drops(&self) {
        let expected = self.model.borrow().drops;
        let real = self.drops.each_ref().map(Cell::get);
        if real != expected {
            self.fail(&format!(
                "held values dropped per fiber: {real:?}, the model expected {expected:?}"
            ));
        }
    }

    /// The operation context `me` runs next.
    fn next(&self, me: usize) -> Op {
        self.check_drops();
        let mut model = self.model.borrow_mut();
        let mut choices = self.choices.borrow_mut();
        if model.current != me {
            let running = model.current;
            drop(model);
            self.fail(&format!(
                "context {me} asks for an operation; the model has {running} running"
            ));
        }
        let allowed = model.allowed(me, choices.winding_down());
        if allowed.is_empty() {
            drop((model, choices));
            self.fail(&format!("model: context {me} has nothing it may run"));
        }
        let op = choices.pick(&allowed);
        drop(choices);
        match op {
            Ok(op) => {
                let applied = model.apply(me, op);
                drop(model);
                self.check(applied);
                op
            }
            Err(op) => {
                drop(model);
                self.fail(&format!(
                    "the script has {me} run {op:?}; it may run {allowed:?}"
                ))
            }
        }
    }

    /// Context `me` saw `seen`.
    fn seen(&self, me: usize, seen: Seen) {
        self.check_drops();
        let observed = self.model.borrow_mut().observe(me, seen);
        self.check(observed);
    }

    fn handle(&self, t: usize) -> Rc<Real> {
        match &self.slots.borrow()[t] {
            Some(fiber) => Rc::clone(fiber),
            None => self.fail(&format!("slot {t} is empty")),
        }
    }

    fn tag(&self, payload: &(dyn Any + Send)) -> u32 {
        match payload.downcast_ref::<Tag>() {
            Some(tag) => tag.0,
            None => self.fail("a panic that is not the sequence's own reached a context"),
        }
    }

    /// Runs `op` as context `me`: the driver, a fiber's body, or a switcher's
    /// destructor (the two latter with the fiber's yielder). A panic that
    /// reaches `me` is re-raised when `reraise` (a fiber's body), else only seen.
    fn run(
        self: &Rc<Self>,
        me: usize,
        op: Op,
        yielder: Option<&Yielder<u32, u32, u32>>,
        reraise: bool,
    ) {
        let seen = match op {
            Op::Resume(t, value) => {
                let fiber = self.handle(t);
                let outcome = panic::catch_unwind(AssertUnwindSafe(|| fiber.resume(value)));
                drop(fiber);
                match outcome {
                    Ok(Ok(Step::Yield(v))) => Seen::Yield(v),
                    Ok(Ok(Step::Return(v))) => Seen::Return(v),
                    Ok(Err(error)) => Seen::Err(error),
                    Err(payload) => return self.panicked(me, payload, reraise),
                }
            }
            Op::Drop(t) => {
                let fiber = self.slots.borrow_mut()[t].take();
                let Some(fiber) = fiber else {
                    self.fail(&format!("slot {t} is empty"))
                };
                if Rc::strong_count(&fiber) != 1 {
                    self.fail(&format!(
                        "fiber {t} has {} handles",
                        Rc::strong_count(&fiber)
                    ));
                }
                match panic::catch_unwind(AssertUnwindSafe(move || drop(fiber))) {
                    Ok(()) => Seen::Dropped,
                    Err(payload) => return self.panicked(me, payload, reraise),
                }
            }
            Op::Status(t) => Seen::Status(self.handle(t).status()),
            Op::Create(t) => {
                let fiber = Fiber::new(body(Rc::clone(self), t));
                self.slots.borrow_mut()[t] = Some(Rc::new(fiber));
                Seen::Done
            }
            Op::Transfer(to, value, catch) => {
                let Some(yielder) = yielder else {
                    self.fail("a transfer without a yielder")
                };
                let target = self.handle(to);
                let outcome = guarded(catch, || yielder.transfer(&target, value));
                drop(target);
                match outcome {
                    None => Seen::Caught,
                    Some(Ok(v)) => Seen::Got(v),
                    Some(Err(error)) => Seen::Err(error),
                }
            }
            Op::Skip => Seen::Done,
            op => self.fail(&format!("context {me} cannot run {op:?} here")),
        };
        self.seen(me, seen);
    }

    fn panicked(&self, me: usize, payload: Box<dyn Any + Send>, reraise: bool) {
        self.seen(me, Seen::Panic(self.tag(&*payload)));
        if reraise {
            panic::resume_unwind(payload);
        }
    }
}

/// Runs `f`, inside `catch_unwind` when `catch`: `None` if it unwound.
fn guarded<T>(catch: bool, f: impl FnOnce() -> T) -> Option<T> {
    if catch {
        panic::catch_unwind(AssertUnwindSafe(f)).ok()
    } else {
        Some(f())
    }
}

/// A value on a fiber's stack (see [`Held`]).
struct HeldValue<'y> {
    harness: Rc<Harness>,
    fiber: usize,
    yielder: &'y Yielder<u32, u32, u32>,
    kind: Held,
}

impl Drop for HeldValue<'_> {
    fn drop(&mut self) {
        let Self {
            harness,
            fiber,
            yielder,
            kind,
        } = self;
        match kind {
            Held::Counter => harness.drops[*fiber].set(harness.drops[*fiber].get() + 1),
            Held::Switcher => {
                // `run` catches what unwinds from the operation (a panic out of
                // a resume or a drop, a drop's forced unwind out of a transfer).
                let op = harness.next(*fiber);
                harness.run(*fiber, op, Some(*yielder), false);
            }
        }
    }
}

/// The body of fiber `me`: an interpreter of the operations the harness hands it.
fn body(
    harness: Rc<Harness>,
    me: usize,
) -> impl FnOnce(&Yielder<u32, u32, u32>, u32) -> u32 + 'static {
    move |yielder, input| {
        let mut held = Vec::new();
        harness.seen(me, Seen::Got(input));
        loop {
            match harness.next(me) {
                Op::Return(value) => return value,
                Op::Panic(tag) => panic::panic_any(Tag(tag)),
                Op::Hold(kind) => {
                    let value = HeldValue {
                        harness: Rc::clone(&harness),
                        fiber: me,
                        yielder,
                        kind,
                    };
                    held.push(value);
                    harness.seen(me, Seen::Done);
                }
                Op::Suspend(value, catch) => {
                    let outcome = guarded(catch, || yielder.suspend(value));
                    harness.seen(me, outcome.map_or(Seen::Caught, Seen::Got));
                }
                op => harness.run(me, op, Some(yielder), true),
            }
        }
    }
}

/// Runs one sequence of operations over [`FIBERS`] fibers, comparing every
/// step with the model (a difference aborts the process, naming `label`), and
/// returns what each context saw, in order.
pub fn check_fibers(choices: Choices, label: String) -> Vec<(usize, Seen)> {
    quiet_tagged_panics();
    let harness = Rc::new(Harness {
        label,
        model: RefCell::new(Model::new()),
        choices: RefCell::new(choices),
        slots: RefCell::new(Vec::new()),
        drops: Default::default(),
    });
    for t in 0..FIBERS {
        let fiber = Fiber::new(body(Rc::clone(&harness), t));
        harness.slots.borrow_mut().push(Some(Rc::new(fiber)));
    }
    loop {
        match harness.next(DRIVER) {
            Op::Finish => break,
            op => harness.run(DRIVER, op, None, false),
        }
    }
    harness.check_drops();
    let model = harness.model.borrow();
    model
        .log
        .iter()
        .filter_map(|&(context, step)| step.err().map(|seen| (context, seen)))
        .collect()
}

/// A step of a generator's body, or of the helper fiber it transfers to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum GenStep {
    Yield(u32),
    /// Keep a value whose `Drop` counts.
    Hold,
    /// Transfer to the helper (the body's only way to reach another fiber).
    Transfer,
    Panic(u32),
}

/// What one `next()` gave.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Item {
    Some(u32),
    None,
    Panic(u32),
}

/// The model of a [`Generator`] whose body may transfer to a helper fiber:
/// where each of the two is, what is held on their stacks, what was dropped.
struct GeneratorModel {
    body: Vec<GenStep>,
    helper: Vec<GenStep>,
    at: usize,
    helper_at: usize,
    state: State,
    helper_state: State,
    held: u32,
    helper_held: u32,
    drops: u32,
    /// A `None` or a panic was given: `None` for ever after (`FusedIterator`).
    done: bool,
}

impl GeneratorModel {
    fn next(&mut self) -> Item {
        if self.done || self.state == State::Transferred {
            // `resume` of a fiber in a transfer is Err `Transferring`: `None`.
            self.done = true;
            return Item::None;
        }
        while let Some(&step) = self.body.get(self.at) {
            self.at += 1;
            match step {
                GenStep::Yield(v) => {
                    self.state = State::Suspended;
                    return Item::Some(v);
                }
                GenStep::Hold => self.held += 1,
                GenStep::Panic(tag) => {
                    self.body_ends();
                    self.done = true;
                    return Item::Panic(tag);
                }
                GenStep::Transfer => {
                    self.state = State::Transferred;
                    return self.run_helper();
                }
            }
        }
        self.body_ends();
        self.done = true;
        Item::None
    }

    /// The helper starts (the body transfers at most once: it never runs again).
    fn run_helper(&mut self) -> Item {
        while let Some(&step) = self.helper.get(self.helper_at) {
            self.helper_at += 1;
            match step {
                GenStep::Yield(v) => {
                    self.helper_state = State::Suspended;
                    return Item::Some(v);
                }
                GenStep::Hold => self.helper_held += 1,
                GenStep::Panic(tag) => {
                    self.helper_ends();
                    self.done = true;
                    return Item::Panic(tag);
                }
                GenStep::Transfer => unreachable!("helpers do not transfer"),
            }
        }
        // The helper's return ends the iteration, its own fiber left in its
        // transfer: the case where fusing needs the generator's flag.
        self.helper_ends();
        self.done = true;
        Item::None
    }

    /// The body's fiber ends (returns, panics, or is unwound by a drop): its
    /// held values drop, and so does its closure's helper, unwinding the
    /// helper if it is suspended.
    fn body_ends(&mut self) {
        self.drops += self.held;
        if self.helper_state == State::Suspended {
            self.helper_ends();
        }
        self.state = State::Dead;
    }

    fn helper_ends(&mut self) {
        self.drops += self.helper_held;
        self.helper_state = State::Dead;
    }
}

struct Counter(Rc<Cell<u32>>);

impl Drop for Counter {
    fn drop(&mut self) {
        self.0.set(self.0.get() + 1);
    }
}

/// Runs a generator's body, or its helper's (without a helper to transfer to).
fn run_steps(
    out: &Yielder<(), u32, ()>,
    steps: &[GenStep],
    drops: &Rc<Cell<u32>>,
    helper: Option<&Fiber<(), u32, ()>>,
) {
    let mut held = Vec::new();
    for &step in steps {
        match step {
            GenStep::Yield(v) => out.suspend(v),
            GenStep::Hold => held.push(Counter(Rc::clone(drops))),
            GenStep::Panic(tag) => panic::panic_any(Tag(tag)),
            GenStep::Transfer => {
                let helper = helper.expect("only the body transfers");
                let outcome = out.transfer(helper, ());
                panic!("the transfer to the helper came back: {outcome:?}");
            }
        }
    }
}

/// Runs a generator made from `choices` — a body of up to 5 steps, a helper of
/// up to 3, some `next()` calls, then a drop — against [`GeneratorModel`]; a
/// difference panics, naming `label`. Returns what the `next()` calls gave.
pub fn check_generator(mut choices: Choices, label: String) -> Vec<Item> {
    quiet_tagged_panics();
    let mut steps = |len: usize, kinds: usize| -> Vec<GenStep> {
        (0..choices.below(len))
            .map(|_| match choices.below(kinds) {
                0 => GenStep::Yield(choices.value()),
                1 => GenStep::Hold,
                2 => GenStep::Panic(choices.value()),
                _ => GenStep::Transfer,
            })
            .collect()
    };
    let body = steps(6, 4);
    let helper = steps(4, 3);
    let calls = choices.below(body.len() + 4);
    let label = format!("generator model: {label} (body {body:?}, helper {helper:?})");
    let mut model = GeneratorModel {
        body: body.clone(),
        helper: helper.clone(),
        at: 0,
        helper_at: 0,
        state: State::Created,
        helper_state: State::Created,
        held: 0,
        helper_held: 0,
        drops: 0,
        done: false,
    };
    let drops = Rc::new(Cell::new(0));
    let helper = {
        let drops = Rc::clone(&drops);
        Rc::new(Fiber::new(move |out, ()| {
            run_steps(out, &helper, &drops, None)
        }))
    };
    let mut generator = {
        let drops = Rc::clone(&drops);
        Generator::new(move |out| run_steps(out, &body, &drops, Some(&helper)))
    };
    let mut items = Vec::new();
    for call in 0..calls {
        let item = match panic::catch_unwind(AssertUnwindSafe(|| generator.next())) {
            Ok(Some(v)) => Item::Some(v),
            Ok(None) => Item::None,
            Err(payload) => match payload.downcast_ref::<Tag>() {
                Some(tag) => Item::Panic(tag.0),
                None => panic::resume_unwind(payload),
            },
        };
        let expected = model.next();
        assert_eq!(item, expected, "{label}: next() #{call}");
        assert_eq!(
            drops.get(),
            model.drops,
            "{label}: drops after next() #{call}"
        );
        items.push(item);
    }
    drop(generator);
    if matches!(model.state, State::Suspended | State::Transferred) {
        model.body_ends();
    }
    assert_eq!(drops.get(), model.drops, "{label}: drops after the drop");
    items
}

/// The fuzz target's entry: the first byte picks a generator (odd) or fibers,
/// the rest chooses the operations.
pub fn check_from_bytes(bytes: &[u8]) {
    let label = format!("fuzz input {bytes:02x?}");
    match bytes.split_first() {
        Some((first, rest)) if first % 2 == 1 => {
            check_generator(Choices::from_bytes(rest), label);
        }
        _ => {
            check_fibers(
                Choices::from_bytes(bytes.get(1..).unwrap_or_default()),
                label,
            );
        }
    }
}
