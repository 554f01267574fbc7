//! E4 — a web server: threads vs Ractors (EXPERIMENTS.md). Every server of
//! [`servers`] serves three routes: `/io` sleeps, `/cpu` computes fib(N)
//! recursively, `/io-cpu` does both. On each route ten requests go one at a
//! time and then ten at once, twice over: with `ab`, as the seed measured
//! (`-n 10 -c 1`, then `-c 10`), and with fibra-bench's own [`client`], which
//! really sends the ten at once; the targets are judged on the latter.

mod ab;
mod client;

use super::servers::{self, Candidate, REFERENCE, Use, Work, fib};
use super::{Experiment, Section};
use crate::chart::Chart;
use crate::ctx::{Ctx, RUNS};
use crate::measure::{Best, Outcome, Runs, best_of_fixed, figure_of, measured};
use crate::peers::process;
use crate::peers::server::Serving;
use crate::progress;
use crate::record::{self, Record};
use crate::report::{Row, Table, times, unmeasured_rows};
use ab::Ab;
use std::time::{Duration, Instant};

pub const EXPERIMENT: Experiment = Experiment {
    name: "e4",
    description: "a web server: /io, /cpu and /io-cpu, ten requests one at a time, then at once",
    default: true,
    runtimes: || servers::names(Use::Seed),
    // fibra-bench's client: the figures the targets are judged by.
    charts: &[
        Chart {
            variant: "",
            metrics: &["at_once_time"],
        },
        Chart {
            variant: "",
            metrics: &["speed_up"],
        },
    ],
    run,
    child: Some(servers::hyper::main),
};

/// Requests per run, as in the seed.
const REQUESTS: u32 = 10;

/// On `/io`, ten requests at once must take at most this many sleeps.
const SLEEP_TARGET: f64 = 1.05;

/// On `/cpu`, fibra ractors' speed-up must reach this fraction of the cores.
const SPEED_UP_TARGET: f64 = 0.9;

/// This run's work: the seed's 2 s sleep and a fib of about 1.5 s of CPU in
/// Rust here (the seed's took ~2 s in Ruby; Ruby takes ~16 times longer than
/// Rust for the same fib, so one fib for every server cannot be ~2 s in
/// both), scaled down for the quick and default levels.
fn work(ctx: &Ctx) -> Work {
    Work {
        fib: ctx.size(30, 32, 43),
        sleep: Duration::from_millis(ctx.size(50, 100, 2000)),
    }
}

/// What a route's table is judged by.
#[derive(Clone, Copy)]
enum Target {
    /// Both fibra modes take at most [`SLEEP_TARGET`] sleeps for ten at once.
    OneSleep,
    /// fibra ractors' speed-up reaches [`SPEED_UP_TARGET`] × the cores.
    Cores,
}

#[derive(Clone, Copy)]
struct Route {
    path: &'static str,
    sleeps: bool,
    computes: bool,
    /// The seed's figures, for the notes.
    reported: Option<&'static str>,
    target: Option<Target>,
}

const ROUTES: [Route; 3] = [
    Route {
        path: "/io",
        sleeps: true,
        computes: false,
        reported: Some(
            "reported (seed, Ruby 3.0, 6-core i7, 2 s sleep): ten at once (ab -c 10) 2.01 s \
             with threads, 2.005 s with Ractors",
        ),
        target: Some(Target::OneSleep),
    },
    Route {
        path: "/cpu",
        sleeps: false,
        computes: true,
        reported: Some(
            "reported (seed, Ruby 3.0, 6-core i7, fib of ~2 s): one at a time ~19.7 s (both); \
             ten at once 19.6 s with threads (1.0×), 3.16 s with Ractors (6.2×)",
        ),
        target: Some(Target::Cores),
    },
    Route {
        path: "/io-cpu",
        sleeps: true,
        computes: true,
        reported: None,
        target: None,
    },
];

impl Route {
    /// What one request makes the server do, e.g. `sleeps 2 s, then computes fib(43)`.
    fn does(self, work: Work) -> String {
        let sleep = format!("sleeps {}", time(work.sleep));
        let compute = format!("computes fib({})", work.fib);
        match (self.sleeps, self.computes) {
            (true, true) => format!("{sleep}, then {compute}"),
            (true, false) => sleep,
            _ => compute,
        }
    }

    /// The record's variant, e.g. `/io-cpu sleep_ms=2000 fib=43`.
    fn variant(self, work: Work) -> String {
        let mut variant = self.path.to_string();
        if self.sleeps {
            variant += &format!(" sleep_ms={}", work.sleep.as_millis());
        }
        if self.computes {
            variant += &format!(" fib={}", work.fib);
        }
        variant
    }

    /// The least time ten requests at once can take when one alone took `one`:
    /// the sleeps overlap, and the computing spreads over every core at best.
    fn least_at_once(self, work: Work, one: Duration) -> Duration {
        let sleep = if self.sleeps {
            work.sleep
        } else {
            Duration::ZERO
        };
        sleep + one.saturating_sub(sleep) * REQUESTS / cores()
    }
}

/// The number of cores: the most a server can compute at once.
fn cores() -> u32 {
    std::thread::available_parallelism().map_or(1, |n| n.get() as u32)
}

/// The times of ten requests on one route: one after another, and at once.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Times {
    sequential: Duration,
    concurrent: Duration,
}

impl Times {
    fn speed_up(self) -> f64 {
        self.sequential.as_secs_f64() / self.concurrent.as_secs_f64().max(1e-9)
    }
}

impl Best for Times {
    /// Figure by figure (noise only ever adds time).
    fn best(self, other: Times) -> Times {
        Times {
            sequential: self.sequential.min(other.sequential),
            concurrent: self.concurrent.min(other.concurrent),
        }
    }

    fn worst(self, other: Times) -> Times {
        Times {
            sequential: self.sequential.max(other.sequential),
            concurrent: self.concurrent.max(other.concurrent),
        }
    }
}

/// One server's figures on one route, by `ab` and by fibra-bench's client
/// (whose sequential time is ten times one request alone: ten of the same
/// request, one after another).
struct Figures {
    ab: Outcome<Runs<Times>>,
    own: Outcome<Runs<Times>>,
}

fn run(ctx: &Ctx) -> Section {
    let mut section = Section::default();
    let ab = match Ab::find() {
        Ok(ab) => Some(ab),
        Err(missing) => {
            section.missing.push(missing);
            None
        }
    };
    let servers = servers::prepare(ctx, &mut section, Use::Seed);
    let work = work(ctx);
    progress::step(&format!("computing fib({}) in Rust", work.fib));
    let start = Instant::now();
    let value = fib(work.fib);
    let rust_fib = start.elapsed();
    for (i, route) in ROUTES.into_iter().enumerate() {
        let expect = if route.computes {
            value.to_string()
        } else {
            "io\n".into()
        };
        let results: Vec<(&str, Outcome<Figures>)> = servers
            .iter()
            .map(|server| {
                let figures = measure(ctx, server, route, work, &expect, ab.as_ref());
                (server.name, figures)
            })
            .collect();
        let mut notes = Vec::new();
        if route.computes {
            notes.push(format!(
                "fib({}) = {value} takes {} in Rust here (fibra-bench itself, one run)",
                work.fib,
                time(rust_fib)
            ));
        }
        // How each server works, once, under the first table.
        if i == 0 {
            notes.extend(servers.iter().map(|s| format!("{}: {}", s.name, s.how)));
        }
        section.tables.push(table(route, work, &results, notes));
        section.records.extend(records(route, work, &results));
    }
    section
}

/// Measures `server` on `route` in a server process of its own: one request
/// alone, then fibra-bench's client [`RUNS`] times, then `ab` once (each run
/// that cannot end within the time limit is skipped).
fn measure(
    ctx: &Ctx,
    server: &Candidate,
    route: Route,
    work: Work,
    expect: &str,
    ab: Option<&Ab>,
) -> Outcome<Figures> {
    let step = |what: &str| {
        progress::step(&format!("e4 {}: {} ({what})", route.path, server.name));
    };
    step("starting");
    let mut serving = match server.start(work, None) {
        Ok(serving) => serving,
        Err(why) => return Outcome::Failed(why),
    };
    let limit = ctx.timeout;
    let get = |serving: &mut Serving, n| {
        serving.run(|addr| client::at_once(addr, route.path, expect, n, limit))
    };
    // It warms the server up, and it says which runs can end in time.
    step("one request");
    let one = match get(&mut serving, 1) {
        Ok(one) => one,
        Err(why) => return Outcome::Failed(why),
    };
    let over_limit = |least: Duration| {
        (least > limit).then(|| {
            Outcome::Failed(format!(
                "skipped: would take at least {}, over the {} limit",
                time(least),
                process::secs(limit)
            ))
        })
    };
    let own = over_limit(route.least_at_once(work, one)).unwrap_or_else(|| {
        let mut run = 0;
        best_of_fixed(RUNS, false, || {
            run += 1;
            step(&format!("run {run}/{RUNS}"));
            Outcome::from_result(get(&mut serving, 1).and_then(|one| {
                Ok(Times {
                    sequential: one * REQUESTS,
                    concurrent: get(&mut serving, REQUESTS as usize)?,
                })
            }))
        })
    });
    let ab = match ab {
        None => Outcome::NotApplicable,
        Some(ab) => over_limit(one * REQUESTS).unwrap_or_else(|| {
            step("ab");
            let mut ab_run = |concurrency| {
                serving.run(|addr| {
                    let url = format!("http://{addr}{}", route.path);
                    ab.run(&url, REQUESTS as usize, concurrency, limit)
                })
            };
            let times = ab_run(1).and_then(|sequential| {
                Ok(Times {
                    sequential,
                    concurrent: ab_run(REQUESTS as usize)?,
                })
            });
            Outcome::from_result(times.map(Runs::one))
        }),
    };
    Outcome::Measured(Figures { ab, own })
}

/// A time in the unit that suits it: `48.2 ms`, `2.006 s`.
fn time(d: Duration) -> String {
    match d.as_secs_f64() {
        s if s < 1.0 => format!("{:.1} ms", s * 1e3),
        s => format!("{s:.3} s"),
    }
}

/// The cells of two times and their speed-up, `-` without them; a failure
/// is named in `notes`, under the name `by` of what measured them.
fn cells(
    name: &str,
    by: &str,
    outcome: &Outcome<Runs<Times>>,
    notes: &mut Vec<String>,
) -> [String; 3] {
    match outcome {
        Outcome::Measured(runs) => {
            let t = runs.best;
            [time(t.sequential), time(t.concurrent), times(t.speed_up())]
        }
        Outcome::Failed(why) => {
            notes.push(format!("{name}, {by}: {why}"));
            ["-".into(), "-".into(), "-".into()]
        }
        Outcome::NotApplicable => ["-".into(), "-".into(), "-".into()],
    }
}

fn table(
    route: Route,
    work: Work,
    results: &[(&str, Outcome<Figures>)],
    extra_notes: Vec<String>,
) -> Table {
    let mut rows: Vec<(&str, &Figures)> = measured(results).collect();
    // Fastest ten at once first; those without that figure last.
    rows.sort_by_key(|(_, f)| match &f.own {
        Outcome::Measured(runs) => (0, runs.best.concurrent),
        _ => (1, Duration::ZERO),
    });
    let mut failures = Vec::new();
    let mut rows: Vec<Row> = rows
        .into_iter()
        .map(|(name, f)| {
            let mut row = vec![name.to_string()];
            row.extend(cells(name, "ab", &f.ab, &mut failures));
            row.extend(cells(name, "fibra-bench's client", &f.own, &mut failures));
            Row::Cells(row)
        })
        .collect();
    rows.extend(unmeasured_rows(results));
    let mut notes = vec![
        format!(
            "ab: ab -n {REQUESTS} -c 1, then -c {REQUESTS} (HTTP/1.0, a connection per \
             request), one run; ab 2.3 sends one request alone before the others \
             (EXPERIMENTS.md), so its -c {REQUESTS} is not {REQUESTS} at once"
        ),
        format!(
            "10 × 1, at once: fibra-bench's client, one request alone (× {REQUESTS}: one \
             after another), then {REQUESTS} connections opened first and a request sent \
             on each together; best of {RUNS} runs; speed-up = 10 × 1 ÷ at once"
        ),
    ];
    notes.extend(extra_notes);
    notes.extend(failures);
    notes.extend(route.reported.map(String::from));
    let own = |name| {
        figure_of(results, name).and_then(|f| match &f.own {
            Outcome::Measured(runs) => Some(runs.best),
            _ => None,
        })
    };
    match route.target {
        Some(Target::OneSleep) => notes.push(sleep_verdict(
            work.sleep,
            &[
                (REFERENCE, own(REFERENCE)),
                ("fibra threads", own("fibra threads")),
            ],
        )),
        Some(Target::Cores) => notes.push(cores_verdict(own(REFERENCE), cores())),
        None => {}
    }
    Table {
        title: format!(
            "e4 {}: each request {}; {REQUESTS} requests one at a time, then {REQUESTS} at \
             once; the servers and clients on {} cores",
            route.path,
            route.does(work),
            cores()
        ),
        columns: vec![
            "server",
            "ab -c 1",
            "ab -c 10",
            "ab speed-up",
            "10 × 1",
            "at once",
            "speed-up",
        ],
        rows,
        notes,
    }
}

/// Whether each fibra mode of `fibra` took at most [`SLEEP_TARGET`] × `sleep`
/// for ten at once.
fn sleep_verdict(sleep: Duration, fibra: &[(&str, Option<Times>)]) -> String {
    let bar = sleep.mul_f64(SLEEP_TARGET);
    let head = format!(
        "target: fibra {REQUESTS} at once ≤ {SLEEP_TARGET} × one sleep = {}",
        time(bar)
    );
    let mut met = true;
    let mut figures = Vec::new();
    for (name, t) in fibra {
        match t {
            Some(t) => {
                met &= t.concurrent <= bar;
                figures.push(format!("{name} {}", time(t.concurrent)));
            }
            None => {
                met = false;
                figures.push(format!("no {name} figure"));
            }
        }
    }
    let word = if met { "met" } else { "MISSED" };
    format!("{head}: {word} ({})", figures.join(", "))
}

/// Whether fibra ractors' speed-up reached [`SPEED_UP_TARGET`] × `cores`.
fn cores_verdict(fibra: Option<Times>, cores: u32) -> String {
    let bar = SPEED_UP_TARGET * f64::from(cores);
    let head =
        format!("target: {REFERENCE} speed-up ≥ {SPEED_UP_TARGET} × {cores} cores = {bar:.2}");
    match fibra {
        Some(t) => {
            let s = t.speed_up();
            let word = if s >= bar { "met" } else { "MISSED" };
            format!(
                "{head}: {word} ({}, {} of the bar)",
                times(s),
                times(s / bar)
            )
        }
        None => format!("{head}: no {REFERENCE} figure"),
    }
}

/// Records of the measured servers, e.g. variant `/cpu fib=43`, metrics
/// `ab_speed_up` and `speed_up`.
fn records(route: Route, work: Work, results: &[(&str, Outcome<Figures>)]) -> Vec<Record> {
    let variant = route.variant(work);
    let of = |by: fn(&Figures) -> &Outcome<Runs<Times>>| -> Vec<(&str, Outcome<Runs<Times>>)> {
        measured(results)
            .map(|(name, f)| (name, by(f).clone()))
            .collect()
    };
    let ab = record::of_measured(EXPERIMENT.name, &variant, &of(|f| &f.ab), |t| {
        vec![
            ("ab_sequential_time", t.sequential.as_secs_f64(), "s"),
            ("ab_concurrent_time", t.concurrent.as_secs_f64(), "s"),
            ("ab_speed_up", t.speed_up(), "×"),
        ]
    });
    let own = record::of_measured(EXPERIMENT.name, &variant, &of(|f| &f.own), |t| {
        vec![
            ("sequential_time", t.sequential.as_secs_f64(), "s"),
            ("at_once_time", t.concurrent.as_secs_f64(), "s"),
            ("speed_up", t.speed_up(), "×"),
        ]
    });
    ab.into_iter().chain(own).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::SocketAddr;
    use std::sync::mpsc;

    fn t(sequential: u64, concurrent: u64) -> Times {
        Times {
            sequential: Duration::from_millis(sequential),
            concurrent: Duration::from_millis(concurrent),
        }
    }

    const WORK: Work = Work {
        fib: 43,
        sleep: Duration::from_secs(2),
    };

    #[test]
    fn routes_describe_themselves() {
        let [io, cpu, io_cpu] = ROUTES;
        assert_eq!(io.does(WORK), "sleeps 2.000 s");
        assert_eq!(cpu.does(WORK), "computes fib(43)");
        assert_eq!(io_cpu.does(WORK), "sleeps 2.000 s, then computes fib(43)");
        assert_eq!(io_cpu.variant(WORK), "/io-cpu sleep_ms=2000 fib=43");
        assert_eq!(cpu.variant(WORK), "/cpu fib=43");
    }

    #[test]
    fn the_least_time_at_once() {
        let [io, cpu, io_cpu] = ROUTES;
        let one = Duration::from_secs(3);
        assert_eq!(io.least_at_once(WORK, WORK.sleep), WORK.sleep);
        assert_eq!(cpu.least_at_once(WORK, one), one * REQUESTS / cores());
        assert_eq!(
            io_cpu.least_at_once(WORK, one),
            WORK.sleep + Duration::from_secs(1) * REQUESTS / cores()
        );
    }

    #[test]
    fn verdicts() {
        assert_eq!(
            sleep_verdict(
                WORK.sleep,
                &[
                    ("fibra ractors", Some(t(20_000, 2_010))),
                    ("fibra threads", Some(t(20_000, 2_050)))
                ]
            ),
            "target: fibra 10 at once ≤ 1.05 × one sleep = 2.100 s: met \
             (fibra ractors 2.010 s, fibra threads 2.050 s)"
        );
        assert!(
            sleep_verdict(WORK.sleep, &[("fibra ractors", Some(t(20_000, 2_200)))])
                .contains(": MISSED (")
        );
        assert!(
            sleep_verdict(WORK.sleep, &[("fibra threads", None)])
                .ends_with("MISSED (no fibra threads figure)")
        );
        assert_eq!(
            cores_verdict(Some(t(15_000, 8_000)), 2),
            "target: fibra ractors speed-up ≥ 0.9 × 2 cores = 1.80: met (1.88×, 1.04× of the bar)"
        );
        assert!(cores_verdict(Some(t(15_000, 15_000)), 2).contains(": MISSED (1.00×"));
        assert!(cores_verdict(None, 2).ends_with("no fibra ractors figure"));
    }

    #[test]
    fn the_client_against_the_hyper_server() {
        let work = Work {
            fib: 20,
            sleep: Duration::from_millis(100),
        };
        let (addr_tx, addr_rx) = mpsc::channel::<SocketAddr>();
        // Serves until the test process ends.
        std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_multi_thread()
                .enable_all()
                .build()
                .unwrap();
            runtime.block_on(async {
                let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
                addr_tx.send(listener.local_addr().unwrap()).unwrap();
                servers::hyper::serve(listener, work).await
            })
        });
        let addr = addr_rx.recv().unwrap();
        let limit = Duration::from_secs(10);
        let at_once = client::at_once(addr, "/io", "io\n", 10, limit).unwrap();
        assert!(
            at_once >= work.sleep && at_once < work.sleep * 5,
            "{at_once:?}"
        );
        client::at_once(addr, "/io-cpu", &fib(20).to_string(), 2, limit).unwrap();
        assert_eq!(
            client::at_once(addr, "/cpu", "no such body", 1, limit),
            Err(r#"the body lacks "no such body": "6765""#.into())
        );
        assert_eq!(
            client::at_once(addr, "/nope", "", 1, limit),
            Err(r#"answered "HTTP/1.0 404 Not Found""#.into())
        );
    }
}
