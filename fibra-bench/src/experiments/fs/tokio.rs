//! The files on tokio: a task per file on a current-thread runtime, through
//! `tokio::fs` (which runs each call on tokio's blocking pool).

use super::{Files, Size, check};
use std::io;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Each task writes its file and reads it back with `tokio::fs`.
pub fn fs(files: &Files, size: Size) -> io::Result<Duration> {
    let (paths, data) = (files.paths.clone(), Arc::new(files.data.clone()));
    crate::experiments::tokio_runtime().block_on(async move {
        let start = Instant::now();
        let tasks: Vec<_> = paths
            .into_iter()
            .map(|path| {
                let data = data.clone();
                tokio::spawn(async move {
                    for _ in 0..size.rounds {
                        tokio::fs::write(&path, &*data).await?;
                        check(&path, &tokio::fs::read(&path).await?, &data)?;
                    }
                    Ok::<(), io::Error>(())
                })
            })
            .collect();
        for task in tasks {
            task.await.map_err(io::Error::other)??;
        }
        Ok(start.elapsed())
    })
}
