//! The messages that cross a switch, and how one travels in a machine word.
//!
//! A switch carries one register. A message no larger than a word travels in that
//! register itself, so that resuming a fiber with `()` or a counter touches no
//! memory for the message. A larger one stays on the sender's stack and the
//! register carries its address: the sender is suspended while the receiver moves
//! it out, so it is still there. Either way the message is moved exactly once —
//! the sender never drops it ([`ManuallyDrop`]) and the receiver takes it.

use std::mem::{self, ManuallyDrop, MaybeUninit};
use std::panic;
use std::ptr;

/// What a resumer sends into a fiber.
pub(super) enum Inbound<I> {
    /// Go on (or start) with this value.
    Resume(I),
    /// The fiber is being dropped: unwind its stack.
    Unwind,
}

/// What a fiber sends back to its resumer. A panic's payload does not travel in
/// the message (it would make every message two words): it waits in the fiber's
/// header, and `Panicked` says to collect it.
pub(super) enum Outbound<Y, R> {
    Yield(Y),
    Return(R),
    Panicked,
}

/// The panic payload that unwinds a suspended fiber being dropped. It is thrown
/// with `resume_unwind`, so the panic hook does not print it.
pub(super) struct ForcedUnwind;

/// Raises [`ForcedUnwind`] in the current fiber.
pub(super) fn forced_unwind() -> ! {
    panic::resume_unwind(Box::new(ForcedUnwind))
}

/// Whether a `T` travels in the word itself.
const fn fits_in_word<T>() -> bool {
    mem::size_of::<T>() <= mem::size_of::<usize>()
}

/// The word that carries `message`. `message` must stay where it is, untouched,
/// until the receiver has called [`receive`] on the word.
pub(super) fn send<T>(message: &ManuallyDrop<T>) -> usize {
    let message: &T = message;
    if fits_in_word::<T>() {
        let mut word = MaybeUninit::<usize>::zeroed();
        // SAFETY: a `T` fits in a word; the bytes are copied, and the value is
        // owned by the word from now on (the sender never drops its copy).
        unsafe {
            ptr::copy_nonoverlapping(
                (message as *const T).cast::<u8>(),
                word.as_mut_ptr().cast::<u8>(),
                mem::size_of::<T>(),
            )
        };
        // SAFETY: zeroed, then partly overwritten: every byte is initialised.
        unsafe { word.assume_init() }
    } else {
        message as *const T as usize
    }
}

/// Takes the message carried by `word`.
///
/// # Safety
///
/// `word` must come from [`send`] with the same `T`, be received once, and (for a
/// message sent by address) its sender must not have resumed yet.
pub(super) unsafe fn receive<T>(word: usize) -> T {
    if fits_in_word::<T>() {
        // SAFETY: the word holds the bytes of a `T` (see `send`); it may be
        // under-aligned for `T` on the stack, hence the unaligned read.
        unsafe { ptr::read_unaligned((&word as *const usize).cast::<T>()) }
    } else {
        // SAFETY: the word is the address of a live `T` that nobody else reads.
        unsafe { ptr::read(word as *const T) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip<T>(value: T) -> T {
        let held = ManuallyDrop::new(value);
        let word = send(&held);
        // SAFETY: received once, while `held` is still in place.
        unsafe { receive::<T>(word) }
    }

    #[test]
    fn small_and_large_messages_arrive_intact() {
        assert!(matches!(
            round_trip(Inbound::<()>::Resume(())),
            Inbound::Resume(())
        ));
        assert!(matches!(
            round_trip(Inbound::<u32>::Resume(7)),
            Inbound::Resume(7)
        ));
        assert!(matches!(
            round_trip(Inbound::<u64>::Unwind),
            Inbound::Unwind
        ));
        let big = round_trip(Outbound::<String, [u64; 4]>::Return([1, 2, 3, 4]));
        assert!(matches!(big, Outbound::Return([1, 2, 3, 4])));
        let text = round_trip(Outbound::<String, ()>::Yield(
            "moved, not copied".to_string(),
        ));
        assert!(matches!(text, Outbound::Yield(s) if s == "moved, not copied"));
    }

    #[test]
    fn unit_messages_fit_in_a_word() {
        assert!(fits_in_word::<Inbound<()>>());
        assert!(fits_in_word::<Outbound<(), ()>>());
        assert!(fits_in_word::<Inbound<u32>>());
    }
}
