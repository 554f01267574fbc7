//! SVG bar charts of an experiment's records. Any experiment gets charts from its
//! records alone, (experiment, variant, runtime, metric, value); an experiment
//! only says which metrics go together in a chart.
//!
//! plotters' SVG backend writes text as SVG `<text>` and, built without its
//! `ttf` feature, estimates text sizes without fonts, so charts need neither a
//! font nor a font library on the machine.

use crate::record::Record;
use crate::report::{percent, short};
use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint};
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use std::ops::Range;

/// A chart an experiment asks for: for each runtime, a bar for each of
/// `metrics` (which share a unit) in each variant that starts with `variant`.
pub struct Chart {
    /// A prefix of the variants charted; `""` for all of them.
    pub variant: &'static str,
    pub metrics: &'static [&'static str],
}

/// A drawn chart.
pub struct Svg {
    /// The file name it is saved as, e.g. `e1-switches_per_s.svg`.
    pub file: String,
    /// What it shows, for the report.
    pub title: String,
    pub svg: String,
}

/// Values spanning more than this factor are drawn on a log scale: on a linear
/// one the smallest bar would be under 5 % of the longest.
const LOG_SPAN: f64 = 20.0;

/// Draws the charts of one experiment's `records`: those `charts` asks for, or,
/// when it asks for none, one per metric with every variant. A chart whose
/// metrics have no records is left out.
pub fn draw_all(experiment: &str, charts: &[Chart], records: &[Record]) -> Vec<Svg> {
    let selections: Vec<(&str, Vec<&str>)> = if charts.is_empty() {
        let mut metrics: Vec<&str> = Vec::new();
        for r in records {
            if !metrics.contains(&r.metric) {
                metrics.push(r.metric);
            }
        }
        metrics.into_iter().map(|m| ("", vec![m])).collect()
    } else {
        charts
            .iter()
            .map(|c| (c.variant, c.metrics.to_vec()))
            .collect()
    };
    selections
        .into_iter()
        .filter_map(|(variant, metrics)| {
            Bars::select(experiment, variant, &metrics, records).map(|bars| bars.draw())
        })
        .collect()
}

/// The numbers of one chart: a group of bars per runtime, a bar per series
/// (a metric in a variant).
#[derive(Debug, PartialEq)]
struct Bars {
    file: String,
    title: String,
    axis: String,
    /// The series' names for the legend; a single series has none.
    series: Vec<String>,
    /// Per runtime, its value in each series, largest first.
    groups: Vec<(String, Vec<Option<f64>>)>,
    /// The most runs any value is the best of, and the largest spread.
    best_of: usize,
    spread: Option<f64>,
}

impl Bars {
    /// The bars of `metrics` in the variants starting with `variant` among
    /// `records`, or `None` if there are none.
    fn select(
        experiment: &str,
        variant: &str,
        metrics: &[&str],
        records: &[Record],
    ) -> Option<Bars> {
        let chosen: Vec<&Record> = records
            .iter()
            .filter(|r| r.variant.starts_with(variant) && metrics.contains(&r.metric))
            .collect();
        let first = chosen.first()?;
        let mut keys: Vec<(&str, &str)> = Vec::new();
        let mut groups: Vec<(String, Vec<Option<f64>>)> = Vec::new();
        for r in &chosen {
            if !keys.contains(&(&r.variant, r.metric)) {
                keys.push((&r.variant, r.metric));
            }
        }
        for r in &chosen {
            let i = keys
                .iter()
                .position(|&k| k == (r.variant.as_str(), r.metric))
                .expect("every record's key was collected");
            let at = match groups.iter().position(|(name, _)| *name == r.runtime) {
                Some(at) => at,
                None => {
                    groups.push((r.runtime.clone(), vec![None; keys.len()]));
                    groups.len() - 1
                }
            };
            groups[at].1[i] = Some(r.value);
        }
        groups.sort_by(|a, b| b.1[0].unwrap_or(0.0).total_cmp(&a.1[0].unwrap_or(0.0)));
        let one_variant = keys.iter().all(|k| k.0 == keys[0].0);
        let one_metric = keys.iter().all(|k| k.1 == keys[0].1);
        let series = match keys.len() {
            1 => Vec::new(),
            _ => keys
                .iter()
                .map(|(v, m)| match (one_variant, one_metric) {
                    (true, _) => m.to_string(),
                    (false, true) => v.to_string(),
                    (false, false) => format!("{v} {m}"),
                })
                .collect(),
        };
        let what = metrics.join(", ");
        let of = match (variant, one_variant) {
            ("", false) => String::new(),
            _ => format!(" ({})", keys[0].0),
        };
        Some(Bars {
            file: format!("{}.svg", slug(&[experiment, variant, &metrics.join("-")])),
            title: format!("{experiment}: {what}{of}"),
            axis: format!("{what} [{}]", first.unit),
            series,
            groups,
            best_of: chosen.iter().map(|r| r.best_of).max().unwrap_or(1),
            spread: chosen.iter().filter_map(|r| r.spread).reduce(f64::max),
        })
    }

    /// Whether the values span so many decades that a log scale shows them better.
    fn log_scale(&self) -> bool {
        let values: Vec<f64> = self.values().collect();
        let (min, max) = values
            .iter()
            .fold((f64::INFINITY, 0.0_f64), |(lo, hi), &v| {
                (lo.min(v), hi.max(v))
            });
        min > 0.0 && max / min > LOG_SPAN
    }

    fn values(&self) -> impl Iterator<Item = f64> + '_ {
        self.groups
            .iter()
            .flat_map(|(_, vs)| vs.iter().flatten().copied())
    }

    /// How the chart says which runs it shows, e.g. `best of 3 runs, spread ≤ 4.2 %`.
    fn runs(&self) -> String {
        match (self.best_of, self.spread) {
            (1, _) => "one run each".into(),
            (n, Some(s)) => format!("best of {n} runs, spread ≤ {}", percent(s)),
            (n, None) => format!("best of {n} runs"),
        }
    }

    fn draw(self) -> Svg {
        let mut svg = String::new();
        // Drawing into a String fails only on a bug in the chart's layout.
        if let Err(e) = self.render(&mut svg) {
            panic!("drawing the chart {}: {e}", self.file);
        }
        Svg {
            file: self.file.clone(),
            title: format!("{} — {}", self.title, self.runs()),
            svg,
        }
    }

    fn render(&self, out: &mut String) -> Result<(), Box<dyn std::error::Error + '_>> {
        const WIDTH: u32 = 860;
        let per_series = 16;
        let per_group = per_series * self.series.len().max(1) as u32 + 12;
        let n = self.groups.len();
        // A legend gets a slot of its own above the groups, where no bar runs
        // under it.
        let slots = n + usize::from(!self.series.is_empty());
        let height = 110 + per_group * slots as u32;
        let log = self.log_scale();
        let axis = Axis::new(log, self.values());
        let root = SVGBackend::with_string(out, (WIDTH, height)).into_drawing_area();
        root.fill(&WHITE)?;
        let label_width = self.groups.iter().map(|(g, _)| g.len()).max().unwrap_or(0);
        let mut chart = ChartBuilder::on(&root)
            .caption(
                format!("{} — {}", self.title, self.runs()),
                ("sans-serif", 16),
            )
            .margin(12)
            // Room for the last tick's label, centred on the plot's right edge.
            .margin_right(40)
            .x_label_area_size(40)
            .y_label_area_size(20 + 8 * label_width as u32)
            .build_cartesian_2d(
                Ticked {
                    range: axis.lo..axis.hi,
                    ticks: axis.ticks.clone(),
                },
                Ticked {
                    range: 0.0..slots as f64,
                    ticks: (0..n).map(|i| i as f64 + 0.5).collect(),
                },
            )?;
        let name_at = |y: &f64| {
            let i = (n as f64 - 0.5 - y).round();
            self.groups
                .get(i as usize)
                .map_or(String::new(), |(name, _)| name.clone())
        };
        chart
            .configure_mesh()
            .disable_y_mesh()
            .x_desc(match log {
                true => format!("{} (log scale)", self.axis),
                false => self.axis.clone(),
            })
            .x_label_formatter(&|x| short(axis.value(*x)))
            .y_label_formatter(&name_at)
            .label_style(("sans-serif", 13))
            .draw()?;
        let k = self.series.len().max(1);
        let band = 0.8 / k as f64;
        let value_style =
            TextStyle::from(("sans-serif", 11).into_font()).pos(Pos::new(HPos::Left, VPos::Center));
        for s in 0..k {
            let color = Palette99::pick(s).to_rgba();
            let mut bars = Vec::new();
            let mut labels = Vec::new();
            for (i, (_, values)) in self.groups.iter().enumerate() {
                let Some(v) = values[s] else { continue };
                let top = (n - i) as f64 - 0.1 - band * s as f64;
                let end = axis.position(v);
                bars.push(Rectangle::new(
                    [(axis.lo, top - band), (end, top)],
                    color.filled(),
                ));
                labels.push(Text::new(
                    format!(" {}", short(v)),
                    (end, top - band / 2.0),
                    value_style.clone(),
                ));
            }
            let drawn = chart.draw_series(bars)?;
            if let Some(name) = self.series.get(s) {
                drawn.label(name).legend(move |(x, y)| {
                    Rectangle::new([(x, y - 5), (x + 12, y + 5)], color.filled())
                });
            }
            chart.draw_series(labels)?;
        }
        if !self.series.is_empty() {
            chart
                .configure_series_labels()
                .position(SeriesLabelPosition::UpperRight)
                .background_style(WHITE.mix(0.9))
                .border_style(BLACK)
                .label_font(("sans-serif", 12))
                .draw()?;
        }
        root.present()?;
        Ok(())
    }
}

/// The x axis: where values go, in linear or log10 units, and its ticks.
struct Axis {
    log: bool,
    lo: f64,
    hi: f64,
    ticks: Vec<f64>,
}

impl Axis {
    /// An axis from 0 (or, on a log scale, the decade below the least value)
    /// past the greatest of `values`, with room for the value labels.
    fn new(log: bool, values: impl Iterator<Item = f64>) -> Axis {
        let values: Vec<f64> = values.collect();
        let max = values.iter().copied().fold(0.0, f64::max);
        if log {
            let min = values.iter().copied().fold(f64::INFINITY, f64::min);
            let lo = min.log10().floor();
            let hi = (max.log10() + 0.35).ceil();
            let ticks = (lo as i32..=hi as i32).map(f64::from).collect();
            return Axis { log, lo, hi, ticks };
        }
        let hi = if max > 0.0 { max * 1.2 } else { 1.0 };
        let step = nice_step(hi / 5.0);
        let ticks = (0..)
            .map(|i| f64::from(i) * step)
            .take_while(|t| *t <= hi)
            .collect();
        Axis {
            log,
            lo: 0.0,
            hi,
            ticks,
        }
    }

    /// Where `value` goes on the axis.
    fn position(&self, value: f64) -> f64 {
        match self.log {
            true => value.log10(),
            false => value,
        }
    }

    /// The value at a point of the axis.
    fn value(&self, at: f64) -> f64 {
        match self.log {
            true => 10f64.powf(at),
            false => at,
        }
    }
}

/// A linear axis with tick marks (and labels) exactly at `ticks`: at each
/// runtime's group of bars, at round values or at decades.
struct Ticked {
    range: Range<f64>,
    ticks: Vec<f64>,
}

impl Ranged for Ticked {
    type FormatOption = DefaultFormatting;
    type ValueType = f64;

    fn map(&self, value: &f64, (from, to): (i32, i32)) -> i32 {
        let along = (value - self.range.start) / (self.range.end - self.range.start);
        from + (f64::from(to - from) * along).round() as i32
    }

    /// The ticks for labels and bold lines; no light lines.
    fn key_points<H: KeyPointHint>(&self, hint: H) -> Vec<f64> {
        match hint.weight().allow_light_points() {
            true => Vec::new(),
            false => self.ticks.clone(),
        }
    }

    fn range(&self) -> Range<f64> {
        self.range.clone()
    }
}

/// The least of 1, 2 or 5 × 10ᵏ that is at least `rough`.
fn nice_step(rough: f64) -> f64 {
    let decade = 10f64.powf(rough.log10().floor());
    [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .map(|m| m * decade)
        .find(|s| *s >= rough)
        .unwrap_or(10.0 * decade)
}

/// `parts` joined by `-` into a file name: characters other than letters,
/// digits, `_`, `+` and `.` become `-`, and empty parts are left out.
fn slug(parts: &[&str]) -> String {
    let joined: Vec<String> = parts
        .iter()
        .filter(|p| !p.is_empty())
        .map(|p| {
            p.chars()
                .map(|c| match c {
                    c if c.is_ascii_alphanumeric() || "_+.".contains(c) => c,
                    _ => '-',
                })
                .collect()
        })
        .collect();
    joined.join("-")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(variant: &str, runtime: &str, metric: &'static str, value: f64) -> Record {
        Record {
            experiment: "e1",
            variant: variant.into(),
            runtime: runtime.into(),
            metric,
            value,
            unit: "1/s",
            best_of: 3,
            spread: Some(0.05),
        }
    }

    fn sample() -> Vec<Record> {
        vec![
            record("resume", "fibra", "switches_per_s", 9e8),
            record("resume", "fibra", "ns_per_switch", 1.1),
            record("resume", "ruby", "switches_per_s", 2e7),
            record("resume", "ruby", "ns_per_switch", 20.0),
            record("transfer", "fibra", "switches_per_s", 8e8),
            record("transfer", "go", "switches_per_s", 3e7),
        ]
    }

    #[test]
    fn groups_bars_by_runtime_and_series_by_variant() {
        let bars = Bars::select("e1", "", &["switches_per_s"], &sample()).unwrap();
        assert_eq!(bars.file, "e1-switches_per_s.svg");
        assert_eq!(bars.series, ["resume", "transfer"]);
        assert_eq!(
            bars.groups,
            [
                ("fibra".to_string(), vec![Some(9e8), Some(8e8)]),
                ("ruby".to_string(), vec![Some(2e7), None]),
                ("go".to_string(), vec![None, Some(3e7)]),
            ]
        );
        assert!(bars.log_scale(), "9e8 against 2e7 spans decades");
        let close = Bars::select("e1", "", &["ns_per_switch"], &sample()).unwrap();
        assert!(!close.log_scale(), "1.1 against 20 does not");
        assert_eq!(bars.runs(), "best of 3 runs, spread ≤ 5.0 %");
    }

    #[test]
    fn one_variant_and_several_metrics_are_series_of_metrics() {
        let bars =
            Bars::select("e1", "res", &["switches_per_s", "ns_per_switch"], &sample()).unwrap();
        assert_eq!(bars.file, "e1-res-switches_per_s-ns_per_switch.svg");
        assert_eq!(bars.title, "e1: switches_per_s, ns_per_switch (resume)");
        assert_eq!(bars.series, ["switches_per_s", "ns_per_switch"]);
        assert!(Bars::select("e1", "x", &["switches_per_s"], &sample()).is_none());
    }

    #[test]
    fn draws_an_svg_with_bars_and_labels() {
        let charts = draw_all("e1", &[], &sample());
        let files: Vec<&str> = charts.iter().map(|c| c.file.as_str()).collect();
        assert_eq!(files, ["e1-switches_per_s.svg", "e1-ns_per_switch.svg"]);
        let svg = &charts[0].svg;
        assert!(svg.starts_with("<svg"), "{svg}");
        // A bar per value (and the legend's swatches), and every label.
        assert!(svg.matches("<rect").count() >= 4, "{svg}");
        for label in [
            "fibra",
            "ruby",
            "go",
            "resume",
            "transfer",
            "log scale",
            "9.00e8",
        ] {
            assert!(svg.contains(label), "no {label:?} in {svg}");
        }
        let linear = &charts[1].svg;
        assert!(!linear.contains("log scale"));
    }

    #[test]
    fn a_chart_asked_for_without_records_is_left_out() {
        let charts = [Chart {
            variant: "",
            metrics: &["no_such_metric"],
        }];
        assert!(draw_all("e1", &charts, &sample()).is_empty());
        assert!(draw_all("e1", &[], &[]).is_empty());
    }

    #[test]
    fn axes() {
        let log = Axis::new(true, [2e7, 9e8].into_iter());
        assert_eq!((log.lo, log.hi), (7.0, 10.0));
        assert_eq!(log.ticks, [7.0, 8.0, 9.0, 10.0]);
        assert_eq!(log.value(8.0), 1e8);
        let linear = Axis::new(false, [0.0, 1.0].into_iter());
        assert_eq!(linear.ticks, [0.0, 0.5, 1.0]);
        assert_eq!(nice_step(0.24), 0.5);
        assert_eq!(nice_step(3.0), 5.0);
        assert_eq!(slug(&["e3", "io", "a b/c"]), "e3-io-a-b-c");
    }
}
