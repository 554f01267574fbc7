//! A Ractor's two ports, shared by its handles and its body's
//! [`Context`](super::Context): the incoming [`Mailbox`] and the outgoing
//! [`Outbox`], and how a dump counts what waits in the mailbox.

use super::census;
use super::mailbox::Mailbox;
use super::outbox::Outbox;

/// A Ractor's ports: what its handles and its body share.
pub(super) struct Ports<In, Out> {
    pub(super) incoming: Mailbox<In>,
    pub(super) outgoing: Outbox<Out>,
}

impl<In: Send, Out: Send> census::Queue for Ports<In, Out> {
    unsafe fn queued(&self) -> usize {
        // SAFETY: the caller's (the same contract).
        unsafe { self.incoming.queued() }
    }
}
