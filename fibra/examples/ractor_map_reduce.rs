//! Map-reduce on Ractors: a word count. The text is split into chunks of
//! [`CHUNK`] bytes; a Ractor per chunk counts its words (map), in parallel on
//! every core; `main` merges the counts as the Ractors finish (reduce). The
//! text is shared with [`make_shareable`] (an `Arc`, no copy); each Ractor
//! returns its own `HashMap`, moved — not copied — to `main` by
//! [`Ractor::join`]. Ractors are cheap, so there are hundreds of them on a
//! worker per core; small ones also keep each turn on a worker short (a green
//! thread that runs 100 ms without yielding is reported on stderr in a debug
//! build).
//!
//! ```sh
//! cargo run --release -p fibra --example ractor_map_reduce
//! ```

use fibra::ractor::{Context, Ractor, make_shareable};
use std::collections::HashMap;
use std::ops::Range;

const WORDS: usize = 2_000_000;
/// The size of the piece of text a mapper counts, in bytes.
const CHUNK: usize = 32 << 10;
const VOCABULARY: [&str; 8] = [
    "fiber", "thread", "ractor", "yield", "resume", "park", "wake", "take",
];

fn main() {
    let text = make_shareable(text(WORDS));
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let chunks = chunks(&text, CHUNK);

    // Map: a Ractor per chunk.
    let mappers: Vec<Ractor<(), (), HashMap<String, usize>>> = chunks
        .into_iter()
        .map(|range| {
            let text = text.clone();
            Ractor::new(move |_: &Context<()>| count_words(&text[range]))
        })
        .collect();
    let ractors = mappers.len();

    // Reduce: merge the partial counts.
    let mut counts: HashMap<String, usize> = HashMap::new();
    for mapper in mappers {
        for (word, n) in mapper.join().expect("a mapper does not panic") {
            *counts.entry(word).or_default() += n;
        }
    }

    assert_eq!(counts, count_words(&text), "the same as one pass");
    assert_eq!(counts.values().sum::<usize>(), WORDS);
    let mut table: Vec<_> = counts.into_iter().collect();
    table.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    println!("{WORDS} words counted by {ractors} Ractors on {cores} cores:");
    for (word, n) in table {
        println!("{n:>9}  {word}");
    }
}

/// `words` words from [`VOCABULARY`], picked by a xorshift32 generator and
/// separated by spaces.
fn text(words: usize) -> String {
    let mut x: u32 = 2_463_534_242;
    let mut text = String::new();
    for _ in 0..words {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        text.push_str(VOCABULARY[x as usize % VOCABULARY.len()]);
        text.push(' ');
    }
    text
}

/// Ranges of `text` of about `size` bytes that end at word boundaries.
fn chunks(text: &str, size: usize) -> Vec<Range<usize>> {
    let mut ranges = Vec::new();
    let mut start = 0;
    while start < text.len() {
        let end = text.as_bytes()[(start + size).min(text.len())..]
            .iter()
            .position(|&byte| byte == b' ')
            .map_or(text.len(), |space| start + size + space);
        ranges.push(start..end);
        start = end;
    }
    ranges
}

fn count_words(text: &str) -> HashMap<String, usize> {
    let mut counts = HashMap::new();
    for word in text.split_whitespace() {
        *counts.entry(word.to_string()).or_default() += 1;
    }
    counts
}
