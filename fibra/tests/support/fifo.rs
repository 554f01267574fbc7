//! A FIFO (a named pipe) whose reads wait until the test says so: a file call
//! of `fibra::fs` on it stays on the blocking pool, with the caller's buffer
//! lent, for as long as the test likes.

use std::ffi::CString;
use std::io::Write;
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;
use std::sync::mpsc;
use std::thread;

/// A FIFO and its writer, an OS thread that opens it at once (the open
/// returns when a reader opens it too) and writes `payload` when told to.
pub struct Fifo {
    pub path: PathBuf,
    go: mpsc::Sender<()>,
    writer: thread::JoinHandle<()>,
}

impl Fifo {
    /// A new FIFO in the temporary directory, named for `name` and this
    /// process.
    pub fn new(name: &str, payload: &'static [u8]) -> Fifo {
        let path = std::env::temp_dir().join(format!("fibra-fifo-{name}-{}", std::process::id()));
        let _ = std::fs::remove_file(&path);
        let c_path = CString::new(path.as_os_str().as_bytes()).unwrap();
        // SAFETY: a NUL-terminated path that outlives the call.
        let made = unsafe { libc::mkfifo(c_path.as_ptr(), 0o600) };
        assert_eq!(made, 0, "mkfifo: {}", std::io::Error::last_os_error());
        let (go, told) = mpsc::channel();
        let writer = {
            let path = path.clone();
            thread::spawn(move || {
                let mut fifo = std::fs::OpenOptions::new().write(true).open(path).unwrap();
                if told.recv().is_ok() {
                    fifo.write_all(payload).unwrap();
                }
            })
        };
        Fifo { path, go, writer }
    }

    /// Writes the payload (a reader must have opened the FIFO) and closes
    /// the writing end.
    pub fn write(self) {
        self.go.send(()).unwrap();
        self.writer.join().unwrap();
        std::fs::remove_file(&self.path).unwrap();
    }
}
