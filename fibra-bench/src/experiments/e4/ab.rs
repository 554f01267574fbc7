//! ApacheBench as the seed ran it: `ab -n 10 -c C URL`, HTTP/1.0 and a
//! connection per request.

use crate::peers::process::{self, RunError};
use crate::peers::{Missing, find_program};
use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

/// The `ab` found on this machine.
pub struct Ab(PathBuf);

/// What one `ab` run printed: its total time and how many requests went wrong.
#[derive(Debug, PartialEq)]
struct Report {
    time: Duration,
    complete: u64,
    failed: u64,
    non_2xx: u64,
}

impl Ab {
    pub fn find() -> Result<Ab, Missing> {
        find_program("ab", &[]).map(Ab).ok_or_else(|| Missing {
            name: "ab".into(),
            hint: "apt-get install apache2-utils".into(),
        })
    }

    /// Runs `ab -n requests -c concurrency url`, for at most `timeout`;
    /// returns "Time taken for tests" when every request got a 2xx.
    pub fn run(
        &self,
        url: &str,
        requests: usize,
        concurrency: usize,
        timeout: Duration,
    ) -> Result<Duration, String> {
        let mut cmd = Command::new(&self.0);
        // -s: ab's own limit per response (30 s by default) is left to ours.
        cmd.args(["-n", &requests.to_string(), "-c", &concurrency.to_string()])
            .args(["-s", &timeout.as_secs().max(1).to_string()])
            .arg(url);
        let stdout = process::run(&mut cmd, timeout).map_err(|e: RunError| format!("ab {e}"))?;
        let report = parse(&stdout)?;
        match report {
            Report {
                time,
                complete,
                failed: 0,
                non_2xx: 0,
            } if complete == requests as u64 => Ok(time),
            Report {
                complete,
                failed,
                non_2xx,
                ..
            } => Err(format!(
                "ab: {complete} of {requests} complete, {failed} failed, {non_2xx} not 2xx"
            )),
        }
    }
}

/// Reads ab's report: `Time taken for tests:   2.006 seconds`, `Complete
/// requests:      10`, `Failed requests:        0` and, only when there are
/// any, `Non-2xx responses:      10`.
fn parse(stdout: &str) -> Result<Report, String> {
    let field = |name: &str| {
        stdout.lines().find_map(|line| {
            let value = line.strip_prefix(name)?.strip_prefix(':')?;
            value.split_whitespace().next()
        })
    };
    let number = |name: &str| -> Result<f64, String> {
        field(name)
            .and_then(|value| value.parse().ok())
            .ok_or_else(|| format!("ab printed no {name:?}"))
    };
    let time = number("Time taken for tests")?;
    Ok(Report {
        time: Duration::try_from_secs_f64(time).map_err(|e| format!("ab's time: {e}"))?,
        complete: number("Complete requests")? as u64,
        failed: number("Failed requests")? as u64,
        non_2xx: match field("Non-2xx responses") {
            Some(_) => number("Non-2xx responses")? as u64,
            None => 0,
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The figures of `ab -n 10 -c 10` against Go's server (the header and the
    /// tables that follow cut).
    const GO_IO: &str = "\
Concurrency Level:      10
Time taken for tests:   0.403 seconds
Complete requests:      10
Failed requests:        0
Total transferred:      1190 bytes
";

    /// The same against a path the server does not have.
    const GO_404: &str = "\
Document Path:          /nope
Document Length:        19 bytes

Concurrency Level:      10
Time taken for tests:   0.001 seconds
Complete requests:      10
Failed requests:        0
Non-2xx responses:      10
Total transferred:      1760 bytes
";

    /// A run where some responses differed in length from the first (ab's
    /// format; not captured here).
    const LENGTH_FAILURES: &str = "\
Time taken for tests:   20.017 seconds
Complete requests:      10
Failed requests:        3
   (Connect: 0, Receive: 0, Length: 3, Exceptions: 0)
";

    #[test]
    fn parses_the_report() {
        assert_eq!(
            parse(GO_IO),
            Ok(Report {
                time: Duration::from_millis(403),
                complete: 10,
                failed: 0,
                non_2xx: 0
            })
        );
        assert_eq!(
            parse(GO_404).map(|r| (r.time, r.non_2xx)),
            Ok((Duration::from_millis(1), 10))
        );
        assert_eq!(parse(LENGTH_FAILURES).map(|r| r.failed), Ok(3));
    }

    #[test]
    fn rejects_anything_else() {
        assert_eq!(
            parse("apr_socket_recv: Connection refused (111)"),
            Err(r#"ab printed no "Time taken for tests""#.into())
        );
        assert!(parse("Time taken for tests:   soon\n").is_err());
        assert!(parse(&GO_IO.replace("Failed requests", "Failures")).is_err());
    }
}
