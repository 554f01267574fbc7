//! The HTTP versions the parser does not know. `httparse` reads only
//! `HTTP/1.0` and `HTTP/1.1`; RFC 9110 §2.5 asks more of a server: a later
//! 1.x is read as the highest 1.x it supports, and another major version is
//! refused with `505 HTTP Version Not Supported`. A version that is not
//! `HTTP/` DIGIT "." DIGIT (RFC 9112 §2.3) is no version at all: a malformed
//! request line.

/// What the version of a request line the parser refused is.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Unknown {
    /// `HTTP/1.x` with x ≥ 2, to be read as `HTTP/1.1`: the byte at this
    /// offset of the head is its minor digit.
    LaterMinor(usize),
    /// `HTTP/x.y` with a major version other than 1.
    OtherMajor,
    /// Not `HTTP/` DIGIT "." DIGIT.
    Malformed,
    /// Well-formed so far, but the line has not ended yet: read more.
    Partial,
}

/// Classifies the version of the request line at the start of `head`, which
/// the parser refused for its version (so the method and target before it,
/// each followed by one space, were well-formed). Empty lines before the
/// request line are skipped, as the parser skips them (RFC 9112 §2.2).
pub(crate) fn classify(head: &[u8]) -> Unknown {
    let is_line_end = |b: &u8| *b == b'\r' || *b == b'\n';
    let skipped = head.iter().take_while(|b| is_line_end(b)).count();
    let rest = &head[skipped..];
    let line_len = rest.iter().position(is_line_end).unwrap_or(rest.len());
    let (line, ended) = (&rest[..line_len], line_len < rest.len());
    let Some(at) = line
        .iter()
        .enumerate()
        .filter(|&(_, &b)| b == b' ')
        .nth(1)
        .map(|(i, _)| i + 1)
    else {
        return Unknown::Malformed;
    };
    let version = &line[at..];
    if !fits(version) {
        return Unknown::Malformed;
    }
    match *version {
        _ if !ended => Unknown::Partial,
        [.., major, b'.', minor] if version.len() == FORM.len() => match major {
            b'1' if minor >= b'2' => Unknown::LaterMinor(skipped + at + 7),
            // 1.0 and 1.1 the parser reads: not refused for their version.
            b'1' => Unknown::Malformed,
            _ => Unknown::OtherMajor,
        },
        _ => Unknown::Malformed,
    }
}

/// A version's form: `0` stands for a digit.
const FORM: &[u8] = b"HTTP/0.0";

/// Whether `version` is `HTTP/` DIGIT "." DIGIT, or the start of one.
fn fits(version: &[u8]) -> bool {
    version.len() <= FORM.len()
        && version.iter().zip(FORM).all(|(&byte, &form)| {
            if form == b'0' {
                byte.is_ascii_digit()
            } else {
                byte == form
            }
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions() {
        assert_eq!(classify(b"GET / HTTP/1.2\r\n"), Unknown::LaterMinor(13));
        assert_eq!(classify(b"GET /a HTTP/1.9\n"), Unknown::LaterMinor(14));
        assert_eq!(
            classify(b"\r\n\nGET / HTTP/1.2\r\n"),
            Unknown::LaterMinor(16)
        );
        assert_eq!(classify(b"GET / HTTP/2.0\r\n"), Unknown::OtherMajor);
        assert_eq!(classify(b"\r\nGET / HTTP/2.0\r\n"), Unknown::OtherMajor);
        assert_eq!(classify(b"PRI * HTTP/2.0\r\n"), Unknown::OtherMajor);
        assert_eq!(classify(b"GET / HTTP/0.9\r\n"), Unknown::OtherMajor);
        for bad in [
            &b"GET / HTTP/1.x\r\n"[..],
            b"GET / HTTP/1.10\r\n",
            b"GET / HTTP/1.2 \r\n",
            b"GET / HTTP/10.0\r\n",
            b"GET / HTTP/01.1\r\n",
            b"GET / HTTP/4294967295.255\r\n",
            b"GET / HTTP/4294967295",
            b"GET / HTTP/2\r\n",
            b"GET / HTTQ/1.1\r\n",
            b"GET / HTTP/x.0\r\n",
            b"GET /\r\n",
            b"\r\nGET /\r\n",
        ] {
            assert_eq!(classify(bad), Unknown::Malformed, "{bad:?}");
        }
    }

    #[test]
    fn a_version_not_all_there_is_read_on() {
        for partial in [
            &b"GET / HTTP/1.2"[..],
            b"GET / HTTP/2",
            b"PRI * HTTP/2.0",
            b"\r\nGET / HTTP/0.",
        ] {
            assert_eq!(classify(partial), Unknown::Partial, "{partial:?}");
        }
    }
}
