//! # fibra
//!
//! Ruby's concurrency model — Fibers, Threads and Ractors — for Rust, at the
//! speed of the hardware, without `async` colouring:
//!
//! - **Fibers** ([`fiber`], [`Generator`]): stackful coroutines whose context
//!   switch is a handful of instructions with no system call, on guarded stacks
//!   from a per-thread pool.
//! - **Green threads** ([`runtime`]): Ruby's `Thread`. Many on one OS thread;
//!   a sleep ([`time`]), a socket ([`net`]), a lock or a channel ([`sync`])
//!   parks only the green thread that waits; [`blocking`] offloads what cannot
//!   be made non-blocking.
//! - **Ractors** ([`ractor`]): isolated actors on every core at once, no global
//!   lock, isolation checked by the compiler, messages moved not copied.
//!
//! ```
//! use fibra::{Fiber, Step};
//!
//! let fiber = Fiber::new(|yielder, greeting: &'static str| {
//!     let reply = yielder.suspend(format!("{greeting}, fiber"));
//!     reply.len()
//! });
//! assert_eq!(fiber.resume("hello").unwrap(), Step::Yield("hello, fiber".to_string()));
//! assert_eq!(fiber.resume("four").unwrap(), Step::Return(4));
//! ```
//!
//! ## Ruby and Lua names
//!
//! Rust reserves `yield`, and fibra's values are typed, so some names differ:
//!
//! | Ruby | Lua | fibra |
//! |---|---|---|
//! | `Fiber.new { \|x\| … }` | `coroutine.create(f)` | [`Fiber::new`]`(\|yielder, x\| …)`, [`fiber::Builder`] for the stack size |
//! | `fiber.resume(v)` | `coroutine.resume(co, v)` | [`Fiber::resume`]`(v)` → `Ok(`[`Step::Yield`]`(y))` or `Ok(`[`Step::Return`]`(r))` |
//! | `Fiber.yield(v)` | `coroutine.yield(v)` | [`Yielder::suspend`]`(v)`, on the yielder the closure receives |
//! | `fiber.transfer(v)` | — | [`Yielder::transfer`]`(&other, v)` |
//! | `fiber.alive?` | `coroutine.status(co) ~= "dead"` | [`Fiber::is_alive`] |
//! | — | `coroutine.status(co)` | [`Fiber::status`] → [`fiber::Status`] (`Created`/`Suspended` = "suspended", `Running` = "running" or "normal", `Dead` = "dead") |
//! | `Enumerator.new { \|y\| y << v }`, `enum.next` | `coroutine.wrap(f)` | [`Generator::new`]`(\|out\| out.suspend(v))`, an [`Iterator`] |
//! | `FiberError` ("dead fiber called", "attempt to resume the current fiber") | `false, "cannot resume dead coroutine"` | `Err(`[`FiberError::Dead`]`)`, `Err(`[`FiberError::Running`]`)` |
//! | an exception inside a fiber is raised in the resumer | `false, err` from `coroutine.resume` | a panic inside a fiber continues in the resumer ([`std::panic::catch_unwind`] turns it into a value) |
//!
//! The modules [`runtime`], [`sync`] and [`ractor`] each map Ruby's names for
//! their part to fibra's in their own documentation.
//!
//! ## Layers
//!
//! Bottom up, each using only those below: `arch` (the context switch, one file
//! per CPU), `stack` (guarded stacks and their pool), [`fiber`] and
//! [`generator`] (the typed, safe API), [`runtime`] (scheduler, timers, IO
//! reactor, cross-thread wake), [`time`], [`net`], [`sync`] and [`blocking`],
//! then [`ractor`]. Every `unsafe` block lives in the first three and says why it
//! holds.

mod arch;
mod blocking;
pub mod fiber;
pub mod generator;
pub mod net;
pub mod ractor;
pub mod runtime;
mod stack;
pub mod sync;
pub mod time;

pub use blocking::blocking;
pub use fiber::{Fiber, FiberError, Step, Yielder};
pub use generator::Generator;
pub use runtime::{JoinHandle, run, spawn};
