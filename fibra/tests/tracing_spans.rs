//! With the feature `tracing`, `ThreadBuilder::span` runs a green thread in a
//! span that is entered only while the thread runs: every line a green thread
//! logs names its own span, and only that one, however the threads interleave.

#[path = "support/without_hanging.rs"]
mod hang;

use fibra::runtime::ThreadBuilder;
use fibra::time::sleep;
use hang::without_hanging;
use std::io::{self, Write};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;
use tracing::{info, info_span};
use tracing_subscriber::fmt::MakeWriter;
use tracing_subscriber::fmt::format::FmtSpan;

/// Where the subscriber writes: a buffer the test reads.
#[derive(Clone, Default)]
struct Buffer(Arc<Mutex<Vec<u8>>>);

impl Write for Buffer {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl<'a> MakeWriter<'a> for Buffer {
    type Writer = Buffer;

    fn make_writer(&'a self) -> Buffer {
        self.clone()
    }
}

/// Runs `f` with a fmt subscriber (no colours, no time, no target; spans'
/// closes logged too) as this OS thread's default, and returns the lines it
/// wrote, on an OS thread of its own that fails the test if it hangs.
fn logged(what: &str, f: impl FnOnce() + Send + 'static) -> Vec<String> {
    without_hanging(what, || {
        let buffer = Buffer::default();
        let subscriber = tracing_subscriber::fmt()
            .with_writer(buffer.clone())
            .with_ansi(false)
            .without_time()
            .with_target(false)
            .with_span_events(FmtSpan::CLOSE)
            .finish();
        tracing::subscriber::with_default(subscriber, f);
        let bytes = buffer.0.lock().unwrap_or_else(PoisonError::into_inner);
        String::from_utf8_lossy(&bytes)
            .lines()
            .map(str::to_owned)
            .collect()
    })
}

/// The lines whose text contains `needle`, without the padding before the
/// level.
fn with<'a>(lines: &'a [String], needle: &str) -> Vec<&'a str> {
    lines
        .iter()
        .filter(|l| l.contains(needle))
        .map(|l| l.trim_start())
        .collect()
}

#[test]
fn each_line_shows_its_own_green_threads_span_only() {
    let lines = logged("three spans", || {
        fibra::run(|| {
            let requests: Vec<_> = (1..=3u64)
                .map(|id| {
                    ThreadBuilder::new()
                        .span(info_span!("request", id))
                        .spawn(move || {
                            info!("r{id} started");
                            // The first to start sleeps longest: all three
                            // are parked, in their spans, at once.
                            sleep(Duration::from_millis(10 * (4 - id)));
                            info_span!("step").in_scope(|| info!("r{id} stepped"));
                            sleep(Duration::from_millis(1));
                            info!("r{id} finished");
                        })
                        .unwrap()
                })
                .collect();
            // The first thread, which has no span, logs while they are parked.
            fibra::runtime::yield_now();
            info!("main waits");
            requests.into_iter().for_each(|r| r.join().unwrap());
            info!("main done");
        });
    });
    for id in 1..=3 {
        let own = format!("request{{id={id}}}");
        let started = with(&lines, &format!("r{id} started"));
        let stepped = with(&lines, &format!("r{id} stepped"));
        let finished = with(&lines, &format!("r{id} finished"));
        assert_eq!(
            started,
            [format!("INFO {own}: r{id} started")],
            "{lines:#?}"
        );
        assert_eq!(
            stepped,
            [format!("INFO {own}:step: r{id} stepped")],
            "{lines:#?}"
        );
        assert_eq!(
            finished,
            [format!("INFO {own}: r{id} finished")],
            "{lines:#?}"
        );
    }
    // Each line (events and spans' closes) names exactly one request span,
    // or none for the first thread's, however the threads interleaved.
    for line in &lines {
        let spans = line.matches("request{").count();
        let expected = usize::from(!line.contains("main "));
        assert_eq!(spans, expected, "{line}\n{lines:#?}");
    }
    assert_eq!(with(&lines, "main waits"), ["INFO main waits"]);
}

#[test]
fn the_span_closes_when_its_thread_has_ended() {
    let lines = logged("closes", || {
        fibra::run(|| {
            let requests: Vec<_> = (1..=3u64)
                .map(|id| {
                    ThreadBuilder::new()
                        .span(info_span!("request", id))
                        .spawn(move || {
                            sleep(Duration::from_millis(1));
                            info!("r{id} finished");
                        })
                        .unwrap()
                })
                .collect();
            requests.into_iter().for_each(|r| r.join().unwrap());
            info!("all joined");
        });
    });
    let joined = lines.iter().position(|l| l.ends_with("all joined"));
    for id in 1..=3 {
        let own = format!("request{{id={id}}}: ");
        let at = |text: &str| {
            lines
                .iter()
                .position(|l| l.contains(&own) && l.ends_with(text))
                .unwrap_or_else(|| panic!("no {text:?} under {own:?}: {lines:#?}"))
        };
        // Closed after its last event, and before its join returned.
        assert!(at("finished") < at(": close"), "{lines:#?}");
        assert!(Some(at(": close")) < joined, "{lines:#?}");
        let closes = lines
            .iter()
            .filter(|l| l.contains(&own) && l.ends_with(": close"));
        assert_eq!(closes.count(), 1, "{lines:#?}");
    }
}

/// Logs when it is dropped.
struct LogsOnDrop;

impl Drop for LogsOnDrop {
    fn drop(&mut self) {
        info!("unwound");
    }
}

#[test]
fn a_cancelled_thread_unwinds_in_its_span_and_its_children_have_none() {
    let lines = logged("cancel", || {
        fibra::run(|| {
            let stuck = ThreadBuilder::new()
                .span(info_span!("request", id = 9))
                .spawn(|| {
                    let _guard = LogsOnDrop;
                    // A green thread it spawns runs in no span of its own:
                    // its parent's is exited whenever the parent parks.
                    let child = fibra::spawn(|| info!("child runs"));
                    child.join().unwrap();
                    sleep(Duration::from_secs(3600));
                })
                .unwrap();
            for _ in 0..3 {
                fibra::runtime::yield_now();
            }
            stuck.cancel();
            assert!(stuck.join().is_err());
        });
    });
    assert_eq!(with(&lines, "unwound"), ["INFO request{id=9}: unwound"]);
    assert_eq!(with(&lines, "child runs"), ["INFO child runs"]);
}
