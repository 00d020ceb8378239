//! A checkpoint body (the decompressed graph image), decoded into a fresh catalog and graph state.

#![no_main]

use libfuzzer_sys::fuzz_target;
use plexus_storage::checkpoint::decode_body;
use plexus_storage::Catalog;

fuzz_target!(|data: &[u8]| {
    let _ = decode_body(data, &Catalog::new(), 1);
});
