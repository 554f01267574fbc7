//! How a [`Dump`] prints: each runtime with its green threads, those in
//! the same state with the same backtrace as one group, then the Ractors
//! (see [`dump`](super::dump)'s docs, "Reading it", for what it looks like).

use super::{Dump, Frame, RactorDump, RactorState, RuntimeState, ThreadDump};
use crate::runtime::section::ThreadState;
use crate::runtime::wait::{SocketDirection, WaitReason};
use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;
use std::thread::ThreadId;
use std::time::{Duration, Instant};

impl fmt::Display for Dump {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let threads: usize = self
            .runtimes
            .iter()
            .map(|r| match &r.state {
                RuntimeState::Threads(threads) => threads.len(),
                RuntimeState::Busy { .. } => 0,
            })
            .sum();
        let plural = |n: usize, what: &str| format!("{n} {what}{}", if n == 1 { "" } else { "s" });
        writeln!(
            f,
            "fibra dump: {}, {}, {}",
            plural(self.runtimes.len(), "runtime"),
            plural(threads, "green thread"),
            plural(self.ractors.len(), "Ractor")
        )?;
        for runtime in &self.runtimes {
            let os_thread = match &runtime.os_thread_name {
                Some(name) => format!("OS thread '{name}'"),
                None => format!("OS thread {:?}", runtime.os_thread_id),
            };
            match &runtime.state {
                RuntimeState::Busy {
                    thread,
                    name,
                    for_at_least,
                    os_thread_doing,
                } => {
                    let who = match (thread, name) {
                        (Some(id), Some(name)) => format!("green thread '{name}' (#{id})"),
                        (Some(id), None) => format!("green thread #{id}"),
                        (None, _) => "its own loop".to_owned(),
                    };
                    let doing = os_thread_doing
                        .as_ref()
                        .map_or_else(String::new, |doing| format!("; the OS thread is {doing}"));
                    writeln!(
                        f,
                        "\nruntime on {os_thread}: busy running {who} for at least {} ms \
                         (it has not parked or yielded, so nothing else there can run){doing}",
                        for_at_least.as_millis()
                    )?;
                }
                RuntimeState::Threads(threads) => {
                    writeln!(
                        f,
                        "\nruntime on {os_thread}: {}",
                        plural(threads.len(), "green thread")
                    )?;
                    write_groups(f, threads, self.taken_at)?;
                }
            }
        }
        if !self.ractors.is_empty() {
            writeln!(f, "\n{}:\n", plural(self.ractors.len(), "Ractor"))?;
            write_ractors(f, &self.ractors, self.taken_at)?;
        }
        Ok(())
    }
}

/// Writes `ractors` a line each, or a line for each group of those on the
/// same worker doing the same (a long list of ids is cut short). A worker is
/// told by its OS thread: two pools' workers have the same index and name.
fn write_ractors(f: &mut fmt::Formatter<'_>, ractors: &[RactorDump], at: Instant) -> fmt::Result {
    let mut groups: Vec<Vec<&RactorDump>> = Vec::new();
    let mut index: HashMap<(usize, ThreadId, String), usize> = HashMap::new();
    for ractor in ractors {
        let doing = match &ractor.state {
            RactorState::Body(state) => kind(state),
            RactorState::Finished => "finished".to_owned(),
        };
        let key = (ractor.worker, ractor.os_thread_id, doing);
        let at = *index.entry(key).or_insert_with(|| {
            groups.push(Vec::new());
            groups.len() - 1
        });
        groups[at].push(ractor);
    }
    for members in groups {
        let first = members[0];
        let worker = match &first.os_thread_name {
            Some(name) => format!("worker {} ('{name}')", first.worker),
            None => format!("worker {}", first.worker),
        };
        let states: Vec<ThreadState> = members
            .iter()
            .filter_map(|r| match r.state {
                RactorState::Body(state) => Some(state),
                RactorState::Finished => None,
            })
            .collect();
        let doing = match first.state {
            RactorState::Finished => "finished, not joined yet".to_owned(),
            RactorState::Body(_) => describe_group(&states, at),
        };
        let depths = members.iter().map(|r| r.mailbox);
        let (least, most) = (depths.clone().min(), depths.clone().max());
        let messages = |n: usize| match n {
            0 => "empty".to_owned(),
            1 => "1 message".to_owned(),
            n => format!("{n} messages"),
        };
        match members.as_slice() {
            [one] => {
                let thread = one
                    .thread
                    .map_or_else(String::new, |id| format!(", green thread #{id}"));
                writeln!(
                    f,
                    "  Ractor #{} on {worker}{thread}: {doing}; mailbox {}",
                    one.id,
                    messages(one.mailbox)
                )?;
            }
            many => {
                const SHOWN: usize = 8;
                let ids: Vec<String> = many
                    .iter()
                    .take(SHOWN)
                    .map(|r| format!("#{}", r.id))
                    .collect();
                let more = match many.len().saturating_sub(SHOWN) {
                    0 => String::new(),
                    n => format!(" and {n} more"),
                };
                let mailboxes = match (least, most) {
                    (Some(least), Some(most)) if least != most => format!(
                        "mailboxes {least} to {most} messages, {} in all",
                        depths.sum::<usize>()
                    ),
                    _ if first.mailbox == 0 => "mailboxes empty".to_owned(),
                    _ => format!("mailboxes {} each", messages(first.mailbox)),
                };
                writeln!(
                    f,
                    "  {} Ractors ({}{more}) on {worker}: {doing}; {mailboxes}",
                    many.len(),
                    ids.join(", "),
                )?;
            }
        }
    }
    Ok(())
}

/// Writes `threads`, those with the same state and backtrace once, together.
fn write_groups(f: &mut fmt::Formatter<'_>, threads: &[ThreadDump], at: Instant) -> fmt::Result {
    // The threads of a group, in the order their first member came.
    let mut groups: Vec<Vec<&ThreadDump>> = Vec::new();
    let mut index: HashMap<(String, *const [Frame]), usize> = HashMap::new();
    for thread in threads {
        let key = (kind(&thread.state), Arc::as_ptr(&thread.backtrace));
        let at = *index.entry(key).or_insert_with(|| {
            groups.push(Vec::new());
            groups.len() - 1
        });
        groups[at].push(thread);
    }
    for members in groups {
        let frames = &members[0].backtrace;
        writeln!(f)?;
        match members.as_slice() {
            [one] => writeln!(f, "  {}: {}", who(one), describe(&one.state, at))?,
            many => {
                const SHOWN: usize = 8;
                let ids: Vec<String> = many
                    .iter()
                    .take(SHOWN)
                    .map(|t| match &t.name {
                        Some(name) => format!("'{name}' #{}", t.id),
                        None => format!("#{}", t.id),
                    })
                    .collect();
                let more = match many.len().saturating_sub(SHOWN) {
                    0 => String::new(),
                    n => format!(" and {n} more"),
                };
                writeln!(
                    f,
                    "  {} green threads ({}{more}): {}",
                    many.len(),
                    ids.join(", "),
                    describe_group(&many.iter().map(|t| t.state).collect::<Vec<_>>(), at)
                )?;
            }
        }
        if frames.is_empty() && members[0].state != ThreadState::NotStarted {
            writeln!(
                f,
                "    (no backtrace: too little room was left on its stack to walk it)"
            )?;
        }
        for (n, frame) in frames.iter().enumerate() {
            writeln!(f, "    {n}: {}", frame.function)?;
            if let (Some(file), Some(line)) = (&frame.file, frame.line) {
                writeln!(f, "           at {}:{line}", file.display())?;
            }
        }
    }
    Ok(())
}

/// "green thread 'name' (#id)" or "green thread #id".
fn who(thread: &ThreadDump) -> String {
    match &thread.name {
        Some(name) => format!("green thread '{name}' (#{})", thread.id),
        None => format!("green thread #{}", thread.id),
    }
}

/// The state without what differs between threads waiting alike (how long,
/// which deadline, which socket): threads group by it.
fn kind(state: &ThreadState) -> String {
    match state {
        ThreadState::Parked { reason, .. } => {
            let text = reason.to_string();
            // "sleep (due in 3s)" and "socket fd 7 to become readable" group
            // as "sleep" and "socket … readable".
            match reason {
                WaitReason::Socket { direction, .. } => format!("socket {direction:?}"),
                WaitReason::Sleep { .. } | WaitReason::Join { .. } => {
                    text.split(' ').next().unwrap_or_default().to_owned()
                }
                _ => text,
            }
        }
        other => describe(other, Instant::now()),
    }
}

fn describe(state: &ThreadState, at: Instant) -> String {
    match state {
        ThreadState::Running => "running".to_owned(),
        ThreadState::Ready => "ready to run".to_owned(),
        ThreadState::NotStarted => "not started yet".to_owned(),
        ThreadState::Parked { reason, waited } => {
            format!(
                "parked on {}, for {}",
                reason.describe_at(at),
                millis(*waited)
            )
        }
    }
}

/// The state of threads that wait alike: what they wait for, and the least
/// and most they have waited.
fn describe_group(states: &[ThreadState], at: Instant) -> String {
    let waits = states.iter().filter_map(|state| match state {
        ThreadState::Parked { waited, .. } => Some(*waited),
        _ => None,
    });
    let (Some(least), Some(most)) = (waits.clone().min(), waits.max()) else {
        return describe(&states[0], at);
    };
    let ThreadState::Parked { reason, .. } = states[0] else {
        unreachable!("the waits came from parked threads")
    };
    let on = match reason {
        WaitReason::Socket {
            direction: SocketDirection::Read,
            ..
        } => "sockets to become readable".to_owned(),
        WaitReason::Socket {
            direction: SocketDirection::Write,
            ..
        } => "sockets to become writable".to_owned(),
        other => kind(&ThreadState::Parked {
            reason: other,
            waited: Duration::ZERO,
        }),
    };
    if millis(least) == millis(most) {
        format!("parked on {on}, for {}", millis(least))
    } else {
        format!("parked on {on}, for {} to {}", millis(least), millis(most))
    }
}

fn millis(d: Duration) -> String {
    format!("{} ms", d.as_millis())
}
