//! The echo's child program, `fibra-bench --child echo <C> <R> <B> <RUNTIME>`
//! (RUNTIME: `fibra`, `fibra-io-uring`, `tokio`, `may` or `monoio`): the echo on that runtime in
//! a process of its own, as Go's, printing the echo line of peers/README.md
//! with the process's CPU time over the round trips.

#[cfg(target_os = "linux")]
use super::monoio;
use super::{Size, fibra, may, tokio};
use crate::experiments::limits;
use crate::peers::protocol::count;
use std::io;
use std::time::Duration;

/// An echo: the round trips' wall time and the process's CPU time meanwhile.
type Echo = fn(Size) -> io::Result<(Duration, Duration)>;

/// The runtimes the child runs, by the name its last argument gives.
/// (monoio runs on io_uring, Linux's alone.)
const RUNTIMES: &[(&str, Echo)] = &[
    ("fibra", fibra::echo),
    #[cfg(target_os = "linux")]
    ("fibra-io-uring", fibra::echo_io_uring),
    ("tokio", tokio::echo),
    ("may", may::echo),
    #[cfg(target_os = "linux")]
    ("monoio", monoio::echo),
];

pub fn main(args: &[String]) -> Result<(), String> {
    let (size, echo) = parse_args(args)?;
    // Both ends of every connection are open files of this process.
    limits::raise_open_files(2 * size.connections as u64 + 64)?;
    let (wall, cpu) = echo(size).map_err(|e| e.to_string())?;
    println!(
        "round_trips={} ns={} cpu_ns={}",
        size.total(),
        wall.as_nanos(),
        cpu.as_nanos()
    );
    Ok(())
}

/// The size and the runtime from `<C> <R> <B> <RUNTIME>`, each count at
/// least 1.
fn parse_args(args: &[String]) -> Result<(Size, Echo), String> {
    let usage = || {
        "usage: fibra-bench --child echo <C> <R> <B> fibra|tokio|may|monoio   (each count >= 1)"
            .to_string()
    };
    let [connections, round_trips, bytes, runtime] = args else {
        return Err(usage());
    };
    let at_least_one = |arg: &str| count(arg).filter(|&n| n >= 1).ok_or_else(usage);
    let to_usize = |n: u64| usize::try_from(n).map_err(|_| usage());
    let size = Size {
        connections: to_usize(at_least_one(connections)?)?,
        round_trips: at_least_one(round_trips)?,
        bytes: to_usize(at_least_one(bytes)?)?,
    };
    let echo = RUNTIMES
        .iter()
        .find(|(name, _)| name == runtime)
        .map(|&(_, echo)| echo)
        .ok_or_else(usage)?;
    Ok((size, echo))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(line: &str) -> Vec<String> {
        line.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn parses_connections_round_trips_bytes_and_the_runtime() {
        for &(runtime, runs) in RUNTIMES {
            let (size, echo) = parse_args(&args(&format!("1000 200 64 {runtime}"))).unwrap();
            assert_eq!(
                (size.connections, size.round_trips, size.bytes),
                (1000, 200, 64)
            );
            assert!(std::ptr::fn_addr_eq(echo, runs), "{runtime}");
        }
        for bad in [
            "",
            "1000 200 64",
            "1000 200 64 go",
            "1000 200 64 fibra 1",
            "0 200 64 fibra",
            "10 0 64 fibra",
            "10 2 0 fibra",
            "10 2 1e3 fibra",
            "-1 2 3 fibra",
        ] {
            let err = parse_args(&args(bad)).err().unwrap();
            assert!(err.starts_with("usage: "), "{bad:?}: {err}");
        }
    }
}
