//! E3 CPU: 8 MiB of random hex text is deflated (zlib, default level) 16
//! times, one after another on one thread, then in 16 threads at once. Under
//! the global lock of the seed's MRI the threads took as long as the loop
//! (today's MRI releases it while zlib deflates); fibra runs a Ractor per job
//! on a pool of one worker per core, so the ideal speed-up is the number of
//! cores.

use super::{EXPERIMENT, Times, fibra};
use crate::ctx::{Ctx, RUNS};
use crate::experiments::Section;
use crate::experiments::rates::{self, Plan, Runner, Runtime};
use crate::measure::{Outcome, Runs, figure_of};
use crate::peers::Launcher;
use crate::record::{self, Record};
use crate::report::{SPREAD_NOTE, Table, grouped, short};
use std::time::Duration;

/// The variant's name, for records and peers' command lines.
const VARIANT: &str = "cpu";

/// What the seed reported, in seconds: MRI's loop and 16 threads; JRuby's
/// loop and 16 threads (on a dual-core machine).
const REPORTED: &str = "reported (seed, 16 × 8 MB): MRI loop 8.62 s, 16 threads 8.57 s (1.0×); \
                        JRuby loop 12.2 s, 16 threads 7.6 s (1.6×, dual core)";

/// fibra's speed-up must reach this fraction of the number of cores.
const SPEED_UP_TARGET: f64 = 0.9;

/// The seed of the xorshift32 generator behind the text (Marsaglia's example
/// seed); every runtime generates the same text from it.
const SEED: u32 = 2_463_534_242;

/// One run's size: `jobs` deflates of `bytes` of hex text.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Size {
    pub jobs: u64,
    pub bytes: u64,
}

fn size(ctx: &Ctx) -> Size {
    Size {
        jobs: 16,
        bytes: ctx.size(1 << 20, 1 << 20, 8 << 20),
    }
}

/// `len` bytes of lowercase hex text (`len` a multiple of 8): the digits of
/// successive xorshift32 outputs, each written as its four bytes in
/// little-endian order, high nibble first. Ruby's
/// `words.pack("V*").unpack1("H*")` and Go's `hex.Encode` of the
/// little-endian bytes give the same text.
pub fn random_hex(len: usize) -> Vec<u8> {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut x = SEED;
    let mut text = Vec::with_capacity(len);
    while text.len() < len {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        for byte in x.to_le_bytes() {
            text.extend([
                DIGITS[usize::from(byte >> 4)],
                DIGITS[usize::from(byte & 15)],
            ]);
        }
    }
    text.truncate(len);
    text
}

/// The names of the runtimes measured.
pub fn runtime_names() -> Vec<&'static str> {
    rates::names(&runtimes())
}

fn runtimes() -> Vec<Runtime<Size, Times>> {
    let ruby = |interpreter| Launcher::Script {
        interpreter,
        package: interpreter,
        script: "ruby/e3.rb",
    };
    vec![
        Runtime {
            name: "fibra",
            how: "a Ractor per job on the process-wide pool (one worker per core), all reading \
                  one input shared by make_shareable; flate2 (zlib-rs)",
            runner: Runner::InProcess(|size| {
                fibra::cpu(random_hex(size.bytes as usize), size.jobs)
            }),
        },
        Runtime {
            name: "ruby threads",
            how: "Thread.new per job; Zlib (C zlib), which releases the global lock while zlib \
                  deflates, so the threads run in parallel",
            runner: Runner::Mode(ruby("ruby"), "threads"),
        },
        Runtime {
            name: "ruby ractors",
            how: "Ractor.new per job, the input made shareable (Ractor.make_shareable)",
            runner: Runner::Mode(ruby("ruby"), "ractors"),
        },
        Runtime {
            name: "jruby threads",
            how: "Thread.new per job, no global lock (JRuby has no Ractor); JRuby's Zlib (Java)",
            runner: Runner::Mode(ruby("jruby"), "threads"),
        },
        Runtime {
            name: "go",
            how: "a goroutine per job, GOMAXPROCS = all cores; compress/zlib",
            runner: Runner::Mode(Launcher::Go { module: "go/e3" }, "goroutines"),
        },
        Runtime {
            name: "java threads",
            how: "a platform thread per job (a deflate in native zlib would pin a virtual \
                  thread to its carrier throughout); java.util.zip.Deflater (C zlib)",
            // No scheduler flags: they shape virtual threads, and there are none.
            runner: Runner::Mode(
                Launcher::Java {
                    source: "java/E3.java",
                    flags: &[],
                },
                "threads",
            ),
        },
    ]
}

/// Measures every runtime (no warm-up: each run takes seconds) and adds the
/// CPU table to `section`.
pub fn run(ctx: &Ctx, section: &mut Section) {
    let size = size(ctx);
    let peer_args = [
        VARIANT.to_string(),
        size.jobs.to_string(),
        size.bytes.to_string(),
    ];
    let plan = Plan {
        experiment: "e3 cpu",
        size,
        peer_args: &peer_args,
        parse: &super::io::parse,
        warm_up: false,
    };
    let (results, notes) = rates::measure_all(ctx, &plan, runtimes(), section);
    section.tables.push(table(size, &results, notes));
    section.records.extend(records(size, &results));
}

/// The number of cores: fibra's pool has one worker per core.
fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// Seconds, to a hundredth.
fn secs(d: Duration) -> String {
    format!("{:.2} s", d.as_secs_f64())
}

fn speed_up(t: Times) -> f64 {
    t.sequential.as_secs_f64() / t.threaded.as_secs_f64().max(1e-9)
}

/// Whether fibra's speed-up reached [`SPEED_UP_TARGET`] × `cores`.
fn verdict(fibra: Option<Times>, cores: usize) -> String {
    let bar = SPEED_UP_TARGET * cores as f64;
    let head = format!("target: fibra speed-up ≥ {SPEED_UP_TARGET} × {cores} cores = {bar:.2}");
    match fibra {
        Some(t) => {
            let s = speed_up(t);
            let word = if s >= bar { "met" } else { "MISSED" };
            format!(
                "{head}: {word} ({}×, {} of the bar)",
                short(s),
                crate::report::times(s / bar)
            )
        }
        None => format!("{head}: no fibra figure"),
    }
}

fn table(size: Size, results: &[(&str, Outcome<Runs<Times>>)], mut notes: Vec<String>) -> Table {
    let rows = super::rows(results, secs, |t| format!("{}×", short(speed_up(t))));
    notes.push(
        "speed-up = sequential ÷ parallel; vs fibra = the runtime's time ÷ fibra's".to_string(),
    );
    notes.push(format!("{SPREAD_NOTE}, of the parallel time"));
    notes.push(format!(
        "input: the same {} bytes of hex text in every runtime (xorshift32, seed {SEED}), \
         deflated to the zlib format at the default level",
        grouped(size.bytes)
    ));
    notes.push(REPORTED.into());
    notes.push(verdict(
        figure_of(results, "fibra").map(|r| r.best),
        cores(),
    ));
    Table {
        title: format!(
            "e3 cpu: {} zlib deflates of {} MiB of random hex text, in a loop, then in {} \
             threads/Ractors/goroutines on {} cores; best of {RUNS} runs",
            size.jobs,
            short(size.bytes as f64 / f64::from(1 << 20)),
            size.jobs,
            cores(),
        ),
        columns: vec![
            "runtime",
            "sequential",
            "vs fibra",
            "parallel",
            "vs fibra",
            "speed-up",
            "spread",
        ],
        rows,
        notes,
    }
}

/// Records of the measured runtimes; their variant names the size, e.g.
/// `cpu jobs=16 bytes=8388608`.
fn records(size: Size, results: &[(&str, Outcome<Runs<Times>>)]) -> Vec<Record> {
    let variant = format!("{VARIANT} jobs={} bytes={}", size.jobs, size.bytes);
    record::of_measured(EXPERIMENT.name, &variant, results, |t| {
        vec![
            ("sequential_time", t.sequential.as_secs_f64(), "s"),
            ("parallel_time", t.threaded.as_secs_f64(), "s"),
            ("speed_up", speed_up(*t), "×"),
        ]
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiments::e3::deflate::deflated_len;

    #[test]
    fn the_text_is_the_one_every_peer_generates() {
        // The first two xorshift32 outputs from the seed, as Ruby prints them.
        assert_eq!(random_hex(16), b"634d1f2b7acbda94");
        let text = random_hex(1 << 16);
        assert_eq!(text.len(), 1 << 16);
        assert!(text.iter().all(u8::is_ascii_hexdigit));
    }

    #[test]
    fn deflates_hex_text_to_about_half() {
        let text = random_hex(1 << 16);
        let len = deflated_len(&text);
        assert!(len > text.len() / 3 && len < text.len() * 2 / 3, "{len}");
    }

    #[test]
    fn fibra_runs_both_halves() {
        let t = fibra::cpu(random_hex(1 << 12), 4).unwrap();
        assert!(t.sequential > Duration::ZERO && t.threaded > Duration::ZERO);
    }

    #[test]
    fn verdicts() {
        let t = |s, p| Times {
            sequential: Duration::from_millis(s),
            threaded: Duration::from_millis(p),
        };
        assert_eq!(
            verdict(Some(t(4000, 2000)), 2),
            "target: fibra speed-up ≥ 0.9 × 2 cores = 1.80: met (2.00×, 1.11× of the bar)"
        );
        assert_eq!(
            verdict(Some(t(4000, 2500)), 2),
            "target: fibra speed-up ≥ 0.9 × 2 cores = 1.80: MISSED (1.60×, 0.89× of the bar)"
        );
        assert!(verdict(None, 4).ends_with("no fibra figure"));
    }
}
