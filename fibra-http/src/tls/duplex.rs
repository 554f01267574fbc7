//! A TLS session once its connection is upgraded: read by one green thread
//! while another writes.
//!
//! The rustls session is one state machine for both directions, so it sits
//! in a `RefCell` that is borrowed only between waits: a read waits for the
//! socket with the session released, then feeds it what arrived; a write
//! encrypts under the borrow, releases it, and sends the records.

use super::TlsStream;
use crate::upgrade::Duplex;
use fibra::net::TcpStream;
use fibra::sync::Mutex;
use rustls::ServerConnection;
use std::cell::{Cell, RefCell};
use std::io::{self, Read, Write};

/// How many bytes of records one read of the socket takes: under rustls's
/// limit of plaintext received and not yet read (16 KiB), which it checks
/// before it takes more.
const RECORDS_READ: usize = 8 << 10;

pub(crate) struct TlsDuplex {
    tcp: TcpStream,
    tls: RefCell<ServerConnection>,
    /// Records read from the socket and not yet given to rustls.
    inbox: RefCell<Vec<u8>>,
    /// The buffer the socket is read into, taken while a read waits.
    scratch: Cell<Vec<u8>>,
}

impl TlsDuplex {
    pub(crate) fn new(stream: TlsStream) -> TlsDuplex {
        TlsDuplex {
            tcp: stream.tcp,
            tls: RefCell::new(stream.tls),
            inbox: RefCell::default(),
            scratch: Cell::default(),
        }
    }

    /// Gives rustls the records waiting in the inbox, as far as it takes
    /// them; whether it took any. What rustls then has to send (an alert, an
    /// answer to a key update) goes as a write does, under `writing`.
    fn feed(&self, writing: &Mutex<()>) -> io::Result<bool> {
        let mut inbox = self.inbox.borrow_mut();
        if inbox.is_empty() {
            return Ok(false);
        }
        let mut tls = self.tls.borrow_mut();
        let mut records = &inbox[..];
        let taken = tls.read_tls(&mut records)?;
        let processed = tls.process_new_packets();
        inbox.drain(..taken);
        drop(inbox);
        let alert = tls.wants_write();
        drop(tls);
        if alert {
            let _writing = writing.lock();
            self.send_all(&[])?;
        }
        processed.map_err(|err| io::Error::new(io::ErrorKind::InvalidData, err))?;
        Ok(taken > 0)
    }
}

/// Ends the session with `close_notify`, so that the client can tell the
/// end from a cut; not while unwinding (a cancelled connection just closes).
impl Drop for TlsDuplex {
    fn drop(&mut self) {
        if std::thread::panicking() {
            return;
        }
        self.tls.get_mut().send_close_notify();
        // A client that has already gone makes these fail; nothing is lost.
        let _ = self.send_all(&[]);
        let _ = self.tcp.shutdown(std::net::Shutdown::Write);
    }
}

impl Duplex for TlsDuplex {
    fn receive(&self, buf: &mut [u8], writing: &Mutex<()>) -> io::Result<usize> {
        loop {
            match self.tls.borrow_mut().reader().read(buf) {
                // Data, or 0: the client's `close_notify`.
                Ok(n) => return Ok(n),
                Err(err) if err.kind() == io::ErrorKind::WouldBlock => {}
                Err(err) => return Err(err),
            }
            if self.feed(writing)? {
                continue;
            }
            // Nothing is borrowed while the socket is waited for.
            let mut scratch = self.scratch.take();
            scratch.resize(RECORDS_READ, 0);
            let read = (&self.tcp).read(&mut scratch);
            if let Ok(n) = read {
                self.inbox.borrow_mut().extend_from_slice(&scratch[..n]);
            }
            self.scratch.set(scratch);
            if read? == 0 {
                return Ok(0);
            }
        }
    }

    fn send_all(&self, mut data: &[u8]) -> io::Result<()> {
        let mut records = Vec::new();
        loop {
            {
                let mut tls = self.tls.borrow_mut();
                // rustls takes a bounded amount of plaintext at a time.
                let taken = tls.writer().write(data)?;
                data = &data[taken..];
                while tls.wants_write() {
                    tls.write_tls(&mut records)?;
                }
            }
            (&self.tcp).write_all(&records)?;
            records.clear();
            if data.is_empty() {
                return Ok(());
            }
        }
    }

    fn tcp(&self) -> &TcpStream {
        &self.tcp
    }

    fn is_tls(&self) -> bool {
        true
    }
}
