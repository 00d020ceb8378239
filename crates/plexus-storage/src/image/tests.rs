use super::*;
use crate::{Direction, Store, Value};

/// Everything a reader can see of a state, in a comparable form.
fn describe(state: &GraphState) -> Vec<String> {
    let mut out = Vec::new();
    let _ = state.visit_nodes::<()>(|n| {
        out.push(format!("{n}: {:?} {:?}", state.node_labels(n), state.node_props(n)));
        for dir in [Direction::Out, Direction::In] {
            // Entries still in a delta are visited after the base: compare as sets.
            let mut rels = state.rels_of(n, dir, TypeFilter::All);
            rels.sort_unstable_by_key(|e| (e.ty, e.nbr, e.rel));
            out.push(format!("{n} {dir:?}: {rels:?}"));
        }
        std::ops::ControlFlow::Continue(())
    });
    let _ = state.visit_all_rels::<()>(|r| {
        out.push(format!("{r:?} {:?}", state.rel_props(r.id)));
        std::ops::ControlFlow::Continue(())
    });
    out
}

#[test]
fn images_round_trip_in_many_segments_with_deltas_and_properties() {
    let store = Store::in_memory();
    let mut tx = store.write();
    let (l, k, w) = (tx.label("L"), tx.prop_key("k"), tx.prop_key("w"));
    let t = [tx.rel_type("A"), tx.rel_type("B")];
    tx.declare_unique_key(l, k).unwrap();
    let nodes: Vec<NodeId> = (0..700).map(|i| tx.create_node(&[l], vec![(k, Value::Int(i))]).unwrap()).collect();
    for i in 0..3000usize {
        let (a, b) = (nodes[i * 7 % 700], nodes[(i * 13 + i / 50) % 700]);
        let props = if i % 3 == 0 { vec![(w, Value::Float(i as f64))] } else { vec![] };
        tx.create_rel(a, t[i % 2], b, props).unwrap();
    }
    tx.commit().unwrap();
    // Later changes leave deltas on top of the leaves' bases.
    let mut tx = store.write();
    for (i, &n) in nodes.iter().enumerate().take(40) {
        tx.create_rel(n, t[0], n, vec![(w, Value::Int(1))]).unwrap();
        tx.delete_rel(RelId(i as u64 * 5)).unwrap();
    }
    tx.commit().unwrap();
    let state: GraphState = (*store.read()).clone();
    for threads in [1, 3] {
        let mut body = Vec::new();
        parts(&state, threads).iter().for_each(|p| encode_part(&state, store.catalog(), p, &mut body));
        let decoded = decode_body(&body, &Catalog::new(), state.version()).unwrap();
        let (got, want) = (describe(&decoded), describe(&state));
        assert_eq!(got.len(), want.len(), "with {threads} threads");
        if let Some(i) = (0..got.len()).find(|&i| got[i] != want[i]) {
            panic!("with {threads} threads, line {i}:\n got {}\nwant {}", got[i], want[i]);
        }
        assert_eq!(decoded.node_by_key(l, &Value::Int(5)), Some(nodes[5]));
        assert!(crate::check::check_state(&decoded, 10).is_empty());
    }
}

/// A weighted edge list (one float under one key on every relationship) decodes into the leaves' number
/// columns and flat arrays with their weights, with no map per relationship; one relationship otherwise
/// (unweighted, another key or kind, NaN) leaves an image that reads back the same through the other paths.
#[test]
fn a_weighted_edge_list_decodes_to_columns_and_flat_weights() {
    for odd in [None, Some("unweighted"), Some("int"), Some("other key"), Some("nan"), Some("first int")] {
        let store = Store::in_memory();
        let mut tx = store.write();
        let (w, v, t) = (tx.prop_key("w"), tx.prop_key("v"), tx.rel_type("T"));
        let nodes: Vec<NodeId> = (0..300).map(|_| tx.create_node(&[], vec![]).unwrap()).collect();
        for i in 0..2000usize {
            let (a, b) = (nodes[i * 7 % 300], nodes[(i * 13 + i / 40) % 300]);
            let weight = Value::Float(i as f64 / 4.0);
            let props = match (odd, i) {
                (Some("unweighted"), 1500) => vec![],
                (Some("int"), 1500) | (Some("first int"), 0) => vec![(w, Value::Int(3))],
                (Some("other key"), 1500) => vec![(v, weight)],
                (Some("nan"), 1500) => vec![(w, Value::Float(f64::NAN))],
                _ => vec![(w, weight)],
            };
            tx.create_rel(a, t, b, props).unwrap();
        }
        tx.commit().unwrap();
        let state: GraphState = (*store.read()).clone();
        let decoded = decode_body(&encode_body(&state, store.catalog()), &Catalog::new(), state.version()).unwrap();
        let (got, want) = (describe(&decoded), describe(&state));
        assert_eq!(format!("{got:?}"), format!("{want:?}"), "{odd:?}");
        assert!(crate::check::check_state(&decoded, 10).is_empty(), "{odd:?}");
        for &n in &nodes[..50] {
            for dir in [Direction::Out, Direction::In] {
                let (count, sum) = decoded.count_and_weight(n, dir, TypeFilter::All, w);
                let (want_count, want_sum) = state.count_and_weight(n, dir, TypeFilter::All, w);
                assert_eq!(count, want_count, "{odd:?}");
                assert!(sum == want_sum || sum.is_nan() && want_sum.is_nan(), "{odd:?}: {sum} {want_sum}");
            }
        }
        if odd.is_none() {
            let flat = decoded.flat.as_ref().expect("one type: flat arrays");
            assert!(flat.holds_weights_of(w), "the weights came with the flat arrays");
            assert!(decoded.flat_count_and_weight(nodes[1], Direction::Out, TypeFilter::All, w).is_some());
        }
    }
}

#[test]
fn names_of_unique_keys_and_indexes_round_trip_and_are_left_out_when_there_are_none() {
    let store = Store::in_memory();
    let mut tx = store.write();
    let (l, m, k, p) = (tx.label("L"), tx.label("M"), tx.prop_key("k"), tx.prop_key("p"));
    tx.declare_named_unique_key(l, k, Some("l_key")).unwrap();
    tx.declare_unique_key(m, k).unwrap();
    tx.create_named_index(l, p, Some("l p")).unwrap();
    tx.create_index(m, p).unwrap();
    tx.commit().unwrap();
    let state: GraphState = (*store.read()).clone();
    let decoded = decode_body(&encode_body(&state, store.catalog()), &Catalog::new(), state.version()).unwrap();
    assert_eq!(decoded.unique_key_name(l, k).as_deref(), Some("l_key"));
    assert_eq!(decoded.unique_key_name(m, k), None);
    assert_eq!(decoded.index_name(l, p).as_deref(), Some("l p"));
    assert_eq!(decoded.index_name(m, p), None);
    assert_eq!(decoded.indexes(), state.indexes());
    // A name is refused while another unique key or index has it.
    let mut tx = store.write();
    assert!(tx.create_named_index(m, k, Some("l_key")).is_err());
    assert!(tx.create_named_index(m, k, Some("l p")).is_err());
    tx.create_named_index(m, k, Some("m_k")).unwrap();
    drop(tx);
    // Without names the image ends with the index list, as before names were kept.
    let store = Store::in_memory();
    let mut tx = store.write();
    let (l, k) = (tx.label("L"), tx.prop_key("k"));
    tx.create_index(l, k).unwrap();
    tx.commit().unwrap();
    let mut tail = Vec::new();
    encode_part(&store.read(), store.catalog(), &Part::Tail, &mut tail);
    assert_eq!(tail, [1, l.0 as u8, k.0 as u8]);
}

#[test]
fn format_1_images_still_load() {
    // No tokens, no keys; nodes 0 and 1; one relationship 5 from 0 to 1 with no properties; no index section.
    let body = [0u8, 0, 2, 0, 0, 0, 1, 0, 0, 1, 0, 0, 1, 5, 0];
    let state = decode_body_format(body, &Catalog::new(), 3, FORMAT_V1).unwrap();
    assert_eq!(state.node_count(), 2);
    assert_eq!(state.rel(RelId(5)).map(|r| (r.src, r.dst)), Some((NodeId(0), NodeId(1))));
    assert!(decode_body_format(body, &Catalog::new(), 3, FORMAT_V2).is_err());
}

#[test]
fn properties_of_a_missing_relationship_are_refused() {
    // Format 2: no tokens or keys; one segment with node 0; no relationships; properties for relationship 4.
    let body = [0u8, 0, 1, 1, 0, 0, 0, 1, 0, 1, 1, 4, 0];
    let err = decode_body(&body, &Catalog::new(), 1).err().expect("refused");
    assert!(err.0.contains("relationship 4"), "{}", err.0);
}
