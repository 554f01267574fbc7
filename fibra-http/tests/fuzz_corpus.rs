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
    let routed = answer(b"\x40GET /p/x%20y/a/b?q=a+b&c=%C3%A9&d HTTP/1.1\r\nHost: x\r\n\r\n");
    assert!(
        routed.ends_with("Some(\"x%20y\") Some(\"a/b\") [\"q=a b\", \"c=é\", \"d=\"]\n"),
        "{routed}"
    );
}

/// The inputs of the defects an outside review found (issue 25), kept in
/// the corpus, get the answers the crate docs list.
#[test]
fn the_review_cases_are_answered_as_documented() {
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/corpus/request_reader");
    let answer = |name: &str| {
        let input = std::fs::read(corpus.join(name)).unwrap();
        String::from_utf8_lossy(&serve_bytes(&input)).into_owned()
    };
    let statuses = |name: &str| -> Vec<String> {
        let written = answer(name);
        written
            .match_indices("HTTP/1.1 ")
            .map(|(at, _)| written[at + 9..at + 12].to_string())
            .collect()
    };
    // N1: the answer to GET, then 408 for the body that stalls.
    for name in [
        "8d197b88ffa13f01f4d4047e13e26528bc245c7e",
        "9ed512ddb1e109d206c74841aad679ec60c4435c",
    ] {
        assert_eq!(statuses(name), ["200", "408"], "{name}");
    }
    // N2: a streamed body to HTTP/1.0, as it is, and the connection closes.
    let streamed = answer("825f5b8e6842acae67190ebc7a68cea749a52430");
    assert!(!streamed.contains("transfer-encoding"), "{streamed}");
    assert!(streamed.contains("connection: close\r\n"), "{streamed}");
    assert!(streamed.ends_with("\r\n\r\nstreamed body"), "{streamed}");
    for (name, status) in [
        // N3: two Host lines in HTTP/1.0.
        ("ef35be7a11e9347a0f712cefbba169e23c9b9f5d", "400"),
        // N4: a chunk line over 1 KiB; 20 KB of extensions or leading zeros.
        ("539f126d82a4944a4d2a209a46d47cb174559f29", "400"),
        ("12aaac7cd04b92f9f5fa498eadfb45d8af77ba93", "400"),
        ("0f616a9971cabe7bba8570446d5474d25182e76a", "400"),
        // HTTP/01.1, HTTP/4294967295.255; HTTP/1.2 and HTTP/2.0 after an
        // empty line (the second a byte at a time).
        ("0dd87d774556d4970c6dbaedac00397948efc47a", "400"),
        ("04daa42cd9eaad2568740a9cae1e908890f725ad", "400"),
        ("31c2ab39c28215edbf01af9db629913611f737e0", "200"),
        ("e71e6cdde4bdc5d187c47f08b3e19196c89cbb4e", "505"),
        // GET hello, GET *, an authority with userinfo.
        ("d508d82991a94b9a16fb2954c0e3a88ccdced2c1", "400"),
        ("a55ef4576286b76a1133ce9a10c377a2bacd11c8", "400"),
        ("e322305baec2e5793806507f4219560648a15bb6", "400"),
    ] {
        assert_eq!(statuses(name), [status], "{name}");
    }
}

/// Streamed request bodies (the router's `/upload` reads its body as it
/// arrives): chunk extensions, trailers, bare LFs and chunk sizes too large,
/// kept in the corpus, get the answers the crate docs list, as a body read
/// whole does.
#[test]
fn streamed_bodies_are_answered_as_documented() {
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/corpus/request_reader");
    for (what, name, statuses, shows) in [
        (
            "extensions",
            "af57b1c411e386f1e01587595916e2724b0d6e46",
            &["200"][..],
            "hello world",
        ),
        (
            "extensions, a byte at a time",
            "5651f7f35e014511da163b041ba03069c68593dd",
            &["200"][..],
            "hello world",
        ),
        (
            "trailers, then a pipelined request",
            "3e23c831282b6163aacfb400364feb6a14933ee3",
            &["200", "200"][..],
            "abc",
        ),
        (
            "bare LF after a chunk size",
            "953864bb3e6cd0040bf20daeb2477a11097673b8",
            &["400"][..],
            "malformed chunk size line",
        ),
        (
            "bare LF after chunk data",
            "a89f3119585c04d35518a8ecb0194b931e92f367",
            &["400"][..],
            "a chunk does not end with CRLF",
        ),
        (
            "bare LF in a trailer",
            "ea1d47ba2ee7d285ddbd7b66a66f2332a3d3b574",
            &["400"][..],
            "a trailer line does not end with CRLF",
        ),
        (
            "a chunk size past 64 bits",
            "7720e0e907b4a5de4da2a6ab50cedf900a662751",
            &["400"][..],
            "malformed chunk size line",
        ),
        (
            "a chunk over max_body_bytes",
            "3e231452179db4cca2136a98c4fdecdeb25f7643",
            &["413"][..],
            "too large",
        ),
        (
            "chunks that add up past max_body_bytes",
            "9517fa4fc7c6329dedb4232b823cfa6e4f798a5b",
            &["413"][..],
            "too large",
        ),
        (
            "a stalled length-framed upload",
            "ad81b7bfe48a93582974d6ca74a17ae9232c717a",
            &["408"][..],
            "did not arrive in time",
        ),
    ] {
        let input = std::fs::read(corpus.join(name)).unwrap();
        let written = String::from_utf8_lossy(&serve_bytes(&input)).into_owned();
        let answered: Vec<&str> = written
            .match_indices("HTTP/1.1 ")
            .map(|(at, _)| &written[at + 9..at + 12])
            .collect();
        assert_eq!(answered, statuses, "{what}: {written}");
        assert!(written.contains(shows), "{what}: {written}");
    }
}
