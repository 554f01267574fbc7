//! The connections one runtime serves, each in a green thread of its own,
//! and how they end when the server shuts down.

use crate::conn::{self, Watch};
use crate::shutdown::Control;
#[cfg(feature = "tls")]
use crate::tls::TlsStream;
use crate::{Handler, Limits};
use fibra::net::TcpStream;
use fibra::runtime::{JoinHandle, Unparker};
use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::rc::Rc;
use std::sync::Arc;
use std::time::Duration;

/// What every connection of a server shares, on whichever OS thread.
pub(crate) struct Shared {
    pub(crate) limits: Limits,
    pub(crate) grace_period: Duration,
    /// Set: every connection is HTTPS, with this configuration.
    #[cfg(feature = "tls")]
    pub(crate) tls: Option<Arc<rustls::ServerConfig>>,
    pub(crate) control: Arc<Control>,
}

/// The live connections of one runtime (the server's one OS thread in threads
/// mode, one Ractor's worker in ractors mode).
pub(crate) struct Connections {
    shared: Arc<Shared>,
    /// What answers this runtime's requests: made on it, so it need not be
    /// `Send`.
    handler: Box<dyn Handler>,
    live: RefCell<HashMap<u64, Live>>,
    next: Cell<u64>,
    /// The green thread draining the connections, woken when the last ends.
    drainer: RefCell<Option<Unparker>>,
}

struct Live {
    thread: JoinHandle<()>,
    /// Whether a graceful shutdown closes the connection at once: it waits,
    /// with nothing read, for a new request, or it is upgraded.
    idle: Rc<Cell<bool>>,
}

impl Connections {
    pub(crate) fn new(shared: Arc<Shared>, handler: Box<dyn Handler>) -> Rc<Connections> {
        Rc::new(Connections {
            shared,
            handler,
            live: RefCell::default(),
            next: Cell::new(0),
            drainer: RefCell::default(),
        })
    }

    /// Serves `stream` in a new green thread; `on_end` runs when it closes.
    pub(crate) fn serve(self: &Rc<Self>, stream: TcpStream, on_end: impl FnOnce() + 'static) {
        let id = self.next.replace(self.next.get() + 1);
        let idle = Rc::new(Cell::new(false));
        let connections = self.clone();
        let watched = idle.clone();
        let thread = fibra::spawn(move || {
            let _ended = Ended {
                connections: &connections,
                id,
                on_end: Some(on_end),
            };
            let shared = &connections.shared;
            let peer = stream.peer_addr().ok();
            // Responses are written whole, so Nagle's delay only adds latency;
            // a client that stops reading is dropped after the write timeout.
            if stream.set_nodelay(true).is_err()
                || stream
                    .set_write_timeout(Some(shared.limits.write_timeout))
                    .is_err()
            {
                return;
            }
            let watch = Watch {
                idle: &watched,
                stopping: &shared.control.stopping,
            };
            #[cfg(feature = "tls")]
            if let Some(config) = &shared.tls {
                let limit = shared.limits.request_timeout;
                // A failed handshake drops the stream: only it closes.
                if let Ok(tls) = TlsStream::accept(stream, config.clone(), limit) {
                    conn::serve(tls, peer, &*connections.handler, &shared.limits, watch);
                }
                return;
            }
            conn::serve(stream, peer, &*connections.handler, &shared.limits, watch);
        });
        self.live.borrow_mut().insert(id, Live { thread, idle });
    }

    /// Ends every connection gracefully: those idle between requests, and
    /// those upgraded to another protocol, are closed now; the others finish the request in flight (they see the
    /// server stopping and close after their response) — for up to the
    /// server's grace period, after which those left are cancelled: each
    /// unwinds where it waits, its socket closes, and its client gets no
    /// response. Returns when all have ended.
    pub(crate) fn drain(self: &Rc<Self>) {
        let grace_period = self.shared.grace_period;
        self.cancel(|live| live.idle.get());
        *self.drainer.borrow_mut() = Some(fibra::runtime::current().unparker());
        let connections = self.clone();
        let reaper = fibra::spawn(move || {
            fibra::time::sleep(grace_period);
            connections.cancel(|_| true);
        });
        while !self.live.borrow().is_empty() {
            fibra::runtime::park();
        }
        reaper.cancel();
    }

    /// Cancels the connections `which` picks (they end when next scheduled).
    fn cancel(&self, which: impl Fn(&Live) -> bool) {
        for live in self.live.borrow().values().filter(|l| which(l)) {
            live.thread.cancel();
        }
    }
}

/// Forgets a connection however its green thread ends (it unwinds when
/// cancelled).
struct Ended<'a, F: FnOnce()> {
    connections: &'a Connections,
    id: u64,
    on_end: Option<F>,
}

impl<F: FnOnce()> Drop for Ended<'_, F> {
    fn drop(&mut self) {
        let mut live = self.connections.live.borrow_mut();
        live.remove(&self.id);
        if live.is_empty()
            && let Some(drainer) = self.connections.drainer.borrow().as_ref()
        {
            drainer.unpark();
        }
        drop(live);
        if let Some(on_end) = self.on_end.take() {
            on_end();
        }
    }
}
