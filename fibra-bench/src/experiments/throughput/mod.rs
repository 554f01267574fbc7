//! http-throughput and https-throughput (not in the seeds; EXPERIMENTS.md,
//! "Measured here" and "Added for the second round"): every server of
//! [`servers`] that speaks the protocol answers `GET /hello` to wrk's
//! keep-alive connections, 100 and then 1,000 of them, for a fixed time; the
//! figures are requests per second, the 99th percentile of the latency, and
//! errors, which must be none. wrk runs on the same cores as the server, as
//! it did for EXPERIMENTS.md. This module runs the servers under wrk for
//! both experiments; [`http`] and [`https`] say what each loads.

mod cert;
pub mod http;
pub mod https;
mod table;
mod wrk;

use super::servers::{self, Tls, Use, Work};
use super::{Section, limits};
use crate::cpu;
use crate::ctx::Ctx;
use crate::measure::{Outcome, Runs};
use crate::progress;
use crate::record::{self, Record};
use std::io;
use std::time::Duration;
use wrk::{Load, Requests, Wrk};

/// wrk's connections in the first table of a plan and in the second.
const CONNECTIONS: [usize; 2] = [100, 1000];

/// The work of the routes not measured here; only `/hello` is asked for.
const IDLE: Work = Work {
    fib: 1,
    sleep: Duration::ZERO,
};

/// How one pair of tables loads each server.
#[derive(Clone, Copy)]
struct Plan {
    requests: Requests,
    duration: Duration,
    /// Whether the bar for requests per second (fibra's best mode ≥
    /// Go's and ≥ 0.9 × hyper's) is judged: it was set for keep-alive HTTP.
    judged: bool,
    /// A note for the first table of the two: earlier figures, or what the
    /// figures include.
    note: Option<&'static str>,
}

impl Plan {
    /// The records' variant at `connections`.
    fn variant(&self, connections: usize) -> String {
        let pipelined = match self.requests {
            Requests::KeepAlive => String::new(),
            Requests::Pipelined(depth) => format!(" pipelined={depth}"),
        };
        format!(
            "/hello{pipelined} connections={connections} duration_s={}",
            self.duration.as_secs()
        )
    }
}

/// Each server's outcome at one number of connections.
type Results = Vec<(&'static str, Outcome<Runs<Load>>)>;

/// Runs `experiment`: every server measured on `used` (over HTTPS with
/// `tls`, which [`Use::Tls`] needs) is started once and loaded by each plan
/// at each number of [`CONNECTIONS`]; a table and records for each pair.
fn measure(
    ctx: &Ctx,
    experiment: &'static str,
    used: Use,
    tls: Option<&Tls>,
    plans: &[Plan],
) -> Section {
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
    let servers = servers::prepare(ctx, &mut section, used);
    let scheme = if tls.is_some() { "https" } else { "http" };
    let mut results: Vec<[Results; 2]> = plans.iter().map(|_| Default::default()).collect();
    for server in &servers {
        progress::step(&format!("{experiment}: {} (starting)", server.name));
        let mut serving = server.start(IDLE, tls);
        for (plan, results) in plans.iter().zip(&mut results) {
            for (results, connections) in results.iter_mut().zip(CONNECTIONS) {
                progress::step(&format!(
                    "{experiment}: {} ({connections} connections, {})",
                    server.name, plan.requests
                ));
                let load = serving
                    .as_mut()
                    .map_err(|why| why.clone())
                    .and_then(|serving| {
                        let pid = serving.pid();
                        let before = cpu::of_process(pid);
                        let load = serving.run(|addr| {
                            let url = format!("{scheme}://{addr}/hello");
                            let limit = plan.duration + ctx.timeout;
                            wrk.run(&url, connections, plan.requests, plan.duration, limit)
                        })?;
                        Ok(with_cpu(load, before, cpu::of_process(pid)))
                    });
                results.push((server.name, Outcome::from_result(load.map(Runs::one))));
            }
        }
    }
    let over = if tls.is_some() { " over TLS" } else { "" };
    for (plan, results) in plans.iter().zip(&results) {
        for (results, connections) in results.iter().zip(CONNECTIONS) {
            let mut notes: Vec<String> = files
                .iter()
                .map(|why| format!("open files: {why}"))
                .collect();
            if connections == CONNECTIONS[0] {
                notes.extend(servers.iter().map(|s| format!("{}: {}", s.name, s.how)));
                notes.extend(plan.note.map(String::from));
            }
            let [threads, connections_opt, duration] = wrk::options(connections, plan.duration);
            let title = format!(
                "{experiment}: GET /hello{over}, wrk {threads} {connections_opt} {duration} \
                 --latency ({}), wrk and the server on the same {} cores; one run each",
                plan.requests,
                std::thread::available_parallelism().map_or(1, |n| n.get()),
            );
            section
                .tables
                .push(table::table(title, results, notes, plan.judged));
            section
                .records
                .extend(records(experiment, &plan.variant(connections), results));
        }
    }
    section
}

/// `load` with the server's CPU time per request: what its process spent
/// between the readings `before` and `after` the run, over the requests wrk
/// counted; none where a reading failed.
fn with_cpu(load: Load, before: io::Result<Duration>, after: io::Result<Duration>) -> Load {
    let cpu_us = match (before, after) {
        (Ok(before), Ok(after)) => cpu::us_each(after.saturating_sub(before), load.requests),
        _ => None,
    };
    Load { cpu_us, ..load }
}

fn records(
    experiment: &'static str,
    variant: &str,
    results: &[(&str, Outcome<Runs<Load>>)],
) -> Vec<Record> {
    record::of_measured(experiment, variant, results, |load| {
        let p99 = load.p99.map(|p99| ("p99_latency", p99.as_secs_f64(), "s"));
        let cpu = load.cpu_us.map(|us| ("cpu_us_per_request", us, "µs"));
        [("requests_per_s", load.per_sec, "1/s")]
            .into_iter()
            .chain(p99)
            .chain([("errors", load.errors as f64, "errors")])
            .chain(cpu)
            .collect()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adds_the_servers_cpu_time_per_request() {
        let load = Load {
            requests: 400_000,
            per_sec: 80_000.0,
            p99: None,
            errors: 0,
            cpu_us: None,
        };
        let secs = |s| Ok(Duration::from_secs(s));
        // 6 s of the server's CPU over 400,000 requests: 15 µs each.
        let measured = with_cpu(load, secs(4), secs(10));
        assert!((measured.cpu_us.unwrap() - 15.0).abs() < 1e-9);
        assert_eq!(measured.requests, 400_000);
        let gone = || Err(io::Error::from(io::ErrorKind::NotFound));
        assert_eq!(with_cpu(load, gone(), secs(10)).cpu_us, None);
        assert_eq!(with_cpu(load, secs(4), gone()).cpu_us, None);
        let records = records(
            "http-throughput",
            "/hello",
            &[("go", Outcome::Measured(Runs::one(measured)))],
        );
        let cpu = records
            .iter()
            .find(|r| r.metric == "cpu_us_per_request")
            .unwrap();
        assert_eq!(
            (cpu.value, cpu.unit, cpu.runtime.as_str()),
            (15.0, "µs", "go")
        );
        assert_eq!(
            records.len(),
            3,
            "no p99, so requests/s, errors and the CPU"
        );
    }

    #[test]
    fn names_the_variants() {
        let plan = |requests| Plan {
            requests,
            duration: Duration::from_secs(5),
            judged: false,
            note: None,
        };
        assert_eq!(
            plan(Requests::KeepAlive).variant(100),
            "/hello connections=100 duration_s=5"
        );
        assert_eq!(
            plan(Requests::Pipelined(16)).variant(1000),
            "/hello pipelined=16 connections=1000 duration_s=5"
        );
    }
}
