//! The `Host` field's value (RFC 9112 §3.2): `uri-host [ ":" port ]`, as
//! RFC 3986 §3.2.2 writes a host. A server must refuse a request whose Host
//! is not one: a value such as `a b` may name another host to a proxy or a
//! cache than to the application.

use std::net::Ipv6Addr;

/// Whether `value` (leading and trailing whitespace aside) is a valid Host:
/// a reg-name (which covers IPv4 addresses), or an IPv6 or IPvFuture literal
/// in brackets, then maybe `:` and a port of digits. An empty value is valid:
/// it is what a client sends for a target without an authority.
pub(crate) fn is_valid(value: &[u8]) -> bool {
    let value = value.trim_ascii();
    let port = match value.strip_prefix(b"[") {
        Some(literal) => match literal.iter().position(|&b| b == b']') {
            Some(close) if is_ip_literal(&literal[..close]) => &literal[close + 1..],
            _ => return false,
        },
        // The name ends at the first byte that cannot be in one, which
        // must be the port's `:`.
        None => match reg_name_len(value) {
            Some(len) => &value[len..],
            None => return false,
        },
    };
    match port.split_first() {
        None => true,
        Some((&colon, digits)) => colon == b':' && digits.iter().all(u8::is_ascii_digit),
    }
}

/// The length of the `*( unreserved / pct-encoded / sub-delims )` that
/// `value` begins with, read in one pass; `None` if a `%` in it is not
/// followed by two hex digits.
fn reg_name_len(value: &[u8]) -> Option<usize> {
    let mut at = 0;
    loop {
        let rest = &value[at..];
        at += rest
            .iter()
            .position(|&b| !PLAIN[usize::from(b)])
            .unwrap_or(rest.len());
        match value[at..] {
            [b'%', high, low, ..] if high.is_ascii_hexdigit() && low.is_ascii_hexdigit() => at += 3,
            [b'%', ..] => return None,
            _ => return Some(at),
        }
    }
}

/// The bytes that stand for themselves in a reg-name, unreserved or
/// sub-delims: a table, so that every byte of a Host costs one look.
static PLAIN: [bool; 256] = {
    let mut table = [false; 256];
    let mut byte = 0;
    while byte < 256 {
        table[byte] = is_unreserved(byte as u8) || is_sub_delim(byte as u8);
        byte += 1;
    }
    table
};

/// What stands between the brackets of an IP-literal: an IPv6 address, or
/// `v` 1*HEXDIG "." 1*( unreserved / sub-delims / ":" ).
fn is_ip_literal(inner: &[u8]) -> bool {
    if let Some(future) = inner
        .strip_prefix(b"v")
        .or_else(|| inner.strip_prefix(b"V"))
    {
        let dot = future
            .iter()
            .position(|&b| b == b'.')
            .unwrap_or(future.len());
        let (version, rest) = future.split_at(dot);
        return !version.is_empty()
            && version.iter().all(u8::is_ascii_hexdigit)
            && rest.len() > 1
            && rest[1..]
                .iter()
                .all(|&b| is_unreserved(b) || is_sub_delim(b) || b == b':');
    }
    std::str::from_utf8(inner).is_ok_and(|text| text.parse::<Ipv6Addr>().is_ok())
}

const fn is_unreserved(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'.' | b'_' | b'~')
}

const fn is_sub_delim(byte: u8) -> bool {
    matches!(
        byte,
        b'!' | b'$' | b'&' | b'\'' | b'(' | b')' | b'*' | b'+' | b',' | b';' | b'='
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn valid_hosts() {
        for good in [
            &b""[..],
            b"example.com",
            b"example.com:8080",
            b"EXAMPLE.com:",
            b"127.0.0.1:80",
            b"[::1]",
            b"[::1]:8080",
            b"[2001:db8::7]",
            b"[v1.fe80::a+en1]",
            b"a%20b",
            b"a%41:80",
            b":80",
            b"sub-delims!$&'()*+,;=",
            b" localhost ",
        ] {
            assert!(is_valid(good), "{good:?}");
        }
    }

    #[test]
    fn the_table_holds_unreserved_and_sub_delims() {
        for byte in 0..=255u8 {
            let plain = byte.is_ascii_alphanumeric() || b"-._~!$&'()*+,;=".contains(&byte);
            assert_eq!(PLAIN[usize::from(byte)], plain, "{byte}");
        }
    }

    #[test]
    fn invalid_hosts() {
        for bad in [
            &b"a b"[..],
            b"a/b",
            b"a@b",
            b"a:b",
            b"a:80:80",
            b"a%2",
            b"a%zz",
            b"a%3:1",
            b"a:%41",
            b"[::1",
            b"[::1]x",
            b"[::1]:x",
            b"[example.com]",
            b"[v1]",
            b"[v.x]",
            b"::1",
            b"a\tb",
            b"\xc3\xa9",
            b"a?b",
            b"a#b",
        ] {
            assert!(!is_valid(bad), "{bad:?}");
        }
    }
}
