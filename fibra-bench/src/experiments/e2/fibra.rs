//! The E2 program on fibra: two fibers each push and pop one element of a
//! shared array N times, handing control to the other with `transfer` after
//! each push and pop.

use fibra::{Fiber, Step};
use std::cell::{OnceCell, RefCell};
use std::hint::black_box;
use std::rc::Rc;

/// A fiber of the program: takes and returns the number of switches made so far.
type Worker = Fiber<u64, (), u64>;

/// Runs the program; returns its switches: `resume`'s switch into the first
/// fiber, 2·N hand-overs, and the first fiber's return.
pub fn push_pop(n: u64) -> u64 {
    let array = Rc::new(RefCell::new(Vec::with_capacity(1)));
    // As in E1's transfer: each fiber reaches the other through a weak reference,
    // so that dropping `workers` drops (and unwinds) the one left suspended.
    let workers = [Rc::new(OnceCell::<Worker>::new()), Rc::new(OnceCell::new())];
    for (i, cell) in workers.iter().enumerate() {
        let other = Rc::downgrade(&workers[1 - i]);
        let array = Rc::clone(&array);
        let worker = Worker::new(move |y, mut switches| {
            let other_cell = other.upgrade().expect("`workers` outlives the run");
            let other = other_cell
                .get()
                .expect("both fibers exist before either runs");
            for i in 0..n {
                array.borrow_mut().push(i);
                black_box(array.borrow_mut().pop());
                switches = y
                    .transfer(other, switches + 1)
                    .expect("the other fiber is suspended");
            }
            switches + 1
        });
        assert!(cell.set(worker).is_ok(), "each cell is set once");
    }
    match workers[0].get().expect("set above").resume(1) {
        Ok(Step::Return(switches)) => switches,
        other => panic!("the first fiber ends the program, got {other:?}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_every_switch() {
        assert_eq!(push_pop(1), 4);
        assert_eq!(push_pop(1000), 2002);
    }
}
