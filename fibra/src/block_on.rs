//! Running a [`Future`] from code that is not `async`: a green thread parks
//! until the future's waker unparks it, and the other green threads run
//! meanwhile; a plain OS thread blocks.

use crate::runtime::WaitReason;
use crate::runtime::{self, Unparker, scheduler};
use std::any::Any;
use std::future::Future;
use std::panic::{self, AssertUnwindSafe};
use std::pin::{Pin, pin};
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};
use std::thread::{self, Thread};

/// Runs `future` to completion and returns its output.
///
/// Inside a green thread, only that green thread waits: it parks whenever the
/// future is pending, and the future's [`Waker`] — which may be called from any
/// OS thread — makes it runnable again. A wake from the same runtime (another
/// green thread, or the future itself) puts it straight in the run queue; one
/// from another OS thread goes through its [`Unparker`], which wakes the
/// runtime's poller only if it sleeps. Outside a runtime, the calling OS
/// thread blocks ([`thread::park`]) until the waker is called.
///
/// A future that needs a particular executor's reactor (tokio's sockets and
/// timers, say) still needs that reactor running somewhere; this runs futures
/// that are woken by whatever they wait for (a channel, another thread, a
/// timer of their own). Run tokio's with `fibra::tokio::block_on` (cargo
/// feature `tokio`): a future that panics here with tokio's "there is no
/// reactor running" gets that advice added to its panic message.
///
/// ```
/// use std::future::Future;
/// use std::pin::Pin;
/// use std::task::{Context, Poll};
///
/// /// Pending once, waking itself, then ready.
/// struct YieldOnce(bool);
/// impl Future for YieldOnce {
///     type Output = u32;
///     fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<u32> {
///         if self.0 {
///             return Poll::Ready(7);
///         }
///         self.0 = true;
///         cx.waker().wake_by_ref();
///         Poll::Pending
///     }
/// }
///
/// assert_eq!(fibra::block_on(YieldOnce(false)), 7); // on this OS thread
/// fibra::run(|| assert_eq!(fibra::block_on(YieldOnce(false)), 7)); // in a green thread
/// ```
///
/// # Deadlocks
///
/// A future that is never woken leaves its green thread parked. If nothing
/// else can wake any green thread, [`run`](crate::run) reports the deadlock —
/// unless the future keeps a clone of its waker (which, like an
/// [`Unparker`], could wake the thread from another OS thread at any time).
/// The waker is made afresh for each poll and dropped before the thread
/// parks, so a future that drops its waker does not hide a deadlock.
///
/// # Compaction
///
/// In a runtime that compacts parked threads
/// ([`Builder::compact_parked_after`](crate::runtime::Builder::compact_parked_after)),
/// a green thread is never compacted while it is inside `block_on`, in its
/// parks here or in any wait of fibra's made inside the future's poll: the
/// future, pinned on the thread's stack, may be registered with whatever
/// wakes it, which may write it from another OS thread at any time.
pub fn block_on<F: Future>(future: F) -> F::Output {
    let in_green_thread = in_green_thread();
    // The future, once polled, may have lent itself (pinned on this stack) to
    // whatever wakes it — an intrusive node in tokio's timer wheel or in a
    // `Notify`'s waiter list, touched from another OS thread — and it stays
    // lent until it is dropped: the thread is never compacted meanwhile, in
    // this park or in any park made inside the future's poll. Declared first,
    // so dropped after the future.
    let _lending = in_green_thread.then(|| scheduler::current().lend());
    let mut future = pin!(future);
    loop {
        let waker = if in_green_thread {
            Waker::from(Arc::new(GreenWaker(runtime::current().unparker())))
        } else {
            Waker::from(Arc::new(OsWaker(thread::current())))
        };
        let cx = &mut Context::from_waker(&waker);
        if let Poll::Ready(output) = poll_explaining_tokio(future.as_mut(), cx) {
            return output;
        }
        drop(waker);
        // A wake that came during the poll makes this return at once; a
        // spurious return only polls again.
        if in_green_thread {
            scheduler::current().park_on(WaitReason::BlockOn);
        } else {
            thread::park();
        }
    }
}

/// Polls `future`; if the poll panics because the future needs tokio's
/// runtime (tokio's "there is no reactor running, must be called from the
/// context of a Tokio 1.x runtime"), panics again saying what to use instead.
/// Any other panic continues as it was.
fn poll_explaining_tokio<F: Future>(future: Pin<&mut F>, cx: &mut Context<'_>) -> Poll<F::Output> {
    // Unwind safety: on a panic nothing here is used again; the panic goes on.
    match panic::catch_unwind(AssertUnwindSafe(|| future.poll(cx))) {
        Ok(polled) => polled,
        Err(payload) => match panic_message(&*payload) {
            Some(message) if message.contains("Tokio 1.x runtime") => panic!(
                "{message}\n(fibra: `fibra::block_on` runs no tokio reactor; run futures that \
                 need tokio with `fibra::tokio::block_on`, cargo feature \"tokio\")"
            ),
            _ => panic::resume_unwind(payload),
        },
    }
}

/// A panic's message, where it is text.
fn panic_message(payload: &(dyn Any + Send)) -> Option<&str> {
    (payload.downcast_ref::<&str>().copied())
        .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
}

/// Whether the caller is a green thread (rather than a plain OS thread, or a
/// runtime's own loop).
pub(crate) fn in_green_thread() -> bool {
    scheduler::try_current().is_some_and(|s| s.is_running_a_thread())
}

/// Wakes a green thread, from any OS thread: from its own runtime's OS thread
/// (another green thread, a future that wakes itself) straight into the run
/// queue; from any other through its [`Unparker`].
struct GreenWaker(Unparker);

impl Wake for GreenWaker {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        if !scheduler::wake_if_local(&self.0) {
            self.0.unpark();
        }
    }
}

/// Wakes an OS thread blocked in `block_on` outside a runtime.
struct OsWaker(Thread);

impl Wake for OsWaker {
    fn wake(self: Arc<Self>) {
        self.0.unpark();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.0.unpark();
    }
}

/// `block_on`'s waker under the model checker (`scripts/model-check.sh`): the
/// real `GreenWaker` over a model runtime's real remote queue.
#[cfg(all(test, fibra_loom))]
mod model_check {
    use super::GreenWaker;
    use crate::runtime::model_check::{Runtime, check};
    use std::sync::Arc;
    use std::task::Waker;

    /// A future hands a clone of its waker to another OS thread, which wakes
    /// it (consuming the clone), while `block_on` drops its own and the
    /// runtime goes to sleep: the thread is woken (its id taken), and once
    /// the last waker is gone the runtime sees that none is left — it is
    /// never left asleep, whatever the interleaving.
    #[test]
    fn a_waker_woken_from_another_thread_wakes_the_green_thread() {
        check("block_on_waker", || {
            let runtime = Runtime::new();
            let waker = Waker::from(Arc::new(GreenWaker(runtime.unparker(5))));
            let elsewhere = waker.clone();
            let other = loom::thread::spawn(move || elsewhere.wake());
            drop(waker);
            assert_eq!(runtime.run(), [5]);
            other.join().unwrap();
        });
    }
}
