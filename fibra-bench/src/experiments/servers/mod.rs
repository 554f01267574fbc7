//! The HTTP servers that E4, `http-throughput` and `https-throughput`
//! measure: fibra-http's `seed-server` example in both its modes, tokio with
//! hyper, may_minihttp, monoio, Go's net/http, and Ruby threads and Ractors.
//! Each is a process of its own that follows one contract (peers/README.md):
//! `--port N --fib N --sleep-ms MS` (and `--cert FILE --key FILE` for HTTPS,
//! where it speaks it), one line `listening on 127.0.0.1:PORT`, then the
//! routes `/io`, `/cpu`, `/io-cpu` and `/hello` until it is killed.

pub mod hyper;
pub mod may_minihttp;
#[cfg(target_os = "linux")]
pub mod monoio;

use crate::ctx::Ctx;
use crate::experiments::Section;
use crate::peers::server::Serving;
use crate::peers::{Launcher, Prepared};
use std::hint::black_box;
use std::path::PathBuf;
use std::time::Duration;

/// How long a server may take to say where it listens; each of them starts in
/// well under a second.
const START_TIMEOUT: Duration = Duration::from_secs(30);

/// What the routes do: `/cpu` computes fib(`fib`), `/io` sleeps `sleep`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Work {
    pub fib: u32,
    pub sleep: Duration,
}

impl Work {
    /// The servers' arguments for this work.
    fn args(self) -> [String; 4] {
        [
            "--fib".into(),
            self.fib.to_string(),
            "--sleep-ms".into(),
            self.sleep.as_millis().to_string(),
        ]
    }
}

/// The contract's arguments, for the servers that are part of fibra-bench.
#[derive(clap::Args)]
pub struct Contract {
    /// The port on 127.0.0.1 (0: any free one).
    #[arg(long, default_value_t = 0)]
    pub port: u16,
    /// /cpu computes fib(FIB).
    #[arg(long, default_value_t = 43)]
    fib: u32,
    /// /io sleeps this long.
    #[arg(long, default_value_t = 2000)]
    sleep_ms: u64,
}

impl Contract {
    pub fn work(&self) -> Work {
        Work {
            fib: self.fib,
            sleep: Duration::from_millis(self.sleep_ms),
        }
    }
}

/// The certificate and key (PEM files) a server serves HTTPS with: its
/// `--cert FILE --key FILE`.
pub struct Tls {
    pub cert: PathBuf,
    pub key: PathBuf,
}

/// What a server is measured on; each is a promise about what it serves.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Use {
    /// E4: the routes `/io`, `/cpu`, `/io-cpu` one request a connection, as
    /// `ab` sends them (HTTP/1.0, the connection closed after the answer).
    Seed,
    /// http-throughput: `/hello` on keep-alive connections, also pipelined.
    Plain,
    /// https-throughput: `/hello` over TLS, given `--cert` and `--key`.
    Tls,
}

/// The naive doubly recursive Fibonacci function, as the fibra-http example
/// computes it: `black_box` keeps the compiler from turning one of the two
/// calls into a loop, so that the work is what the recursion says.
pub fn fib(n: u32) -> u64 {
    if n < 2 {
        return u64::from(n);
    }
    black_box(fib(n - 1)) + fib(n - 2)
}

/// One server of the tables.
struct Server {
    name: &'static str,
    how: &'static str,
    launcher: Launcher,
    /// Arguments before the contract's: the fibra example's mode, or which
    /// server http-throughput's child program runs.
    args: &'static [&'static str],
    uses: &'static [Use],
}

/// The name of the row the others are compared with.
pub const REFERENCE: &str = "fibra ractors";

fn servers() -> Vec<Server> {
    let ruby = |script| Launcher::Script {
        interpreter: "ruby",
        package: "ruby",
        script,
    };
    // With its HTTPS built in, for https-throughput: one binary for every
    // experiment. Over plain HTTP the feature costs one branch a connection.
    let fibra = || Launcher::Example {
        package: "fibra-http",
        example: "seed-server",
        features: &["tls"],
    };
    const ALL: &[Use] = &[Use::Seed, Use::Plain, Use::Tls];
    const NO_TLS: &[Use] = &[Use::Seed, Use::Plain];
    vec![
        Server {
            name: REFERENCE,
            how: "fibra-http's seed-server example --mode ractors: a Ractor per core, a green \
                  thread per connection",
            launcher: fibra(),
            args: &["--mode", "ractors"],
            uses: ALL,
        },
        Server {
            name: "fibra threads",
            how: "fibra-http's seed-server example --mode threads: one OS thread, a green \
                  thread per connection",
            launcher: fibra(),
            args: &["--mode", "threads"],
            uses: ALL,
        },
        Server {
            name: "tokio hyper",
            how: "hyper 1 on tokio's multi-thread runtime (a worker per core), a task per \
                  connection, fib on spawn_blocking; HTTPS with tokio-rustls",
            launcher: Launcher::Child("e4"),
            args: &[],
            uses: ALL,
        },
        Server {
            name: "may_minihttp",
            how: "may_minihttp on may's coroutines (a worker thread per core), a coroutine \
                  per connection, as in TechEmpower's plaintext test",
            launcher: Launcher::Child("http-throughput"),
            args: &["may_minihttp"],
            // It keeps every connection open, HTTP/1.0 ones too, and ab
            // waits for the close; nor does it speak TLS.
            uses: &[Use::Plain],
        },
        #[cfg(target_os = "linux")]
        Server {
            name: "monoio",
            how: "monoio thread-per-core, as monoio's own benchmark servers run it: a \
                  runtime on the io_uring driver per core (no epoll fallback), each with its \
                  own SO_REUSEPORT listener on the port, a task per connection (threads not \
                  pinned to cores, as no other server's are); httparse, the answers to one \
                  read's requests in one owned-buffer write",
            launcher: Launcher::Child("http-throughput"),
            args: &["monoio"],
            // Asked for in http-throughput alone; it speaks no TLS.
            uses: &[Use::Plain],
        },
        Server {
            name: "go",
            how: "net/http, a goroutine per connection, GOMAXPROCS = all cores; HTTPS with \
                  ListenAndServeTLS's crypto/tls",
            launcher: Launcher::Go { module: "go/http" },
            args: &[],
            uses: ALL,
        },
        Server {
            name: "ruby threads",
            how: "TCPServer, a Thread per connection (one global lock)",
            launcher: ruby("ruby/e4_threads.rb"),
            args: &[],
            uses: NO_TLS,
        },
        Server {
            name: "ruby ractors",
            how: "TCPServer, connections dealt in turn to a Ractor per core, each serving \
                  its connections in a Thread each",
            launcher: ruby("ruby/e4_ractors.rb"),
            args: &[],
            uses: NO_TLS,
        },
    ]
}

/// The names of the servers measured on `used`, for `--list`.
pub fn names(used: Use) -> Vec<&'static str> {
    servers()
        .iter()
        .filter(|s| s.uses.contains(&used))
        .map(|s| s.name)
        .collect()
}

/// A server wanted in this run, built, or why it cannot run.
pub struct Candidate {
    pub name: &'static str,
    /// How it serves, for the table's notes.
    pub how: &'static str,
    peer: Result<Prepared, String>,
    args: &'static [&'static str],
}

impl Candidate {
    /// Starts the server, doing `work`, over HTTPS with `tls`.
    pub fn start(&self, work: Work, tls: Option<&Tls>) -> Result<Serving, String> {
        let peer = self.peer.as_ref().map_err(String::clone)?;
        let mut cmd = peer.command();
        cmd.args(self.args).args(["--port", "0"]).args(work.args());
        if let Some(tls) = tls {
            cmd.arg("--cert").arg(&tls.cert).arg("--key").arg(&tls.key);
        }
        Serving::start(&mut cmd, START_TIMEOUT)
    }
}

/// Builds every server measured on `used` that this run wants
/// (`--runtime`). Missing ones go to `section`; broken ones are kept, to say
/// why in their rows.
pub fn prepare(ctx: &Ctx, section: &mut Section, used: Use) -> Vec<Candidate> {
    servers()
        .into_iter()
        .filter(|server| server.uses.contains(&used) && ctx.wants(server.name))
        .filter_map(|server| {
            crate::progress::step(&format!("preparing {}", server.name));
            let peer = match server.launcher.prepare(ctx) {
                Ok(peer) => Ok(peer),
                Err(why) => Err(section.unavailable(server.name, why)?),
            };
            Some(Candidate {
                name: server.name,
                how: server.how,
                peer,
                args: server.args,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fib_is_fibonacci() {
        let first: Vec<u64> = (0..10).map(fib).collect();
        assert_eq!(first, [0, 1, 1, 2, 3, 5, 8, 13, 21, 34]);
        assert_eq!(fib(30), 832_040);
    }

    #[test]
    fn the_reference_is_a_server() {
        for used in [Use::Seed, Use::Plain, Use::Tls] {
            assert!(names(used).contains(&REFERENCE), "{used:?}");
        }
        let work = Work {
            fib: 30,
            sleep: Duration::from_millis(200),
        };
        assert_eq!(work.args(), ["--fib", "30", "--sleep-ms", "200"]);
    }
}
