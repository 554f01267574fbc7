//! The Ractors placed on one worker, as its OS thread keeps them for a
//! [dump](crate::runtime::dump()): each Ractor's id, its body's green thread,
//! and weak handles on its ports and outcome through which the dump reads its
//! mailbox's depth and whether it has finished.
//!
//! The list is the worker's own (a thread-local of its OS thread): the
//! dispatcher adds a Ractor when it spawns its body, and the worker's runtime
//! reads the list when a dump asks it to describe itself, on the same OS
//! thread — no lock, and nothing on a sender's or receiver's path. An entry
//! stays after its body ends, so that a dump can show a Ractor whose value
//! nobody has joined yet; entries whose Ractor is gone (every handle dropped,
//! the body ended) are swept when the list has doubled since the last sweep.
//!
//! What that costs: two weak reference counts taken when a Ractor is made
//! (no allocation, no name, nothing per message), a push when it starts, and
//! until the sweep after it is gone, the allocations of its ports and outcome
//! (their contents, messages and value, are dropped with the last handle as
//! before: a weak reference keeps only the block). The list holds at most
//! twice the most Ractors that were alive on the worker at once, or 64
//! entries.

use crate::runtime::{self, DescribeRactors, RawRactor};
use crate::sync::drop_all::drop_all;
use std::cell::RefCell;
use std::sync::{Arc, Weak};

/// A Ractor's incoming port, as a dump sees it (its message type erased).
pub(super) trait Queue: Send + Sync {
    /// How many messages wait in the port.
    ///
    /// # Safety
    ///
    /// On the Ractor's worker, while its body is not inside a receive (see
    /// `Mailbox::queued`).
    unsafe fn queued(&self) -> usize;
}

/// A Ractor's outcome, as a dump sees it (its value's type erased).
pub(super) trait Progress: Send + Sync {
    /// Whether the body has finished, and if so whether a join has taken
    /// its value.
    fn progress(&self) -> Stage;
}

/// Where a Ractor is in its life.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Stage {
    /// Its body has not finished.
    Running,
    /// Its body has finished; its outcome waits for a join.
    Finished,
    /// A join has taken its outcome.
    Joined,
}

/// A Ractor as its worker knows it, without its types.
pub(super) struct Entry {
    pub(super) id: u64,
    pub(super) ports: Weak<dyn Queue>,
    pub(super) outcome: Weak<dyn Progress>,
}

impl Entry {
    /// How it shows in a dump (`None` once it is gone or joined): `thread` is
    /// its body's green thread, `None` while the body waits in the worker's
    /// inbox.
    ///
    /// The references it takes to the Ractor's ports and outcome go into
    /// `last`, to be dropped elsewhere: another thread may drop the Ractor's
    /// last handle at any moment, even after a look at the counts, and leave
    /// them the last — whose drop runs the user's destructors (queued
    /// messages, the value), which must not run, nor panic, inside a dump.
    ///
    /// # Safety
    ///
    /// On the Ractor's worker, while its body is not inside a receive: from
    /// the worker's runtime describing itself for a dump (its green threads
    /// are then suspended, or the one taking the dump is running its own
    /// code, and a receive runs none of the user's).
    unsafe fn describe(
        &self,
        worker: usize,
        thread: Option<u64>,
        last: &mut Vec<Kept>,
    ) -> Option<RawRactor> {
        let outcome = self.outcome.upgrade()?;
        let stage = outcome.progress();
        if stage == Stage::Joined {
            last.push((outcome, None));
            return None;
        }
        let ports = self.ports.upgrade();
        // SAFETY: the caller's.
        let queued = ports.as_ref().map_or(0, |ports| unsafe { ports.queued() });
        last.push((outcome, ports));
        Some(RawRactor {
            id: self.id,
            worker,
            thread,
            queued,
            finished: stage == Stage::Finished,
        })
    }
}

/// References to a Ractor's outcome and ports that a dump took, any of which
/// may be the last.
type Kept = (Arc<dyn Progress>, Option<Arc<dyn Queue>>);

thread_local! {
    static CENSUS: RefCell<Census> = const {
        RefCell::new(Census {
            listed: Vec::new(),
            sweep_at: SWEEP_FROM,
        })
    };
}

/// The least length at which the list is swept.
const SWEEP_FROM: usize = 64;

struct Census {
    /// Ractors whose bodies were spawned here, with their green threads' ids.
    listed: Vec<(Entry, u64)>,
    /// The length at which the next sweep happens (twice what the last one
    /// kept), so that a sweep costs each Ractor O(1) on average.
    sweep_at: usize,
}

/// Lists `ractor`, whose body runs as green thread `thread` of this OS
/// thread's runtime.
pub(super) fn list(ractor: Entry, thread: u64) {
    CENSUS.with_borrow_mut(|census| {
        if census.listed.len() >= census.sweep_at {
            // Without upgrading (which could drop a value here): a Ractor
            // whose outcome has no strong reference has ended and has no
            // handle left.
            census
                .listed
                .retain(|(entry, _)| entry.outcome.strong_count() > 0);
            census.sweep_at = (census.listed.len() * 2).max(SWEEP_FROM);
        }
        census.listed.push((ractor, thread));
    });
}

/// This worker's Ractors for its runtime's part of a dump: those in
/// `pending` (placed, waiting in the worker's inbox), then those listed.
///
/// A Ractor whose last handle went while the dump looked at it would end
/// here, in the runtime's loop, where a panicking destructor would end the
/// worker and leave the dump's asker waiting; so the references the dump took
/// are dropped on a green thread instead, as they would be by any other code
/// of the worker (a panic there is that thread's, printed as any other, and
/// the others are still dropped).
///
/// # Safety
///
/// As for [`Entry::describe`]: from the runtime of this worker describing
/// itself.
pub(super) unsafe fn describe<'a>(
    worker: usize,
    pending: impl Iterator<Item = &'a Entry>,
) -> Vec<RawRactor> {
    let mut last = Vec::new();
    let ractors = CENSUS.with_borrow(|census| {
        let listed = census
            .listed
            .iter()
            .map(|(entry, thread)| (entry, Some(*thread)));
        pending
            .map(|entry| (entry, None))
            .chain(listed)
            // SAFETY: the caller's.
            .filter_map(|(entry, thread)| unsafe { entry.describe(worker, thread, &mut last) })
            .collect()
    });
    if !last.is_empty() {
        drop(runtime::spawn(move || drop_all(last)));
    }
    ractors
}

/// Makes this worker's runtime describe its Ractors in dumps, with `describe`.
pub(super) fn serve(describe: DescribeRactors) {
    runtime::describe_ractors_with(describe);
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// Counts the drops of the fakes below in a test.
    type Drops = Arc<AtomicUsize>;

    struct FakeOutcome(Drops);

    impl Progress for FakeOutcome {
        fn progress(&self) -> Stage {
            Stage::Finished
        }
    }

    impl Drop for FakeOutcome {
        fn drop(&mut self) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    /// Ports whose only handle is dropped "by another thread" while the dump
    /// reads the queue's depth.
    struct FakePorts {
        drops: Drops,
        handle: Mutex<Option<Arc<FakePorts>>>,
    }

    impl Queue for FakePorts {
        unsafe fn queued(&self) -> usize {
            drop(self.handle.lock().unwrap().take());
            0
        }
    }

    impl Drop for FakePorts {
        fn drop(&mut self) {
            self.drops.fetch_add(1, Ordering::SeqCst);
        }
    }

    /// The ports' last handle goes while the dump looks, and the outcome
    /// lives on elsewhere (in a `Join` future, which holds no ports): the
    /// dump's reference to the ports is then the last, and is not dropped
    /// inside the dump, where their messages' destructors must not run.
    #[test]
    fn a_dump_drops_no_reference_it_took_even_the_last() {
        let drops = Drops::default();
        let outcome = Arc::new(FakeOutcome(drops.clone()));
        let ports = Arc::new(FakePorts {
            drops: drops.clone(),
            handle: Mutex::new(None),
        });
        let entry = Entry {
            id: 1,
            ports: Arc::downgrade(&ports) as Weak<dyn Queue>,
            outcome: Arc::downgrade(&outcome) as Weak<dyn Progress>,
        };
        *ports.handle.lock().unwrap() = Some(ports.clone());
        drop(ports);
        let mut last = Vec::new();
        // SAFETY: the fakes' `queued` reads no mailbox.
        let described = unsafe { entry.describe(0, None, &mut last) }.expect("listed");
        assert!(described.finished);
        assert_eq!(drops.load(Ordering::SeqCst), 0, "nothing dropped inside");
        assert_eq!(last.len(), 1);
        drop(last);
        assert_eq!(drops.load(Ordering::SeqCst), 1, "the ports, once dropped");
        drop(outcome);
        assert_eq!(drops.load(Ordering::SeqCst), 2);
    }
}
