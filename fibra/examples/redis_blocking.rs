//! A blocking database driver from green threads: the `redis` crate's
//! synchronous client, called through [`fibra::blocking`], from 1,000 green
//! threads at once, while a ticker green thread on the same runtime keeps
//! ticking every millisecond.
//!
//! The driver blocks its OS thread in every connect, write and read. Called
//! straight from a green thread it would stall the whole runtime (the ticker
//! too); through `fibra::blocking` each call runs on fibra's pool of OS
//! threads and parks only the green thread that made it.
//!
//! ```sh
//! cargo run -p fibra --example redis_blocking
//! REDIS_URL=redis://127.0.0.1:6379/ cargo run -p fibra --example redis_blocking
//! ```
//!
//! With `REDIS_URL` set it talks to that server (and deletes the keys it
//! wrote); without it, it starts a throwaway `redis-server` from `PATH` on a
//! free loopback port (Debian: `apt-get install redis-server`) and stops it
//! at the end.
//!
//! The pool grows to hundreds of OS threads here. On a machine with few cores
//! they can keep the runtime's own OS thread off the CPU for a while; a debug
//! build's stall line (`fibra: green thread … has run for …`) then names the
//! green thread that happened to be running, though it called nothing that
//! blocks.

#[path = "../tests/support/redis_server.rs"]
mod redis_server;

use redis::Commands;
use redis_server::RedisServer;
use std::cell::Cell;
use std::process::ExitCode;
use std::rc::Rc;
use std::time::{Duration, Instant};

/// Green threads, each a client with its own connection.
const CLIENTS: usize = 1_000;
/// SET/GET pairs each client makes.
const ROUNDS: usize = 10;

fn main() -> ExitCode {
    // Keep a server we started alive until the end of `main`.
    let (url, _server) = match std::env::var("REDIS_URL") {
        Ok(url) => (url, None),
        Err(_) => match RedisServer::start() {
            Ok(Some(server)) => (server.url(), Some(server)),
            Ok(None) => {
                eprintln!(
                    "redis_blocking: set REDIS_URL, or install redis-server \
                     (apt-get install redis-server) to let the example start one"
                );
                return ExitCode::from(2);
            }
            Err(e) => {
                eprintln!("redis_blocking: cannot start redis-server: {e}");
                return ExitCode::FAILURE;
            }
        },
    };
    let client = match redis::Client::open(url.as_str()) {
        Ok(client) => client,
        Err(e) => {
            eprintln!("redis_blocking: bad REDIS_URL {url:?}: {e}");
            return ExitCode::from(2);
        }
    };
    match fibra::run(|| clients_and_a_ticker(client)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("redis_blocking: {url}: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Runs the clients and the ticker on this runtime and reports what they did.
fn clients_and_a_ticker(client: redis::Client) -> redis::RedisResult<()> {
    let working = Rc::new(Cell::new(true));
    let ticks = Rc::new(Cell::new(0u64));
    let ticker = fibra::spawn({
        let (working, ticks) = (working.clone(), ticks.clone());
        move || {
            while working.get() {
                fibra::time::sleep(Duration::from_millis(1));
                ticks.set(ticks.get() + 1);
            }
        }
    });

    let start = Instant::now();
    let clients: Vec<_> = (0..CLIENTS)
        .map(|id| {
            let client = client.clone();
            fibra::spawn(move || one_client(client, id))
        })
        .collect();
    let mut outcome = Ok(());
    for client in clients {
        let result = client.join().expect("a client does not panic");
        outcome = outcome.and(result);
    }
    let elapsed = start.elapsed();
    working.set(false);
    ticker.join().expect("the ticker does not panic");
    outcome?;

    println!(
        "{CLIENTS} green threads made {} SET/GET pairs through fibra::blocking in {elapsed:.2?}; \
         every GET returned its SET",
        CLIENTS * ROUNDS,
    );
    println!(
        "meanwhile a 1 ms ticker on the same OS thread ticked {} times",
        ticks.get()
    );
    Ok(())
}

/// One client: connects, then makes [`ROUNDS`] SET/GET pairs and deletes its
/// key. Each call hands the connection to the blocking pool and gets it back.
fn one_client(client: redis::Client, id: usize) -> redis::RedisResult<()> {
    let mut connection = fibra::blocking(move || client.get_connection())?;
    let key = format!("fibra-example:{}:{id}", std::process::id());
    for round in 0..ROUNDS {
        let value = format!("client {id}, round {round}");
        let (returned, got) = fibra::blocking({
            let (key, value) = (key.clone(), value.clone());
            move || {
                let got: redis::RedisResult<String> = connection
                    .set::<_, _, ()>(&key, &value)
                    .and_then(|()| connection.get(&key));
                (connection, got)
            }
        });
        connection = returned;
        let got = got?;
        assert_eq!(got, value, "GET returns what SET stored");
    }
    fibra::blocking(move || connection.del::<_, ()>(&key))
}
