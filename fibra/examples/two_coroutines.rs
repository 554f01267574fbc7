//! E1, from the seed experiments: two coroutines switching as fast as they
//! can, as Fibers.
//!
//! - **resume/yield**: two fibers loop forever, each suspending at once with a
//!   running total; `main` resumes the first, then the second, N times: 4
//!   switches per round (main → fiber → main, twice). Values travel both ways:
//!   `resume(n)` hands `n` in, `suspend(total)` hands the total out.
//! - **transfer**: two fibers pass control — and a counter — straight to each
//!   other with [`Yielder::transfer`], one switch each, until the counter
//!   reaches N (Ruby's `Fiber#transfer`).
//!
//! ```sh
//! cargo run --release -p fibra --example two_coroutines
//! ```

use fibra::{Fiber, Step, Yielder};
use std::cell::OnceCell;
use std::rc::Rc;
use std::time::Instant;

const N: u64 = 2_000_000;

fn main() {
    resume_and_suspend();
    transfer();
}

fn resume_and_suspend() {
    // Adds up what it is given; hands back the total so far each time.
    let adder = || {
        Fiber::new(|yielder: &Yielder<u64, u64, ()>, mut n| {
            let mut total = 0;
            loop {
                total += n;
                n = yielder.suspend(total);
            }
        })
    };
    let (first, second) = (adder(), adder());
    let start = Instant::now();
    let (mut a, mut b) = (0, 0);
    for n in 1..=N {
        a = first
            .resume(n)
            .expect("it suspends forever")
            .yielded()
            .unwrap();
        b = second
            .resume(2 * n)
            .expect("it suspends forever")
            .yielded()
            .unwrap();
    }
    let elapsed = start.elapsed();
    assert_eq!((a, b), (N * (N + 1) / 2, N * (N + 1)));
    println!(
        "resume/yield: {} switches in {elapsed:.2?}, {:.0} M switches/s",
        4 * N,
        4.0 * N as f64 / elapsed.as_secs_f64() / 1e6
    );
}

/// A fiber of the transfer pair: takes the count of switches so far, returns
/// it when it reaches `N`.
type Relay = Fiber<u64, (), u64>;

fn transfer() {
    // Each fiber finds its partner through a cell filled once both exist; the
    // partner is held weakly, so dropping `relays` drops (and unwinds) both.
    let relays = [Rc::new(OnceCell::<Relay>::new()), Rc::new(OnceCell::new())];
    for (i, cell) in relays.iter().enumerate() {
        let partner = Rc::downgrade(&relays[1 - i]);
        let relay = Relay::new(move |yielder, mut count| {
            let partner = partner.upgrade().expect("`relays` outlives the run");
            let partner = partner.get().expect("both exist before either runs");
            loop {
                count += 1;
                if count == N {
                    return count;
                }
                count = yielder
                    .transfer(partner, count)
                    .expect("the partner waits in transfer");
            }
        });
        assert!(cell.set(relay).is_ok());
    }
    let start = Instant::now();
    let outcome = relays[0].get().expect("set above").resume(1);
    let elapsed = start.elapsed();
    assert_eq!(outcome, Ok(Step::Return(N)));
    println!(
        "transfer: {N} switches in {elapsed:.2?}, {:.0} M switches/s",
        N as f64 / elapsed.as_secs_f64() / 1e6
    );
}
