//! Prints a dump of a small program: a few clerks parked on a channel, a
//! sleeper, a Ractor waiting for mail on a worker thread, and one whose mail
//! piles up while it waits for a taker.
//!
//! ```text
//! cargo run --example dump
//! ```

use fibra::ractor::Ractor;
use fibra::runtime::{self, ThreadBuilder};
use fibra::sync::channel;
use std::time::Duration;

/// Where the clerks wait: it shows in their backtrace.
#[inline(never)]
fn wait_for_orders(orders: channel::Receiver<u32>) -> u32 {
    orders.recv().unwrap_or(0)
}

fn main() {
    fibra::run(|| {
        let (orders, rx) = channel::unbounded::<u32>();
        let mut clerks: Vec<_> = (0..3)
            .map(|i| {
                let rx = rx.clone();
                ThreadBuilder::new()
                    .name(format!("clerk-{i}"))
                    .spawn(move || wait_for_orders(rx))
                    .unwrap()
            })
            .collect();
        clerks.push(fibra::spawn(|| {
            fibra::time::sleep(Duration::from_millis(300));
            0
        }));
        let mailbox = Ractor::<u32, (), u32>::new(|cx| cx.receive().unwrap_or(0));
        let backlog = Ractor::<u32, &str, ()>::new(|cx| drop(cx.yield_value("ready")));
        for n in 0..3 {
            backlog.send(n).unwrap();
        }
        fibra::time::sleep(Duration::from_millis(20));
        println!("{}", runtime::dump());
        drop(orders);
        mailbox.send(1).unwrap();
        mailbox.join().unwrap();
        backlog.take().unwrap();
        backlog.join().unwrap();
        for clerk in clerks {
            clerk.join().unwrap();
        }
    });
}
