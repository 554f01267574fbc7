//! Unix signals for green threads: [`listen`] for some [`Signal`]s, and a
//! green thread [receives](Listener::recv) each one the process gets,
//! parking only itself until one comes — so a server shuts down gracefully
//! on `SIGTERM` from a green thread, with no OS thread of its own and no
//! `libc` constant.
//!
//! ```no_run
//! use fibra::signal::{self, Signal};
//!
//! fibra::run(|| {
//!     let signals = signal::listen(&[Signal::Term, Signal::Int])?;
//!     let server = fibra::spawn(|| {
//!         // … accept and serve connections …
//!     });
//!     let signal = signals.recv(); // parks this green thread; the server runs
//!     eprintln!("{signal}: shutting down");
//!     server.cancel();
//!     Ok::<(), std::io::Error>(())
//! })?;
//! # Ok::<(), std::io::Error>(())
//! ```
//!
//! # How a signal reaches a green thread
//!
//! Each listener has a pipe, registered with its runtime's reactor through
//! [`io::Async`](crate::io::Async), and a pending flag per signal. The
//! signal's handler, which may run on any thread of the process, sets the
//! flag of every listener of that signal and writes a byte to its pipe —
//! the only work a handler may safely do; the listener's green thread wakes
//! for the byte and takes the flag. Handlers are installed through
//! `signal-hook-registry`, so they live alongside the handlers of other
//! crates that use it (`signal-hook`, tokio): all of them run. A handler
//! that other code installed directly before fibra's is chained, and runs
//! too.
//!
//! Linux's `signalfd` was not chosen: it reads only signals that are
//! blocked, in every thread of the process — including the threads that
//! exist before `listen` (the blocking pool, Ractor workers, threads of
//! other libraries), whose masks fibra cannot change — or a signal slips
//! past it to its default action. A handler needs no mask, works the same
//! on macOS, and costs a `write` per signal.
//!
//! # Several listeners, several runtimes
//!
//! - Every listener of a signal receives it: two listeners of `SIGTERM`, in
//!   one runtime or in several (on different OS threads, in Ractors), each
//!   receive each `SIGTERM`.
//! - Several green threads may wait on one listener: each signal goes to
//!   one of them.
//! - A signal that arrives again before a listener has received it is
//!   received once: the kernel merges a pending signal the same way.
//! - Signals that arrive before `listen` are not seen.
//!
//! # The default action
//!
//! From the first `listen` of a signal, the process no longer takes the
//! signal's default action: a listened-for `SIGTERM` or `SIGINT` does not
//! end it — the program decides. When the last listener of a signal is
//! dropped, the handler **stays installed** and the signal is then
//! **ignored**: its default action is not restored, as with tokio and
//! `signal-hook` (which fibra's handler shares its machinery with). A
//! program that wants to end on a second `SIGINT` after a graceful shutdown
//! began keeps listening and exits itself (`std::process::exit`).
//!
//! # Ruby names
//!
//! | Ruby | fibra |
//! |---|---|
//! | `Signal.trap("TERM") { … }` | `let signals = signal::`[`listen`]`(&[`[`Signal::Term`]`])?;` then `signals.`[`recv`](Listener::recv)`()` in a green thread |
//! | `Signal.list` | [`Signal::as_raw`], [`Signal::from_raw`] |

mod handler;
mod kind;
mod listener;

pub(crate) use handler::{Action, Notify};
pub use kind::Signal;
pub use listener::{Listener, listen};
