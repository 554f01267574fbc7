//! A small JSON API over real sockets, in both modes (feature `serde`):
//! typed queries and bodies, good and bad, and a todo list — list, create,
//! get, update, delete, with path parameters, JSON in and out and the state
//! of each worker — that `curl` talks to (a raw socket where there is no
//! `curl`).

mod common;

use common::Running;
use fibra_http::{BadRequest, Handler, Mode, Request, Response, Router, Server};
use serde::{Deserialize, Serialize};
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::process::Command;
use std::rc::Rc;

const MODES: [Mode; 2] = [Mode::Threads, Mode::Ractors(2)];

#[derive(Serialize, Deserialize, Clone)]
struct Todo {
    id: u64,
    title: String,
    done: bool,
}

#[derive(Deserialize)]
struct NewTodo {
    title: String,
}

#[derive(Deserialize)]
struct Change {
    title: Option<String>,
    done: Option<bool>,
}

#[derive(Deserialize)]
struct Listing {
    #[serde(default)]
    done: Option<bool>,
    #[serde(default)]
    limit: Option<usize>,
}

/// One worker's todos.
#[derive(Default)]
struct Todos {
    next: u64,
    all: BTreeMap<u64, Todo>,
}

type State = Rc<RefCell<Todos>>;

fn id(request: &Request) -> Result<u64, BadRequest> {
    let id = request.param("id").unwrap_or_default();
    id.parse()
        .map_err(|_| BadRequest::new(format!("{id:?} is not a todo id")))
}

fn no_such(id: u64) -> Response {
    Response::json(format!(r#"{{"error":"no todo {id}"}}"#)).with_status(404)
}

fn list(todos: &State, request: &Request) -> Result<Response, BadRequest> {
    let listing: Listing = request.query_as()?;
    let todos = todos.borrow();
    let shown: Vec<&Todo> = (todos.all.values())
        .filter(|todo| listing.done.is_none_or(|done| todo.done == done))
        .take(listing.limit.unwrap_or(usize::MAX))
        .collect();
    Ok(Response::json_value(&shown))
}

fn create(todos: &State, request: &Request) -> Result<Response, BadRequest> {
    let new: NewTodo = request.json()?;
    let mut todos = todos.borrow_mut();
    todos.next += 1;
    let todo = Todo {
        id: todos.next,
        title: new.title,
        done: false,
    };
    todos.all.insert(todo.id, todo.clone());
    Ok(Response::json_value(&todo)
        .with_status(201)
        .with_header("location", format!("/todos/{}", todo.id)))
}

fn show(todos: &State, request: &Request) -> Result<Response, BadRequest> {
    let id = id(request)?;
    Ok(match todos.borrow().all.get(&id) {
        Some(todo) => Response::json_value(todo),
        None => no_such(id),
    })
}

fn update(todos: &State, request: &Request) -> Result<Response, BadRequest> {
    let (id, change) = (id(request)?, request.json::<Change>()?);
    Ok(match todos.borrow_mut().all.get_mut(&id) {
        Some(todo) => {
            todo.title = change.title.unwrap_or(todo.title.clone());
            todo.done = change.done.unwrap_or(todo.done);
            Response::json_value(todo)
        }
        None => no_such(id),
    })
}

fn delete(todos: &State, request: &Request) -> Result<Response, BadRequest> {
    let id = id(request)?;
    Ok(match todos.borrow_mut().all.remove(&id) {
        Some(_) => Response::new(204),
        None => no_such(id),
    })
}

/// The API, made once per worker: its todos are that worker's.
fn api() -> Router<dyn Handler> {
    let todos = State::default();
    type Action = fn(&State, &Request) -> Result<Response, BadRequest>;
    let route = |action: Action| {
        let todos = todos.clone();
        move |request: &Request| action(&todos, request).unwrap_or_else(Response::from)
    };
    Router::local()
        .get("/todos", route(list))
        .post("/todos", route(create))
        .get("/todos/:id", route(show))
        .patch("/todos/:id", route(update))
        .delete("/todos/:id", route(delete))
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
}

#[test]
fn bad_json_and_queries_get_400_with_the_reason() {
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
