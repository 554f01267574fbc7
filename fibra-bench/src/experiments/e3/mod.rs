//! E3 — IO-bound vs CPU-bound work under threads (EXPERIMENTS.md). Each kind of
//! work is a variant with a module and tables of its own: [`io`], three sleeps
//! run one after another and then in three threads on one OS thread. (The CPU
//! variant, deflates in Ractors, is to come beside it.)

mod fibra;
mod io;
mod tokio;

use super::{Experiment, Section};
use crate::ctx::Ctx;

pub const EXPERIMENT: Experiment = Experiment {
    name: "e3",
    description: "IO-bound work under threads: three sleeps in turn, then at once",
    default: true,
    run,
    child: None,
};

fn run(ctx: &Ctx) -> Section {
    let mut section = Section::default();
    io::run(ctx, &mut section);
    section
}
