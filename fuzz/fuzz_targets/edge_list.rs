//! An edge-list file as `plexus import --edges` parses it: the first byte picks the declared format (delimiter,
//! header, id type, or detection), the rest is the file. Bad lines must come back as errors, never panics.

#![no_main]

use libfuzzer_sys::fuzz_target;
use plexus_import::edgelist::{parse, Delimiter, Format, IdType, VertexIds};

fuzz_target!(|data: &[u8]| {
    let Some((&choice, input)) = data.split_first() else { return };
    let format = Format {
        delimiter: [None, Some(Delimiter::Comma), Some(Delimiter::Tab), Some(Delimiter::Space)][(choice & 3) as usize],
        header: [None, Some(false), Some(true), None][((choice >> 2) & 3) as usize],
        id_type: [None, Some(IdType::Integer), Some(IdType::String), None][((choice >> 4) & 3) as usize],
    };
    let Ok(list) = parse(input, &format, (choice >> 6) as usize) else { return };
    // Vertices are numbered densely, and string ids by first appearance (each edge's source before its target),
    // each name once.
    assert_eq!(list.src.len(), list.dst.len());
    let mut next = 0u32;
    for (&s, &d) in list.src.iter().zip(&list.dst) {
        for v in [s, d] {
            assert!((v as usize) < list.vertices.len(), "vertex {v} of {}", list.vertices.len());
            if let VertexIds::String(_) = list.vertices {
                assert!(v <= next, "vertex {v} numbered before {next}");
                next += u32::from(v == next);
            }
        }
    }
    if let VertexIds::String(names) = &list.vertices {
        assert_eq!(next as usize, names.len(), "every name appears");
        let distinct: std::collections::HashSet<&str> = names.iter().map(|n| &**n).collect();
        // Names are distinct as bytes; two that differ only in invalid UTF-8 may show alike.
        assert!(distinct.len() == names.len() || names.iter().any(|n| n.contains('\u{fffd}')));
    }
});
