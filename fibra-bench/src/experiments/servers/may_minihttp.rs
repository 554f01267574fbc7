//! The may_minihttp server, run as `fibra-bench --child http-throughput
//! may_minihttp --port N --fib N --sleep-ms MS` (the contract of [`super`]):
//! may_minihttp, the Rust entry that leads TechEmpower's plaintext test, on
//! may's coroutines with a worker thread per core, a coroutine per
//! connection, as its TechEmpower entry runs it. `/io` sleeps the coroutine;
//! `/cpu` computes on it, holding its worker, as fibra's ractors mode does.
//! It runs in a child process of its own because may does
//! ([`super::super::may_child`]). may_minihttp spawns the connections'
//! coroutines itself, with may's `unsafe` spawn; [`Routes`] keeps the two
//! conditions [`may_child::spawn`] states: it touches no thread-local, and
//! needs a few KiB of stack at most (fib(43) recurses 43 small frames deep).

use super::super::may_child;
use super::{Contract, Work, fib};
use clap::Parser;
use may_minihttp::{HttpServer, HttpService, Request, Response};
use std::io::{self, Write};
use std::net::{Ipv4Addr, TcpListener};

#[derive(Parser)]
struct Args {
    #[command(flatten)]
    contract: Contract,
}

/// The contract's routes.
#[derive(Clone)]
struct Routes(Work);

impl HttpService for Routes {
    fn call(&mut self, request: Request, response: &mut Response) -> io::Result<()> {
        response.header("Content-Type: text/plain");
        let computed = |work: Work| format!("{}\n", fib(work.fib)).into_bytes();
        match request.path() {
            "/hello" => response.body("Hello, world!\n"),
            "/io" => {
                may::coroutine::sleep(self.0.sleep);
                response.body("io\n");
            }
            "/cpu" => response.body_vec(computed(self.0)),
            "/io-cpu" => {
                may::coroutine::sleep(self.0.sleep);
                response.body_vec(computed(self.0));
            }
            _ => response.status_code(404, "Not Found").body("not found\n"),
        }
        Ok(())
    }
}

/// Parses the arguments, listens, says where, and serves until killed.
pub fn main(args: &[String]) -> Result<(), String> {
    let args = Args::try_parse_from(
        std::iter::once("fibra-bench --child http-throughput may_minihttp")
            .chain(args.iter().map(String::as_str)),
    )
    .map_err(|e| e.to_string())?;
    may_child::start(std::thread::available_parallelism().map_or(1, |n| n.get()));
    let port = free_port(args.contract.port).map_err(|e| format!("a port: {e}"))?;
    let server = HttpServer(Routes(args.contract.work()))
        .start((Ipv4Addr::LOCALHOST, port))
        .map_err(|e| format!("listening on port {port}: {e}"))?;
    let mut stdout = io::stdout();
    writeln!(stdout, "listening on {}:{port}", Ipv4Addr::LOCALHOST)
        .and_then(|()| stdout.flush())
        .map_err(|e| e.to_string())?;
    server
        .join()
        .map_err(|_| "the server's coroutine panicked".to_string())
}

/// `port`, or for 0 a port free now: may_minihttp binds its listener itself
/// and does not say where, so port 0 is resolved before it binds (a port
/// taken by another process in between makes the server fail to start).
fn free_port(port: u16) -> io::Result<u16> {
    if port != 0 {
        return Ok(port);
    }
    TcpListener::bind((Ipv4Addr::LOCALHOST, 0))?
        .local_addr()
        .map(|addr| addr.port())
}
