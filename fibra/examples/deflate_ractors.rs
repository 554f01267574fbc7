//! E3's CPU half, from the seed experiments: the same random hex text is
//! deflated (zlib, default level) 16 times, first in a loop, then in a Ractor
//! each. Ractors run on a pool of one worker OS thread per core, with no
//! global lock, so the second run is up to one core count faster. The text is
//! shared with every Ractor, not copied: [`make_shareable`] wraps it in an
//! `Arc`.
//!
//! The loop runs in one Ractor, so both halves run on the pool. A worker runs
//! its Ractors' green threads in turns, so each deflate feeds its input a
//! piece at a time and yields between pieces: the Ractors sharing a worker
//! take turns, and none holds it long enough to be reported on stderr (a
//! green thread that runs 100 ms without yielding is, in a debug build).
//!
//! ```sh
//! cargo run --release -p fibra --example deflate_ractors          # 16 × 512 KiB
//! cargo run --release -p fibra --example deflate_ractors -- --full # the seed's 16 × 8 MiB
//! ```

use fibra::ractor::{Context, Ractor, make_shareable};
use flate2::Compression;
use flate2::write::ZlibEncoder;
use std::io::Write;
use std::time::Instant;

const JOBS: usize = 16;

fn main() {
    let full = std::env::args().any(|arg| arg == "--full");
    let bytes = if full { 8 << 20 } else { 512 << 10 };
    let text = make_shareable(random_hex(bytes));

    let start = Instant::now();
    let sequential = Ractor::new({
        let text = text.clone();
        move |_: &Context<()>| -> Vec<usize> { (0..JOBS).map(|_| deflated_len(&text)).collect() }
    })
    .join()
    .expect("a deflate does not panic");
    let loop_time = start.elapsed();

    let start = Instant::now();
    let ractors: Vec<Ractor<(), (), usize>> = (0..JOBS)
        .map(|_| {
            let text = text.clone();
            Ractor::new(move |_: &Context<()>| deflated_len(&text))
        })
        .collect();
    let parallel: Vec<usize> = ractors
        .into_iter()
        .map(|ractor| ractor.join().expect("a deflate does not panic"))
        .collect();
    let ractor_time = start.elapsed();

    assert_eq!(sequential, parallel, "every deflate gives the same output");
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    println!(
        "{JOBS} deflates of {} KiB -> {} KiB: in a loop {loop_time:.2?}, in {JOBS} Ractors \
         {ractor_time:.2?} ({:.1}x on {cores} cores)",
        bytes >> 10,
        parallel[0] >> 10,
        loop_time.as_secs_f64() / ractor_time.as_secs_f64(),
    );
}

/// `len` bytes of random lowercase hex text, from a xorshift32 generator.
fn random_hex(len: usize) -> Vec<u8> {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut x: u32 = 2_463_534_242;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            DIGITS[(x & 15) as usize]
        })
        .collect()
}

/// How much input a deflate takes between two yields.
const PIECE: usize = 4 << 10;

/// The length of `input` deflated in the zlib format at the default level,
/// yielding to the worker's other green threads after each [`PIECE`]. (flate2
/// runs on its zlib-rs backend: the default one, miniz_oxide, keeps its
/// compressor state on the stack in a debug build, too big for a Ractor's.)
fn deflated_len(input: &[u8]) -> usize {
    let mut encoder = ZlibEncoder::new(Vec::new(), Compression::default());
    for piece in input.chunks(PIECE) {
        encoder.write_all(piece).expect("a Vec takes any write");
        fibra::runtime::yield_now();
    }
    encoder.finish().expect("a Vec takes any write").len()
}
