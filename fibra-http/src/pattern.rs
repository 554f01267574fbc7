//! A route's path with parameters — `/todos/:id`, `/files/*rest` — and
//! which of two such paths is the more specific.

use std::cmp::Ordering;
use std::ops::Range;

/// A route path with at least one `:name` or `*rest` segment (a path
/// without one is matched by comparing it whole, see [`Pattern::parse`]).
pub(crate) struct Pattern {
    /// The path as the route was given it, for messages.
    source: String,
    /// Its segments, between the slashes after the leading one.
    segments: Vec<Segment>,
}

enum Segment {
    /// Matches itself only.
    Fixed(String),
    /// `:name`: matches any one non-empty segment.
    Param(String),
    /// `*name` (or a bare `*`, unnamed), last: matches the rest of the
    /// path, empty or with slashes in it.
    Rest(Option<String>),
}

impl Segment {
    /// Lower is more specific.
    fn rank(&self) -> u8 {
        match self {
            Segment::Fixed(_) => 0,
            Segment::Param(_) => 1,
            Segment::Rest(_) => 2,
        }
    }
}

impl Pattern {
    /// The pattern in `path`, or `None` if it has no parameter (then it
    /// matches itself only: a plain path, or `*`).
    ///
    /// # Panics
    ///
    /// On a parameter without a name, a name used twice, or a `*` segment
    /// that is not the last.
    pub(crate) fn parse(path: &str) -> Option<Pattern> {
        let parts = path.strip_prefix('/')?;
        if !parts.split('/').any(|part| part.starts_with([':', '*'])) {
            return None;
        }
        let mut segments = Vec::new();
        let mut names: Vec<&str> = Vec::new();
        let mut parts = parts.split('/').peekable();
        while let Some(part) = parts.next() {
            let name = part.get(1..).filter(|name| !name.is_empty());
            let segment = match part.as_bytes().first() {
                Some(b'*') if parts.peek().is_some() => {
                    panic!("fibra-http: in route {path:?}, `{part}` is not the last segment")
                }
                Some(b'*') => Segment::Rest(name.map(str::to_string)),
                Some(b':') => {
                    let Some(name) = name else {
                        panic!("fibra-http: in route {path:?}, a `:` parameter has no name")
                    };
                    Segment::Param(name.to_string())
                }
                _ => Segment::Fixed(part.to_string()),
            };
            if let Some(name) = name.filter(|_| !matches!(segment, Segment::Fixed(_))) {
                if names.contains(&name) {
                    panic!("fibra-http: in route {path:?}, the parameter {name:?} is named twice");
                }
                names.push(name);
            }
            segments.push(segment);
        }
        Some(Pattern {
            source: path.to_string(),
            segments,
        })
    }

    /// The path as the route was given it.
    pub(crate) fn source(&self) -> &str {
        &self.source
    }

    /// Whether `path` matches; if it does, `found` has been told each named
    /// parameter and where its value is in `path` (borrowed from it, never
    /// copied). Nothing is allocated.
    pub(crate) fn matches(&self, path: &str, found: &mut impl FnMut(&str, Range<usize>)) -> bool {
        let Some(mut rest) = path.strip_prefix('/') else {
            return false;
        };
        let mut at = 1;
        for (i, segment) in self.segments.iter().enumerate() {
            let (part, next) = match rest.split_once('/') {
                Some((part, next)) => (part, Some(next)),
                None => (rest, None),
            };
            match segment {
                Segment::Rest(name) => {
                    if let Some(name) = name {
                        found(name, at..path.len());
                    }
                    return true;
                }
                Segment::Fixed(fixed) if part != fixed => return false,
                Segment::Fixed(_) => {}
                Segment::Param(_) if part.is_empty() => return false,
                Segment::Param(name) => found(name, at..at + part.len()),
            }
            match next {
                Some(next) => {
                    at += part.len() + 1;
                    rest = next;
                }
                None => return i + 1 == self.segments.len(),
            }
        }
        // The path has more segments than the pattern.
        false
    }

    /// Which of two patterns wins where both match a path: comparing their
    /// segments from the left, at the first that differs a fixed segment
    /// beats a `:param`, which beats a `*rest` (`Less` is the winner).
    /// `Equal` means the same shape (the same segments, whatever the
    /// parameters are named): the patterns match exactly the same paths.
    pub(crate) fn precedence(&self, other: &Pattern) -> Ordering {
        self.segments
            .iter()
            .zip(&other.segments)
            .map(|(a, b)| {
                a.rank().cmp(&b.rank()).then_with(|| match (a, b) {
                    (Segment::Fixed(a), Segment::Fixed(b)) => a.cmp(b),
                    _ => Ordering::Equal,
                })
            })
            .find(|order| order.is_ne())
            .unwrap_or_else(|| self.segments.len().cmp(&other.segments.len()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The parameters `pattern` finds in `path`, or `None` if it does not
    /// match.
    fn captures(pattern: &str, path: &str) -> Option<Vec<(String, String)>> {
        let pattern = Pattern::parse(pattern).expect("a pattern");
        let mut found = Vec::new();
        pattern
            .matches(path, &mut |name, value| {
                found.push((name.to_string(), path[value].to_string()))
            })
            .then_some(found)
    }

    fn pairs(list: &[(&str, &str)]) -> Option<Vec<(String, String)>> {
        Some(
            list.iter()
                .map(|(n, v)| (n.to_string(), v.to_string()))
                .collect(),
        )
    }

    #[test]
    fn plain_paths_are_not_patterns() {
        for path in ["/", "/hello", "/a/b", "*", "hello", "/a:b", "/a*", "/a/b:c"] {
            assert!(Pattern::parse(path).is_none(), "{path}");
        }
    }

    #[test]
    fn params_match_one_non_empty_segment() {
        let todo = "/todos/:id";
        assert_eq!(captures(todo, "/todos/7"), pairs(&[("id", "7")]));
        assert_eq!(captures(todo, "/todos/a%20b"), pairs(&[("id", "a%20b")]));
        assert_eq!(captures(todo, "/todos/"), None);
        assert_eq!(captures(todo, "/todos"), None);
        assert_eq!(captures(todo, "/todos/7/"), None);
        assert_eq!(captures(todo, "/todos/7/x"), None);
        assert_eq!(captures(todo, "/todo/7"), None);
        assert_eq!(captures(todo, "*"), None);
        assert_eq!(
            captures("/users/:user/todos/:id", "/users/ann/todos/3"),
            pairs(&[("user", "ann"), ("id", "3")])
        );
        assert_eq!(captures("/:a/:b", "/x/y"), pairs(&[("a", "x"), ("b", "y")]));
        assert_eq!(captures("/:a/:b", "//y"), None);
    }

    #[test]
    fn rest_matches_what_is_left_even_nothing() {
        let files = "/files/*path";
        assert_eq!(captures(files, "/files/a.txt"), pairs(&[("path", "a.txt")]));
        assert_eq!(captures(files, "/files/a/b/"), pairs(&[("path", "a/b/")]));
        assert_eq!(captures(files, "/files/"), pairs(&[("path", "")]));
        assert_eq!(captures(files, "/files"), None);
        assert_eq!(captures(files, "/filesx/a"), None);
        assert_eq!(captures("/static/*", "/static/app.js"), pairs(&[]));
        assert_eq!(captures("/*all", "/"), pairs(&[("all", "")]));
        assert_eq!(
            captures("/u/:id/*rest", "/u/5/a/b"),
            pairs(&[("id", "5"), ("rest", "a/b")])
        );
    }

    #[test]
    fn more_specific_segments_win_from_the_left() {
        let order = |a: &str, b: &str| {
            Pattern::parse(a)
                .unwrap()
                .precedence(&Pattern::parse(b).unwrap())
        };
        assert_eq!(order("/todos/:id", "/todos/*rest"), Ordering::Less);
        assert_eq!(order("/todos/*rest", "/todos/:id"), Ordering::Greater);
        assert_eq!(order("/a/b/*r", "/a/:x/c"), Ordering::Less);
        assert_eq!(order("/:x/b/c", "/a/*r"), Ordering::Greater);
        assert_eq!(order("/todos/:id", "/todos/:name"), Ordering::Equal);
        assert_eq!(order("/files/*", "/files/*path"), Ordering::Equal);
        assert_ne!(order("/a/:x", "/b/:x"), Ordering::Equal);
        assert_ne!(order("/a/:x", "/a/:x/:y"), Ordering::Equal);
    }

    #[test]
    #[should_panic(expected = "is not the last segment")]
    fn rest_is_last() {
        Pattern::parse("/a/*rest/b");
    }

    #[test]
    #[should_panic(expected = "has no name")]
    fn params_have_names() {
        Pattern::parse("/a/:/b");
    }

    #[test]
    #[should_panic(expected = "is named twice")]
    fn names_are_unique() {
        Pattern::parse("/a/:id/b/*id");
    }
}
