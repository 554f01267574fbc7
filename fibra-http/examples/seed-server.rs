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
//! Built with the `tls` feature it serves HTTPS when given a certificate and
//! its key (PEM files), as fibra-bench's https-throughput runs it:
//! `cargo run --release -p fibra-http --features tls --example seed-server --
//! --cert cert.pem --key key.pem`.
//!
//! SIGTERM or SIGINT (Ctrl-C) shuts it down gracefully: requests in flight
//! are answered, then it exits with status 0; a second signal ends it at once.

use clap::{Parser, ValueEnum};
use fibra::signal::{self, Signal};
use fibra_http::{Mode, Request, Response, Router, Server, ShutdownHandle};
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
    /// Serve HTTPS with this certificate chain (PEM).
    #[cfg(feature = "tls")]
    #[arg(long, requires = "key")]
    cert: Option<std::path::PathBuf>,
    /// The certificate's private key (PEM).
    #[cfg(feature = "tls")]
    #[arg(long, requires = "cert")]
    key: Option<std::path::PathBuf>,
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
    let builder = Server::builder().mode(mode);
    #[cfg(feature = "tls")]
    let builder = match (&args.cert, &args.key) {
        (Some(cert), Some(key)) => builder.tls(tls_config(cert, key)?),
        _ => builder,
    };
    let server = builder.bind(("127.0.0.1", args.port))?;
    shut_down_on_signals(server.shutdown_handle())?;
    let mut stdout = std::io::stdout();
    writeln!(stdout, "listening on {}", server.local_addr()?)?;
    stdout.flush()?;
    server.serve(router)
}

/// The TLS configuration for the certificate chain in `cert` and the key in
/// `key`, on ring, the provider fibra-http's `tls` feature brings.
#[cfg(feature = "tls")]
fn tls_config(
    cert: &std::path::Path,
    key: &std::path::Path,
) -> std::io::Result<std::sync::Arc<rustls::ServerConfig>> {
    use rustls::pki_types::pem::PemObject;
    use rustls::pki_types::{CertificateDer, PrivateKeyDer};
    let invalid = |e: &dyn std::fmt::Display| std::io::Error::other(e.to_string());
    let chain = CertificateDer::pem_file_iter(cert)
        .and_then(|certs| certs.collect::<Result<Vec<_>, _>>())
        .map_err(|e| invalid(&format!("{}: {e}", cert.display())))?;
    let key = PrivateKeyDer::from_pem_file(key)
        .map_err(|e| invalid(&format!("{}: {e}", key.display())))?;
    let provider = std::sync::Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .and_then(|builder| builder.with_no_client_auth().with_single_cert(chain, key))
        .map_err(|e| invalid(&e))?;
    Ok(std::sync::Arc::new(config))
}

/// Makes SIGTERM (what `kill`, systemd and container runtimes send) and
/// SIGINT shut the server down gracefully instead of killing it with its
/// requests in flight; a second signal, from someone who will not wait,
/// exits at once. A green thread of a runtime of its own waits for them
/// (`serve` runs the server's), and is listening when this returns.
fn shut_down_on_signals(shutdown: ShutdownHandle) -> std::io::Result<()> {
    let (listening, started) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        fibra::run(move || {
            let signals = match signal::listen(&[Signal::Term, Signal::Int]) {
                Ok(signals) => signals,
                Err(err) => return listening.send(Err(err)).unwrap(),
            };
            listening.send(Ok(())).unwrap();
            for signal in signals {
                if shutdown.is_shutting_down() {
                    std::process::exit(128 + signal.as_raw());
                }
                shutdown.shutdown();
            }
        })
    });
    started
        .recv()
        .map_err(|_| std::io::Error::other("the signal thread ended"))?
}
