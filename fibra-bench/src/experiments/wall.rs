//! The map-count wall (DESIGN.md, `stack`): Linux lets a process hold at most
//! `vm.max_map_count` memory maps (65,530 by default), and a runtime that maps
//! each stack with a guard page of its own spends two of them per stack, so it
//! stops near 32,700 stacks. When a child program's runtime refuses one more
//! stack, this says whether the wall is why.

use crate::report::grouped;
use std::fs::File;
use std::io::{self, Read};

/// `why` a runtime refused one more unit, led by `the vm.max_map_count wall
/// (65,531 of 65,530 maps): ` when this process holds at least 90 % of the maps
/// the kernel allows it (a runtime that maps stacks in batches fails a little
/// short of the limit).
pub fn explain(why: &str) -> String {
    match wall() {
        Some(wall) => format!("{wall}: {why}"),
        None => why.to_string(),
    }
}

/// `the vm.max_map_count wall (65,531 of 65,530 maps)` when this process is
/// near it; `None` otherwise, or when /proc does not say.
fn wall() -> Option<String> {
    let max = std::fs::read_to_string("/proc/sys/vm/max_map_count").ok()?;
    let max: u64 = max.trim().parse().ok()?;
    let maps = count_lines("/proc/self/maps").ok()?;
    near(maps, max).then(|| {
        format!(
            "the vm.max_map_count wall ({} of {} maps)",
            grouped(maps),
            grouped(max)
        )
    })
}

/// Whether `maps` is within 10 % of `max`.
fn near(maps: u64, max: u64) -> bool {
    maps * 10 >= max * 9
}

/// The lines of the file at `path`, read through a buffer on the stack: at the
/// wall, the kernel refuses the new map that a large allocation would need.
fn count_lines(path: &str) -> io::Result<u64> {
    let mut file = File::open(path)?;
    let mut buffer = [0u8; 16 * 1024];
    let mut lines = 0;
    loop {
        match file.read(&mut buffer)? {
            0 => return Ok(lines),
            read => lines += buffer[..read].iter().filter(|&&b| b == b'\n').count() as u64,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_this_process_maps() {
        let maps = count_lines("/proc/self/maps").unwrap();
        assert!(maps > 5, "{maps}");
        // A test process is far from the wall.
        assert_eq!(wall(), None);
        assert_eq!(explain("Cannot allocate memory"), "Cannot allocate memory");
    }

    #[test]
    fn near_means_within_a_tenth() {
        assert!(near(65_531, 65_530));
        assert!(near(63_564, 65_530));
        assert!(!near(40_000, 65_530));
    }
}
