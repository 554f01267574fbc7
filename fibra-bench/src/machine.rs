//! What the figures were measured on: they mean little without the CPU, the
//! cores, the kernel and the day.

use std::time::{SystemTime, UNIX_EPOCH};

pub struct Machine {
    /// The CPU's model name, from /proc/cpuinfo.
    pub cpu: String,
    /// The CPU architecture this program was built for (`x86_64`, `aarch64`),
    /// with a note when /proc/cpuinfo describes another one: the program then
    /// runs under an emulator (qemu-user), and its times measure the emulator.
    pub arch: String,
    /// The CPUs this process may run on.
    pub cpus: usize,
    /// The kernel release, as `uname -r` prints it.
    pub kernel: String,
    /// Total memory, e.g. `23.4 GiB`.
    pub memory: String,
    /// When the run started, in UTC: `2026-11-22 21:40 UTC`.
    pub date: String,
}

impl Machine {
    /// This machine, now.
    pub fn this() -> Machine {
        let read = |path| std::fs::read_to_string(path).unwrap_or_default();
        let cpuinfo = read("/proc/cpuinfo");
        let cpu = field(&cpuinfo, "model name").unwrap_or("unknown CPU");
        let memory = field(&read("/proc/meminfo"), "MemTotal")
            .and_then(|kb| kb.strip_suffix("kB")?.trim().parse::<f64>().ok())
            .map_or("unknown".into(), |kb| {
                format!("{:.1} GiB", kb / f64::from(1 << 20))
            });
        let secs = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        Machine {
            cpu: cpu.to_string(),
            arch: arch(&cpuinfo),
            cpus: std::thread::available_parallelism().map_or(0, |n| n.get()),
            kernel: read("/proc/sys/kernel/osrelease").trim().to_string(),
            memory,
            date: utc(secs),
        }
    }

    /// One line saying what the figures were measured on, for pasting with them.
    pub fn line(&self) -> String {
        format!(
            "fibra-bench {} on {}, {}, {} CPUs, Linux {}, {} memory, {}",
            env!("CARGO_PKG_VERSION"),
            self.arch,
            self.cpu,
            self.cpus,
            self.kernel,
            self.memory,
            self.date
        )
    }
}

/// This program's CPU architecture, and whether /proc/cpuinfo (which qemu-user
/// passes through from the host) says the CPU is of another kind: x86 kernels
/// list `flags`, arm64 kernels `Features`.
fn arch(cpuinfo: &str) -> String {
    let arch = std::env::consts::ARCH;
    let host = if field(cpuinfo, "flags").is_some() {
        Some("x86_64")
    } else if field(cpuinfo, "Features").is_some() {
        Some("aarch64")
    } else {
        None
    };
    match host {
        Some(host) if host != arch && !(host == "x86_64" && arch == "x86") => {
            format!("{arch} (emulated on {host}: times measure the emulator)")
        }
        _ => arch.to_string(),
    }
}

/// The value of the first `key: value` line of a /proc file.
fn field<'a>(text: &'a str, key: &str) -> Option<&'a str> {
    text.lines().find_map(|l| {
        let (k, v) = l.split_once(':')?;
        (k.trim() == key).then(|| v.trim())
    })
}

/// `secs` since the Unix epoch as a UTC date and time to the minute.
fn utc(secs: u64) -> String {
    let (days, minute_of_day) = (secs / 86_400, secs % 86_400 / 60);
    let (year, month, day) = civil(days);
    format!(
        "{year:04}-{month:02}-{day:02} {:02}:{:02} UTC",
        minute_of_day / 60,
        minute_of_day % 60
    )
}

/// The proleptic Gregorian date `days` after 1970-01-01: years are counted from
/// March, so that the leap day ends a year, in 400-year eras of 146,097 days.
fn civil(days: u64) -> (u64, u64, u64) {
    let z = days + 719_468; // days since 0000-03-01
    let era = z / 146_097;
    let day_of_era = z % 146_097;
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let month_from_march = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * month_from_march + 2) / 5 + 1;
    let month = if month_from_march < 10 {
        month_from_march + 3
    } else {
        month_from_march - 9
    };
    let year = era * 400 + year_of_era + u64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates() {
        assert_eq!(utc(0), "1970-01-01 00:00 UTC");
        assert_eq!(utc(951_782_400), "2000-02-29 00:00 UTC");
        assert_eq!(utc(1_795_376_459), "2026-11-22 19:40 UTC");
        assert_eq!(utc(4_107_542_399), "2100-02-28 23:59 UTC");
    }

    #[test]
    fn reads_proc_fields() {
        let meminfo = "MemTotal:       24570020 kB\nMemFree:  1 kB\n";
        assert_eq!(field(meminfo, "MemTotal"), Some("24570020 kB"));
        assert_eq!(
            field("model name\t: AMD EPYC\n", "model name"),
            Some("AMD EPYC")
        );
        assert_eq!(field(meminfo, "Swap"), None);
        assert_eq!(arch(""), std::env::consts::ARCH);
        assert!(arch("flags\t: fpu\nFeatures\t: fp\n").starts_with(std::env::consts::ARCH));
        let this = Machine::this();
        assert!(this.cpus > 0 && !this.kernel.is_empty(), "{}", this.line());
    }
}
