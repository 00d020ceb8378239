//! An edge-list file as `plexus import --edges` parses it: the first byte picks the declared format (delimiter,
//! header, id type, or detection), the rest is the file. Bad lines must come back as errors, never panics.

#![no_main]

use libfuzzer_sys::fuzz_target;
use plexus_import::edgelist::{parse, Delimiter, Format, IdType};

fuzz_target!(|data: &[u8]| {
    let Some((&choice, input)) = data.split_first() else { return };
    let format = Format {
        delimiter: [None, Some(Delimiter::Comma), Some(Delimiter::Tab), Some(Delimiter::Space)][(choice & 3) as usize],
        header: [None, Some(false), Some(true), None][((choice >> 2) & 3) as usize],
        id_type: [None, Some(IdType::Integer), Some(IdType::String), None][((choice >> 4) & 3) as usize],
    };
    let _ = parse(input, &format, (choice >> 6) as usize);
});
