//! Routing over real sockets, in both modes: path parameters and rest, query
//! pairs, `with_status`, the PATCH/HEAD/OPTIONS builders, custom 404 and
//! 405 handlers, and per-worker state with `serve_with`.

mod common;

use common::Running;
use fibra_http::{Handler, Mode, Request, Response, Router, Server};
use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

const MODES: [Mode; 2] = [Mode::Threads, Mode::Ractors(2)];

/// Answers with the route's name and the parameters it sees.
fn says(name: &'static str) -> impl Fn(&Request) -> Response + Send + Sync {
    move |request: &Request| {
        let params: Vec<String> = ["id", "user", "path"]
            .into_iter()
            .filter_map(|n| request.param(n).map(|v| format!("{n}={v}")))
            .collect();
        Response::text(format!("{name} {}", params.join(" ")))
    }
}

fn router() -> Router {
    Router::new()
        .get("/todos/new", says("new"))
        .get("/todos/:id", says("todo"))
        .get("/users/:user/todos/:id", says("user-todo"))
        .get("/files/*path", says("file"))
        .patch("/todos/:id", |request: &Request| {
            Response::text(format!("patched {}\n", request.param("id").unwrap())).with_status(202)
        })
        .head("/report", |_: &Request| {
            Response::new(200).with_header("x-from", "head-route")
        })
        .get("/report", |_: &Request| {
            Response::text("the whole report\n")
        })
        .options("/todos", |_: &Request| {
            Response::new(204).with_header("allow", "GET, POST, OPTIONS")
        })
        .get("/search", |request: &Request| {
            let lines: Vec<String> = request
                .query_pairs()
                .map(|(name, value)| format!("{name}={value}"))
                .collect();
            Response::text(lines.join("\n"))
        })
}

fn get(client: &mut common::Client, target: &str) -> common::Reply {
    client.send(format!("GET {target} HTTP/1.1\r\nHost: t\r\n\r\n").as_bytes());
    client.response()
}

#[test]
fn path_parameters_and_rest_reach_the_handler() {
    for mode in MODES {
        let server = Running::serving(Server::builder().mode(mode), router);
        let mut client = server.client();
        for (target, body) in [
            ("/todos/new", "new "),
            ("/todos/7", "todo id=7"),
            ("/todos/a%20b", "todo id=a%20b"),
            ("/users/ann/todos/3", "user-todo id=3 user=ann"),
            ("/files/a/b.txt", "file path=a/b.txt"),
            ("/files/", "file path="),
            ("/todos/7?x=1", "todo id=7"),
            ("http://t/todos/8", "todo id=8"),
        ] {
            let reply = get(&mut client, target);
            assert_eq!(
                (reply.status, reply.body.as_slice()),
                (200, body.as_bytes()),
                "{target}"
            );
        }
        for target in ["/todos/", "/todos/7/x", "/files", "/users/ann/todos"] {
            assert_eq!(get(&mut client, target).status, 404, "{target}");
        }
    }
}

#[test]
fn query_pairs_are_percent_decoded() {
    for mode in MODES {
        let server = Running::serving(Server::builder().mode(mode), router);
        let mut client = server.client();
        let reply = get(
            &mut client,
            "/search?q=green+threads&lang=caf%C3%A9&flag&a%26b=c%3Dd&bad=%ZZ",
        );
        assert_eq!(reply.status, 200);
        assert_eq!(
            String::from_utf8(reply.body).unwrap(),
            "q=green threads\nlang=café\nflag=\na&b=c=d\nbad=%ZZ"
        );
        assert_eq!(get(&mut client, "/search").body, b"");
    }
}

#[test]
fn patch_head_options_and_with_status() {
    for mode in MODES {
        let server = Running::serving(Server::builder().mode(mode), router);
        let mut client = server.client();
        client.send(b"PATCH /todos/5 HTTP/1.1\r\nHost: t\r\nContent-Length: 0\r\n\r\n");
        let reply = client.response();
        assert_eq!(
            (reply.status, reply.body.as_slice()),
            (202, &b"patched 5\n"[..])
        );
        assert_eq!(
            reply.header("content-type"),
            Some("text/plain; charset=utf-8")
        );

        client.send(b"HEAD /report HTTP/1.1\r\nHost: t\r\n\r\n");
        let reply = client.head_response();
        assert_eq!(reply.header("x-from"), Some("head-route"));
        // A GET route with parameters answers HEAD too, without a body.
        client.send(b"HEAD /todos/9 HTTP/1.1\r\nHost: t\r\n\r\n");
        let reply = client.head_response();
        assert_eq!(
            (reply.status, reply.header("content-length")),
            (200, Some("9"))
        );

        client.send(b"OPTIONS /todos HTTP/1.1\r\nHost: t\r\n\r\n");
        let reply = client.response();
        assert_eq!(
            (reply.status, reply.header("allow")),
            (204, Some("GET, POST, OPTIONS"))
        );
        // `OPTIONS *` is still the router's, with every method routed.
        client.send(b"OPTIONS * HTTP/1.1\r\nHost: t\r\n\r\n");
        let reply = client.response();
        assert_eq!(
            (reply.status, reply.header("allow")),
            (200, Some("GET, HEAD, OPTIONS, PATCH"))
        );
        // A method no route of the path has: 405, with the methods it has.
        client.send(b"DELETE /todos/5 HTTP/1.1\r\nHost: t\r\n\r\n");
        let reply = client.response();
        assert_eq!(
            (reply.status, reply.header("allow")),
            (405, Some("GET, HEAD, PATCH"))
        );
        assert_eq!(
            reply.header("content-type"),
            Some("text/plain; charset=utf-8")
        );
        assert_eq!(get(&mut client, "/todos/new").status, 200, "still in step");
    }
}

fn json_errors() -> Router {
    Router::new()
        .get("/todos", |_: &Request| Response::json("[]"))
        .not_found(|request: &Request| {
            Response::json(format!(r#"{{"error":"no route for {}"}}"#, request.path()))
                .with_status(404)
        })
        .method_not_allowed(|request: &Request| {
            Response::json(format!(r#"{{"error":"{} not allowed"}}"#, request.method()))
                .with_status(405)
        })
}

#[test]
fn custom_not_found_and_method_not_allowed_handlers() {
    for mode in MODES {
        let server = Running::serving(Server::builder().mode(mode), json_errors);
        let mut client = server.client();
        let reply = get(&mut client, "/nowhere");
        assert_eq!(reply.status, 404);
        assert_eq!(reply.header("content-type"), Some("application/json"));
        assert_eq!(reply.body, br#"{"error":"no route for /nowhere"}"#);
        client.send(b"PUT /todos HTTP/1.1\r\nHost: t\r\nContent-Length: 0\r\n\r\n");
        let reply = client.response();
        assert_eq!(reply.status, 405);
        assert_eq!(
            reply.header("allow"),
            Some("GET, HEAD"),
            "the router adds it"
        );
        assert_eq!(reply.body, br#"{"error":"PUT not allowed"}"#);
        assert_eq!(get(&mut client, "/todos").body, b"[]");
    }
}

/// Which worker made its router, in the order they were made.
static MADE: AtomicUsize = AtomicUsize::new(0);

/// A router with the state of one worker: a plain `Rc<RefCell<_>>`, and a
/// fibra lock that a handler holds across a park.
fn counting_router(release: Arc<AtomicBool>) -> Router<dyn Handler> {
    let worker = MADE.fetch_add(1, Ordering::SeqCst);
    let count = Rc::new(RefCell::new(0u64));
    let lock = Rc::new(fibra::sync::Mutex::new(()));
    let holding = Rc::new(Cell::new(false));
    Router::local()
        .get("/count", move |_: &Request| {
            let mut count = count.borrow_mut();
            *count += 1;
            Response::text(format!("worker {worker} count {count}"))
        })
        .get("/hold", {
            let holding = holding.clone();
            move |_: &Request| {
                let _held = lock.lock();
                holding.set(true);
                // Parks with the lock held, until the test says go.
                while !release.load(Ordering::SeqCst) {
                    fibra::time::sleep(Duration::from_millis(1));
                }
                holding.set(false);
                Response::text("released")
            }
        })
        .get("/holding", move |_: &Request| {
            Response::text(holding.get().to_string())
        })
}

/// `(worker, count)` from a `/count` reply.
fn counted(client: &mut common::Client) -> (String, u64) {
    let body = String::from_utf8(get(client, "/count").body).unwrap();
    let words: Vec<&str> = body.split(' ').collect();
    (words[1].to_string(), words[3].parse().unwrap())
}

#[test]
fn each_worker_has_its_own_state_with_serve_with() {
    for (mode, workers) in [(Mode::Threads, 1), (Mode::Ractors(2), 2)] {
        let release = Arc::new(AtomicBool::new(false));
        let make = {
            let release = release.clone();
            move || counting_router(release.clone())
        };
        let server = Running::serving_with(Server::builder().mode(mode), make);
        // A connection stays on its worker; while the first is open, the
        // second goes to the least loaded worker: the other one, if any.
        let mut first = server.client();
        let (a, _) = counted(&mut first);
        let mut second = server.client();
        let (b, _) = counted(&mut second);
        assert_eq!(a != b, workers == 2, "{mode:?}");
        let mut seen = vec![(a.clone(), 1)];
        seen.push((b.clone(), if a == b { 2 } else { 1 }));
        for _ in 0..3 {
            for client in [&mut first, &mut second] {
                let (worker, count) = counted(client);
                let last = seen.iter().rev().find(|(w, _)| *w == worker).unwrap().1;
                assert_eq!(count, last + 1, "each worker counts its own ({mode:?})");
                seen.push((worker, count));
            }
        }
    }
}

/// The hang of a std lock held across a park, done with fibra's lock: the
/// worker serves other connections while a handler holds it.
#[test]
fn a_fibra_lock_held_across_a_park_holds_up_no_other_connection() {
    for mode in [Mode::Threads, Mode::Ractors(1)] {
        let release = Arc::new(AtomicBool::new(false));
        let make = {
            let release = release.clone();
            move || counting_router(release.clone())
        };
        let server = Running::serving_with(Server::builder().mode(mode), make);
        let mut holder = server.client();
        holder.send(b"GET /hold HTTP/1.1\r\nHost: t\r\n\r\n");
        let mut other = server.client();
        // A hang fails instead, after a generous wait.
        let deadline = std::time::Instant::now() + Duration::from_secs(60);
        while get(&mut other, "/holding").body != b"true" {
            assert!(
                std::time::Instant::now() < deadline,
                "the lock was never taken"
            );
            std::thread::yield_now();
        }
        assert_eq!(counted(&mut other).1, 1, "served while the lock is held");
        release.store(true, Ordering::SeqCst);
        assert_eq!(holder.response().body, b"released");
    }
}

#[test]
fn a_panic_in_the_factory_stops_the_server_with_it() {
    for mode in MODES {
        let server = Server::builder().mode(mode).bind("127.0.0.1:0").unwrap();
        let serving = std::thread::spawn(move || {
            server.serve_with(|| -> Router<dyn Handler> { panic!("no configuration") })
        });
        let panic = serving.join().expect_err("serve_with panics");
        assert_eq!(
            panic.downcast_ref::<&str>(),
            Some(&"no configuration"),
            "{mode:?}"
        );
    }
}
