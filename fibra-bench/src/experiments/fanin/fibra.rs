//! Fan-in on fibra: N Ractors sending to one on the process-wide pool.

use super::Size;
use crate::measure::Timed;
use fibra::ractor::{Context, Ractor};
use std::time::Instant;

/// Creates the receiver and `size.senders` sender Ractors, each waiting for a
/// start message; starts the clock and the senders, and stops the clock when
/// the receiver has every message (its join returns).
pub fn fanin(size: Size) -> Result<Timed, String> {
    let each = size.each();
    let total = size.total();
    let receiver: Ractor<u64, (), u64> = Ractor::new(move |ctx: &Context<u64>| {
        let mut sum = 0;
        for _ in 0..total {
            sum += ctx
                .receive()
                .expect("the senders hold handles until they are done");
        }
        sum
    });
    let senders: Vec<Ractor<()>> = (0..size.senders)
        .map(|_| {
            let to = receiver.clone();
            Ractor::new(move |ctx: &Context<()>| {
                if ctx.receive().is_ok() {
                    for i in 0..each {
                        to.send(i).expect("the receiver waits for every message");
                    }
                }
            })
        })
        .collect();
    let start = Instant::now();
    for sender in &senders {
        sender.send(()).map_err(|_| "a sender ended early")?;
    }
    let sum = receiver.join().map_err(|e| format!("receiver: {e}"))?;
    let elapsed = start.elapsed();
    for sender in senders {
        sender.join().map_err(|e| format!("sender: {e}"))?;
    }
    super::check_sum(size, sum)?;
    Ok(Timed::new(total, elapsed))
}
