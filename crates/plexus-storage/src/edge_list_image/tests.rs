use proptest::prelude::*;

use super::*;
use crate::bulk::build_edge_list;
use crate::{Direction, NodeId, StorageError, Store, TypeFilter};

/// An edge list over `keys`, with `ends` as (source, target) pairs and optionally a weight per edge.
fn edge_list(catalog: &Catalog, keys: Vec<Value>, ends: &[(u32, u32)], weights: bool) -> EdgeListGraph {
    EdgeListGraph {
        label: catalog.label("Node"),
        key: catalog.prop_key("id"),
        keys,
        ty: catalog.rel_type("EDGE"),
        src: ends.iter().map(|e| e.0).collect(),
        dst: ends.iter().map(|e| e.1).collect(),
        weight: weights.then(|| (catalog.prop_key("weight"), (0..ends.len()).map(|i| i as f64 * 0.5).collect())),
    }
}

fn clone(g: &EdgeListGraph) -> EdgeListGraph {
    EdgeListGraph { keys: g.keys.clone(), src: g.src.clone(), dst: g.dst.clone(), weight: g.weight.clone(), ..*g }
}

/// The image of the graph the bulk builder makes of `g`, encoded on `threads` threads.
fn built_image(g: EdgeListGraph, catalog: &Catalog, threads: usize) -> Vec<u8> {
    let state = build_edge_list(1, &g).unwrap();
    let parts = image::parts(&state, threads);
    crate::parallel::parallel_map(&parts, threads, |p| {
        let mut buf = Vec::new();
        image::encode_part(&state, catalog, p, &mut buf);
        buf
    })
    .concat()
}

/// Asserts that the image written from the columns is the built graph's, byte for byte.
fn assert_same_image(g: EdgeListGraph, catalog: &Catalog, threads: usize) {
    let direct = EdgeListImage::with_threads(clone(&g), threads).unwrap();
    assert_eq!((direct.node_count(), direct.rel_count()), (g.keys.len() as u64, g.src.len() as u64));
    let built = built_image(g, catalog, threads);
    assert!(direct.encode_body(catalog) == built, "the images differ");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn the_image_written_from_columns_is_the_built_graphs(
        n in 1usize..400,
        raw in prop::collection::vec((any::<u32>(), any::<u32>()), 0..3000),
        weights in any::<bool>(),
        string_keys in any::<bool>(),
        order in 0u8..3,
        threads in 1usize..4,
    ) {
        let catalog = Catalog::new();
        let keys: Vec<Value> = (0..n as i64)
            .map(|i| if string_keys { Value::String(format!("v{}", i * 7919 % 10007).into()) } else { Value::Int(i * 3 - 50) })
            .collect();
        let mut ends: Vec<(u32, u32)> = raw.iter().map(|&(s, d)| (s % n as u32, d % n as u32)).collect();
        // Random order, sorted by source only, or sorted by source and target: each takes its own path.
        match order {
            1 => ends.sort_by_key(|e| e.0),
            2 => ends.sort(),
            _ => {}
        }
        assert_same_image(edge_list(&catalog, keys, &ends, weights), &catalog, threads);
    }
}

#[test]
fn large_lists_sorted_in_pieces_on_several_threads_give_the_same_image() {
    // Enough edges that runs are sorted on several threads, and enough vertices for several buckets.
    let n = 20_000u32;
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let mut ends: Vec<(u32, u32)> =
        (0..200_000).map(|_| ((next() % n as u64) as u32, (next() % 64) as u32 * 300)).collect();
    for sorted_by_source in [false, true] {
        if sorted_by_source {
            ends.sort_by_key(|e| e.0);
        }
        let catalog = Catalog::new();
        let keys = (0..n as i64).map(Value::Int).collect();
        assert_same_image(edge_list(&catalog, keys, &ends, true), &catalog, 2);
    }
}

#[test]
fn an_empty_list_and_bad_columns() {
    let catalog = Catalog::new();
    assert_same_image(edge_list(&catalog, Vec::new(), &[], false), &catalog, 2);
    assert_same_image(edge_list(&catalog, vec![Value::Int(7)], &[], true), &catalog, 2);
    let mut g = edge_list(&catalog, vec![Value::Int(1), Value::Int(2)], &[(0, 1), (1, 2)], false);
    assert!(matches!(EdgeListImage::new(clone(&g)), Err(StorageError::NodeNotFound(NodeId(2)))));
    g.dst.pop();
    assert!(matches!(EdgeListImage::new(g), Err(StorageError::ConstraintViolation(_))));
}

#[test]
fn a_database_written_from_columns_opens_with_the_graph() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("db");
    let catalog = Catalog::new();
    let keys = (0..5).map(|i| Value::Int(i * 10)).collect();
    let ends = [(4, 0), (0, 1), (0, 1), (3, 3), (1, 0)];
    let image = EdgeListImage::new(edge_list(&catalog, keys, &ends, true)).unwrap();
    Store::create_from_edge_list(&target, &image, &catalog).unwrap();
    let (store, _) = Store::open(&target).unwrap();
    let read = store.read();
    assert_eq!((read.node_count(), read.rel_count()), (5, 5));
    assert_eq!(read.check(), Vec::<String>::new(), "in- and out-adjacency agree");
    let node = read.node_by_key(catalog.label("Node"), &Value::Int(40)).expect("node 4 by its key");
    assert_eq!(read.degree(node, Direction::Out, TypeFilter::All), 1);
}
