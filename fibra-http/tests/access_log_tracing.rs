//! With the feature `tracing`, the access log middleware is a `tracing`
//! event per request with its fields, in both modes, over real sockets.

mod common;

use common::Running;
use common::captured::Buffer;
use fibra_http::middleware::{access_log, request_id};
use fibra_http::{Mode, Request, Response, Router, Server};

#[test]
fn an_event_per_request_with_its_fields() {
    // Global: the workers are OS threads of the server's own.
    let buffer = Buffer::default();
    let subscriber = tracing_subscriber::fmt()
        .with_writer(buffer.clone())
        .with_ansi(false)
        .without_time()
        .finish();
    tracing::subscriber::set_global_default(subscriber).unwrap();

    for (n, mode) in [Mode::Threads, Mode::Ractors(2)].into_iter().enumerate() {
        let prefix = format!("/traced{n}");
        let make = {
            let prefix = prefix.clone();
            move || {
                Router::new()
                    .get(&format!("{prefix}/hello"), |_: &Request| {
                        Response::text("Hello\n")
                    })
                    .wrap(access_log())
                    .wrap(request_id())
            }
        };
        let server = Running::serving_with(Server::builder().mode(mode), make);
        let mut client = server.client();
        client.send(
            format!("GET {prefix}/hello HTTP/1.1\r\nHost: t\r\nX-Request-Id: t-{n}\r\n\r\n")
                .as_bytes(),
        );
        assert_eq!(client.response().status, 200);
        client.send(format!("GET {prefix}/none HTTP/1.1\r\nHost: t\r\n\r\n").as_bytes());
        assert_eq!(client.response().status, 404);

        let text = String::from_utf8(buffer.0.lock().unwrap().clone()).unwrap();
        let lines: Vec<&str> = text.lines().filter(|l| l.contains(&prefix)).collect();
        assert_eq!(lines.len(), 2, "{mode:?}: {text}");
        for (line, (path, status, bytes)) in
            lines.iter().zip([("hello", 200, 6), ("none", 404, 10)])
        {
            for field in [
                "INFO fibra_http::access: request answered".to_string(),
                "peer=127.0.0.1:".to_string(),
                "method=\"GET\"".to_string(),
                format!("path=\"{prefix}/{path}\""),
                format!("status={status}"),
                format!("bytes={bytes}"),
                "duration_ms=".to_string(),
                "request_id=".to_string(),
            ] {
                assert!(line.contains(&field), "{field} is not in {line}");
            }
        }
        assert!(
            lines[0].contains(&format!("request_id=\"t-{n}\"")),
            "{}",
            lines[0]
        );
    }
}
