//! TCP echo over loopback: one server (an accept loop and a thread per
//! connection that writes back what it reads) and 1,000 client connections,
//! all in one process on one OS thread, each client making R round trips of a
//! small message (write it, read it back whole). The rate is round trips per
//! second, and the cost is the process's CPU time per round trip. Connections
//! are opened before the clocks start. Every runtime runs in a process of its
//! own (fibra's, tokio's, may's and monoio's as [`child`]), so that each one's
//! CPU time is read the same way: by the process itself, over its round trips.

mod child;
mod fibra;
mod may;
#[cfg(target_os = "linux")]
mod monoio;
mod tokio;

use super::rates::{self, Plan, Runner, Runtime};
use super::{Experiment, Section};
use crate::chart::Chart;
use crate::cpu::{self, us_each};
use crate::ctx::{Ctx, RUNS};
use crate::measure::{Outcome, Runs, Timed};
use crate::peers::Launcher;
use crate::peers::protocol::parse_line;
use crate::record::{self, Record};
use crate::report::{SPREAD_NOTE, Table, eng, grouped, short};
use std::io::{self, Read, Write};
use std::time::{Duration, Instant};

pub const EXPERIMENT: Experiment = Experiment {
    name: "echo",
    description: "TCP echo round trips over loopback, 1,000 concurrent connections",
    default: true,
    runtimes: || rates::names(&runtimes()),
    charts: &[
        Chart {
            variant: "",
            metrics: &["round_trips_per_s"],
        },
        Chart {
            variant: "",
            metrics: &["cpu_us_per_round_trip"],
        },
    ],
    run,
    // The echo on fibra, tokio, may or monoio, in a process of its own.
    child: Some(child::main),
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
        round_trips: ctx.size(10, 50, 1000),
        bytes: 64,
    }
}

/// The size of the buffer each server connection reads into.
pub const SERVER_BUFFER: usize = 1024;

fn runtimes() -> Vec<Runtime<Size, Echoed>> {
    vec![
        Runtime {
            name: "fibra",
            how: "one fibra::run: fibra::net sockets, a green thread per connection on each \
                  side; in a process of its own, as every runtime",
            runner: Runner::Mode(Launcher::Child(EXPERIMENT.name), "fibra"),
        },
        #[cfg(target_os = "linux")]
        Runtime {
            name: "fibra io_uring",
            how: "as fibra, on a runtime whose streams receive through io_uring \
                  (Builder::io_uring: a multishot receive per stream into shared provided \
                  buffers, sends and the rest on epoll); a kernel that refuses io_uring runs \
                  it on epoll",
            runner: Runner::Mode(Launcher::Child(EXPERIMENT.name), "fibra-io-uring"),
        },
        Runtime {
            name: "tokio",
            how: "one current-thread runtime: tokio::net sockets, a task per connection on \
                  each side",
            runner: Runner::Mode(Launcher::Child(EXPERIMENT.name), "tokio"),
        },
        Runtime {
            name: "go",
            how: "net package, a goroutine per connection on each side, GOMAXPROCS=1",
            runner: Runner::External(Launcher::Go { module: "go/echo" }),
        },
        Runtime {
            name: "may",
            how: "may::net sockets, a may coroutine per connection on each side, one worker \
                  (set_workers(1))",
            runner: Runner::Mode(Launcher::Child(EXPERIMENT.name), "may"),
        },
        #[cfg(target_os = "linux")]
        Runtime {
            name: "monoio",
            how: "one monoio runtime on its io_uring driver (built without its epoll \
                  fallback: no io_uring, no row): monoio::net sockets with owned buffers, a \
                  task per connection on each side",
            runner: Runner::Mode(Launcher::Child(EXPERIMENT.name), "monoio"),
        },
    ]
}

/// One run's figures: the round trips and their wall time, and the CPU time
/// the process spent meanwhile (client and server: both are in it).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Echoed {
    pub timed: Timed,
    pub cpu_ns: u64,
}

impl Echoed {
    /// Microseconds of CPU time per round trip.
    fn cpu_us_each(self) -> f64 {
        us_each(Duration::from_nanos(self.cpu_ns), self.timed.count).unwrap_or(0.0)
    }
}

crate::measure::rated_by_timed!(Echoed);

/// The wall clock and this process's CPU time, read as the round trips start.
pub struct Clocks {
    wall: Instant,
    cpu: Duration,
}

impl Clocks {
    pub fn start() -> Clocks {
        Clocks {
            wall: Instant::now(),
            cpu: cpu::of_this_process(),
        }
    }

    /// The wall time and the process's CPU time since [`Clocks::start`].
    pub fn stop(self) -> (Duration, Duration) {
        let cpu = cpu::of_this_process().saturating_sub(self.cpu);
        (self.wall.elapsed(), cpu)
    }
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
    let rows = rates::rows(&results, |e| {
        let t = e.timed;
        vec![
            grouped(t.count),
            eng(t.per_sec()),
            short(t.ns_each() / 1e3),
            short(e.cpu_us_each()),
        ]
    });
    notes.push(CPU_NOTE.into());
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
            "CPU µs/round trip",
            "vs fibra",
            "spread",
        ],
        rows,
        notes,
    });
    section.records.extend(records(size, &results));
    section
}

/// What the CPU column is, for the table's notes.
const CPU_NOTE: &str = "CPU µs/round trip = the process's user + system CPU time over its \
                        timed round trips (getrusage(RUSAGE_SELF), read by the process \
                        itself as its clock starts and stops) ÷ the round trips; client and \
                        server share the process, so it is the cost of both ends";

/// Parses a peer's `round_trips=<int> ns=<int> cpu_ns=<int>`, which must have
/// made `total`.
fn parse(stdout: &str, total: u64) -> Result<Echoed, String> {
    let fields = parse_line(stdout, &["round_trips", "ns", "cpu_ns"]).map_err(|e| e.to_string())?;
    match (fields[0], fields[1], fields[2]) {
        (count, ..) if count != total => Err(format!("made {count} round trips, not {total}")),
        (count, ns, cpu_ns) => Ok(Echoed {
            timed: Timed { count, ns },
            cpu_ns,
        }),
    }
}

fn records(size: Size, results: &[(&str, Outcome<Runs<Echoed>>)]) -> Vec<Record> {
    let variant = format!(
        "connections={} round_trips={} bytes={}",
        size.connections, size.round_trips, size.bytes
    );
    let metrics = ("round_trips_per_s", "ns_per_round_trip");
    let mut records = rates::records(EXPERIMENT.name, &variant, results, metrics);
    records.extend(record::of_measured(
        EXPERIMENT.name,
        &variant,
        results,
        |e| vec![("cpu_us_per_round_trip", e.cpu_us_each(), "µs")],
    ));
    records
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_peer_line() {
        let echoed = parse(
            "round_trips=200000 ns=1500000000 cpu_ns=3000000000\n",
            200_000,
        );
        assert_eq!(
            echoed,
            Ok(Echoed {
                timed: Timed {
                    count: 200_000,
                    ns: 1_500_000_000
                },
                cpu_ns: 3_000_000_000,
            })
        );
        // 3 s of CPU over 200,000 round trips: 15 µs each.
        assert!((echoed.unwrap().cpu_us_each() - 15.0).abs() < 1e-9);
        assert_eq!(
            parse("round_trips=5 ns=1 cpu_ns=1", 6),
            Err("made 5 round trips, not 6".into())
        );
        assert!(parse("round_trips=6 ns=1", 6).is_err());
    }

    #[test]
    fn records_the_cpu_per_round_trip_of_the_best_run() {
        let run = |ns, cpu_ns| Echoed {
            timed: Timed { count: 1_000, ns },
            cpu_ns,
        };
        let runs = Runs::one(run(2_000_000, 4_000_000)).and(run(1_000_000, 3_000_000));
        let size = Size {
            connections: 10,
            round_trips: 100,
            bytes: 64,
        };
        let records = records(size, &[("fibra", Outcome::Measured(runs))]);
        let cpu = records
            .iter()
            .find(|r| r.metric == "cpu_us_per_round_trip")
            .unwrap();
        // The faster run's 3 ms over 1,000 round trips; the other's 4 ms.
        assert_eq!((cpu.value, cpu.unit), (3.0, "µs"));
        assert!((cpu.spread.unwrap() - 1.0 / 3.0).abs() < 1e-9);
    }

    #[test]
    fn fibra_and_tokio_echo_and_read_their_cpu_time() {
        let size = Size {
            connections: 20,
            round_trips: 5,
            bytes: 64,
        };
        crate::experiments::limits::raise_open_files(2 * size.connections as u64 + 64).unwrap();
        for echo in [fibra::echo, tokio::echo] {
            let (wall, cpu) = echo(size).unwrap();
            assert!(wall > Duration::ZERO);
            // At most what the whole test process has spent so far.
            assert!(cpu <= cpu::of_this_process());
        }
    }

    /// Where the kernel refuses io_uring (a container's seccomp profile, or
    /// `kernel.io_uring_disabled`), the test says so and checks nothing: the
    /// benchmark's row fails there with the same reason.
    #[cfg(target_os = "linux")]
    #[test]
    fn monoio_echoes_on_io_uring_and_reads_its_cpu_time() {
        if let Err(why) = crate::experiments::monoio_runtime::runtime() {
            eprintln!("skipped: {why}");
            return;
        }
        let size = Size {
            connections: 20,
            round_trips: 5,
            bytes: 64,
        };
        crate::experiments::limits::raise_open_files(2 * size.connections as u64 + 64).unwrap();
        let (wall, cpu) = monoio::echo(size).unwrap();
        assert!(wall > Duration::ZERO);
        assert!(cpu <= cpu::of_this_process());
    }
}
