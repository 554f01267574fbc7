//! http-throughput: `GET /hello` over plain HTTP, each request on a
//! keep-alive connection once the last is answered, and then pipelined 16
//! deep, as TechEmpower's plaintext test runs: a server that answers a batch
//! in one write is no longer held to a round trip a request.

use super::super::servers::{self, Use};
use super::super::{Child, Experiment};
use super::{Plan, Requests, measure};
use crate::chart::Chart;
use crate::ctx::Ctx;
use crate::experiments::Section;
use std::time::Duration;

pub const EXPERIMENT: Experiment = Experiment {
    name: "http-throughput",
    description: "GET /hello under wrk at 100 and 1,000 keep-alive connections, then pipelined \
                  16 deep: requests/s, CPU per request, p99 latency, errors",
    default: true,
    runtimes: || servers::names(Use::Plain),
    // Errors stay in the table: every one of them should be 0.
    charts: &[
        Chart {
            variant: "/hello connections",
            metrics: &["requests_per_s"],
        },
        Chart {
            variant: "/hello connections",
            metrics: &["p99_latency"],
        },
        Chart {
            variant: "/hello connections",
            metrics: &["cpu_us_per_request"],
        },
        Chart {
            variant: "/hello pipelined",
            metrics: &["requests_per_s"],
        },
        Chart {
            variant: "/hello pipelined",
            metrics: &["p99_latency"],
        },
        Chart {
            variant: "/hello pipelined",
            metrics: &["cpu_us_per_request"],
        },
    ],
    run,
    // may_minihttp's server (may runs only in a child process) and monoio's
    // (a runtime per core). The tokio server is E4's child program.
    child: Some(child),
};

/// The servers the child program runs, by name (monoio runs on io_uring,
/// Linux's alone).
const SERVERS: &[(&str, Child)] = &[
    ("may_minihttp", servers::may_minihttp::main),
    #[cfg(target_os = "linux")]
    ("monoio", servers::monoio::main),
];

/// The child program, `fibra-bench --child http-throughput <SERVER> --port N
/// --fib N --sleep-ms MS`: the server SERVER on the contract of
/// [`servers`].
fn child(args: &[String]) -> Result<(), String> {
    let usage = || {
        "usage: fibra-bench --child http-throughput may_minihttp|monoio [--port N] [--fib N] \
         [--sleep-ms MS]"
            .to_string()
    };
    let (name, contract) = args.split_first().ok_or_else(usage)?;
    let (_, main) = SERVERS.iter().find(|(n, _)| n == name).ok_or_else(usage)?;
    main(contract)
}

/// TechEmpower's pipelining depth in its plaintext test.
const DEPTH: usize = 16;

fn run(ctx: &Ctx) -> Section {
    let keep_alive = Plan {
        requests: Requests::KeepAlive,
        duration: Duration::from_secs(ctx.size(2, 3, 10)),
        judged: true,
        note: Some(
            "earlier on this VM (EXPERIMENTS.md): tokio with hyper 111 k requests/s, Go \
             net/http 59 k",
        ),
    };
    // Shorter by default, to keep the default run within its ten minutes.
    let pipelined = Plan {
        requests: Requests::Pipelined(DEPTH),
        duration: Duration::from_secs(ctx.size(2, 2, 10)),
        judged: false,
        note: None,
    };
    measure(
        ctx,
        EXPERIMENT.name,
        Use::Plain,
        None,
        &[keep_alive, pipelined],
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_child_runs_a_server_it_names() {
        let args = |line: &str| {
            line.split_whitespace()
                .map(String::from)
                .collect::<Vec<_>>()
        };
        for bad in ["", "go --port 0", "--port 0", "hyper"] {
            let err = child(&args(bad)).unwrap_err();
            assert!(err.starts_with("usage: "), "{bad:?}: {err}");
        }
        // The server's own parser refuses a bad contract before it listens.
        for &(server, _) in SERVERS {
            let err = child(&args(&format!("{server} --fib many"))).unwrap_err();
            assert!(err.contains("--fib"), "{server}: {err}");
        }
    }
}
