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
    /// What it finds to be the last references to the Ractor's ports and
    /// outcome go into `last`, to be dropped elsewhere.
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
        let finished = match outcome.progress() {
            Stage::Running => false,
            Stage::Finished => true,
            Stage::Joined => return None,
        };
        let ports = self.ports.upgrade();
        // SAFETY: the caller's.
        let queued = ports.as_ref().map_or(0, |ports| unsafe { ports.queued() });
        // The handles were dropped meanwhile: these are the last references.
        if Arc::strong_count(&outcome) == 1 {
            last.push((outcome, ports));
        }
        Some(RawRactor {
            id: self.id,
            worker,
            thread,
            queued,
            finished,
        })
    }
}

/// References to a Ractor's outcome and ports that a dump found to be the
/// last.
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
/// here, in the runtime's loop; its ports and outcome are dropped on a green
/// thread instead, as they would be by any other code of the worker.
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
        drop(runtime::spawn(move || drop(last)));
    }
    ractors
}

/// Makes this worker's runtime describe its Ractors in dumps, with `describe`.
pub(super) fn serve(describe: DescribeRactors) {
    runtime::describe_ractors_with(describe);
}
