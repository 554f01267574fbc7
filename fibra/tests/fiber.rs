//! What a user of `Fiber` sees: values both ways, transfer, errors, panics,
//! unwinding on drop, many fibers, deep recursion, floating point (and the
//! callee-saved FP registers), backtraces.

use fibra::fiber::{Builder, Status};
use fibra::{Fiber, FiberError, Step};
use std::cell::{Cell, OnceCell, RefCell};
use std::panic::{self, AssertUnwindSafe};
use std::rc::Rc;

/// Counts drops of its clones' shared counter.
#[derive(Clone)]
struct DropCounter(Rc<Cell<u32>>);

impl Drop for DropCounter {
    fn drop(&mut self) {
        self.0.set(self.0.get() + 1);
    }
}

#[test]
fn values_travel_both_ways_with_distinct_types() {
    let fiber: Fiber<String, usize, Vec<String>> = Fiber::new(|y, first: String| {
        let mut seen = vec![first];
        loop {
            let next = y.suspend(seen.len());
            if next.is_empty() {
                return seen;
            }
            seen.push(next);
        }
    });
    assert_eq!(fiber.status(), Status::Created);
    assert_eq!(fiber.resume("a".into()).unwrap(), Step::Yield(1));
    assert_eq!(fiber.status(), Status::Suspended);
    assert_eq!(fiber.resume("b".into()).unwrap(), Step::Yield(2));
    assert_eq!(
        fiber.resume(String::new()).unwrap(),
        Step::Return(vec!["a".to_string(), "b".to_string()])
    );
    assert_eq!(fiber.status(), Status::Dead);
}

#[test]
fn resuming_a_finished_fiber_is_an_error_and_drops_the_input() {
    let fiber = Fiber::new(|_, ()| 7);
    assert_eq!(fiber.resume(()).unwrap(), Step::<(), i32>::Return(7));
    assert_eq!(fiber.resume(()), Err(FiberError::Dead));
    assert!(!fiber.is_alive());

    let drops = Rc::new(Cell::new(0));
    let fiber: Fiber<DropCounter, (), ()> = Fiber::new(|_, _| ());
    fiber.resume(DropCounter(drops.clone())).unwrap();
    assert_eq!(drops.get(), 1);
    assert!(fiber.resume(DropCounter(drops.clone())).is_err());
    assert_eq!(drops.get(), 2, "the rejected input is dropped, not leaked");
    assert_eq!(
        FiberError::Dead.to_string(),
        "cannot resume a dead fiber: it has returned or panicked"
    );
}

#[test]
fn a_fiber_cannot_resume_itself() {
    let cell: Rc<OnceCell<Fiber<(), (), Option<FiberError>>>> = Rc::new(OnceCell::new());
    let inner = Rc::downgrade(&cell);
    cell.set(Fiber::new(move |_, ()| {
        let cell = inner.upgrade().unwrap();
        let me = cell.get().unwrap();
        assert_eq!(me.status(), Status::Running);
        // Returns the error (the fiber cannot be resumed while it runs).
        me.resume(()).err()
    }))
    .ok();
    let outcome = cell.get().unwrap().resume(()).unwrap();
    assert_eq!(outcome, Step::Return(Some(FiberError::Running)));
}

#[test]
fn nested_fibers_report_running_for_the_waiting_outer_one() {
    let outer: Rc<OnceCell<Fiber<(), (), ()>>> = Rc::new(OnceCell::new());
    let seen = Rc::new(Cell::new(None));
    let (outer2, seen2) = (Rc::downgrade(&outer), seen.clone());
    outer
        .set(Fiber::new(move |_, ()| {
            let inner: Fiber<(), (), ()> = Fiber::new(move |_, ()| {
                let outer = outer2.upgrade().unwrap();
                seen2.set(Some((
                    outer.get().unwrap().status(),
                    outer.get().unwrap().resume(()),
                )));
            });
            inner.resume(()).unwrap();
        }))
        .ok();
    outer.get().unwrap().resume(()).unwrap();
    assert_eq!(
        seen.get(),
        Some((Status::Running, Err(FiberError::Running)))
    );
}

#[test]
fn transfer_ping_pong_passes_a_counter_with_one_switch_per_hand_over() {
    const N: u64 = 100_001;
    let hand_overs = Rc::new(Cell::new(0u64));
    let b: Rc<OnceCell<Fiber<u64, (), u64>>> = Rc::new(OnceCell::new());
    let (to_b, count_a) = (b.clone(), hand_overs.clone());
    let a = Rc::new(Fiber::new(move |y, mut n: u64| {
        while n < N {
            count_a.set(count_a.get() + 1);
            n = y.transfer(to_b.get().unwrap(), n + 1).unwrap();
        }
        n
    }));
    let (to_a, count_b) = (Rc::downgrade(&a), hand_overs.clone());
    b.set(Fiber::new(move |y, mut n: u64| {
        loop {
            if n >= N {
                return n;
            }
            count_b.set(count_b.get() + 1);
            n = y.transfer(&to_a.upgrade().unwrap(), n + 1).unwrap();
        }
    }))
    .ok();
    // N is odd, so b hands the final value back... whichever fiber reaches N
    // returns, and that ends the chain that `resume` started.
    let result = a.resume(0).unwrap();
    assert_eq!(result, Step::Return(N));
    assert_eq!(hand_overs.get(), N);
    // b reached N and returned; a is still suspended in its transfer, which
    // only a transfer may continue.
    assert_eq!(b.get().unwrap().status(), Status::Dead);
    assert_eq!(a.status(), Status::Transferred);
    assert_eq!(a.resume(0), Err(FiberError::Transferring));
}

#[test]
fn transfer_to_dead_or_running_fibers_is_an_error() {
    let dead: Rc<Fiber<(), (), &'static str>> = Rc::new(Fiber::new(|_, ()| "done"));
    dead.resume(()).unwrap();
    let me: Rc<OnceCell<Fiber<(), (), &'static str>>> = Rc::new(OnceCell::new());
    let (dead2, me2) = (dead.clone(), Rc::downgrade(&me));
    me.set(Fiber::new(move |y, ()| {
        assert_eq!(y.transfer(&dead2, ()), Err(FiberError::Dead));
        let me = me2.upgrade().unwrap();
        assert_eq!(y.transfer(me.get().unwrap(), ()), Err(FiberError::Running));
        "checked"
    }))
    .ok();
    assert_eq!(
        me.get().unwrap().resume(()).unwrap(),
        Step::Return("checked")
    );
}

#[test]
fn a_transferred_to_fiber_suspends_to_the_original_resumer() {
    let b: Rc<Fiber<u32, u32, u32>> = Rc::new(Fiber::new(|y, n: u32| {
        let again = y.suspend(n * 10);
        again + 1
    }));
    let b2 = b.clone();
    let a = Fiber::new(move |y, n: u32| {
        let back = y.transfer(&b2, n + 1).unwrap();
        back * 2
    });
    // a transfers to b; b's suspend comes back to this resume.
    assert_eq!(a.resume(1).unwrap(), Step::Yield(20));
    // b can be resumed directly; its return also ends here.
    assert_eq!(b.resume(5).unwrap(), Step::Return(6));
    // a, suspended in its transfer, is not resumed (Ruby: "attempt to resume a
    // transferring fiber"); dropping it unwinds it.
    assert_eq!(a.status(), Status::Transferred);
    assert_eq!(a.resume(21), Err(FiberError::Transferring));
}

/// Ruby's `test_terminate_transferred_fiber` goes back to the fiber that
/// transferred when the transferred-to fiber ends; fibra ends the chain at the
/// `resume` that started it (the fiber docs' list of differences from Ruby).
#[test]
fn a_transferred_to_fiber_that_returns_ends_the_chain_at_the_resumer() {
    let b: Rc<Fiber<u32, (), u32>> = Rc::new(Fiber::new(|_, n: u32| n * 10));
    let b2 = b.clone();
    let a = Fiber::new(move |y, n: u32| {
        let _ = y.transfer(&b2, n + 1);
        unreachable!("nothing transfers back to a");
    });
    assert_eq!(a.resume(1).unwrap(), Step::Return(20));
    assert_eq!(b.status(), Status::Dead);
    assert_eq!(a.status(), Status::Transferred);
    assert_eq!(a.resume(0), Err(FiberError::Transferring));
}

#[test]
fn a_panic_reaches_the_resumer_and_kills_the_fiber() {
    let fiber: Fiber<(), (), ()> = Fiber::new(|y, ()| {
        y.suspend(());
        panic!("boom in fiber");
    });
    fiber.resume(()).unwrap();
    let caught = panic::catch_unwind(AssertUnwindSafe(|| fiber.resume(()))).unwrap_err();
    assert_eq!(caught.downcast_ref::<&str>(), Some(&"boom in fiber"));
    assert_eq!(fiber.status(), Status::Dead);
    assert_eq!(fiber.resume(()), Err(FiberError::Dead));
}

#[test]
fn dropping_a_suspended_fiber_runs_the_destructors_on_its_stack() {
    let drops = Rc::new(Cell::new(0));
    let finished = Rc::new(Cell::new(false));
    let (d, f) = (drops.clone(), finished.clone());
    let fiber: Fiber<(), u32, ()> = Fiber::new(move |y, ()| {
        let _outer = DropCounter(d.clone());
        let mut i = 0;
        loop {
            let _inner = DropCounter(d.clone());
            y.suspend(i);
            i += 1;
            if i == 1000 {
                f.set(true);
            }
        }
    });
    assert_eq!(fiber.resume(()).unwrap(), Step::Yield(0));
    assert_eq!(fiber.resume(()).unwrap(), Step::Yield(1));
    assert_eq!(drops.get(), 1, "one loop iteration's guard dropped so far");
    drop(fiber);
    assert_eq!(
        drops.get(),
        3,
        "the live `_inner` and `_outer` dropped by the unwind"
    );
    assert!(!finished.get());
}

/// A value that counts its drops and, if asked, panics in its destructor.
struct CountsAndPanics {
    drops: Rc<Cell<u32>>,
    panics: bool,
}

impl Drop for CountsAndPanics {
    fn drop(&mut self) {
        self.drops.set(self.drops.get() + 1);
        if self.panics {
            panic!("the suspended value's destructor");
        }
    }
}

/// A fiber that catches the unwind of its drop and suspends again hands the
/// value it suspends with to the dropper: that value is dropped exactly once,
/// and the fiber is unwound again, to its end.
#[test]
fn a_value_suspended_during_a_drop_is_dropped_once() {
    let drops = Rc::new(Cell::new(0));
    let d = drops.clone();
    let fiber: Fiber<(), CountsAndPanics, ()> = Fiber::new(move |y, ()| {
        let value = || CountsAndPanics {
            drops: d.clone(),
            panics: false,
        };
        let _ = panic::catch_unwind(AssertUnwindSafe(|| y.suspend(value())));
        y.suspend(value()); // being dropped: comes back as the unwind
        unreachable!("a fiber being dropped does not go on");
    });
    match fiber.resume(()) {
        Ok(Step::Yield(first)) => drop(first),
        _ => panic!("the fiber suspends"),
    }
    assert_eq!(drops.get(), 1);
    drop(fiber);
    assert_eq!(drops.get(), 2, "the value suspended during the drop");
}

/// If that value's destructor panics, the drop still unwinds the fiber to its
/// end, and the panic continues in the code that dropped it.
#[test]
fn a_panic_dropping_a_value_suspended_during_a_drop_continues_in_the_dropper() {
    let drops = Rc::new(Cell::new(0));
    let (d, ended) = (drops.clone(), Rc::new(Cell::new(false)));
    let e = ended.clone();
    let fiber: Fiber<(), CountsAndPanics, ()> = Fiber::new(move |y, ()| {
        let _ = panic::catch_unwind(AssertUnwindSafe(|| {
            y.suspend(CountsAndPanics {
                drops: d.clone(),
                panics: false,
            })
        }));
        let _marks_the_end = scopeguard(e.clone());
        y.suspend(CountsAndPanics {
            drops: d.clone(),
            panics: true,
        });
    });
    match fiber.resume(()) {
        Ok(Step::Yield(first)) => drop(first),
        _ => panic!("the fiber suspends"),
    }
    let payload = panic::catch_unwind(AssertUnwindSafe(move || drop(fiber))).unwrap_err();
    assert_eq!(
        payload.downcast_ref::<&str>(),
        Some(&"the suspended value's destructor")
    );
    assert_eq!(drops.get(), 2);
    assert!(ended.get(), "the fiber was unwound past its last suspend");
}

/// Sets its flag when dropped.
fn scopeguard(flag: Rc<Cell<bool>>) -> impl Drop {
    struct Sets(Rc<Cell<bool>>);
    impl Drop for Sets {
        fn drop(&mut self) {
            self.0.set(true);
        }
    }
    Sets(flag)
}

#[test]
fn dropping_an_unstarted_fiber_drops_its_closure() {
    let drops = Rc::new(Cell::new(0));
    let guard = DropCounter(drops.clone());
    let fiber: Fiber<(), (), ()> = Fiber::new(move |_, ()| drop(guard));
    drop(fiber);
    assert_eq!(drops.get(), 1);
}

#[test]
fn a_fiber_that_catches_its_unwind_and_suspends_is_unwound_again() {
    let drops = Rc::new(Cell::new(0));
    let d = drops.clone();
    let fiber: Fiber<(), (), ()> = Fiber::new(move |y, ()| {
        let _guard = DropCounter(d);
        let _ = panic::catch_unwind(AssertUnwindSafe(|| y.suspend(())));
        y.suspend(()); // unwinds at once: the fiber is being dropped
        unreachable!();
    });
    fiber.resume(()).unwrap();
    drop(fiber);
    assert_eq!(drops.get(), 1);
}

#[test]
fn fibers_dropped_while_the_resumer_unwinds_are_unwound_too() {
    let drops = Rc::new(Cell::new(0));
    let d = drops.clone();
    let result = panic::catch_unwind(AssertUnwindSafe(move || {
        let fiber: Fiber<(), (), ()> = Fiber::new(move |y, ()| {
            let _guard = DropCounter(d);
            loop {
                y.suspend(());
            }
        });
        fiber.resume(()).unwrap();
        panic!("resumer panics with a suspended fiber in scope");
    }));
    assert!(result.is_err());
    assert_eq!(drops.get(), 1);
}

#[test]
fn a_thousand_times_ten_fibers_alive_at_once() {
    let fibers: Vec<Fiber<u64, u64, u64>> = (0..10_000u64)
        .map(|i| {
            Fiber::new(move |y, n: u64| {
                let doubled = y.suspend(n + i);
                doubled * 2
            })
        })
        .collect();
    for (i, f) in fibers.iter().enumerate() {
        assert_eq!(f.resume(1).unwrap(), Step::Yield(i as u64 + 1));
    }
    for (i, f) in fibers.iter().enumerate().rev() {
        assert_eq!(f.resume(i as u64).unwrap(), Step::Return(i as u64 * 2));
    }
}

#[test]
fn deep_recursion_inside_a_fiber() {
    fn depth(n: u64, y: &fibra::Yielder<u64, u64, u64>) -> u64 {
        let pad = std::hint::black_box([n; 8]);
        if n == 0 {
            y.suspend(1);
            return pad[0];
        }
        1 + depth(n - 1, y) + pad[7] - n
    }
    let fiber = Builder::new()
        .stack_size(64 << 20)
        .build(|y, n: u64| depth(n, y))
        .unwrap();
    // Suspends at the bottom of 200,000 frames and comes back to finish.
    assert_eq!(fiber.resume(200_000).unwrap(), Step::Yield(1));
    assert_eq!(fiber.resume(0).unwrap(), Step::Return(200_000));
}

#[test]
fn floating_point_values_survive_switches() {
    // Each fiber keeps accumulators live across its switches while the others
    // compute with different values; any clobbered register shows up as a wrong sum.
    let fibers: Vec<Fiber<f64, f64, f64>> = (1..=4)
        .map(|k| {
            Fiber::new(move |y, scale: f64| {
                let (mut a, mut b, mut c) = (0.0f64, 1.0f64, k as f64);
                for i in 0..1000 {
                    let x = i as f64 * scale;
                    a += x.sqrt();
                    b *= 1.0 + 1.0 / (x + k as f64);
                    c = c.mul_add(0.5, x);
                    y.suspend(a + b + c);
                }
                a + b + c
            })
        })
        .collect();
    let mut expected = Vec::new();
    for k in 1..=4 {
        let (mut a, mut b, mut c) = (0.0f64, 1.0f64, k as f64);
        for i in 0..1000 {
            let x = i as f64 * 0.25;
            a += x.sqrt();
            b *= 1.0 + 1.0 / (x + k as f64);
            c = c.mul_add(0.5, x);
        }
        expected.push(a + b + c);
    }
    let mut last = vec![0.0; 4];
    loop {
        let mut running = false;
        for (i, f) in fibers.iter().enumerate() {
            if let Ok(step) = f.resume(0.25) {
                running = true;
                if let Step::Return(v) = step {
                    last[i] = v;
                }
            }
        }
        if !running {
            break;
        }
    }
    assert_eq!(last, expected);
}

/// Eight accumulators, each updated with `k`, held across every call of `step`:
/// with an opaque call in between, the compiler keeps them in callee-saved
/// registers where the ABI has them (d8–d15 on aarch64; x86_64's System V has
/// none and spills them), so a switch inside `step` that lost those registers
/// would give this frame the other side's values.
#[inline(never)]
fn accumulate(k: f64, rounds: u32, mut step: impl FnMut(f64)) -> f64 {
    let (mut a, mut b, mut c, mut d) = (1.0f64, 2.0f64, 3.0f64, 4.0f64);
    let (mut e, mut f, mut g, mut h) = (5.0f64, 6.0f64, 7.0f64, 8.0f64);
    for _ in 0..rounds {
        step(a + b + c + d + e + f + g + h);
        a = a * 0.5 + k;
        b = b * 0.75 - k;
        c = c * 0.5 + 2.0 * k;
        d = d * 0.25 + 3.0;
        e = e * 0.5 - k * 0.5;
        f = f * 0.125 + 1.0;
        g = g * 0.5 + k * k;
        h = h * 0.875 - 2.0;
    }
    a + b * 2.0 + c * 3.0 + d * 4.0 + e * 5.0 + f * 6.0 + g * 7.0 + h * 8.0
}

#[inline(never)]
fn suspend_once(y: &fibra::Yielder<(), f64, f64>, value: f64) {
    y.suspend(value);
}

#[inline(never)]
fn resume_once(fiber: &Fiber<(), f64, f64>, returned: &RefCell<Vec<f64>>) {
    if let Step::Return(value) = fiber.resume(()).unwrap() {
        returned.borrow_mut().push(value);
    }
}

#[test]
fn callee_saved_fp_registers_survive_switches() {
    // The resumer and two fibers each keep eight f64 values live across the
    // call that switches (`resume_once`, `suspend_once`), with different values
    // on each side; every switch must hand each side its own back (AAPCS64:
    // d8–d15 are callee-saved, and the switch declares them clobbered).
    const ROUNDS: u32 = 300;
    let fibers: Vec<Fiber<(), f64, f64>> = [-3.0, 0.25]
        .into_iter()
        .map(|k| Fiber::new(move |y, ()| accumulate(k, ROUNDS, |v| suspend_once(y, v))))
        .collect();
    let returned = RefCell::new(Vec::new());
    let mine = accumulate(1.5, ROUNDS + 1, |_| {
        for fiber in &fibers {
            resume_once(fiber, &returned);
        }
    });
    assert_eq!(mine, accumulate(1.5, ROUNDS + 1, |_| {}));
    assert_eq!(
        returned.into_inner(),
        vec![
            accumulate(-3.0, ROUNDS, |_| {}),
            accumulate(0.25, ROUNDS, |_| {})
        ]
    );
}

#[test]
fn a_backtrace_taken_in_a_fiber_walks_into_the_resumer() {
    #[inline(never)]
    fn resumer_frame_marker(fiber: &Fiber<(), String, ()>) -> String {
        fiber.resume(()).unwrap().yielded().unwrap()
    }
    let fiber: Fiber<(), String, ()> = Fiber::new(|y, ()| {
        y.suspend(std::backtrace::Backtrace::force_capture().to_string());
    });
    let trace = resumer_frame_marker(&fiber);
    assert!(
        trace.contains("fiber_start"),
        "the bootstrap frame is named:\n{trace}"
    );
    assert!(
        trace.contains("resumer_frame_marker"),
        "the walk reaches the resumer:\n{trace}"
    );
}

#[test]
fn fibers_made_and_dropped_in_a_loop_reuse_their_stacks() {
    let log = Rc::new(RefCell::new(Vec::new()));
    for i in 0..100_000u32 {
        let l = log.clone();
        let fiber: Fiber<(), (), ()> = Fiber::new(move |y, ()| {
            y.suspend(());
            if i % 10_000 == 0 {
                l.borrow_mut().push(i);
            }
        });
        fiber.resume(()).unwrap();
        if i % 2 == 0 {
            fiber.resume(()).unwrap();
        }
    }
    assert_eq!(
        *log.borrow(),
        (0..10).map(|k| k * 10_000).collect::<Vec<_>>()
    );
}

/// A closure larger than its stack is boxed and called in place, so it never
/// takes room there — also in a debug build, whose moves copy it (finding 10 of
/// the soundness review: an 80 KiB capture overflowed a 256 KiB stack).
#[test]
fn a_closure_larger_than_its_stack_runs() {
    let big = [7u8; 64 * 1024];
    let fiber: Fiber<(), (), u8> = Builder::new()
        .stack_size(16 * 1024)
        .build(move |_, ()| std::hint::black_box(&big)[64 * 1024 - 1])
        .unwrap();
    assert_eq!(fiber.resume(()).unwrap(), Step::Return(7));
    let big = [9u8; 120 * 1024];
    let fiber: Fiber<(), (), u8> = Builder::new()
        .stack_size(256 * 1024)
        .build(move |_, ()| std::hint::black_box(&big)[0])
        .unwrap();
    assert_eq!(fiber.resume(()).unwrap(), Step::Return(9));
}

#[test]
fn fibers_on_many_threads_at_once() {
    let handles: Vec<_> = (0..4u64)
        .map(|t| {
            std::thread::spawn(move || {
                let fibers: Vec<Fiber<u64, u64, u64>> = (0..1000)
                    .map(|_| Fiber::new(|y, n: u64| n + y.suspend(n)))
                    .collect();
                let mut total = 0;
                for f in &fibers {
                    total += f.resume(t).unwrap().yielded().unwrap();
                    total += f.resume(1).unwrap().returned().unwrap();
                }
                total
            })
        })
        .collect();
    let totals: Vec<u64> = handles.into_iter().map(|h| h.join().unwrap()).collect();
    assert_eq!(
        totals,
        (0..4).map(|t| 1000 * (2 * t + 1)).collect::<Vec<_>>()
    );
}

#[test]
fn transfers_and_resumes_mix_in_any_order() {
    // Two fibers that, told "t" or "y", either transfer to the other or yield to
    // whoever resumed the chain, logging every step. A fiber that yielded is
    // continued by a resume, one that transferred by a transfer; each handle
    // must continue its fiber exactly where it last stopped.
    type F = Fiber<&'static str, (char, u32), ()>;
    let log = Rc::new(RefCell::new(Vec::new()));
    let cells: [Rc<OnceCell<F>>; 2] = [Rc::new(OnceCell::new()), Rc::new(OnceCell::new())];
    for (me, name) in [(0, 'a'), (1, 'b')] {
        let other = Rc::downgrade(&cells[1 - me]);
        let log = log.clone();
        cells[me]
            .set(Fiber::new(move |y, mut order: &'static str| {
                let mut step = 0;
                loop {
                    step += 1;
                    log.borrow_mut().push((name, step, order));
                    order = match order {
                        "t" => y
                            .transfer(other.upgrade().unwrap().get().unwrap(), "y")
                            .unwrap(),
                        _ => y.suspend((name, step)),
                    };
                }
            }))
            .ok();
    }
    let (a, b) = (cells[0].get().unwrap(), cells[1].get().unwrap());
    assert_eq!(a.resume("t").unwrap(), Step::Yield(('b', 1))); // a → b, b yields
    assert_eq!(b.resume("t").unwrap(), Step::Yield(('a', 2))); // b → a (a's transfer returns), a yields
    assert_eq!(a.resume("y").unwrap(), Step::Yield(('a', 3))); // a's own handle, after a transfer
    assert_eq!(a.resume("t").unwrap(), Step::Yield(('b', 3))); // a → b, b's transfer returns
    assert_eq!(b.resume("y").unwrap(), Step::Yield(('b', 4)));
    assert_eq!(a.resume("y"), Err(FiberError::Transferring)); // a waits in its transfer
    assert_eq!(b.resume("t").unwrap(), Step::Yield(('a', 5))); // b → a
    let steps: Vec<(char, u32)> = log.borrow().iter().map(|&(n, s, _)| (n, s)).collect();
    assert_eq!(
        steps,
        [
            ('a', 1),
            ('b', 1),
            ('b', 2),
            ('a', 2),
            ('a', 3),
            ('a', 4),
            ('b', 3),
            ('b', 4),
            ('b', 5),
            ('a', 5)
        ]
    );
}

#[test]
fn suspending_through_the_handle_only_works_from_inside() {
    let cell: Rc<OnceCell<Fiber<u32, u32, u32>>> = Rc::new(OnceCell::new());
    let inner = Rc::downgrade(&cell);
    cell.set(Fiber::new(move |_, n: u32| {
        let this = inner.upgrade().unwrap();
        let this = this.get().unwrap();
        // From a fiber nested inside it: refused, nothing suspends.
        let nested: Fiber<(), (), Result<u32, FiberError>> = Fiber::new({
            let inner = inner.clone();
            move |_, ()| inner.upgrade().unwrap().get().unwrap().suspend(0)
        });
        assert_eq!(
            nested.resume(()).unwrap(),
            Step::Return(Err(FiberError::NotInside))
        );
        let m = this.suspend(n + 1).unwrap();
        m * 10
    }))
    .ok();
    let fiber = cell.get().unwrap();
    assert_eq!(fiber.suspend(1), Err(FiberError::NotInside));
    assert_eq!(fiber.resume(1).unwrap(), Step::Yield(2));
    assert_eq!(fiber.resume(4).unwrap(), Step::Return(40));
}
