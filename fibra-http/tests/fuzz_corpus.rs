//! Replays the fuzzer's corpus (`fuzz/corpus/request_reader/`): every input is
//! served without a panic, and what the server writes is well-formed HTTP.

use fibra_http::fuzzing::{check_written, serve_bytes};
use std::path::Path;

#[test]
fn every_corpus_input_gets_well_formed_responses() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/corpus/request_reader");
    let mut inputs = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let input = std::fs::read(&path).unwrap();
        let written = serve_bytes(&input);
        if let Err(why) = check_written(&written) {
            panic!(
                "{}: {why}\n{}",
                path.display(),
                String::from_utf8_lossy(&written)
            );
        }
        inputs += 1;
    }
    assert!(inputs >= 6, "the corpus is in {}", dir.display());
}

#[test]
fn the_seeds_are_answered_as_expected() {
    let answer = |input: &[u8]| String::from_utf8(serve_bytes(input)).unwrap();
    let get = answer(b"\x40GET / HTTP/1.1\r\nHost: x\r\n\r\n");
    assert!(get.starts_with("HTTP/1.1 200 OK\r\n") && get.ends_with("root\n"));
    // Pieces of one byte each reach the same answer.
    assert_eq!(
        answer(b"\x01GET / HTTP/1.1\r\nHost: x\r\n\r\n")[..17],
        get[..17]
    );
    let stalled = answer(b"\x85GET / HTTP/1.1\r\nHo");
    assert!(stalled.starts_with("HTTP/1.1 408 "), "{stalled}");
    // Stalling between requests is an idle connection: closed, no answer.
    let idle = answer(b"\x85GET / HTTP/1.1\r\nHost: x\r\n\r\n");
    assert_eq!(idle.matches("HTTP/1.1 ").count(), 1);
    let gzip = answer(b"\x20POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\n");
    assert!(gzip.starts_with("HTTP/1.1 501 "), "{gzip}");
}
