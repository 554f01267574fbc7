//! The messages that cross a switch, and how one travels in a register.
//!
//! A switch carries one pointer-sized register, the *carrier*. It holds either
//!
//! - a **tag**: the number of the message's variant, when every variant of the
//!   message's type carries nothing but a zero-sized value (`Inbound<()>`,
//!   `Outbound<(), ()>`: resuming with `()`, suspending with `()`, `Unwind`).
//!   Such a message touches no memory, which keeps the switch of
//!   `Fiber<(), (), ()>` at its floor; or
//! - the **address** of the message, for any other type. The message stays on
//!   the sender's stack: the sender is suspended while the receiver moves it
//!   out, so it is still there.
//!
//! Which of the two is decided by the type, at compile time, so the receiver
//! never tests the carrier.
//!
//! Either way the message is moved exactly once — the sender never drops it
//! ([`ManuallyDrop`]) and the receiver takes it.
//!
//! # Why never the message's bytes
//!
//! An earlier version copied any message of up to a word into the register as an
//! integer. That is undefined behaviour for two reasons that Miri shows: an enum's
//! unused payload bytes and a struct's padding are uninitialised, and an integer
//! may not hold uninitialised bytes; and a pointer inside the message (a `Box`, a
//! reference) comes back from an integer without its provenance. The carrier is
//! therefore a pointer, made from the message's address (so it keeps the
//! provenance) or from a tag with no provenance at all, and never from the
//! message's bytes. `scripts/miri.sh` runs this module's tests under Miri.

use std::mem::{self, ManuallyDrop};
use std::panic;
use std::ptr::{self, NonNull};

/// What a switch carries: a tag or the address of a message (module docs).
pub(crate) type Carrier = *mut u8;

/// What a resumer sends into a fiber.
pub(super) enum Inbound<I> {
    /// Go on (or start) with this value.
    Resume(I),
    /// The fiber is being dropped: unwind its stack.
    Unwind,
}

/// What a fiber sends back to its resumer. A panic's payload does not travel in
/// the message: it waits in [`PanicSlot`], and `Panicked` says to collect it.
pub(super) enum Outbound<Y, R> {
    Yield(Y),
    Return(R),
    Panicked,
    /// The fiber was dropped and has finished unwinding (or was dropped before it
    /// ever ran).
    Unwound,
}

/// A message, and whether (and how) it travels as a tag.
pub(super) trait Message: Sized {
    /// Whether every value of the type travels as a tag: every variant's
    /// payload is zero-sized.
    const ALWAYS_TAGGED: bool;

    /// This value's tag (for a type that is [`ALWAYS_TAGGED`](Message::ALWAYS_TAGGED)).
    fn tag(&self) -> usize;

    /// The value that [`tag`](Message::tag) returned `tag` for.
    ///
    /// # Safety
    ///
    /// The type must be always tagged, and `tag` must come from `tag()` on a
    /// value of it that its owner gave up (never dropped): the zero-sized value
    /// it carried is moved here.
    unsafe fn untag(tag: usize) -> Self;
}

/// The zero-sized value of a variant that travelled as a tag.
///
/// # Safety
///
/// `T` must be zero-sized, and a value of it must have been given up by its
/// owner (moving a zero-sized value copies nothing, so this *is* the move).
unsafe fn zero_sized<T>() -> T {
    debug_assert_eq!(mem::size_of::<T>(), 0);
    // SAFETY: a dangling, aligned pointer is valid for reads of a zero-sized
    // type; the caller vouches that a value existed and was given up.
    unsafe { NonNull::<T>::dangling().as_ptr().read() }
}

impl<I> Message for Inbound<I> {
    const ALWAYS_TAGGED: bool = mem::size_of::<I>() == 0;

    #[inline(always)]
    fn tag(&self) -> usize {
        match self {
            Inbound::Resume(_) => 0,
            Inbound::Unwind => 1,
        }
    }

    #[inline(always)]
    unsafe fn untag(tag: usize) -> Self {
        match tag {
            // SAFETY: tag 0 is a `Resume` of a zero-sized `I` (the type is always
            // tagged), given up by the sender.
            0 => Inbound::Resume(unsafe { zero_sized() }),
            _ => Inbound::Unwind,
        }
    }
}

impl<Y, R> Message for Outbound<Y, R> {
    const ALWAYS_TAGGED: bool = mem::size_of::<Y>() == 0 && mem::size_of::<R>() == 0;

    #[inline(always)]
    fn tag(&self) -> usize {
        match self {
            Outbound::Yield(_) => 0,
            Outbound::Return(_) => 1,
            Outbound::Panicked => 2,
            Outbound::Unwound => 3,
        }
    }

    #[inline(always)]
    unsafe fn untag(tag: usize) -> Self {
        match tag {
            // SAFETY: tag 0 carries a zero-sized `Y` (the type is always tagged),
            // given up by the sender.
            0 => Outbound::Yield(unsafe { zero_sized() }),
            // SAFETY: tag 1 carries a zero-sized `R`, likewise.
            1 => Outbound::Return(unsafe { zero_sized() }),
            2 => Outbound::Panicked,
            3 => Outbound::Unwound,
            // Not `_ => Unwound`: mapping every other number to 3 cost a compare
            // and a conditional move on every resume; this way the variant is
            // the register as it came back.
            // SAFETY: the caller passes what `tag()` gave, one of the four above.
            _ => unsafe { std::hint::unreachable_unchecked() },
        }
    }
}

/// The carrier for `message`. `message` must stay where it is, untouched, until
/// the receiver has called [`receive`] on the carrier.
#[inline(always)]
pub(super) fn send<T: Message>(message: &ManuallyDrop<T>) -> Carrier {
    if T::ALWAYS_TAGGED {
        ptr::without_provenance_mut(message.tag())
    } else {
        ptr::from_ref::<T>(message).cast_mut().cast()
    }
}

/// Takes the message carried by `carrier`.
///
/// # Safety
///
/// `carrier` must come from [`send`] with the same `T`, be received once, and
/// (for a message sent by address) its sender must not have resumed yet.
#[inline(always)]
pub(super) unsafe fn receive<T: Message>(carrier: Carrier) -> T {
    if T::ALWAYS_TAGGED {
        // SAFETY: a tag made by `send` from a `T` its sender gave up.
        unsafe { T::untag(carrier.addr()) }
    } else {
        // SAFETY: the carrier is the address of a live `T` that nobody else
        // reads and its owner never drops; it keeps that address's provenance.
        unsafe { carrier.cast::<T>().read() }
    }
}

/// The panic payload that unwinds a suspended fiber being dropped. It is thrown
/// with `resume_unwind`, so the panic hook does not print it.
pub(super) struct ForcedUnwind;

/// Raises [`ForcedUnwind`] in the current fiber.
pub(super) fn forced_unwind() -> ! {
    panic::resume_unwind(Box::new(ForcedUnwind))
}

/// Where the payload of the panic that just ended a fiber waits, between the
/// fiber's last switch and its resumer taking it. It is not kept in the fiber's
/// header because after a transfer the resumer may not know which fiber ended.
///
/// It is a thread-local without a destructor (a raw pointer, not a `Box`), so it
/// can be used at any time, during thread-local destruction too: a suspended
/// fiber kept in another thread-local is dropped then, and must be able to end.
pub(super) struct PanicSlot;

type Payload = Box<dyn std::any::Any + Send>;

thread_local! {
    static PANIC_IN_FLIGHT: std::cell::Cell<*mut Payload> = const { std::cell::Cell::new(ptr::null_mut()) };
}

impl PanicSlot {
    /// Keeps `payload` for the resumer (called on the ending fiber's stack).
    pub(super) fn put(payload: Payload) {
        let old = PANIC_IN_FLIGHT.replace(Box::into_raw(Box::new(payload)));
        debug_assert!(old.is_null(), "a fiber's panic was never collected");
    }

    /// The payload that the fiber which just reported `Outbound::Panicked` put.
    pub(super) fn take() -> Payload {
        let raw = PANIC_IN_FLIGHT.replace(ptr::null_mut());
        assert!(
            !raw.is_null(),
            "fibra: a fiber that reports a panic stored its payload"
        );
        // SAFETY: `put` made it with `Box::into_raw`, and it is taken once.
        *unsafe { Box::from_raw(raw) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip<T: Message>(value: T) -> T {
        let held = ManuallyDrop::new(value);
        let carrier = send(&held);
        // SAFETY: received once, while `held` is still in place.
        unsafe { receive::<T>(carrier) }
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

    /// The three messages that Miri found undefined behaviour in when they
    /// travelled as integers: uninitialised payload bytes (`Unwind` of a `u32`,
    /// `Yield` of a `u8`) and a pointer that lost its provenance (`Box`).
    #[test]
    fn uninitialised_bytes_and_pointers_survive() {
        assert!(matches!(
            round_trip(Inbound::<u32>::Unwind),
            Inbound::Unwind
        ));
        assert!(matches!(
            round_trip(Outbound::<u8, u32>::Yield(1)),
            Outbound::Yield(1)
        ));
        match round_trip(Inbound::<Box<u32>>::Resume(Box::new(5))) {
            Inbound::Resume(b) => assert_eq!(*b, 5),
            Inbound::Unwind => panic!("wrong variant"),
        }
        let text = String::from("borrowed");
        match round_trip(Outbound::<&str, (u8, u64)>::Yield(&text)) {
            Outbound::Yield(s) => assert_eq!(s, "borrowed"),
            _ => panic!("wrong variant"),
        }
        assert!(matches!(
            round_trip(Outbound::<(u8, u64), ()>::Return(())),
            Outbound::Return(())
        ));
    }

    #[test]
    fn zero_sized_messages_travel_as_tags() {
        let unit = ManuallyDrop::new(Inbound::<()>::Resume(()));
        assert_eq!(send(&unit).addr(), 0);
        let done = ManuallyDrop::new(Outbound::<(), ()>::Return(()));
        assert_eq!(send(&done).addr(), 1);
        let unwound = ManuallyDrop::new(Outbound::<(), ()>::Unwound);
        assert_eq!(send(&unwound).addr(), 3);
        let sized = ManuallyDrop::new(Inbound::<u8>::Resume(1));
        assert_eq!(send(&sized), ptr::from_ref(&*sized).cast_mut().cast());
    }

    /// `untag` takes each of the four tags back to its own variant (it trusts
    /// the tag to be one of them).
    #[test]
    fn every_tag_comes_back_as_its_variant() {
        let tags = [
            Outbound::<(), ()>::Yield(()),
            Outbound::Return(()),
            Outbound::Panicked,
            Outbound::Unwound,
        ]
        .map(|message| round_trip(message).tag());
        assert_eq!(tags, [0, 1, 2, 3]);
        assert!(matches!(round_trip(Inbound::<()>::Unwind), Inbound::Unwind));
    }

    #[test]
    fn a_panic_payload_waits_in_the_slot() {
        PanicSlot::put(Box::new("boom"));
        assert_eq!(*PanicSlot::take().downcast::<&str>().unwrap(), "boom");
    }
}
