//! Model-based property tests: random sequences of operations, commits, aborts, checkpoints and reopenings are
//! run against the store and against a plain in-memory reference model; after every step the store must agree
//! with the model exactly (nodes, labels, properties, relationships, adjacency both ways, unique-key lookups,
//! label scans, property-index seeks and ranges), and its internal consistency check must pass.

use proptest::prelude::*;
use std::collections::{BTreeMap, BTreeSet};
use std::ops::ControlFlow;

use plexus_storage::*;

#[derive(Clone, Debug, Default, PartialEq)]
struct ModelNode {
    labels: BTreeSet<u32>,
    props: BTreeMap<u32, Value>,
}

#[derive(Clone, Debug, PartialEq)]
struct ModelRel {
    ty: u32,
    src: u64,
    dst: u64,
    props: BTreeMap<u32, Value>,
}

#[derive(Clone, Debug, Default, PartialEq)]
struct Model {
    nodes: BTreeMap<u64, ModelNode>,
    rels: BTreeMap<u64, ModelRel>,
}

impl Model {
    fn degree(&self, n: u64) -> usize {
        self.rels.values().filter(|r| r.src == n || r.dst == n).count()
    }
}

/// Label 0 declares property 0 as its unique key.
const KEYED_LABEL: u32 = 0;
const KEY: u32 = 0;
/// Label 1 has a property index on property 1.
const INDEXED_LABEL: u32 = 1;
const INDEXED_KEY: u32 = 1;

#[derive(Clone, Debug)]
enum Step {
    CreateNode {
        labels: Vec<u32>,
        props: Vec<(u32, i64)>,
    },
    SetNodeProp {
        node: usize,
        key: u32,
        value: Option<i64>,
    },
    AddLabel {
        node: usize,
        label: u32,
    },
    RemoveLabel {
        node: usize,
        label: u32,
    },
    DeleteNode {
        node: usize,
        detach: bool,
    },
    CreateRel {
        src: usize,
        dst: usize,
        ty: u32,
        weight: Option<i64>,
    },
    /// `kind` 0 sets the usual integer under key 3; 1 a float under key 3 and 2 a string under key 4, which turn
    /// a leaf's number column into maps (kept apart from key 3's sums: the weights compared are key 3's).
    SetRelProp {
        rel: usize,
        value: Option<i64>,
        kind: u8,
    },
    DeleteRel {
        rel: usize,
    },
    UpsertEdge {
        src: usize,
        dst: usize,
        ty: u32,
        value: i64,
    },
    RemoveEdges {
        src: usize,
        dst: usize,
        ty: u32,
    },
    Commit,
    Abort,
    Checkpoint,
    Reopen,
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        4 => (proptest::collection::vec(0u32..3, 0..3), proptest::collection::vec((0u32..3, 0i64..6), 0..3))
            .prop_map(|(labels, props)| Step::CreateNode { labels, props }),
        2 => (any::<usize>(), 0u32..3, proptest::option::of(0i64..6))
            .prop_map(|(node, key, value)| Step::SetNodeProp { node, key, value }),
        1 => (any::<usize>(), 0u32..3).prop_map(|(node, label)| Step::AddLabel { node, label }),
        1 => (any::<usize>(), 0u32..3).prop_map(|(node, label)| Step::RemoveLabel { node, label }),
        1 => (any::<usize>(), any::<bool>()).prop_map(|(node, detach)| Step::DeleteNode { node, detach }),
        5 => (any::<usize>(), any::<usize>(), 0u32..2, proptest::option::of(0i64..10))
            .prop_map(|(src, dst, ty, weight)| Step::CreateRel { src, dst, ty, weight }),
        2 => (any::<usize>(), proptest::option::of(0i64..10), prop_oneof![4 => Just(0u8), 1 => Just(1u8), 1 => Just(2u8)])
            .prop_map(|(rel, value, kind)| Step::SetRelProp { rel, value, kind }),
        2 => any::<usize>().prop_map(|rel| Step::DeleteRel { rel }),
        2 => (any::<usize>(), any::<usize>(), 0u32..2, 0i64..10)
            .prop_map(|(src, dst, ty, value)| Step::UpsertEdge { src, dst, ty, value }),
        1 => (any::<usize>(), any::<usize>(), 0u32..2).prop_map(|(src, dst, ty)| Step::RemoveEdges { src, dst, ty }),
        3 => Just(Step::Commit),
        1 => Just(Step::Abort),
        1 => Just(Step::Checkpoint),
        1 => Just(Step::Reopen),
    ]
}

fn nth_key<V>(map: &BTreeMap<u64, V>, i: usize) -> Option<u64> {
    if map.is_empty() {
        None
    } else {
        map.keys().nth(i % map.len()).copied()
    }
}

fn props_of(map: Option<&PropMap>) -> BTreeMap<u32, Value> {
    map.map(|m| m.iter().map(|(k, v)| (k.0, v.clone())).collect()).unwrap_or_default()
}

/// Compares everything observable in `g` with `model`.
fn assert_matches(g: &GraphState, model: &Model) -> Result<(), TestCaseError> {
    prop_assert_eq!(g.node_count(), model.nodes.len() as u64);
    prop_assert_eq!(g.rel_count(), model.rels.len() as u64);
    let mut live = Vec::new();
    let _ = g.visit_nodes::<()>(|n| {
        live.push(n.0);
        ControlFlow::Continue(())
    });
    prop_assert_eq!(live, model.nodes.keys().copied().collect::<Vec<_>>());
    for (&id, node) in &model.nodes {
        let n = NodeId(id);
        let labels: BTreeSet<u32> = g.node_labels(n).unwrap().iter().map(|l| l.0).collect();
        prop_assert_eq!(&labels, &node.labels);
        prop_assert_eq!(props_of(g.node_props(n).unwrap()), node.props.clone());
        for dir in [Direction::Out, Direction::In, Direction::Both] {
            let mut got: Vec<u64> = g.rels_of(n, dir, TypeFilter::All).iter().map(|e| e.rel.0).collect();
            got.sort();
            let want: Vec<u64> = model
                .rels
                .iter()
                .filter(|(_, r)| match dir {
                    Direction::Out => r.src == id,
                    Direction::In => r.dst == id,
                    Direction::Both => r.src == id || r.dst == id,
                })
                .map(|(k, _)| *k)
                .collect();
            prop_assert_eq!(&got, &want, "{:?} relationships of {}", dir, id);
            let weights: f64 = want.iter().filter_map(|r| model.rels[r].props.get(&3)).filter_map(Value::as_f64).sum();
            prop_assert_eq!(g.count_and_weight(n, dir, TypeFilter::All, PropKeyId(3)), (want.len() as u64, weights));
            prop_assert_eq!(g.degree(n, dir, TypeFilter::All), want.len() as u64);
            let only = [TypeId(1)];
            let typed = model
                .rels
                .values()
                .filter(|r| {
                    r.ty == 1
                        && match dir {
                            Direction::Out => r.src == id,
                            Direction::In => r.dst == id,
                            Direction::Both => r.src == id || r.dst == id,
                        }
                })
                .count();
            prop_assert_eq!(g.degree(n, dir, TypeFilter::Only(&only)), typed as u64);
        }
    }
    for (&id, rel) in &model.rels {
        let rec = g.rel(RelId(id)).unwrap();
        prop_assert_eq!((rec.ty.0, rec.src.0, rec.dst.0), (rel.ty, rel.src, rel.dst));
        prop_assert_eq!(props_of(g.rel_props(RelId(id)).unwrap().as_deref()), rel.props.clone());
        prop_assert!(g.has_edge(rec.src, rec.dst, Direction::Out, TypeFilter::All));
        prop_assert!(g.has_edge(rec.dst, rec.src, Direction::In, TypeFilter::All));
    }
    for label in 0..3u32 {
        let want: Vec<u64> = model.nodes.iter().filter(|(_, n)| n.labels.contains(&label)).map(|(k, _)| *k).collect();
        let got: Vec<u64> = g.nodes_with_label(LabelId(label)).iter().map(|n| n.0).collect();
        prop_assert_eq!(got, want);
    }
    for (&id, node) in &model.nodes {
        if node.labels.contains(&KEYED_LABEL) {
            if let Some(v) = node.props.get(&KEY) {
                prop_assert_eq!(g.node_by_key(LabelId(KEYED_LABEL), v), Some(NodeId(id)));
            }
        }
    }
    let (l, k) = (LabelId(INDEXED_LABEL), PropKeyId(INDEXED_KEY));
    let mut indexed: Vec<(i64, u64)> = model
        .nodes
        .iter()
        .filter(|(_, n)| n.labels.contains(&INDEXED_LABEL))
        .filter_map(|(&id, n)| n.props.get(&INDEXED_KEY).and_then(Value::as_int).map(|v| (v, id)))
        .collect();
    indexed.sort();
    prop_assert_eq!(g.index_len(l, k), Some(indexed.len()));
    for v in 0..6i64 {
        let want: Vec<NodeId> = indexed.iter().filter(|e| e.0 == v).map(|e| NodeId(e.1)).collect();
        prop_assert_eq!(g.index_seek(l, k, &Value::Int(v)), want);
        let want: Vec<NodeId> = indexed.iter().filter(|e| e.0 >= v).map(|e| NodeId(e.1)).collect();
        let lower = Value::Float(v as f64 - 0.5);
        prop_assert_eq!(g.index_range(l, k, std::ops::Bound::Excluded(&lower), std::ops::Bound::Unbounded), want);
    }
    let problems = g.check();
    prop_assert!(problems.is_empty(), "{:?}", problems);
    Ok(())
}

/// Whether the model allows `labels`/`props` on node `id` under the unique key.
fn unique_ok(model: &Model, id: u64, node: &ModelNode) -> bool {
    if !node.labels.contains(&KEYED_LABEL) {
        return true;
    }
    let Some(v) = node.props.get(&KEY) else { return true };
    !model
        .nodes
        .iter()
        .any(|(&other, n)| other != id && n.labels.contains(&KEYED_LABEL) && n.props.get(&KEY) == Some(v))
}

struct Harness {
    dir: Option<tempfile::TempDir>,
    store: Option<Store>,
    tx: Option<WriteTxn>,
    committed: Model,
    working: Model,
}

impl Harness {
    fn new(on_disk: bool) -> Harness {
        let dir = on_disk.then(|| tempfile::tempdir().unwrap());
        let store = match &dir {
            Some(d) => {
                Store::open_with(d.path(), Options { durability: Durability::Off, ..Options::default() }).unwrap().0
            }
            None => Store::in_memory(),
        };
        let mut tx = store.write();
        for name in ["L0", "L1", "L2"] {
            tx.label(name);
        }
        for name in ["T0", "T1"] {
            tx.rel_type(name);
        }
        for name in ["k0", "k1", "k2", "weight", "note"] {
            tx.prop_key(name);
        }
        tx.declare_unique_key(LabelId(KEYED_LABEL), PropKeyId(KEY)).unwrap();
        tx.create_index(LabelId(INDEXED_LABEL), PropKeyId(INDEXED_KEY)).unwrap();
        tx.commit().unwrap();
        Harness { dir, store: Some(store), tx: None, committed: Model::default(), working: Model::default() }
    }

    fn tx(&mut self) -> &mut WriteTxn {
        if self.tx.is_none() {
            self.tx = Some(self.store.as_ref().unwrap().write());
        }
        self.tx.as_mut().unwrap()
    }

    fn run(&mut self, step: Step) -> Result<(), TestCaseError> {
        match step {
            Step::CreateNode { labels, props } => {
                let node = ModelNode {
                    labels: labels.iter().copied().collect(),
                    props: props.iter().map(|(k, v)| (*k, Value::Int(*v))).collect(),
                };
                let labels: Vec<LabelId> = labels.into_iter().map(LabelId).collect();
                let props: Vec<(PropKeyId, Value)> =
                    props.into_iter().map(|(k, v)| (PropKeyId(k), Value::Int(v))).collect();
                let allowed = unique_ok(&self.working, u64::MAX, &node);
                let result = self.tx().create_node(&labels, props);
                prop_assert_eq!(result.is_ok(), allowed, "create node: {:?}", result);
                if let Ok(id) = result {
                    self.working.nodes.insert(id.0, node);
                }
            }
            Step::SetNodeProp { node, key, value } => {
                let Some(id) = nth_key(&self.working.nodes, node) else { return Ok(()) };
                let mut updated = self.working.nodes[&id].clone();
                match value {
                    Some(v) => updated.props.insert(key, Value::Int(v)),
                    None => updated.props.remove(&key),
                };
                let allowed = unique_ok(&self.working, id, &updated);
                let v = value.map_or(Value::Null, Value::Int);
                let result = self.tx().set_node_prop(NodeId(id), PropKeyId(key), v);
                prop_assert_eq!(result.is_ok(), allowed, "set prop: {:?}", result);
                if result.is_ok() {
                    self.working.nodes.insert(id, updated);
                }
            }
            Step::AddLabel { node, label } => {
                let Some(id) = nth_key(&self.working.nodes, node) else { return Ok(()) };
                let mut updated = self.working.nodes[&id].clone();
                updated.labels.insert(label);
                let allowed = unique_ok(&self.working, id, &updated);
                let result = self.tx().add_label(NodeId(id), LabelId(label));
                prop_assert_eq!(result.is_ok(), allowed, "add label: {:?}", result);
                if result.is_ok() {
                    self.working.nodes.insert(id, updated);
                }
            }
            Step::RemoveLabel { node, label } => {
                let Some(id) = nth_key(&self.working.nodes, node) else { return Ok(()) };
                self.tx().remove_label(NodeId(id), LabelId(label)).unwrap();
                self.working.nodes.get_mut(&id).unwrap().labels.remove(&label);
            }
            Step::DeleteNode { node, detach } => {
                let Some(id) = nth_key(&self.working.nodes, node) else { return Ok(()) };
                let degree = self.working.degree(id);
                if detach {
                    let removed = self.tx().detach_delete_node(NodeId(id)).unwrap();
                    prop_assert_eq!(removed as usize, degree);
                    self.working.rels.retain(|_, r| r.src != id && r.dst != id);
                    self.working.nodes.remove(&id);
                } else {
                    let result = self.tx().delete_node(NodeId(id));
                    prop_assert_eq!(result.is_ok(), degree == 0, "delete: {:?}", result);
                    if result.is_ok() {
                        self.working.nodes.remove(&id);
                    }
                }
            }
            Step::CreateRel { src, dst, ty, weight } => {
                let (Some(s), Some(d)) = (nth_key(&self.working.nodes, src), nth_key(&self.working.nodes, dst)) else {
                    return Ok(());
                };
                let props: Vec<(PropKeyId, Value)> = weight.iter().map(|w| (PropKeyId(3), Value::Int(*w))).collect();
                let id = self.tx().create_rel(NodeId(s), TypeId(ty), NodeId(d), props.clone()).unwrap();
                let props = props.into_iter().map(|(k, v)| (k.0, v)).collect();
                self.working.rels.insert(id.0, ModelRel { ty, src: s, dst: d, props });
            }
            Step::SetRelProp { rel, value, kind } => {
                let Some(id) = nth_key(&self.working.rels, rel) else { return Ok(()) };
                let (key, v) = match (kind, value) {
                    (_, None) => (if kind == 2 { 4 } else { 3 }, Value::Null),
                    (1, Some(v)) => (3, Value::Float(v as f64 + 0.5)),
                    (2, Some(v)) => (4, Value::from(format!("s{v}"))),
                    (_, Some(v)) => (3, Value::Int(v)),
                };
                self.tx().set_rel_prop(RelId(id), PropKeyId(key), v.clone()).unwrap();
                let props = &mut self.working.rels.get_mut(&id).unwrap().props;
                match v {
                    Value::Null => props.remove(&key),
                    v => props.insert(key, v),
                };
            }
            Step::DeleteRel { rel } => {
                let Some(id) = nth_key(&self.working.rels, rel) else { return Ok(()) };
                self.tx().delete_rel(RelId(id)).unwrap();
                self.working.rels.remove(&id);
            }
            Step::UpsertEdge { src, dst, ty, value } => {
                let (Some(s), Some(d)) = (nth_key(&self.working.nodes, src), nth_key(&self.working.nodes, dst)) else {
                    return Ok(());
                };
                let props = vec![(PropKeyId(3), Value::Int(value))];
                let counts = self.tx().upsert_edges(&[(NodeId(s), TypeId(ty), NodeId(d), props)]).unwrap();
                let existing = self.working.rels.iter().find(|(_, r)| r.src == s && r.dst == d && r.ty == ty);
                match existing.map(|(k, _)| *k) {
                    Some(k) => {
                        prop_assert_eq!(counts, UpsertCounts { created: 0, updated: 1 });
                        self.working.rels.get_mut(&k).unwrap().props.insert(3, Value::Int(value));
                    }
                    None => {
                        prop_assert_eq!(counts, UpsertCounts { created: 1, updated: 0 });
                        let created = self.tx().rels_between(
                            NodeId(s),
                            NodeId(d),
                            Direction::Out,
                            TypeFilter::Only(&[TypeId(ty)]),
                        );
                        let id = created.iter().map(|e| e.rel.0).find(|r| !self.working.rels.contains_key(r)).unwrap();
                        let props = BTreeMap::from([(3, Value::Int(value))]);
                        self.working.rels.insert(id, ModelRel { ty, src: s, dst: d, props });
                    }
                }
            }
            Step::RemoveEdges { src, dst, ty } => {
                let (Some(s), Some(d)) = (nth_key(&self.working.nodes, src), nth_key(&self.working.nodes, dst)) else {
                    return Ok(());
                };
                let removed = self.tx().remove_edges(&[(NodeId(s), TypeId(ty), NodeId(d))]).unwrap();
                let before = self.working.rels.len();
                self.working.rels.retain(|_, r| !(r.src == s && r.dst == d && r.ty == ty));
                prop_assert_eq!(removed as usize, before - self.working.rels.len());
            }
            Step::Commit => {
                if let Some(tx) = self.tx.take() {
                    tx.commit().unwrap();
                }
                self.committed = self.working.clone();
            }
            Step::Abort => {
                self.tx = None;
                self.working = self.committed.clone();
            }
            Step::Checkpoint => {
                self.tx = None;
                self.working = self.committed.clone();
                self.store.as_ref().unwrap().checkpoint().unwrap();
            }
            Step::Reopen => {
                self.tx = None;
                self.working = self.committed.clone();
                if let Some(dir) = &self.dir {
                    self.store = None;
                    let (store, report) = Store::open(dir.path()).unwrap();
                    prop_assert!(report.is_clean(), "{}", report);
                    self.store = Some(store);
                }
            }
        }
        if let Some(tx) = &self.tx {
            assert_matches(tx, &self.working)?;
        }
        let snapshot = self.store.as_ref().unwrap().read();
        assert_matches(&snapshot, &self.committed)
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn in_memory_store_matches_the_model(steps in proptest::collection::vec(step(), 1..120)) {
        let mut h = Harness::new(false);
        for s in steps {
            h.run(s)?;
        }
    }

    #[test]
    fn durable_store_matches_the_model_across_reopens(steps in proptest::collection::vec(step(), 1..80)) {
        let mut h = Harness::new(true);
        for s in steps {
            h.run(s)?;
        }
        h.run(Step::Commit)?;
        h.run(Step::Reopen)?;
    }
}
