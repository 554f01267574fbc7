//! `fibra::tokio` (feature `tokio`): green threads run tokio-bound futures — a
//! hyper client against a local hyper server — each parking only itself while
//! a ticker green thread keeps running; and the calls from outside a green
//! thread: a plain OS thread, a task of a multi-thread tokio runtime, a
//! current-thread runtime (refused, not deadlocked).

use http_body_util::{BodyExt, Empty, Full};
use hyper::body::{Bytes, Incoming};
use hyper::service::service_fn;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::panic::{self, AssertUnwindSafe};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;
use tokio::net::{TcpListener, TcpStream};

#[path = "support/without_hanging.rs"]
mod hang;
use hang::without_hanging;

/// What the server waits for before it answers.
struct Gate {
    /// Requests that have arrived.
    arrived: AtomicUsize,
    /// All of them must be in flight at once before any is answered.
    expected: usize,
    /// Ticks of the ticker green thread.
    ticks: Arc<AtomicUsize>,
}

/// Answers each request with its path, once every expected request has
/// arrived and the ticker green thread has ticked twice more since.
async fn serve(listener: TcpListener, gate: Arc<Gate>) {
    loop {
        let (stream, _) = listener.accept().await.unwrap();
        let gate = gate.clone();
        tokio::spawn(async move {
            let service = service_fn(move |request: Request<Incoming>| {
                let gate = gate.clone();
                async move {
                    gate.arrived.fetch_add(1, Ordering::SeqCst);
                    while gate.arrived.load(Ordering::SeqCst) < gate.expected {
                        tokio::time::sleep(Duration::from_millis(1)).await;
                    }
                    let ticked = gate.ticks.load(Ordering::SeqCst);
                    while gate.ticks.load(Ordering::SeqCst) < ticked + 2 {
                        tokio::time::sleep(Duration::from_millis(1)).await;
                    }
                    let path = request.uri().path().to_string();
                    Ok::<_, Infallible>(Response::new(Full::new(Bytes::from(path))))
                }
            });
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service)
                .await;
        });
    }
}

/// A GET with hyper's client, made from a green thread.
fn get(addr: SocketAddr, path: &str) -> String {
    fibra::tokio::block_on(async {
        let stream = TcpStream::connect(addr).await.unwrap();
        let (mut sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
            .await
            .unwrap();
        // Spawned on the background runtime: it is the current one here.
        tokio::spawn(connection);
        let request = Request::get(path)
            .header(hyper::header::HOST, addr.to_string())
            .body(Empty::<Bytes>::new())
            .unwrap();
        let response = sender.send_request(request).await.unwrap();
        assert!(response.status().is_success());
        let body = response.into_body().collect().await.unwrap().to_bytes();
        String::from_utf8(body.to_vec()).unwrap()
    })
}

/// Fifty green threads each make a request through hyper at once; the server
/// answers none until all fifty are in flight and the ticker green thread has
/// ticked since: so each green thread parked alone, and the ticker ran.
#[test]
fn green_threads_use_a_hyper_client_while_a_ticker_keeps_running() {
    const CLIENTS: usize = 50;
    let (bodies, ticks) = without_hanging("hyper clients in green threads", || {
        fibra::run(|| {
            let ticks = Arc::new(AtomicUsize::new(0));
            let listener =
                fibra::tokio::block_on(TcpListener::bind("127.0.0.1:0")).expect("a loopback port");
            let addr = listener.local_addr().unwrap();
            let gate = Arc::new(Gate {
                arrived: AtomicUsize::new(0),
                expected: CLIENTS,
                ticks: ticks.clone(),
            });
            let server = fibra::tokio::handle().spawn(serve(listener, gate));
            let stop = Arc::new(AtomicBool::new(false));
            let ticker = fibra::spawn({
                let (ticks, stop) = (ticks.clone(), stop.clone());
                move || {
                    while !stop.load(Ordering::SeqCst) {
                        fibra::time::sleep(Duration::from_millis(1));
                        ticks.fetch_add(1, Ordering::SeqCst);
                    }
                }
            });
            let clients: Vec<_> = (0..CLIENTS)
                .map(|i| fibra::spawn(move || get(addr, &format!("/client/{i}"))))
                .collect();
            let bodies: Vec<String> = clients.into_iter().map(|c| c.join().unwrap()).collect();
            stop.store(true, Ordering::SeqCst);
            ticker.join().unwrap();
            server.abort();
            (bodies, ticks.load(Ordering::SeqCst))
        })
    });
    let expected: Vec<String> = (0..CLIENTS).map(|i| format!("/client/{i}")).collect();
    assert_eq!(bodies, expected);
    assert!(ticks >= 2, "{ticks} ticks");
}

#[test]
fn the_background_runtime_runs_on_named_threads() {
    let name = fibra::tokio::block_on(
        fibra::tokio::handle().spawn(async { std::thread::current().name().map(str::to_string) }),
    )
    .unwrap();
    assert_eq!(name.as_deref(), Some("fibra-tokio"));
}

#[test]
fn outside_a_runtime_the_os_thread_blocks() {
    let value = fibra::tokio::block_on(async {
        tokio::time::sleep(Duration::from_millis(1)).await;
        5
    });
    assert_eq!(value, 5);
}

#[test]
fn a_panic_in_the_future_continues_in_the_green_thread() {
    let caught = fibra::run(|| {
        panic::catch_unwind(AssertUnwindSafe(|| {
            fibra::tokio::block_on(async {
                tokio::time::sleep(Duration::from_millis(1)).await;
                panic!("inside the future");
            })
        }))
        .unwrap_err()
    });
    assert_eq!(caught.downcast_ref::<&str>(), Some(&"inside the future"));
}

/// A task of a one-worker multi-thread runtime waits, through fibra, for what
/// another task of that runtime sends: the worker's other tasks move to
/// another thread meanwhile, so there is no deadlock.
#[test]
fn from_a_multi_thread_tokio_task_the_runtime_keeps_running() {
    let value = without_hanging("a tokio task calling fibra::tokio::block_on", || {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .build()
            .unwrap();
        runtime.block_on(async {
            let (send, receive) = tokio::sync::oneshot::channel();
            let waiter = tokio::spawn(async move { fibra::tokio::block_on(receive).unwrap() });
            tokio::spawn(async move { send.send(8).unwrap() });
            waiter.await.unwrap()
        })
    });
    assert_eq!(value, 8);
}

#[test]
fn from_a_current_thread_tokio_runtime_it_refuses_rather_than_deadlock() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let payload = panic::catch_unwind(AssertUnwindSafe(|| {
        runtime.block_on(async { fibra::tokio::block_on(async { 1 }) })
    }))
    .unwrap_err();
    let message = payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_default();
    assert!(
        message.contains("current-thread tokio runtime"),
        "{message}"
    );
}
