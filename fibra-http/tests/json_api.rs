//! The JSON API example (`examples/json_api.rs`, features `serde` and
//! `tracing`) over real sockets, in both modes: typed queries and bodies,
//! good and bad, and its todo list — list, create, get, update, delete, with
//! path parameters, JSON in and out and the state of each worker — that
//! `curl` talks to (a raw socket where there is no `curl`).

mod common;
#[path = "../examples/json_api.rs"]
mod example;

use common::Running;
use common::captured::Buffer;
use example::api;
use fibra_http::{Mode, Server};
use std::net::SocketAddr;
use std::process::Command;
use std::sync::OnceLock;

const MODES: [Mode; 2] = [Mode::Threads, Mode::Ractors(2)];

/// The access log's lines, of every test here (global: the workers are OS
/// threads of the servers' own).
fn access_log() -> &'static Buffer {
    static LOG: OnceLock<Buffer> = OnceLock::new();
    LOG.get_or_init(|| {
        let buffer = Buffer::default();
        let subscriber = tracing_subscriber::fmt()
            .with_writer(buffer.clone())
            .with_ansi(false)
            .without_time()
            .finish();
        tracing::subscriber::set_global_default(subscriber).unwrap();
        buffer
    })
}

/// One request of a conversation: method, target, JSON body.
type Step = (&'static str, &'static str, Option<&'static str>);

/// Sends `steps` on one connection (so to one worker) and returns each
/// answer's status and body: with `curl`, or a raw socket where the machine
/// has none.
fn converse(addr: SocketAddr, steps: &[Step]) -> Vec<(u16, String)> {
    if Command::new("curl").arg("--version").output().is_ok() {
        with_curl(addr, steps)
    } else {
        with_socket(addr, steps)
    }
}

/// Between curl's answers, the status: `<<<201>>>`.
const MARK: (&str, &str) = ("<<<", ">>>\n");

fn with_curl(addr: SocketAddr, steps: &[Step]) -> Vec<(u16, String)> {
    let mut curl = Command::new("curl");
    for (i, (method, target, body)) in steps.iter().enumerate() {
        if i > 0 {
            curl.arg("--next");
        }
        curl.args(["--silent", "--show-error", "--max-time", "20", "-X", method]);
        if let Some(body) = body {
            curl.args(["-H", "content-type: application/json", "--data", body]);
        }
        curl.args([
            "--write-out",
            &format!("{}%{{http_code}}{}", MARK.0, MARK.1),
        ]);
        curl.arg(format!("http://{addr}{target}"));
    }
    let output = curl.output().expect("curl runs");
    assert!(output.status.success(), "curl: {output:?}");
    let mut answers = Vec::new();
    let mut rest = String::from_utf8(output.stdout).unwrap();
    while let Some(at) = rest.find(MARK.0) {
        let body = rest[..at].to_string();
        let after = &rest[at + MARK.0.len()..];
        let end = after.find(MARK.1).expect("a whole mark");
        answers.push((after[..end].parse().unwrap(), body));
        rest = after[end + MARK.1.len()..].to_string();
    }
    answers
}

fn with_socket(addr: SocketAddr, steps: &[Step]) -> Vec<(u16, String)> {
    let mut client = common::Client::connect(addr);
    steps
        .iter()
        .map(|(method, target, body)| {
            let body = body.unwrap_or_default();
            client.send(
                format!(
                    "{method} {target} HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\n\
                     Content-Length: {}\r\n\r\n{body}",
                    body.len()
                )
                .as_bytes(),
            );
            let reply = client.response();
            (reply.status, String::from_utf8(reply.body).unwrap())
        })
        .collect()
}

#[test]
fn a_json_crud_api_answers_a_real_client() {
    let log = access_log();
    for mode in MODES {
        let server = Running::serving_with(Server::builder().mode(mode), api);
        let steps: [Step; 12] = [
            ("GET", "/todos", None),
            ("POST", "/todos", Some(r#"{"title":"write docs"}"#)),
            ("POST", "/todos", Some(r#"{"title":"test them"}"#)),
            ("GET", "/todos/2", None),
            ("PATCH", "/todos/1", Some(r#"{"done":true}"#)),
            ("GET", "/todos?done=true", None),
            ("GET", "/todos?limit=1&done=false", None),
            ("DELETE", "/todos/1", None),
            ("DELETE", "/todos/1", None),
            ("GET", "/todos", None),
            ("GET", "/todos/seven", None),
            ("PUT", "/todos/2", Some("{}")),
        ];
        let answers = converse(server.addr, &steps);
        let expected: [(u16, &str); 12] = [
            (200, "[]"),
            (201, r#"{"id":1,"title":"write docs","done":false}"#),
            (201, r#"{"id":2,"title":"test them","done":false}"#),
            (200, r#"{"id":2,"title":"test them","done":false}"#),
            (200, r#"{"id":1,"title":"write docs","done":true}"#),
            (200, r#"[{"id":1,"title":"write docs","done":true}]"#),
            (200, r#"[{"id":2,"title":"test them","done":false}]"#),
            (204, ""),
            (404, r#"{"error":"no todo 1"}"#),
            (200, r#"[{"id":2,"title":"test them","done":false}]"#),
            (400, "\"seven\" is not a todo id\n"),
            (405, "method not allowed\n"),
        ];
        assert_eq!(answers.len(), expected.len(), "{mode:?}: {answers:?}");
        for ((step, answer), expected) in steps.iter().zip(&answers).zip(expected) {
            assert_eq!(
                (answer.0, answer.1.as_str()),
                expected,
                "{mode:?}: {step:?}"
            );
        }
    }
    // A line in the access log per request (only this test patches or
    // puts): once in each mode.
    let text = String::from_utf8(log.0.lock().unwrap().clone()).unwrap();
    for request in [
        r#"method="PATCH" path="/todos/1" status=200"#,
        r#"method="PUT" path="/todos/2" status=405"#,
    ] {
        let lines = text.lines().filter(|line| line.contains(request));
        assert_eq!(lines.count(), MODES.len(), "{request}: {text}");
    }
}

#[test]
fn bad_json_and_queries_get_400_with_the_reason() {
    access_log();
    for mode in MODES {
        let server = Running::serving_with(Server::builder().mode(mode), api);
        let answers = converse(
            server.addr,
            &[
                ("POST", "/todos", Some(r#"{"title":"#)),
                ("POST", "/todos", Some(r#"{"name":"x"}"#)),
                ("POST", "/todos", Some(r#"{"title":7}"#)),
                ("GET", "/todos?limit=many", None),
                ("GET", "/todos?done=maybe", None),
                ("POST", "/todos", Some(r#"{"title":"fine"}"#)),
            ],
        );
        let reasons = [
            "invalid JSON body: EOF while parsing a value at line 1 column 9\n",
            "invalid JSON body: missing field `title` at line 1 column 12\n",
            "invalid JSON body: invalid type: integer `7`, expected a string at line 1 column 10\n",
            "invalid query: invalid digit found in string\n",
            "invalid query: provided string was not `true` or `false`\n",
        ];
        for (answer, reason) in answers.iter().zip(reasons) {
            assert_eq!((answer.0, answer.1.as_str()), (400, reason), "{mode:?}");
        }
        assert_eq!(answers[5].0, 201, "the connection serves on");
    }
}
