//! What a runtime's OS thread is doing, as another OS thread of the process
//! sees it, on Linux: the system call it is in, from
//! `/proc/self/task/TID/syscall`, and for a call on a file descriptor what
//! that descriptor is (`/proc/self/fd/N`: a socket, a pipe, a file's path).
//!
//! The watchdog reads these files only when it reports a stall (or a dump
//! finds a runtime busy): nothing on the runtime's own thread changes. It
//! does not sample the thread's instruction pointer to name the user's
//! frame: that takes a signal sent to the runtime's thread, which would
//! interrupt the very system call it reports (a call not restarted returns
//! `EINTR` to code that may not retry it), compete with the program's own
//! handler for that signal, and need a walk of the stack from a signal
//! handler; the system call, the file descriptor and the green thread's
//! name say where to look without changing what the program does.
//!
//! Under an emulator such as qemu-user the file gives the host's system call
//! numbers, which name other calls on the emulated CPU; fibra cannot tell,
//! so a name it prints there may be wrong (the project's aarch64 tests accept
//! only the number there).

use std::fs;

/// An OS thread of this process, as `/proc` names it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct OsThread {
    tid: libc::pid_t,
}

impl OsThread {
    /// The calling OS thread.
    pub(crate) fn current() -> OsThread {
        // SAFETY: `gettid` takes nothing, touches no memory and cannot fail.
        let tid = unsafe { libc::gettid() };
        OsThread { tid }
    }

    /// What the thread is doing now, with a hint at the call that does it:
    /// "blocked in futex (a std lock, condvar or channel?)", "running (not
    /// in a system call)". `None` if `/proc` cannot say (not mounted, or the
    /// thread has ended).
    pub(crate) fn doing(&self) -> Option<String> {
        let syscall = fs::read_to_string(format!("/proc/self/task/{}/syscall", self.tid)).ok()?;
        Some(describe(&syscall, |fd| {
            fs::read_link(format!("/proc/self/fd/{fd}"))
                .ok()
                .map(|target| target.to_string_lossy().into_owned())
        }))
    }
}

/// What kind of wait a system call is, for the hint.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Kind {
    /// A futex: what std's locks, condvars, channels and `thread::park` wait in.
    Futex,
    Sleep,
    /// A read, write or socket call on the file descriptor in its first
    /// argument.
    OnFd,
    Poll,
    /// Waiting for a child process.
    Child,
    Other,
}

/// The system calls a thread is commonly found blocked in, by number.
const CALLS: &[(libc::c_long, &str, Kind)] = &[
    (libc::SYS_futex, "futex", Kind::Futex),
    (libc::SYS_nanosleep, "nanosleep", Kind::Sleep),
    (libc::SYS_clock_nanosleep, "clock_nanosleep", Kind::Sleep),
    (libc::SYS_read, "read", Kind::OnFd),
    (libc::SYS_write, "write", Kind::OnFd),
    (libc::SYS_readv, "readv", Kind::OnFd),
    (libc::SYS_writev, "writev", Kind::OnFd),
    (libc::SYS_pread64, "pread64", Kind::OnFd),
    (libc::SYS_pwrite64, "pwrite64", Kind::OnFd),
    (libc::SYS_recvfrom, "recvfrom", Kind::OnFd),
    (libc::SYS_recvmsg, "recvmsg", Kind::OnFd),
    (libc::SYS_sendto, "sendto", Kind::OnFd),
    (libc::SYS_sendmsg, "sendmsg", Kind::OnFd),
    (libc::SYS_accept4, "accept4", Kind::OnFd),
    (libc::SYS_connect, "connect", Kind::OnFd),
    (libc::SYS_fsync, "fsync", Kind::OnFd),
    (libc::SYS_fdatasync, "fdatasync", Kind::OnFd),
    (libc::SYS_flock, "flock", Kind::OnFd),
    (libc::SYS_fcntl, "fcntl", Kind::OnFd),
    (libc::SYS_ioctl, "ioctl", Kind::OnFd),
    (libc::SYS_ppoll, "ppoll", Kind::Poll),
    (libc::SYS_pselect6, "pselect6", Kind::Poll),
    (libc::SYS_epoll_pwait, "epoll_pwait", Kind::Poll),
    (libc::SYS_wait4, "wait4", Kind::Child),
    (libc::SYS_waitid, "waitid", Kind::Child),
    (libc::SYS_openat, "openat", Kind::Other),
    (libc::SYS_getrandom, "getrandom", Kind::Other),
];

/// The calls that only some architectures have (aarch64 has only the `p`
/// variants above).
#[cfg(target_arch = "x86_64")]
const ARCH_CALLS: &[(libc::c_long, &str, Kind)] = &[
    (libc::SYS_poll, "poll", Kind::Poll),
    (libc::SYS_select, "select", Kind::Poll),
    (libc::SYS_epoll_wait, "epoll_wait", Kind::Poll),
    (libc::SYS_accept, "accept", Kind::OnFd),
    (libc::SYS_open, "open", Kind::Other),
];
#[cfg(not(target_arch = "x86_64"))]
const ARCH_CALLS: &[(libc::c_long, &str, Kind)] = &[];

/// Describes the contents of a `/proc/…/syscall` file: "running", "-1 SP
/// PC" (blocked, but not in a system call), or "NR ARG1 … ARG6 SP PC" (in
/// system call NR). `fd_target` tells what a file descriptor is.
fn describe(syscall: &str, fd_target: impl FnOnce(u64) -> Option<String>) -> String {
    let mut fields = syscall.split_whitespace();
    let number = match fields.next() {
        Some("running") | None => return "running (not in a system call)".to_owned(),
        Some(number) => number,
    };
    let Ok(number) = number.parse::<libc::c_long>() else {
        return "running (not in a system call)".to_owned();
    };
    if number < 0 {
        return "not in a system call".to_owned();
    }
    let Some(&(_, name, kind)) = CALLS
        .iter()
        .chain(ARCH_CALLS)
        .find(|(nr, _, _)| *nr == number)
    else {
        return format!("blocked in system call number {number}");
    };
    match kind {
        Kind::Futex => format!("blocked in {name} (a std lock, condvar or channel?)"),
        Kind::Sleep => format!("blocked in {name} (std::thread::sleep?)"),
        Kind::Poll => format!("blocked in {name} (another library's event loop?)"),
        Kind::Child => format!("blocked in {name} (Command::output, status or wait?)"),
        Kind::Other => format!("blocked in {name}"),
        Kind::OnFd => {
            let fd = fields
                .next()
                .and_then(|arg| u64::from_str_radix(arg.trim_start_matches("0x"), 16).ok());
            match fd {
                Some(fd) => {
                    let what = fd_target(fd).map_or_else(String::new, |t| format!(", {t}"));
                    format!("blocked in {name} on fd {fd}{what} (a blocking socket or file?)")
                }
                None => format!("blocked in {name} (a blocking socket or file?)"),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(nr: libc::c_long, arg: &str) -> String {
        format!("{nr} {arg} 0x0 0x0 0x0 0x0 0x0 0x7ffd0 0x7f000")
    }

    #[test]
    fn names_the_common_waits() {
        let no_fd = |_| None;
        assert_eq!(
            describe("running\n", no_fd),
            "running (not in a system call)"
        );
        assert_eq!(
            describe("-1 0x7ffd0 0x7f000\n", no_fd),
            "not in a system call"
        );
        assert!(describe(&line(libc::SYS_futex, "0x55d0"), no_fd).contains("futex (a std lock"));
        assert!(
            describe(&line(libc::SYS_clock_nanosleep, "0x0"), no_fd)
                .contains("clock_nanosleep (std::thread::sleep?)")
        );
        assert!(describe(&line(libc::SYS_wait4, "0x1f"), no_fd).contains("Command::output"));
        assert_eq!(
            describe(&line(libc::SYS_read, "0x7"), |fd| Some(format!(
                "pipe:[{fd}]"
            ))),
            "blocked in read on fd 7, pipe:[7] (a blocking socket or file?)"
        );
        assert_eq!(
            describe(&line(99_999, "0x0"), no_fd),
            "blocked in system call number 99999"
        );
    }

    /// Whether this runs under qemu-user (the project's aarch64 test runner
    /// says so in `FIBRA_TEST_RUNNER`), whose `/proc` gives the host's system
    /// call numbers: then a blocked thread can only be told by its number.
    fn emulated(doing: &str) -> bool {
        std::env::var_os("FIBRA_TEST_RUNNER").is_some_and(|r| !r.is_empty())
            && doing.starts_with("blocked in system call number")
    }

    /// What `/proc` says of an OS thread that `block` blocks, once it does
    /// (the first answer that contains `wanted`, or the last after 30 s).
    fn seen_blocked(block: impl FnOnce() + Send + 'static, wanted: &str) -> String {
        let (tid, told) = std::sync::mpsc::channel();
        let _blocked = std::thread::spawn(move || {
            tid.send(OsThread::current()).unwrap();
            block();
        });
        let thread = told.recv().unwrap();
        let until = std::time::Instant::now() + std::time::Duration::from_secs(30);
        loop {
            let doing = thread.doing().expect("/proc is mounted");
            if doing.contains(wanted) || emulated(&doing) || std::time::Instant::now() > until {
                return doing;
            }
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
    }

    #[test]
    #[cfg_attr(miri, ignore = "reads /proc")]
    fn reads_a_thread_blocked_on_a_std_channel() {
        let (keep, rx) = std::sync::mpsc::channel::<()>();
        let doing = seen_blocked(
            move || {
                let _ = rx.recv();
            },
            "futex",
        );
        if !emulated(&doing) {
            assert_eq!(doing, "blocked in futex (a std lock, condvar or channel?)");
        }
        drop(keep);
    }

    #[test]
    #[cfg_attr(miri, ignore = "reads /proc")]
    fn reads_a_thread_blocked_on_a_socket() {
        use std::io::Read;
        let (mut theirs, ours) = std::os::unix::net::UnixStream::pair().unwrap();
        let doing = seen_blocked(
            move || {
                let _ = theirs.read(&mut [0]);
            },
            "socket:[",
        );
        if !emulated(&doing) {
            assert!(doing.contains(", socket:["), "{doing}");
            assert!(doing.ends_with("(a blocking socket or file?)"), "{doing}");
        }
        drop(ours);
    }
}
