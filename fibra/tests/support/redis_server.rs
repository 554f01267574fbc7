//! A throwaway `redis-server` on a free loopback port, for the blocking-driver
//! test and the `redis_blocking` example: started with persistence off, ready
//! once it answers `PING`, killed when the guard drops (during a panic too).

use std::io::{self, Read, Write};
use std::net::{Ipv4Addr, TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

/// The program started; Debian's package `redis-server` installs it.
const PROGRAM: &str = "redis-server";

/// How long a started server may take to answer `PING`.
const READY_WITHIN: Duration = Duration::from_secs(30);

/// Tries to start a server this many times: a port found free may be taken by
/// another process before the server binds it.
const ATTEMPTS: usize = 3;

/// Whether `PATH` names a directory that holds an executable `program`.
pub fn on_path(program: &str) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::env::var_os("PATH").is_some_and(|path| {
        std::env::split_paths(&path).any(|dir| {
            std::fs::metadata(dir.join(program))
                .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
    })
}

/// A running `redis-server`, killed and reaped on drop.
pub struct RedisServer {
    child: Child,
    port: u16,
}

impl RedisServer {
    /// Starts a server on a free port of 127.0.0.1 and waits until it answers
    /// `PING`. `Ok(None)` when `redis-server` is not installed.
    pub fn start() -> io::Result<Option<RedisServer>> {
        // Looked up first, not judged from the spawn: under qemu-user the
        // spawn of a missing program succeeds, and the child exits 127.
        if !on_path(PROGRAM) {
            return Ok(None);
        }
        let mut last_error = None;
        for _ in 0..ATTEMPTS {
            let port = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))?
                .local_addr()?
                .port();
            let child = match Command::new(PROGRAM)
                .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
                .args(["--save", "", "--appendonly", "no", "--loglevel", "warning"])
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .spawn()
            {
                Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
                spawned => spawned?,
            };
            // From here on the guard owns the process: any early return kills it.
            let mut server = RedisServer { child, port };
            match server.wait_until_ready() {
                Ok(()) => return Ok(Some(server)),
                Err(e) => last_error = Some(e),
            }
        }
        Err(last_error.expect("at least one attempt"))
    }

    /// The URL a client connects to.
    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/", self.port)
    }

    /// Polls with `PING` until the server answers `+PONG`; fails if it exits
    /// first (its port was taken, say) or stays silent for [`READY_WITHIN`].
    fn wait_until_ready(&mut self) -> io::Result<()> {
        let deadline = Instant::now() + READY_WITHIN;
        loop {
            if let Some(status) = self.child.try_wait()? {
                return Err(io::Error::other(format!(
                    "{PROGRAM} on port {} exited with {status} before answering PING",
                    self.port
                )));
            }
            if self.answers_ping() {
                return Ok(());
            }
            if Instant::now() >= deadline {
                return Err(io::Error::new(
                    io::ErrorKind::TimedOut,
                    format!(
                        "{PROGRAM} on port {} did not answer PING within {READY_WITHIN:?}",
                        self.port
                    ),
                ));
            }
            thread::sleep(Duration::from_millis(10));
        }
    }

    fn answers_ping(&self) -> bool {
        let ping = || -> io::Result<bool> {
            let mut stream = TcpStream::connect((Ipv4Addr::LOCALHOST, self.port))?;
            stream.set_read_timeout(Some(Duration::from_secs(1)))?;
            stream.write_all(b"PING\r\n")?;
            let mut reply = [0; 7];
            stream.read_exact(&mut reply)?;
            Ok(&reply == b"+PONG\r\n")
        };
        ping().unwrap_or(false)
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        // It may have exited already; either way, reap it.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
