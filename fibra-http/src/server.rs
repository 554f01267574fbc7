//! The server: a listening socket, the mode that serves its connections, and
//! the graceful shutdown.

use crate::connections::{Connections, Shared};
use crate::shutdown::{Control, ShutdownHandle, wait_for_shutdown};
use crate::{Handler, Limits};
use fibra::net::{TcpListener, TcpStream};
use fibra::ractor::{Context, Pool, Ractor};
use std::io;
use std::net::{SocketAddr, ToSocketAddrs};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

/// How many connections the kernel queues before `accept` (capped by
/// `net.core.somaxconn`); `std`'s 128 overflows when a thousand clients
/// connect at once, and an overflowed client waits a second to retry.
const BACKLOG: i32 = 1024;
/// How long a graceful shutdown waits for requests in flight by default.
const GRACE_PERIOD: Duration = Duration::from_secs(10);

/// How a server runs its connections. The handler is the same in both.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// One OS thread; a green thread per connection (Ruby's threads under
    /// the GVL, without the GVL's cost: IO never blocks the other threads,
    /// but CPU work runs on one core).
    Threads,
    /// This many Ractors, each on a worker OS thread of its own, with a green
    /// thread per connection inside; each new connection goes to the Ractor
    /// serving the fewest (Ruby's Ractors, without their limits). CPU work
    /// runs on as many cores.
    Ractors(usize),
}

impl Mode {
    /// Ractors mode with one Ractor per core.
    pub fn ractors_per_core() -> Mode {
        Mode::Ractors(std::thread::available_parallelism().map_or(1, |n| n.get()))
    }
}

/// Builds a [`Server`]: its mode, limits, shutdown grace period and (with
/// the `tls` feature) TLS configuration.
#[derive(Clone, Debug)]
pub struct Builder {
    mode: Mode,
    limits: Limits,
    grace_period: Duration,
    #[cfg(feature = "tls")]
    tls: Option<Arc<rustls::ServerConfig>>,
}

impl Default for Builder {
    fn default() -> Self {
        Builder {
            mode: Mode::Threads,
            limits: Limits::default(),
            grace_period: GRACE_PERIOD,
            #[cfg(feature = "tls")]
            tls: None,
        }
    }
}

impl Builder {
    /// How the server runs its connections (default: [`Mode::Threads`]).
    pub fn mode(mut self, mode: Mode) -> Builder {
        self.mode = mode;
        self
    }

    /// The limits every request is held to (default: [`Limits::default`]).
    pub fn limits(mut self, limits: Limits) -> Builder {
        self.limits = limits;
        self
    }

    /// How long a graceful shutdown lets requests in flight finish (default
    /// 10 s). Past it, the connections still open are closed where they
    /// are — a response not yet sent is lost — and
    /// [`serve`](Server::serve) returns. A handler that computes without
    /// ever waiting (on IO, a timer, a channel) cannot be stopped there: it
    /// runs to its end.
    pub fn grace_period(mut self, grace_period: Duration) -> Builder {
        self.grace_period = grace_period;
        self
    }

    /// Serves HTTPS: each connection runs a TLS session of `config` (its
    /// certificates, versions, cipher suites) on the green thread that
    /// serves it, and then HTTP/1.1 as over TCP — keep-alive, pipelining
    /// and the [`Limits`] alike, in both modes.
    ///
    /// The handshake must end within [`Limits::request_timeout`]: a client
    /// that stalls in it is closed. A handshake that fails — a client that
    /// trusts no certificate offered, speaks plain HTTP, or sends garbage —
    /// is answered by the TLS alert that says why, and closes that
    /// connection only. `config`'s ALPN protocols, if it sets any, should
    /// offer only `http/1.1`: this server speaks no other.
    ///
    /// ```no_run
    /// use fibra_http::{Response, Router, Server};
    /// use rustls::pki_types::{CertificateDer, PrivateKeyDer, pem::PemObject};
    ///
    /// let chain = CertificateDer::pem_file_iter("cert.pem")?.collect::<Result<Vec<_>, _>>()?;
    /// let key = PrivateKeyDer::from_pem_file("key.pem")?;
    /// let config = rustls::ServerConfig::builder()
    ///     .with_no_client_auth()
    ///     .with_single_cert(chain, key)?;
    /// Server::builder()
    ///     .tls(std::sync::Arc::new(config))
    ///     .bind("0.0.0.0:8443")?
    ///     .serve(Router::new().get("/", |_: &_| Response::text("Hello over TLS\n")))?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[cfg(feature = "tls")]
    pub fn tls(mut self, config: Arc<rustls::ServerConfig>) -> Builder {
        self.tls = Some(config);
        self
    }

    /// Listens on `addr` (port 0 picks a free port; see
    /// [`Server::local_addr`]).
    ///
    /// # Errors
    ///
    /// The socket's error (address in use, permission denied), or
    /// `InvalidInput` for `Mode::Ractors(0)` or an address that resolves to
    /// nothing.
    pub fn bind(self, addr: impl ToSocketAddrs) -> io::Result<Server> {
        if self.mode == Mode::Ractors(0) {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "ractors mode needs at least one Ractor",
            ));
        }
        let mut last = None;
        for addr in addr.to_socket_addrs()? {
            match listen(addr) {
                Ok(listener) => {
                    return Ok(Server {
                        listener,
                        mode: self.mode,
                        limits: self.limits,
                        grace_period: self.grace_period,
                        #[cfg(feature = "tls")]
                        tls: self.tls,
                        control: Arc::default(),
                    });
                }
                Err(err) => last = Some(err),
            }
        }
        Err(last
            .unwrap_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "no address to bind")))
    }
}

fn listen(addr: SocketAddr) -> io::Result<std::net::TcpListener> {
    let socket = socket2::Socket::new(
        socket2::Domain::for_address(addr),
        socket2::Type::STREAM,
        Some(socket2::Protocol::TCP),
    )?;
    // A restarted server can bind while the old connections sit in TIME_WAIT.
    socket.set_reuse_address(true)?;
    socket.bind(&addr.into())?;
    socket.listen(BACKLOG)?;
    Ok(socket.into())
}

/// An HTTP/1.1 server: bind it, then [`serve`](Server::serve) a handler.
///
/// ```no_run
/// use fibra_http::{Mode, Response, Router, Server};
///
/// let router = Router::new().get("/hello", |_: &_| Response::text("Hello, world!\n"));
/// let server = Server::builder().mode(Mode::ractors_per_core()).bind("127.0.0.1:8080")?;
/// let shutdown = server.shutdown_handle();
/// std::thread::spawn(move || {
///     std::thread::sleep(std::time::Duration::from_secs(60));
///     shutdown.shutdown(); // requests in flight finish first
/// });
/// server.serve(router)?;
/// # Ok::<(), std::io::Error>(())
/// ```
#[derive(Debug)]
pub struct Server {
    listener: std::net::TcpListener,
    mode: Mode,
    limits: Limits,
    grace_period: Duration,
    #[cfg(feature = "tls")]
    tls: Option<Arc<rustls::ServerConfig>>,
    control: Arc<Control>,
}

impl Server {
    /// A builder for a server's mode, limits and listening address (and, with
    /// the `tls` feature, its TLS configuration).
    pub fn builder() -> Builder {
        Builder::default()
    }

    /// A threads-mode server with the default limits, listening on `addr`.
    ///
    /// # Errors
    ///
    /// As [`Builder::bind`].
    pub fn bind(addr: impl ToSocketAddrs) -> io::Result<Server> {
        Builder::default().bind(addr)
    }

    /// The address the server listens on (with the port the system chose, if
    /// it was bound to port 0).
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.listener.local_addr()
    }

    /// How the server runs its connections: on one OS thread or on Ractors.
    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// A handle that shuts this server down gracefully, from any thread.
    pub fn shutdown_handle(&self) -> ShutdownHandle {
        ShutdownHandle(self.control.clone())
    }

    /// Serves connections with `handler` until shut down, on the calling OS
    /// thread (which runs a fibra runtime for it, so it must not be in one
    /// already) and, in ractors mode, on the Ractors' workers.
    ///
    /// This one handler serves every connection, on every worker at once in
    /// ractors mode, so it is `Send + Sync`: what it shares between requests
    /// is shared between OS threads. For state of each worker's own — `Rc`,
    /// `RefCell`, fibra's locks — see [`serve_with`](Self::serve_with).
    ///
    /// Accepting never stops on a client's account: a connection reset before
    /// it is accepted is skipped, and running out of file descriptors pauses
    /// accepting briefly instead of failing.
    ///
    /// # Errors
    ///
    /// If the listening socket cannot be registered with the runtime.
    ///
    /// # Panics
    ///
    /// Inside a fibra runtime.
    pub fn serve(self, handler: impl Handler + Send + Sync) -> io::Result<()> {
        let handler = Arc::new(handler);
        self.serve_with(move || SharedHandler(handler.clone()))
    }

    /// Serves connections until shut down, as [`serve`](Self::serve), with
    /// a handler that `make` makes on each worker, before it serves: once
    /// per Ractor in ractors mode, on that Ractor's OS thread, and once in
    /// threads mode. Each worker's connections share its handler, and only
    /// they do, so the handler need not be `Send` or `Sync`: its state may
    /// be an `Rc`, a `RefCell` or one of fibra's runtime-local locks (see
    /// [`Router::local`](crate::Router::local)), with no atomic operation
    /// and no lock between OS threads. What the workers must share — a
    /// total, a cache — goes in `Send + Sync` state that `make` captures
    /// (see the crate docs, "Sharing state between handlers").
    ///
    /// `make` runs in the worker's runtime, so it may also
    /// [`spawn`](fibra::spawn) green threads there, beside the connections.
    ///
    /// ```no_run
    /// use fibra_http::{Handler, Mode, Request, Response, Router, Server};
    /// use std::cell::RefCell;
    /// use std::rc::Rc;
    ///
    /// fn make_router() -> Router<dyn Handler> {
    ///     // One list per worker: each worker's requests see only its own.
    ///     let visitors = Rc::new(RefCell::new(Vec::new()));
    ///     Router::local().post("/visit", move |request: &Request| {
    ///         let mut visitors = visitors.borrow_mut();
    ///         visitors.push(request.peer_addr());
    ///         Response::text(format!("visitor {} of this worker\n", visitors.len()))
    ///     })
    /// }
    ///
    /// Server::builder()
    ///     .mode(Mode::ractors_per_core())
    ///     .bind("127.0.0.1:8080")?
    ///     .serve_with(make_router)?;
    /// # Ok::<(), std::io::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`serve`](Self::serve).
    ///
    /// # Panics
    ///
    /// Inside a fibra runtime; and if `make` panics, with its panic, once
    /// every worker has stopped (no connection has been accepted then).
    pub fn serve_with<F, H>(self, make: F) -> io::Result<()>
    where
        F: Fn() -> H + Send + Sync + 'static,
        H: Handler,
    {
        let shared = Arc::new(Shared {
            limits: self.limits,
            grace_period: self.grace_period,
            #[cfg(feature = "tls")]
            tls: self.tls,
            control: self.control,
        });
        let listener = self.listener;
        match self.mode {
            Mode::Threads => fibra::run(move || serve_threads(listener, shared, Box::new(make()))),
            Mode::Ractors(count) => {
                let make: Arc<MakeHandler> = Arc::new(move || Box::new(make()));
                serve_ractors(listener, shared, count, make)
            }
        }
    }
}

/// A handler shared by every worker: [`Server::serve`]'s.
struct SharedHandler<H>(Arc<H>);

impl<H: Handler> Handler for SharedHandler<H> {
    fn handle(&self, request: &crate::Request) -> crate::Response {
        self.0.handle(request)
    }

    fn handle_streaming(
        &self,
        request: &crate::Request,
        body: &mut crate::RequestBody<'_>,
    ) -> Option<crate::Response> {
        self.0.handle_streaming(request, body)
    }
}

/// Makes a worker's handler, on that worker.
type MakeHandler = dyn Fn() -> Box<dyn Handler> + Send + Sync;

/// Threads mode: accept and serve on this OS thread's runtime.
fn serve_threads(
    listener: std::net::TcpListener,
    shared: Arc<Shared>,
    handler: Box<dyn Handler>,
) -> io::Result<()> {
    let listener = TcpListener::from_std(listener)?;
    let connections = Connections::new(shared.clone(), handler);
    let accepting = {
        let connections = connections.clone();
        fibra::spawn(move || {
            accept_each(
                || listener.accept().map(|(stream, _)| stream),
                |stream: TcpStream| connections.serve(stream, || {}),
            )
        })
    };
    wait_for_shutdown(&shared.control);
    accepting.cancel();
    let _ = accepting.join();
    connections.drain();
    Ok(())
}

/// A Ractor of a ractors-mode server, and how many connections it serves.
struct Worker {
    ractor: Ractor<std::net::TcpStream>,
    load: Arc<AtomicUsize>,
}

/// Ractors mode: `count` Ractors on a pool of as many workers, each with a
/// handler `make` made on it, serve the connections that this OS thread
/// accepts and hands over.
fn serve_ractors(
    listener: std::net::TcpListener,
    shared: Arc<Shared>,
    count: usize,
    make: Arc<MakeHandler>,
) -> io::Result<()> {
    let pool = Pool::new(count);
    let workers: Vec<Worker> = (0..count)
        .map(|_| {
            let load = Arc::new(AtomicUsize::new(0));
            let shared = shared.clone();
            let make = make.clone();
            let served = load.clone();
            let ractor = pool.spawn(move |ctx: &Context<std::net::TcpStream>| {
                let connections = Connections::new(shared, make());
                // Ready: the server takes this (a panic in `make` instead
                // tells it that this worker cannot serve).
                if ctx.yield_value(()).is_err() {
                    // Another worker's `make` panicked: the server stops.
                    return;
                }
                while let Ok(stream) = ctx.receive() {
                    let served = served.clone();
                    let done = move || {
                        served.fetch_sub(1, Ordering::Relaxed);
                    };
                    match TcpStream::from_std(stream) {
                        Ok(stream) => connections.serve(stream, done),
                        Err(_) => done(),
                    }
                }
                connections.drain();
            });
            Worker { ractor, load }
        })
        .collect();
    let workers = std::rc::Rc::new(workers);
    let closing = workers.clone();
    fibra::run(move || {
        wait_until_ready(&closing);
        let listener = TcpListener::from_std(listener)?;
        let accepting = fibra::spawn(move || {
            accept_each(
                || listener.accept_std().map(|(stream, _)| stream),
                |stream: std::net::TcpStream| hand_over(&workers, stream),
            )
        });
        wait_for_shutdown(&shared.control);
        accepting.cancel();
        let _ = accepting.join();
        // Each Ractor drains its connections once its port is closed and
        // empty.
        for worker in closing.iter() {
            worker.ractor.close_incoming();
        }
        for worker in closing.iter() {
            let _ = worker.ractor.clone().join();
        }
        Ok(())
    })
}

/// Waits until every worker has made its handler. If one could not (its
/// `make` panicked), stops them all and continues that panic here.
fn wait_until_ready(workers: &[Worker]) {
    if workers.iter().all(|worker| worker.ractor.take().is_ok()) {
        return;
    }
    for worker in workers {
        worker.ractor.close_outgoing();
        worker.ractor.close_incoming();
    }
    let mut panic = None;
    for worker in workers {
        if let Err(err) = worker.ractor.clone().join() {
            panic = panic.or(err.into_panic());
        }
    }
    std::panic::resume_unwind(
        panic.unwrap_or_else(|| Box::new("fibra-http: a worker stopped before it served")),
    );
}

/// Gives `stream` to the Ractor serving the fewest connections.
fn hand_over(workers: &[Worker], stream: std::net::TcpStream) {
    let worker = workers
        .iter()
        .min_by_key(|w| w.load.load(Ordering::Relaxed))
        .expect("a ractors-mode server has at least one Ractor");
    worker.load.fetch_add(1, Ordering::Relaxed);
    if worker.ractor.send(stream).is_err() {
        // The Ractor is gone (only while shutting down): the connection
        // closes unserved.
        worker.load.fetch_sub(1, Ordering::Relaxed);
    }
}

/// Accepts connections and hands each to `serve`, until cancelled.
fn accept_each<S>(mut accept: impl FnMut() -> io::Result<S>, mut serve: impl FnMut(S)) {
    loop {
        match accept() {
            Ok(stream) => serve(stream),
            // A connection that failed before it was accepted costs only
            // itself.
            Err(err) if fails_one_connection(&err) => {}
            // Out of descriptors or memory: wait for connections to close,
            // rather than spin or give up.
            Err(_) => fibra::time::sleep(Duration::from_millis(50)),
        }
    }
}

fn fails_one_connection(err: &io::Error) -> bool {
    matches!(
        err.raw_os_error(),
        Some(libc::ECONNABORTED | libc::EPROTO | libc::EPERM | libc::EINTR)
    )
}
