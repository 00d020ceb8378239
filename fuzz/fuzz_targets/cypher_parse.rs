//! Arbitrary text through the openCypher lexer and parser: an error with a position inside the text, or a
//! statement; never a panic.

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    if let Err(e) = plexus_cypher::parser::parse(text) {
        if let Some(p) = e.position {
            assert!(p.offset <= text.len(), "error position past the end of the query");
        }
    }
});
