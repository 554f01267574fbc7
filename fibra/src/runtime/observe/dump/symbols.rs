//! A dump's symbolizer: the return addresses each runtime gave for its
//! threads, as functions, files and lines (each address and each distinct
//! stack once), with the frames that say nothing of the thread (how it was
//! traced and parked, how a green thread starts) cut off.

use super::{Frame, ThreadDump};
use crate::runtime::section::Section;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

/// Symbolizes backtraces, each address once and each distinct stack once.
#[derive(Default)]
pub(super) struct Symbols {
    addresses: HashMap<usize, Vec<Frame>>,
    stacks: HashMap<Vec<usize>, Arc<[Frame]>>,
}

impl Symbols {
    /// The threads of `section`, a Ractor's body named after it (`ractor
    /// #ID`: made here, so that starting a Ractor names nothing).
    pub(super) fn threads(&mut self, section: &Section) -> Vec<ThreadDump> {
        let bodies: HashMap<u64, u64> = section
            .ractors
            .iter()
            .filter_map(|r| Some((r.thread?, r.id)))
            .collect();
        section
            .threads
            .iter()
            .map(|raw| ThreadDump {
                id: raw.id,
                name: raw.name.clone().or_else(|| {
                    let ractor = bodies.get(&raw.id)?;
                    Some(Arc::from(format!("ractor #{ractor}")))
                }),
                state: raw.state,
                backtrace: self.stack(&raw.stack),
                compacted: raw.compacted,
            })
            .collect()
    }

    fn stack(&mut self, addresses: &[usize]) -> Arc<[Frame]> {
        if let Some(frames) = self.stacks.get(addresses) {
            return frames.clone();
        }
        let mut frames: Vec<Frame> = addresses
            .iter()
            .flat_map(|&ip| self.address(ip).to_vec())
            .collect();
        trim(&mut frames);
        let frames: Arc<[Frame]> = frames.into();
        self.stacks.insert(addresses.to_vec(), frames.clone());
        frames
    }

    fn address(&mut self, ip: usize) -> &[Frame] {
        self.addresses.entry(ip).or_insert_with(|| {
            let mut frames = Vec::new();
            backtrace::resolve(ip as *mut std::ffi::c_void, |symbol| {
                frames.push(Frame {
                    function: symbol
                        .name()
                        .map_or_else(|| format!("{ip:#x}"), |name| format!("{name:#}")),
                    file: symbol.filename().map(PathBuf::from),
                    line: symbol.lineno(),
                });
            });
            if frames.is_empty() {
                frames.push(Frame {
                    function: format!("{ip:#x}"),
                    file: None,
                    line: None,
                });
            }
            frames
        })
    }
}

/// Cuts what every backtrace has and says nothing about the thread: at the
/// top, how it was traced and parked (up to the fibra call that parked it, or
/// the caller of `dump`); at the bottom, how a green thread starts.
fn trim(frames: &mut Vec<Frame>) {
    let is = |frame: &Frame, prefixes: &[&str]| {
        let name = frame.function.trim_start_matches('<');
        prefixes.iter().any(|p| name.starts_with(p))
    };
    let library = ["core::", "alloc::", "std::", "__rust"];
    let machinery = [
        "backtrace::",
        "fibra::runtime::stack_trace::",
        "fibra::runtime::scheduler::",
        "fibra::runtime::observe::dump::",
    ];
    let top = frames
        .iter()
        .position(|f| !is(f, &library) && !is(f, &machinery))
        .unwrap_or(frames.len());
    if let Some(last) = frames[..top].iter().rposition(|f| is(f, &machinery)) {
        frames.drain(..=last);
    }
    let start = [
        "fibra::runtime::join::spawn_with",
        "fibra::ractor::<impl fibra::ractor::pool::Pool>::spawn",
        "fibra::fiber::context::entry",
    ];
    if let Some(mut end) = frames.iter().position(|f| is(f, &start)) {
        while end > 0 && is(&frames[end - 1], &library) {
            end -= 1;
        }
        frames.truncate(end);
    }
}
