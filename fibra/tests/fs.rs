//! Files from green threads (`fibra::fs`): every function and `File` against
//! what `std` does, with `std`'s error kinds; a ticker green thread that
//! keeps ticking through a 10 MiB write and read; large directories; calls
//! outside a runtime; and the borrowed buffer of a call that a cancel or a
//! `timeout` meets while it waits on the pool (a FIFO holds it there).

use fibra::fs::{self, File, OpenOptions};
use fibra::runtime::{self, JoinError};
use std::cell::{Cell, RefCell};
use std::io::{ErrorKind, IoSlice, IoSliceMut, Read, Seek, SeekFrom, Write};
use std::os::fd::AsFd;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::time::Duration;

#[path = "support/fifo.rs"]
mod fifo;
use fifo::Fifo;

#[path = "support/without_hanging.rs"]
mod hang;
use hang::without_hanging;

/// A fresh directory for one test, removed when dropped.
struct TempDir(PathBuf);

impl TempDir {
    fn new(name: &str) -> TempDir {
        let path = std::env::temp_dir().join(format!("fibra-fs-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir_all(&path).unwrap();
        TempDir(path)
    }

    fn join(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Every function of `fibra::fs` on `dir`: the same outcomes as `std`'s.
fn every_function(dir: &Path) {
    let file = dir.join("file");
    fs::write(&file, b"contents").unwrap();
    assert_eq!(fs::read(&file).unwrap(), b"contents");
    assert_eq!(fs::read_to_string(&file).unwrap(), "contents");
    assert_eq!(fs::metadata(&file).unwrap().len(), 8);
    assert!(fs::try_exists(&file).unwrap());
    assert!(!fs::try_exists(dir.join("nothing")).unwrap());

    let link = dir.join("link");
    std::os::unix::fs::symlink(&file, &link).unwrap();
    assert!(
        fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert!(fs::metadata(&link).unwrap().is_file());
    assert_eq!(
        fs::canonicalize(&link).unwrap(),
        fs::canonicalize(&file).unwrap()
    );

    assert_eq!(fs::copy(&file, dir.join("copy")).unwrap(), 8);
    fs::rename(dir.join("copy"), dir.join("renamed")).unwrap();
    assert_eq!(fs::read(dir.join("renamed")).unwrap(), b"contents");
    fs::hard_link(&file, dir.join("hard")).unwrap();
    assert_eq!(fs::metadata(&file).unwrap().nlink(), 2);

    let mut readonly = fs::metadata(&file).unwrap().permissions();
    readonly.set_readonly(true);
    fs::set_permissions(&file, readonly).unwrap();
    assert_eq!(fs::metadata(&file).unwrap().permissions().mode() & 0o222, 0);
    fs::set_permissions(&file, fs::Permissions::from_mode(0o644)).unwrap();

    fs::create_dir(dir.join("sub")).unwrap();
    fs::create_dir_all(dir.join("sub/deeper/deepest")).unwrap();
    fs::write(dir.join("sub/deeper/deepest/leaf"), "leaf").unwrap();

    // std's error kinds, unchanged.
    let kind = |result: std::io::Result<()>| result.unwrap_err().kind();
    assert_eq!(
        fs::read(dir.join("nothing")).unwrap_err().kind(),
        ErrorKind::NotFound
    );
    assert_eq!(
        kind(fs::create_dir(dir.join("sub"))),
        ErrorKind::AlreadyExists
    );
    assert_eq!(
        kind(fs::remove_dir(dir.join("sub"))),
        ErrorKind::DirectoryNotEmpty
    );
    assert_eq!(
        kind(fs::remove_file(dir.join("nothing"))),
        ErrorKind::NotFound
    );
    assert_eq!(
        kind(fs::remove_file(dir.join("sub"))),
        ErrorKind::IsADirectory
    );
    assert_eq!(
        fs::metadata(dir.join("file/below")).unwrap_err().kind(),
        ErrorKind::NotADirectory
    );
    fs::write(dir.join("latin1"), [0xe9]).unwrap();
    assert_eq!(
        fs::read_to_string(dir.join("latin1")).unwrap_err().kind(),
        ErrorKind::InvalidData
    );

    let mut names: Vec<_> = fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().file_name())
        .collect();
    names.sort();
    assert_eq!(names, ["file", "hard", "latin1", "link", "renamed", "sub"]);

    fs::remove_dir_all(dir.join("sub")).unwrap();
    fs::remove_file(&link).unwrap();
    assert!(!fs::try_exists(dir.join("sub")).unwrap());
    assert!(!fs::try_exists(&link).unwrap());
}

#[test]
fn every_function_does_what_std_does_in_a_green_thread() {
    let dir = TempDir::new("functions");
    let path = dir.0.clone();
    fibra::run(move || every_function(&path));
}

#[test]
fn every_function_works_outside_a_runtime() {
    let dir = TempDir::new("functions-outside");
    every_function(&dir.0);
    every_file_call(&dir.0);
}

/// Every call of `File` and `OpenOptions` on a file in `dir`.
fn every_file_call(dir: &Path) {
    let path = dir.join("file-calls");
    let mut file = File::create(&path).unwrap();
    file.write_all(b"hello, ").unwrap();
    assert_eq!(file.write(b"world").unwrap(), 5);
    let written = file
        .write_vectored(&[IoSlice::new(b"!"), IoSlice::new(b"\n")])
        .unwrap();
    assert_eq!(written, 2);
    file.flush().unwrap();
    file.sync_all().unwrap();
    file.sync_data().unwrap();
    assert_eq!(file.metadata().unwrap().len(), 14);
    // Write-only: reading fails as std's does.
    assert!(file.read(&mut [0; 4]).is_err());

    let mut file = File::options().read(true).write(true).open(&path).unwrap();
    let mut hello = [0; 5];
    file.read_exact(&mut hello).unwrap();
    assert_eq!(&hello, b"hello");
    assert_eq!(file.stream_position().unwrap(), 5);
    assert_eq!(file.seek(SeekFrom::End(-2)).unwrap(), 12);
    let mut rest = Vec::new();
    assert_eq!(file.read_to_end(&mut rest).unwrap(), 2);
    assert_eq!(rest, b"!\n");
    file.rewind().unwrap();
    let (mut first, mut second) = ([0; 3], [0; 4]);
    let read = file
        .read_vectored(&mut [IoSliceMut::new(&mut first), IoSliceMut::new(&mut second)])
        .unwrap();
    assert_eq!((read, &first, &second), (7, b"hel", b"lo, "));
    let mut exact = [0; 100];
    assert_eq!(
        file.read_exact(&mut exact).unwrap_err().kind(),
        ErrorKind::UnexpectedEof
    );

    // `&File` reads, writes and seeks too, sharing the position.
    let shared = &file;
    (&*shared).seek(SeekFrom::Start(0)).unwrap();
    let mut text = String::new();
    (&*shared).read_to_string(&mut text).unwrap();
    assert_eq!(text, "hello, world!\n");
    (&*shared).write_all(b"more").unwrap();
    assert_eq!((&*shared).read(&mut [0; 4]).unwrap(), 0);

    file.set_len(5).unwrap();
    file.set_permissions(fs::Permissions::from_mode(0o600))
        .unwrap();
    assert_eq!(file.metadata().unwrap().permissions().mode() & 0o777, 0o600);
    let clone = file.try_clone().unwrap();
    assert_eq!((&clone).stream_position().unwrap(), 18);
    assert!(file.as_fd().try_clone_to_owned().is_ok());
    let std_file: std::fs::File = file.into_std();
    let mut file = File::from_std(std_file);
    file.rewind().unwrap();
    let mut text = String::new();
    file.read_to_string(&mut text).unwrap();
    assert_eq!(text, "hello");

    let mut appended = OpenOptions::new().append(true).open(&path).unwrap();
    appended.write_all(b" again").unwrap();
    assert_eq!(fs::read(&path).unwrap(), b"hello again");
    let exclusive = OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&path);
    assert_eq!(exclusive.unwrap_err().kind(), ErrorKind::AlreadyExists);
    assert_eq!(
        File::create_new(&path).unwrap_err().kind(),
        ErrorKind::AlreadyExists
    );
    assert_eq!(
        File::open(dir.join("no-such-file")).unwrap_err().kind(),
        ErrorKind::NotFound
    );
    let truncated = OpenOptions::new()
        .write(true)
        .truncate(true)
        .open(&path)
        .unwrap();
    assert_eq!(truncated.metadata().unwrap().len(), 0);
    let mut directory = File::open(dir).unwrap();
    assert_eq!(
        directory.read(&mut [0; 1]).unwrap_err().kind(),
        ErrorKind::IsADirectory
    );
    fs::remove_file(&path).unwrap();
}

#[test]
fn every_file_call_does_what_std_does_in_a_green_thread() {
    let dir = TempDir::new("file-calls");
    let path = dir.0.clone();
    fibra::run(move || every_file_call(&path));
}

/// Counts a ticker green thread's ticks: it yields after each, so it ticks
/// whenever the runtime has nothing else to run.
fn ticker(ticks: Rc<Cell<u64>>, stop: Rc<Cell<bool>>) -> fibra::JoinHandle<()> {
    fibra::spawn(move || {
        while !stop.get() {
            ticks.set(ticks.get() + 1);
            runtime::yield_now();
        }
    })
}

#[test]
fn a_ticker_keeps_ticking_through_a_ten_mib_write_and_read() {
    let dir = TempDir::new("ticker");
    let path = dir.join("ten-mib");
    let (during_write, during_read, during_std) = fibra::run(move || {
        let ticks = Rc::new(Cell::new(0));
        let stop = Rc::new(Cell::new(false));
        let ticker = ticker(ticks.clone(), stop.clone());
        runtime::yield_now();
        let data: Vec<u8> = (0..10 << 20).map(|i: u32| (i % 251) as u8).collect();

        let before = ticks.get();
        fs::write(&path, &data).unwrap();
        let during_write = ticks.get() - before;

        let before = ticks.get();
        let read = fs::read(&path).unwrap();
        let during_read = ticks.get() - before;
        assert!(read == data, "the 10 MiB came back changed");

        // The same read through std holds the runtime: not a tick.
        let before = ticks.get();
        assert_eq!(std::fs::read(&path).unwrap().len(), data.len());
        let during_std = ticks.get() - before;

        stop.set(true);
        ticker.join().unwrap();
        (during_write, during_read, during_std)
    });
    assert!(during_write > 0, "no tick during the write");
    assert!(during_read > 0, "no tick during the read");
    assert_eq!(during_std, 0);
}

#[test]
fn read_dir_lists_many_entries_in_batches() {
    const FILES: usize = 1000;
    let dir = TempDir::new("read-dir");
    let path = dir.0.clone();
    fibra::run(move || {
        for i in 0..FILES {
            fs::write(path.join(format!("{i:04}")), i.to_string()).unwrap();
        }
        fs::create_dir(path.join("sub")).unwrap();
        let ticks = Rc::new(Cell::new(0));
        let stop = Rc::new(Cell::new(false));
        let ticker = ticker(ticks.clone(), stop.clone());
        let mut names = Vec::new();
        let mut dirs = 0;
        for entry in fs::read_dir(&path).unwrap() {
            let entry = entry.unwrap();
            assert_eq!(entry.path(), path.join(entry.file_name()));
            if entry.file_type().unwrap().is_dir() {
                dirs += 1;
                assert!(entry.metadata().unwrap().is_dir());
                continue;
            }
            let name = entry.file_name().into_string().unwrap();
            let number: usize = name.parse().unwrap();
            assert_eq!(
                entry.metadata().unwrap().len(),
                number.to_string().len() as u64
            );
            names.push(number);
        }
        stop.set(true);
        ticker.join().unwrap();
        assert!(ticks.get() > 0, "the listing held the runtime");
        names.sort_unstable();
        assert_eq!(names, (0..FILES).collect::<Vec<_>>());
        assert_eq!(dirs, 1);
        assert_eq!(fs::read_dir(path.join("sub")).unwrap().count(), 0);
        let kind = |at: PathBuf| fs::read_dir(at).unwrap_err().kind();
        assert_eq!(kind(path.join("nothing")), ErrorKind::NotFound);
        assert_eq!(kind(path.join("0001")), ErrorKind::NotADirectory);
    });
}

#[test]
fn a_call_from_a_fiber_inside_a_green_thread_runs_in_place() {
    let dir = TempDir::new("in-fiber");
    let path = dir.join("file");
    fibra::run(move || {
        fs::write(&path, "in a generator").unwrap();
        // A generator is a fiber the green thread resumes: it cannot park
        // the green thread, so its calls run on the calling thread.
        let reads = fibra::Generator::new(move |out| {
            out.suspend(fs::read_to_string(&path).unwrap());
        });
        assert_eq!(reads.collect::<Vec<_>>(), ["in a generator"]);
    });
}

/// A stack frame with a buffer that a read borrows; when it is dropped (the
/// thread returns or unwinds), it records what the buffer holds then.
struct Frame {
    buf: [u8; 16],
    seen: Rc<RefCell<Option<[u8; 16]>>>,
}

impl Drop for Frame {
    fn drop(&mut self) {
        *self.seen.borrow_mut() = Some(self.buf);
    }
}

const PAYLOAD: &[u8; 16] = b"written at last!";

/// Lets the runtime's other threads run for a while (they have time to
/// misbehave, if they would).
fn let_others_run() {
    for _ in 0..10 {
        runtime::yield_now();
    }
    fibra::time::sleep(Duration::from_millis(20));
}

#[test]
fn a_cancel_waits_until_the_borrowed_read_has_ended() {
    without_hanging("a cancelled read from a FIFO", || {
        let fifo = Fifo::new("cancel", PAYLOAD);
        let path = fifo.path.clone();
        fibra::run(move || {
            let seen = Rc::new(RefCell::new(None));
            let reading = Rc::new(Cell::new(false));
            let reader = {
                let (seen, reading) = (seen.clone(), reading.clone());
                fibra::spawn(move || {
                    let mut file = File::open(&path).unwrap();
                    let mut frame = Frame { buf: [0; 16], seen };
                    reading.set(true);
                    // Waits on the pool until the FIFO's writer writes; then
                    // the cancel unwinds the thread (a return would fail the
                    // join's check below).
                    let _ = file.read(&mut frame.buf);
                })
            };
            while !reading.get() {
                runtime::yield_now();
            }
            // The reader parks in its read (it has not run since it said so).
            reader.cancel();
            let_others_run();
            assert!(!reader.is_finished(), "unwound while its read ran");
            assert!(
                seen.borrow().is_none(),
                "its frame is gone while its read ran"
            );
            fifo.write();
            assert!(matches!(reader.join(), Err(JoinError::Cancelled)));
            assert_eq!(seen.borrow().as_ref(), Some(PAYLOAD));
        });
    });
}

#[test]
fn a_timeout_waits_until_the_borrowed_read_has_ended() {
    without_hanging("a read from a FIFO under a timeout", || {
        let fifo = Fifo::new("timeout", PAYLOAD);
        let path = fifo.path.clone();
        fibra::run(move || {
            let seen = Rc::new(RefCell::new(None));
            let reading = Rc::new(Cell::new(false));
            let reader = {
                let (seen, reading) = (seen.clone(), reading.clone());
                fibra::spawn(move || {
                    let mut file = File::open(&path).unwrap();
                    let mut frame = Frame { buf: [0; 16], seen };
                    reading.set(true);
                    // Long enough that the read has surely begun when the
                    // deadline passes (a deadline passed before the hop is
                    // delivered before it: no read at all, which qemu and
                    // valgrind were slow enough to show with 1 ms).
                    fibra::time::timeout(Duration::from_millis(300), || file.read(&mut frame.buf))
                        .map(|read| read.unwrap())
                })
            };
            while !reading.get() {
                runtime::yield_now();
            }
            let_others_run();
            // Past the deadline, with the read still waiting for the FIFO.
            fibra::time::sleep(Duration::from_secs(1));
            assert!(
                !reader.is_finished(),
                "its deadline unwound it while its read ran"
            );
            assert!(
                seen.borrow().is_none(),
                "its frame is gone while its read ran"
            );
            fifo.write();
            // The read ended, after its deadline: `timeout` says so.
            assert!(reader.join().unwrap().is_err());
            assert_eq!(seen.borrow().as_ref(), Some(PAYLOAD));
        });
    });
}
