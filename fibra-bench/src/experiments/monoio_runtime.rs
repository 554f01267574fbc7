//! monoio's runtime on its io_uring driver, for the child programs that run
//! monoio (the echo's and the HTTP server's). monoio is built without its
//! epoll (`legacy`) driver: a monoio row is always the io_uring design, and
//! where the kernel refuses io_uring the row fails and says why.

use std::io;

/// The submission queue's entries, as monoio's own benchmark servers
/// (monoio-rs/monoio-benchmark) set them, over its default 1,024: room for a
/// read or write in flight on each of many connections.
pub const ENTRIES: u32 = 32768;

/// A monoio runtime: the io_uring driver with monoio's timer over it.
pub type Runtime = monoio::Runtime<monoio::time::TimeDriver<monoio::IoUringDriver>>;

/// A monoio runtime on the calling thread (a monoio runtime stays on the
/// thread that built it), with a ring of [`ENTRIES`].
///
/// # Errors
///
/// The kernel refused a ring (`io_uring_setup`): the error says so, with
/// what `/proc/sys/kernel/io_uring_disabled` holds.
pub fn runtime() -> io::Result<Runtime> {
    monoio::RuntimeBuilder::<monoio::IoUringDriver>::new()
        .with_entries(ENTRIES)
        .enable_timer()
        .build()
        .map_err(|e| {
            let disabled = std::fs::read_to_string("/proc/sys/kernel/io_uring_disabled")
                .map_or_else(|e| format!("unreadable: {e}"), |s| s.trim().to_string());
            io::Error::new(
                e.kind(),
                format!(
                    "monoio's io_uring driver could not be set up (io_uring_setup: {e}; \
                     /proc/sys/kernel/io_uring_disabled: {disabled}); monoio is built here \
                     without its epoll fallback"
                ),
            )
        })
}
