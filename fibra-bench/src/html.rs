//! The report of a run as one self-contained HTML page: the machine and the
//! runtimes' versions, then each experiment's tables, charts (inline SVG),
//! missing peers and failures. It loads nothing from elsewhere, so it can be
//! mailed or archived as it is.

use crate::chart::Svg;
use crate::experiments::{Experiment, Section};
use crate::machine::Machine;
use crate::report::{Row, Table};
use std::fmt::Write;

/// One experiment as the report shows it.
pub struct Part<'a> {
    pub experiment: &'a Experiment,
    pub section: &'a Section,
    pub charts: &'a [Svg],
}

/// What the report says about the run as a whole.
pub struct Run<'a> {
    pub machine: &'a Machine,
    /// Each runtime or tool found, and its version line.
    pub versions: &'a [(String, String)],
    /// The command line and the sizes it chose, e.g. `fibra-bench --quick`.
    pub settings: &'a str,
}

const STYLE: &str = "\
body{font-family:sans-serif;margin:2em auto;max-width:70em;padding:0 1em;color:#222}\
h1,h2{font-weight:600}h2{border-bottom:1px solid #ccc;margin-top:2em}\
table{border-collapse:collapse;margin:1em 0}caption{text-align:left;font-weight:600;padding:.3em 0}\
th,td{padding:.2em .7em;border-bottom:1px solid #e4e4e4;text-align:right}\
th:first-child,td:first-child{text-align:left}td.why{text-align:left;color:#a33}\
td.na{text-align:left;color:#888}ul.notes{font-size:.9em;color:#444}\
figure{margin:1em 0}figcaption{font-size:.9em;color:#444}.missing{color:#a60}\
dl{display:grid;grid-template-columns:max-content auto;gap:.2em 1em}dt{font-weight:600}dd{margin:0}";

/// The whole page.
pub fn render(run: &Run, parts: &[Part]) -> String {
    let mut html = String::new();
    // Writing to a String cannot fail.
    let _ = write_page(&mut html, run, parts);
    html
}

fn write_page(html: &mut String, run: &Run, parts: &[Part]) -> std::fmt::Result {
    let m = run.machine;
    writeln!(
        html,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <title>fibra-bench report, {}</title>\n<style>{STYLE}</style>\n</head>\n<body>",
        esc(&m.date)
    )?;
    writeln!(html, "<h1>fibra-bench {}</h1>", env!("CARGO_PKG_VERSION"))?;
    writeln!(html, "<p>{}</p>", esc(run.settings))?;
    writeln!(html, "<h2 id=\"machine\">Machine</h2>\n<dl>")?;
    for (key, value) in [
        ("CPU", m.cpu.clone()),
        ("architecture", m.arch.clone()),
        ("CPUs", m.cpus.to_string()),
        ("kernel", m.kernel.clone()),
        ("memory", m.memory.clone()),
        ("date", m.date.clone()),
    ] {
        writeln!(html, "<dt>{key}</dt><dd>{}</dd>", esc(&value))?;
    }
    writeln!(
        html,
        "</dl>\n<h2 id=\"versions\">Runtimes and tools</h2>\n<dl>"
    )?;
    for (name, version) in run.versions {
        writeln!(html, "<dt>{}</dt><dd>{}</dd>", esc(name), esc(version))?;
    }
    writeln!(html, "</dl>\n<ul>")?;
    for part in parts {
        let e = part.experiment;
        writeln!(
            html,
            "<li><a href=\"#{0}\">{0}</a>: {1}</li>",
            esc(e.name),
            esc(e.description)
        )?;
    }
    writeln!(html, "</ul>")?;
    for part in parts {
        write_part(html, part)?;
    }
    writeln!(html, "</body>\n</html>")
}

fn write_part(html: &mut String, part: &Part) -> std::fmt::Result {
    let e = part.experiment;
    writeln!(
        html,
        "<section id=\"{0}\">\n<h2>{0}: {1}</h2>",
        esc(e.name),
        esc(e.description)
    )?;
    for table in &part.section.tables {
        write_table(html, table)?;
    }
    for chart in part.charts {
        writeln!(
            html,
            "<figure>\n{}\n<figcaption>{}</figcaption>\n</figure>",
            chart.svg,
            esc(&chart.title)
        )?;
    }
    let failures = failures(&part.section.tables);
    if !failures.is_empty() {
        writeln!(html, "<h3>Failed</h3>\n<ul>")?;
        for (name, why) in failures {
            writeln!(html, "<li>{}: {}</li>", esc(name), esc(why))?;
        }
        writeln!(html, "</ul>")?;
    }
    if !part.section.missing.is_empty() {
        writeln!(html, "<h3>Missing peers</h3>\n<ul class=\"missing\">")?;
        for m in &part.section.missing {
            writeln!(
                html,
                "<li>{}: <code>{}</code></li>",
                esc(&m.name),
                esc(&m.hint)
            )?;
        }
        writeln!(html, "</ul>")?;
    }
    writeln!(html, "</section>")
}

fn write_table(html: &mut String, table: &Table) -> std::fmt::Result {
    writeln!(
        html,
        "<table>\n<caption>{}</caption>\n<thead><tr>",
        esc(&table.title)
    )?;
    for column in &table.columns {
        write!(html, "<th>{}</th>", esc(column))?;
    }
    writeln!(html, "</tr></thead>\n<tbody>")?;
    for row in &table.rows {
        write!(html, "<tr>")?;
        match row {
            Row::Cells(cells) => {
                for cell in cells {
                    write!(html, "<td>{}</td>", esc(cell))?;
                }
            }
            Row::Span(name, why) => {
                let class = if why == "n/a" { "na" } else { "why" };
                write!(
                    html,
                    "<td>{}</td><td class=\"{class}\" colspan=\"{}\">{}</td>",
                    esc(name),
                    table.columns.len().saturating_sub(1).max(1),
                    esc(why)
                )?;
            }
        }
        writeln!(html, "</tr>")?;
    }
    writeln!(html, "</tbody>\n</table>")?;
    if !table.notes.is_empty() {
        writeln!(html, "<ul class=\"notes\">")?;
        for note in &table.notes {
            writeln!(html, "<li>{}</li>", esc(note))?;
        }
        writeln!(html, "</ul>")?;
    }
    Ok(())
}

/// The runtimes of `tables` that failed, with why, each once.
fn failures(tables: &[Table]) -> Vec<(&str, &str)> {
    let mut failures: Vec<(&str, &str)> = Vec::new();
    for row in tables.iter().flat_map(|t| &t.rows) {
        if let Row::Span(name, why) = row
            && why != "n/a"
            && !failures.contains(&(name.as_str(), why.as_str()))
        {
            failures.push((name, why));
        }
    }
    failures
}

/// `text` with HTML's special characters escaped.
fn esc(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chart;
    use crate::experiments::EXPERIMENTS;
    use crate::peers::Missing;
    use crate::record::Record;

    fn section(e: &Experiment) -> Section {
        let record = |runtime: &str, value| Record {
            experiment: e.name,
            variant: "v".into(),
            runtime: runtime.into(),
            metric: "rate",
            value,
            unit: "1/s",
            best_of: 3,
            spread: Some(0.01),
        };
        Section {
            tables: vec![Table {
                title: format!("{} <table>", e.name),
                columns: vec!["runtime", "rate"],
                rows: vec![
                    Row::Cells(vec!["fibra".into(), "2.00e8".into()]),
                    Row::Span("go".into(), "crashed (signal 11)".into()),
                    Row::Span("lua5.1".into(), "n/a".into()),
                ],
                notes: vec!["a note & more".into()],
            }],
            records: vec![record("fibra", 2e8), record("tokio", 1e7)],
            missing: vec![Missing {
                name: "luajit".into(),
                hint: "apt-get install luajit".into(),
            }],
        }
    }

    #[test]
    fn names_every_experiment_and_embeds_its_charts() {
        let sections: Vec<Section> = EXPERIMENTS.iter().map(section).collect();
        let charts: Vec<Vec<Svg>> = EXPERIMENTS
            .iter()
            .zip(&sections)
            .map(|(e, s)| chart::draw_all(e.name, &[], &s.records))
            .collect();
        let parts: Vec<Part> = EXPERIMENTS
            .iter()
            .zip(&sections)
            .zip(&charts)
            .map(|((experiment, section), charts)| Part {
                experiment,
                section,
                charts,
            })
            .collect();
        let machine = Machine::this();
        let versions = [("ruby".to_string(), "ruby 3.1.7p261 <x86_64>".to_string())];
        let run = Run {
            machine: &machine,
            versions: &versions,
            settings: "fibra-bench --quick",
        };
        let html = render(&run, &parts);
        assert!(html.starts_with("<!DOCTYPE html>") && html.ends_with("</html>\n"));
        for e in EXPERIMENTS {
            assert!(
                html.contains(&format!("<section id=\"{}\">", e.name)),
                "{}",
                e.name
            );
            assert!(html.contains(&format!("<caption>{} &lt;table&gt;</caption>", e.name)));
        }
        assert_eq!(html.matches("<svg").count(), EXPERIMENTS.len());
        assert_eq!(html.matches("</svg>").count(), EXPERIMENTS.len());
        assert!(html.contains("<dt>ruby</dt><dd>ruby 3.1.7p261 &lt;x86_64&gt;</dd>"));
        assert!(html.contains(&esc(&machine.cpu)));
        assert!(html.contains("<li>go: crashed (signal 11)</li>"));
        assert!(html.contains("<li>luajit: <code>apt-get install luajit</code></li>"));
        assert!(html.contains("<td class=\"na\" colspan=\"1\">n/a</td>"));
        assert!(html.contains("<li>a note &amp; more</li>"));
        for loads in ["src=", "<link", "<script", "url(", "href=\"http", "@import"] {
            assert!(!html.contains(loads), "{loads}: the page loads nothing");
        }
    }

    #[test]
    fn escapes() {
        assert_eq!(
            esc("a<b & \"c\" 'd'>"),
            "a&lt;b &amp; &quot;c&quot; &#39;d&#39;&gt;"
        );
    }
}
