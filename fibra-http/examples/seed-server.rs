//! The web server of the seed experiment E4 (EXPERIMENTS.md): three routes that
//! wait, compute, or both, served in threads mode or ractors mode.
//!
//! ```text
//! cargo run --release -p fibra-http --example seed-server -- --mode threads --port 8080
//! curl localhost:8080/io        # sleeps 2 s, then answers
//! curl localhost:8080/cpu       # computes fib(FIB) recursively (~2 s of CPU)
//! curl localhost:8080/io-cpu    # both
//! curl localhost:8080/hello     # answers at once
//! ```
//!
//! SIGTERM or SIGINT (Ctrl-C) shuts it down gracefully: requests in flight
//! are answered, then it exits with status 0; a second signal ends it at once.

use clap::{Parser, ValueEnum};
use fibra_http::{Mode, Request, Response, Router, Server, ShutdownHandle};
use signal_hook::consts::{SIGINT, SIGTERM};
use signal_hook::iterator::Signals;
use std::hint::black_box;
use std::io::Write;
use std::time::Duration;

#[derive(Parser)]
#[command(about = "E4's seed web server on fibra-http")]
struct Args {
    /// threads: one OS thread, a green thread per connection; ractors: a
    /// Ractor per worker, on every core.
    #[arg(long, value_enum, default_value_t = ModeArg::Threads)]
    mode: ModeArg,
    /// The port on 127.0.0.1 (0: any free one; the line printed says which).
    #[arg(long, default_value_t = 8080)]
    port: u16,
    /// Ractors in ractors mode (default: one per core).
    #[arg(long)]
    workers: Option<usize>,
    /// /cpu computes fib(FIB); 43 takes about 1.5 s, 44 about 2.4 s, on the 2-core VM we measure on.
    #[arg(long, default_value_t = 43)]
    fib: u32,
    /// /io sleeps this long.
    #[arg(long, default_value_t = 2000)]
    sleep_ms: u64,
}

#[derive(Clone, Copy, ValueEnum)]
enum ModeArg {
    Threads,
    Ractors,
}

fn fib(n: u32) -> u64 {
    if n < 2 {
        return u64::from(n);
    }
    black_box(fib(n - 1)) + fib(n - 2)
}

fn main() -> std::io::Result<()> {
    let args = Args::parse();
    let mode = match (args.mode, args.workers) {
        (ModeArg::Threads, _) => Mode::Threads,
        (ModeArg::Ractors, Some(n)) => Mode::Ractors(n),
        (ModeArg::Ractors, None) => Mode::ractors_per_core(),
    };
    let (n, pause) = (args.fib, Duration::from_millis(args.sleep_ms));
    let router = Router::new()
        .get("/hello", |_: &Request| Response::text("Hello, world!\n"))
        .get("/io", move |_: &Request| {
            fibra::time::sleep(pause);
            Response::text("io\n")
        })
        .get("/cpu", move |_: &Request| {
            Response::text(format!("fib({n}) = {}\n", fib(n)))
        })
        .get("/io-cpu", move |_: &Request| {
            fibra::time::sleep(pause);
            Response::text(format!("fib({n}) = {}\n", fib(n)))
        });
    let server = Server::builder()
        .mode(mode)
        .bind(("127.0.0.1", args.port))?;
    shut_down_on_signals(server.shutdown_handle())?;
    let mut stdout = std::io::stdout();
    writeln!(stdout, "listening on {}", server.local_addr()?)?;
    stdout.flush()?;
    server.serve(router)
}

/// Makes SIGTERM (what `kill`, systemd and container runtimes send) and
/// SIGINT shut the server down gracefully instead of killing it with its
/// requests in flight; a second signal, from someone who will not wait,
/// exits at once.
fn shut_down_on_signals(shutdown: ShutdownHandle) -> std::io::Result<()> {
    let mut signals = Signals::new([SIGTERM, SIGINT])?;
    std::thread::spawn(move || {
        for signal in signals.forever() {
            if shutdown.is_shutting_down() {
                std::process::exit(128 + signal);
            }
            shutdown.shutdown();
        }
    });
    Ok(())
}
