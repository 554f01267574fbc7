//! `fibra::blocking` with a real blocking driver against a real server: the
//! `redis` crate's synchronous client and a `redis-server` that the test starts
//! on a loopback port. A thousand green threads talk to it through `blocking`
//! while a ticker green thread keeps ticking on the same runtime.
//!
//! Without `redis-server` on `PATH` (Debian: `apt-get install redis-server`;
//! CI installs it) the test says it skipped and passes.

#[path = "support/redis_server.rs"]
mod redis_server;

use redis::Commands;
use redis_server::RedisServer;
use std::cell::Cell;
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

/// Green threads, each with its own connection.
const CLIENTS: usize = 1_000;

/// How long a blocking call waits for the ticker to tick before it calls the
/// runtime stalled. Only a failing run ever waits this long, and only once:
/// the calls after it fail at once.
const STALLED_AFTER: Duration = Duration::from_secs(30);

/// The ticker's count, which pool threads can wait on.
#[derive(Default)]
struct Ticks {
    count: Mutex<u64>,
    ticked: Condvar,
    stalled: AtomicBool,
}

impl Ticks {
    fn tick(&self) {
        *self.count.lock().unwrap() += 1;
        self.ticked.notify_all();
    }

    fn count(&self) -> u64 {
        *self.count.lock().unwrap()
    }

    /// Waits, on a pool thread, until the count has moved past `seen`: proof
    /// that the runtime went on running green threads while this blocking
    /// call held its OS thread.
    fn wait_past(&self, seen: u64) {
        let count = self.count.lock().unwrap();
        let wait = if self.stalled.load(Ordering::Relaxed) {
            Duration::ZERO
        } else {
            STALLED_AFTER
        };
        let (count, waited) = self
            .ticked
            .wait_timeout_while(count, wait, |count| *count == seen)
            .unwrap();
        drop(count);
        if waited.timed_out() {
            self.stalled.store(true, Ordering::Relaxed);
            panic!("the ticker did not tick while blocking work ran: the runtime is stalled");
        }
    }
}

#[test]
fn a_thousand_green_threads_use_a_sync_redis_client_through_blocking() {
    let Some(server) = RedisServer::start().expect("redis-server starts") else {
        println!("skipped: redis-server not found (apt-get install redis-server)");
        return;
    };
    let client = redis::Client::open(server.url()).expect("a valid URL");
    let ticks = Arc::new(Ticks::default());

    let (matched, ticks_during_work) = fibra::run(move || {
        let working = Rc::new(Cell::new(true));
        let ticker = fibra::spawn({
            let (ticks, working) = (ticks.clone(), working.clone());
            move || {
                while working.get() {
                    ticks.tick();
                    fibra::time::sleep(Duration::from_millis(1));
                }
            }
        });
        let before = ticks.count();
        let clients: Vec<_> = (0..CLIENTS)
            .map(|i| {
                let (client, ticks) = (client.clone(), ticks.clone());
                fibra::spawn(move || {
                    let key = format!("fibra:test:{i}");
                    let value = format!("value of client {i}");
                    // The driver blocks its OS thread in connect, write and
                    // read: all of it goes to the pool.
                    let got: String = fibra::blocking(move || {
                        let seen = ticks.count();
                        let mut connection = client.get_connection().expect("connects");
                        let () = connection.set(&key, &value).expect("SET");
                        let got = connection.get(&key).expect("GET");
                        ticks.wait_past(seen);
                        got
                    });
                    got == format!("value of client {i}")
                })
            })
            .collect();
        let matched = clients
            .into_iter()
            .map(|client| client.join().expect("a client green thread ends"))
            .filter(|&matched| matched)
            .count();
        let ticks_during_work = ticks.count() - before;
        working.set(false);
        ticker.join().expect("the ticker ends");
        (matched, ticks_during_work)
    });

    assert_eq!(matched, CLIENTS, "every GET returns what its SET stored");
    // Each blocking call also saw the ticker tick while it held its pool
    // thread (`Ticks::wait_past`), so the ticker ticked throughout the work.
    println!(
        "{CLIENTS} clients matched their SET and GET; the ticker ticked {ticks_during_work} times meanwhile"
    );
    drop(server);
}

/// Whether the server is there is looked up on `PATH`, not judged from a spawn
/// (under qemu-user the spawn of a missing program succeeds and the child
/// exits 127, which read as a server that failed to start).
#[test]
fn a_missing_server_is_looked_up_not_spawned() {
    assert!(redis_server::on_path("sh"));
    assert!(!redis_server::on_path("fibra-no-such-program"));
}
