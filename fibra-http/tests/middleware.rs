//! Middleware over real sockets, in both modes (feature `log`): an access log
//! line per request, a per-request deadline that answers `503` while the
//! worker serves other requests, request ids echoed and generated, and
//! middlewares composing in the documented order.

mod common;

use common::Running;
use fibra_http::middleware::{access_log, current_request_id, deadline, request_id};
use fibra_http::{Handler, Mode, Next, Request, Response, Router, Server};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

const MODES: [Mode; 2] = [Mode::Threads, Mode::Ractors(2)];

/// The lines logged to target `fibra_http::access`, by every test of this
/// file (each finds its own by the paths it asked for).
fn access_lines() -> &'static Mutex<Vec<String>> {
    struct Collect(Mutex<Vec<String>>);
    impl log::Log for Collect {
        fn enabled(&self, metadata: &log::Metadata<'_>) -> bool {
            metadata.target() == "fibra_http::access"
        }
        fn log(&self, record: &log::Record<'_>) {
            if self.enabled(record.metadata()) {
                self.0.lock().unwrap().push(record.args().to_string());
            }
        }
        fn flush(&self) {}
    }
    static LOGGER: OnceLock<&'static Collect> = OnceLock::new();
    let logger = LOGGER.get_or_init(|| {
        let logger: &'static Collect = Box::leak(Box::new(Collect(Mutex::new(Vec::new()))));
        log::set_logger(logger).unwrap();
        log::set_max_level(log::LevelFilter::Info);
        logger
    });
    &logger.0
}

/// The lines logged for paths starting with `prefix`.
fn logged(prefix: &str) -> Vec<String> {
    let needle = format!(" {prefix}");
    (access_lines().lock().unwrap().iter())
        .filter(|line| line.contains(&needle))
        .cloned()
        .collect()
}

fn get(client: &mut common::Client, target: &str) -> common::Reply {
    client.send(format!("GET {target} HTTP/1.1\r\nHost: t\r\n\r\n").as_bytes());
    client.response()
}

/// The fields of an access log line: peer, `"METHOD path"`, status, bytes,
/// duration and the rest, split at spaces (the quoted part is one field).
fn fields(line: &str) -> Vec<String> {
    let (peer, rest) = line.split_once(" \"").unwrap();
    let (request, rest) = rest.split_once("\" ").unwrap();
    let mut fields = vec![peer.to_string(), request.to_string()];
    fields.extend(rest.split(' ').map(str::to_string));
    fields
}

#[test]
fn an_access_log_line_per_request() {
    access_lines();
    for (n, mode) in MODES.into_iter().enumerate() {
        let prefix = format!("/log{n}");
        let make = {
            let prefix = prefix.clone();
            move || {
                Router::new()
                    .get(&format!("{prefix}/hello"), |_: &Request| {
                        Response::text("Hello\n")
                    })
                    .post(&format!("{prefix}/echo"), |request: &Request| {
                        Response::new(201).with_body(request.body().to_vec())
                    })
                    .get(&format!("{prefix}/panic"), |_: &Request| -> Response {
                        panic!("a handler that fails")
                    })
                    .wrap(access_log())
            }
        };
        let server = Running::serving_with(Server::builder().mode(mode), make);
        let mut client = server.client();
        let local = client.stream.local_addr().unwrap().to_string();
        let first = format!("{local} \"GET {prefix}/hello\"");
        assert_eq!(get(&mut client, &format!("{prefix}/hello?x=1")).status, 200);
        client.send(
            format!("POST {prefix}/echo HTTP/1.1\r\nHost: t\r\nContent-Length: 3\r\n\r\nabc")
                .as_bytes(),
        );
        assert_eq!(client.response().status, 201);
        assert_eq!(get(&mut client, &format!("{prefix}/nowhere")).status, 404);
        // A failing handler is logged with the server's answer.
        let mut failing = server.client();
        assert_eq!(get(&mut failing, &format!("{prefix}/panic")).status, 500);

        let lines = logged(&prefix);
        assert_eq!(lines.len(), 4, "{mode:?}: {lines:#?}");
        assert!(lines[0].starts_with(&first), "{} is not {first}…", lines[0]);
        let expected = [
            (format!("GET {prefix}/hello"), "200", "6"),
            (format!("POST {prefix}/echo"), "201", "3"),
            (format!("GET {prefix}/nowhere"), "404", "10"),
            (format!("GET {prefix}/panic"), "500", "-"),
        ];
        for (line, (request, status, bytes)) in lines.iter().zip(expected) {
            let fields = fields(line);
            assert_eq!(fields.len(), 5, "{line}");
            assert!(fields[0].starts_with("127.0.0.1:"), "{line}");
            assert_eq!(fields[1], request, "{line}");
            assert_eq!((fields[2].as_str(), fields[3].as_str()), (status, bytes));
            let ms = fields[4].strip_suffix("ms").expect(line);
            assert!(ms.parse::<f64>().is_ok_and(|ms| ms >= 0.0), "{line}");
        }
    }
}

/// Drops set `dropped`.
struct Flag(Arc<AtomicBool>);

impl Drop for Flag {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

#[test]
fn a_late_handler_is_unwound_and_answered_503_while_its_worker_serves_others() {
    access_lines();
    // One worker in each mode, so the other requests share the slow one's.
    for (n, mode) in [Mode::Threads, Mode::Ractors(1)].into_iter().enumerate() {
        let prefix = format!("/late{n}");
        let (started, dropped) = (
            Arc::new(AtomicBool::new(false)),
            Arc::new(AtomicBool::new(false)),
        );
        let make = {
            let (prefix, started, dropped) = (prefix.clone(), started.clone(), dropped.clone());
            move || {
                let (started, dropped) = (started.clone(), dropped.clone());
                Router::new()
                    .get(&format!("{prefix}/slow"), move |_: &Request| {
                        let _flag = Flag(dropped.clone());
                        started.store(true, Ordering::SeqCst);
                        fibra::time::sleep(Duration::from_secs(600));
                        Response::text("too late\n")
                    })
                    .get(&format!("{prefix}/fast"), |_: &Request| {
                        Response::text("fast\n")
                    })
                    // The documented order: the id outermost, the log outside
                    // the deadline (so it logs the 503).
                    .wrap(deadline(Duration::from_secs(3)))
                    .wrap(access_log())
                    .wrap(request_id())
            }
        };
        let server = Running::serving_with(Server::builder().mode(mode), make);
        let mut slow = server.client();
        slow.send(
            format!("GET {prefix}/slow HTTP/1.1\r\nHost: t\r\nX-Request-Id: slow-1\r\n\r\n")
                .as_bytes(),
        );
        for _ in 0..2000 {
            if started.load(Ordering::SeqCst) {
                break;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        assert!(
            started.load(Ordering::SeqCst),
            "{mode:?}: the slow handler never ran"
        );

        // Served while the slow handler sleeps on the same worker.
        let mut fast = server.client();
        let reply = get(&mut fast, &format!("{prefix}/fast"));
        assert_eq!((reply.status, reply.body.as_slice()), (200, &b"fast\n"[..]));
        assert!(
            !dropped.load(Ordering::SeqCst),
            "{mode:?}: /fast waited for the deadline"
        );

        let reply = slow.response();
        assert_eq!(reply.status, 503, "{mode:?}");
        assert_eq!(reply.header("x-request-id"), Some("slow-1"));
        assert!(
            dropped.load(Ordering::SeqCst),
            "{mode:?}: the handler's locals were not dropped"
        );
        // The connection stays open.
        assert_eq!(get(&mut slow, &format!("{prefix}/fast")).status, 200);

        let lines = logged(&format!("{prefix}/slow"));
        assert_eq!(lines.len(), 1, "{lines:#?}");
        let fields = fields(&lines[0]);
        assert_eq!(fields[2], "503", "{}", lines[0]);
        assert_eq!(fields[5], "id=slow-1", "{}", lines[0]);
    }
}

#[test]
fn request_ids_are_echoed_or_generated_and_read_by_the_handler() {
    for mode in MODES {
        let make = || {
            Router::new()
                .get("/id", |_: &Request| {
                    Response::text(current_request_id().expect("an id").to_string())
                })
                .wrap(request_id())
        };
        let server = Running::serving_with(Server::builder().mode(mode), make);
        let mut client = server.client();
        client.send(b"GET /id HTTP/1.1\r\nHost: t\r\nX-Request-Id: abc-123\r\n\r\n");
        let reply = client.response();
        assert_eq!(reply.header("x-request-id"), Some("abc-123"));
        assert_eq!(reply.body, b"abc-123");

        let mut generated = Vec::new();
        for raw in [
            &b"GET /id HTTP/1.1\r\nHost: t\r\n\r\n"[..],
            b"GET /id HTTP/1.1\r\nHost: t\r\nX-Request-Id: has space\r\n\r\n",
            b"GET /id HTTP/1.1\r\nHost: t\r\nX-Request-Id: \r\n\r\n",
        ] {
            client.send(raw);
            let reply = client.response();
            let id = reply
                .header("x-request-id")
                .expect("a generated id")
                .to_string();
            assert_eq!(reply.body, id.as_bytes());
            assert!(!id.is_empty() && id != "has space");
            generated.push(id);
        }
        generated.sort();
        generated.dedup();
        assert_eq!(generated.len(), 3, "{generated:?}");
    }
}

/// Appends `name` to the body of the response of what it wraps.
fn tag(name: &'static str) -> impl Fn(&Request, Next<'_>) -> Response + Send + Sync {
    move |request: &Request, next: Next<'_>| {
        let response = next.run(request);
        let body = String::from_utf8(response.body_bytes().unwrap().to_vec()).unwrap();
        response.with_body(format!("{body}{name}"))
    }
}

#[test]
fn middlewares_compose_the_last_wrapped_outermost() {
    fn app() -> impl Handler + Send + Sync {
        Router::new()
            .get("/hello", |_: &Request| Response::text("h"))
            .wrap(tag("a"))
            .wrap(tag("b"))
            .wrap(
                |request: &Request, next: Next<'_>| match request.header("x-stop") {
                    Some(_) => Response::text("stopped"),
                    None => next.run(request),
                },
            )
    }
    for mode in MODES {
        let server = Running::serving(Server::builder().mode(mode), app);
        let mut client = server.client();
        assert_eq!(get(&mut client, "/hello").body, b"hab");
        assert_eq!(get(&mut client, "/else").body, b"not found\nab");
        client.send(b"GET /hello HTTP/1.1\r\nHost: t\r\nX-Stop: 1\r\n\r\n");
        assert_eq!(client.response().body, b"stopped");
    }
}
