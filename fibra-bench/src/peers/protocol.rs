//! The one line an external peer prints on success: `key=<int>` fields separated
//! by spaces, e.g. `switches=4000000 ns=91234567` (see `peers/README.md`); and
//! the counts a peer takes as arguments.

use std::fmt;

/// The output did not follow the protocol; holds what was printed, shortened.
#[derive(Debug, PartialEq)]
pub struct Unparseable(pub String);

impl fmt::Display for Unparseable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "unparseable output: {:?}", self.0)
    }
}

/// Parses `stdout`, which must be exactly one line holding exactly the fields
/// `keys`, in that order, each a non-negative integer; returns their values.
pub fn parse_line(stdout: &str, keys: &[&str]) -> Result<Vec<u64>, Unparseable> {
    let unparseable = || Unparseable(shorten(stdout.trim(), 60));
    let mut lines = stdout.lines().filter(|l| !l.trim().is_empty());
    let (Some(line), None) = (lines.next(), lines.next()) else {
        return Err(unparseable());
    };
    let fields: Vec<&str> = line.split_whitespace().collect();
    if fields.len() != keys.len() {
        return Err(unparseable());
    }
    fields
        .iter()
        .zip(keys)
        .map(|(field, key)| {
            let value = field.strip_prefix(key)?.strip_prefix('=')?;
            value.parse().ok()
        })
        .collect::<Option<Vec<u64>>>()
        .ok_or_else(unparseable)
}

/// A count given to a peer (or a child program) as an argument, which must be
/// a plain decimal integer: no sign, no exponent, no space.
pub fn count(arg: &str) -> Option<u64> {
    if arg.is_empty() || !arg.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    arg.parse().ok()
}

/// `text` cut to at most `max` characters, with `…` when cut.
pub fn shorten(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        text.to_string()
    } else {
        text.chars().take(max - 1).chain(['…']).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const E1: &[&str] = &["switches", "ns"];

    #[test]
    fn parses_the_e1_line() {
        assert_eq!(
            parse_line("switches=4000000 ns=91234567\n", E1),
            Ok(vec![4_000_000, 91_234_567])
        );
    }

    #[test]
    fn parses_the_e2_line() {
        assert_eq!(
            parse_line("switches=200002", &["switches"]),
            Ok(vec![200_002])
        );
    }

    #[test]
    fn rejects_anything_else() {
        for bad in [
            "",
            "switches=1",
            "switches=1 ns=2 extra=3",
            "ns=2 switches=1",
            "switches=1.5 ns=2",
            "switches=-1 ns=2",
            "switches=1e6 ns=2",
            "switches= ns=2",
            "switches=1 ns=2\nswitches=1 ns=2",
            "hello",
        ] {
            assert!(parse_line(bad, E1).is_err(), "{bad:?} was accepted");
        }
    }

    #[test]
    fn counts_are_plain_decimal_integers() {
        assert_eq!(count("100000"), Some(100_000));
        assert_eq!(count("0"), Some(0));
        for bad in ["", "+1", "-1", "1e6", " 1", "1.0", "99999999999999999999"] {
            assert_eq!(count(bad), None, "{bad:?} was accepted");
        }
    }

    #[test]
    fn reports_what_was_printed() {
        let err = parse_line("Segmentation fault\n", E1).unwrap_err();
        assert_eq!(
            err.to_string(),
            r#"unparseable output: "Segmentation fault""#
        );
        assert_eq!(shorten("abcdef", 4), "abc…");
    }
}
