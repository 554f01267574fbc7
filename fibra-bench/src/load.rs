//! Other load on the cores, for the `-loaded` variants of `ractor-pingpong`
//! and `ractor-fanin`: one `nice -n 19` busy loop per core, started before a
//! runtime's runs and stopped after them, the same for every runtime. At the
//! lowest priority the loops take little of a core from a runtime that keeps
//! it busy, but they take the core whenever the runtime leaves it (a worker
//! that sleeps, an OS thread that blocks), and the scheduler may run any
//! thread of the runtime on either core or briefly preempt it: what is
//! measured is how a runtime fares when it does not have the machine to
//! itself.

use std::process::{Child, Command, Stdio};
use std::thread;

/// Whether a runtime's runs have the machine to themselves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Load {
    Quiet,
    /// A `nice -n 19` busy loop per core beside the runs.
    BusyLoops,
}

impl Load {
    /// Starts the load (nothing for [`Load::Quiet`]); it lasts until the
    /// returned value is dropped.
    pub fn start(self) -> Result<Option<BusyLoops>, String> {
        match self {
            Load::Quiet => Ok(None),
            Load::BusyLoops => BusyLoops::start(cores()).map(Some),
        }
    }

    /// What a table's title says of the load.
    pub fn title(self) -> &'static str {
        match self {
            Load::Quiet => "",
            Load::BusyLoops => " — under load: a `nice -n 19` busy loop per core beside each run",
        }
    }
}

/// The cores this process may use.
fn cores() -> usize {
    thread::available_parallelism().map_or(1, |n| n.get())
}

/// Busy-loop processes at the lowest priority, killed when dropped.
pub struct BusyLoops {
    children: Vec<Child>,
}

impl BusyLoops {
    /// Starts `n` of them (each a shell looping on its `:` builtin, so it
    /// never leaves the CPU of its own accord).
    fn start(n: usize) -> Result<BusyLoops, String> {
        let mut loops = BusyLoops {
            children: Vec::with_capacity(n),
        };
        for _ in 0..n {
            let child = Command::new("nice")
                .args(["-n", "19", "sh", "-c", "while :; do :; done"])
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .map_err(|e| format!("cannot start a `nice -n 19` busy loop: {e}"))?;
            loops.children.push(child);
        }
        Ok(loops)
    }
}

impl Drop for BusyLoops {
    fn drop(&mut self) {
        for child in &mut self.children {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The loops run until dropped, then are gone (reaped).
    #[test]
    fn busy_loops_run_until_dropped() {
        let mut loops = BusyLoops::start(2).unwrap();
        for child in &mut loops.children {
            assert!(child.try_wait().unwrap().is_none(), "still running");
        }
        let pids: Vec<u32> = loops.children.iter().map(Child::id).collect();
        drop(loops);
        for pid in pids {
            let alive = std::path::Path::new(&format!("/proc/{pid}")).exists();
            assert!(!alive, "busy loop {pid} reaped");
        }
        assert!(Load::Quiet.start().unwrap().is_none());
    }
}
