//! The `Date` header field, formatted once a second per OS thread rather
//! than once a response.

use std::cell::RefCell;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// The second last formatted, as the times it covers, and its field.
struct Cached {
    from: SystemTime,
    until: SystemTime,
    text: String,
}

thread_local! {
    static CACHE: RefCell<Cached> = const {
        RefCell::new(Cached { from: UNIX_EPOCH, until: UNIX_EPOCH, text: String::new() })
    };
}

/// Appends the `Date` field of the current time, CRLF included:
/// `date: Sun, 06 Nov 1994 08:49:37 GMT\r\n` (an HTTP-date).
pub(crate) fn push_field(out: &mut Vec<u8>) {
    let now = SystemTime::now();
    CACHE.with(|cache| {
        let mut cache = cache.borrow_mut();
        // Two comparisons a response; the second is worked out once a second
        // (or when the clock is set back).
        if !(cache.from <= now && now < cache.until) {
            let second = now.duration_since(UNIX_EPOCH).map_or(0, |t| t.as_secs());
            cache.from = UNIX_EPOCH + Duration::from_secs(second);
            cache.until = cache.from + Duration::from_secs(1);
            cache.text = format!("date: {}\r\n", httpdate::fmt_http_date(now));
        }
        out.extend_from_slice(cache.text.as_bytes());
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The HTTP-date in a field that `push_field` wrote.
    fn date_of(field: &[u8]) -> SystemTime {
        let text = std::str::from_utf8(field).unwrap();
        let date = text
            .strip_prefix("date: ")
            .and_then(|t| t.strip_suffix("\r\n"));
        httpdate::parse_http_date(date.unwrap()).unwrap()
    }

    #[test]
    fn an_http_date() {
        let mut out = Vec::new();
        push_field(&mut out);
        let _ = date_of(&out);
    }

    #[test]
    fn the_cached_date_is_of_the_second_now() {
        let before = SystemTime::now();
        let mut out = Vec::new();
        push_field(&mut out);
        let after = SystemTime::now();
        let sent = date_of(&out);
        let whole = |t: SystemTime| {
            UNIX_EPOCH + Duration::from_secs(t.duration_since(UNIX_EPOCH).unwrap().as_secs())
        };
        assert!(whole(before) <= sent && sent <= whole(after), "{sent:?}");
        CACHE.with(|cache| {
            let cache = cache.borrow();
            assert_eq!(
                cache.until.duration_since(cache.from).unwrap(),
                Duration::from_secs(1)
            );
            assert_eq!(date_of(cache.text.as_bytes()), cache.from);
        });
    }
}
