//! park-scale on the `may` crate: coroutines on one worker thread, each parked
//! in `may::coroutine::park`. It maps each stack with a guard page of its own,
//! so it meets the map-count wall ([`crate::experiments::wall`]), where its
//! spawn panics: the child's panic hook reports how far it got.

use super::run::{Parked, Run};
use crate::experiments::may_child::spawn;
use may::sync::WaitGroup;

/// Coroutines spawned by a coroutine on the same worker and detached (their
/// handles dropped). may's stacks are of its default size.
pub fn coroutines(run: &'static Run) -> Result<Parked, String> {
    may::config().set_workers(1);
    let spawner = spawn(move || {
        let parked = WaitGroup::new();
        run.begin()?;
        let stopped = run.create(|_| {
            let parked = parked.clone();
            drop(spawn(move || {
                drop(parked);
                loop {
                    may::coroutine::park();
                }
            }));
            Ok(())
        });
        // Each coroutine drops its clone just before it parks, with no switch
        // between: once the group is empty, every one is parked.
        parked.wait();
        run.finish(stopped)
    });
    spawner
        .join()
        .map_err(|_| "the spawning coroutine panicked".to_string())?
}
