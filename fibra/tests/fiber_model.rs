//! The fiber state machine against its reference model (`model/mod.rs`): the
//! table "Every operation in every state" of `fibra::fiber`, checked by machine
//! over random sequences, the sequences behind the soundness review's findings,
//! and the table's aborts (in a child process).

#[path = "support/model_runs.rs"]
mod model_runs;
mod support;

mod model;

use fibra::fiber::Status;
use fibra::{Fiber, FiberError, Yielder};
use model::{
    Choices, DRIVER, Held, Item, Op, Seen, check_fibers, check_from_bytes, check_generator,
};
use std::cell::RefCell;
use std::panic::{self, AssertUnwindSafe};
use std::rc::Rc;

/// Operations per random sequence.
const STEPS: u32 = 40;

#[test]
fn random_sequences_agree_with_the_model() {
    for seed in model_runs::seeds(10_000) {
        check_fibers(
            Choices::seeded(seed, STEPS),
            format!("seed {seed} (FIBRA_MODEL_SEED={seed})"),
        );
    }
}

#[test]
fn random_generators_agree_with_the_model() {
    for seed in model_runs::seeds(10_000) {
        check_generator(
            Choices::seeded(seed, 0),
            format!("seed {seed} (FIBRA_MODEL_SEED={seed})"),
        );
    }
}

/// The fuzz target's decoding, on its corpus when there is one (a regression
/// test of what the fuzzer found) and on a few fixed inputs.
#[test]
fn fuzz_inputs_agree_with_the_model() {
    for input in model_runs::fuzz_inputs("fiber_model") {
        check_from_bytes(&input);
    }
}

fn saw(script: Vec<Op>) -> Vec<(usize, Seen)> {
    check_fibers(Choices::script(script), "a hand-written sequence".into())
}

/// Review finding 0: a fiber suspended in `transfer` cannot be resumed, neither
/// by the fiber it transferred to nor by its own resumer.
#[test]
fn resuming_a_transferring_fiber_is_an_error() {
    let seen = saw(vec![
        Op::Resume(0, 1),
        Op::Transfer(1, 2, false),
        Op::Resume(0, 3), // fiber 1 resumes fiber 0
        Op::Suspend(4, false),
        Op::Resume(0, 5), // the driver resumes fiber 0
        Op::Status(0),
    ]);
    assert!(seen.contains(&(1, Seen::Err(FiberError::Transferring))));
    assert!(seen.contains(&(DRIVER, Seen::Yield(4))));
    assert!(seen.contains(&(DRIVER, Seen::Err(FiberError::Transferring))));
    assert!(seen.contains(&(DRIVER, Seen::Status(Status::Transferred))));
}

/// Review finding 1 (`catch`): a dropped fiber that catches the forced unwind
/// cannot transfer; it is unwound to its end before the drop returns.
#[test]
fn a_dropped_fiber_that_catches_the_unwind_cannot_transfer() {
    let seen = saw(vec![
        Op::Resume(0, 1),
        Op::Hold(Held::Counter),
        Op::Suspend(2, true),
        Op::Drop(0),
        Op::Transfer(1, 3, false), // fiber 0, caught
        Op::Suspend(4, true),      // unwinds again, caught again
        Op::Suspend(5, false),     // unwinds again, to its end
        Op::Status(1),
    ]);
    let caught = seen.iter().filter(|&&s| s == (0, Seen::Caught)).count();
    assert_eq!(caught, 2);
    assert!(seen.contains(&(0, Seen::Err(FiberError::Dropping))));
    assert!(seen.contains(&(DRIVER, Seen::Dropped)));
    assert!(
        seen.contains(&(DRIVER, Seen::Status(Status::Created))),
        "fiber 1 never ran"
    );
}

/// Review finding 1 (`hop`): a destructor that transfers during a drop's
/// forced unwind gets Err `Dropping`; one that resumes another fiber runs it.
#[test]
fn destructors_that_switch_during_a_drop() {
    let seen = saw(vec![
        Op::Resume(0, 1),
        Op::Hold(Held::Switcher),
        Op::Hold(Held::Counter),
        Op::Hold(Held::Switcher),
        Op::Transfer(1, 2, false),
        Op::Suspend(3, false), // fiber 1: fiber 0 stays in its transfer
        Op::Drop(0),
        Op::Transfer(1, 4, true), // the first destructor
        Op::Resume(1, 5),         // the second
        Op::Return(6),            // fiber 1, resumed from the destructor
    ]);
    assert!(seen.contains(&(0, Seen::Err(FiberError::Dropping))));
    assert!(seen.contains(&(0, Seen::Return(6))));
    assert!(seen.contains(&(DRIVER, Seen::Dropped)));
}

/// Review finding 1 (`panic`): a panic raised by a dropped fiber after it
/// caught the forced unwind reaches the dropper, after the fiber's end.
#[test]
fn a_new_panic_of_a_dropped_fiber_reaches_the_dropper() {
    let seen = saw(vec![
        Op::Resume(0, 1),
        Op::Hold(Held::Counter),
        Op::Transfer(1, 2, true),
        Op::Suspend(3, false), // fiber 1
        Op::Drop(0),
        Op::Panic(7), // fiber 0, caught
    ]);
    assert!(seen.contains(&(0, Seen::Caught)));
    assert!(seen.contains(&(DRIVER, Seen::Panic(7))));
}

/// Review finding 8: a generator whose body transfers to a fiber that returns
/// ends with that `None`, and stays ended.
#[test]
fn a_generator_that_transfers_to_a_returning_fiber_stays_fused() {
    // Byte choices: a body of 3 steps (Yield 1, Transfer, Yield 2), a helper
    // of 1 (Yield 3), then 5 calls of `next()`.
    let items = check_generator(
        Choices::from_bytes(&[3, 0, 1, 3, 0, 2, 1, 0, 3, 5]),
        "fused after a transfer".into(),
    );
    assert_eq!(
        items,
        [
            Item::Some(1),
            Item::Some(3),
            Item::None,
            Item::None,
            Item::None
        ]
    );
}

/// Runs `case` in a child process (this test binary again, with
/// `FIBRA_MODEL_CHILD` naming it) and returns its output; in the child, runs
/// it and returns `None`. The table's aborts are tested this way.
fn in_child(case: &str, run: fn()) -> Option<std::process::Output> {
    if std::env::var("FIBRA_MODEL_CHILD").as_deref() == Ok(case) {
        run();
        return None;
    }
    let test = std::thread::current().name().unwrap().to_string();
    let out = support::target_command(std::env::current_exe().unwrap())
        .args(["--exact", "--nocapture", &test])
        .env("FIBRA_MODEL_CHILD", case)
        .output()
        .unwrap();
    Some(out)
}

fn aborts_with(case: &str, run: fn(), message: &str) {
    use std::os::unix::process::ExitStatusExt;
    if let Some(out) = in_child(case, run) {
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(
            out.status.signal(),
            Some(libc::SIGABRT),
            "{case}: {:?}, stderr:\n{stderr}",
            out.status
        );
        assert!(stderr.contains(message), "{case}: stderr:\n{stderr}");
    }
}

type Body = Box<dyn FnOnce(&Yielder<(), (), ()>, ())>;

type Shared = Rc<RefCell<Vec<Option<Rc<Fiber>>>>>;

fn handle(slots: &Shared, i: usize) -> Rc<Fiber> {
    Rc::clone(slots.borrow()[i].as_ref().unwrap())
}

/// Fiber 0 transfers to fiber 1, which resumes fiber 2, which transfers back
/// to fiber 0: fiber 0's transfer returns and lets go of fiber 1's handle,
/// while fiber 1 waits on the chain it resumed. Fiber 0 drops fiber 1's slot,
/// its last handle.
fn drop_a_running_fiber() {
    let slots: Shared = Rc::new(RefCell::new(Vec::new()));
    let bodies: [Body; 3] = {
        let (s0, s1, s2) = (Rc::clone(&slots), Rc::clone(&slots), Rc::clone(&slots));
        [
            Box::new(move |y, ()| {
                y.transfer(&handle(&s0, 1), ()).unwrap();
                let last = s0.borrow_mut()[1].take();
                drop(last);
            }),
            Box::new(move |_, ()| {
                let _ = handle(&s1, 2).resume(());
            }),
            Box::new(move |y, ()| {
                let _ = y.transfer(&handle(&s2, 0), ());
            }),
        ]
    };
    for body in bodies {
        slots.borrow_mut().push(Some(Rc::new(Fiber::new(body))));
    }
    let first = handle(&slots, 0);
    let _ = first.resume(());
}

/// A value whose destructor suspends its fiber, which is being dropped.
fn suspend_from_a_destructor_during_a_drop() {
    struct SuspendsOnDrop<'y>(&'y Yielder<(), (), ()>);
    impl Drop for SuspendsOnDrop<'_> {
        fn drop(&mut self) {
            self.0.suspend(());
        }
    }
    let fiber: Fiber = Fiber::new(|y, ()| {
        let _held = SuspendsOnDrop(y);
        y.suspend(());
    });
    fiber.resume(()).unwrap();
    drop(fiber);
}

/// The table: a dropped fiber that catches the forced unwind and suspends
/// "unwinds again". Here it is dropped while the driver unwinds a panic.
fn suspend_after_a_caught_drop_while_another_unwinds() {
    let fiber: Fiber = Fiber::new(|y, ()| {
        let _ = panic::catch_unwind(AssertUnwindSafe(|| y.suspend(())));
        y.suspend(()); // being dropped: unwinds again
    });
    fiber.resume(()).unwrap();
    let _ = panic::catch_unwind(AssertUnwindSafe(move || {
        let _dropped_during_the_panic = fiber;
        panic!("the driver panics");
    }));
}

/// The table: dropping the last handle of a running fiber leaks it, with a
/// line on stderr, and the program goes on (safe code reaches it: a running
/// fiber's last handle can be its slot after a transfer came back to the fiber
/// that held the other).
#[test]
fn dropping_a_running_fiber_leaks_it() {
    let case = "drop running";
    if let Some(out) = in_child(case, drop_a_running_fiber) {
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            out.status.success(),
            "{case}: {:?}, stderr:\n{stderr}",
            out.status
        );
        assert!(
            stderr.contains("fibra: the last handle of a running fiber was dropped"),
            "{case}: stderr:\n{stderr}"
        );
    }
}

#[test]
fn a_destructor_that_suspends_during_a_drop_aborts() {
    aborts_with(
        "dtor suspends",
        suspend_from_a_destructor_during_a_drop,
        "fibra: a fiber suspended while it was being dropped",
    );
}

/// The table says this `suspend` unwinds again, so the drop completes and
/// the process goes on, also while the code that dropped the fiber unwinds.
#[test]
fn a_caught_drop_that_suspends_while_another_fiber_unwinds() {
    let case = "caught, suspends, while unwinding";
    if let Some(out) = in_child(case, suspend_after_a_caught_drop_while_another_unwinds) {
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            out.status.success(),
            "{case}: {:?}, stderr:\n{stderr}",
            out.status
        );
    }
}
