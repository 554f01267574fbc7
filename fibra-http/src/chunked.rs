//! The lines of a chunked body that are not data: the chunk-size line and the
//! trailer section's line endings (RFC 9112 §7.1).
//!
//! The chunk-size line is read here rather than by `httparse`, whose reader
//! lets any byte but CR through inside a chunk extension: a bare LF there
//! ends the line for a front-end that splits lines on LF, but not for
//! `httparse`, and the two then disagree on where the body ends — request
//! smuggling. This reader accepts exactly RFC 9112's grammar:
//!
//! ```text
//! chunk-line = chunk-size *( BWS ";" BWS chunk-ext-name [ BWS "=" BWS chunk-ext-val ] ) CRLF
//! chunk-size = 1*HEXDIG
//! chunk-ext-name = token
//! chunk-ext-val  = token / quoted-string
//! BWS = *( SP / HTAB )
//! ```
//!
//! so a bare LF, a CR not followed by LF, and every control byte but HTAB
//! (inside a quoted string) make the line malformed.

/// Why a chunk-size line was not read.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Unread {
    /// The line is not all there yet (what is there is well-formed so far).
    Partial,
    /// The line breaks the grammar, or its size does not fit in a `u64`.
    Malformed,
}

/// A chunk-size line, read.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct SizeLine {
    /// The bytes it takes, its CRLF included.
    pub len: usize,
    /// The chunk's size.
    pub size: u64,
    /// Its bytes other than the size's shortest form and the CRLF: leading
    /// zeros, extensions and the whitespace around them. They carry nothing,
    /// so a request may send only so many (CVE-2023-39326's lesson).
    pub extra: usize,
}

/// Reads the chunk-size line at the start of `data`. Extensions are checked
/// and dropped.
pub(crate) fn size_line(data: &[u8]) -> Result<SizeLine, Unread> {
    let mut line = Cursor { data, at: 0 };
    let mut size: u64 = 0;
    let mut digits = 0;
    while let Some(digit) = hex_value(line.peek()?) {
        size = size
            .checked_mul(16)
            .and_then(|s| s.checked_add(digit))
            .ok_or(Unread::Malformed)?;
        digits += 1;
        line.at += 1;
    }
    if digits == 0 {
        return Err(Unread::Malformed);
    }
    loop {
        match line.next()? {
            b'\r' => {
                line.expect(b'\n')?;
                let shortest = size.checked_ilog(16).map_or(1, |log| log as usize + 1);
                return Ok(SizeLine {
                    len: line.at,
                    size,
                    extra: line.at - 2 - shortest,
                });
            }
            // Whitespace only before a `;`: none ends the line.
            b' ' | b'\t' => {
                line.skip_whitespace()?;
                line.expect(b';')?;
                line.extension()?;
            }
            b';' => line.extension()?,
            _ => return Err(Unread::Malformed),
        }
    }
}

/// Whether `section` has an LF that is not the end of a CRLF: the trailer
/// section, like the chunk-size line, must end its lines with CRLF.
pub(crate) fn has_bare_lf(section: &[u8]) -> bool {
    section
        .iter()
        .enumerate()
        .any(|(i, &b)| b == b'\n' && (i == 0 || section[i - 1] != b'\r'))
}

/// A position in a line being read; running past the end of the data is
/// `Unread::Partial`.
struct Cursor<'a> {
    data: &'a [u8],
    at: usize,
}

impl Cursor<'_> {
    /// The next byte, not consumed.
    fn peek(&self) -> Result<u8, Unread> {
        self.data.get(self.at).copied().ok_or(Unread::Partial)
    }

    fn next(&mut self) -> Result<u8, Unread> {
        let byte = *self.data.get(self.at).ok_or(Unread::Partial)?;
        self.at += 1;
        Ok(byte)
    }

    fn expect(&mut self, wanted: u8) -> Result<(), Unread> {
        if self.next()? == wanted {
            Ok(())
        } else {
            Err(Unread::Malformed)
        }
    }

    /// BWS: spaces and tabs.
    fn skip_whitespace(&mut self) -> Result<(), Unread> {
        while matches!(self.peek()?, b' ' | b'\t') {
            self.at += 1;
        }
        Ok(())
    }

    /// One extension after its `;`: a name, and maybe `=` and a value.
    fn extension(&mut self) -> Result<(), Unread> {
        self.skip_whitespace()?;
        self.token()?;
        let after_name = self.at;
        self.skip_whitespace()?;
        if self.peek()? != b'=' {
            // The whitespace belongs to a next `;`, if any.
            self.at = after_name;
            return Ok(());
        }
        self.at += 1;
        self.skip_whitespace()?;
        if self.peek()? == b'"' {
            self.at += 1;
            self.quoted_rest()
        } else {
            self.token()
        }
    }

    /// `1*tchar`.
    fn token(&mut self) -> Result<(), Unread> {
        let from = self.at;
        while is_tchar(self.peek()?) {
            self.at += 1;
        }
        if self.at == from {
            return Err(Unread::Malformed);
        }
        Ok(())
    }

    /// The rest of a quoted string after its opening `"`: qdtext and
    /// quoted-pairs up to the closing `"`.
    fn quoted_rest(&mut self) -> Result<(), Unread> {
        loop {
            match self.next()? {
                b'"' => return Ok(()),
                b'\\' => {
                    if !is_quotable(self.next()?) {
                        return Err(Unread::Malformed);
                    }
                }
                byte if is_quotable(byte) => {}
                _ => return Err(Unread::Malformed),
            }
        }
    }
}

fn hex_value(byte: u8) -> Option<u64> {
    char::from(byte).to_digit(16).map(u64::from)
}

/// `tchar` (RFC 9110 §5.6.2).
fn is_tchar(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&byte)
}

/// What may stand in a quoted string, itself or after a backslash: HTAB, SP,
/// visible ASCII and obs-text — no other control byte (RFC 9110 §5.6.4).
fn is_quotable(byte: u8) -> bool {
    byte == b'\t' || byte == b' ' || byte.is_ascii_graphic() || byte >= 0x80
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The line's length and size.
    fn read(data: &[u8]) -> Result<(usize, u64), Unread> {
        size_line(data).map(|line| (line.len, line.size))
    }

    #[test]
    fn well_formed_lines() {
        assert_eq!(read(b"0\r\n"), Ok((3, 0)));
        assert_eq!(read(b"1aF\r\nrest"), Ok((5, 0x1af)));
        assert_eq!(read(b"5;a\r\n"), Ok((5, 5)));
        assert_eq!(
            size_line(b"5 ; a = b ;c=\"x \\\" y\"\r\n").map(|l| l.size),
            Ok(5)
        );
        assert_eq!(size_line(b"5\t;a=\"\t\xff\"\r\n").map(|l| l.size), Ok(5));
        assert_eq!(read(b"ffffffffffffffff\r\n"), Ok((18, u64::MAX)));
    }

    #[test]
    fn extra_bytes_are_all_but_the_shortest_size_and_the_crlf() {
        for (line, extra) in [
            (&b"0\r\n"[..], 0),
            (b"1aF\r\n", 0),
            (b"ffffffffffffffff\r\n", 0),
            (b"00\r\n", 1),
            (b"0001aF\r\n", 3),
            (b"5;a\r\n", 2),
            (b"10 ; name=\"value\"\r\n", 15),
        ] {
            assert_eq!(size_line(line).map(|l| l.extra), Ok(extra), "{line:?}");
        }
    }

    #[test]
    fn lines_not_all_there() {
        for partial in [
            &b""[..],
            b"5",
            b"5 ",
            b"5;",
            b"5;a",
            b"5;a=",
            b"5;a=\"x",
            b"5;a=\"\\",
            b"5\r",
        ] {
            assert_eq!(read(partial), Err(Unread::Partial), "{partial:?}");
        }
    }

    #[test]
    fn malformed_lines() {
        for bad in [
            &b"\r\n"[..],
            b" 5\r\n",
            b"5 \r\n",
            b"zz\r\n",
            b"5\n",
            b"5;\n",
            b"3;\nabc",
            b"5;a\nb\r\n",
            b"5;a=\"\n\"\r\n",
            b"5\rx",
            b"5;\r\n",
            b"5;=x\r\n",
            b"5;a=\r\n",
            b"5;a b\r\n",
            b"5;a=b c\r\n",
            b"5;a \r\n",
            b"5;a=b \r\n",
            b"5;a=\"x\x01\"\r\n",
            b"5;a\x00\r\n",
            b"5;a=\"\\\x7f\"\r\n",
            b"5,a\r\n",
            b"10000000000000000\r\n",
        ] {
            assert_eq!(read(bad), Err(Unread::Malformed), "{bad:?}");
        }
    }

    #[test]
    fn bare_line_feeds() {
        assert!(!has_bare_lf(b"X-A: 1\r\n\r\n"));
        assert!(has_bare_lf(b"X-A: 1\n\r\n"));
        assert!(has_bare_lf(b"\n"));
        assert!(has_bare_lf(b"X-A: 1\r\n\n"));
    }
}
