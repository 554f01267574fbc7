//! The files on fibra: a green thread per file, through `fibra::fs` (the
//! borrowing hop) and through `fibra::blocking` (a `'static` closure per
//! call), for the difference between the two doors.

use super::{Files, Size, check};
use std::io;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Each green thread writes its file and reads it back with `fibra::fs`.
pub fn fs(files: &Files, size: Size) -> io::Result<Duration> {
    let (paths, data) = (files.paths.clone(), Arc::new(files.data.clone()));
    fibra::run(move || {
        let start = Instant::now();
        let threads: Vec<_> = paths
            .into_iter()
            .map(|path| {
                let data = data.clone();
                fibra::spawn(move || -> io::Result<()> {
                    for _ in 0..size.rounds {
                        fibra::fs::write(&path, &*data)?;
                        check(&path, &fibra::fs::read(&path)?, &data)?;
                    }
                    Ok(())
                })
            })
            .collect();
        join_all(threads)?;
        Ok(start.elapsed())
    })
}

/// Each green thread writes its file and reads it back with `std::fs`, each
/// call in a `fibra::blocking` closure that owns a clone of what it needs.
pub fn blocking(files: &Files, size: Size) -> io::Result<Duration> {
    let (paths, data) = (files.paths.clone(), Arc::new(files.data.clone()));
    fibra::run(move || {
        let start = Instant::now();
        let threads: Vec<_> = paths
            .into_iter()
            .map(|path| {
                let data = data.clone();
                fibra::spawn(move || -> io::Result<()> {
                    for _ in 0..size.rounds {
                        let (to, contents): (PathBuf, Vec<u8>) = (path.clone(), data.to_vec());
                        fibra::blocking(move || std::fs::write(to, contents))?;
                        let from = path.clone();
                        check(&path, &fibra::blocking(move || std::fs::read(from))?, &data)?;
                    }
                    Ok(())
                })
            })
            .collect();
        join_all(threads)?;
        Ok(start.elapsed())
    })
}

fn join_all(threads: Vec<fibra::JoinHandle<io::Result<()>>>) -> io::Result<()> {
    for thread in threads {
        thread
            .join()
            .map_err(|e| io::Error::other(format!("a green thread failed: {e:?}")))??;
    }
    Ok(())
}
