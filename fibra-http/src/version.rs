//! The HTTP versions the parser does not know. `httparse` reads only
//! `HTTP/1.0` and `HTTP/1.1`; RFC 9110 §2.5 asks more of a server: a later
//! 1.x is read as the highest 1.x it supports, and another major version is
//! refused with `505 HTTP Version Not Supported`.

/// What the version of a request line the parser refused is.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Unknown {
    /// `HTTP/1.x` with x ≥ 2, to be read as `HTTP/1.1`: the byte at this
    /// offset of the head is its minor digit.
    LaterMinor(usize),
    /// `HTTP/x.y` with a major version other than 1 (only its first digit
    /// need have arrived).
    OtherMajor,
    /// Not `HTTP/` DIGIT "." DIGIT.
    Malformed,
}

/// Classifies the version of the request line at the start of `head`, which
/// the parser refused for its version (so the method and target before it,
/// each followed by one space, were well-formed).
pub(crate) fn classify(head: &[u8]) -> Unknown {
    let line = head
        .split(|&b| b == b'\r' || b == b'\n')
        .next()
        .unwrap_or_default();
    let Some(at) = line
        .iter()
        .enumerate()
        .filter(|&(_, &b)| b == b' ')
        .nth(1)
        .map(|(i, _)| i + 1)
    else {
        return Unknown::Malformed;
    };
    match line[at..] {
        [b'H', b'T', b'T', b'P', b'/', b'1', b'.', minor]
            if minor.is_ascii_digit() && minor >= b'2' =>
        {
            Unknown::LaterMinor(at + 7)
        }
        [b'H', b'T', b'T', b'P', b'/', major, ..] if major.is_ascii_digit() && major != b'1' => {
            Unknown::OtherMajor
        }
        _ => Unknown::Malformed,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions() {
        assert_eq!(classify(b"GET / HTTP/1.2\r\n"), Unknown::LaterMinor(13));
        assert_eq!(classify(b"GET /a HTTP/1.9"), Unknown::LaterMinor(14));
        assert_eq!(classify(b"GET / HTTP/2.0\r\n"), Unknown::OtherMajor);
        assert_eq!(classify(b"PRI * HTTP/2"), Unknown::OtherMajor);
        assert_eq!(classify(b"GET / HTTP/0.9\r\n"), Unknown::OtherMajor);
        for bad in [
            &b"GET / HTTP/1.x\r\n"[..],
            b"GET / HTTP/1.10\r\n",
            b"GET / HTTP/1.2 \r\n",
            b"GET / HTTP/10.0\r\n",
            b"GET / HTTQ/1.1\r\n",
            b"GET / HTTP/x.0\r\n",
            b"GET /\r\n",
        ] {
            assert_eq!(classify(bad), Unknown::Malformed, "{bad:?}");
        }
    }
}
