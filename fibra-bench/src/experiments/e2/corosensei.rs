//! The E2 program on the `corosensei` crate, which has no symmetric transfer:
//! main resumes two coroutines in turn, and each pushes and pops one element of
//! a shared array, then suspends back to main, N times.

use corosensei::{Coroutine, CoroutineResult, Yielder};
use std::cell::RefCell;
use std::hint::black_box;
use std::rc::Rc;

/// Runs the program; returns its switches: two per `resume` (into the coroutine
/// and back), N + 1 resumes of each coroutine (the last one runs it to its end).
pub fn push_pop(n: u64) -> u64 {
    let array = Rc::new(RefCell::new(Vec::with_capacity(1)));
    let new = || {
        let array = Rc::clone(&array);
        Coroutine::new(move |y: &Yielder<(), ()>, ()| {
            for i in 0..n {
                array.borrow_mut().push(i);
                black_box(array.borrow_mut().pop());
                y.suspend(());
            }
        })
    };
    let mut coroutines = [new(), new()];
    let mut switches = 0;
    // Both coroutines end in the same round, the one in which neither yields.
    loop {
        let mut yielded = false;
        for c in &mut coroutines {
            switches += 2;
            yielded |= matches!(c.resume(()), CoroutineResult::Yield(()));
        }
        if !yielded {
            return switches;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_every_switch() {
        assert_eq!(push_pop(1), 8);
        assert_eq!(push_pop(1000), 4004);
    }
}
