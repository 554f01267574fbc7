//! How a green thread waits for a child to exit, one file per OS: on Linux a
//! pidfd in the runtime's reactor (`linux.rs`); where the kernel has none —
//! macOS, a Linux older than 5.3, a sandbox that refuses `pidfd_open` — the
//! blocking pool, waiting in `waitid` without reaping (`unix.rs`).
//!
//! **Why the pool and not SIGCHLD for the fallback.** A SIGCHLD-driven wake
//! needs a process-wide handler: it would replace or have to chain with the
//! program's own (and other libraries'), a child that some other code reaps
//! would still wake every waiter, and each runtime would need to be told of
//! every signal to find out which of its children ended. A pool thread in
//! `waitid(P_PID, pid, WEXITED | WNOWAIT)` depends on no signal disposition,
//! wakes exactly the one green thread that waits for that child, and — as it
//! leaves the child unreaped — cannot race `std`'s own bookkeeping: the
//! green thread reaps it with `std`'s `try_wait`, so the child's pid is never
//! freed (and reused) behind `std::process::Child`'s back, even when the wait
//! is cancelled and the pool thread's answer is dropped. The cost is one pool
//! thread per child being waited for, for as long as it runs, and only on
//! the platforms without a pidfd. (On macOS kqueue's `EVFILT_PROC` would
//! avoid that thread; mio does not expose it.)

#[cfg(target_os = "linux")]
mod linux;
mod unix;

#[cfg(target_os = "linux")]
pub(super) use linux::wait;
#[cfg(not(target_os = "linux"))]
pub(super) use unix::wait;
