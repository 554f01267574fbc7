//! The path parameters a [`Router`](crate::Router) found for the route it
//! picked, kept in the request while that route's handler runs.

use std::ops::Range;

/// Each parameter's name, copied into one buffer that is kept from request
/// to request, and its value, a range of the request's path: so reading
/// parameters allocates nothing once the buffers have grown to size.
#[derive(Default)]
pub(crate) struct Params {
    names: String,
    /// (where the name is in `names`, where the value is in the path)
    list: Vec<(Range<usize>, Range<usize>)>,
}

impl Params {
    pub(crate) fn push(&mut self, name: &str, value: Range<usize>) {
        let start = self.names.len();
        self.names.push_str(name);
        self.list.push((start..self.names.len(), value));
    }

    /// Where the value of `name` is in the path: the last one pushed, so an
    /// inner router's parameter hides an outer one's of the same name.
    pub(crate) fn get(&self, name: &str) -> Option<Range<usize>> {
        self.list
            .iter()
            .rev()
            .find(|(n, _)| &self.names[n.clone()] == name)
            .map(|(_, value)| value.clone())
    }

    /// How many there are: a mark to [`truncate`](Self::truncate) back to.
    pub(crate) fn len(&self) -> usize {
        self.list.len()
    }

    /// Forgets the parameters pushed since `len` was taken.
    pub(crate) fn truncate(&mut self, len: usize) {
        if let Some((name, _)) = self.list.get(len) {
            self.names.truncate(name.start);
        }
        self.list.truncate(len);
    }
}
