//! Small files from many threads at once: F threads (green threads, tasks or
//! OS threads), each owning one file of B bytes, each writing its file whole
//! and reading it back R times. The rate is files written and read back
//! (one write and one read) per second. The files live in a directory made
//! before the clock starts, on `/dev/shm` (a tmpfs) where there is one, else
//! in the temporary directory: on tmpfs only the page cache serves them, so
//! what is measured is the cost of each door to the file system, not the
//! disk. (On ext4, rewriting a file through `O_TRUNC` starts its writeback
//! at `close` — the `auto_da_alloc` heuristic — which costs this 2-core VM
//! about a millisecond per file and hides the doors' differences.)

mod fibra;
mod os_threads;
mod tokio;

use super::rates::{self, Plan, Runner, Runtime};
use super::{Experiment, Section};
use crate::chart::Chart;
use crate::ctx::{Ctx, RUNS};
use crate::measure::{Outcome, Runs, Timed};
use crate::record::Record;
use crate::report::{SPREAD_NOTE, Table, eng, grouped, short};
use std::io;
use std::path::{Path, PathBuf};
use std::time::Duration;

pub const EXPERIMENT: Experiment = Experiment {
    name: "fs",
    description: "small files: many threads each writing and reading back a 4 KiB file",
    default: true,
    runtimes: || rates::names(&runtimes()),
    charts: &[Chart {
        variant: "",
        metrics: &["round_trips_per_s"],
    }],
    run,
    child: None,
};

/// One run's size.
#[derive(Clone, Copy, Debug)]
pub struct Size {
    /// Files, each with a thread of its own.
    pub files: usize,
    /// Times each thread writes its file and reads it back.
    pub rounds: u64,
    /// Bytes per file.
    pub bytes: usize,
}

impl Size {
    fn total(self) -> u64 {
        self.files as u64 * self.rounds
    }
}

fn size(ctx: &Ctx) -> Size {
    Size {
        files: 1000,
        rounds: ctx.size(2, 10, 50),
        bytes: 4096,
    }
}

fn runtimes() -> Vec<Runtime<Size>> {
    vec![
        Runtime {
            name: "fibra",
            how: "one fibra::run, a green thread per file: fibra::fs::write and fibra::fs::read, \
                  each one hop to the blocking pool lending the path and buffer",
            runner: Runner::InProcess(|size| in_process(size, "fibra", fibra::fs)),
        },
        Runtime {
            name: "fibra-blocking",
            how: "one fibra::run, a green thread per file: std::fs::write and std::fs::read, \
                  each in its own fibra::blocking closure (a 'static one: the path and the data \
                  cloned into it)",
            runner: Runner::InProcess(|size| in_process(size, "fibra-blocking", fibra::blocking)),
        },
        Runtime {
            name: "tokio",
            how: "one current-thread runtime, a task per file: tokio::fs::write and \
                  tokio::fs::read (each on tokio's blocking pool)",
            runner: Runner::InProcess(|size| in_process(size, "tokio", tokio::fs)),
        },
        Runtime {
            name: "std-threads",
            how: "an OS thread per file (spawned inside the timed part, as the green threads \
                  and tasks are): std::fs::write and std::fs::read",
            runner: Runner::InProcess(|size| in_process(size, "std-threads", os_threads::threads)),
        },
        Runtime {
            name: "std-serial",
            how: "one OS thread, file after file: std::fs::write and std::fs::read with no \
                  concurrency and no hop, the floor of the system calls themselves",
            runner: Runner::InProcess(|size| in_process(size, "std-serial", os_threads::serial)),
        },
    ]
}

/// The files of one run: a directory of their own, removed when dropped.
pub struct Files {
    dir: PathBuf,
    pub paths: Vec<PathBuf>,
    /// What each thread writes (the same bytes for all).
    pub data: Vec<u8>,
}

/// Where the files go: `/dev/shm` where it is a directory, else the
/// temporary directory.
fn parent_dir() -> PathBuf {
    let shm = Path::new("/dev/shm");
    if shm.is_dir() {
        shm.to_path_buf()
    } else {
        std::env::temp_dir()
    }
}

impl Files {
    /// The files of a run of `runtime` at `size`: their directory made, each
    /// written once.
    fn new(runtime: &str, size: Size) -> io::Result<Files> {
        let dir = parent_dir().join(format!("fibra-bench-fs-{runtime}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir)?;
        let data: Vec<u8> = (0..size.bytes).map(|i| (i % 251) as u8).collect();
        let paths: Vec<PathBuf> = (0..size.files)
            .map(|i| dir.join(format!("{i:05}")))
            .collect();
        for path in &paths {
            std::fs::write(path, &data)?;
        }
        Ok(Files { dir, paths, data })
    }
}

impl Drop for Files {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Checks what a thread read back from `path`.
pub fn check(path: &Path, read: &[u8], data: &[u8]) -> io::Result<()> {
    if read == data {
        Ok(())
    } else {
        Err(io::Error::other(format!(
            "{} read back {} bytes that differ from the {} written",
            path.display(),
            read.len(),
            data.len()
        )))
    }
}

/// Runs `work` at `size` on a fresh set of files made for `runtime`.
fn in_process(
    size: Size,
    runtime: &str,
    work: fn(&Files, Size) -> io::Result<Duration>,
) -> Result<Timed, String> {
    let files = Files::new(runtime, size).map_err(|e| format!("cannot make the files: {e}"))?;
    let elapsed = work(&files, size).map_err(|e| e.to_string())?;
    Ok(Timed::new(size.total(), elapsed))
}

fn run(ctx: &Ctx) -> Section {
    let mut section = Section::default();
    let size = size(ctx);
    let plan = Plan {
        experiment: EXPERIMENT.name,
        size,
        peer_args: &[],
        parse: &|_| Err("the fs experiment has no external peers".into()),
        warm_up: true,
    };
    let (results, mut notes) = rates::measure_all(ctx, &plan, runtimes(), &mut section);
    let rows = rates::rows(&results, |t| {
        vec![grouped(t.count), eng(t.per_sec()), short(t.ns_each() / 1e3)]
    });
    notes.push(format!(
        "the files are in {} (no fsync)",
        parent_dir().display()
    ));
    notes.push(SPREAD_NOTE.into());
    notes.push(rates::verdict(&results, &["tokio", "fibra-blocking"]));
    section.tables.push(Table {
        title: format!(
            "fs: {} threads, each writing its own {}-byte file and reading it back × {}, on one \
             OS thread (the OS-thread peers: see below); best of {RUNS} runs after a warm-up",
            grouped(size.files as u64),
            grouped(size.bytes as u64),
            grouped(size.rounds),
        ),
        columns: vec![
            "runtime",
            "write+reads",
            "write+reads/s",
            "µs/write+read",
            "vs fibra",
            "spread",
        ],
        rows,
        notes,
    });
    section.records.extend(records(size, &results));
    section
}

fn records(size: Size, results: &[(&str, Outcome<Runs<Timed>>)]) -> Vec<Record> {
    let variant = format!(
        "files={} rounds={} bytes={}",
        size.files, size.rounds, size.bytes
    );
    let metrics = ("round_trips_per_s", "ns_per_round_trip");
    rates::records(EXPERIMENT.name, &variant, results, metrics)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_runtime_writes_and_reads_back_every_file() {
        let size = Size {
            files: 20,
            rounds: 2,
            bytes: 4096,
        };
        for runtime in runtimes() {
            let Runner::InProcess(run) = runtime.runner else {
                unreachable!("every runtime of fs runs in this process");
            };
            let timed = run(size).unwrap_or_else(|e| panic!("{}: {e}", runtime.name));
            assert_eq!(timed.count, 40, "{}", runtime.name);
        }
    }
}
