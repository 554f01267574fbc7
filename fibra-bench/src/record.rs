//! The machine-readable form of every figure: one flat record per number, so that
//! later tools (JSON, CSV, charts, the HTML report) need no knowledge of table
//! layouts.

use crate::measure::{Best, Outcome, Runs, measured, relative_gap};
use serde::Serialize;
use std::io::{self, Write};
use std::path::Path;

/// One measured number, e.g. `{"experiment":"e1","variant":"resume",
/// "runtime":"fibra","metric":"switches_per_s","value":6.1e8,"unit":"1/s",
/// "best_of":3,"spread":0.021}`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Record {
    pub experiment: &'static str,
    pub variant: String,
    pub runtime: String,
    pub metric: &'static str,
    pub value: f64,
    pub unit: &'static str,
    /// `value` is the best of this many runs (1: a single run).
    pub best_of: usize,
    /// How far the worst of those runs was from the best: |worst − best| ÷
    /// best; `None` (`null`, an empty CSV cell) for a single run.
    pub spread: Option<f64>,
}

/// One figure of a runtime: its metric, value and unit.
pub type Metric = (&'static str, f64, &'static str);

/// The records of every measured runtime of `results` in `experiment` and
/// `variant`: one per metric that `metrics` makes of its best figure, with the
/// spread of that metric over the runs.
pub fn of_measured<T: Best>(
    experiment: &'static str,
    variant: &str,
    results: &[(&str, Outcome<Runs<T>>)],
    metrics: impl Fn(&T) -> Vec<Metric>,
) -> Vec<Record> {
    measured(results)
        .flat_map(|(runtime, runs)| {
            let worst = metrics(&runs.worst);
            metrics(&runs.best).into_iter().zip(worst).map(
                move |((metric, value, unit), (_, worst, _))| Record {
                    experiment,
                    variant: variant.into(),
                    runtime: runtime.into(),
                    metric,
                    value,
                    unit,
                    best_of: runs.count,
                    spread: (runs.count > 1).then(|| relative_gap(value, worst)),
                },
            )
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

/// Writes `records` to `out` as CSV: a header row naming the fields, then one
/// row per record, quoted where a field needs it (a variant such as
/// `sleeps_ms=300,200,500`).
pub fn write_csv(out: impl io::Write, records: &[Record]) -> io::Result<()> {
    // The header is written by hand, so that a run with no records still names
    // its columns.
    let mut writer = csv::WriterBuilder::new()
        .has_headers(false)
        .from_writer(out);
    writer.write_record(FIELDS).map_err(io::Error::other)?;
    for record in records {
        writer.serialize(record).map_err(io::Error::other)?;
    }
    writer.flush()
}

/// The fields of a record, in order: the CSV header.
const FIELDS: [&str; 8] = [
    "experiment",
    "variant",
    "runtime",
    "metric",
    "value",
    "unit",
    "best_of",
    "spread",
];

/// Writes `records` to the file at `path` with `write` (JSON or CSV).
pub fn write_file(
    path: &Path,
    records: &[Record],
    write: fn(std::fs::File, &[Record]) -> io::Result<()>,
) -> io::Result<()> {
    write(std::fs::File::create(path)?, records)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A figure of one number, smaller being better.
    impl Best for f64 {
        fn best(self, other: f64) -> f64 {
            self.min(other)
        }

        fn worst(self, other: f64) -> f64 {
            self.max(other)
        }
    }

    fn sample() -> [Record; 2] {
        [
            Record {
                experiment: "e1",
                variant: "resume".into(),
                runtime: "fibra".into(),
                metric: "switches_per_s",
                value: 6.1e8,
                unit: "1/s",
                best_of: 3,
                spread: Some(0.25),
            },
            Record {
                experiment: "e3",
                variant: "io sleeps_ms=300,200,500".into(),
                runtime: "a \"quoted\" name,\nover two lines".into(),
                metric: "threaded_time",
                value: 0.5,
                unit: "s",
                best_of: 1,
                spread: None,
            },
        ]
    }

    #[test]
    fn writes_an_array_of_flat_records() {
        let mut out = Vec::new();
        write_json(&mut out, &sample()).unwrap();
        let parsed: serde_json::Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(
            parsed,
            serde_json::json!([
                {"experiment": "e1", "variant": "resume", "runtime": "fibra",
                 "metric": "switches_per_s", "value": 6.1e8, "unit": "1/s",
                 "best_of": 3, "spread": 0.25},
                {"experiment": "e3", "variant": "io sleeps_ms=300,200,500",
                 "runtime": "a \"quoted\" name,\nover two lines",
                 "metric": "threaded_time", "value": 0.5, "unit": "s",
                 "best_of": 1, "spread": null},
            ])
        );
    }

    #[test]
    fn the_csv_header_names_the_fields_in_order() {
        let mut derived = csv::Writer::from_writer(Vec::new());
        derived.serialize(&sample()[0]).unwrap();
        let text = String::from_utf8(derived.into_inner().unwrap()).unwrap();
        assert_eq!(text.lines().next(), Some(FIELDS.join(",").as_str()));
    }

    #[test]
    fn writes_csv_quoted_where_needed() {
        let mut out = Vec::new();
        write_csv(&mut out, &sample()).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "experiment,variant,runtime,metric,value,unit,best_of,spread\n\
             e1,resume,fibra,switches_per_s,610000000.0,1/s,3,0.25\n\
             e3,\"io sleeps_ms=300,200,500\",\"a \"\"quoted\"\" name,\nover two lines\",\
             threaded_time,0.5,s,1,\n"
        );
    }

    #[test]
    fn csv_reads_back_field_for_field() {
        let records = sample();
        let mut out = Vec::new();
        write_csv(&mut out, &records).unwrap();
        let mut reader = csv::Reader::from_reader(&out[..]);
        assert_eq!(
            reader.headers().unwrap(),
            &csv::StringRecord::from(&FIELDS[..])
        );
        let rows: Vec<csv::StringRecord> = reader.records().map(Result::unwrap).collect();
        assert_eq!(rows.len(), records.len());
        for (row, record) in rows.iter().zip(&records) {
            assert_eq!(&row[0], record.experiment);
            assert_eq!(row[1], record.variant);
            assert_eq!(row[2], record.runtime);
            assert_eq!(&row[3], record.metric);
            assert_eq!(row[4].parse::<f64>().unwrap(), record.value);
            assert_eq!(&row[5], record.unit);
            assert_eq!(row[6].parse::<usize>().unwrap(), record.best_of);
            assert_eq!(
                (!row[7].is_empty()).then(|| row[7].parse::<f64>().unwrap()),
                record.spread
            );
        }
    }

    #[test]
    fn records_each_metric_of_each_measured_runtime() {
        let results = [
            ("fibra", Outcome::Measured(Runs::one(2.0).and(2.5))),
            ("go", Outcome::Failed("crashed".into())),
            ("lua", Outcome::Measured(Runs::one(4.0))),
        ];
        let records = of_measured("spawn", "x=2", &results, |x| {
            vec![("a", *x, "s"), ("b", 10.0 / x, "1/s")]
        });
        let rows: Vec<(String, &str, f64, usize, Option<f64>)> = records
            .iter()
            .map(|r| {
                (
                    format!("{} {} {}", r.experiment, r.runtime, r.variant),
                    r.metric,
                    r.value,
                    r.best_of,
                    r.spread,
                )
            })
            .collect();
        assert_eq!(
            rows,
            [
                ("spawn fibra x=2".into(), "a", 2.0, 2, Some(0.25)),
                ("spawn fibra x=2".into(), "b", 5.0, 2, Some(0.2)),
                ("spawn lua x=2".into(), "a", 4.0, 1, None),
                ("spawn lua x=2".into(), "b", 2.5, 1, None),
            ]
        );
    }

    #[test]
    fn an_empty_run_is_an_empty_array_and_a_header() {
        let mut out = Vec::new();
        write_json(&mut out, &[]).unwrap();
        assert_eq!(String::from_utf8(out).unwrap().trim(), "[]");
        let mut out = Vec::new();
        write_csv(&mut out, &[]).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            format!("{}\n", FIELDS.join(","))
        );
    }
}
