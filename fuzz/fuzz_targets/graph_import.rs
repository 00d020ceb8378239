//! Node and relationship files as `plexus import --nodes/--relationships` reads them (Neo4j's offline-importer
//! layout: headers with `:ID`, `:START_ID`, typed columns, arrays). The first byte picks the options (delimiter,
//! id type, bad lines to skip); the rest is split at the first 0xFF byte into a node file and a relationship
//! file. An import must either fail with an error and leave no database behind, or build one that opens and
//! passes its own consistency check.

#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use plexus_import::edgelist::IdType;
use plexus_import::load::{import_graph, GraphImport};
use plexus_import::nodes_rels::{CsvOptions, NodeFiles, RelFiles};
use plexus_import::progress::Progress;

fn work_dir() -> &'static std::path::Path {
    static DIR: OnceLock<std::path::PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("plexus-fuzz-import-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("work dir");
        dir
    })
}

fuzz_target!(|data: &[u8]| {
    let Some((&choice, rest)) = data.split_first() else { return };
    let (node_text, rel_text) = match rest.iter().position(|&b| b == 0xFF) {
        Some(i) => (&rest[..i], &rest[i + 1..]),
        None => (rest, &[][..]),
    };
    let dir = work_dir();
    let (nodes, rels, db) = (dir.join("nodes.csv"), dir.join("rels.csv"), dir.join("db"));
    let _ = std::fs::remove_dir_all(&db);
    std::fs::write(&nodes, node_text).expect("node file");
    std::fs::write(&rels, rel_text).expect("relationship file");
    let csv = CsvOptions {
        delimiter: [b',', b'\t', b'|', b';'][(choice & 3) as usize],
        id_type: if choice & 4 == 0 { IdType::String } else { IdType::Integer },
        skip_bad_lines: ((choice >> 3) & 3) as usize,
        // Neo4j's field options, two at a time with the quote character.
        trim_strings: choice & 0x20 != 0,
        ignore_extra_columns: choice & 0x40 != 0,
        skip_bad_relationships: choice & 0x80 != 0,
        ignore_empty_strings: choice & 0x60 == 0x60,
        quote: if choice & 0xA0 == 0xA0 { b'\'' } else { b'"' },
        min_chunk: 16,
        ..Default::default()
    };
    let spec = GraphImport {
        nodes: vec![NodeFiles { files: vec![nodes], labels: vec!["N".into()], ..Default::default() }],
        relationships: if rel_text.is_empty() {
            Vec::new()
        } else {
            vec![RelFiles { files: vec![rels], rel_type: Some("R".into()), rewrite: None }]
        },
        csv,
        ..Default::default()
    };
    match import_graph(&db, &spec, &Progress::new()) {
        Ok(_) => {
            let (store, _) = plexus_storage::Store::open(&db).expect("an imported database opens");
            let problems = store.read().check();
            assert!(problems.is_empty(), "an imported database fails its check: {problems:?}");
        }
        // A failed import leaves nothing behind: no directory, or an empty one.
        Err(_) => assert!(std::fs::read_dir(&db).map_or(true, |mut d| d.next().is_none()), "a failed import left files"),
    }
});
