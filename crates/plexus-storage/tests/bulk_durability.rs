//! A bulk load is durable before it is visible: when its checkpoint cannot be written the store stays empty and
//! keeps opening, instead of holding a graph that the disk lacks and that later commits build on (their log
//! records would then not replay).

use plexus_storage::bulk::{build_edge_list, EdgeListGraph};
use plexus_storage::checkpoint::checkpoint_name;
use plexus_storage::*;

fn graph(store: &Store) -> EdgeListGraph {
    let (label, key, ty) = {
        let tx = store.write();
        (tx.label("N"), tx.prop_key("id"), tx.rel_type("E"))
    };
    let keys = (0..100).map(Value::Int).collect();
    let (src, dst) = ((0..99).collect(), (1..100).collect());
    EdgeListGraph { label, key, keys, ty, src, dst, weight: None }
}

#[test]
fn a_bulk_load_whose_checkpoint_fails_leaves_the_store_empty_and_openable() {
    let dir = tempfile::tempdir().unwrap();
    let (store, _) = Store::open(dir.path()).unwrap();
    let graph = graph(&store);
    // A directory where the checkpoint's temporary file goes: writing it fails, as on a full disk.
    for version in 0..4 {
        std::fs::create_dir(dir.path().join(format!("{}.tmp", checkpoint_name(version)))).unwrap();
    }
    assert!(store.load_bulk(build_edge_list(0, &graph).unwrap()).is_err());
    assert_eq!((store.read().node_count(), store.read().rel_count()), (0, 0), "nothing visible");
    // Commits go on, on the empty store, and replay after a reopen.
    let mut tx = store.write();
    let label = tx.label("M");
    tx.create_node(&[label], Vec::new()).unwrap();
    tx.commit().unwrap();
    // A checkpoint that fails the same way is counted, with its error, for whoever watches.
    assert!(store.checkpoint().is_err());
    let (failures, error) = store.checkpoint_failures();
    assert_eq!(failures, 1);
    assert!(error.unwrap().contains(".plx.tmp"));
    drop(store);
    for version in 0..4 {
        std::fs::remove_dir(dir.path().join(format!("{}.tmp", checkpoint_name(version)))).unwrap();
    }
    let (store, _) = Store::open(dir.path()).unwrap();
    assert_eq!((store.read().node_count(), store.read().rel_count()), (1, 0));
    assert!(store.read().check().is_empty());
    store.checkpoint().unwrap();
    assert_eq!(store.checkpoint_failures().0, 0);
    let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().flatten().map(|e| e.file_name()).collect();
    assert!(!left.iter().any(|n| n.to_string_lossy().ends_with(".tmp")), "{left:?}");
}

#[test]
fn a_bulk_load_is_on_disk_when_it_returns() {
    let dir = tempfile::tempdir().unwrap();
    let (store, _) = Store::open(dir.path()).unwrap();
    let graph = graph(&store);
    store.load_bulk(build_edge_list(0, &graph).unwrap()).unwrap();
    let mut tx = store.write();
    let label = tx.label("M");
    tx.create_node(&[label], Vec::new()).unwrap();
    tx.commit().unwrap();
    drop(store);
    let (store, _) = Store::open(dir.path()).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!((store.read().node_count(), store.read().rel_count()), (101, 99));
}

/// A bulk load is a new version, as a commit is (whatever caches reads by version must see the graph change),
/// also into a store emptied by deletes; the commits after it replay on reopen.
#[test]
fn a_bulk_load_advances_the_version_and_the_commits_after_it_replay() {
    let dir = tempfile::tempdir().unwrap();
    let (store, _) = Store::open(dir.path()).unwrap();
    let edges = graph(&store);
    let mut tx = store.write();
    let label = tx.label("M");
    let n = tx.create_node(&[label], Vec::new()).unwrap();
    tx.commit().unwrap();
    let mut tx = store.write();
    tx.delete_node(n).unwrap();
    tx.commit().unwrap();
    let emptied = store.read().version();
    store.load_bulk(build_edge_list(0, &edges).unwrap()).unwrap();
    let loaded = store.read().version();
    assert!(loaded > emptied, "the load kept version {emptied}");
    let mut tx = store.write();
    tx.create_node(&[label], Vec::new()).unwrap();
    tx.commit().unwrap();
    assert_eq!(store.read().version(), loaded + 1);
    drop(store);
    let (store, _) = Store::open(dir.path()).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!((store.read().node_count(), store.read().rel_count()), (101, 99));
    assert_eq!(store.read().version(), loaded + 1);
    // In memory the same.
    let store = Store::in_memory();
    let edges = graph(&store);
    let before = store.read().version();
    store.load_bulk(build_edge_list(0, &edges).unwrap()).unwrap();
    assert!(store.read().version() > before);
}

/// The indexes and constraints of an empty database hold over what a bulk load puts in it: built over the
/// loaded graph, with their names; a constraint the loaded graph breaks refuses the load (the caller then takes
/// the transactional path, which meets the constraint).
#[test]
fn a_bulk_load_keeps_the_schema_it_finds() {
    let store = Store::in_memory();
    let first = graph(&store);
    let mut tx = store.write();
    let (n, id, e, w) = (tx.label("N"), tx.prop_key("id"), tx.rel_type("E"), tx.prop_key("w"));
    tx.create_index(n, id).unwrap();
    tx.create_composite_unique(n, &[id, w], Some("id_w")).unwrap();
    tx.create_rel_index(e, w, None).unwrap();
    tx.commit().unwrap();
    store.load_bulk(build_edge_list(0, &first).unwrap()).unwrap();
    let s = store.read();
    assert_eq!((s.node_count(), s.index_len(n, id)), (100, Some(100)));
    assert!(s.composite_index_is_unique(n, &[id, w]));
    assert_eq!(s.composite_index_name(n, &[id, w]).as_deref(), Some("id_w"));
    assert_eq!(s.rel_indexes(), vec![(e, w)]);
    assert!(s.check().is_empty(), "{:?}", s.check());

    // A constraint the loaded graph breaks: refused, and nothing is loaded.
    let store = Store::in_memory();
    let mut graph = graph(&store);
    let mut tx = store.write();
    let (e, w) = (tx.rel_type("E"), tx.prop_key("w"));
    tx.create_rel_unique(e, w, None).unwrap();
    tx.commit().unwrap();
    graph.weight = Some((w, vec![1.0; 99]));
    let refused = store.load_bulk(build_edge_list(0, &graph).unwrap()).unwrap_err();
    assert!(refused.to_string().contains("schema"), "{refused}");
    assert_eq!(store.read().node_count(), 0);
    // Distinct values load.
    graph.weight = Some((w, (0..99).map(f64::from).collect()));
    store.load_bulk(build_edge_list(0, &graph).unwrap()).unwrap();
    assert!(store.read().rel_index_is_unique(e, w) && store.read().check().is_empty());
}
