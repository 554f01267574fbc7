//! https-throughput: `GET /hello` over TLS on keep-alive connections, each
//! server with the TLS library its users pair it with (fibra-http with
//! rustls, hyper with tokio-rustls, Go's crypto/tls), all with one
//! certificate made for the run. The handshake happens once a connection;
//! what is measured is the record layer's cost on every request.

use super::super::Experiment;
use super::super::servers::{self, Use};
use super::{Plan, Requests, cert, measure};
use crate::chart::Chart;
use crate::ctx::Ctx;
use crate::experiments::Section;
use crate::report::{Row, Table};
use std::time::Duration;

pub const EXPERIMENT: Experiment = Experiment {
    name: "https-throughput",
    description: "GET /hello over TLS under wrk at 100 and 1,000 keep-alive connections: \
                  requests/s, CPU per request, p99 latency, errors",
    default: true,
    runtimes: || servers::names(Use::Tls),
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
        Chart {
            variant: "",
            metrics: &["cpu_us_per_request"],
        },
    ],
    run,
    // The servers are E4's and fibra-http's.
    child: None,
};

fn run(ctx: &Ctx) -> Section {
    let tls = match cert::Generated::new() {
        Ok(generated) => generated,
        // No server can be measured: the table says why.
        Err(why) => {
            let mut section = Section::default();
            section.tables.push(Table {
                title: format!("{}: no certificate to serve with", EXPERIMENT.name),
                columns: vec!["why"],
                rows: vec![Row::Cells(vec![why])],
                notes: Vec::new(),
            });
            return section;
        }
    };
    let keep_alive = Plan {
        requests: Requests::KeepAlive,
        // Every connection's handshake falls within the run: 1,000 of them
        // take a second or more of 2 busy cores, so a 2 s run can end with
        // none answered.
        duration: Duration::from_secs(ctx.size(3, 4, 10)),
        judged: false,
        note: Some(
            "each connection's TLS handshake is made within the timed run (one a \
             connection): at 1,000 connections they are a good part of a short one",
        ),
    };
    measure(
        ctx,
        EXPERIMENT.name,
        Use::Tls,
        Some(tls.tls()),
        &[keep_alive],
    )
}
