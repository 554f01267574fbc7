//! What a runtime's OS thread is doing, as another OS thread of the process
//! can tell ("blocked in futex (a std lock, condvar or channel?)", "running
//! (not in a system call)"): what the stall line and a dump of a busy
//! runtime add to who runs. A runtime records its OS thread here when it
//! starts (in its [`Monitor`](super::registry::Monitor)); the observers ask
//! it later, from their own OS threads. One file per system: Linux reads
//! `/proc`, the others cannot tell.

#[cfg(target_os = "linux")]
mod linux;
#[cfg(target_os = "linux")]
pub(crate) use linux::OsThread;
#[cfg(not(target_os = "linux"))]
mod other;
#[cfg(not(target_os = "linux"))]
pub(crate) use other::OsThread;
