//! Files and directories from green threads: [`std::fs`]'s functions and
//! [`File`], each parking only the green thread that calls it.
//!
//! A file system call blocks its OS thread (the kernel offers no readiness
//! for files), so each call here runs on fibra's blocking pool while the
//! calling green thread parks and the runtime's other green threads run. The
//! call borrows what the caller passed — the path, the buffer — rather than
//! copying it: [`File::read`](std::io::Read::read) reads straight into the
//! caller's buffer. Each call is one hop to the pool and back, whatever it
//! does there: [`read`], [`read_to_string`] and [`write()`] open, read or
//! write, and close in one; [`read_dir`] lists a directory in batches of
//! entries, not a hop per entry; `read_to_end`, `read_exact` and `write_all`
//! on a [`File`] loop on the pool, not one hop per piece. A hop costs
//! microseconds, far more than a small `read(2)` from the page cache: read
//! and write a `File` in large pieces (a [`std::io::BufReader`] or
//! [`std::io::BufWriter`] around it), or use [`read`] and [`write()`] for a
//! whole file.
//!
//! ```
//! use std::io::{Read, Seek, SeekFrom, Write};
//!
//! # let dir = std::env::temp_dir().join(format!("fibra-fs-doc-{}", std::process::id()));
//! fibra::run(move || -> std::io::Result<()> {
//!     fibra::fs::create_dir_all(dir.join("notes"))?;
//!     let path = dir.join("notes/hello.txt");
//!     fibra::fs::write(&path, "hello from a green thread")?;
//!     assert_eq!(fibra::fs::read_to_string(&path)?, "hello from a green thread");
//!
//!     let mut file = fibra::fs::OpenOptions::new().read(true).append(true).open(&path)?;
//!     file.write_all(b"!")?;
//!     file.seek(SeekFrom::Start(6))?;
//!     let mut rest = String::new();
//!     file.read_to_string(&mut rest)?;
//!     assert_eq!(rest, "from a green thread!");
//!
//!     let names: Vec<_> = fibra::fs::read_dir(dir.join("notes"))?
//!         .map(|entry| entry.map(|e| e.file_name()))
//!         .collect::<std::io::Result<_>>()?;
//!     assert_eq!(names, ["hello.txt"]);
//!     fibra::fs::remove_dir_all(&dir)
//! })?;
//! # Ok::<(), std::io::Error>(())
//! ```
//!
//! Outside a runtime, each call simply calls [`std::fs`] on the calling
//! thread; so does a call made on a [`Fiber`](crate::Fiber) that a green
//! thread resumed (a [`Generator`](crate::Generator), say), which cannot
//! park its green thread: it then blocks the runtime for as long as it takes.
//!
//! **Cancelling and timeouts.** A call that has started on the pool runs to
//! its end: it borrows the caller's memory, so the calling green thread stays
//! parked until it is done, even if it is cancelled or the deadline of a
//! [`timeout`](crate::time::timeout) around it passes meanwhile — and then
//! unwinds at once, before the call returns. A file on a slow or hung file
//! system (a FIFO with no writer, an unreachable NFS server) therefore holds
//! its green thread as long as it holds the pool thread.
//!
//! Dropping a [`File`] closes it on the calling thread, as `std` does (a
//! `close(2)`, quick on local file systems). Errors are `std`'s, with the
//! same [`ErrorKind`](std::io::ErrorKind)s.

mod file;
mod open_options;
mod read_dir;

pub use file::File;
pub use open_options::OpenOptions;
pub use read_dir::{DirEntry, ReadDir, read_dir};
pub use std::fs::{FileType, Metadata, Permissions};

use crate::hop::hop;
use std::io;
use std::path::{Path, PathBuf};

/// Reads the whole file at `path` (see [`std::fs::read`]): opened, read and
/// closed in one hop to the blocking pool.
pub fn read<P: AsRef<Path>>(path: P) -> io::Result<Vec<u8>> {
    let path = path.as_ref();
    hop(|| std::fs::read(path))
}

/// Reads the whole file at `path` as UTF-8 (see [`std::fs::read_to_string`]),
/// in one hop.
pub fn read_to_string<P: AsRef<Path>>(path: P) -> io::Result<String> {
    let path = path.as_ref();
    hop(|| std::fs::read_to_string(path))
}

/// Writes `contents` as the whole of the file at `path`, creating it or
/// truncating it (see [`std::fs::write`]): opened, written and closed in one
/// hop, from the caller's buffer.
pub fn write<P: AsRef<Path>, C: AsRef<[u8]>>(path: P, contents: C) -> io::Result<()> {
    let (path, contents) = (path.as_ref(), contents.as_ref());
    hop(|| std::fs::write(path, contents))
}

/// The metadata of the file at `path`, following symbolic links (see
/// [`std::fs::metadata`]).
pub fn metadata<P: AsRef<Path>>(path: P) -> io::Result<Metadata> {
    let path = path.as_ref();
    hop(|| std::fs::metadata(path))
}

/// The metadata of `path` itself, a symbolic link included (see
/// [`std::fs::symlink_metadata`]).
pub fn symlink_metadata<P: AsRef<Path>>(path: P) -> io::Result<Metadata> {
    let path = path.as_ref();
    hop(|| std::fs::symlink_metadata(path))
}

/// Creates the directory `path` (see [`std::fs::create_dir`]).
pub fn create_dir<P: AsRef<Path>>(path: P) -> io::Result<()> {
    let path = path.as_ref();
    hop(|| std::fs::create_dir(path))
}

/// Creates the directory `path` and any of its parents that are missing (see
/// [`std::fs::create_dir_all`]), in one hop.
pub fn create_dir_all<P: AsRef<Path>>(path: P) -> io::Result<()> {
    let path = path.as_ref();
    hop(|| std::fs::create_dir_all(path))
}

/// Removes the file at `path` (see [`std::fs::remove_file`]).
pub fn remove_file<P: AsRef<Path>>(path: P) -> io::Result<()> {
    let path = path.as_ref();
    hop(|| std::fs::remove_file(path))
}

/// Removes the empty directory `path` (see [`std::fs::remove_dir`]).
pub fn remove_dir<P: AsRef<Path>>(path: P) -> io::Result<()> {
    let path = path.as_ref();
    hop(|| std::fs::remove_dir(path))
}

/// Removes the directory `path` and everything in it (see
/// [`std::fs::remove_dir_all`]), in one hop.
pub fn remove_dir_all<P: AsRef<Path>>(path: P) -> io::Result<()> {
    let path = path.as_ref();
    hop(|| std::fs::remove_dir_all(path))
}

/// Renames `from` to `to`, replacing `to` if it exists (see
/// [`std::fs::rename`]).
pub fn rename<P: AsRef<Path>, Q: AsRef<Path>>(from: P, to: Q) -> io::Result<()> {
    let (from, to) = (from.as_ref(), to.as_ref());
    hop(|| std::fs::rename(from, to))
}

/// Copies the contents and permissions of the file `from` to `to`, and
/// returns the number of bytes copied (see [`std::fs::copy`]), in one hop.
pub fn copy<P: AsRef<Path>, Q: AsRef<Path>>(from: P, to: Q) -> io::Result<u64> {
    let (from, to) = (from.as_ref(), to.as_ref());
    hop(|| std::fs::copy(from, to))
}

/// The absolute form of `path`, with every symbolic link resolved (see
/// [`std::fs::canonicalize`]).
pub fn canonicalize<P: AsRef<Path>>(path: P) -> io::Result<PathBuf> {
    let path = path.as_ref();
    hop(|| std::fs::canonicalize(path))
}

/// Makes `link` a new hard link to the file `original` (see
/// [`std::fs::hard_link`]).
pub fn hard_link<P: AsRef<Path>, Q: AsRef<Path>>(original: P, link: Q) -> io::Result<()> {
    let (original, link) = (original.as_ref(), link.as_ref());
    hop(|| std::fs::hard_link(original, link))
}

/// Sets the permissions of the file at `path` (see
/// [`std::fs::set_permissions`]).
pub fn set_permissions<P: AsRef<Path>>(path: P, perm: Permissions) -> io::Result<()> {
    let path = path.as_ref();
    hop(|| std::fs::set_permissions(path, perm))
}

/// Whether something exists at `path`, following symbolic links: `Ok(false)`
/// for a broken link, an error where that cannot be told, such as a parent
/// directory that cannot be searched (see [`std::fs::exists`]).
pub fn try_exists<P: AsRef<Path>>(path: P) -> io::Result<bool> {
    let path = path.as_ref();
    hop(|| std::fs::exists(path))
}
