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
//!   be made non-blocking, and [`block_on`] runs a `Future` parking only the
//!   green thread that waits for it (`fibra::tokio::block_on`, with the
//!   feature `tokio`, one that needs tokio's reactor).
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
//! ## Seeing inside a running program
//!
//! [`runtime::dump`] lists every runtime of the process and each of its green
//! threads: its name, what it waits for (a socket, a timer, a channel, a lock,
//! a join, the blocking pool, a Ractor's mailbox or outbox, a future) and for
//! how long, and where in the code it is parked, as a symbolized backtrace —
//! Go's goroutine dump; [`runtime::dump_on_signal`] prints one on a signal.
//! A green thread that holds its OS thread too long (a blocking call, a long
//! computation) is named on stderr by the stall detector (see
//! [`runtime`'s docs](runtime#stalls)); a [`runtime::ThreadBuilder`] names a
//! thread for all of these.
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
//! | — | `coroutine.status(co)` | [`Fiber::status`] → [`fiber::Status`] (`Created`/`Suspended`/`Transferred` = "suspended", `Running` = "running" or "normal", `Dead` = "dead") |
//! | `Enumerator.new { \|y\| y << v }`, `enum.next` | `coroutine.wrap(f)` | [`Generator::new`]`(\|out\| out.suspend(v))`, an [`Iterator`] |
//! | `FiberError` ("dead fiber called", "attempt to resume the current fiber", "attempt to resume a transferring fiber", "attempt to transfer to a yielding fiber") | `false, "cannot resume dead coroutine"` | `Err(`[`FiberError::Dead`]`)`, `Err(`[`FiberError::Running`]`)`, `Err(`[`FiberError::Transferring`]`)`, `Err(`[`FiberError::Yielding`]`)`; the [fiber docs](fiber#every-operation-in-every-state) give every case |
//! | an exception inside a fiber is raised in the resumer | `false, err` from `coroutine.resume` | a panic inside a fiber continues in the resumer ([`std::panic::catch_unwind`] turns it into a value) |
//!
//! The modules [`runtime`], [`sync`] and [`ractor`] each map Ruby's names for
//! their part to fibra's in their own documentation.
//!
//! ## Calling other code from a green thread
//!
//! The green threads of a runtime share one OS thread and take turns: one runs
//! until it waits in an operation of fibra's, then the next runs. A call that
//! holds the OS thread — a blocking system call, a long computation — holds
//! every green thread of the runtime with it. Rust has no hook by which fibra
//! could take over `std`'s blocking calls (as Ruby's fiber scheduler takes
//! over Ruby's IO), so each kind of code has a door of its own:
//!
//! | what the green thread calls | how | what waits meanwhile |
//! |---|---|---|
//! | sockets, timers, locks, channels, other green threads, Ractors | fibra's own: [`net`], [`time`], [`sync`], [`JoinHandle::join`], [`ractor`] | only the calling green thread |
//! | files and directories | [`fs`]: `std::fs`'s functions and a [`File`](fs::File); each call hops to the blocking pool with the caller's path and buffer lent, not copied | only the calling green thread; the call holds a pool thread |
//! | a pipe, a tty, stdin, any pollable descriptor (inotify, netlink, a serial port); Unix domain sockets; signals | [`io::Async`]; [`net::UnixStream`] and its kin; [`signal::listen`] | only the calling green thread |
//! | a child process, a host name | [`process`] (`Command::output`, `Child::wait`, the child's pipes); [`net::lookup_host`], which fibra's sockets call for a name | only the calling green thread; a child's exit comes through a pidfd in the reactor (Linux 5.3 and later; elsewhere a pool thread waits for it), a name is resolved on the [`blocking`] pool (a numeric address is parsed in place) |
//! | a blocking library (a sync database driver, a C library), a long computation | [`blocking`]`(\|\| …)`: the closure runs on a pool of OS threads | only the calling green thread; the work holds a pool thread |
//! | a `Future` woken by whatever it waits for: a channel (`futures`' or `tokio::sync`'s), another OS thread, a timer of its own | [`block_on`]`(future)` | only the calling green thread |
//! | a `Future` that needs tokio's reactor or timers: `tokio::net`, `tokio::time`, hyper's client, reqwest, sqlx, tonic | `fibra::tokio::block_on(future)`, with the cargo feature `tokio`: the future's sockets, timers and tasks belong to the program's tokio runtime, or a background one started on first use | only the calling green thread |
//! | a computation to spread over the cores | a [`Ractor`](ractor::Ractor) per piece of it | nothing: Ractors run on worker threads of their own |
//! | another OS thread: a plain thread, a [`blocking`] job, a Ractor body, another runtime (each [`run`] on its own OS thread) | [`sync::Queue`], [`sync::SizedQueue`], [`sync::oneshot`], [`sync::watch`]: `Send + Sync`, usable on both sides at once | only the calling green thread (an OS thread on the other side blocks) |
//! | green threads that borrow the caller's locals (split a buffer, fan out over a slice) | [`scope`]`(\|s\| { s.spawn(\|\| …); })`, as `std::thread::scope` | only the calling green thread, until every thread of the scope has ended |
//!
//! And the other way round, **from outside a runtime**: a plain OS thread,
//! another runtime's green thread, a [`blocking`] job or a Ractor's body
//! starts a green thread on a runtime with
//! [`Handle::spawn`](runtime::Handle::spawn) (a [`runtime::handle()`] taken
//! inside it), and waits for it with the
//! [`RemoteJoinHandle`](runtime::RemoteJoinHandle) it returns — joined
//! (parking only a green thread, blocking an OS thread) or awaited.
//!
//! **fibra's own IO.** [`net`] (TCP, UDP, Unix sockets), [`io::Async`] (any
//! pollable descriptor), [`signal`], [`time`] (`sleep`, `timeout`),
//! [`sync`] (`Mutex`, `Condvar`, channels, `Select`, `RwLock`, `Semaphore`,
//! `Barrier`, `Notify`, `WaitGroup`, `OnceCell`, `broadcast`), joining a green thread
//! and Ractor messaging park only the green thread that waits, and the
//! reactor wakes it when its socket, timer or message is ready. This is the
//! cheapest door: no other OS thread is involved.
//!
//! **Files: [`fs`].** The kernel offers no readiness for files, so each call
//! of [`fs`] runs on the blocking pool while the calling green thread parks —
//! but unlike [`blocking`], whose closure is `'static`, it lends the caller's
//! path and buffer to the pool thread instead of copying them, and does a
//! whole `read`, `write` or `read_to_end` (open, IO, close) in one hop.
//!
//! **Blocking libraries: [`blocking`].** What cannot be made non-blocking is
//! run on a pool of OS threads while the calling green thread parks: a
//! synchronous driver, a file, a C call, a CPU-heavy function. The `redis`
//! crate's synchronous client, for example (`examples/redis_blocking.rs` runs
//! 1,000 green threads this way while a ticker keeps ticking, and
//! `tests/blocking_redis.rs` checks it against a real `redis-server`):
//!
//! ```no_run
//! use redis::Commands;
//!
//! let client = redis::Client::open("redis://127.0.0.1/")?;
//! let greeting: String = fibra::run(move || {
//!     // Connecting, writing and reading block an OS thread: one of the
//!     // pool's, while this runtime's other green threads run.
//!     fibra::blocking(move || {
//!         let mut connection = client.get_connection()?;
//!         connection.set::<_, _, ()>("greeting", "hello")?;
//!         connection.get("greeting")
//!     })
//! })?;
//! assert_eq!(greeting, "hello");
//! # Ok::<(), redis::RedisError>(())
//! ```
//!
//! **Futures: [`block_on`].** A `Future` is run to its end, and the calling
//! green thread parks whenever it is pending; its `Waker` may be called from
//! any OS thread. It drives no reactor, so it suits futures that something
//! else completes: a channel's receiver, a value computed on another thread,
//! async code written for no executor in particular. A future that needs
//! tokio's reactor or timers fails under it (tokio panics: "there is no
//! reactor running", and fibra adds which `block_on` to use).
//!
//! **tokio's futures: `fibra::tokio::block_on`.** With the cargo feature
//! `tokio`, a future that needs tokio's reactor — `tokio::net`,
//! `tokio::time`, a hyper or reqwest client — is polled on the calling green
//! thread with a tokio runtime as the current one — the program's own
//! (handed over with `fibra::tokio::set_handle`, or found when fibra runs on
//! a thread of the program's multi-thread runtime, a `spawn_blocking` thread
//! say), else a background one started on first use: its sockets, timers
//! and spawned tasks belong to that runtime, whose threads drive them and wake the green thread, parked
//! until the future completes. The future may borrow and need not be `Send`.
//! Make tokio's futures inside it (`block_on(async { tokio::time::sleep(d).await })`):
//! some look for the runtime as soon as they are made.
//!
//! **The other way round**, async code awaits fibra's work without blocking
//! its executor: `.await` on a [`Ractor`](ractor::Ractor) gives its result,
//! and [`Ractor::take_async`](ractor::Ractor::take_async) the values it
//! yields ([from async code](ractor#from-async-code)); `.await` on a
//! [`RemoteJoinHandle`](runtime::RemoteJoinHandle) gives a green thread's.
//!
//! **Other OS threads: [`runtime::Handle`].** A handle taken inside a
//! runtime ([`runtime::handle()`]) is `Send`, `Sync` and cheap to clone;
//! [`spawn`](runtime::Handle::spawn) on it, from any OS thread, runs a
//! `Send` closure as a green thread of that runtime, delivered as an unpark
//! is (it wakes the runtime only if it sleeps). A runtime that has ended
//! refuses with [`SpawnError`](runtime::SpawnError).
//!
//! **Borrowing: [`scope`].** Green threads spawned in a scope may borrow
//! the caller's locals; `scope` returns when every one has ended, cancels
//! them (and waits) if its own thread is cancelled or panics, and its thread
//! is never compacted meanwhile (see [the `# Soundness` table](#soundness)).
//!
//! **Thread-locals and `tracing`.** A `thread_local!` belongs to the OS
//! thread, which every green thread of a runtime shares: what one green
//! thread sets there is what the next one to run reads. [`green_local!`]
//! declares values that each green thread has a copy of (Ruby's
//! `Thread.current[:x]`, tokio's `task_local!`): see
//! [`runtime::LocalKey`]. `tracing`'s current span is kept per OS thread too;
//! with the cargo feature `tracing`, `runtime::ThreadBuilder::span` runs a
//! green thread inside a span that is entered only while that thread runs
//! (as tokio's `Instrument` does for a future), so each log line names its
//! own green thread's span. Holding a span's `Entered` guard across a park
//! (a sleep, a lock, IO, a join) is the same mistake as holding one across
//! an `.await`: the green threads that run meanwhile log inside it.
//!
//! **The stall line.** When a green thread runs for longer than a threshold
//! without parking or yielding, fibra writes a line to stderr that begins
//! with `fibra: `, naming the green thread (its
//! [name](runtime::ThreadBuilder::name), else its id), its OS thread and how
//! long it has held it; and one more when it lets go, with the total. Every
//! other green thread of that runtime waited all that time: move the call
//! behind one of the doors above. The threshold is set with
//! [`runtime::Builder::stall_threshold`], or in any build with the
//! environment variable `FIBRA_STALL_MS` (`0` turns the line off); it is on
//! by default, at 100 ms in debug builds and 1 s in release builds. The [runtime docs](runtime#stalls)
//! show the lines.
//!
//! **What still blocks a runtime**, called straight from a green thread, and
//! what to use instead:
//!
//! - `std::thread::sleep` — [`time::sleep`].
//! - `std::net` sockets — [`net`]; reading stdin — [`blocking`], or [`io::Async`] below.
//! - `std::fs` — [`fs`]: the same functions and a [`File`](fs::File), which
//!   park only the calling green thread.
//! - A pipe, a tty or stdin read or written with `std` — [`io::Async`]
//!   (`Async::new(std::io::stdin())`: mind that the terminal's `O_NONBLOCK`
//!   is shared, see [`io::Async::new`]); `std::os::unix::net` sockets —
//!   [`net::UnixStream`], [`net::UnixListener`], [`net::UnixDatagram`].
//! - Waiting for a signal (`sigwait`, `signal-hook`'s blocking iterator) —
//!   [`signal::listen`].
//! - `std::process` (`Command::output`, `status`, `Child::wait`, reading a
//!   child's pipes) — [`process`].
//! - `std::net::ToSocketAddrs::to_socket_addrs` given a host name, which asks
//!   the system resolver on the calling thread — [`net::lookup_host`] (fibra's
//!   sockets resolve names with it themselves).
//! - `std::sync`'s waits: a `Mutex` held across a long operation or contended,
//!   `Condvar::wait`, `mpsc::Receiver::recv`, `Barrier::wait`,
//!   `thread::JoinHandle::join` — [`sync`]'s, or [`blocking`].
//! - Another executor's `block_on` (`futures::executor::block_on`, tokio's
//!   `Runtime::block_on`) — [`block_on`], or `fibra::tokio::block_on`.
//! - A loop that computes for long without waiting — call
//!   [`runtime::yield_now`] now and then to let the others run, or move it to
//!   [`blocking`] or a Ractor.
//! - Any C function that blocks — [`blocking`].
//!
//! ## Soundness
//!
//! No safe use of fibra can cause undefined behaviour. Every `unsafe` block says
//! why it holds with a `// SAFETY:` comment, and each comment leans on one of the
//! invariants below, written once here with how it is enforced and which test
//! checks it. An outside review (2026-11-23) found four ways to break them in an
//! earlier version; `tests/soundness.rs` keeps a regression test for each of its
//! findings.
//!
//! | invariant | how it is enforced | checked by |
//! |---|---|---|
//! | **A fiber never changes OS thread.** Thread-affine values on a suspended stack (a `MutexGuard`, an `Rc`, a reference into a thread-local) stay valid. | [`Fiber`], [`Yielder`], [`Generator`], [`JoinHandle`] and the green primitives are neither `Send` nor `Sync` (a `PhantomData` of a raw pointer); a Ractor is placed on a worker when it is made and stays there; only `Send + 'static` values cross between Ractors. | the `compile_fail` examples below and in [`fiber`]; `tests/cross_thread.rs` |
//! | **A fiber's closure is `'static`.** Nothing on another stack, or freed, is borrowed by a suspended fiber, even one that is leaked with `mem::forget`. | the bounds of [`Fiber::new`], [`fiber::Builder::build`], [`spawn`], [`Generator::new`]; there is no scoped fiber, and the one scoped green thread, [`scope`]'s, has the row below | the compiler |
//! | **A scope's frame outlives its threads.** What the threads of a [`scope`] borrow — the scope's thread's stack above all — stays where it is, alive and unmoved, until each of them has ended, however the scope's thread leaves it (returning, panicking, cancelled, timed out). | `scope` returns or unwinds past its frame only once every thread has ended, counted in a heap record that each thread leaves at its very end (its value stored, its joiner woken), not through their handles (a leaked `ScopedJoinHandle` changes nothing); it catches any unwind out of its closure or its wait, cancels the threads, waits for them *shielded* (`Scheduler::shield`: no cancel or expired deadline is delivered there, or the expiry would unwind that wait too), then resumes the unwind — caught first, because a cancel is not delivered while the OS thread unwinds (the row below); it runs only on a green thread's own stack (not in a fiber the thread resumed, which it could drop or leak); it holds an `Rc` of its runtime for the whole call, so the task table, and with it a thread's fiber, is never dropped (never unwound) meanwhile; a thread the end of the runtime abandons is leaked, stack and all, never run again; its thread lends its stack (`Scheduler::lend`), so it is never compacted (the compaction row); under `panic = "abort"` a cancelled scope's thread is abandoned, its stack leaked, so what it lent stays valid | `tests/scope.rs` (borrows read and written across parks; a panic, a cancel, a timeout of the scope's thread: its threads unwound before it ends; compaction of every other thread at every round while the scope's thread is not) |
//! | **A stack goes back to the pool only once its fiber is dead.** | `Fiber`'s stack is a `ManuallyDrop` that `Drop` gives back only in state `Dead`; a fiber being dropped unwinds to its end, cannot `transfer` away (`FiberError::Dropping`), and its `suspend` switches only back to the dropper, which sends the unwind again at once (from a destructor during the unwind, that aborts); under `panic = "abort"`, or when a fiber cannot end, the stack is leaked instead | `tests/soundness.rs` (`f1_*`), `tests/fiber_model.rs` |
//! | **Every operation on a fiber in every state has one outcome.** Only a fiber suspended in `suspend` is resumed, only one suspended in `transfer` is transferred to, so the stack pointer a switch jumps to is always that fiber's current one. | the state machine of the fiber module, with the table in its [docs](fiber#every-operation-in-every-state); the cached stack pointer's argument is on `Fiber::sp` | `tests/fiber_model.rs` (a reference model and random operation sequences; a `cargo fuzz` target in `fibra/fuzz`), `tests/soundness.rs` (`f0_*`) |
//! | **A message keeps what the language requires of it.** Uninitialised bytes stay uninitialised, pointers keep their provenance. | the register a switch carries is a pointer: a tag for a zero-sized payload, else the message's address (`fiber/message.rs`); never the message's bytes as an integer; the word a resumer reads back was made by the fiber side's `tag()`, so `Outbound::untag` takes any other tag as unreachable | Miri (`scripts/miri.sh`) on `fiber::message`'s tests |
//! | **Sizes are computed with checked arithmetic.** A stack size that does not fit is an `Err` naming it, never a wrapped value. | `checked_*` arithmetic in `stack/`; a closure over 1 KiB is boxed, so it never takes room on the stack | `tests/soundness.rs` (`f3_*`), `stack` unit tests under Miri, `tests/fiber.rs` (`a_closure_larger_than_its_stack_runs`) |
//! | **Unwinding happens once, and ends.** A dropped fiber is unwound to its end; a cancelled green thread, or the work of an expired [`time::timeout`], unwinds once, and the destructors that run meanwhile may wait (sleep, lock, receive, join) and complete; a thread already unwinding (from its own panic, say) is never handed a second unwind; the end of [`run`] unwinds every thread, including those spawned meanwhile. | the fiber states above; [`runtime`]'s `Cancel` state, delivered once; a cancel or deadline is delivered only at a park made while `std::thread::panicking()` is false — std counts panics per OS thread, so that is also false for every other stack of it, and one that comes while it is true is owed until it is not; `shutdown` cancels until no thread is left, and abandons (with a line on stderr) only threads that can never end | `tests/soundness.rs` (`f4_*`, `f5_*`), `tests/runtime.rs` (the `cancel_during_panic` cases), `tests/timeout.rs` |
//! | **Nothing fibra needs at the end of a thread is gone before it.** A suspended fiber kept in a thread-local is unwound at thread exit. | the panic payload in flight is a thread-local without a destructor; the stack pool is reached with `try_with` | `tests/soundness.rs` (`f6_*`) |
//! | **The panic strategy is defined.** fibra needs `panic = "unwind"` to unwind fibers; under `panic = "abort"` a dropped suspended fiber is leaked and a cancelled green thread abandoned (never resumed, its destructors not run), and nothing aborts. | `cfg!(panic = "abort")` in `Fiber::drop` and the scheduler | `checks/panic-abort`, run in CI with that profile |
//! | **Nothing touches a compacted stack.** A parked green thread is compacted (its stack moved to the heap, its pages given back) only if it lends nothing: nobody but the thread itself may read or write its stack until it runs again, and its bytes are back at the same addresses before it does. | the scheduler restores before its only two switches into a parked thread (`run_task`, a dump's trace) and before a task is dropped; fibra's wait records are on the heap and what it hands across is `'static`; what fibra lends itself — a future pinned on the stack by [`block_on`] (or `fibra::tokio::block_on`), which may be registered with whatever wakes it, and a [`scope`]'s frame, which its threads borrow — marks the thread as lending for as long as `block_on` (or `scope`) runs, parks inside the future's poll included, and the sweep checks that mark when it compacts, on a park it names by number, not time; what fibra cannot see — a green thread lending its stack to another OS thread (`std::thread::scope`, a future polled by the program's own executor that parks with `runtime::park`) across a park outside `block_on` — is the contract of the `unsafe` [`runtime::Builder::compact_parked_after`], which is off by default (the audit: [`runtime`'s Compaction docs](runtime#compaction)) | `tests/compaction.rs` (every wait, random wake orders, wakes from another OS thread, cancellation, deep and empty stacks, a panic after a restore, dumps, tokio timers pinned under `block_on` around and inside its parks), also under valgrind memcheck and ThreadSanitizer; `tests/scope.rs` (a scope's thread, whose threads write into its stack, is not compacted while every other thread is); `stack::compact`'s unit test under Miri |
//! | **A lock-free queue gives each slot or node to one thread at a time.** The runtime's remote ring: a slot's value is written by the one producer whose compare-and-swap claimed its position and read by the one consumer that claimed it after seeing the producer's release. A Ractor's mailbox: a slot is written by the one sender whose compare-and-swap on the tail claimed it and read by the one consumer — the body's `Context`, neither `Send` nor `Sync` — after that sender's release of its `ready` flag; only the consumer frees a block, once it has taken the block's last message (when every sender with a slot there is done with it); the receiver's waiter is written only when no waker may read it. A dump counts a mailbox's messages by walking its queue on the receiver's worker, from that worker's runtime, when the body is not inside a receive: the same one consumer, reading only. | sequence numbers per slot (`runtime/ring.rs`); `Mailbox::receive` and `Mailbox::queued` are `unsafe` with the single-consumer contract, which only `Context` and the worker's census (`ractor/census.rs`, called from the runtime's part of a dump) meet; the `WAITING`/`WAKERS` protocol of `ractor/mailbox/wake.rs` | the model checker loom over the real code (`scripts/model-check.sh`: the ring and remote queue with the poller's sleep, the last `Unparker`'s drop, a wake racing a runtime's end, an errand (`Handle::spawn`) sent to a sleeping runtime or racing its end, `block_on`'s waker, the mailbox's send/close wakes); Miri (`scripts/miri.sh`) on the ring's and the mailbox's unit tests; `tests/cross_thread.rs` (`sleeping_receivers_never_miss_a_wake`) under ThreadSanitizer and valgrind; a `compile_fail` example on `Context`; the mailbox's `queued_is_sound_while_senders_send` under Miri, and `tests/observe.rs` (a dump while messages pile up) under valgrind |
//! | **A lent frame outlives the work that borrows it.** A file call of [`fs`] lends the calling green thread's path and buffer (on its stack, or borrowed from there) to a pool thread, which reads or writes them while the green thread is parked; nothing else touches them meanwhile. | `hop.rs`: the thread parks until the job says it has ended, whatever wakes it; those parks never unwind, so a cancel or a passed deadline is delivered only after the job has ended; an unwind that leaves the frame all the same (its fiber dropped with its runtime) blocks the OS thread in a guard until the job has ended; the thread lends (`Scheduler::lend`) while it waits, so it is never compacted; an abandoned thread leaks its stack, which stays mapped; a call from a fiber that the thread resumed (which cannot park it) runs in place, lending nothing | `tests/fs.rs` (a cancel and a `timeout` while a read into a stack buffer waits on a FIFO, the thread compacted around it by `compact_parked_after`), also under ThreadSanitizer; the model checker on the job's end (`hop.rs`) |
//! | **A switch keeps what the ABI requires.** Callee-saved registers are saved or declared clobbered; an `asm!` block claims only the options it keeps (the valgrind request clobbers the flags). | `arch/x86_64.rs`, `arch/aarch64.rs` | the fiber tests (`callee_saved_fp_registers_survive_switches` for d8–d15), under valgrind memcheck (`scripts/memcheck.sh`) and ThreadSanitizer (`scripts/tsan.sh`) on x86_64, and under qemu-user on aarch64 (`scripts/test-aarch64.sh`) |
//! | **A signal handler does only what is async-signal-safe.** It may run on any thread, between any two instructions: it allocates nothing, takes no lock, cannot panic, and touches nothing that may be freed under it. | the one action fibra registers through `signal-hook-registry` (`signal/handler.rs`, for [`signal::listen`] and [`runtime::dump_on_signal`]) stores to an atomic flag and calls `write(2)` on a pipe that the action itself owns; removing the action waits for handlers still running it (`signal-hook-registry`'s contract), so the pipe is closed only after | `tests/signal.rs` (signals from other threads, to several listeners and runtimes), `tests/observe.rs` (a dump on a signal) |
//! | **A runtime's threads are read only on its own OS thread.** A dump never reads a green thread's stack or the task table from another OS thread, where that runtime may resume the thread meanwhile. | [`runtime::dump`] asks each runtime and waits for its answer (or reports it busy); the runtime describes itself from its own loop, resuming each suspended thread so that the thread traces its own stack and suspends again without leaving its park site; a signal handler only writes one byte to a pipe (async-signal-safe), and the dump is made by a thread of its own | `tests/observe.rs` (dumps from a plain OS thread, from a green thread, of a busy runtime, of 100,000 threads; on a signal), under valgrind memcheck |
//! | **The stack-overflow handler reads only what stays put.** It runs in a signal handler, on the faulting OS thread, at any point of that thread's code: it allocates nothing, takes no lock and reads only atomics and its OS thread's overflow label (the green thread running there: its id, a pointer to its name's bytes, its stack's top). | the label is a const-initialised thread-local without a destructor (a read is a load from the thread's TLS block, no lazy initialisation; read with `try_with`), written by the scheduler around each switch into a green thread (`stack::label`), on the same OS thread, so the synchronous fault sees the last write; the name's bytes belong to an `Arc<str>` the runtime keeps (in the thread's `Task`) until the thread has ended, and the thread is running when it faults, so they are alive and unchanged; the label names the green thread only if the faulting slot is its stack, else the report says "a fiber"; the message is built in a stack buffer and written with `write(2)` | `tests/overflow.rs` (a named green thread, a fiber inside a green thread, a fiber on a plain thread, a thread's own stack), also under qemu aarch64 |
//! | **Memory the kernel writes is read only after, and freed only after it stops.** With [`runtime::Builder::io_uring`], the kernel fills a runtime's receive buffers on its own: fibra reads a buffer only between the completion that names it and its return to the ring, and only the bytes that completion says were written; it never unmaps the buffers, nor closes a stream's descriptor, while a request that may use them is in flight. | `runtime/reactor/uring.rs`: a buffer is held in its stream's chunks from its completion until a read consumes it (then given back at the ring's tail with a release store); a buffer-ring entry is written through raw pointers (no reference spans entry 0's tail, which the kernel reads); a stream's drop submits everything queued (`IORING_SETUP_SUBMIT_ALL`; it panics rather than close the descriptor under a queued entry), cancels its request synchronously (`IORING_REGISTER_SYNC_CANCEL`) and gives its buffers back before its descriptor is closed; a completion for a stream already gone gives its buffer back; the ring's drop cancels everything and reads each request's last completion (a count of those in flight) before the buffers are unmapped, and keeps them mapped for good if it cannot; the entries fibra submits point at no memory of a caller's (a receive takes the ring's buffers, a poll none) | the ring's unit tests (reads that wait, peeks and vectored reads across buffers, a loop of peeks, a lagging reader that holds few buffers and loses nothing, streams that take every buffer while others read, 1,000 streams dropped with data held and every buffer given back), also under valgrind memcheck, and fibra's and fibra-http's socket tests on the ring (`FIBRA_IO_URING=1` in `scripts/test.sh`) |
//!
//! What Miri cannot run — the switch and the stack bootstrap are assembly — is
//! covered by the model-based test, the regression tests and valgrind.
//!
//! ```compile_fail
//! // A generator (a fiber) cannot move to another OS thread.
//! let numbers = fibra::Generator::new(|out| out.suspend(1u8));
//! std::thread::spawn(move || numbers.count());
//! ```
//!
//! ```compile_fail
//! // Nor can a green thread's handle.
//! fibra::run(|| {
//!     let handle = fibra::spawn(|| 1);
//!     std::thread::spawn(move || handle.is_finished());
//! });
//! ```
//!
//! ```compile_fail,E0277
//! // Nor a scoped thread's handle,
//! fn send<T: Send>(_: T) {}
//! fibra::run(|| fibra::scope(|s| send(s.spawn(|| 1))));
//! ```
//!
//! ```compile_fail
//! // which cannot leave its scope either.
//! fibra::run(|| {
//!     let local = 1;
//!     let escaped = fibra::scope(|s| s.spawn(|| local));
//! });
//! ```
//!
//! ## Layers
//!
//! Bottom up, each using only those below: `arch` (the context switch, one file
//! per CPU), `stack` (guarded stacks and their pool), [`fiber`] and
//! [`generator`] (the typed, safe API), [`runtime`] (scheduler, timers, IO
//! reactor, cross-thread wake), [`time`], [`net`], [`io`], [`signal`],
//! [`process`], [`fs`], [`sync`] and [`blocking`], then [`ractor`]. Every
//! `unsafe` block lives in the first three, in the runtime's lock-free wake
//! ring, in a Ractor's lock-free mailbox (and the `Context` calls into it), in
//! the borrowing hop of [`fs`] (`hop.rs`), or is a system call without a safe
//! wrapper (a child's pidfd, `waitid`; `io`'s `fcntl` and `poll`; the `write`
//! of `signal`'s handler), and says why it holds.

#![deny(missing_docs)]
#![cfg_attr(docsrs, feature(doc_cfg))]

mod arch;
mod block_on;
mod blocking;
pub mod fiber;
pub mod fs;
pub mod generator;
mod hop;
pub mod io;
pub mod net;
pub mod process;
pub mod ractor;
pub mod runtime;
pub mod signal;
mod stack;
pub mod sync;
mod sync_prims;
pub mod time;
#[cfg(feature = "tokio")]
#[cfg_attr(docsrs, doc(cfg(feature = "tokio")))]
pub mod tokio;

pub use block_on::block_on;
pub use blocking::blocking;
pub use fiber::{Fiber, FiberError, Step, Yielder};
pub use generator::Generator;
pub use runtime::{JoinHandle, run, scope, spawn};
