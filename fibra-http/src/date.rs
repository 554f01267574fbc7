//! The `Date` header's value, formatted once a second per OS thread rather
//! than once a response.

use std::cell::RefCell;
use std::time::{SystemTime, UNIX_EPOCH};

thread_local! {
    /// The second last formatted, and its text.
    static CACHE: RefCell<(u64, String)> = const { RefCell::new((u64::MAX, String::new())) };
}

/// Appends the current time as an HTTP-date (`Sun, 06 Nov 1994 08:49:37 GMT`).
pub(crate) fn push_now(out: &mut Vec<u8>) {
    let now = SystemTime::now();
    let second = now
        .duration_since(UNIX_EPOCH)
        .map_or(0, |since| since.as_secs());
    CACHE.with(|cache| {
        let mut cache = cache.borrow_mut();
        if cache.0 != second {
            *cache = (second, httpdate::fmt_http_date(now));
        }
        out.extend_from_slice(cache.1.as_bytes());
    });
}

#[cfg(test)]
mod tests {
    #[test]
    fn an_http_date() {
        let mut out = Vec::new();
        super::push_now(&mut out);
        let text = String::from_utf8(out).unwrap();
        assert!(httpdate::parse_http_date(&text).is_ok(), "{text}");
    }
}
