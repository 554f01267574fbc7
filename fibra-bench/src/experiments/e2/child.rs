//! The E2 programs that run inside fibra-bench, as `fibra-bench --child e2
//! [RUNTIME] <N>` (fibra when RUNTIME is left out), so that `strace` sees one
//! runtime's switches and nothing else of the bench: fibra's, corosensei's, and
//! the bare-assembly floors' of E1.

use super::{corosensei, fibra};
use crate::peers::protocol::count;

/// The runtimes whose E2 program this is, each called by its runtime's name in
/// the E2 table.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Switcher {
    Fibra,
    Corosensei,
    #[cfg(target_arch = "x86_64")]
    Floor(crate::floor::Floor),
}

impl Switcher {
    pub fn all() -> Vec<Switcher> {
        #[cfg_attr(not(target_arch = "x86_64"), allow(unused_mut))]
        let mut all = vec![Switcher::Fibra, Switcher::Corosensei];
        #[cfg(target_arch = "x86_64")]
        all.extend([
            Switcher::Floor(crate::floor::Floor::Gpr),
            Switcher::Floor(crate::floor::Floor::GprControl),
        ]);
        all
    }

    /// Its `RUNTIME` argument, and its name in the table.
    pub fn name(self) -> &'static str {
        #[cfg(target_arch = "x86_64")]
        use crate::floor::Floor;
        match self {
            Switcher::Fibra => "fibra",
            Switcher::Corosensei => "corosensei",
            #[cfg(target_arch = "x86_64")]
            Switcher::Floor(Floor::Gpr) => "floor-gpr",
            #[cfg(target_arch = "x86_64")]
            Switcher::Floor(Floor::GprControl) => "floor-gpr+cw",
        }
    }

    /// Runs the program at size `n`; returns the switches it made.
    fn push_pop(self, n: u64) -> u64 {
        match self {
            Switcher::Fibra => fibra::push_pop(n),
            Switcher::Corosensei => corosensei::push_pop(n),
            // The floor's contexts only pass control: they push and pop nothing.
            // The others' array never grows past one element, so their push and
            // pop make no system call either, and the counts compare the
            // switches alone. 2·N switches: a hand-over after each of each
            // context's N push/pops, main's switch in and the last one out
            // among them.
            #[cfg(target_arch = "x86_64")]
            Switcher::Floor(floor) => {
                floor.transfer(2 * n);
                2 * n
            }
        }
    }
}

/// Parses `[RUNTIME] <N>`, runs the program, and prints `switches=<int>`.
pub fn main(args: &[String]) -> Result<(), String> {
    let (switcher, n) = parse_args(args)?;
    println!("switches={}", switcher.push_pop(n));
    Ok(())
}

/// The runtime (fibra when left out) and N (≥ 1) of `[RUNTIME] <N>`.
fn parse_args(args: &[String]) -> Result<(Switcher, u64), String> {
    let usage = || {
        let names: Vec<&str> = Switcher::all().iter().map(|s| s.name()).collect();
        format!(
            "usage: fibra-bench --child e2 [{}] <N>   (N >= 1; fibra when left out)",
            names.join("|")
        )
    };
    let (name, n) = match args {
        [n] => ("fibra", n),
        [name, n] => (name.as_str(), n),
        _ => return Err(usage()),
    };
    let switcher = Switcher::all()
        .into_iter()
        .find(|s| s.name() == name)
        .ok_or_else(usage)?;
    match count(n) {
        Some(n) if n >= 1 => Ok((switcher, n)),
        _ => Err(usage()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(line: &str) -> Vec<String> {
        line.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn parses_the_runtime_and_n() {
        assert_eq!(parse_args(&args("1000")), Ok((Switcher::Fibra, 1000)));
        assert_eq!(parse_args(&args("fibra 7")), Ok((Switcher::Fibra, 7)));
        assert_eq!(
            parse_args(&args("corosensei 10")),
            Ok((Switcher::Corosensei, 10))
        );
        for bad in [
            "",
            "0",
            "-1",
            "1e3",
            "tokio 10",
            "corosensei",
            "10 corosensei",
            "fibra 1 2",
        ] {
            let err = parse_args(&args(bad)).unwrap_err();
            assert!(err.starts_with("usage: "), "{bad:?}: {err}");
        }
    }

    #[test]
    fn every_runtime_is_found_by_its_name() {
        for s in Switcher::all() {
            assert_eq!(parse_args(&args(&format!("{} 3", s.name()))), Ok((s, 3)));
            assert!(s.push_pop(3) >= 6, "{}", s.name());
        }
    }
}
