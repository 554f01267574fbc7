//! What watches the runtimes from outside their loops, for the people who
//! run a program: [`dump`](dump::dump) (every runtime's green threads, what
//! each waits for and where), the stall detector (`stall.rs`: a line when a
//! green thread holds its OS thread too long), and [`metrics`](metrics::metrics)
//! (a runtime's counters).
//!
//! They read the scheduler's core through one seam — each runtime's
//! [`Monitor`](super::registry::Monitor) (its counters, its switch count,
//! the dumps asked of it) and the part of a dump it makes itself
//! ([`Section`](super::section::Section)) — and the core calls nothing of
//! theirs: a runtime works the same whether anything watches it.

pub(super) mod dump;
pub(super) mod dump_signal;
pub(super) mod metrics;
pub(super) mod stall;
