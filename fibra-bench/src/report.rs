//! Tables for the terminal, and the number formats they use.

use crate::measure::Outcome;
use std::fmt;

/// One printed table: a title, a header, rows, and notes printed under it (the
/// seed's published figures, a verdict…).
pub struct Table {
    pub title: String,
    pub columns: Vec<&'static str>,
    pub rows: Vec<Row>,
    pub notes: Vec<String>,
}

/// A table row. The first cell names the runtime (and is left-aligned); the
/// others are figures (right-aligned).
pub enum Row {
    Cells(Vec<String>),
    /// A runtime with no figures, and why ("n/a", "timed out after 60 s"…),
    /// written across the figure columns.
    Span(String, String),
}

impl fmt::Display for Table {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut widths: Vec<usize> = self.columns.iter().map(|c| c.chars().count()).collect();
        for row in &self.rows {
            match row {
                Row::Cells(cells) => {
                    for (w, cell) in widths.iter_mut().zip(cells) {
                        *w = (*w).max(cell.chars().count());
                    }
                }
                Row::Span(name, _) => widths[0] = widths[0].max(name.chars().count()),
            }
        }
        writeln!(f, "{}", self.title)?;
        let header: Vec<String> = self.columns.iter().map(|c| c.to_string()).collect();
        write_cells(f, &widths, &header)?;
        for row in &self.rows {
            match row {
                Row::Cells(cells) => write_cells(f, &widths, cells)?,
                Row::Span(name, text) => writeln!(f, "  {name:<w$}  {text}", w = widths[0])?,
            }
        }
        for note in &self.notes {
            writeln!(f, "  {note}")?;
        }
        Ok(())
    }
}

/// A row for each runtime of `results` that has no figure, saying why ("n/a",
/// "timed out after 60 s"…), to follow the measured ones.
pub fn unmeasured_rows<T>(results: &[(&str, Outcome<T>)]) -> Vec<Row> {
    results
        .iter()
        .filter_map(|(name, o)| match o {
            Outcome::Measured(_) => None,
            Outcome::NotApplicable => Some(Row::Span(name.to_string(), "n/a".into())),
            Outcome::Failed(why) => Some(Row::Span(name.to_string(), why.clone())),
        })
        .collect()
}

fn write_cells(f: &mut fmt::Formatter<'_>, widths: &[usize], cells: &[String]) -> fmt::Result {
    write!(f, " ")?;
    for (i, (cell, w)) in cells.iter().zip(widths).enumerate() {
        if i == 0 {
            write!(f, " {cell:<w$}")?;
        } else {
            write!(f, "  {cell:>w$}")?;
        }
    }
    writeln!(f)
}

/// Engineering-style notation with three significant digits: `6.10e8`.
pub fn eng(x: f64) -> String {
    format!("{x:.2e}")
}

/// A figure with three significant digits, in plain notation while that stays
/// short: `1.64`, `23.8`, `238`, else `2.38e4`.
pub fn short(x: f64) -> String {
    match x.abs() {
        0.0 => "0".into(),
        a if !(0.01..1000.0).contains(&a) => eng(x),
        a if a < 10.0 => format!("{x:.2}"),
        a if a < 100.0 => format!("{x:.1}"),
        _ => format!("{x:.0}"),
    }
}

/// A ratio such as `0.85×`.
pub fn times(x: f64) -> String {
    format!("{}×", short(x))
}

/// An integer with thousands separators: `20,054,180`.
pub fn grouped(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A fraction as a percentage with one decimal: `4.2 %`.
pub fn percent(x: f64) -> String {
    format!("{:.1} %", x * 100.0)
}

/// The cell of a runtime's spread over its runs: `4.2 %`, or `-` for a single
/// run.
pub fn spread(spread: Option<f64>) -> String {
    spread.map_or("-".into(), percent)
}

/// The note under a table with a spread column.
pub const SPREAD_NOTE: &str = "spread = (worst run − best run) ÷ best run, over the counted runs";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn number_formats() {
        assert_eq!(eng(6.1e8), "6.10e8");
        assert_eq!(eng(4_200_000.0), "4.20e6");
        assert_eq!(short(1.6394), "1.64");
        assert_eq!(short(23.84), "23.8");
        assert_eq!(short(238.4), "238");
        assert_eq!(short(23_840.0), "2.38e4");
        assert_eq!(short(0.0067), "6.70e-3");
        assert_eq!(times(0.85), "0.85×");
        assert_eq!(grouped(20_054_180), "20,054,180");
        assert_eq!(grouped(100), "100");
        assert_eq!(grouped(0), "0");
        assert_eq!(percent(0.0421), "4.2 %");
        assert_eq!(spread(Some(0.25)), "25.0 %");
        assert_eq!(spread(None), "-");
    }

    #[test]
    fn renders_aligned_columns() {
        let table = Table {
            title: "T".into(),
            columns: vec!["runtime", "rate"],
            rows: vec![
                Row::Cells(vec!["fibra".into(), "6.10e8".into()]),
                Row::Span("lua5.1".into(), "n/a".into()),
            ],
            notes: vec!["note".into()],
        };
        assert_eq!(
            table.to_string(),
            "T\n  runtime    rate\n  fibra    6.10e8\n  lua5.1   n/a\n  note\n"
        );
    }
}
