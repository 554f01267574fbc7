//! [`Step`]: how a `resume` (or a `transfer`) came back — the fiber
//! suspended with a value, or returned one.

/// How a `resume` (or `transfer`) came back: the fiber suspended with a value, or
/// returned one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Step<Y, R> {
    /// The fiber called [`Yielder::suspend`](super::Yielder::suspend) with
    /// this value and can be resumed.
    Yield(Y),
    /// The fiber's closure returned this value; the fiber is dead.
    Return(R),
}

impl<Y, R> Step<Y, R> {
    /// The suspended value, if the fiber suspended.
    pub fn yielded(self) -> Option<Y> {
        match self {
            Step::Yield(y) => Some(y),
            Step::Return(_) => None,
        }
    }

    /// The returned value, if the fiber returned.
    pub fn returned(self) -> Option<R> {
        match self {
            Step::Yield(_) => None,
            Step::Return(r) => Some(r),
        }
    }
}
