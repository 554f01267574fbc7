//! Dropping a fiber: a suspended one is unwound to its end before its stack
//! goes back to the pool, a running one is leaked, and under
//! `panic = "abort"` a suspended one is leaked too (the fiber module docs
//! say what the fiber may do meanwhile, in "Panics, drops and errors" and
//! "Under `panic = "abort"`").

use super::Fiber;
use super::context::State;
use super::message::{Inbound, Outbound, PanicSlot};
use std::mem::ManuallyDrop;
use std::panic::{self, AssertUnwindSafe};

impl<I, Y, R> Drop for Fiber<I, Y, R> {
    fn drop(&mut self) {
        let panic = match self.header().state() {
            State::Dead => None,
            State::Running | State::Unwinding => {
                // Its stack is in use (by the fiber, or a fiber it resumed):
                // leak it, as `mem::forget` would. The fiber runs on, on its own
                // stack, which is never reused; once it suspends nothing can
                // resume it.
                eprintln!(
                    "fibra: the last handle of a running fiber was dropped; its stack is \
                     in use, so it is leaked: the fiber can never be resumed again"
                );
                return;
            }
            State::Yielded | State::Transferred if cfg!(panic = "abort") => {
                // It cannot be unwound: leak it, stack and all (the fiber
                // module docs).
                return;
            }
            State::Created | State::Yielded | State::Transferred => self.unwind(),
        };
        // SAFETY: the fiber is dead, so nothing runs on the stack or will again;
        // `stack` is not used after this.
        unsafe { ManuallyDrop::drop(&mut self.stack) };
        // A panic that ended it (other than the forced unwind) continues here,
        // once its stack is back in the pool.
        if let Some(payload) = panic {
            panic::resume_unwind(payload);
        }
    }
}

impl<I, Y, R> Fiber<I, Y, R> {
    /// Unwinds a suspended fiber to its end (see the fiber module docs for
    /// what it may do meanwhile). Returns the payload of a panic that ended
    /// it, other than the forced unwind itself.
    #[cold]
    fn unwind(&mut self) -> Option<Box<dyn std::any::Any + Send>> {
        // Whether a `suspend` during the unwind can tell, by `thread::panicking`,
        // that a destructor called it (see `Yielder::suspend`).
        self.header()
            .set_dropped_while_panicking(std::thread::panicking());
        // The header, not the cached `sp`: a Transferred fiber's copy may be stale.
        let mut outcome = self.run(self.header_sp(), Inbound::Unwind, State::Unwinding);
        // A `suspend` made while it unwinds comes back here with its value (the
        // hot path of `suspend` does not look for a drop): drop the value and
        // send the unwind again, which that `suspend` meets as its answer. A
        // panic out of the value's destructor continues once the fiber is dead,
        // as one that ends the fiber does.
        let mut late_panic = None;
        while let Outbound::Yield(value) = outcome {
            if let Err(payload) = panic::catch_unwind(AssertUnwindSafe(move || drop(value))) {
                late_panic.get_or_insert(payload);
            }
            outcome = self.run(self.header_sp(), Inbound::Unwind, State::Unwinding);
        }
        // A fiber being dropped cannot transfer, so what came back is its own
        // end.
        if self.header().state() != State::Dead {
            eprintln!(
                "fibra: a dropped fiber came back alive; this is a bug in fibra, so the process aborts"
            );
            std::process::abort();
        }
        match outcome {
            // It ended by the forced unwind, or caught it and returned.
            Outbound::Unwound | Outbound::Return(_) => late_panic,
            // It caught the unwind and panicked anew.
            Outbound::Panicked => Some(PanicSlot::take()),
            Outbound::Yield(_) => unreachable!("the loop above sends the unwind again"),
        }
    }
}
