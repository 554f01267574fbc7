//! How much stack a parked green thread really uses: one thread parked in each
//! kind of wait, compacted, and the bytes each kept (its saved stack pointer
//! to the top of its stack) as a dump reports them. This is the memory a
//! compacted parked thread holds for its stack, on the heap, instead of the
//! page or more it holds uncompacted.
//!
//! ```text
//! cargo run -p fibra --release --example parked_stack
//! ```

use fibra::net::{TcpListener, TcpStream};
use fibra::runtime::{self, Builder, RuntimeState, ThreadBuilder};
use fibra::sync::{Mutex, channel};
use std::io::Read;
use std::rc::Rc;
use std::time::Duration;

fn main() {
    // SAFETY: no green thread here lends its stack to another OS thread.
    let builder = unsafe { Builder::new().compact_parked_after(Some(Duration::ZERO)) };
    builder.run(|| {
        let named = |name: &str| ThreadBuilder::new().name(name);
        let (_tx, rx) = channel::unbounded::<u64>();
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let client = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let (mut server, _) = listener.accept().unwrap();
        let lock = Rc::new(Mutex::new(()));
        let held = lock.lock();
        let threads = [
            named("park").spawn(runtime::park).unwrap(),
            named("sleep")
                .spawn(|| fibra::time::sleep(Duration::from_secs(3600)))
                .unwrap(),
            named("channel recv")
                .spawn(move || rx.recv().map(drop).unwrap_or(()))
                .unwrap(),
            named("socket read")
                .spawn(move || drop(server.read(&mut [0; 64])))
                .unwrap(),
            named("mutex lock")
                .spawn({
                    let lock = lock.clone();
                    move || drop(lock.lock())
                })
                .unwrap(),
        ];
        (0..3).for_each(|_| runtime::yield_now());
        let dump = runtime::dump();
        let here = std::thread::current().id();
        let mine = dump.runtimes.iter().find(|r| r.os_thread_id == here);
        let Some(RuntimeState::Threads(listed)) = mine.map(|r| &r.state) else {
            panic!("this runtime is not in its dump:\n{dump}");
        };
        println!("bytes of stack used by a parked green thread (sp to top):");
        for thread in listed.iter().filter(|t| t.name.is_some()) {
            let bytes = thread
                .compacted
                .map_or("not compacted".into(), |b| b.to_string());
            println!("  {:<14} {bytes}", thread.name.as_deref().unwrap_or(""));
        }
        drop((held, client));
        threads.iter().for_each(|t| t.cancel());
    });
}
