//! fibra and async Rust, both ways.
//!
//! 1. **tokio awaits fibra.** Tasks on a tokio runtime hand CPU work to
//!    Ractors and `.await` it, and take a stream of values a Ractor yields,
//!    while a tokio interval keeps ticking: no tokio thread ever blocks.
//! 2. **fibra calls tokio.** Green threads make HTTP requests with hyper's
//!    client — a future that needs tokio's reactor — through
//!    `fibra::tokio::block_on`, each parking only itself, while a ticker green
//!    thread keeps ticking.
//!
//! ```text
//! cargo run -p fibra --example async_bridge --features tokio
//! ```

use fibra::ractor::{Context, Ractor};
use http_body_util::{BodyExt, Empty, Full};
use hyper::body::{Bytes, Incoming};
use hyper::service::service_fn;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;
use tokio::net::{TcpListener, TcpStream};

fn main() {
    tokio_awaits_ractors();
    green_threads_call_tokio();
}

/// The primes in `from..to`, counted the slow way: CPU work.
fn count_primes(from: u64, to: u64) -> usize {
    (from.max(2)..to)
        .filter(|&n| (2..).take_while(|d| d * d <= n).all(|d| n % d != 0))
        .count()
}

fn tokio_awaits_ractors() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_time()
        .build()
        .expect("a tokio runtime");
    runtime.block_on(async {
        let ticks = Arc::new(AtomicUsize::new(0));
        let ticker = tokio::spawn({
            let ticks = ticks.clone();
            async move {
                let mut interval = tokio::time::interval(Duration::from_millis(5));
                loop {
                    interval.tick().await;
                    ticks.fetch_add(1, Ordering::Relaxed);
                }
            }
        });

        // Sixteen tasks, each awaiting a Ractor's count of primes in its range.
        const RANGE: u64 = 25_000;
        let tasks: Vec<_> = (0..16u64)
            .map(|i| {
                tokio::spawn(async move {
                    let counter =
                        Ractor::new(move |_: &Context<()>| count_primes(i * RANGE, (i + 1) * RANGE));
                    counter.await.expect("the Ractor counted")
                })
            })
            .collect();
        let mut total = 0;
        for task in tasks {
            total += task.await.expect("the task ran");
        }
        println!(
            "tokio: 16 tasks awaited Ractors: {total} primes below {}; the interval ticked {} times meanwhile",
            16 * RANGE,
            ticks.load(Ordering::Relaxed)
        );

        // A Ractor that yields values one at a time; a task takes them.
        let squares = Ractor::new(|ctx: &Context<(), u64>| {
            for n in 1..=5 {
                ctx.yield_value(n * n).expect("someone takes");
            }
        });
        let mut taken = Vec::new();
        while let Ok(square) = squares.take_async().await {
            taken.push(square);
        }
        println!("tokio: took {taken:?} from a Ractor");
        ticker.abort();
    });
}

/// Answers each request with a greeting that names its path.
async fn serve(listener: TcpListener) {
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            continue;
        };
        tokio::spawn(async move {
            let service = service_fn(|request: Request<Incoming>| async move {
                tokio::time::sleep(Duration::from_millis(20)).await; // a slow backend
                let body = format!("hello, {}", request.uri().path());
                Ok::<_, Infallible>(Response::new(Full::new(Bytes::from(body))))
            });
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service)
                .await;
        });
    }
}

/// A GET with hyper's client; the calling green thread parks until it is done.
fn get(addr: SocketAddr, path: &str) -> Result<String, Box<dyn std::error::Error + Send + Sync>> {
    fibra::tokio::block_on(async {
        let stream = TcpStream::connect(addr).await?;
        let (mut sender, connection) =
            hyper::client::conn::http1::handshake(TokioIo::new(stream)).await?;
        tokio::spawn(connection); // on fibra's background tokio runtime
        let request = Request::get(path)
            .header(hyper::header::HOST, addr.to_string())
            .body(Empty::<Bytes>::new())?;
        let body = sender.send_request(request).await?.into_body();
        Ok(String::from_utf8(
            body.collect().await?.to_bytes().to_vec(),
        )?)
    })
}

fn green_threads_call_tokio() {
    fibra::run(|| {
        // The server runs on fibra's background tokio runtime too.
        let listener =
            fibra::tokio::block_on(TcpListener::bind("127.0.0.1:0")).expect("a loopback port");
        let addr = listener.local_addr().expect("its address");
        let server = fibra::tokio::handle().spawn(serve(listener));

        let stop = Arc::new(AtomicBool::new(false));
        let ticker = fibra::spawn({
            let stop = stop.clone();
            move || {
                let mut ticks = 0;
                while !stop.load(Ordering::Relaxed) {
                    fibra::time::sleep(Duration::from_millis(5));
                    ticks += 1;
                }
                ticks
            }
        });

        let clients: Vec<_> = ["ruby", "lua", "go", "rust"]
            .into_iter()
            .map(|name| fibra::spawn(move || get(addr, &format!("/{name}"))))
            .collect();
        for client in clients {
            match client.join().expect("the client ran") {
                Ok(body) => println!("fibra: a green thread got {body:?}"),
                Err(err) => println!("fibra: a request failed: {err}"),
            }
        }
        stop.store(true, Ordering::Relaxed);
        let ticks = ticker.join().expect("the ticker ran");
        println!("fibra: the ticker green thread ticked {ticks} times meanwhile");
        server.abort();
    });
}
