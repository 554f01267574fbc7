//! park-scale on fibra: fibers resumed once, each suspended in its first
//! `suspend`; and green threads, each parked in `fibra::runtime::park`, as
//! they are and compacted (`Builder::compact_parked_after`).

use super::run::{Parked, Run};
use crate::experiments::wall;
use fibra::runtime::Builder;
use fibra::{Fiber, Step};
use std::cell::Cell;
use std::rc::Rc;
use std::time::Duration;

/// Fibers on stacks of fibra's default size, kept in a `Vec`.
pub fn fibers(run: &'static Run) -> Result<Parked, String> {
    let mut fibers: Vec<Fiber<(), (), ()>> = Vec::with_capacity(run.n as usize);
    run.begin()?;
    let stopped = run.create(|_| {
        let fiber = fibra::fiber::Builder::new()
            .build(|yielder, ()| yielder.suspend(()))
            .map_err(|e| e.to_string())?;
        match fiber.resume(()) {
            Ok(Step::Yield(())) => {}
            other => return Err(format!("a fiber did not suspend: {other:?}")),
        }
        fibers.push(fiber);
        Ok(())
    });
    run.finish(stopped)
}

/// Green threads of one runtime, spawned by its first one and detached (their
/// handles dropped); they are cancelled when the runtime ends.
pub fn threads(run: &'static Run) -> Result<Parked, String> {
    threads_of(Builder::new(), run)
}

/// [`threads`] on a runtime that compacts every parked thread at the end of
/// the round in which it parked: the figures are taken with all of them
/// compacted.
pub fn compacted_threads(run: &'static Run) -> Result<Parked, String> {
    // SAFETY: the threads only park; none lends its stack to another OS thread.
    let builder = unsafe { Builder::new().compact_parked_after(Some(Duration::ZERO)) };
    threads_of(builder, run)
}

fn threads_of(builder: Builder, run: &'static Run) -> Result<Parked, String> {
    builder.run(move || {
        let parked = Rc::new(Cell::new(0));
        run.begin()?;
        let stopped = run.create(|_| {
            let parked = parked.clone();
            drop(fibra::spawn(move || {
                parked.set(parked.get() + 1);
                loop {
                    fibra::runtime::park();
                }
            }));
            Ok(())
        });
        // The run queue is first in, first out: a yield lets every thread
        // spawned before it run to its park. One that could not have a stack
        // never runs (its join would say why), so a yield that lets none run
        // means the rest never will.
        let mut seen = 0;
        while parked.get() < run.created() {
            fibra::runtime::yield_now();
            if parked.get() == seen {
                let missing = run.created() - seen;
                return Err(wall::explain(&format!(
                    "{missing} of {} green threads never ran to their park (fibra says why \
                     only to a join, and their handles were dropped)",
                    run.created()
                )));
            }
            seen = parked.get();
        }
        // One more round: the sweep at the end of the round in which the
        // last threads parked has compacted them (when the runtime compacts).
        fibra::runtime::yield_now();
        run.finish(stopped)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiments::park::run::tests::run;

    #[test]
    fn parks_every_fiber_and_thread() {
        for park in [fibers, threads, compacted_threads] {
            let parked = park(run(1000, 40)).unwrap();
            assert_eq!((parked.created, parked.stopped), (1000, None));
        }
    }
}
