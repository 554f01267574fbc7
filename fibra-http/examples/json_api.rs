//! A small JSON API on fibra-http: a todo list to list, create, read,
//! update and delete, with path parameters (`/todos/:id`), typed queries and
//! JSON bodies in and out (the `serde` feature), the state of each worker in
//! an `Rc<RefCell<…>>` (no lock), a request id and an access log (the
//! `tracing` feature, printed by `tracing-subscriber`).
//!
//! ```text
//! cargo run -p fibra-http --features serde,tracing --example json_api -- --port 8080
//! curl -d '{"title":"write docs"}' -H 'content-type: application/json' localhost:8080/todos
//! curl -X PATCH -d '{"done":true}' localhost:8080/todos/1
//! curl 'localhost:8080/todos?done=true'
//! curl -X DELETE localhost:8080/todos/1
//! ```
//!
//! In ractors mode each worker keeps its own list (a client talks to one
//! worker per connection): state the workers must share would go behind an
//! `Arc` that the factory captures (see the crate docs, "Sharing state
//! between handlers"). `tests/json_api.rs` talks to this file's [`api`]
//! with `curl`, in both modes.

use clap::{Parser, ValueEnum};
use fibra_http::middleware::{access_log, request_id};
use fibra_http::{BadRequest, Handler, Mode, Request, Response, Router, Server};
use serde::{Deserialize, Serialize};
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;

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

/// The API, made once per worker: its todos are that worker's. Every
/// request gets an id (`x-request-id`) and a line in the access log.
pub fn api() -> impl Handler {
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
        .wrap(access_log())
        .wrap(request_id())
}

#[derive(Parser)]
#[command(about = "A JSON todo API on fibra-http")]
struct Args {
    /// The port on 127.0.0.1 (0: any free one; the line printed says which).
    #[arg(long, default_value_t = 8080)]
    port: u16,
    /// threads: one OS thread; ractors: a Ractor per core.
    #[arg(long, value_enum, default_value_t = ModeArg::Threads)]
    mode: ModeArg,
}

#[derive(Clone, Copy, ValueEnum)]
enum ModeArg {
    Threads,
    Ractors,
}

#[allow(dead_code)] // a test includes this file for its API
fn main() -> std::io::Result<()> {
    // The access log's lines (target `fibra_http::access`) on stdout.
    tracing_subscriber::fmt().init();
    let args = Args::parse();
    let mode = match args.mode {
        ModeArg::Threads => Mode::Threads,
        ModeArg::Ractors => Mode::ractors_per_core(),
    };
    let server = Server::builder()
        .mode(mode)
        .bind(("127.0.0.1", args.port))?;
    println!("serving http://{}/todos", server.local_addr()?);
    server.serve_with(api)
}
