//! Where a TLS byte stream stands between records: a connection that has
//! sent part of a record has begun to send something, even though nothing of
//! it can be decrypted yet.

/// The length of a TLS record's header: content type (1 byte), legacy
/// version (2), length of what follows (2) (RFC 8446 §5.1, RFC 5246 §6.2).
const HEADER: usize = 5;

/// Follows the record boundaries of the bytes a client sends.
#[derive(Debug, Default)]
pub(crate) struct Records {
    /// The current record's header bytes seen so far (`HEADER` once whole).
    header: [u8; HEADER],
    header_seen: usize,
    /// The bytes of the current record still to come after its header.
    body_left: usize,
}

impl Records {
    /// Follows `bytes`, the next ones of the stream.
    pub(crate) fn follow(&mut self, mut bytes: &[u8]) {
        while !bytes.is_empty() {
            if self.header_seen < HEADER {
                let n = (HEADER - self.header_seen).min(bytes.len());
                self.header[self.header_seen..self.header_seen + n].copy_from_slice(&bytes[..n]);
                self.header_seen += n;
                bytes = &bytes[n..];
                if self.header_seen == HEADER {
                    self.body_left =
                        usize::from(u16::from_be_bytes([self.header[3], self.header[4]]));
                }
            } else {
                let n = self.body_left.min(bytes.len());
                self.body_left -= n;
                bytes = &bytes[n..];
            }
            if self.header_seen == HEADER && self.body_left == 0 {
                self.header_seen = 0;
            }
        }
    }

    /// Whether a record has begun to arrive and is not whole yet.
    pub(crate) fn is_partial(&self) -> bool {
        self.header_seen > 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A record of `len` bytes after its header.
    fn record(len: u16) -> Vec<u8> {
        let mut record = vec![23, 3, 3];
        record.extend_from_slice(&len.to_be_bytes());
        record.resize(HEADER + usize::from(len), 0xab);
        record
    }

    #[test]
    fn whole_records_leave_nothing_partial() {
        let mut records = Records::default();
        assert!(!records.is_partial());
        let mut stream = record(100);
        stream.extend(record(0));
        stream.extend(record(16_401));
        records.follow(&stream);
        assert!(!records.is_partial());
    }

    #[test]
    fn a_record_cut_anywhere_is_partial_until_its_last_byte() {
        let stream = [record(3), record(2)].concat();
        for cut in 1..stream.len() {
            let mut records = Records::default();
            records.follow(&stream[..cut]);
            assert_eq!(records.is_partial(), cut != 8, "cut at {cut}");
            records.follow(&stream[cut..]);
            assert!(!records.is_partial(), "cut at {cut}");
        }
    }

    #[test]
    fn a_byte_at_a_time() {
        let stream = record(7);
        let mut records = Records::default();
        for (i, byte) in stream.iter().enumerate() {
            records.follow(&[*byte]);
            assert_eq!(records.is_partial(), i + 1 < stream.len());
        }
    }
}
