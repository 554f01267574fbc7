//! The `Date` header field, formatted once a second per OS thread rather
//! than once a response.

use std::cell::RefCell;
use std::io::Write;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// The field's length: `date: `, an IMF-fixdate (always 29 bytes, RFC 9110
/// §5.6.7), CRLF. Of a length known at compile time, the field is copied in
/// place rather than by a call to `memcpy`.
const FIELD_LEN: usize = 6 + 29 + 2;

/// The second last formatted, as the times it covers, and its field.
struct Cached {
    from: SystemTime,
    until: SystemTime,
    field: [u8; FIELD_LEN],
}

thread_local! {
    static CACHE: RefCell<Cached> = const {
        RefCell::new(Cached { from: UNIX_EPOCH, until: UNIX_EPOCH, field: [0; FIELD_LEN] })
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
            let date = httpdate::HttpDate::from(now);
            // Fills the field exactly: httpdate writes every part of the
            // date with a fixed number of digits.
            let _ = write!(&mut cache.field[..], "date: {date}\r\n");
        }
        out.extend_from_slice(&cache.field);
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
            assert_eq!(date_of(&cache.field), cache.from);
        });
    }
}
