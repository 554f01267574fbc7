//! `fibra::tokio` (feature `tokio`): green threads run tokio-bound futures — a
//! hyper client against a local hyper server — each parking only itself while
//! a ticker green thread keeps running; and the calls from outside a green
//! thread: a plain OS thread, a task of a multi-thread tokio runtime, a
//! current-thread runtime (refused, not deadlocked) and its `spawn_blocking`
//! threads; green threads that wait in fibra inside tokio futures.

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

/// On the thread that drives a current-thread runtime there is nowhere to
/// hand its tasks: blocking there could wait for one of them forever, so it
/// refuses, with tokio's own words (as tokio's `Handle::block_on` does).
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
        message.contains("Cannot start a runtime from within a runtime"),
        "{message}"
    );
}

/// A `spawn_blocking` thread of a current-thread runtime is there to block,
/// and stalls nothing when it does: it works there, as tokio's own
/// `Handle::block_on` does (it used to refuse, taking the thread for the
/// runtime's).
#[test]
fn on_a_spawn_blocking_thread_of_a_current_thread_runtime_it_blocks() {
    let value = without_hanging("fibra::tokio::block_on on a spawn_blocking thread", || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        runtime.block_on(async {
            tokio::task::spawn_blocking(|| {
                fibra::tokio::block_on(async {
                    tokio::time::sleep(Duration::from_millis(1)).await;
                    7
                })
            })
            .await
            .unwrap()
        })
    });
    assert_eq!(value, 7);
}

/// Two green threads each wait in fibra (a channel receive) inside a future
/// under `fibra::tokio::block_on`, and are woken in the order they parked.
/// tokio keeps its current runtime as a stack of guards per OS thread, to be
/// dropped in reverse order: held across those parks, the guards were
/// dropped out of order and tokio panicked ("EnterGuard values dropped out of
/// order"). Each poll now has the runtime entered only while its thread runs:
/// the other green threads run outside it, and after its park the future
/// still finds it (it spawns a tokio task).
#[test]
fn green_threads_that_wait_in_fibra_inside_tokio_futures_interleave() {
    let (outside, values) = without_hanging("two green threads inside tokio futures", || {
        fibra::run(|| {
            let waiter = |receiver: fibra::sync::channel::Receiver<u32>| {
                fibra::spawn(move || {
                    fibra::tokio::block_on(async move {
                        let value = receiver.recv().unwrap(); // fibra's wait
                        tokio::spawn(async move { value * 2 }).await.unwrap()
                    })
                })
            };
            let (to_first, first) = fibra::sync::channel::unbounded();
            let (to_second, second) = fibra::sync::channel::unbounded();
            let first = waiter(first);
            let second = waiter(second);
            fibra::runtime::yield_now(); // both park inside their polls
            let outside = tokio::runtime::Handle::try_current().is_err();
            to_first.send(1).unwrap();
            let one = first.join().unwrap();
            to_second.send(2).unwrap();
            (outside, [one, second.join().unwrap()])
        })
    });
    assert!(
        outside,
        "a parked green thread left tokio's runtime entered"
    );
    assert_eq!(values, [2, 4]);
}

/// A green thread cancelled while it waits in fibra inside a tokio future
/// unwinds through its poll with the runtime entered again, and leaves
/// nothing entered behind.
#[test]
fn a_thread_cancelled_inside_a_tokio_future_leaves_nothing_entered() {
    let (outside, value) = without_hanging("a cancelled green thread in a tokio future", || {
        fibra::run(|| {
            let waiting = fibra::spawn(|| {
                fibra::tokio::block_on(async {
                    fibra::time::sleep(Duration::from_secs(3600));
                })
            });
            fibra::runtime::yield_now();
            waiting.cancel();
            assert!(waiting.join().is_err());
            let outside = tokio::runtime::Handle::try_current().is_err();
            let value = fibra::tokio::block_on(async { tokio::spawn(async { 3 }).await.unwrap() });
            (outside, value)
        })
    });
    assert!(outside);
    assert_eq!(value, 3);
}

/// The name of the OS thread a tokio task spawned from the bridge runs on:
/// which runtime the bridge used.
fn bridge_task_thread() -> Option<String> {
    fibra::tokio::block_on(async {
        tokio::spawn(async { std::thread::current().name().map(str::to_string) })
            .await
            .unwrap()
    })
}

/// A program that runs tokio starts fibra from one of its `spawn_blocking`
/// threads: the bridge uses the program's runtime (its tasks run on the
/// program's threads), not a second one of its own.
#[test]
fn from_a_program_runtimes_thread_the_bridge_uses_that_runtime() {
    let names = without_hanging("fibra::run on a spawn_blocking thread", || {
        let program = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("program")
            .enable_all()
            .build()
            .unwrap();
        program.block_on(async {
            tokio::task::spawn_blocking(|| {
                let outside = bridge_task_thread();
                let green = fibra::run(|| {
                    let other = fibra::spawn(bridge_task_thread);
                    let here = bridge_task_thread();
                    (here, other.join().unwrap())
                });
                (outside, green, fibra::tokio::handle().runtime_flavor())
            })
            .await
            .unwrap()
        })
    });
    let program = Some("program".to_string());
    assert_eq!(names.0, program);
    assert_eq!(names.1, (program.clone(), program));
    assert_eq!(names.2, tokio::runtime::RuntimeFlavor::MultiThread);
}

/// From a thread of no tokio runtime, the bridge uses its background one.
#[test]
fn elsewhere_the_bridge_uses_its_background_runtime() {
    let name = fibra::run(bridge_task_thread);
    assert_eq!(name.as_deref(), Some("fibra-tokio"));
}

/// `fibra::block_on` does not run tokio's reactor: a tokio timer panics
/// there, and the panic says which `block_on` to use.
#[test]
fn a_tokio_future_under_fibras_own_block_on_names_the_bridge() {
    let payload = panic::catch_unwind(|| {
        fibra::block_on(async { tokio::time::sleep(Duration::from_millis(1)).await })
    })
    .unwrap_err();
    let message = payload
        .downcast_ref::<String>()
        .cloned()
        .unwrap_or_default();
    assert!(message.contains("no reactor running"), "{message}");
    assert!(message.contains("fibra::tokio::block_on"), "{message}");
}
