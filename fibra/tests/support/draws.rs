//! Where a model-based test's random choices come from: a seeded generator
//! (splitmix64) good for a number of steps, or a fuzzer's bytes, one byte a
//! choice. The fiber model (`tests/model/`) and the runtime model
//! (`tests/runtime_model/`) both draw from it, and so do their `cargo fuzz`
//! targets, so that a seed or an input means the same program everywhere.

pub enum Draws {
    Seeded { state: u64, steps_left: u32 },
    Bytes { bytes: Vec<u8>, at: usize },
}

impl Draws {
    /// `steps` steps of choices by a splitmix64 generator from `seed`.
    pub fn seeded(seed: u64, steps: u32) -> Draws {
        Draws::Seeded {
            state: seed,
            steps_left: steps,
        }
    }

    /// Choices read from `bytes`, one byte a choice (0 once they run out).
    pub fn from_bytes(bytes: &[u8]) -> Draws {
        Draws::Bytes {
            bytes: bytes.to_vec(),
            at: 0,
        }
    }

    /// A number below `n` (which is at least 1).
    pub fn below(&mut self, n: usize) -> usize {
        match self {
            Draws::Seeded { state, .. } => {
                *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
                let mut z = *state;
                z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
                z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
                ((z ^ (z >> 31)) % n as u64) as usize
            }
            Draws::Bytes { bytes, at } => {
                let byte = bytes.get(*at).copied().unwrap_or(0);
                *at += 1;
                byte as usize % n
            }
        }
    }

    /// Counts one step taken (a seeded generator's steps run out; bytes run
    /// out by being read).
    pub fn step(&mut self) {
        if let Draws::Seeded { steps_left, .. } = self {
            *steps_left = steps_left.saturating_sub(1);
        }
    }

    /// Whether the steps or the bytes have run out: the program winds down.
    pub fn used_up(&self) -> bool {
        match self {
            Draws::Seeded { steps_left, .. } => *steps_left == 0,
            Draws::Bytes { bytes, at } => *at >= bytes.len(),
        }
    }
}
