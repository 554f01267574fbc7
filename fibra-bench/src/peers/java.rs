//! Finding a JDK recent enough for the Java peers: Debian 12's `java` is 17, and
//! virtual threads need 21, so a newer JDK often sits beside it in
//! `/usr/lib/jvm` or under `JAVA_HOME` without being the default.

use super::{Unavailable, find_program};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The JVM flags that give the virtual-thread scheduler one carrier thread: the
/// one OS thread that fibra's green threads, tokio's current-thread runtime and
/// Go with GOMAXPROCS=1 use.
pub const ONE_CARRIER: &[&str] = &[
    "-Djdk.virtualThreadScheduler.parallelism=1",
    "-Djdk.virtualThreadScheduler.maxPoolSize=1",
];

/// The first `java` of at least version `min`: from `JAVA_HOME`, then `PATH`,
/// then `/usr/lib/jvm/*`.
pub fn find(min: u32) -> Result<PathBuf, Unavailable> {
    let mut candidates: Vec<PathBuf> = Vec::new();
    if let Some(home) = std::env::var_os("JAVA_HOME") {
        candidates.push(Path::new(&home).join("bin/java"));
    }
    candidates.extend(find_program("java", &[]));
    if let Ok(dirs) = std::fs::read_dir("/usr/lib/jvm") {
        let mut jvms: Vec<PathBuf> = dirs.flatten().map(|d| d.path().join("bin/java")).collect();
        jvms.sort();
        candidates.extend(jvms);
    }
    let mut newest_seen = None;
    for java in candidates {
        if let Some(version) = major_version(&java) {
            if version >= min {
                return Ok(java);
            }
            newest_seen = newest_seen.max(Some(version));
        }
    }
    Err(Unavailable::Missing(match newest_seen {
        Some(v) => format!("needs a JDK ≥ {min}, found {v}; set JAVA_HOME"),
        None => format!("needs a JDK ≥ {min}; set JAVA_HOME"),
    }))
}

/// The major version `java -version` reports, e.g. 17 for `"17.0.15"`.
fn major_version(java: &Path) -> Option<u32> {
    let out = Command::new(java).arg("-version").output().ok()?;
    parse_version(&String::from_utf8_lossy(&out.stderr))
}

/// Parses the first line of `java -version`: `openjdk version "25.0.1" 2025-10-21`
/// (or `"1.8.0_392"` for Java 8, major version 1 here, which is old enough
/// to be rejected either way).
fn parse_version(text: &str) -> Option<u32> {
    let quoted = text.lines().next()?.split('"').nth(1)?;
    quoted.split(['.', '-', '+', '_']).next()?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_java_version_lines() {
        assert_eq!(
            parse_version("openjdk version \"17.0.15\" 2025-04-15\nOpenJDK Runtime"),
            Some(17)
        );
        assert_eq!(parse_version("openjdk version \"25\" 2025-09-16"), Some(25));
        assert_eq!(parse_version("java version \"21-ea\""), Some(21));
        assert_eq!(parse_version("garbage"), None);
    }
}
