//! Fan-in (the issue "Messages and wake-ups at hardware speed"): N senders
//! send numbers to one receiver, M messages in all (M/N each); the rate is
//! messages received per second, for N = 1, 2, 16 and 1,000. Every runtime
//! uses every core: fibra's Ractors on the process-wide pool (a worker per
//! core), Go with GOMAXPROCS at the number of cores, Erlang with its default
//! schedulers (one per core), crossbeam with an OS thread per sender, may
//! with a worker per core.
//!
//! `ractor-fanin-loaded` runs the same beside a `nice -n 19` busy loop per
//! core (see [`crate::load`]), on request only.

pub(super) mod crossbeam;
mod fibra;
mod may;

use super::rates::{self, Plan, Runner, Runtime};
use super::{Experiment, Section};
use crate::chart::Chart;
use crate::ctx::{Ctx, RUNS};
use crate::load::Load;
use crate::measure::{Outcome, Runs, Timed};
use crate::peers::Launcher;
use crate::peers::protocol::parse_line;
use crate::record::Record;
use crate::report::{SPREAD_NOTE, Table, eng, grouped, short};

pub const EXPERIMENT: Experiment = Experiment {
    name: "ractor-fanin",
    description: "N Ractors sending to one receiver: messages per second, N = 1, 2, 16, 1,000",
    default: true,
    runtimes: || rates::names(&runtimes()),
    charts: &[Chart {
        variant: "",
        metrics: &["messages_per_s"],
    }],
    run,
    // Fan-in on may, in a process of its own.
    child: Some(may::main),
};

/// The same beside a busy loop per core: its own name, so that its tables and
/// records stand apart from the quiet ones, and not in the default run (it
/// takes as long again).
pub const LOADED: Experiment = Experiment {
    name: "ractor-fanin-loaded",
    description: "ractor-fanin beside a `nice -n 19` busy loop per core",
    default: false,
    runtimes: EXPERIMENT.runtimes,
    charts: EXPERIMENT.charts,
    run: run_loaded,
    // may's fan-in runs as ractor-fanin's child.
    child: None,
};

/// The numbers of senders, each with the label of its progress lines.
const SENDERS: [(u64, &str); 4] = [
    (1, "ractor-fanin, 1 sender"),
    (2, "ractor-fanin, 2 senders"),
    (16, "ractor-fanin, 16 senders"),
    (1000, "ractor-fanin, 1,000 senders"),
];

/// Messages in one run, shared out among the senders (every N of
/// [`SENDERS`] divides each).
fn messages(ctx: &Ctx) -> u64 {
    ctx.size(160_000, 500_000, 16_000_000)
}

/// One run's size: `senders` send `messages / senders` numbers each.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Size {
    pub senders: u64,
    pub messages: u64,
}

impl Size {
    /// Numbers each sender sends: 0, 1, … `each() − 1`.
    pub(super) fn each(self) -> u64 {
        self.messages / self.senders.max(1)
    }

    /// Messages the receiver gets.
    pub(super) fn total(self) -> u64 {
        self.each() * self.senders
    }
}

/// Checks the receiver's sum against what the senders sent.
pub(super) fn check_sum(size: Size, sum: u64) -> Result<(), String> {
    let each = size.each();
    let expected = size.senders * (each * each.saturating_sub(1) / 2);
    match sum == expected {
        true => Ok(()),
        false => Err(format!("the messages add up to {sum}, not {expected}")),
    }
}

fn runtimes() -> Vec<Runtime<Size>> {
    vec![
        Runtime {
            name: "fibra",
            how: "a Ractor per sender and one receiving, on the process-wide pool (a worker \
                  per core); Ractor#send to the receiver's mailbox, Context::receive",
            runner: Runner::InProcess(fibra::fanin),
        },
        Runtime {
            name: "crossbeam",
            how: "an OS thread per sender, one unbounded crossbeam-channel channel (as a \
                  Ractor's mailbox), received on the bench's thread",
            runner: Runner::InProcess(crossbeam::fanin),
        },
        Runtime {
            name: "go",
            how: "a goroutine per sender, one channel buffered 4,096 deep (Go has no \
                  unbounded one), GOMAXPROCS = all cores",
            runner: Runner::External(Launcher::Go { module: "go/fanin" }),
        },
        Runtime {
            name: "erlang",
            how: "an Erlang process per sender, `!` to the receiving process's mailbox; \
                  default schedulers (one per core)",
            runner: Runner::External(Launcher::Erlang {
                source: "erlang/fanin.erl",
                flags: &[],
            }),
        },
        Runtime {
            name: "may",
            how: "a may coroutine per sender, one unbounded may::sync::mpsc channel, a \
                  worker per core",
            runner: Runner::External(Launcher::Child(EXPERIMENT.name)),
        },
    ]
}

fn run(ctx: &Ctx) -> Section {
    run_under(ctx, &EXPERIMENT, Load::Quiet)
}

fn run_loaded(ctx: &Ctx) -> Section {
    run_under(ctx, &LOADED, Load::BusyLoops)
}

fn run_under(ctx: &Ctx, experiment: &Experiment, load: Load) -> Section {
    let mut section = Section::default();
    let messages = messages(ctx);
    for (k, (senders, label)) in SENDERS.into_iter().enumerate() {
        let size = Size { senders, messages };
        let peer_args = [senders.to_string(), messages.to_string()];
        let plan = Plan {
            experiment: label,
            size,
            peer_args: &peer_args,
            parse: &|stdout| parse(stdout, size),
            warm_up: true,
        };
        // A peer found missing once is named once.
        let mut found = Section::default();
        let (results, hows) = rates::measure_under(ctx, &plan, runtimes(), &mut found, load);
        if k == 0 {
            section.missing = found.missing;
        }
        let rows = rates::rows(&results, |t| {
            vec![grouped(t.count), eng(t.per_sec()), short(t.ns_each())]
        });
        let mut notes = match k {
            0 => hows,
            _ => Vec::new(),
        };
        notes.push(SPREAD_NOTE.into());
        notes.push(rates::verdict(&results, &["go", "crossbeam", "erlang"]));
        section.tables.push(Table {
            title: format!(
                "{}: {} sending {} messages in all to one receiver; best of {RUNS} runs \
                 after a warm-up{}",
                experiment.name,
                plural(senders),
                grouped(size.total()),
                load.title()
            ),
            columns: vec![
                "runtime",
                "messages",
                "messages/s",
                "ns/message",
                "vs fibra",
                "spread",
            ],
            rows,
            notes,
        });
        section
            .records
            .extend(records(experiment.name, size, &results));
    }
    section
}

/// `1 sender`, `1,000 senders`.
fn plural(senders: u64) -> String {
    match senders {
        1 => "1 sender".into(),
        n => format!("{} senders", grouped(n)),
    }
}

/// Parses a peer's `senders=<int> messages=<int> ns=<int>`, which must be for
/// `size`.
fn parse(stdout: &str, size: Size) -> Result<Timed, String> {
    let f = parse_line(stdout, &["senders", "messages", "ns"]).map_err(|e| e.to_string())?;
    match (f[0], f[1], f[2]) {
        (senders, ..) if senders != size.senders => {
            Err(format!("ran {senders} senders, not {}", size.senders))
        }
        (_, count, _) if count != size.total() => {
            Err(format!("received {count} messages, not {}", size.total()))
        }
        (_, count, ns) => Ok(Timed { count, ns }),
    }
}

fn records(
    experiment: &'static str,
    size: Size,
    results: &[(&str, Outcome<Runs<Timed>>)],
) -> Vec<Record> {
    let variant = format!("senders={} messages={}", size.senders, size.total());
    let metrics = ("messages_per_s", "ns_per_message");
    rates::records(experiment, &variant, results, metrics)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_peer_line() {
        let size = Size {
            senders: 16,
            messages: 2_000_000,
        };
        assert_eq!(
            parse("senders=16 messages=2000000 ns=90000000\n", size),
            Ok(Timed {
                count: 2_000_000,
                ns: 90_000_000
            })
        );
        assert_eq!(
            parse("senders=2 messages=2000000 ns=1", size),
            Err("ran 2 senders, not 16".into())
        );
        assert_eq!(
            parse("senders=16 messages=1999999 ns=1", size),
            Err("received 1999999 messages, not 2000000".into())
        );
        assert!(parse("senders=16 messages=2000000", size).is_err());
    }

    #[test]
    fn shares_the_messages_out() {
        let size = Size {
            senders: 1000,
            messages: 2_000_500,
        };
        assert_eq!((size.each(), size.total()), (2000, 2_000_000));
        assert_eq!(check_sum(size, 1000 * (2000 * 1999 / 2)), Ok(()));
        assert!(check_sum(size, 1).is_err());
        for level in [crate::ctx::Level::Quick, crate::ctx::Level::Default] {
            let m = messages(&Ctx::new(level));
            assert!(SENDERS.iter().all(|(n, _)| m.is_multiple_of(*n)), "{m}");
        }
    }

    /// Every peer program at a tiny size prints a line the parser takes.
    #[test]
    fn the_peers_speak_the_protocol() {
        let size = Size {
            senders: 16,
            messages: 1000,
        };
        rates::smoke_peers(runtimes(), &["16", "1000"], |name, stdout| {
            let t = parse(stdout, size).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(t.count, 992, "{name}");
        });
    }

    /// A smoke run of every in-process runtime at a tiny size, each N.
    #[test]
    fn every_runtime_in_process_fans_in() {
        for senders in [1, 2, 16, 100] {
            let size = Size {
                senders,
                messages: 2000,
            };
            for f in [fibra::fanin, crossbeam::fanin] {
                assert_eq!(f(size).unwrap().count, 2000);
            }
        }
    }
}
