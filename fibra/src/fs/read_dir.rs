//! [`read_dir`]: a directory's entries, fetched in batches so that a listing
//! costs a hop to the blocking pool per [`BATCH`] entries, not per entry.

use super::{FileType, Metadata};
use crate::hop::hop;
use std::ffi::OsString;
use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

/// The most entries one hop to the pool fetches.
const BATCH: usize = 256;

/// The entries of the directory at `path`, in the order the file system
/// gives them, without `.` and `..` (see [`std::fs::read_dir`]). The
/// directory is opened and its first batch of entries read in one hop to
/// the blocking pool; the iterator fetches the next batch when it has handed
/// out this one, so a green thread that lists a large directory parks once
/// per batch, not once per entry.
///
/// ```
/// # let dir = std::env::temp_dir().join(format!("fibra-read-dir-doc-{}", std::process::id()));
/// fibra::run(move || -> std::io::Result<()> {
///     fibra::fs::create_dir_all(&dir)?;
///     for name in ["a", "b", "c"] {
///         fibra::fs::write(dir.join(name), name)?;
///     }
///     let mut names = Vec::new();
///     for entry in fibra::fs::read_dir(&dir)? {
///         let entry = entry?;
///         assert!(entry.file_type()?.is_file());
///         names.push(entry.file_name());
///     }
///     names.sort();
///     assert_eq!(names, ["a", "b", "c"]);
///     fibra::fs::remove_dir_all(&dir)
/// })?;
/// # Ok::<(), std::io::Error>(())
/// ```
pub fn read_dir<P: AsRef<Path>>(path: P) -> io::Result<ReadDir> {
    let path = path.as_ref();
    hop(|| {
        let mut listing = std::fs::read_dir(path)?;
        let batch = fetch(&mut listing);
        Ok(ReadDir::new(listing, batch))
    })
}

/// The entries of a directory, from [`read_dir`]: an [`Iterator`] of
/// `io::Result<`[`DirEntry`]`>`.
pub struct ReadDir {
    /// The entries fetched and not yet handed out.
    batch: std::vec::IntoIter<io::Result<DirEntry>>,
    /// The rest of the listing; `None` once it has ended.
    rest: Option<std::fs::ReadDir>,
}

impl ReadDir {
    /// A listing whose first entries are `batch` (the end of the listing
    /// if there are fewer than [`BATCH`]).
    fn new(listing: std::fs::ReadDir, batch: Vec<io::Result<DirEntry>>) -> ReadDir {
        let rest = (batch.len() == BATCH).then_some(listing);
        ReadDir {
            batch: batch.into_iter(),
            rest,
        }
    }
}

impl Iterator for ReadDir {
    type Item = io::Result<DirEntry>;

    fn next(&mut self) -> Option<io::Result<DirEntry>> {
        loop {
            if let Some(entry) = self.batch.next() {
                return Some(entry);
            }
            let listing = self.rest.as_mut()?;
            let batch = hop(|| fetch(listing));
            if batch.len() < BATCH {
                self.rest = None;
            }
            if batch.is_empty() {
                return None;
            }
            self.batch = batch.into_iter();
        }
    }
}

impl fmt::Debug for ReadDir {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ReadDir")
            .field("fetched", &self.batch.len())
            .field("ended", &self.rest.is_none())
            .finish()
    }
}

/// Up to [`BATCH`] entries of `listing`, each with its file type (which the
/// file system usually gives with the name; else it takes a `stat`, made
/// here, on the pool); fewer only at the end of the listing.
fn fetch(listing: &mut std::fs::ReadDir) -> Vec<io::Result<DirEntry>> {
    listing
        .by_ref()
        .take(BATCH)
        .map(|entry| {
            entry.map(|std| DirEntry {
                file_type: std.file_type().ok(),
                std,
            })
        })
        .collect()
}

/// An entry of a directory, from [`ReadDir`] (see [`std::fs::DirEntry`]).
pub struct DirEntry {
    std: std::fs::DirEntry,
    /// Its type, learned with the listing (`None` if that failed: then
    /// `file_type` asks again, and reports the error).
    file_type: Option<FileType>,
}

impl DirEntry {
    /// The entry's full path: the directory's path joined with its name.
    pub fn path(&self) -> PathBuf {
        self.std.path()
    }

    /// The entry's name within its directory.
    pub fn file_name(&self) -> OsString {
        self.std.file_name()
    }

    /// The entry's type, without following a symbolic link; learned with the
    /// listing, so it makes no system call here.
    pub fn file_type(&self) -> io::Result<FileType> {
        match self.file_type {
            Some(file_type) => Ok(file_type),
            None => {
                let std = &self.std;
                hop(|| std.file_type())
            }
        }
    }

    /// The entry's metadata, without following a symbolic link (see
    /// [`std::fs::DirEntry::metadata`]): a `stat`, made on the blocking
    /// pool.
    pub fn metadata(&self) -> io::Result<Metadata> {
        let std = &self.std;
        hop(|| std.metadata())
    }
}

impl fmt::Debug for DirEntry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("DirEntry").field(&self.path()).finish()
    }
}
