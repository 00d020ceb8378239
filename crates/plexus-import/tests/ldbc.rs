//! The LDBC SNB CsvComposite layout: a small synthetic fixture in `tests/fixtures/ldbc` checks the mapping (labels,
//! types, typed properties, unique keys); the published tiny data set, when `PLEXUS_LDBC_TINY` names its
//! `vanilla` directory, checks the counts against the CSV files themselves.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use plexus_import::ldbc;
use plexus_import::load::{import_graph, GraphImport, Mode};
use plexus_import::progress::Progress;
use plexus_storage::{Direction, Store, TokenKind, TypeFilter, Value};

fn import(snb: &Path, db: &Path) -> plexus_import::import::ImportSummary {
    let layout = ldbc::layout(snb).unwrap();
    assert!(layout.notes.is_empty(), "{:?}", layout.notes);
    let spec = GraphImport {
        nodes: layout.nodes,
        relationships: layout.relationships,
        csv: ldbc::csv_options(),
        ..Default::default()
    };
    import_graph(db, &spec, &Progress::new()).unwrap_or_else(|e| panic!("{e}"))
}

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/ldbc")
}

#[test]
fn fixture_maps_like_the_reference_implementation() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("db");
    let summary = import(&fixture(), &db);
    assert_eq!((summary.nodes, summary.relationships), (20, 40));
    for key in ["Person(id)", "Message(id)", "City(id)", "Company(id)", "TagClass(id)"] {
        assert!(summary.unique_keys.iter().any(|k| k == key), "{key}: {:?}", summary.unique_keys);
    }
    let (store, _) = Store::open(&db).unwrap();
    let r = store.read();
    assert!(r.check().is_empty());
    let label = |name: &str| r.label_id(name).unwrap_or_else(|| panic!("label {name}"));
    let count = |name: &str| r.label_count(label(name));
    let counts: Vec<u64> = ["Person", "Forum", "Post", "Comment", "Message", "Tag", "TagClass", "Place"]
        .iter()
        .map(|l| count(l))
        .collect();
    assert_eq!(counts, [3, 2, 2, 2, 4, 3, 2, 4]);
    assert_eq!((count("City"), count("Country"), count("Continent")), (2, 1, 1));
    assert_eq!((count("Organisation"), count("Company"), count("University")), (2, 1, 1));

    let key = |name: &str| r.prop_key_id(name).unwrap_or_else(|| panic!("property {name}"));
    let ann = r.node_by_key(label("Person"), &Value::Int(100)).unwrap();
    assert_eq!(r.node_prop(ann, key("firstName")), Some(&Value::from("Ann")));
    assert_eq!(r.node_prop(ann, key("birthday")), Some(&Value::Int(631_152_000_000)));
    assert_eq!(r.node_prop(ann, key("language")), Some(&Value::from(vec!["de", "en"])));
    assert_eq!(r.node_prop(ann, key("email")), Some(&Value::from(vec!["ann@a.org", "ann@b.org"])));
    let cleo = r.node_by_key(label("Person"), &Value::Int(102)).unwrap();
    assert_eq!(r.node_prop(cleo, key("language")), None, "empty lists are absent");
    let post = r.node_by_key(label("Message"), &Value::Int(300)).unwrap();
    assert!(r.node_has_label(post, label("Post")));
    assert_eq!(r.node_prop(post, key("language")), Some(&Value::from("en")), "a post's language is one string");
    assert_eq!(r.node_prop(post, key("length")), Some(&Value::Int(10)));
    assert_eq!(r.node_prop(post, key("imageFile")), None);
    let berlin = r.node_by_key(label("City"), &Value::Int(2)).unwrap();
    assert!(r.node_has_label(berlin, label("Place")));
    assert_eq!(r.node_prop(berlin, key("name")), Some(&Value::from("Berlin")));
    assert!(r.prop_key_id("type").is_none(), "type becomes a label, as in the reference");

    let ty = |name: &str| r.type_id(name).unwrap_or_else(|| panic!("type {name}"));
    let bob = r.node_by_key(label("Person"), &Value::Int(101)).unwrap();
    let knows = r.rels_between(ann, bob, Direction::Out, TypeFilter::Only(&[ty("KNOWS")]));
    assert_eq!(r.rel_prop(knows[0].rel, key("creationDate")), Some(Value::Int(1_262_563_200_000)));
    let tu = r.node_by_key(label("University"), &Value::Int(1)).unwrap();
    let study = r.rels_between(ann, tu, Direction::Out, TypeFilter::Only(&[ty("STUDY_AT")]));
    assert_eq!(r.rel_prop(study[0].rel, key("classYear")), Some(Value::Int(2008)));
    let reply = r.node_by_key(label("Comment"), &Value::Int(401)).unwrap();
    let first = r.node_by_key(label("Comment"), &Value::Int(400)).unwrap();
    assert!(r.has_edge(reply, first, Direction::Out, TypeFilter::Only(&[ty("REPLY_OF")])));
    assert!(r.has_edge(first, post, Direction::Out, TypeFilter::Only(&[ty("REPLY_OF")])));
    assert_eq!(r.degree(berlin, Direction::Out, TypeFilter::Only(&[ty("IS_PART_OF")])), 1);
}

#[test]
fn fixture_loads_incrementally_into_an_empty_database() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("db");
    drop(Store::open(&db).unwrap());
    let layout = ldbc::layout(&fixture()).unwrap();
    let spec = GraphImport {
        nodes: layout.nodes,
        relationships: layout.relationships,
        csv: ldbc::csv_options(),
        mode: Mode::Incremental,
        batch_size: 7,
        ..Default::default()
    };
    let summary = import_graph(&db, &spec, &Progress::new()).unwrap();
    assert_eq!((summary.nodes, summary.relationships), (20, 40));
    // Again: every node is matched by its key, the relationships are added a second time.
    let again = import_graph(&db, &spec, &Progress::new()).unwrap();
    assert_eq!((again.nodes, again.matched, again.relationships), (0, 20, 40));
    let (store, _) = Store::open(&db).unwrap();
    assert_eq!((store.read().node_count(), store.read().rel_count()), (20, 80));
}

#[test]
fn missing_files_are_named() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::create_dir(tmp.path().join("static")).unwrap();
    std::fs::write(tmp.path().join("static/tag_0_0.csv"), "id|name|url\n").unwrap();
    let err = ldbc::layout(tmp.path()).err().unwrap();
    assert!(err.contains("no person_*_*.csv") && !err.contains(" tag_*_*.csv"), "{err}");
}

/// Rows of a CSV file (lines after the header).
fn rows(path: &Path) -> u64 {
    std::fs::read_to_string(path).unwrap().lines().count() as u64 - 1
}

#[test]
fn tiny_data_set_counts_match_the_csv_files() {
    let Some(dir) = std::env::var_os("PLEXUS_LDBC_TINY") else {
        eprintln!("skipped: set PLEXUS_LDBC_TINY to the LDBC SNB tiny data set's vanilla directory");
        return;
    };
    let dir = PathBuf::from(dir);
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("db");
    let summary = import(&dir, &db);
    // Expected counts straight from the files: rows per entity file, rows per relationship type.
    let mut labels: BTreeMap<&str, u64> = BTreeMap::new();
    let mut types: BTreeMap<String, u64> = BTreeMap::new();
    let entity =
        |f: &str| ["person", "forum", "post", "comment", "tag", "tagclass", "place", "organisation"].contains(&f);
    for sub in ["static", "dynamic"] {
        for entry in std::fs::read_dir(dir.join(sub)).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            let parts: Vec<&str> = name.trim_end_matches(".csv").split('_').collect();
            match parts.len() {
                3 if entity(parts[0]) => *labels.entry(leak(parts[0])).or_default() += rows(&path),
                5 => {
                    let upper: String = parts[1]
                        .chars()
                        .flat_map(|c| if c.is_uppercase() { vec!['_', c] } else { vec![c.to_ascii_uppercase()] })
                        .collect();
                    *types.entry(upper).or_default() += rows(&path);
                }
                _ => {}
            }
        }
    }
    assert_eq!(labels["person"], 222);
    assert_eq!(types["KNOWS"], 825);
    assert_eq!(summary.nodes, labels.values().sum::<u64>());
    assert_eq!(summary.relationships, types.values().sum::<u64>());
    let (store, _) = Store::open(&db).unwrap();
    let r = store.read();
    for (file, label) in [
        ("person", "Person"),
        ("forum", "Forum"),
        ("post", "Post"),
        ("comment", "Comment"),
        ("tag", "Tag"),
        ("tagclass", "TagClass"),
        ("place", "Place"),
        ("organisation", "Organisation"),
    ] {
        assert_eq!(r.label_count(r.label_id(label).unwrap()), labels[file], "{label}");
    }
    let mut per_type: BTreeMap<String, u64> = BTreeMap::new();
    let _ = r.visit_all_rels::<()>(|rel| {
        *per_type.entry(r.catalog().name(TokenKind::Type, rel.ty.0).unwrap().to_string()).or_default() += 1;
        std::ops::ControlFlow::Continue(())
    });
    assert_eq!(per_type, types);
    assert!(r.check().is_empty());
}

fn leak(s: &str) -> &'static str {
    Box::leak(s.to_string().into_boxed_str())
}
