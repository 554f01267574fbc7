//! The HTTP servers that E4 and `http-throughput` measure: fibra-http's
//! `seed-server` example in both its modes, tokio with hyper, Go's net/http,
//! and Ruby threads and Ractors. Each is a process of its own that follows one
//! contract (peers/README.md): `--port N --fib N --sleep-ms MS`, one line
//! `listening on 127.0.0.1:PORT`, then the routes `/io`, `/cpu`, `/io-cpu` and
//! `/hello` until it is killed.

pub mod hyper;

use crate::ctx::Ctx;
use crate::experiments::Section;
use crate::peers::server::Serving;
use crate::peers::{Launcher, Prepared};
use std::hint::black_box;
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
    /// Arguments before the contract's: the fibra example's mode.
    args: &'static [&'static str],
}

/// The name of the row the others are compared with.
pub const REFERENCE: &str = "fibra ractors";

fn servers() -> Vec<Server> {
    let ruby = |script| Launcher::Script {
        interpreter: "ruby",
        package: "ruby",
        script,
    };
    let fibra = || Launcher::Example {
        package: "fibra-http",
        example: "seed-server",
    };
    vec![
        Server {
            name: REFERENCE,
            how: "fibra-http's seed-server example --mode ractors: a Ractor per core, a green \
                  thread per connection",
            launcher: fibra(),
            args: &["--mode", "ractors"],
        },
        Server {
            name: "fibra threads",
            how: "fibra-http's seed-server example --mode threads: one OS thread, a green \
                  thread per connection",
            launcher: fibra(),
            args: &["--mode", "threads"],
        },
        Server {
            name: "tokio hyper",
            how: "hyper 1 on tokio's multi-thread runtime (a worker per core), a task per \
                  connection, fib on spawn_blocking",
            launcher: Launcher::Child("e4"),
            args: &[],
        },
        Server {
            name: "go",
            how: "net/http, a goroutine per connection, GOMAXPROCS = all cores",
            launcher: Launcher::Go { module: "go/http" },
            args: &[],
        },
        Server {
            name: "ruby threads",
            how: "TCPServer, a Thread per connection (one global lock)",
            launcher: ruby("ruby/e4_threads.rb"),
            args: &[],
        },
        Server {
            name: "ruby ractors",
            how: "TCPServer, connections dealt in turn to a Ractor per core, each serving \
                  its connections in a Thread each",
            launcher: ruby("ruby/e4_ractors.rb"),
            args: &[],
        },
    ]
}

/// The servers' names, for `--list`.
pub fn names() -> Vec<&'static str> {
    servers().iter().map(|s| s.name).collect()
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
    /// Starts the server, doing `work`.
    pub fn start(&self, work: Work) -> Result<Serving, String> {
        let peer = self.peer.as_ref().map_err(String::clone)?;
        let mut cmd = peer.command();
        cmd.args(self.args).args(["--port", "0"]).args(work.args());
        Serving::start(&mut cmd, START_TIMEOUT)
    }
}

/// Builds every server this run wants (`--runtime`). Missing ones go to
/// `section`; broken ones are kept, to say why in their rows.
pub fn prepare(ctx: &Ctx, section: &mut Section) -> Vec<Candidate> {
    servers()
        .into_iter()
        .filter(|server| ctx.wants(server.name))
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
        assert!(names().contains(&REFERENCE));
        let work = Work {
            fib: 30,
            sleep: Duration::from_millis(200),
        };
        assert_eq!(work.args(), ["--fib", "30", "--sleep-ms", "200"]);
    }
}
