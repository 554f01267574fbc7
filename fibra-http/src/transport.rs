//! What a connection reads requests from and writes responses to: a fibra
//! TCP stream when serving, or bytes in memory when fuzzing the reader.

use crate::upgrade::Duplex;
use fibra::net::TcpStream;
use std::io::{self, Read, Write};
use std::net::Shutdown;
use std::time::Duration;

pub(crate) trait Transport {
    /// Reads what has arrived into `buf`, waiting at most `limit` for
    /// something to arrive; `Ok(0)` is the end of the stream and
    /// `ErrorKind::TimedOut` a wait that ran out.
    fn read_within(&mut self, buf: &mut [u8], limit: Duration) -> io::Result<usize>;

    /// Writes all of `data`, or fails (the write timeout is the transport's).
    fn send(&mut self, data: &[u8]) -> io::Result<()>;

    /// Says to the client that nothing more will be sent (a FIN), while it can
    /// still be read from.
    fn close_write(&mut self);

    /// This transport as the stream of an upgraded connection, reading and
    /// writing from then on with no timeout of its own but the write
    /// timeout; `None` where it cannot be one (the fuzzer's client), and
    /// the connection then just ends after its `101`.
    fn into_duplex(self) -> Option<Box<dyn Duplex>>
    where
        Self: Sized,
    {
        None
    }
}

impl Transport for TcpStream {
    fn read_within(&mut self, buf: &mut [u8], limit: Duration) -> io::Result<usize> {
        if limit.is_zero() {
            return Err(io::ErrorKind::TimedOut.into());
        }
        self.set_read_timeout(Some(limit))?;
        self.read(buf)
    }

    fn send(&mut self, data: &[u8]) -> io::Result<()> {
        self.write_all(data)
    }

    fn close_write(&mut self) {
        // A client that has already gone makes this fail; nothing is lost.
        let _ = self.shutdown(Shutdown::Write);
    }

    fn into_duplex(self) -> Option<Box<dyn Duplex>> {
        self.set_read_timeout(None).ok()?;
        Some(Box::new(self))
    }
}

/// A transport lent to a connection (the fuzzer keeps its client to read
/// what was written).
impl<T: Transport + ?Sized> Transport for &mut T {
    fn read_within(&mut self, buf: &mut [u8], limit: Duration) -> io::Result<usize> {
        (**self).read_within(buf, limit)
    }

    fn send(&mut self, data: &[u8]) -> io::Result<()> {
        (**self).send(data)
    }

    fn close_write(&mut self) {
        (**self).close_write()
    }
}
