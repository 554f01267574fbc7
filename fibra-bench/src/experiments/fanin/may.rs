//! Fan-in on the `may` crate, in a process of its own
//! ([`crate::experiments::may_child`] says why): `fibra-bench --child
//! ractor-fanin <N> <M>`, printing the fan-in line of peers/README.md. N
//! coroutines, each waiting for the start on a channel of its own, send their
//! numbers on one unbounded `may::sync::mpsc` channel (as a Ractor's mailbox)
//! that a receiving coroutine sums; a worker per core.

use super::Size;
use crate::experiments::may_child;
use crate::peers::protocol::count;
use may::sync::mpsc::channel;
use std::thread;
use std::time::Instant;

pub fn main(args: &[String]) -> Result<(), String> {
    let usage = "usage: fibra-bench --child ractor-fanin <N> <M>   (1 <= N <= M)";
    let [senders, messages] = args else {
        return Err(usage.into());
    };
    let size = Size {
        senders: count(senders).filter(|&n| n >= 1).ok_or(usage)?,
        messages: count(messages).ok_or(usage)?,
    };
    if size.senders > size.messages {
        return Err(usage.into());
    }
    may_child::start(thread::available_parallelism().map_or(1, |n| n.get()));
    let each = size.each();
    let (to, inbox) = channel::<u64>();
    let mut starts = Vec::new();
    let mut handles = Vec::new();
    for _ in 0..size.senders {
        let (start, started) = channel::<()>();
        let to = to.clone();
        starts.push(start);
        handles.push(may_child::spawn(move || {
            if started.recv().is_ok() {
                for i in 0..each {
                    to.send(i).expect("the receiver waits for every message");
                }
            }
        }));
    }
    drop(to);
    let receiver = may_child::spawn(move || {
        let clock = Instant::now();
        for start in &starts {
            start.send(()).map_err(|_| "a sender ended early")?;
        }
        let mut sum = 0;
        for _ in 0..size.total() {
            sum += inbox.recv().map_err(|_| "every sender hung up early")?;
        }
        Ok::<_, String>((sum, clock.elapsed()))
    });
    let (sum, elapsed) = receiver.join().map_err(|_| "the receiver panicked")??;
    for handle in handles {
        handle.join().map_err(|_| "a sender panicked")?;
    }
    super::check_sum(size, sum)?;
    println!(
        "senders={} messages={} ns={}",
        size.senders,
        size.total(),
        elapsed.as_nanos()
    );
    Ok(())
}
