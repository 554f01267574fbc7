//! E1 on fibra.

use fibra::{Fiber, Step};
use std::cell::OnceCell;
use std::hint::black_box;
use std::rc::Rc;
use std::time::{Duration, Instant};

/// Resumes two fibers that suspend at once, in turn, `n` times.
pub fn resume_yield(n: u64) -> Duration {
    let new = || {
        Fiber::<(), (), ()>::new(|y, ()| {
            loop {
                y.suspend(())
            }
        })
    };
    let (c1, c2) = (new(), new());
    let start = Instant::now();
    for _ in 0..n {
        black_box(c1.resume(()).expect("the fiber suspends forever"));
        black_box(c2.resume(()).expect("the fiber suspends forever"));
    }
    start.elapsed()
}

/// A fiber of the transfer variant: takes the number of switches made so far
/// and returns it when it reaches `n`.
type Relay = Fiber<u64, (), u64>;

/// Two fibers pass control and a counter straight to each other: `n` switches
/// in all, counting `resume`'s switch into the first and the return to it.
pub fn transfer(n: u64) -> Duration {
    assert!(
        n >= 2,
        "transfer counts the switches into and out of the pair"
    );
    // Each fiber finds the other through a weak reference, upgraded when it
    // starts. Whichever fiber is left suspended at the end holds the other's cell
    // alive, but nothing holds its own cell except `relays`, so dropping `relays`
    // drops (and unwinds) it, and then the other.
    let relays = [Rc::new(OnceCell::<Relay>::new()), Rc::new(OnceCell::new())];
    for (i, cell) in relays.iter().enumerate() {
        let other = Rc::downgrade(&relays[1 - i]);
        let relay = Relay::new(move |y, mut count| {
            let other_cell = other.upgrade().expect("`relays` outlives the run");
            let other = other_cell
                .get()
                .expect("both fibers exist before either runs");
            loop {
                count += 1;
                if count == n {
                    return count;
                }
                count = y
                    .transfer(other, count)
                    .expect("the other fiber is suspended");
            }
        });
        assert!(cell.set(relay).is_ok(), "each cell is set once");
    }
    let first = relays[0].get().expect("set above");
    let start = Instant::now();
    let step = first.resume(1);
    let elapsed = start.elapsed();
    assert!(
        matches!(step, Ok(Step::Return(count)) if count == n),
        "the relay ends after n switches"
    );
    elapsed
}
