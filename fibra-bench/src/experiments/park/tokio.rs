//! park-scale on tokio: tasks on a current-thread runtime, each pending on one
//! shared `Notify`.

use super::run::{Parked, Run};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use tokio::sync::Notify;

/// Tasks spawned by the runtime's main future and detached (their handles
/// dropped); they are dropped with the runtime.
pub fn tasks(run: &'static Run) -> Result<Parked, String> {
    crate::experiments::tokio_runtime().block_on(async move {
        let parked = Arc::new(AtomicU64::new(0));
        let wake = Arc::new(Notify::new());
        run.begin()?;
        let stopped = run.create(|_| {
            let (parked, wake) = (parked.clone(), wake.clone());
            // Counted just before the first poll of `notified`, which
            // registers the task and returns pending: no await between.
            drop(tokio::spawn(async move {
                parked.fetch_add(1, Ordering::Relaxed);
                wake.notified().await;
            }));
            Ok(())
        });
        while parked.load(Ordering::Relaxed) < run.created() {
            tokio::task::yield_now().await;
        }
        run.finish(stopped)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiments::park::run::tests::run;

    #[test]
    fn parks_every_task() {
        let parked = tasks(run(1000, 40)).unwrap();
        assert_eq!((parked.created, parked.stopped), (1000, None));
    }
}
