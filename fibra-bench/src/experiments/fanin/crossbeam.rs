//! Fan-in on crossbeam-channel: N OS threads sending to this one.

use super::Size;
use crate::measure::Timed;
use crossbeam_channel::unbounded;
use std::sync::{Arc, Barrier};
use std::thread;
use std::time::Instant;

/// `size.senders` OS threads, started together by a barrier, each sending its
/// numbers on one unbounded channel (as a Ractor's mailbox) that this thread
/// receives from; the clock runs from the barrier to the last message.
pub fn fanin(size: Size) -> Result<Timed, String> {
    let each = size.each();
    let (to, inbox) = unbounded::<u64>();
    let start = Arc::new(Barrier::new(size.senders as usize + 1));
    let senders: Vec<thread::JoinHandle<()>> = (0..size.senders)
        .map(|_| {
            let (to, start) = (to.clone(), Arc::clone(&start));
            thread::spawn(move || {
                start.wait();
                for i in 0..each {
                    to.send(i).expect("the receiver waits for every message");
                }
            })
        })
        .collect();
    drop(to);
    start.wait();
    let clock = Instant::now();
    let mut sum = 0;
    for _ in 0..size.total() {
        sum += inbox.recv().map_err(|_| "every sender hung up early")?;
    }
    let elapsed = clock.elapsed();
    for sender in senders {
        sender.join().map_err(|_| "a sender panicked")?;
    }
    super::check_sum(size, sum)?;
    Ok(Timed::new(size.total(), elapsed))
}
