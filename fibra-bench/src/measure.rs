//! The result of measuring one runtime once, and the best-of-N rule with the
//! spread of the runs it chose from.

use std::fmt;
use std::time::Duration;

/// `count` events (switches, spawns, messages…) that took `ns` nanoseconds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Timed {
    pub count: u64,
    pub ns: u64,
}

impl Timed {
    /// `count` events measured in-process over `elapsed`.
    pub fn new(count: u64, elapsed: Duration) -> Self {
        Timed {
            count,
            // u64 nanoseconds last 584 years.
            ns: elapsed.as_nanos() as u64,
        }
    }

    /// Events per second.
    pub fn per_sec(self) -> f64 {
        self.count as f64 * 1e9 / self.ns.max(1) as f64
    }

    /// Nanoseconds per event.
    pub fn ns_each(self) -> f64 {
        self.ns as f64 / self.count.max(1) as f64
    }
}

/// A figure whose rate is that of a [`Timed`]: a `Timed` itself, or one with
/// more beside it (the percentiles of ractor-pingpong's round trips), so that
/// tables of rates take either.
pub trait Rated: Best {
    /// The events and the time they took.
    fn timed(&self) -> Timed;
}

impl Rated for Timed {
    fn timed(&self) -> Timed {
        *self
    }
}

/// Implements [`Best`] and [`Rated`] for a figure that is a [`Timed`] (its
/// field `timed`) with more measured beside it (percentiles, CPU time): the
/// better run is the one whose `timed` is better, with all it measured.
macro_rules! rated_by_timed {
    ($figure:ty) => {
        impl $crate::measure::Best for $figure {
            fn best(self, other: Self) -> Self {
                match self.timed.best(other.timed) == self.timed {
                    true => self,
                    false => other,
                }
            }

            fn worst(self, other: Self) -> Self {
                match self.timed.worst(other.timed) == self.timed {
                    true => self,
                    false => other,
                }
            }
        }

        impl $crate::measure::Rated for $figure {
            fn timed(&self) -> $crate::measure::Timed {
                self.timed
            }
        }
    };
}
pub(crate) use rated_by_timed;

/// What one measurement of one runtime produced. A runtime that is not installed
/// never gets this far: it is reported as missing instead.
#[derive(Clone, Debug, PartialEq)]
pub enum Outcome<T> {
    Measured(T),
    /// The runtime has no such variant (Lua has no symmetric transfer).
    NotApplicable,
    /// Crashed, timed out, failed to build, or printed something unparseable;
    /// the text says which, for the table cell.
    Failed(String),
}

impl<T> Outcome<T> {
    /// Turns a `Result` whose error explains the failure into an outcome.
    pub fn from_result<E: fmt::Display>(result: Result<T, E>) -> Self {
        match result {
            Ok(value) => Outcome::Measured(value),
            Err(e) => Outcome::Failed(e.to_string()),
        }
    }

    /// The figure, or else the outcome that has none, as an outcome of any type.
    pub fn into_figure<U>(self) -> Result<T, Outcome<U>> {
        match self {
            Outcome::Measured(t) => Ok(t),
            Outcome::NotApplicable => Err(Outcome::NotApplicable),
            Outcome::Failed(why) => Err(Outcome::Failed(why)),
        }
    }
}

/// How large the runs of one runtime are. Runtimes differ by four orders of
/// magnitude in speed (JRuby fibers against an assembly switch), so no single
/// size suits them all: a first, uncounted run of `first` units finds the
/// runtime's speed, and each later run is scaled from the one before to take
/// about `target`, but never to less than 1/100 of `first`.
#[derive(Clone, Copy, Debug)]
pub struct Sizing {
    pub first: u64,
    pub target: Duration,
}

impl Sizing {
    /// The size that should take `target`, given that `n` units took `ns`.
    fn next(self, n: u64, ns: u64) -> u64 {
        let scaled = n as f64 * self.target.as_nanos() as f64 / ns.max(1) as f64;
        (scaled as u64).max(self.first / 100).max(1)
    }
}

/// Makes a sizing run and then `runs` measured runs, sized by `sizing` (`measure`
/// gets the size), and keeps the best (least ns per event) and the worst of the
/// measured runs.
///
/// The sizing run is not counted: it is short, so it would favour runtimes
/// lucky enough to dodge an interrupt in it, and it warms caches and JITs up for
/// the runs that count. Measuring stops at the first run that does not produce a
/// figure, since repeating a crash only costs time.
pub fn best_of(
    runs: usize,
    sizing: Sizing,
    mut measure: impl FnMut(u64) -> Outcome<Timed>,
) -> Outcome<Runs<Timed>> {
    let mut n = match measure(sizing.first).into_figure() {
        Ok(t) => sizing.next(sizing.first, t.ns),
        Err(unmeasured) => return unmeasured,
    };
    counted(runs, || {
        let outcome = measure(n);
        if let Outcome::Measured(t) = outcome {
            n = sizing.next(n, t.ns);
        }
        outcome
    })
}

/// A figure that can be measured several times, of which the best is reported
/// and the worst shows the spread.
pub trait Best: Copy {
    /// The better of two runs' figures (noise only ever makes a run slower).
    fn best(self, other: Self) -> Self;
    /// The worse of two runs' figures: the other end of their spread.
    fn worst(self, other: Self) -> Self;
}

impl Best for Timed {
    /// The run with the least ns per event; the earlier one on a tie.
    fn best(self, other: Timed) -> Timed {
        if other.ns_each() < self.ns_each() {
            other
        } else {
            self
        }
    }

    /// The run with the most ns per event; the earlier one on a tie.
    fn worst(self, other: Timed) -> Timed {
        if other.ns_each() > self.ns_each() {
            other
        } else {
            self
        }
    }
}

/// What the counted runs of one runtime came to: the best figure, which tables
/// and records report, the worst, and how many runs there were.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Runs<T> {
    pub best: T,
    pub worst: T,
    pub count: usize,
}

impl<T: Best> Runs<T> {
    /// A single run.
    pub fn one(figure: T) -> Self {
        Runs {
            best: figure,
            worst: figure,
            count: 1,
        }
    }

    /// These runs and one more.
    pub fn and(self, figure: T) -> Self {
        Runs {
            best: self.best.best(figure),
            worst: self.worst.worst(figure),
            count: self.count + 1,
        }
    }

    /// How far apart the runs were in the number `of` makes of a figure:
    /// (worst − best) ÷ best, in either direction (a rate's worst is its least);
    /// `None` for a single run, which has no spread to show.
    pub fn spread(&self, of: impl Fn(&T) -> f64) -> Option<f64> {
        let (best, worst) = (of(&self.best), of(&self.worst));
        (self.count > 1).then(|| relative_gap(best, worst))
    }
}

/// |worst − best| ÷ |best|, and 0 when both are 0.
pub fn relative_gap(best: f64, worst: f64) -> f64 {
    match (worst - best).abs() {
        0.0 => 0.0,
        gap => gap / best.abs(),
    }
}

/// Makes an uncounted warm-up run (if `warm_up`) and then `runs` measured runs,
/// all of the same size, and keeps the best and the worst: [`best_of`] for
/// experiments whose size is part of what they measure (N threads alive at
/// once, 1,000 connections), so that it cannot be scaled to a time. Measuring
/// stops at the first run that does not produce a figure.
pub fn best_of_fixed<T: Best>(
    runs: usize,
    warm_up: bool,
    mut measure: impl FnMut() -> Outcome<T>,
) -> Outcome<Runs<T>> {
    if warm_up && let Err(unmeasured) = measure().into_figure() {
        return unmeasured;
    }
    counted(runs, measure)
}

/// Makes `runs` counted runs, stopping at the first that gives no figure.
fn counted<T: Best>(runs: usize, mut measure: impl FnMut() -> Outcome<T>) -> Outcome<Runs<T>> {
    let mut kept: Option<Runs<T>> = None;
    for _ in 0..runs {
        match measure().into_figure() {
            Ok(t) => kept = Some(kept.map_or(Runs::one(t), |k| k.and(t))),
            Err(unmeasured) => return unmeasured,
        }
    }
    kept.map_or(Outcome::Failed("no runs".into()), Outcome::Measured)
}

/// The measured runtimes among `results`, with their figures.
pub fn measured<'a, T>(
    results: &'a [(&'a str, Outcome<T>)],
) -> impl Iterator<Item = (&'a str, &'a T)> + 'a {
    results.iter().filter_map(|(name, o)| match o {
        Outcome::Measured(t) => Some((*name, t)),
        _ => None,
    })
}

/// The figure of the runtime called `name`, if it was measured.
pub fn figure_of<'a, T>(results: &'a [(&'a str, Outcome<T>)], name: &str) -> Option<&'a T> {
    measured(results).find_map(|(n, t)| (n == name).then_some(t))
}

#[cfg(test)]
mod tests {
    use super::*;

    const SIZING: Sizing = Sizing {
        first: 10,
        target: Duration::from_micros(1),
    };

    #[test]
    fn best_of_keeps_the_fastest_counted_run() {
        // The sizing run (50 ns) is the fastest, but it does not count.
        let mut runs = [50, 300, 100, 200].into_iter();
        let best = best_of(3, SIZING, |_| {
            Outcome::Measured(Timed {
                count: 10,
                ns: runs.next().unwrap(),
            })
        });
        let t = |ns| Timed { count: 10, ns };
        assert_eq!(
            best,
            Outcome::Measured(Runs {
                best: t(100),
                worst: t(300),
                count: 3
            })
        );
        assert_eq!(runs.next(), None);
    }

    #[test]
    fn runs_are_sized_to_the_target() {
        let mut sizes = Vec::new();
        best_of(3, SIZING, |n| {
            sizes.push(n);
            Outcome::Measured(Timed { count: n, ns: n })
        });
        assert_eq!(sizes, [10, 1000, 1000, 1000]);
        assert_eq!(SIZING.next(1000, 100_000), 10, "scaled down");
        assert_eq!(SIZING.next(1000, 100_000_000), 1, "at most 100 times down");
        assert_eq!(SIZING.next(10, 0), 10_000, "a run too short to time");
    }

    #[test]
    fn best_of_stops_at_a_failure() {
        let mut calls = 0;
        let best = best_of(3, SIZING, |_| {
            calls += 1;
            Outcome::Failed("crashed".into())
        });
        assert_eq!(best, Outcome::Failed("crashed".into()));
        assert_eq!(calls, 1);
    }

    #[test]
    fn rates() {
        let t = Timed { count: 4, ns: 2 };
        assert_eq!(t.per_sec(), 2e9);
        assert_eq!(t.ns_each(), 0.5);
    }

    #[test]
    fn best_of_fixed_skips_the_warm_up_and_stops_at_a_failure() {
        let mut runs = [50, 300, 100, 200].into_iter();
        let best = best_of_fixed(3, true, || {
            Outcome::Measured(Timed {
                count: 10,
                ns: runs.next().unwrap(),
            })
        });
        let Outcome::Measured(kept) = best else {
            panic!("{best:?}")
        };
        assert_eq!((kept.best.ns, kept.worst.ns, kept.count), (100, 300, 3));
        assert_eq!(runs.next(), None);
        let mut calls = 0;
        let failed = best_of_fixed(3, true, || {
            calls += 1;
            match calls {
                2 => Outcome::Failed("hung".into()),
                _ => Outcome::Measured(Timed { count: 1, ns: 1 }),
            }
        });
        assert_eq!(failed, Outcome::Failed("hung".into()));
        assert_eq!(calls, 2);
    }

    #[test]
    fn best_of_fixed_without_a_warm_up_counts_every_run() {
        let mut runs = [50, 300, 100].into_iter();
        let best = best_of_fixed(3, false, || {
            Outcome::Measured(Timed {
                count: 10,
                ns: runs.next().unwrap(),
            })
        });
        let Outcome::Measured(kept) = best else {
            panic!("{best:?}")
        };
        assert_eq!((kept.best.ns, kept.worst.ns, kept.count), (50, 300, 3));
    }

    #[test]
    fn spread_is_the_gap_between_best_and_worst() {
        let runs = Runs::one(Timed { count: 10, ns: 100 });
        assert_eq!(runs.spread(|t| t.per_sec()), None, "one run has no spread");
        let runs = runs.and(Timed { count: 10, ns: 125 });
        assert_eq!(runs.spread(|t| t.ns_each()), Some(0.25));
        assert_eq!(runs.spread(|t| t.per_sec()), Some(0.2));
        assert_eq!(relative_gap(0.0, 0.0), 0.0);
    }

    #[test]
    fn picks_out_measured_figures() {
        let results = [
            ("fibra", Outcome::Measured(1)),
            ("go", Outcome::Failed("crashed".into())),
            ("tokio", Outcome::Measured(3)),
        ];
        let names: Vec<(&str, i32)> = measured(&results).map(|(n, t)| (n, *t)).collect();
        assert_eq!(names, [("fibra", 1), ("tokio", 3)]);
        assert_eq!(figure_of(&results, "tokio"), Some(&3));
        assert_eq!(figure_of(&results, "go"), None);
    }
}
