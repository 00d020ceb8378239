//! A run of encoded property values, read until the input is used up or a value fails to decode.

#![no_main]

use libfuzzer_sys::fuzz_target;
use plexus_storage::codec::Reader;

fuzz_target!(|data: &[u8]| {
    let mut r = Reader::new(data);
    while !r.is_empty() {
        let before = r.remaining();
        if r.value().is_err() {
            break;
        }
        assert!(r.remaining() < before, "a value consumed no bytes");
    }
});
