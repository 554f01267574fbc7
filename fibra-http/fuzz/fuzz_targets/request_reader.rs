//! Feeds arbitrary bytes to fibra-http's connection as a client would send
//! them, in pieces of the size the first byte says; see `fibra_http::fuzzing`.

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|input: &[u8]| {
    let written = fibra_http::fuzzing::serve_bytes(input);
    if let Err(why) = fibra_http::fuzzing::check_written(&written) {
        panic!("the server wrote something malformed: {why}");
    }
});
