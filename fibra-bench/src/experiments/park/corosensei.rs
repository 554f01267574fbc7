//! park-scale on the `corosensei` crate: coroutines resumed once, each
//! suspended in its first `suspend`. It maps each stack with a guard page of
//! its own, so it meets the map-count wall ([`crate::experiments::wall`]).

use super::run::{Parked, Run};
use corosensei::stack::DefaultStack;
use corosensei::{Coroutine, CoroutineResult};

/// corosensei's own default stack size (that of `DefaultStack::default`),
/// asked for by name so that a stack the kernel refuses is an error to report,
/// not a panic.
const STACK_SIZE: usize = 1024 * 1024;

/// Coroutines kept in a `Vec`.
pub fn coroutines(run: &'static Run) -> Result<Parked, String> {
    let mut coroutines: Vec<Coroutine<(), (), (), DefaultStack>> =
        Vec::with_capacity(run.n as usize);
    run.begin()?;
    let stopped = run.create(|_| {
        let stack = DefaultStack::new(STACK_SIZE).map_err(|e| format!("DefaultStack::new: {e}"))?;
        let mut coroutine = Coroutine::with_stack(stack, |yielder, ()| yielder.suspend(()));
        match coroutine.resume(()) {
            CoroutineResult::Yield(()) => {}
            CoroutineResult::Return(()) => return Err("a coroutine returned".into()),
        }
        coroutines.push(coroutine);
        Ok(())
    });
    run.finish(stopped)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiments::park::run::tests::run;

    #[test]
    fn parks_every_coroutine() {
        let parked = coroutines(run(1000, 40)).unwrap();
        assert_eq!((parked.created, parked.stopped), (1000, None));
    }
}
