//! E3's IO half, from the seed experiments: three functions sleep 3, 2 and 5
//! seconds. One after another they take the sum; in three green threads — all
//! on one OS thread — they take only the longest, because
//! [`fibra::time::sleep`] parks only the green thread that sleeps.
//!
//! ```sh
//! cargo run -p fibra --example three_sleeps          # 0.3, 0.2 and 0.5 s
//! cargo run -p fibra --example three_sleeps -- --full # the seed's 3, 2 and 5 s
//! ```

use fibra::time::sleep;
use std::time::{Duration, Instant};

fn main() {
    let full = std::env::args().any(|arg| arg == "--full");
    let unit = if full {
        Duration::from_secs(1)
    } else {
        Duration::from_millis(100)
    };
    let sleeps = [3, 2, 5].map(|n| unit * n);

    fibra::run(move || {
        let start = Instant::now();
        for duration in sleeps {
            sleep(duration);
        }
        println!("one after another: {:.2?} (the sum)", start.elapsed());

        let start = Instant::now();
        let threads = sleeps.map(|duration| fibra::spawn(move || sleep(duration)));
        for thread in threads {
            thread.join().expect("a sleep does not fail");
        }
        println!(
            "in three green threads on one OS thread: {:.2?} (the longest)",
            start.elapsed()
        );
    });
}
