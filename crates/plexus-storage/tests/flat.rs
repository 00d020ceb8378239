//! The flat adjacency of a bulk-loaded graph ([`plexus_storage::flat`]) against a model: snapshots taken before
//! writes keep reading what they saw (through the flat arrays where their leaves are unchanged), snapshots after
//! writes and the writing transaction itself see the writes, and rolled-back writes are never seen.

use std::collections::BTreeMap;
use std::ops::ControlFlow;

use plexus_storage::bulk::{self, build_edge_list, EdgeListGraph};
use plexus_storage::*;
use proptest::prelude::*;

/// Live relationships: id → (source, target, type, weight).
type Model = BTreeMap<u64, (u64, u64, TypeId, Option<f64>)>;

#[derive(Clone, Debug)]
enum Step {
    Create(u64, u64),
    /// Deletes the live relationship at this position (modulo their number).
    Delete(usize),
    DetachDelete(u64),
    /// Sets (or with `None` removes) the weight of the live relationship at this position.
    SetWeight(usize, Option<i8>),
    /// Ends the transaction: commit, or roll back.
    End {
        commit: bool,
        keep_snapshot: bool,
    },
}

fn step(nodes: u64) -> impl Strategy<Value = Step> {
    prop_oneof![
        4 => (0..nodes, 0..nodes).prop_map(|(a, b)| Step::Create(a, b)),
        3 => any::<usize>().prop_map(Step::Delete),
        1 => (0..nodes).prop_map(Step::DetachDelete),
        2 => (any::<usize>(), proptest::option::of(any::<i8>())).prop_map(|(i, w)| Step::SetWeight(i, w)),
        2 => (any::<bool>(), any::<bool>()).prop_map(|(commit, keep_snapshot)| Step::End { commit, keep_snapshot }),
    ]
}

/// Checks every read that has a flat path against the model, for every node, with every type filter.
fn check(state: &GraphState, model: &Model, nodes: u64, types: &[TypeId], weight: PropKeyId, what: &str) {
    let all = [TypeFilter::All, TypeFilter::Only(types)];
    for n in 0..nodes {
        for dir in [Direction::Out, Direction::In, Direction::Both] {
            for filter in all {
                let (mut count, mut sum) = (0u64, 0.0);
                for e in model.values().filter(|e| filter.accepts(e.2)) {
                    let hit = match dir {
                        Direction::Out => e.0 == n,
                        Direction::In => e.1 == n,
                        Direction::Both => e.0 == n || e.1 == n,
                    };
                    if hit {
                        count += 1;
                        sum += e.3.unwrap_or(0.0);
                    }
                }
                let got = state.count_and_weight(NodeId(n), dir, filter, weight);
                assert_eq!(got.0, count, "{what}, node {n}, {dir:?}, count");
                assert!((got.1 - sum).abs() < 1e-9, "{what}, node {n}, {dir:?}: weight {} instead of {sum}", got.1);
            }
        }
    }
    let absent = [TypeId(types.iter().map(|t| t.0).max().unwrap() + 1)];
    let firsts = [types[0]];
    for filter in [TypeFilter::All, TypeFilter::Only(&firsts), TypeFilter::Only(&absent), TypeFilter::Only(types)] {
        check_filtered(state, model, nodes, filter, &format!("{what}, {filter:?}"));
    }
}

fn check_filtered(state: &GraphState, model: &Model, nodes: u64, filter: TypeFilter, what: &str) {
    for n in 0..nodes {
        let node = NodeId(n);
        let live = || model.iter().filter(|(_, e)| filter.accepts(e.2));
        let out: Vec<(u64, u64)> = live().filter(|(_, e)| e.0 == n).map(|(&r, e)| (e.1, r)).collect();
        let inc: Vec<(u64, u64)> = live().filter(|(_, e)| e.1 == n).map(|(&r, e)| (e.0, r)).collect();
        let loops = out.iter().filter(|(m, _)| *m == n).count() as u64;
        let ctx = format!("{what}, node {n}");
        assert_eq!(state.degree(node, Direction::Out, filter), out.len() as u64, "{ctx}");
        assert_eq!(state.degree(node, Direction::In, filter), inc.len() as u64, "{ctx}");
        assert_eq!(state.degree(node, Direction::Both, filter), (out.len() + inc.len()) as u64 - loops, "{ctx}");
        for (dir, want) in [(Direction::Out, &out), (Direction::In, &inc)] {
            let mut got = Vec::new();
            let _ = state.visit_rels::<()>(node, dir, filter, |e| {
                assert_eq!((e.ty, e.dir), (model[&e.rel.0].2, dir), "{ctx}");
                got.push((e.nbr.0, e.rel.0));
                ControlFlow::Continue(())
            });
            got.sort();
            let mut want = want.clone();
            want.sort();
            assert_eq!(got, want, "{ctx}, {dir:?}");
            let mut slices = Vec::new();
            let _ = state.visit_rel_slices::<()>(node, dir, filter, |ns, rs| {
                slices.extend(ns.iter().zip(rs.iter()));
                ControlFlow::Continue(())
            });
            slices.sort();
            assert_eq!(slices, want, "{ctx}, slices {dir:?}");
            let mut distinct: Vec<u64> = want.iter().map(|e| e.0).collect();
            distinct.dedup();
            let got: Vec<u64> = state.neighbours(node, dir, filter).iter().map(|m| m.0).collect();
            assert_eq!(got, distinct, "{ctx}, neighbours {dir:?}");
        }
        let mut both = 0;
        let _ = state.visit_rels::<()>(node, Direction::Both, filter, |_| {
            both += 1;
            ControlFlow::Continue(())
        });
        assert_eq!(both, (out.len() + inc.len()) as u64 - loops, "{ctx}, both");
        let mut neighbours: Vec<u64> = out.iter().chain(&inc).map(|e| e.0).collect();
        neighbours.sort();
        neighbours.dedup();
        let got: Vec<u64> = state.neighbours(node, Direction::Both, filter).iter().map(|m| m.0).collect();
        assert_eq!(got, neighbours, "{ctx}, neighbours");
        for m in [0, n / 2, (n + 1) % nodes, n] {
            let mut want: Vec<u64> = out.iter().filter(|e| e.0 == m).map(|e| e.1).collect();
            let mut got: Vec<u64> =
                state.rels_between(node, NodeId(m), Direction::Out, filter).iter().map(|e| e.rel.0).collect();
            want.sort();
            got.sort();
            assert_eq!(got, want, "{ctx}, between {m}");
            assert_eq!(state.has_edge(node, NodeId(m), Direction::Out, filter), !want.is_empty(), "{ctx}");
            let into = inc.iter().filter(|e| e.0 == m).count() + if m == n { 0 } else { want.len() };
            assert_eq!(
                state.rels_between(node, NodeId(m), Direction::Both, filter).len(),
                into,
                "{ctx}, both ways {m}"
            );
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]
    #[test]
    fn flat_reads_match_the_model_across_writes_and_snapshots(
        nodes in 1u64..200,
        type_count in 1usize..3,
        edges in proptest::collection::vec((0u64..1000, 0u64..1000), 1..1500),
        steps in proptest::collection::vec(step(200), 0..60),
    ) {
        let store = Store::in_memory();
        let (label, key, types, wkey) = {
            let tx = store.write();
            (tx.label("N"), tx.prop_key("id"), [tx.rel_type("E"), tx.rel_type("F")], tx.prop_key("weight"))
        };
        let types = &types[..type_count];
        let ty = types[0];
        let edges: Vec<(u64, u64)> = edges.into_iter().map(|(a, b)| (a % nodes, b % nodes)).collect();
        let graph = EdgeListGraph {
            label,
            key,
            keys: (0..nodes as i64).map(Value::Int).collect(),
            ty,
            src: edges.iter().map(|e| e.0 as u32).collect(),
            dst: edges.iter().map(|e| e.1 as u32).collect(),
            // Weights on even-sized lists, to cover both kinds of edge list.
            weight: edges.len().is_multiple_of(2).then(|| (wkey, (0..edges.len()).map(|i| (i % 7) as f64 - 2.0).collect())),
        };
        let state = if type_count == 1 {
            // The edge-list builder, as `import_edges` and `plexus import --edges` load.
            build_edge_list(0, &graph).unwrap()
        } else {
            // Records with types taking turns, as a checkpoint or a node and relationship import loads.
            let (node_inputs, mut rels) = graph.into_records();
            for (i, r) in rels.iter_mut().enumerate() {
                r.rec.ty = types[i % types.len()];
            }
            bulk::build_state(0, node_inputs, rels, &[(label, key)]).unwrap()
        };
        store.load_bulk(state).unwrap();
        let first = store.read();
        let flat = first.flat().expect("a bulk-built graph gets flat arrays");
        // Types take turns over the edges, so a list shorter than the type count uses fewer types.
        let types_used = type_count.min(edges.len());
        prop_assert_eq!(flat.serves_reads(), types_used == 1, "only a one-type graph reads from them");
        let mut model: Model = BTreeMap::new();
        let _ = first.visit_all_rels::<()>(|r| {
            let w = first.rel_prop_f64(r.id, wkey);
            model.insert(r.id.0, (r.src.0, r.dst.0, r.ty, w));
            ControlFlow::Continue(())
        });
        prop_assert_eq!(model.len(), edges.len());
        check(&first, &model, nodes, types, wkey, "after the load");
        let mut kept = vec![(first, model.clone())];
        let mut tx = store.write();
        let mut pending = model.clone();
        let mut deleted: Vec<u64> = Vec::new();
        for step in steps {
            match step {
                Step::Create(a, b) if a < nodes && b < nodes && !deleted.contains(&a) && !deleted.contains(&b) => {
                    let t = types[(a + b) as usize % types.len()];
                    let id = tx.create_rel(NodeId(a), t, NodeId(b), vec![]).unwrap();
                    pending.insert(id.0, (a, b, t, None));
                }
                Step::Create(..) => {}
                Step::Delete(i) if !pending.is_empty() => {
                    let id = *pending.keys().nth(i % pending.len()).unwrap();
                    tx.delete_rel(RelId(id)).unwrap();
                    pending.remove(&id);
                }
                Step::Delete(_) => {}
                Step::DetachDelete(n) if n < nodes && !deleted.contains(&n) => {
                    tx.detach_delete_node(NodeId(n)).unwrap();
                    pending.retain(|_, e| e.0 != n && e.1 != n);
                    deleted.push(n);
                }
                Step::DetachDelete(_) => {}
                Step::SetWeight(i, w) if !pending.is_empty() => {
                    let id = *pending.keys().nth(i % pending.len()).unwrap();
                    let value = w.map_or(Value::Null, |w| Value::Float(w as f64));
                    tx.set_rel_prop(RelId(id), wkey, value).unwrap();
                    pending.get_mut(&id).unwrap().3 = w.map(f64::from);
                }
                Step::SetWeight(..) => {}
                Step::End { commit, keep_snapshot } => {
                    check(&tx, &pending, nodes, types, wkey, "inside the transaction");
                    if commit {
                        tx.commit().unwrap();
                        model = pending.clone();
                    } else {
                        drop(tx);
                        pending = model.clone();
                        // Nodes deleted by the rolled-back transaction are back.
                        deleted.retain(|&n| store.read().node_exists(NodeId(n)).then_some(()).is_none());
                    }
                    if keep_snapshot {
                        kept.push((store.read(), model.clone()));
                    }
                    tx = store.write();
                }
            }
        }
        drop(tx);
        kept.push((store.read(), model.clone()));
        for (i, (snapshot, seen)) in kept.iter().enumerate() {
            check(snapshot, seen, nodes, types, wkey, &format!("snapshot {i}"));
        }
    }
}
