//! http-throughput: `GET /hello` over plain HTTP, each request on a
//! keep-alive connection once the last is answered, and then pipelined 16
//! deep, as TechEmpower's plaintext test runs: a server that answers a batch
//! in one write is no longer held to a round trip a request.

use super::super::Experiment;
use super::super::servers::{self, Use};
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
    // may_minihttp's server: may runs only in a child process. The tokio
    // server is E4's child program.
    child: Some(servers::may_minihttp::main),
};

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
