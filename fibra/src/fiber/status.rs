//! [`Status`]: where a fiber is in its life, as its users see it (Ruby's
//! `Fiber#alive?`, Lua's `coroutine.status`).

/// Where a fiber is in its life (Ruby's `Fiber#alive?`, Lua's `coroutine.status`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Status {
    /// Made and not yet resumed (Lua: "suspended").
    Created,
    /// Suspended in [`Yielder::suspend`](super::Yielder::suspend): a
    /// [`Fiber::resume`](super::Fiber::resume) continues it (Lua:
    /// "suspended").
    Suspended,
    /// Suspended in [`Yielder::transfer`](super::Yielder::transfer): a
    /// transfer to it continues it (Ruby: a "transferring" fiber).
    Transferred,
    /// Running, or suspended while a fiber it resumed runs (Lua: "running" or
    /// "normal").
    Running,
    /// Returned, panicked or unwound by a drop (Lua: "dead").
    Dead,
}
