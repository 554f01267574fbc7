//! The versions of the peer runtimes and tools on this machine, for the report:
//! a figure of "ruby" means little without saying which Ruby.

use super::process;
use super::{find_program, java};
use std::path::PathBuf;
use std::process::Command;
use std::thread;
use std::time::Duration;

/// How long a program may take to say its version (JRuby starts a JVM).
const TIMEOUT: Duration = Duration::from_secs(20);

/// The programs asked, each with the arguments that make it print its version.
const PROGRAMS: &[(&str, &[&str])] = &[
    ("rustc", &["--version"]),
    ("ruby", &["--version"]),
    ("jruby", &["--version"]),
    ("lua5.1", &["-v"]),
    ("lua5.4", &["-v"]),
    ("luajit", &["-v"]),
    ("go", &["version"]),
    (
        "erl",
        &[
            "-noshell",
            "-eval",
            concat!(
                r#"io:format("Erlang/OTP ~s, erts ~s~n", "#,
                "[erlang:system_info(otp_release), erlang:system_info(version)]), halt().",
            ),
        ],
    ),
    ("cc", &["--version"]),
    ("c++", &["--version"]),
    ("strace", &["-V"]),
    ("ab", &["-V"]),
];

/// Each program of [`PROGRAMS`] found on this machine, and the JDK the Java peers
/// run on, with the first line it prints about its version (or why it printed
/// none), in that order. The programs are asked all at once.
pub fn versions() -> Vec<(String, String)> {
    let mut found: Vec<(String, PathBuf, &[&str])> = PROGRAMS
        .iter()
        .filter_map(|&(name, args)| {
            let program = find_program(name, &["/usr/local/go/bin"])?;
            Some((name.to_string(), program, args))
        })
        .collect();
    if let Ok(jdk) = java::find(21) {
        found.push(("java (peers' JDK)".into(), jdk, &["-version"]));
    }
    thread::scope(|scope| {
        let asked: Vec<_> = found
            .iter()
            .map(|(name, program, args)| {
                scope.spawn(move || (name.clone(), version(Command::new(program).args(*args))))
            })
            .collect();
        asked.into_iter().filter_map(|a| a.join().ok()).collect()
    })
}

/// The first non-empty line `cmd` prints, on stdout or else stderr (`java
/// -version`, `lua5.1 -v`).
fn version(cmd: &mut Command) -> String {
    match process::run_capturing(cmd, TIMEOUT) {
        Ok((stdout, stderr)) => first_line(&stdout)
            .or_else(|| first_line(&stderr))
            .unwrap_or("(printed nothing)")
            .to_string(),
        Err(e) => e.to_string(),
    }
}

fn first_line(text: &str) -> Option<&str> {
    text.lines().map(str::trim).find(|l| !l.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_first_line_of_either_stream() {
        let sh = |script: &str| {
            let mut cmd = Command::new("sh");
            cmd.args(["-c", script]);
            version(&mut cmd)
        };
        assert_eq!(sh("echo; echo 'tool 1.2'; echo more"), "tool 1.2");
        assert_eq!(sh("echo 'Lua 5.1.5' >&2"), "Lua 5.1.5");
        assert_eq!(sh("true"), "(printed nothing)");
        assert_eq!(sh("exit 1"), "failed (exit 1)");
    }

    #[test]
    fn names_rustc() {
        let versions = versions();
        assert!(
            versions
                .iter()
                .any(|(name, v)| name == "rustc" && v.starts_with("rustc ")),
            "{versions:?}"
        );
    }
}
