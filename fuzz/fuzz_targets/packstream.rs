//! Arbitrary bytes as one PackStream value: decoding must fail cleanly or produce a value that re-encodes to a
//! form decoding the same.

#![no_main]

use libfuzzer_sys::fuzz_target;
use plexus_server::packstream::{decode, Encoder};

fuzz_target!(|data: &[u8]| {
    if let Ok(value) = decode(data) {
        let mut e = Encoder::new();
        e.value(&value);
        let again = decode(&e.buf).expect("a re-encoded value decodes");
        // NaN never equals itself; compare the encodings instead.
        let mut e2 = Encoder::new();
        e2.value(&again);
        assert_eq!(e.buf, e2.buf);
    }
});
