//! wrk, the HTTP load generator: `wrk -t2 -cC -dDs --latency URL` (with
//! `-s pipeline.lua URL -- DEPTH` to pipeline), and the figures of its
//! report.

use crate::measure::Best;
use crate::peers::process::{self, RunError};
use crate::peers::{Missing, find_program};
use std::fmt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// The `wrk` found on this machine.
pub struct Wrk(PathBuf);

/// wrk's threads: one per core of the 2-core machines the bench is made for,
/// as EXPERIMENTS.md measured.
pub const THREADS: usize = 2;

/// The script that makes wrk pipeline: each write is `DEPTH` requests, the
/// next once all are answered.
const PIPELINE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/src/experiments/throughput/pipeline.lua"
);

/// How wrk sends requests on each connection.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Requests {
    /// One at a time, the next once the response is in (keep-alive).
    KeepAlive,
    /// This many in one write, the next batch once all are answered, as
    /// TechEmpower's plaintext test does (16 deep).
    Pipelined(usize),
}

impl fmt::Display for Requests {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Requests::KeepAlive => write!(f, "keep-alive"),
            Requests::Pipelined(depth) => write!(f, "keep-alive, pipelined {depth} deep"),
        }
    }
}

/// What one wrk run measured.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Load {
    pub requests: u64,
    pub per_sec: f64,
    /// The 99th percentile of the latency; `None` where wrk printed 0 for
    /// it, which wrk 4.1 does when it recorded no latency (every request
    /// timed out) and in some pipelined runs at 1,000 connections (its
    /// maximum latency ~100 ms, its median ~23 ms, its 99th percentile
    /// "0.00us"): no figure, rather than a false one.
    pub p99: Option<Duration>,
    /// Socket errors (connect, read, write, timeout) and responses that were
    /// neither 2xx nor 3xx.
    pub errors: u64,
    /// The server's CPU time per request, in microseconds: not in wrk's
    /// report, but read from the server's process around the run; `None`
    /// where it could not be read.
    pub cpu_us: Option<f64>,
}

impl Best for Load {
    /// The run with the more requests per second.
    fn best(self, other: Load) -> Load {
        if other.per_sec > self.per_sec {
            other
        } else {
            self
        }
    }

    fn worst(self, other: Load) -> Load {
        if other.per_sec < self.per_sec {
            other
        } else {
            self
        }
    }
}

impl Wrk {
    pub fn find() -> Result<Wrk, Missing> {
        find_program("wrk", &[]).map(Wrk).ok_or_else(|| Missing {
            name: "wrk".into(),
            hint: "apt-get install wrk".into(),
        })
    }

    /// Loads `url` (`http://` or `https://`) from `connections` keep-alive
    /// connections for `duration`, sending `requests` so; wrk is killed if it
    /// runs past `timeout`.
    pub fn run(
        &self,
        url: &str,
        connections: usize,
        requests: Requests,
        duration: Duration,
        timeout: Duration,
    ) -> Result<Load, String> {
        let mut cmd = Command::new(&self.0);
        cmd.args(options(connections, duration)).arg("--latency");
        match requests {
            Requests::KeepAlive => cmd.arg(url),
            Requests::Pipelined(depth) => {
                if !Path::new(PIPELINE).exists() {
                    return Err(format!("{PIPELINE} not in this checkout"));
                }
                cmd.args(["-s", PIPELINE, url, "--", &depth.to_string()])
            }
        };
        let stdout = process::run(&mut cmd, timeout).map_err(|e: RunError| format!("wrk {e}"))?;
        parse(&stdout)
    }
}

/// wrk's threads, connections and duration, as its options: `-t2 -c100
/// -d5s`, for the command and for the tables' titles.
pub fn options(connections: usize, duration: Duration) -> [String; 3] {
    [
        format!("-t{THREADS}"),
        format!("-c{connections}"),
        format!("-d{}s", duration.as_secs().max(1)),
    ]
}

/// Reads wrk's report (see the tests for whole ones): `N requests in 2.01s`,
/// the `99%` line of the latency distribution, `Requests/sec:`, and, only when
/// there are any, `Socket errors: connect A, read B, write C, timeout D` and
/// `Non-2xx or 3xx responses: N`.
fn parse(stdout: &str) -> Result<Load, String> {
    let lines = || stdout.lines().map(str::trim);
    let after = |prefix: &str| lines().find_map(|l| l.strip_prefix(prefix).map(str::trim));
    let missing = |what: &str| format!("wrk printed no {what}: {:?}", stdout.trim());
    let requests = lines()
        .find_map(|l| l.split_once(" requests in ").map(|(n, _)| n))
        .and_then(metric)
        .ok_or_else(|| missing("request count"))? as u64;
    let per_sec = after("Requests/sec:")
        .and_then(metric)
        .ok_or_else(|| missing("Requests/sec"))?;
    let p99 = lines()
        .skip_while(|l| *l != "Latency Distribution")
        .find_map(|l| l.strip_prefix("99%"))
        .and_then(|t| duration(t.trim()))
        .ok_or_else(|| missing("99% latency"))?;
    let p99 = (p99 > Duration::ZERO).then_some(p99);
    let socket_errors = match after("Socket errors:") {
        // "connect 0, read 0, write 0, timeout 20"
        Some(counts) => counts
            .split(',')
            .map(|c| {
                c.split_whitespace()
                    .last()
                    .and_then(|n| n.parse::<u64>().ok())
            })
            .sum::<Option<u64>>()
            .ok_or_else(|| missing("socket error counts"))?,
        None => 0,
    };
    let non_2xx = match after("Non-2xx or 3xx responses:") {
        Some(n) => n
            .parse::<u64>()
            .map_err(|_| missing("count of non-2xx responses"))?,
        None => 0,
    };
    if requests == 0 {
        return Err(format!(
            "wrk: no request answered ({socket_errors} socket errors)"
        ));
    }
    Ok(Load {
        requests,
        per_sec,
        p99,
        errors: socket_errors + non_2xx,
        cpu_us: None,
    })
}

/// A number as wrk writes it, with `k`, `M` or `G` for thousands, millions
/// and billions: `65.72k`, `130467.32`.
fn metric(text: &str) -> Option<f64> {
    let (digits, scale) = match text.as_bytes().last()? {
        b'k' => (&text[..text.len() - 1], 1e3),
        b'M' => (&text[..text.len() - 1], 1e6),
        b'G' => (&text[..text.len() - 1], 1e9),
        _ => (text, 1.0),
    };
    digits.parse::<f64>().ok().map(|x| x * scale)
}

/// A time as wrk writes it: `388.00us`, `6.78ms`, `1.45s`, `2.00m`, `1.00h`.
fn duration(text: &str) -> Option<Duration> {
    // Nanoseconds per unit; `ms` before `s`, which it ends with.
    let units = [
        ("us", 1e3),
        ("ms", 1e6),
        ("s", 1e9),
        ("m", 60e9),
        ("h", 3600e9),
    ];
    let (digits, scale) = units
        .iter()
        .find_map(|&(unit, scale)| Some((text.strip_suffix(unit)?, scale)))?;
    let ns = digits.parse::<f64>().ok()? * scale;
    (ns.is_finite() && ns >= 0.0).then(|| Duration::from_nanos(ns.round() as u64))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `wrk -t2 -c100 -d2s --latency` against Go's server on /hello.
    const GO_HELLO: &str = "\
Running 2s test @ http://127.0.0.1:45227/hello
  2 threads and 100 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency     1.19ms    1.51ms  15.67ms   86.07%
    Req/Sec    65.72k     6.11k   76.18k    65.00%
  Latency Distribution
     50%  689.00us
     75%    1.73ms
     90%    3.24ms
     99%    6.78ms
  261871 requests in 2.01s, 32.72MB read
Requests/sec: 130467.32
Transfer/sec:     16.30MB
";

    /// `-c1000` against Ruby threads: a p99 in seconds, with wrk's trailing
    /// blank.
    const RUBY_1000: &str = "\
Running 2s test @ http://127.0.0.1:43457/hello
  2 threads and 1000 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency   116.88ms  299.28ms   1.98s    90.30%
    Req/Sec    24.85k     5.06k   35.97k    70.00%
  Latency Distribution
     50%  388.00us
     75%   45.47ms
     90%  387.15ms
     99%    1.45s 
  98794 requests in 2.02s, 9.70MB read
Requests/sec:  48913.20
Transfer/sec:      4.80MB
";

    /// A path the server does not have: every response a 404.
    const NOT_FOUND: &str = "\
Running 1s test @ http://127.0.0.1:43335/nope
  2 threads and 10 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency   398.89us    0.90ms   8.16ms   90.19%
    Req/Sec    54.03k     5.60k   72.76k    80.95%
  Latency Distribution
     50%   71.00us
     75%  170.00us
     90%    1.26ms
     99%    4.43ms
  112756 requests in 1.10s, 18.93MB read
  Non-2xx or 3xx responses: 112756
Requests/sec: 102571.19
Transfer/sec:     17.22MB
";

    /// A server slower than wrk's 2 s timeout (`/io` sleeping 2.5 s).
    const TIMEOUTS: &str = "\
Running 5s test @ http://127.0.0.1:46801/io
  2 threads and 10 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency     0.00us    0.00us   0.00us    -nan%
    Req/Sec     1.00      0.00     1.00    100.00%
  Latency Distribution
     50%    0.00us
     75%    0.00us
     90%    0.00us
     99%    0.00us
  20 requests in 5.01s, 2.32KB read
  Socket errors: connect 0, read 0, write 0, timeout 20
Requests/sec:      3.99
Transfer/sec:     474.75B
";

    /// `-s pipeline.lua … -- 16` against fibra threads: responses counted one
    /// by one, latency once a batch.
    const PIPELINED: &str = "\
Running 2s test @ http://127.0.0.1:40189/hello
  2 threads and 100 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency     3.84ms    4.43ms  35.52ms   88.33%
    Req/Sec   190.00k    89.51k  428.48k    70.00%
  Latency Distribution
     50%    2.44ms
     75%    4.07ms
     90%    9.33ms
     99%   22.22ms
  763920 requests in 2.05s, 95.44MB read
Requests/sec: 373061.73
Transfer/sec:     46.61MB
";

    /// The same at 1,000 connections, where wrk 4.1 printed a 99th
    /// percentile of 0.
    const PIPELINED_NO_P99: &str = "\
Running 2s test @ http://127.0.0.1:40189/hello
  2 threads and 1000 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency    24.44ms   15.61ms  99.06ms   70.58%
    Req/Sec   187.63k    55.58k  292.32k    66.67%
  Latency Distribution
     50%   23.00ms
     75%   34.02ms
     90%   48.68ms
     99%    0.00us
  744256 requests in 2.09s, 92.98MB read
Requests/sec: 355431.60
Transfer/sec:     44.40MB
";

    /// The same for less than one sleep: nothing answered.
    const NOTHING: &str = "\
Running 2s test @ http://127.0.0.1:39211/io
  2 threads and 10 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency     0.00us    0.00us   0.00us    -nan%
    Req/Sec     0.00      0.00     0.00      -nan%
  Latency Distribution
     50%    0.00us
     75%    0.00us
     90%    0.00us
     99%    0.00us
  0 requests in 2.01s, 0.00B read
Requests/sec:      0.00
Transfer/sec:       0.00B
";

    #[test]
    fn parses_whole_reports() {
        assert_eq!(
            parse(GO_HELLO),
            Ok(Load {
                requests: 261_871,
                per_sec: 130_467.32,
                p99: Some(Duration::from_micros(6_780)),
                errors: 0,
                cpu_us: None,
            })
        );
        let ruby = parse(RUBY_1000).unwrap();
        assert_eq!(
            (ruby.p99, ruby.errors),
            (Some(Duration::from_millis(1_450)), 0)
        );
        assert_eq!(parse(NOT_FOUND).map(|l| l.errors), Ok(112_756));
        let timeouts = parse(TIMEOUTS).unwrap();
        assert_eq!(
            (timeouts.requests, timeouts.errors, timeouts.p99),
            (20, 20, None)
        );
        assert_eq!(
            parse(NOTHING),
            Err("wrk: no request answered (0 socket errors)".into())
        );
    }

    #[test]
    fn parses_pipelined_reports() {
        assert_eq!(
            parse(PIPELINED),
            Ok(Load {
                requests: 763_920,
                per_sec: 373_061.73,
                p99: Some(Duration::from_micros(22_220)),
                errors: 0,
                cpu_us: None,
            })
        );
        let no_p99 = parse(PIPELINED_NO_P99).unwrap();
        assert_eq!((no_p99.requests, no_p99.p99), (744_256, None));
    }

    #[test]
    fn names_how_requests_are_sent() {
        assert_eq!(Requests::KeepAlive.to_string(), "keep-alive");
        assert_eq!(
            Requests::Pipelined(16).to_string(),
            "keep-alive, pipelined 16 deep"
        );
        assert_eq!(
            options(100, Duration::from_millis(500)),
            ["-t2", "-c100", "-d1s"]
        );
    }

    #[test]
    fn rejects_a_report_without_its_figures() {
        assert!(parse("unable to connect to 127.0.0.1:1 Connection refused").is_err());
        assert!(parse(&GO_HELLO.replace("     99%    6.78ms\n", "")).is_err());
        assert!(parse(&TIMEOUTS.replace("timeout 20", "timeout many")).is_err());
    }

    #[test]
    fn reads_wrk_numbers_and_times() {
        assert_eq!(metric("65.72k"), Some(65_720.0));
        assert_eq!(metric("1.5M"), Some(1.5e6));
        assert_eq!(metric("2G"), Some(2e9));
        assert_eq!(metric("130467.32"), Some(130_467.32));
        assert_eq!(metric("k"), None);
        assert_eq!(metric(""), None);
        assert_eq!(duration("388.00us"), Some(Duration::from_micros(388)));
        assert_eq!(duration("6.78ms"), Some(Duration::from_micros(6_780)));
        assert_eq!(duration("1.45s"), Some(Duration::from_millis(1_450)));
        assert_eq!(duration("2.00m"), Some(Duration::from_secs(120)));
        assert_eq!(duration("1.00h"), Some(Duration::from_secs(3600)));
        assert_eq!(duration("1.45"), None);
        assert_eq!(duration("-nan%"), None);
    }
}
