//! TCP echo over loopback: one server (an accept loop and a thread per
//! connection that writes back what it reads) and 1,000 client connections,
//! all in one process on one OS thread, each client making R round trips of a
//! small message (write it, read it back whole). The rate is round trips per
//! second. Connections are opened before the clock starts.

mod fibra;
mod may;
mod tokio;

use super::rates::{self, Plan, Runner, Runtime};
use super::{Experiment, Section, limits};
use crate::chart::Chart;
use crate::ctx::{Ctx, RUNS};
use crate::measure::{Outcome, Runs, Timed};
use crate::peers::Launcher;
use crate::peers::protocol::parse_line;
use crate::record::Record;
use crate::report::{SPREAD_NOTE, Table, eng, grouped, short};
use std::io::{self, Read, Write};
use std::time::Duration;

pub const EXPERIMENT: Experiment = Experiment {
    name: "echo",
    description: "TCP echo round trips over loopback, 1,000 concurrent connections",
    default: true,
    runtimes: || rates::names(&runtimes()),
    charts: &[Chart {
        variant: "",
        metrics: &["round_trips_per_s"],
    }],
    run,
    // The echo on may, in a process of its own.
    child: Some(may::main),
};

/// One run's size.
#[derive(Clone, Copy, Debug)]
pub struct Size {
    pub connections: usize,
    /// Round trips per connection.
    pub round_trips: u64,
    /// Bytes per message.
    pub bytes: usize,
}

impl Size {
    fn total(self) -> u64 {
        self.connections as u64 * self.round_trips
    }
}

fn size(ctx: &Ctx) -> Size {
    Size {
        connections: 1000,
        round_trips: ctx.size(10, 200, 1000),
        bytes: 64,
    }
}

/// The size of the buffer each server connection reads into.
pub const SERVER_BUFFER: usize = 1024;

fn runtimes() -> Vec<Runtime<Size>> {
    vec![
        Runtime {
            name: "fibra",
            how: "one fibra::run: fibra::net sockets, a green thread per connection on each side",
            runner: Runner::InProcess(|size| in_process(size, fibra::echo)),
        },
        Runtime {
            name: "tokio",
            how: "one current-thread runtime: tokio::net sockets, a task per connection on \
                  each side",
            runner: Runner::InProcess(|size| in_process(size, tokio::echo)),
        },
        Runtime {
            name: "go",
            how: "net package, a goroutine per connection on each side, GOMAXPROCS=1",
            runner: Runner::External(Launcher::Go { module: "go/echo" }),
        },
        Runtime {
            name: "may",
            how: "may::net sockets, a may coroutine per connection on each side, one worker \
                  (set_workers(1)); in a process of its own, as Go",
            runner: Runner::External(Launcher::Child(EXPERIMENT.name)),
        },
    ]
}

/// Runs `echo` at `size` in this process, with enough open files for both ends
/// of every connection.
fn in_process(size: Size, echo: fn(Size) -> io::Result<Duration>) -> Result<Timed, String> {
    limits::raise_open_files(2 * size.connections as u64 + 64)?;
    let elapsed = echo(size).map_err(|e| e.to_string())?;
    Ok(Timed::new(size.total(), elapsed))
}

/// Writes back what it reads until the client closes: a server connection of
/// the runtimes whose sockets block their green thread (fibra, may) behind
/// `std::io`'s traits.
fn serve(mut conn: impl Read + Write) -> io::Result<()> {
    let mut buf = [0; SERVER_BUFFER];
    loop {
        match conn.read(&mut buf)? {
            0 => return Ok(()),
            n => conn.write_all(&buf[..n])?,
        }
    }
}

/// Sends a message of `size.bytes` bytes and reads it back, `size.round_trips`
/// times: a client connection, as [`serve`] a server one.
fn client(mut stream: impl Read + Write, fill: u8, size: Size) -> io::Result<()> {
    let message = vec![fill; size.bytes];
    let mut back = vec![0; size.bytes];
    for _ in 0..size.round_trips {
        stream.write_all(&message)?;
        stream.read_exact(&mut back)?;
    }
    if back != message {
        return Err(io::Error::other("the echo differs from the message"));
    }
    Ok(())
}

fn run(ctx: &Ctx) -> Section {
    let mut section = Section::default();
    let size = size(ctx);
    let peer_args = [
        size.connections.to_string(),
        size.round_trips.to_string(),
        size.bytes.to_string(),
    ];
    let plan = Plan {
        experiment: EXPERIMENT.name,
        size,
        peer_args: &peer_args,
        parse: &|stdout| parse(stdout, size.total()),
        warm_up: true,
    };
    let (results, mut notes) = rates::measure_all(ctx, &plan, runtimes(), &mut section);
    let rows = rates::rows(&results, |t| {
        vec![grouped(t.count), eng(t.per_sec()), short(t.ns_each() / 1e3)]
    });
    notes.push(SPREAD_NOTE.into());
    notes.push(rates::verdict(&results, &["tokio"]));
    section.tables.push(Table {
        title: format!(
            "echo: {} connections over 127.0.0.1 × {} round trips of {} bytes, client and \
             server in one process on one OS thread; best of {RUNS} runs after a warm-up",
            grouped(size.connections as u64),
            grouped(size.round_trips),
            size.bytes,
        ),
        columns: vec![
            "runtime",
            "round trips",
            "round trips/s",
            "µs/round trip",
            "vs fibra",
            "spread",
        ],
        rows,
        notes,
    });
    section.records.extend(records(size, &results));
    section
}

/// Parses a peer's `round_trips=<int> ns=<int>`, which must have made `total`.
fn parse(stdout: &str, total: u64) -> Result<Timed, String> {
    let fields = parse_line(stdout, &["round_trips", "ns"]).map_err(|e| e.to_string())?;
    match (fields[0], fields[1]) {
        (count, _) if count != total => Err(format!("made {count} round trips, not {total}")),
        (count, ns) => Ok(Timed { count, ns }),
    }
}

fn records(size: Size, results: &[(&str, Outcome<Runs<Timed>>)]) -> Vec<Record> {
    let variant = format!(
        "connections={} round_trips={} bytes={}",
        size.connections, size.round_trips, size.bytes
    );
    let metrics = ("round_trips_per_s", "ns_per_round_trip");
    rates::records(EXPERIMENT.name, &variant, results, metrics)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_peer_line() {
        assert_eq!(
            parse("round_trips=200000 ns=1500000000\n", 200_000),
            Ok(Timed {
                count: 200_000,
                ns: 1_500_000_000
            })
        );
        assert_eq!(
            parse("round_trips=5 ns=1", 6),
            Err("made 5 round trips, not 6".into())
        );
        assert!(parse("round_trips=6", 6).is_err());
    }

    #[test]
    fn fibra_and_tokio_echo() {
        let size = Size {
            connections: 20,
            round_trips: 5,
            bytes: 64,
        };
        for echo in [fibra::echo, tokio::echo] {
            assert_eq!(in_process(size, echo).unwrap().count, 100);
        }
    }
}
