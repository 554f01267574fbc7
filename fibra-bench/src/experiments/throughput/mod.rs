//! http-throughput (not in the seeds; EXPERIMENTS.md, "Measured here"): every
//! server of [`servers`] answers `GET /hello` to wrk's keep-alive connections,
//! 100 and then 1,000 of them, for a fixed time; the figures are requests per
//! second, the 99th percentile of the latency, and errors, which must be none.
//! wrk runs on the same cores as the server, as it did for EXPERIMENTS.md.

mod wrk;

use super::servers::{self, REFERENCE, Work};
use super::{Experiment, Section, limits};
use crate::chart::Chart;
use crate::ctx::Ctx;
use crate::measure::{Outcome, Runs, figure_of, measured};
use crate::progress;
use crate::record::{self, Record};
use crate::report::{Row, Table, grouped, times, unmeasured_rows};
use std::time::Duration;
use wrk::{Load, THREADS, Wrk};

pub const EXPERIMENT: Experiment = Experiment {
    name: "http-throughput",
    description: "GET /hello under wrk at 100 and 1,000 keep-alive connections: requests/s, \
                  p99 latency, errors",
    default: true,
    runtimes: servers::names,
    // Errors stay in the table: every one of them should be 0.
    charts: &[
        Chart {
            variant: "",
            metrics: &["requests_per_s"],
        },
        Chart {
            variant: "",
            metrics: &["p99_latency"],
        },
    ],
    run,
    // The tokio server is E4's child program.
    child: None,
};

/// wrk's connections in the first table and in the second.
const CONNECTIONS: [usize; 2] = [100, 1000];

/// The work of the routes not measured here; only `/hello` is asked for.
const IDLE: Work = Work {
    fib: 1,
    sleep: Duration::ZERO,
};

/// How long each wrk run loads the server.
fn duration(ctx: &Ctx) -> Duration {
    Duration::from_secs(ctx.size(2, 5, 10))
}

/// Each server's outcome at one number of connections.
type Results = Vec<(&'static str, Outcome<Runs<Load>>)>;

fn run(ctx: &Ctx) -> Section {
    let mut section = Section::default();
    let wrk = match Wrk::find() {
        Ok(wrk) => wrk,
        Err(missing) => {
            section.missing.push(missing);
            return section;
        }
    };
    // Each end of each connection is an open file: wrk's in its process, the
    // server's in its own; a little more for what else they hold open.
    let files = limits::raise_open_files(CONNECTIONS[1] as u64 + 100).err();
    let servers = servers::prepare(ctx, &mut section);
    let duration = duration(ctx);
    let mut results: [Results; 2] = Default::default();
    for server in &servers {
        progress::step(&format!("http-throughput: {} (starting)", server.name));
        let mut serving = server.start(IDLE);
        for (results, connections) in results.iter_mut().zip(CONNECTIONS) {
            progress::step(&format!(
                "http-throughput: {} ({connections} connections)",
                server.name
            ));
            let load = serving
                .as_mut()
                .map_err(|why| why.clone())
                .and_then(|serving| {
                    serving.run(|addr| {
                        let url = format!("http://{addr}/hello");
                        wrk.run(&url, connections, duration, duration + ctx.timeout)
                    })
                });
            results.push((server.name, Outcome::from_result(load.map(Runs::one))));
        }
    }
    for (results, connections) in results.iter().zip(CONNECTIONS) {
        let mut notes: Vec<String> = files
            .iter()
            .map(|why| format!("open files: {why}"))
            .collect();
        if connections == CONNECTIONS[0] {
            notes.extend(servers.iter().map(|s| format!("{}: {}", s.name, s.how)));
            notes.push(
                "earlier on this VM (EXPERIMENTS.md): tokio with hyper 111 k requests/s, Go \
                 net/http 59 k"
                    .into(),
            );
        }
        section
            .tables
            .push(table(connections, duration, results, notes));
        let variant = format!(
            "/hello connections={connections} duration_s={}",
            duration.as_secs()
        );
        section.records.extend(records(&variant, results));
    }
    section
}

/// A latency in the unit that suits it: `688 µs`, `6.78 ms`, `1.45 s`.
fn latency(d: Duration) -> String {
    match d.as_secs_f64() {
        s if s < 1e-3 => format!("{:.0} µs", s * 1e6),
        s if s < 1.0 => format!("{:.2} ms", s * 1e3),
        s => format!("{s:.2} s"),
    }
}

fn table(
    connections: usize,
    duration: Duration,
    results: &[(&str, Outcome<Runs<Load>>)],
    mut notes: Vec<String>,
) -> Table {
    let reference = figure_of(results, REFERENCE).map(|runs| runs.best.per_sec);
    let mut measured: Vec<(&str, Load)> = measured(results).map(|(n, r)| (n, r.best)).collect();
    measured.sort_by(|a, b| b.1.per_sec.total_cmp(&a.1.per_sec));
    let mut rows: Vec<Row> = measured
        .iter()
        .map(|(name, load)| {
            Row::Cells(vec![
                name.to_string(),
                grouped(load.per_sec.round() as u64),
                latency(load.p99),
                grouped(load.errors),
                reference.map_or("-".into(), |r| times(load.per_sec / r)),
            ])
        })
        .collect();
    rows.extend(unmeasured_rows(results));
    notes.push(format!(
        "errors = wrk's socket errors (connect, read, write, and timeouts: no response in \
         2 s) + responses neither 2xx nor 3xx; vs {REFERENCE} = requests/s ÷ those of \
         {REFERENCE}"
    ));
    notes.push(errors_verdict(&measured));
    notes.extend(rate_verdict(&measured));
    Table {
        title: format!(
            "http-throughput: GET /hello, wrk -t{THREADS} -c{connections} -d{}s --latency \
             (keep-alive), wrk and the server on the same {} cores; one run each",
            duration.as_secs(),
            std::thread::available_parallelism().map_or(1, |n| n.get()),
        ),
        columns: vec![
            "server",
            "requests/s",
            "p99 latency",
            "errors",
            "vs fibra ractors",
        ],
        rows,
        notes,
    }
}

/// Whether fibra answered every request; and which other servers did not,
/// whose requests per second then count only the answered ones.
fn errors_verdict(measured: &[(&str, Load)]) -> String {
    let (fibra, peers): (Vec<_>, Vec<_>) = measured
        .iter()
        .partition(|(name, _)| name.starts_with("fibra"));
    let with_errors = |rows: Vec<&(&str, Load)>| -> Vec<String> {
        rows.into_iter()
            .filter(|(_, load)| load.errors > 0)
            .map(|(name, load)| format!("{name} {}", grouped(load.errors)))
            .collect()
    };
    let (fibra, peers) = (with_errors(fibra), with_errors(peers));
    let mut verdict = match fibra.as_slice() {
        [] => "target: no errors from fibra: met".to_string(),
        _ => format!(
            "target: no errors from fibra: MISSED ({})",
            fibra.join(", ")
        ),
    };
    if !peers.is_empty() {
        verdict += &format!("; errors elsewhere: {}", peers.join(", "));
    }
    verdict
}

/// The bar for requests per second: fibra's best mode at least Go's
/// net/http and at least 0.9 × tokio with hyper (`None` when fibra or both
/// peers were not measured).
fn rate_verdict(measured: &[(&str, Load)]) -> Option<String> {
    let rate = |name: &str| {
        measured
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, load)| load.per_sec)
    };
    let (best, fibra) = measured
        .iter()
        .filter(|(name, _)| name.starts_with("fibra"))
        .map(|(name, load)| (*name, load.per_sec))
        .max_by(|a, b| a.1.total_cmp(&b.1))?;
    let bars: Vec<(String, f64, f64)> = [("go", 1.0), ("tokio hyper", 0.9)]
        .into_iter()
        .filter_map(|(peer, share)| Some((peer.to_string(), rate(peer)?, share)))
        .collect();
    if bars.is_empty() {
        return None;
    }
    let met = bars.iter().all(|(_, rate, share)| fibra >= share * rate);
    let against: Vec<String> = bars
        .iter()
        .map(|(peer, rate, _)| format!("{} {peer}", times(fibra / rate)))
        .collect();
    Some(format!(
        "target: requests/s ≥ go's and ≥ 0.9 × tokio hyper's: {} ({best} = {})",
        if met { "met" } else { "MISSED" },
        against.join(", ")
    ))
}

fn records(variant: &str, results: &[(&str, Outcome<Runs<Load>>)]) -> Vec<Record> {
    record::of_measured(EXPERIMENT.name, variant, results, |load| {
        vec![
            ("requests_per_s", load.per_sec, "1/s"),
            ("p99_latency", load.p99.as_secs_f64(), "s"),
            ("errors", load.errors as f64, "errors"),
        ]
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load(per_sec: f64, errors: u64) -> Load {
        Load {
            requests: 1,
            per_sec,
            p99: Duration::from_micros(6_780),
            errors,
        }
    }

    #[test]
    fn judges_fibras_best_mode_against_go_and_hyper() {
        let verdict = |hyper: f64| {
            rate_verdict(&[
                (REFERENCE, load(200_000.0, 0)),
                ("fibra threads", load(150_000.0, 0)),
                ("tokio hyper", load(hyper, 0)),
                ("go", load(100_000.0, 0)),
            ])
            .unwrap()
        };
        assert_eq!(
            verdict(210_000.0),
            "target: requests/s ≥ go's and ≥ 0.9 × tokio hyper's: met \
             (fibra ractors = 2.00× go, 0.95× tokio hyper)"
        );
        assert!(verdict(250_000.0).contains(": MISSED (fibra ractors = 2.00× go, 0.80×"));
        assert_eq!(rate_verdict(&[(REFERENCE, load(1.0, 0))]), None);
    }

    #[test]
    fn formats_latencies() {
        assert_eq!(latency(Duration::from_micros(688)), "688 µs");
        assert_eq!(latency(Duration::from_micros(6_780)), "6.78 ms");
        assert_eq!(latency(Duration::from_millis(1_450)), "1.45 s");
    }

    #[test]
    fn rows_fastest_first_against_fibra_ractors() {
        let results = [
            (REFERENCE, Outcome::Measured(Runs::one(load(100_000.0, 0)))),
            ("go", Outcome::Measured(Runs::one(load(130_467.3, 0)))),
            (
                "ruby threads",
                Outcome::Failed("server crashed (signal 9)".into()),
            ),
        ];
        let table = table(100, Duration::from_secs(2), &results, Vec::new());
        let text = table.to_string();
        let go = text.find("go ").unwrap();
        let fibra = text.find("fibra ractors ").unwrap();
        assert!(go < fibra, "{text}");
        assert!(text.contains("130,467"), "{text}");
        assert!(text.contains("1.30×"), "{text}");
        assert!(
            text.contains("ruby threads   server crashed (signal 9)"),
            "{text}"
        );
        assert!(text.contains("target: no errors from fibra: met"), "{text}");
    }

    #[test]
    fn errors_verdicts() {
        assert_eq!(
            errors_verdict(&[
                (REFERENCE, load(1.0, 0)),
                ("go", load(1.0, 0)),
                ("ruby threads", load(1.0, 1_200))
            ]),
            "target: no errors from fibra: met; errors elsewhere: ruby threads 1,200"
        );
        assert_eq!(
            errors_verdict(&[(REFERENCE, load(1.0, 3)), ("fibra threads", load(1.0, 0))]),
            "target: no errors from fibra: MISSED (fibra ractors 3)"
        );
    }
}
