//! [`select`]: taking from whichever of several Ractors offers a value first
//! (Ruby's `Ractor.select`).

use super::error::TakeError;
use super::handle::Ractor;
use super::outbox::Taker;
use crate::runtime::WaitReason;
use crate::runtime::waiter;

/// Takes from whichever of `ractors` offers a value first (Ruby's
/// `Ractor.select`); returns its index with the value, or with the error of a
/// Ractor whose outgoing port is closed.
///
/// ```
/// use fibra::ractor::{Ractor, select};
///
/// let slow = Ractor::new(|ctx: &fibra::ractor::Context<(), &str>| {
///     let _ = ctx.receive(); // offers nothing until told to
/// });
/// let fast = Ractor::new(|ctx: &fibra::ractor::Context<(), &str>| ctx.yield_value("fast").unwrap());
/// assert_eq!(select(&[&slow, &fast]), (1, Ok("fast")));
/// slow.close_incoming();
/// ```
///
/// # Panics
///
/// If `ractors` is empty.
pub fn select<In, Out, R>(ractors: &[&Ractor<In, Out, R>]) -> (usize, Result<Out, TakeError>) {
    assert!(
        !ractors.is_empty(),
        "fibra: select needs at least one Ractor"
    );
    // A place among each one's takers; those left are removed when they
    // drop, however select returns or unwinds.
    let mut takers: Vec<Taker<'_, Out>> = ractors
        .iter()
        .map(|ractor| Taker::new(&ractor.ports.outgoing))
        .collect();
    loop {
        for (index, taker) in takers.iter_mut().enumerate() {
            if let Some(outcome) = taker.try_take() {
                return (index, outcome);
            }
        }
        waiter::wait(WaitReason::RactorSelect);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ractor::{Context, quiet_one};

    /// How many takers wait for `ractor`'s next offer.
    fn takers<In, Out, R>(ractor: &Ractor<In, Out, R>) -> usize {
        ractor.ports.outgoing.takers()
    }

    #[test]
    #[cfg_attr(miri, ignore = "runs green threads: the switch is inline assembly")]
    fn select_leaves_no_taker_behind_in_a_ractor_that_offered_nothing() {
        let quiet = quiet_one();
        let busy = Ractor::new(|ctx: &Context<(), u64>| {
            let mut i = 0;
            while ctx.yield_value(i).is_ok() {
                i += 1;
            }
        });
        for round in 0..1000 {
            // The quiet one comes first, so every select registers there.
            assert_eq!(select(&[&quiet, &busy]), (1, Ok(round)));
            assert_eq!(takers(&quiet), 0, "round {round} left its entry");
        }
        busy.close_outgoing();
        quiet.close_incoming();
    }

    #[test]
    #[cfg_attr(miri, ignore = "runs green threads: the switch is inline assembly")]
    fn a_take_or_select_that_unwinds_leaves_no_taker_behind() {
        let quiet = quiet_one();
        let other = quiet_one();
        let (left_take, left_select) = crate::run({
            let (quiet, other) = (quiet.clone(), other.clone());
            move || {
                let take = crate::spawn({
                    let quiet = quiet.clone();
                    move || quiet.take()
                });
                let select = crate::spawn({
                    let (quiet, other) = (quiet.clone(), other.clone());
                    move || select(&[&quiet, &other])
                });
                crate::runtime::yield_now(); // both wait now
                assert_eq!(takers(&quiet), 2);
                take.cancel();
                assert!(take.join().is_err(), "the take was cancelled");
                let left_take = takers(&quiet);
                select.cancel();
                assert!(select.join().is_err(), "the select was cancelled");
                (left_take, (takers(&quiet), takers(&other)))
            }
        });
        assert_eq!(left_take, 1, "the cancelled take removed its entry");
        assert_eq!(left_select, (0, 0), "the cancelled select removed both");
        quiet.close_incoming();
        other.close_incoming();
    }
}
