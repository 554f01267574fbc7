//! Stack-overflow detection: a fault in a fiber's guard page is caught on an
//! alternate signal stack, reported as a fiber stack overflow, and the process
//! aborts — the same outcome Rust gives a thread that overflows its stack, and
//! never silent corruption.
//!
//! The handler must be async-signal-safe: it allocates nothing, takes no lock and
//! only reads atomics. It finds guard pages in a list of [`Registration`]s, one per
//! chunk of stacks, and hands every fault that is not in a guard page to the
//! handler that was installed before (Rust's own, which reports overflows of
//! thread stacks), or to the default action.
//!
//! A guard hit arrives as SIGSEGV on Linux and as SIGBUS on macOS (where an access
//! to a page mapped without permissions is a bus error); both are caught, with
//! the faulting address in `si_addr` on each.

use super::label::{self, Overflowed};
use std::mem::MaybeUninit;
use std::ptr;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicUsize, Ordering};

/// One chunk's geometry, as the signal handler sees it. Entries are never freed,
/// only cleared and reused, so the handler can walk the list at any moment.
struct Entry {
    /// Zero while the entry is free; written last when claimed.
    len: AtomicUsize,
    base: AtomicUsize,
    slot: AtomicUsize,
    guard: AtomicUsize,
    claimed: AtomicBool,
    next: AtomicPtr<Entry>,
}

static ENTRIES: AtomicPtr<Entry> = AtomicPtr::new(ptr::null_mut());

/// A chunk's entry in the list the signal handler reads; cleared when the chunk is
/// unmapped.
pub(super) struct Registration(&'static Entry);

impl Registration {
    /// Registers the chunk `[base, base + len)`, made of slots of `slot` bytes whose
    /// lowest `guard` bytes are a guard.
    pub(super) fn new(base: usize, len: usize, slot: usize, guard: usize) -> Registration {
        let entry = claim_entry();
        entry.base.store(base, Ordering::Relaxed);
        entry.slot.store(slot, Ordering::Relaxed);
        entry.guard.store(guard, Ordering::Relaxed);
        entry.len.store(len, Ordering::Release);
        Registration(entry)
    }

    /// Forgets the chunk (before it is unmapped).
    pub(super) fn clear(&self) {
        self.0.len.store(0, Ordering::Release);
        self.0.claimed.store(false, Ordering::Release);
    }
}

fn claim_entry() -> &'static Entry {
    let mut cursor = ENTRIES.load(Ordering::Acquire);
    while !cursor.is_null() {
        // SAFETY: entries are leaked boxes, never freed.
        let entry = unsafe { &*cursor };
        if entry
            .claimed
            .compare_exchange(false, true, Ordering::AcqRel, Ordering::Relaxed)
            .is_ok()
        {
            return entry;
        }
        cursor = entry.next.load(Ordering::Acquire);
    }
    let entry: &'static Entry = Box::leak(Box::new(Entry {
        len: AtomicUsize::new(0),
        base: AtomicUsize::new(0),
        slot: AtomicUsize::new(1),
        guard: AtomicUsize::new(0),
        claimed: AtomicBool::new(true),
        next: AtomicPtr::new(ptr::null_mut()),
    }));
    let mut head = ENTRIES.load(Ordering::Acquire);
    loop {
        entry.next.store(head, Ordering::Relaxed);
        let new = entry as *const Entry as *mut Entry;
        match ENTRIES.compare_exchange(head, new, Ordering::AcqRel, Ordering::Acquire) {
            Ok(_) => return entry,
            Err(now) => head = now,
        }
    }
}

/// A fault in a fiber's guard page: the stack slot it is in.
struct GuardHit {
    slot_start: usize,
    slot: usize,
    guard: usize,
}

/// If `addr` is in a fiber guard page, that fiber's slot.
fn guard_hit(addr: usize) -> Option<GuardHit> {
    let mut cursor = ENTRIES.load(Ordering::Acquire);
    while !cursor.is_null() {
        // SAFETY: entries are leaked boxes, never freed.
        let entry = unsafe { &*cursor };
        let len = entry.len.load(Ordering::Acquire);
        let base = entry.base.load(Ordering::Relaxed);
        if len != 0 && addr >= base && addr - base < len {
            let slot = entry.slot.load(Ordering::Relaxed);
            let guard = entry.guard.load(Ordering::Relaxed);
            let offset = (addr - base) % slot;
            return (offset < guard).then_some(GuardHit {
                slot_start: addr - offset,
                slot,
                guard,
            });
        }
        cursor = entry.next.load(Ordering::Acquire);
    }
    None
}

/// The actions that were installed for SIGSEGV and SIGBUS before fibra's.
static PREVIOUS: [OnceLock<libc::sigaction>; 2] = [OnceLock::new(), OnceLock::new()];
const SIGNALS: [libc::c_int; 2] = [libc::SIGSEGV, libc::SIGBUS];

/// Installs the handler for SIGSEGV and SIGBUS, once per process.
pub(super) fn install_handler() {
    // Miri runs no signal handler (and has no guard pages to hit): the pool's
    // bookkeeping runs without one there (scripts/miri.sh).
    if cfg!(miri) {
        return;
    }
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        for (signal, previous) in SIGNALS.iter().zip(&PREVIOUS) {
            // SAFETY: a zeroed sigaction is a valid value to fill in; the handler
            // is async-signal-safe (module docs) and runs on the alternate stack.
            unsafe {
                let mut action: libc::sigaction = std::mem::zeroed();
                action.sa_sigaction = on_fault as *const () as usize;
                action.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK;
                libc::sigemptyset(&mut action.sa_mask);
                let mut old = MaybeUninit::<libc::sigaction>::zeroed();
                if libc::sigaction(*signal, &action, old.as_mut_ptr()) == 0 {
                    let _ = previous.set(old.assume_init());
                }
            }
        }
    });
}

extern "C" fn on_fault(
    signal: libc::c_int,
    info: *mut libc::siginfo_t,
    context: *mut libc::c_void,
) {
    // SAFETY: the kernel passes a valid siginfo to an SA_SIGINFO handler.
    let addr = unsafe { (*info).si_addr() } as usize;
    if let Some(hit) = guard_hit(addr) {
        label::on_overflow(hit.slot_start, hit.slot_start + hit.slot, |who| {
            report_overflow(hit.slot - hit.guard, who);
        });
        // SAFETY: abort is async-signal-safe and does not return.
        unsafe { libc::abort() };
    }
    let index = SIGNALS.iter().position(|s| *s == signal).unwrap_or(0);
    let previous = PREVIOUS[index].get();
    match previous.map(|p| p.sa_sigaction) {
        None | Some(libc::SIG_DFL) | Some(libc::SIG_IGN) => {
            // Restore the default action and return: the faulting instruction runs
            // again and the kernel ends the process with the original signal.
            // SAFETY: resetting a signal's action to the default is always sound.
            unsafe { libc::signal(signal, libc::SIG_DFL) };
        }
        Some(handler) => {
            let flags = previous.map_or(0, |p| p.sa_flags);
            // SAFETY: `handler` is the previously installed handler, whose
            // signature is given by its SA_SIGINFO flag; it is called with the
            // arguments the kernel gave this one.
            unsafe {
                if flags & libc::SA_SIGINFO != 0 {
                    let f: extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut libc::c_void) =
                        std::mem::transmute(handler);
                    f(signal, info, context);
                } else {
                    let f: extern "C" fn(libc::c_int) = std::mem::transmute(handler);
                    f(signal);
                }
            }
        }
    }
}

/// The most bytes of a green thread's name an overflow report prints.
const MAX_NAME: usize = 128;

/// Writes the overflow message to stderr without allocating: who overflowed
/// a stack of `stack_size` usable bytes, and the setting that sizes it.
fn report_overflow(stack_size: usize, who: Overflowed<'_>) {
    let mut buf = [0u8; 512];
    let mut len = 0;
    let mut put = |bytes: &[u8]| {
        let n = bytes.len().min(buf.len() - len);
        buf[len..len + n].copy_from_slice(&bytes[..n]);
        len += n;
    };
    let mut digits = [0u8; 20];
    match who {
        Overflowed::GreenThread { id, name } => {
            put(b"\nfibra: fiber stack overflow: green thread ");
            if let Some(name) = name {
                put(b"'");
                // Cut so that a long name leaves room for the rest.
                put(&name[..name.len().min(MAX_NAME)]);
                put(b"' (#");
                put(decimal(id, &mut digits));
                put(b")");
            } else {
                put(b"#");
                put(decimal(id, &mut digits));
            }
            put(b" used all of its ");
            put(decimal(stack_size as u64 / 1024, &mut digits));
            put(
                b" KiB stack (set a larger one for every green thread of its runtime with \
                  fibra::runtime::Builder::stack_size, or for this thread with \
                  fibra::runtime::ThreadBuilder::stack_size)\n",
            );
        }
        Overflowed::Fiber => {
            put(b"\nfibra: fiber stack overflow: a fiber used all of its ");
            put(decimal(stack_size as u64 / 1024, &mut digits));
            put(b" KiB stack (set a larger one with fibra::fiber::Builder::stack_size)\n");
        }
    }
    put(b"fatal runtime error: fiber stack overflow, aborting\n");
    // SAFETY: write is async-signal-safe; buf[..len] is initialised.
    unsafe { libc::write(libc::STDERR_FILENO, buf.as_ptr().cast(), len) };
}

/// `n` in decimal, written at the end of `digits` (no allocation).
fn decimal(mut n: u64, digits: &mut [u8; 20]) -> &[u8] {
    let mut i = digits.len();
    loop {
        i -= 1;
        digits[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    &digits[i..]
}

/// An alternate signal stack that fibra installed for a thread that had none (Rust
/// gives one to threads it starts; threads started by C code may lack one).
pub(super) struct AltStack {
    base: *mut libc::c_void,
    len: usize,
}

impl AltStack {
    const SIZE: usize = 64 * 1024;

    /// Installs an alternate signal stack on this thread if it has none.
    pub(super) fn ensure() -> Option<AltStack> {
        if cfg!(miri) {
            return None; // as `install_handler`
        }
        // SAFETY: sigaltstack with a null new stack only reads the current one.
        let current = unsafe {
            let mut current = MaybeUninit::<libc::stack_t>::zeroed();
            libc::sigaltstack(ptr::null(), current.as_mut_ptr());
            current.assume_init()
        };
        if current.ss_flags & libc::SS_DISABLE == 0 {
            return None;
        }
        let page = super::page_size();
        let len = Self::SIZE + page;
        // SAFETY: a fresh anonymous mapping touches no existing memory.
        let base = unsafe {
            libc::mmap(
                ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | super::MAP_STACK,
                -1,
                0,
            )
        };
        if base == libc::MAP_FAILED {
            return None;
        }
        // SAFETY: the lowest page of the new mapping becomes its guard; the rest is
        // handed to the kernel as this thread's signal stack.
        unsafe {
            libc::mprotect(base, page, libc::PROT_NONE);
            let stack = libc::stack_t {
                ss_sp: base.cast::<u8>().add(page).cast(),
                ss_flags: 0,
                ss_size: Self::SIZE,
            };
            if libc::sigaltstack(&stack, ptr::null_mut()) != 0 {
                libc::munmap(base, len);
                return None;
            }
        }
        Some(AltStack { base, len })
    }
}

impl Drop for AltStack {
    fn drop(&mut self) {
        // SAFETY: disable the alternate stack before unmapping it; this runs at
        // thread exit, outside any signal handler.
        unsafe {
            let disable = libc::stack_t {
                ss_sp: ptr::null_mut(),
                ss_flags: libc::SS_DISABLE,
                ss_size: 0,
            };
            libc::sigaltstack(&disable, ptr::null_mut());
            libc::munmap(self.base, self.len);
        }
    }
}
