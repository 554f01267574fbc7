//! How many stacks a test may hold at once.

/// `native`, except under qemu-user (the aarch64 run, `FIBRA_TEST_RUNNER` set),
/// which lacks `MADV_GUARD_INSTALL`: there each stack's guard page is an
/// `mprotect` that splits a mapping, and with the kernel's map count
/// (`vm.max_map_count`, 65,530 by default) fibra refuses stacks past about
/// 28,600, leaving an eighth of the entries to the rest of the process — fewer
/// while the other tests of the binary hold stacks of their own. Such a test
/// then holds 20,000 (the wall itself is documented in `fibra::stack`, and
/// tests/map_count.rs reaches it).
pub fn crowd_size(native: usize) -> usize {
    match std::env::var("FIBRA_TEST_RUNNER") {
        Ok(runner) if !runner.trim().is_empty() => native.min(20_000),
        _ => native,
    }
}
