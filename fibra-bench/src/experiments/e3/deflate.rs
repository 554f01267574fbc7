//! E3 CPU's unit of work, shared by the driver (`cpu`) and fibra's child
//! (`fibra`): one deflate of the input.

use flate2::Compression;
use flate2::write::ZlibEncoder;
use std::io::Write;

/// The length of `input` deflated in the zlib format at the default level (6),
/// with flate2 on its zlib-rs backend. (Its default backend, miniz_oxide,
/// builds its compressor state on the stack in a debug build and overflows a
/// Ractor's 256 KiB stack.)
pub fn deflated_len(input: &[u8]) -> usize {
    let mut encoder = ZlibEncoder::new(Vec::with_capacity(input.len()), Compression::default());
    encoder
        .write_all(input)
        .expect("writing to a Vec does not fail");
    encoder
        .finish()
        .expect("writing to a Vec does not fail")
        .len()
}
