use super::*;
use crate::adjacency::TypeFilter;
use crate::Direction;

/// Per node and direction, the sorted (neighbour, weight) pairs: what an edge list says, whatever the ids.
fn edges_by_node(state: &GraphState, weight: PropKeyId) -> Vec<Vec<(u64, String)>> {
    let mut out = Vec::new();
    let _ = state.visit_nodes::<()>(|n| {
        for dir in [Direction::Out, Direction::In] {
            let mut v: Vec<(u64, String)> = state
                .rels_of(n, dir, TypeFilter::All)
                .iter()
                .map(|e| (e.nbr.0, format!("{:?}", state.rel_prop(e.rel, weight))))
                .collect();
            v.sort();
            out.push(v);
        }
        std::ops::ControlFlow::Continue(())
    });
    out
}

#[test]
fn loaded_labels_are_kept_sorted_by_id() {
    let node = |id, labels: &[u32]| NodeInput {
        id: NodeId(id),
        labels: labels.iter().map(|&l| LabelId(l)).collect(),
        props: None,
    };
    let state = build_state(0, vec![node(0, &[2, 0, 1, 0]), node(1, &[1])], Vec::new(), &[]).unwrap();
    assert_eq!(state.node_labels(NodeId(0)), Some(&[LabelId(0), LabelId(1), LabelId(2)][..]));
    assert_eq!(state.label_count(LabelId(0)), 1);
}

#[test]
fn edge_lists_build_the_graph_their_records_build_with_ids_in_source_order() {
    let (label, key, ty, wkey) = (LabelId(0), PropKeyId(0), TypeId(0), PropKeyId(1));
    let n = 300u32;
    let mut x = 99u64;
    let mut next = |bound: u32| {
        x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        ((x >> 33) % bound as u64) as u32
    };
    let (mut src, mut dst, mut w) = (Vec::new(), Vec::new(), Vec::new());
    for i in 0..5000 {
        let s = next(n) / (1 + i % 3);
        src.push(s);
        dst.push(if i % 50 == 0 { s } else { next(n) });
        // Weights whose sums round differently in another order.
        w.push((i as f64).sqrt());
    }
    let keys: Vec<Value> = (0..n).map(|i| Value::Int(i as i64 * 10)).collect();
    let graph = || EdgeListGraph {
        label,
        key,
        keys: keys.clone(),
        ty,
        src: src.clone(),
        dst: dst.clone(),
        weight: Some((wkey, w.clone())),
    };
    let built = build_edge_list(3, &graph()).unwrap();
    let (nodes, rels) = graph().into_records();
    let reference = build_state(3, nodes, rels, &[(label, key)]).unwrap();
    assert_eq!(edges_by_node(&built, wkey), edges_by_node(&reference, wkey));
    // The flat arrays' weights come from the column here and from the relationship leaves there.
    assert!(built.flat.is_some() && reference.flat.is_some());
    let bound = built.rel_id_bound() as usize;
    let by_rel =
        built.flat().unwrap().weights_by_rel(wkey, built.version, bound, built.rel_count()).expect("nothing changed");
    for (rel, w) in by_rel.iter().enumerate() {
        let stored = built.rel_prop(RelId(rel as u64), wkey).and_then(|v| v.as_f64());
        assert_eq!(stored.map(f64::to_bits), (!w.is_nan()).then(|| w.to_bits()), "relationship {rel}");
    }
    for v in 0..n as u64 {
        for dir in [Direction::Out, Direction::In, Direction::Both] {
            let [a, b] = [&built, &reference].map(|g| g.count_and_weight(NodeId(v), dir, TypeFilter::All, wkey));
            assert_eq!((a.0, a.1.to_bits()), (b.0, b.1.to_bits()), "node {v} {dir:?}");
            // And both say what a walk of the relationships in visit order adds up to, bit for bit.
            let (mut count, mut sum) = (0, 0.0);
            let _ = reference.visit_rels::<()>(NodeId(v), dir, TypeFilter::All, |e| {
                count += 1;
                let w = reference.rel_prop(e.rel, wkey).and_then(|v| v.as_f64());
                sum += w.expect("every relationship has a weight");
                std::ops::ControlFlow::Continue(())
            });
            assert_eq!((a.0, a.1.to_bits()), (count, sum.to_bits()), "node {v} {dir:?} against a walk");
        }
        // The runs with weights beside the neighbours say what the relationship records say.
        for dir in [Direction::Out, Direction::In] {
            let runs = built.weighted_neighbour_runs(NodeId(v), dir, TypeFilter::All, wkey).expect("covered");
            let mut got: Vec<(u64, u64)> = runs
                .iter()
                .flat_map(|(ns, ws)| ns.iter().zip(ws.iter()).map(|(&n, &w)| (u64::from(n), w.to_bits())))
                .collect();
            let mut want: Vec<(u64, u64)> = reference
                .rels_of(NodeId(v), dir, TypeFilter::All)
                .iter()
                .map(|e| {
                    let w = reference.rel_prop(e.rel, wkey).and_then(|v| v.as_f64());
                    (e.nbr.0, w.expect("every relationship has a weight").to_bits())
                })
                .collect();
            got.sort_unstable();
            want.sort_unstable();
            assert_eq!(got, want, "node {v} {dir:?}");
        }
    }
    assert!(crate::check::check_state(&built, 10).is_empty(), "{:?}", crate::check::check_state(&built, 10));
    assert_eq!((built.node_count(), built.rel_count()), (n as u64, 5000));
    assert_eq!(built.node_by_key(label, &Value::Int(70)), Some(NodeId(7)));
    // Relationship ids follow (source, target): each source's outgoing ids are one ascending run.
    let mut last = None;
    let _ = built.visit_all_rels::<()>(|r| {
        if let Some((src, dst)) = last {
            assert!((src, dst) <= (r.src.0, r.dst.0), "{r:?} after ({src}, {dst})");
        }
        last = Some((r.src.0, r.dst.0));
        std::ops::ControlFlow::Continue(())
    });
}

#[test]
fn edge_lists_with_unknown_vertices_or_repeated_keys_are_refused() {
    let g = |keys: Vec<Value>, dst: u32| EdgeListGraph {
        label: LabelId(0),
        key: PropKeyId(0),
        keys,
        ty: TypeId(0),
        src: vec![0],
        dst: vec![dst],
        weight: None,
    };
    assert!(matches!(
        build_edge_list(1, &g(vec![Value::Int(1), Value::Int(2)], 2)),
        Err(StorageError::NodeNotFound(_))
    ));
    assert!(matches!(
        build_edge_list(1, &g(vec![Value::Int(1), Value::Int(1)], 1)),
        Err(StorageError::ConstraintViolation(_))
    ));
}
