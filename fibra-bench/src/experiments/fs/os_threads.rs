//! The files on plain OS threads with `std::fs`: a thread per file, and one
//! thread for all of them in turn (no concurrency, no hop: the floor).

use super::{Files, Size, check};
use std::io;
use std::path::Path;
use std::thread;
use std::time::{Duration, Instant};

/// Writes the file at `path` and reads it back, `rounds` times.
fn rounds(path: &Path, data: &[u8], rounds: u64) -> io::Result<()> {
    for _ in 0..rounds {
        std::fs::write(path, data)?;
        check(path, &std::fs::read(path)?, data)?;
    }
    Ok(())
}

/// An OS thread per file.
pub fn threads(files: &Files, size: Size) -> io::Result<Duration> {
    let start = Instant::now();
    thread::scope(|scope| {
        let threads: Vec<_> = files
            .paths
            .iter()
            .map(|path| scope.spawn(|| rounds(path, &files.data, size.rounds)))
            .collect();
        threads.into_iter().try_for_each(|t| {
            t.join()
                .map_err(|_| io::Error::other("an OS thread panicked"))?
        })
    })?;
    Ok(start.elapsed())
}

/// One OS thread, file after file.
pub fn serial(files: &Files, size: Size) -> io::Result<Duration> {
    let start = Instant::now();
    for path in &files.paths {
        rounds(path, &files.data, size.rounds)?;
    }
    Ok(start.elapsed())
}
