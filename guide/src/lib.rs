//! fibra's user's guide, as doc tests.
//!
//! The guide lives in `docs/guide/` as an [mdBook](https://rust-lang.github.io/mdBook/):
//! `mdbook build docs/guide` makes the book, one chapter a file of
//! `docs/guide/src/`. This crate includes each chapter as the documentation
//! of an empty module, so that `cargo test --workspace` (and
//! `cargo test -p fibra-guide`) compiles and runs every Rust example of the
//! guide as a doc test, against the fibra and fibra-http of this checkout,
//! with the cargo features the guide uses.
//!
//! Why both: `mdbook test` runs `rustdoc --test` on each chapter with no
//! `--extern` for the crates the examples use, only `-L` directories to look
//! in. An example that uses fibra, fibra-http, serde's derive or tokio then
//! needs a build of each of them in a `target/` directory found by hand, and
//! rustdoc refuses to choose (error E0464, "multiple candidates") as soon as
//! that directory holds two builds of one crate — which a workspace built
//! with different features, or a dependency in two versions, always does.
//! Cargo resolves and builds the dependencies of doc tests itself, so the
//! chapters are tested here, and mdBook only renders them.
//!
//! The crate is not published (`publish = false`) and has no code.

macro_rules! chapters {
    ($($(#[$doc:meta])* $name:ident = $file:literal;)*) => {
        $(
            $(#[$doc])*
            #[doc = include_str!(concat!("../../docs/guide/src/", $file))]
            pub mod $name {}
        )*
    };
}

chapters! {
    introduction = "introduction.md";
    getting_started = "getting-started.md";
    fibers = "fibers.md";
    green_threads = "green-threads.md";
    sharing = "sharing.md";
    ractors = "ractors.md";
    calling_other_code = "calling-other-code.md";
    http = "http.md";
    seeing_inside = "seeing-inside.md";
    coming_from = "coming-from.md";
    soundness = "soundness.md";
}

/// The repository's README, whose examples are tested with the guide's.
#[doc = include_str!("../../README.md")]
pub mod readme {}
