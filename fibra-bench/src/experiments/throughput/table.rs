//! The tables of http-throughput and https-throughput: the servers fastest
//! first, each against fibra, and whether fibra met its targets.

use super::super::servers::REFERENCE;
use super::wrk::Load;
use crate::measure::{Outcome, Runs, figure_of, measured};
use crate::report::{Row, Table, grouped, short, times, unmeasured_rows};
use std::time::Duration;

/// A latency in the unit that suits it: `688 µs`, `6.78 ms`, `1.45 s`.
fn latency(d: Duration) -> String {
    match d.as_secs_f64() {
        s if s < 1e-3 => format!("{:.0} µs", s * 1e6),
        s if s < 1.0 => format!("{:.2} ms", s * 1e3),
        s => format!("{s:.2} s"),
    }
}

/// The table called `title` of `results`, with `notes`; `judged`: whether
/// the bar for requests per second of [`rate_verdict`] applies.
pub fn table(
    title: String,
    results: &[(&str, Outcome<Runs<Load>>)],
    mut notes: Vec<String>,
    judged: bool,
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
                load.cpu_us.map_or("-".into(), short),
                load.p99.map_or("-".into(), latency),
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
    notes.push(
        "CPU µs/request = the server process's user + system CPU time (/proc/PID/stat, \
         in 10 ms ticks) from just before wrk starts to just after it ends, ÷ the requests \
         wrk counted; wrk's own CPU is not in it"
            .into(),
    );
    if measured.iter().any(|(_, load)| load.p99.is_none()) {
        notes.push("p99 latency - : wrk printed 0 for it, so it has no figure".into());
    }
    notes.push(errors_verdict(&measured));
    if judged {
        notes.extend(rate_verdict(&measured));
    }
    Table {
        title,
        columns: vec![
            "server",
            "requests/s",
            "CPU µs/request",
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

#[cfg(test)]
mod tests {
    use super::*;

    fn load(per_sec: f64, errors: u64) -> Load {
        Load {
            requests: 1,
            per_sec,
            p99: Some(Duration::from_micros(6_780)),
            errors,
            cpu_us: Some(12.5),
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
        let table = table("GET /hello".into(), &results, Vec::new(), true);
        let text = table.to_string();
        let go = text.find("go ").unwrap();
        let fibra = text.find("fibra ractors ").unwrap();
        assert!(go < fibra, "{text}");
        assert!(text.contains("130,467"), "{text}");
        assert!(text.contains("CPU µs/request"), "{text}");
        assert!(text.contains("130,467            12.5 "), "{text}");
        assert!(text.contains("1.30×"), "{text}");
        assert!(
            text.contains("ruby threads   server crashed (signal 9)"),
            "{text}"
        );
        assert!(text.contains("target: no errors from fibra: met"), "{text}");
    }

    #[test]
    fn judges_the_rate_only_where_asked_and_marks_a_missing_p99() {
        let results = [
            (REFERENCE, Outcome::Measured(Runs::one(load(100_000.0, 0)))),
            (
                "go",
                Outcome::Measured(Runs::one(Load {
                    p99: None,
                    ..load(50_000.0, 0)
                })),
            ),
        ];
        let text = table("GET /hello".into(), &results, Vec::new(), false).to_string();
        assert!(!text.contains("target: requests/s"), "{text}");
        assert!(text.contains("target: no errors from fibra: met"), "{text}");
        assert!(text.contains("p99 latency - : wrk printed 0"), "{text}");
        let judged = table("GET /hello".into(), &results, Vec::new(), true).to_string();
        assert!(judged.contains("target: requests/s"), "{judged}");
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
