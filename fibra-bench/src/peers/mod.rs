//! Finding, building and running the peer runtimes that fibra is measured
//! against. A peer missing from the machine is never an error: it is named in
//! the report, with the package that provides it.

mod build;
pub mod java;
mod launcher;
pub mod process;
pub mod protocol;
pub mod server;
pub mod versions;

pub use build::Compiler;
pub use launcher::{Launcher, Prepared};

use std::fmt;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// A peer that is not on this machine, and how to get it.
#[derive(Clone, Debug, PartialEq)]
pub struct Missing {
    pub name: String,
    /// E.g. `apt-get install luajit`.
    pub hint: String,
}

impl fmt::Display for Missing {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.name, self.hint)
    }
}

/// Why a peer cannot be run.
#[derive(Clone, Debug, PartialEq)]
pub enum Unavailable {
    /// Not installed; the text says how to get it.
    Missing(String),
    /// Installed but unusable (its build failed for a reason other than a missing
    /// header or library); the text says why, for the table cell.
    Broken(String),
}

/// `name` as found on `PATH`, or in `extra` directories that often hold a
/// toolchain without being on `PATH` (e.g. `/usr/local/go/bin`).
pub fn find_program(name: &str, extra: &[&str]) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain(extra.iter().map(PathBuf::from))
        .map(|dir| dir.join(name))
        .find(|candidate| is_executable(candidate))
}

fn is_executable(path: &Path) -> bool {
    path.metadata()
        .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_programs_on_path() {
        assert!(find_program("sh", &[]).is_some());
        assert!(find_program("no-such-program-fibra", &[]).is_none());
        assert!(find_program("sh", &["/bin"]).is_some());
    }

    #[test]
    fn missing_names_the_package() {
        let m = Missing {
            name: "luajit".into(),
            hint: "apt-get install luajit".into(),
        };
        assert_eq!(m.to_string(), "luajit (apt-get install luajit)");
    }
}
