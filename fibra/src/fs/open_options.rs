//! [`OpenOptions`]: how to open a [`File`].

use super::File;
use crate::hop::hop;
use std::io;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

/// How to open a [`File`], shaped like [`std::fs::OpenOptions`]: set the
/// options, then [`open`](OpenOptions::open), which parks only the calling
/// green thread.
///
/// ```
/// use std::io::{ErrorKind, Write};
///
/// # let path = std::env::temp_dir().join(format!("fibra-options-doc-{}", std::process::id()));
/// fibra::run(move || -> std::io::Result<()> {
///     let mut log = fibra::fs::OpenOptions::new().create(true).append(true).open(&path)?;
///     log.write_all(b"one line\n")?;
///     let again = fibra::fs::OpenOptions::new().write(true).create_new(true).open(&path);
///     assert_eq!(again.unwrap_err().kind(), ErrorKind::AlreadyExists);
///     fibra::fs::remove_file(&path)
/// })?;
/// # Ok::<(), std::io::Error>(())
/// ```
///
/// `std`'s Unix options (`mode`, `custom_flags`) come with
/// [`std::os::unix::fs::OpenOptionsExt`].
#[derive(Clone, Debug)]
pub struct OpenOptions(std::fs::OpenOptions);

impl OpenOptions {
    /// Options with everything off (see [`std::fs::OpenOptions::new`]).
    pub fn new() -> OpenOptions {
        OpenOptions(std::fs::OpenOptions::new())
    }

    /// Opens for reading.
    pub fn read(&mut self, read: bool) -> &mut OpenOptions {
        self.0.read(read);
        self
    }

    /// Opens for writing.
    pub fn write(&mut self, write: bool) -> &mut OpenOptions {
        self.0.write(write);
        self
    }

    /// Opens for writing at the end of the file, wherever the position is.
    pub fn append(&mut self, append: bool) -> &mut OpenOptions {
        self.0.append(append);
        self
    }

    /// Truncates the file to nothing when it is opened for writing.
    pub fn truncate(&mut self, truncate: bool) -> &mut OpenOptions {
        self.0.truncate(truncate);
        self
    }

    /// Creates the file if it does not exist (with `write` or `append`).
    pub fn create(&mut self, create: bool) -> &mut OpenOptions {
        self.0.create(create);
        self
    }

    /// Creates the file, failing with
    /// [`ErrorKind::AlreadyExists`](io::ErrorKind::AlreadyExists) if it
    /// exists (with `write` or `append`).
    pub fn create_new(&mut self, create_new: bool) -> &mut OpenOptions {
        self.0.create_new(create_new);
        self
    }

    /// Opens the file at `path` with these options (see
    /// [`std::fs::OpenOptions::open`]), parking only the calling green
    /// thread.
    pub fn open<P: AsRef<Path>>(&self, path: P) -> io::Result<File> {
        let (options, path) = (&self.0, path.as_ref());
        hop(|| options.open(path)).map(File::from_std)
    }
}

impl Default for OpenOptions {
    fn default() -> OpenOptions {
        OpenOptions::new()
    }
}

impl From<std::fs::OpenOptions> for OpenOptions {
    fn from(std: std::fs::OpenOptions) -> OpenOptions {
        OpenOptions(std)
    }
}

impl OpenOptionsExt for OpenOptions {
    fn mode(&mut self, mode: u32) -> &mut OpenOptions {
        self.0.mode(mode);
        self
    }

    fn custom_flags(&mut self, flags: i32) -> &mut OpenOptions {
        self.0.custom_flags(flags);
        self
    }
}
