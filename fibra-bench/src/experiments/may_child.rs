//! What every child program on `may` does first. may runs only in child
//! processes (`fibra-bench --child <experiment> …`): its scheduler's threads
//! outlive every run, the `generator` crate under it installs a SIGSEGV handler
//! of its own, and at the map-count wall ([`super::wall`]) it panics and then
//! hangs instead of returning an error.

use super::wall;
use crate::worker::panic_message;
use may::coroutine::JoinHandle;
use std::panic;

/// Gives may's scheduler `workers` worker threads (read when it starts, at the
/// first coroutine), and makes any panic end the process at once with exit
/// status 1 and its message on stderr (led by the map count, near the wall).
/// Unwinding is not waited for: at the wall it needs memory the kernel refuses,
/// and the process hangs.
pub fn start(workers: usize) {
    may::config().set_workers(workers);
    panic::set_hook(Box::new(|info| {
        let message = panic_message(info.payload());
        eprintln!("may panicked: {}", wall::explain(message));
        std::process::exit(1);
    }));
}

/// may's `spawn`, for the bodies of fibra-bench's may children.
///
/// may marks its spawn `unsafe`: a coroutine may move between worker threads
/// (so a thread-local it read may be another thread's) and runs on a small
/// fixed stack (32 KiB). Every body here touches no thread-local and needs a
/// few KiB of stack at most (an echo connection's 1 KiB buffer is the
/// largest); a body that would not must not come through here.
pub fn spawn<T: Send + 'static>(body: impl FnOnce() -> T + Send + 'static) -> JoinHandle<T> {
    // SAFETY: the bodies given here keep the two conditions above.
    unsafe { may::coroutine::spawn(body) }
}
