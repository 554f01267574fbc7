//! [`File`]: an open file whose every call parks only the calling green
//! thread.

use super::{Metadata, OpenOptions, Permissions};
use crate::hop::hop;
use std::fmt;
use std::io::{self, IoSlice, IoSliceMut, Read, Seek, SeekFrom, Write};
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, RawFd};
use std::path::Path;

/// An open file, shaped like [`std::fs::File`]: [`Read`], [`Write`] and
/// [`Seek`] on `File` and on `&File`, each call a hop to fibra's blocking
/// pool that parks only the calling green thread, reading into and writing
/// from the caller's own buffer (see the [module docs](super)).
///
/// Each `read` or `write` is one hop, which costs microseconds: move data in
/// large pieces (wrap the file in a [`std::io::BufReader`] or
/// [`std::io::BufWriter`]); `read_to_end`, `read_to_string`, `read_exact` and
/// `write_all` make one hop for the whole.
///
/// ```
/// use std::io::{Read, Write};
///
/// # let path = std::env::temp_dir().join(format!("fibra-file-doc-{}", std::process::id()));
/// fibra::run(move || -> std::io::Result<()> {
///     let mut file = fibra::fs::File::create(&path)?;
///     file.write_all(b"parked, not blocked")?;
///     file.sync_all()?;
///
///     let mut text = String::new();
///     fibra::fs::File::open(&path)?.read_to_string(&mut text)?;
///     assert_eq!(text, "parked, not blocked");
///     assert_eq!(file.metadata()?.len(), 19);
///     fibra::fs::remove_file(&path)
/// })?;
/// # Ok::<(), std::io::Error>(())
/// ```
pub struct File {
    std: std::fs::File,
}

impl File {
    /// Opens the file at `path` for reading (see [`std::fs::File::open`]).
    pub fn open<P: AsRef<Path>>(path: P) -> io::Result<File> {
        OpenOptions::new().read(true).open(path)
    }

    /// Opens the file at `path` for writing, creating it or truncating it
    /// (see [`std::fs::File::create`]).
    pub fn create<P: AsRef<Path>>(path: P) -> io::Result<File> {
        OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .open(path)
    }

    /// Creates a new file at `path` for reading and writing, failing with
    /// [`ErrorKind::AlreadyExists`](io::ErrorKind::AlreadyExists) if there is
    /// one (see [`std::fs::File::create_new`]).
    pub fn create_new<P: AsRef<Path>>(path: P) -> io::Result<File> {
        OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(path)
    }

    /// Options to open a file with (see [`OpenOptions`]).
    pub fn options() -> OpenOptions {
        OpenOptions::new()
    }

    /// Makes `std` a fibra `File`.
    pub fn from_std(std: std::fs::File) -> File {
        File { std }
    }

    /// The `std` file inside, whose calls block the calling OS thread.
    pub fn into_std(self) -> std::fs::File {
        self.std
    }

    /// Writes the file's data and metadata to its storage device (see
    /// [`std::fs::File::sync_all`]).
    pub fn sync_all(&self) -> io::Result<()> {
        let std = &self.std;
        hop(|| std.sync_all())
    }

    /// Writes the file's data to its storage device, and only the metadata
    /// needed to read it back (see [`std::fs::File::sync_data`]).
    pub fn sync_data(&self) -> io::Result<()> {
        let std = &self.std;
        hop(|| std.sync_data())
    }

    /// Truncates or extends the file to `size` bytes (see
    /// [`std::fs::File::set_len`]).
    pub fn set_len(&self, size: u64) -> io::Result<()> {
        let std = &self.std;
        hop(|| std.set_len(size))
    }

    /// The file's metadata (see [`std::fs::File::metadata`]).
    pub fn metadata(&self) -> io::Result<Metadata> {
        let std = &self.std;
        hop(|| std.metadata())
    }

    /// Sets the file's permissions (see [`std::fs::File::set_permissions`]).
    pub fn set_permissions(&self, perm: Permissions) -> io::Result<()> {
        let std = &self.std;
        hop(|| std.set_permissions(perm))
    }

    /// Another `File` for the same open file, sharing its position (see
    /// [`std::fs::File::try_clone`]: a `dup`, which does not wait for the
    /// disk, so it is made here).
    pub fn try_clone(&self) -> io::Result<File> {
        self.std.try_clone().map(File::from_std)
    }
}

impl Read for &File {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let mut std = &self.std;
        hop(move || std.read(buf))
    }

    fn read_vectored(&mut self, bufs: &mut [IoSliceMut<'_>]) -> io::Result<usize> {
        let mut std = &self.std;
        hop(move || std.read_vectored(bufs))
    }

    fn read_to_end(&mut self, buf: &mut Vec<u8>) -> io::Result<usize> {
        let mut std = &self.std;
        hop(move || std.read_to_end(buf))
    }

    fn read_to_string(&mut self, buf: &mut String) -> io::Result<usize> {
        let mut std = &self.std;
        hop(move || std.read_to_string(buf))
    }

    fn read_exact(&mut self, buf: &mut [u8]) -> io::Result<()> {
        let mut std = &self.std;
        hop(move || std.read_exact(buf))
    }
}

impl Write for &File {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let mut std = &self.std;
        hop(move || std.write(buf))
    }

    fn write_vectored(&mut self, bufs: &[IoSlice<'_>]) -> io::Result<usize> {
        let mut std = &self.std;
        hop(move || std.write_vectored(bufs))
    }

    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        let mut std = &self.std;
        hop(move || std.write_all(buf))
    }

    /// A file has no buffer of its own to flush (as `std`'s): nothing to wait
    /// for.
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl Seek for &File {
    fn seek(&mut self, pos: SeekFrom) -> io::Result<u64> {
        let mut std = &self.std;
        hop(move || std.seek(pos))
    }
}

impl Read for File {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        (&*self).read(buf)
    }

    fn read_vectored(&mut self, bufs: &mut [IoSliceMut<'_>]) -> io::Result<usize> {
        (&*self).read_vectored(bufs)
    }

    fn read_to_end(&mut self, buf: &mut Vec<u8>) -> io::Result<usize> {
        (&*self).read_to_end(buf)
    }

    fn read_to_string(&mut self, buf: &mut String) -> io::Result<usize> {
        (&*self).read_to_string(buf)
    }

    fn read_exact(&mut self, buf: &mut [u8]) -> io::Result<()> {
        (&*self).read_exact(buf)
    }
}

impl Write for File {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        (&*self).write(buf)
    }

    fn write_vectored(&mut self, bufs: &[IoSlice<'_>]) -> io::Result<usize> {
        (&*self).write_vectored(bufs)
    }

    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        (&*self).write_all(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        (&*self).flush()
    }
}

impl Seek for File {
    fn seek(&mut self, pos: SeekFrom) -> io::Result<u64> {
        (&*self).seek(pos)
    }
}

impl AsFd for File {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.std.as_fd()
    }
}

impl AsRawFd for File {
    fn as_raw_fd(&self) -> RawFd {
        self.std.as_raw_fd()
    }
}

impl From<std::fs::File> for File {
    fn from(std: std::fs::File) -> File {
        File::from_std(std)
    }
}

impl fmt::Debug for File {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // std's shows the path and mode, read from /proc: system calls that
        // do not wait for the disk.
        fmt::Debug::fmt(&self.std, f)
    }
}
