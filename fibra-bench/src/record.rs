//! The machine-readable form of every figure: one flat record per number, so that
//! later tools (CSV, charts, the HTML report) need no knowledge of table layouts.

use crate::measure::{Outcome, measured};
use serde::Serialize;
use std::io::{self, Write};
use std::path::Path;

/// One measured number, e.g. `{"experiment":"e1","variant":"resume",
/// "runtime":"fibra","metric":"switches_per_s","value":6.1e8,"unit":"1/s"}`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Record {
    pub experiment: &'static str,
    pub variant: String,
    pub runtime: String,
    pub metric: &'static str,
    pub value: f64,
    pub unit: &'static str,
}

/// One figure of a runtime: its metric, value and unit.
pub type Metric = (&'static str, f64, &'static str);

/// The records of every measured runtime of `results` in `experiment` and
/// `variant`: one per metric that `metrics` makes of its figure.
pub fn of_measured<T>(
    experiment: &'static str,
    variant: &str,
    results: &[(&str, Outcome<T>)],
    metrics: impl Fn(&T) -> Vec<Metric>,
) -> Vec<Record> {
    measured(results)
        .flat_map(|(runtime, t)| {
            metrics(t)
                .into_iter()
                .map(move |(metric, value, unit)| Record {
                    experiment,
                    variant: variant.into(),
                    runtime: runtime.into(),
                    metric,
                    value,
                    unit,
                })
        })
        .collect()
}

/// Writes `records` to `out` as one JSON array.
pub fn write_json(out: impl io::Write, records: &[Record]) -> io::Result<()> {
    let mut out = io::BufWriter::new(out);
    serde_json::to_writer_pretty(&mut out, records)?;
    writeln!(out)?;
    out.flush()
}

/// Writes `records` to the file at `path` as one JSON array.
pub fn write_json_file(path: &Path, records: &[Record]) -> io::Result<()> {
    write_json(std::fs::File::create(path)?, records)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_an_array_of_flat_records() {
        let records = [
            Record {
                experiment: "e1",
                variant: "resume".into(),
                runtime: "fibra".into(),
                metric: "switches_per_s",
                value: 6.1e8,
                unit: "1/s",
            },
            Record {
                experiment: "e2",
                variant: "n=1000".into(),
                runtime: "swapcontext".into(),
                metric: "rt_sigprocmask_calls",
                value: 2001.0,
                unit: "calls",
            },
        ];
        let mut out = Vec::new();
        write_json(&mut out, &records).unwrap();
        let parsed: serde_json::Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(
            parsed,
            serde_json::json!([
                {"experiment": "e1", "variant": "resume", "runtime": "fibra",
                 "metric": "switches_per_s", "value": 6.1e8, "unit": "1/s"},
                {"experiment": "e2", "variant": "n=1000", "runtime": "swapcontext",
                 "metric": "rt_sigprocmask_calls", "value": 2001.0, "unit": "calls"},
            ])
        );
    }

    #[test]
    fn records_each_metric_of_each_measured_runtime() {
        let results = [
            ("fibra", Outcome::Measured(2.0)),
            ("go", Outcome::Failed("crashed".into())),
        ];
        let records = of_measured("spawn", "x=2", &results, |x| {
            vec![("a", *x, "s"), ("b", x * 10.0, "1/s")]
        });
        let rows: Vec<(&str, String, &str, f64)> = records
            .iter()
            .map(|r| {
                (
                    r.experiment,
                    format!("{} {}", r.runtime, r.variant),
                    r.metric,
                    r.value,
                )
            })
            .collect();
        assert_eq!(
            rows,
            [
                ("spawn", "fibra x=2".into(), "a", 2.0),
                ("spawn", "fibra x=2".into(), "b", 20.0)
            ]
        );
    }

    #[test]
    fn an_empty_run_is_an_empty_array() {
        let mut out = Vec::new();
        write_json(&mut out, &[]).unwrap();
        assert_eq!(String::from_utf8(out).unwrap().trim(), "[]");
    }
}
