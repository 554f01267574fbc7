//! The tokio and hyper server, run as `fibra-bench --child e4 --port N --fib N
//! --sleep-ms MS` (the contract of [`super`]): hyper 1's HTTP/1 connection
//! driver on tokio's multi-thread runtime, a task per connection, as a tokio
//! user would write it; fib runs on `spawn_blocking`, tokio's advice for work
//! that would hold up a runtime worker.

use super::{Work, fib};
use clap::Parser;
use http_body_util::Full;
use hyper::body::{Bytes, Incoming};
use hyper::header::CONTENT_TYPE;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use std::convert::Infallible;
use std::io::{self, Write};
use std::time::Duration;
use tokio::net::TcpListener;

#[derive(Parser)]
struct Args {
    /// The port on 127.0.0.1 (0: any free one).
    #[arg(long, default_value_t = 0)]
    port: u16,
    /// /cpu computes fib(FIB).
    #[arg(long, default_value_t = 43)]
    fib: u32,
    /// /io sleeps this long.
    #[arg(long, default_value_t = 2000)]
    sleep_ms: u64,
}

/// Parses the arguments, listens, says where, and serves until killed.
pub fn main(args: &[String]) -> Result<(), String> {
    let args = Args::try_parse_from(
        std::iter::once("fibra-bench --child e4").chain(args.iter().map(String::as_str)),
    )
    .map_err(|e| e.to_string())?;
    let work = Work {
        fib: args.fib,
        sleep: Duration::from_millis(args.sleep_ms),
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("a tokio runtime: {e}"))?;
    runtime
        .block_on(async {
            let listener = TcpListener::bind(("127.0.0.1", args.port)).await?;
            let mut stdout = io::stdout();
            writeln!(stdout, "listening on {}", listener.local_addr()?)?;
            stdout.flush()?;
            serve(listener, work).await
        })
        .map_err(|e| e.to_string())
}

/// Serves each connection `listener` accepts in a task of its own.
pub async fn serve(listener: TcpListener, work: Work) -> io::Result<()> {
    loop {
        let (conn, _) = listener.accept().await?;
        conn.set_nodelay(true)?;
        tokio::spawn(async move {
            let service = service_fn(move |request| respond(request, work));
            // A connection the client breaks off (wrk, at the end of a run)
            // ends here, and is no concern of the server's.
            let _ = http1::Builder::new()
                .serve_connection(TokioIo::new(conn), service)
                .await;
        });
    }
}

async fn respond(
    request: Request<Incoming>,
    work: Work,
) -> Result<Response<Full<Bytes>>, Infallible> {
    let (status, body) = match request.uri().path() {
        "/io" => {
            tokio::time::sleep(work.sleep).await;
            (StatusCode::OK, Bytes::from_static(b"io\n"))
        }
        "/cpu" => (StatusCode::OK, compute(work.fib).await),
        "/io-cpu" => {
            tokio::time::sleep(work.sleep).await;
            (StatusCode::OK, compute(work.fib).await)
        }
        "/hello" => (StatusCode::OK, Bytes::from_static(b"Hello, world!\n")),
        _ => (StatusCode::NOT_FOUND, Bytes::from_static(b"not found\n")),
    };
    let response = Response::builder()
        .status(status)
        .header(CONTENT_TYPE, "text/plain")
        .body(Full::new(body))
        .expect("a status and a fixed header make a valid response");
    Ok(response)
}

/// fib(`n`) and a newline, computed on tokio's blocking pool.
async fn compute(n: u32) -> Bytes {
    let value = tokio::task::spawn_blocking(move || fib(n))
        .await
        .expect("fib does not panic");
    Bytes::from(format!("{value}\n"))
}
