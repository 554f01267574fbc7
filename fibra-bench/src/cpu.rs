//! CPU time (user + system) spent by a process, and what it comes to per
//! operation: the cost of a request or a round trip, which holds steady on a
//! busy 2-core machine where the rate of the same run swings by a fifth.
//!
//! A server that runs in a process of its own is read from outside, from
//! `/proc/PID/stat` (the `utime` and `stime` of every thread, in clock ticks)
//! before and after the timed window; a program that knows its own window reads
//! itself with `getrusage(RUSAGE_SELF)` (microseconds).

use std::io;
use std::time::Duration;

/// The CPU time the process `pid` has used so far, every thread of it
/// together (the ones that have ended too), from `/proc/PID/stat`: good to a
/// clock tick (10 ms on Linux).
///
/// # Errors
///
/// The file could not be read (no such process, no `/proc`) or parsed.
pub fn of_process(pid: u32) -> io::Result<Duration> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat"))?;
    let ticks = stat_ticks(&stat).ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!("/proc/{pid}/stat has no utime and stime"),
        )
    })?;
    Ok(ticks_to_time(ticks, clock_ticks_per_sec()))
}

/// The CPU time this process has used so far, every thread of it together,
/// from `getrusage(RUSAGE_SELF)`: good to a microsecond.
pub fn of_this_process() -> Duration {
    // SAFETY: an all-zero `rusage` is a valid value of the plain C struct,
    // which getrusage(2) overwrites.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `usage` is a valid, writable `rusage` for the call's duration.
    // RUSAGE_SELF with a valid pointer cannot fail.
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) };
    timeval(usage.ru_utime) + timeval(usage.ru_stime)
}

/// Microseconds of CPU time per operation: `spent` over `count` operations;
/// `None` for no operation.
pub fn us_each(spent: Duration, count: u64) -> Option<f64> {
    (count > 0).then(|| spent.as_secs_f64() * 1e6 / count as f64)
}

/// `utime + stime` in clock ticks from the text of `/proc/PID/stat`: `pid
/// (comm) state ppid …`, where `comm` may hold spaces and parentheses, and
/// `utime` and `stime` are the 14th and 15th fields.
fn stat_ticks(stat: &str) -> Option<u64> {
    let after_comm = &stat[stat.rfind(')')? + 1..];
    // The fields after `comm` begin with the 3rd, `state`.
    let mut fields = after_comm.split_whitespace().skip(14 - 3);
    let utime: u64 = fields.next()?.parse().ok()?;
    let stime: u64 = fields.next()?.parse().ok()?;
    Some(utime + stime)
}

/// Clock ticks per second (`USER_HZ`), in which `/proc` counts CPU time.
fn clock_ticks_per_sec() -> u64 {
    // SAFETY: sysconf(3) takes a plain integer and touches no memory of ours.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    // Linux's USER_HZ, should sysconf ever fail.
    u64::try_from(hz).ok().filter(|&hz| hz > 0).unwrap_or(100)
}

fn ticks_to_time(ticks: u64, per_sec: u64) -> Duration {
    Duration::from_secs(ticks / per_sec)
        + Duration::from_nanos((ticks % per_sec) * 1_000_000_000 / per_sec)
}

fn timeval(tv: libc::timeval) -> Duration {
    Duration::from_secs(tv.tv_sec.try_into().unwrap_or(0))
        + Duration::from_micros(tv.tv_usec.try_into().unwrap_or(0))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A real line of `/proc/PID/stat` (a Go server), and the same with a
    /// `comm` that holds spaces and parentheses.
    const STAT: &str = "4242 (echo) S 4200 4242 4200 0 -1 4194560 1234 0 0 0 \
                        731 269 0 0 20 0 5 0 123456 1234567 890 18446744073709551615";

    #[test]
    fn reads_utime_and_stime_from_a_stat_line() {
        assert_eq!(stat_ticks(STAT), Some(731 + 269));
        let odd = STAT.replace("(echo)", "(a (b) c)");
        assert_eq!(stat_ticks(&odd), Some(1000));
        assert_eq!(stat_ticks("4242 (echo) S 4200"), None);
        assert_eq!(stat_ticks("no parenthesis at all"), None);
        let garbled = STAT.replace(" 731 ", " x ");
        assert_eq!(stat_ticks(&garbled), None);
    }

    #[test]
    fn converts_ticks_and_divides_per_operation() {
        assert_eq!(ticks_to_time(1000, 100), Duration::from_secs(10));
        assert_eq!(ticks_to_time(3, 100), Duration::from_millis(30));
        assert_eq!(ticks_to_time(250, 1000), Duration::from_millis(250));
        // 2.5 s of CPU over 125,000 requests: 20 µs each.
        let each = us_each(Duration::from_millis(2_500), 125_000).unwrap();
        assert!((each - 20.0).abs() < 1e-9, "{each}");
        assert_eq!(us_each(Duration::from_secs(1), 0), None);
    }

    #[test]
    fn reads_this_process_from_proc_and_from_getrusage() {
        // Burn a little CPU, so that both readings are past zero.
        let start = std::time::Instant::now();
        let mut x = 0u64;
        while start.elapsed() < Duration::from_millis(50) {
            x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(7));
        }
        let own = of_this_process();
        let proc = of_process(std::process::id()).unwrap();
        assert!(own > Duration::ZERO && proc > Duration::ZERO);
        // The same clock read two ways: /proc's is rounded down to a tick and
        // read later; both are at most what getrusage reads after them.
        assert!(proc <= of_this_process() + Duration::from_millis(20));
        assert!(of_process(u32::MAX).is_err());
    }
}
