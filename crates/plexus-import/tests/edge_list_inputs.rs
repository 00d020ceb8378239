//! Random and malformed edge-list files: the parser returns edges or a bad-line error, never panics, and whatever
//! it returns is consistent (one source and one target per edge, every vertex number in range). The cargo-fuzz
//! target `edge_list` explores the same space without bounds; this runs in CI.

use plexus_import::edgelist::{parse, Delimiter, Format, IdType, VertexIds};

/// Pieces lines are made of: numbers of every length around the 18-digit fast path, separators, line ends,
/// signs, comments, quotes and junk.
const PIECES: &[&str] = &[
    "1",
    "42",
    "007",
    "123456789012345678",
    "1234567890123456789",
    "12345678901234567890",
    "-5",
    "+6",
    ",",
    "\t",
    " ",
    "  ",
    "\n",
    "\r\n",
    "\r",
    "#",
    "# c\n",
    "\"",
    "x",
    "0.5",
    "1e3",
    "nan",
    ",,",
    "\u{e9}",
    "\0",
];

#[test]
fn random_edge_lists_parse_or_fail_cleanly() {
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let formats = [
        Format::default(),
        Format { delimiter: Some(Delimiter::Comma), id_type: Some(IdType::Integer), ..Format::default() },
        Format { delimiter: Some(Delimiter::Tab), id_type: Some(IdType::Integer), header: Some(false) },
        Format { delimiter: Some(Delimiter::Space), id_type: Some(IdType::String), ..Format::default() },
        Format { header: Some(true), ..Format::default() },
    ];
    for case in 0..3000 {
        let mut text = String::new();
        // Most cases are mostly valid lines, so the fast path and the fallback alternate within one chunk.
        let valid_share = next() % 4;
        for _ in 0..(next() % 40) {
            if next() % 4 < valid_share {
                text.push_str(&format!("{},{}\n", next() % 1000, next() % 1000));
            } else {
                for _ in 0..(next() % 6) {
                    text.push_str(PIECES[(next() % PIECES.len() as u64) as usize]);
                }
            }
        }
        let format = &formats[case % formats.len()];
        let skip = (next() % 3) as usize * 5;
        if let Ok(list) = parse(text.as_bytes(), format, skip) {
            assert_eq!(list.src.len(), list.dst.len(), "case {case}: {text:?}");
            let n = match &list.vertices {
                VertexIds::Integer(v) => v.len(),
                VertexIds::String(v) => v.len(),
            };
            assert!(list.src.iter().chain(&list.dst).all(|&v| (v as usize) < n), "case {case}: {text:?}");
            assert!(list.bad_lines.len() <= skip, "case {case}: more bad lines than allowed came back as Ok");
        }
    }
}
