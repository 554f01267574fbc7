//! What a parked green thread waits for, as its park site says when it parks
//! (one store into its task: see [`Scheduler::park_on`](super::scheduler::Scheduler::park_on)),
//! so that a [`dump`](super::dump()) can tell.

use std::fmt;
use std::time::Instant;

/// What a parked green thread waits for, in a [`dump`](super::dump()).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum WaitReason {
    /// [`park`](super::park): an [`Unparker`](super::Unparker) will wake it.
    Park,
    /// A socket operation: the socket's file descriptor, and which way.
    Socket {
        /// The socket's file descriptor.
        fd: i32,
        /// Whether it waits to read or to write.
        direction: SocketDirection,
    },
    /// [`time::sleep`](crate::time::sleep) until `deadline`.
    Sleep {
        /// When it wakes.
        deadline: Instant,
    },
    /// A [`sync::channel`](crate::sync::channel) receive.
    ChannelReceive,
    /// A send on a full bounded channel.
    ChannelSend,
    /// A [`select`](crate::sync::channel::Select) over channels.
    ChannelSelect,
    /// A green [`Mutex`](crate::sync::Mutex).
    Mutex,
    /// A green [`Condvar`](crate::sync::Condvar).
    Condvar,
    /// A read lock of an [`RwLock`](crate::sync::RwLock).
    RwLockRead,
    /// The write lock of an [`RwLock`](crate::sync::RwLock).
    RwLockWrite,
    /// Permits of a [`Semaphore`](crate::sync::Semaphore).
    Semaphore,
    /// A [`Barrier`](crate::sync::Barrier), for the rest of its threads.
    Barrier,
    /// [`Notify::notified`](crate::sync::Notify::notified).
    Notify,
    /// [`WaitGroup::wait`](crate::sync::WaitGroup::wait), for its counter to
    /// reach zero.
    WaitGroup,
    /// A [`OnceCell`](crate::sync::OnceCell) that another thread initialises.
    OnceCell,
    /// A [`broadcast`](crate::sync::broadcast) receive.
    BroadcastReceive,
    /// [`JoinHandle::join`](super::JoinHandle::join) of green thread `thread`.
    Join {
        /// The id of the thread it joins.
        thread: u64,
    },
    /// [`RemoteJoinHandle::join`](super::RemoteJoinHandle::join): a green
    /// thread spawned through a [`Handle`](super::Handle), of this runtime or
    /// another.
    RemoteJoin,
    /// [`scope`](super::scope): the threads spawned in it, to end.
    Scope,
    /// Work handed to the [`blocking`](crate::blocking()) pool.
    Blocking,
    /// A future under [`block_on`](crate::block_on()).
    BlockOn,
    /// A Ractor's [`receive`](crate::ractor::Context::receive): its mailbox is empty.
    RactorReceive,
    /// A Ractor's [`yield`](crate::ractor::Context::yield_value): nobody has taken
    /// the value from its outbox yet.
    RactorYield,
    /// [`Ractor::take`](crate::ractor::Ractor::take): the Ractor's outbox is empty.
    RactorTake,
    /// [`ractor::select`](crate::ractor::select) over several outboxes.
    RactorSelect,
    /// [`Ractor::join`](crate::ractor::Ractor::join).
    RactorJoin,
    /// [`Child::wait`](crate::process::Child::wait) on a child process's exit.
    ChildExit {
        /// The child's process id.
        pid: u32,
    },
}

/// Which way a socket wait goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SocketDirection {
    /// It waits for the socket to become readable (or to accept).
    Read,
    /// It waits for the socket to become writable (or to connect).
    Write,
}

impl WaitReason {
    /// Describes the reason as of `now` (a deadline is "due in" or "due …
    /// ago" from it): a dump says it as of when it was taken.
    pub(super) fn describe_at(&self, now: Instant) -> Described<'_> {
        Described { reason: self, now }
    }
}

/// A [`WaitReason`] described as of a moment.
pub(super) struct Described<'a> {
    reason: &'a WaitReason,
    now: Instant,
}

/// As of the moment it is printed.
impl fmt::Display for WaitReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.describe_at(Instant::now()).fmt(f)
    }
}

impl fmt::Display for Described<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let now = self.now;
        let until = |f: &mut fmt::Formatter<'_>, what: &str, deadline: &Instant| {
            if *deadline > now {
                write!(f, "{what} (due in {} ms)", (*deadline - now).as_millis())
            } else {
                write!(f, "{what} (due {} ms ago)", (now - *deadline).as_millis())
            }
        };
        match self.reason {
            WaitReason::Park => f.write_str("runtime::park"),
            WaitReason::Socket { fd, direction } => {
                let way = match direction {
                    SocketDirection::Read => "readable",
                    SocketDirection::Write => "writable",
                };
                write!(f, "socket fd {fd} to become {way}")
            }
            WaitReason::Sleep { deadline } => until(f, "sleep", deadline),
            WaitReason::ChannelReceive => f.write_str("channel receive"),
            WaitReason::ChannelSend => f.write_str("channel send (channel full)"),
            WaitReason::ChannelSelect => f.write_str("channel select"),
            WaitReason::Mutex => f.write_str("mutex lock"),
            WaitReason::Condvar => f.write_str("condvar wait"),
            WaitReason::RwLockRead => f.write_str("rwlock read"),
            WaitReason::RwLockWrite => f.write_str("rwlock write"),
            WaitReason::Semaphore => f.write_str("semaphore permits"),
            WaitReason::Barrier => f.write_str("barrier"),
            WaitReason::Notify => f.write_str("notify"),
            WaitReason::WaitGroup => f.write_str("wait group"),
            WaitReason::OnceCell => f.write_str("once cell (another thread initialises it)"),
            WaitReason::BroadcastReceive => f.write_str("broadcast receive"),
            WaitReason::Join { thread } => write!(f, "join of green thread #{thread}"),
            WaitReason::RemoteJoin => {
                f.write_str("join of a green thread spawned through a Handle")
            }
            WaitReason::Scope => f.write_str("the threads of a scope to end"),
            WaitReason::Blocking => f.write_str("the blocking pool"),
            WaitReason::BlockOn => f.write_str("block_on future"),
            WaitReason::RactorReceive => f.write_str("Ractor mailbox (receive)"),
            WaitReason::RactorYield => f.write_str("Ractor outbox (yield, for a taker)"),
            WaitReason::RactorTake => f.write_str("Ractor outbox (take)"),
            WaitReason::RactorSelect => f.write_str("Ractor select"),
            WaitReason::RactorJoin => f.write_str("Ractor join"),
            WaitReason::ChildExit { pid } => write!(f, "child process {pid} to exit"),
        }
    }
}
