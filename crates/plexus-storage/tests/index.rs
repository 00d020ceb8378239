//! Property indexes on nodes and on relationships: random operations against a reference model (after every
//! step, seeks and ranges over every index equal a brute-force scan with Cypher's comparison rules, and a write
//! is refused exactly when it would break a uniqueness constraint one of them backs), durability through the log
//! and checkpoints, rollback, and conflicts between transactions.

use std::cmp::Ordering;
use std::collections::{BTreeMap, BTreeSet};
use std::ops::Bound;

use proptest::prelude::*;

use plexus_storage::checkpoint::{decode_body, encode_body};
use plexus_storage::*;

const LABELS: u32 = 3;
const KEYS: u32 = 2;
const TYPES: u32 = 2;

fn value_strategy() -> impl Strategy<Value = Value> {
    prop_oneof![
        3 => (-3i64..4).prop_map(Value::Int),
        3 => prop::sample::select(vec![-1.5, -0.0, 0.0, 1.0, 1.5, 2.0, 3.25, f64::NAN, f64::INFINITY]).prop_map(Value::Float),
        2 => prop::sample::select(vec!["", "a", "ab", "b", "é"]).prop_map(Value::from),
        1 => Just(Value::Bool(true)),
        2 => Just(Value::Null),
    ]
}

#[derive(Clone, Debug)]
enum Step {
    CreateNode {
        labels: Vec<u32>,
        props: Vec<(u32, Value)>,
    },
    SetProp {
        node: usize,
        key: u32,
        value: Value,
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
    },
    CreateIndex {
        label: u32,
        key: u32,
    },
    DropIndex {
        label: u32,
        key: u32,
    },
    CreateRel {
        from: usize,
        to: usize,
        ty: u32,
        props: Vec<(u32, Value)>,
    },
    SetRelProp {
        rel: usize,
        key: u32,
        value: Value,
    },
    DeleteRel {
        rel: usize,
    },
    CreateRelIndex {
        ty: u32,
        key: u32,
        unique: bool,
    },
    DropRelIndex {
        ty: u32,
        key: u32,
    },
    /// On keys 0 and 1, or 1 and 0 when `reversed`.
    CreateComposite {
        label: u32,
        reversed: bool,
        unique: bool,
    },
    DropComposite {
        label: u32,
        reversed: bool,
    },
    /// A node with `labels` and another node's properties: a likely second holder of a unique value.
    CopyNode {
        node: usize,
        labels: Vec<u32>,
    },
    /// A copy of a node without `label`, which it is then given: a likely second holder by labelling.
    CopyThenLabel {
        node: usize,
        label: u32,
    },
    /// Sets a node's property `key` to another node's value (null when it has none).
    CopyProp {
        from: usize,
        to: usize,
        key: u32,
    },
    /// Sets both of a node's composite properties to another node's values, one after the other.
    CopyBoth {
        from: usize,
        to: usize,
    },
    /// Sets a relationship's property `key` to another relationship's value.
    CopyRelProp {
        from: usize,
        to: usize,
        key: u32,
    },
    /// A relationship with another's type and properties.
    CopyRel {
        rel: usize,
        from: usize,
        to: usize,
    },
    Commit,
    Abort,
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        4 => (prop::collection::vec(0..LABELS, 0..3), prop::collection::vec((0..KEYS, value_strategy()), 0..3))
            .prop_map(|(labels, props)| Step::CreateNode { labels, props }),
        4 => (any::<usize>(), 0..KEYS, value_strategy()).prop_map(|(node, key, value)| Step::SetProp { node, key, value }),
        2 => (any::<usize>(), 0..LABELS).prop_map(|(node, label)| Step::AddLabel { node, label }),
        1 => (any::<usize>(), 0..LABELS).prop_map(|(node, label)| Step::RemoveLabel { node, label }),
        1 => any::<usize>().prop_map(|node| Step::DeleteNode { node }),
        1 => (0..LABELS, 0..KEYS).prop_map(|(label, key)| Step::CreateIndex { label, key }),
        1 => (0..LABELS, 0..KEYS).prop_map(|(label, key)| Step::DropIndex { label, key }),
        3 => (any::<usize>(), any::<usize>(), 0..TYPES, prop::collection::vec((0..KEYS, value_strategy()), 0..3))
            .prop_map(|(from, to, ty, props)| Step::CreateRel { from, to, ty, props }),
        3 => (any::<usize>(), 0..KEYS, value_strategy()).prop_map(|(rel, key, value)| Step::SetRelProp { rel, key, value }),
        1 => any::<usize>().prop_map(|rel| Step::DeleteRel { rel }),
        1 => (0..TYPES, 0..KEYS, any::<bool>()).prop_map(|(ty, key, unique)| Step::CreateRelIndex { ty, key, unique }),
        1 => (0..TYPES, 0..KEYS).prop_map(|(ty, key)| Step::DropRelIndex { ty, key }),
        1 => (0..LABELS, any::<bool>(), any::<bool>())
            .prop_map(|(label, reversed, unique)| Step::CreateComposite { label, reversed, unique }),
        1 => (0..LABELS, any::<bool>()).prop_map(|(label, reversed)| Step::DropComposite { label, reversed }),
        2 => (any::<usize>(), prop::collection::vec(0..LABELS, 0..3))
            .prop_map(|(node, labels)| Step::CopyNode { node, labels }),
        2 => (any::<usize>(), any::<usize>(), any::<usize>()).prop_map(|(rel, from, to)| Step::CopyRel { rel, from, to }),
        1 => (any::<usize>(), 0..LABELS).prop_map(|(node, label)| Step::CopyThenLabel { node, label }),
        2 => (any::<usize>(), any::<usize>(), 0..KEYS).prop_map(|(from, to, key)| Step::CopyProp { from, to, key }),
        2 => (any::<usize>(), any::<usize>()).prop_map(|(from, to)| Step::CopyBoth { from, to }),
        2 => (any::<usize>(), any::<usize>(), 0..KEYS).prop_map(|(from, to, key)| Step::CopyRelProp { from, to, key }),
        1 => Just(Step::Commit),
        1 => Just(Step::Abort),
    ]
}

#[derive(Clone, Debug, Default)]
struct Model {
    nodes: BTreeMap<u64, (BTreeSet<u32>, BTreeMap<u32, Value>)>,
    indexes: BTreeSet<(u32, u32)>,
    /// Relationships: their ends, type and properties.
    rels: BTreeMap<u64, (u64, u64, u32, BTreeMap<u32, Value>)>,
    rel_indexes: BTreeSet<(u32, u32)>,
    /// Composite indexes on keys 0 and 1 (`false`) or 1 and 0 (`true`).
    composites: BTreeSet<(u32, bool)>,
    /// The relationship and composite indexes that back uniqueness constraints.
    unique_rels: BTreeSet<(u32, u32)>,
    unique_composites: BTreeSet<(u32, bool)>,
}

type Props = BTreeMap<u32, Value>;

/// Whether two values are one under a uniqueness constraint: Cypher's `=`, and `NaN` is one value (as
/// `DISTINCT` has it).
fn same_value(a: &Value, b: &Value) -> bool {
    let nan = |v: &Value| matches!(v, Value::Float(f) if f.is_nan());
    cypher_eq(a, b) || nan(a) && nan(b)
}

/// Whether a node `id` (a new one when `None`) with `labels` and `props` would share both composite values with
/// another node of a label whose composite index is unique.
fn node_conflicts(m: &Model, id: Option<u64>, labels: &BTreeSet<u32>, props: &Props) -> bool {
    let (Some(a), Some(b)) = (props.get(&0), props.get(&1)) else { return false };
    m.unique_composites.iter().any(|&(label, _)| {
        labels.contains(&label)
            && m.nodes.iter().any(|(&other, (ls, ps))| {
                Some(other) != id
                    && ls.contains(&label)
                    && ps.get(&0).is_some_and(|x| same_value(x, a))
                    && ps.get(&1).is_some_and(|y| same_value(y, b))
            })
    })
}

/// Whether a relationship `id` (a new one when `None`) of type `ty` with `props` would share a value with
/// another of its type under a unique relationship index.
fn rel_conflicts(m: &Model, id: Option<u64>, ty: u32, props: &Props) -> bool {
    m.unique_rels.iter().any(|&(t, key)| {
        t == ty
            && props.get(&key).is_some_and(|v| {
                m.rels.iter().any(|(&other, r)| {
                    Some(other) != id && r.2 == ty && r.3.get(&key).is_some_and(|w| same_value(v, w))
                })
            })
    })
}

/// Whether the data already breaks a unique composite index on `label` (the model, with it added).
fn composite_duplicates(m: &Model, label: u32) -> bool {
    let only = Model { unique_composites: BTreeSet::from([(label, false)]), ..Model::default() };
    let only = Model { nodes: m.nodes.clone(), ..only };
    m.nodes.iter().any(|(&id, (ls, ps))| node_conflicts(&only, Some(id), ls, ps))
}

fn rel_duplicates(m: &Model, ty: u32, key: u32) -> bool {
    let only = Model { unique_rels: BTreeSet::from([(ty, key)]), rels: m.rels.clone(), ..Model::default() };
    m.rels.iter().any(|(&id, r)| r.2 == ty && rel_conflicts(&only, Some(id), ty, &r.3))
}

fn composite_keys(reversed: bool) -> Vec<PropKeyId> {
    if reversed {
        vec![PropKeyId(1), PropKeyId(0)]
    } else {
        vec![PropKeyId(0), PropKeyId(1)]
    }
}

/// Cypher's `=` on the values the test uses.
fn cypher_eq(a: &Value, b: &Value) -> bool {
    cypher_cmp(a, b) == Some(Ordering::Equal)
}

/// Cypher's comparison on the values the test uses: numbers (small, so exact as floats), strings, booleans.
/// `None`: null, `NaN` or different types.
fn cypher_cmp(a: &Value, b: &Value) -> Option<Ordering> {
    match (a, b) {
        (Value::String(x), Value::String(y)) => Some(x.cmp(y)),
        (Value::Bool(x), Value::Bool(y)) => Some(x.cmp(y)),
        _ => a.as_f64()?.partial_cmp(&b.as_f64()?),
    }
}

fn in_bound(v: &Value, lower: Bound<&Value>, upper: Bound<&Value>) -> bool {
    let lo = match lower {
        Bound::Included(b) => matches!(cypher_cmp(v, b), Some(Ordering::Greater | Ordering::Equal)),
        Bound::Excluded(b) => cypher_cmp(v, b) == Some(Ordering::Greater),
        Bound::Unbounded => true,
    };
    let hi = match upper {
        Bound::Included(b) => matches!(cypher_cmp(v, b), Some(Ordering::Less | Ordering::Equal)),
        Bound::Excluded(b) => cypher_cmp(v, b) == Some(Ordering::Less),
        Bound::Unbounded => true,
    };
    lo && hi && !(lower == Bound::Unbounded && upper == Bound::Unbounded)
}

fn holders(model: &Model, label: u32, key: u32) -> Vec<(u64, Value)> {
    model
        .nodes
        .iter()
        .filter(|(_, (labels, _))| labels.contains(&label))
        .filter_map(|(&id, (_, props))| props.get(&key).map(|v| (id, v.clone())))
        .collect()
}

fn probes() -> Vec<Value> {
    vec![
        Value::Int(0),
        Value::Int(1),
        Value::Float(1.5),
        Value::Float(-0.0),
        Value::Float(f64::NAN),
        Value::from("a"),
        Value::from("b"),
        Value::Bool(false),
        Value::Null,
    ]
}

fn bounds(probes: &[Value]) -> Vec<Bound<&Value>> {
    let mut out = vec![Bound::Unbounded];
    for p in probes {
        out.push(Bound::Included(p));
        out.push(Bound::Excluded(p));
    }
    out
}

/// Compares every index of `g` with the model; `salt` picks which range pairs to try.
fn assert_indexes(g: &GraphState, model: &Model, salt: usize) -> Result<(), TestCaseError> {
    let got: BTreeSet<(u32, u32)> = g.indexes().iter().map(|(l, k)| (l.0, k.0)).collect();
    prop_assert_eq!(&got, &model.indexes);
    for &(label, key) in &model.indexes {
        let (l, k) = (LabelId(label), PropKeyId(key));
        prop_assert_eq!(g.index_len(l, k), Some(holders(model, label, key).len()));
        let seek = |p: &Value| g.index_seek(l, k, p).iter().map(|n| n.0).collect();
        let range = |lo: Bound<&Value>, hi: Bound<&Value>| g.index_range(l, k, lo, hi).iter().map(|n| n.0).collect();
        assert_one_index(&holders(model, label, key), seek, range, salt, ("label", label, key))?;
    }
    let got: BTreeSet<(u32, u32)> = g.rel_indexes().iter().map(|(t, k)| (t.0, k.0)).collect();
    prop_assert_eq!(&got, &model.rel_indexes);
    for &(ty, key) in &model.rel_indexes {
        let (t, k) = (TypeId(ty), PropKeyId(key));
        let entries: Vec<(u64, Value)> = model
            .rels
            .iter()
            .filter(|(_, r)| r.2 == ty)
            .filter_map(|(&id, r)| r.3.get(&key).map(|v| (id, v.clone())))
            .collect();
        prop_assert_eq!(g.rel_property_index(t, k).map(|i| i.len()), Some(entries.len()));
        let seek = |p: &Value| g.rel_index_seek(t, k, p).iter().map(|r| r.0).collect();
        let range =
            |lo: Bound<&Value>, hi: Bound<&Value>| g.rel_index_range(t, k, lo, hi).iter().map(|r| r.0).collect();
        assert_one_index(&entries, seek, range, salt, ("type", ty, key))?;
    }
    let got: BTreeSet<(u32, bool)> =
        g.composite_indexes().iter().map(|(l, keys)| (l.0, keys[0] == PropKeyId(1))).collect();
    prop_assert_eq!(&got, &model.composites);
    let unique: BTreeSet<(u32, bool)> = got
        .iter()
        .copied()
        .filter(|&(l, reversed)| g.composite_index_is_unique(LabelId(l), &composite_keys(reversed)))
        .collect();
    prop_assert_eq!(&unique, &model.unique_composites);
    let unique: BTreeSet<(u32, u32)> =
        model.rel_indexes.iter().copied().filter(|&(t, k)| g.rel_index_is_unique(TypeId(t), PropKeyId(k))).collect();
    prop_assert_eq!(&unique, &model.unique_rels);
    let probes = probes();
    for &(label, reversed) in &model.composites {
        let keys = composite_keys(reversed);
        for (i, a) in probes.iter().enumerate() {
            for b in probes.iter().skip((i + salt) % 3).step_by(3) {
                let want: Vec<NodeId> = model
                    .nodes
                    .iter()
                    .filter(|(_, (labels, props))| {
                        labels.contains(&label)
                            && props.get(&keys[0].0).is_some_and(|v| cypher_eq(v, a))
                            && props.get(&keys[1].0).is_some_and(|v| cypher_eq(v, b))
                    })
                    .map(|(&id, _)| NodeId(id))
                    .collect();
                let got = g.composite_seek(LabelId(label), &keys, &[a.clone(), b.clone()]);
                prop_assert_eq!(got, want, "composite seek ({:?}, {:?}) on {} {:?}", a, b, label, keys);
            }
            // An equality on the first property and a range on the second.
            let bounds = bounds(&probes);
            for (j, lower) in bounds.iter().enumerate() {
                for (k, upper) in bounds.iter().enumerate() {
                    if !(i * 31 + j * bounds.len() + k + salt).is_multiple_of(11) {
                        continue;
                    }
                    let mut want: Vec<(u64, &Value)> = model
                        .nodes
                        .iter()
                        .filter(|(_, (labels, props))| {
                            labels.contains(&label) && props.get(&keys[0].0).is_some_and(|v| cypher_eq(v, a))
                        })
                        .filter_map(|(&id, (_, props))| props.get(&keys[1].0).map(|v| (id, v)))
                        .filter(|(_, v)| in_bound(v, *lower, *upper))
                        .collect();
                    want.sort_by(|x, y| cypher_cmp(x.1, y.1).expect("one type").then(x.0.cmp(&y.0)));
                    let want: Vec<NodeId> = want.into_iter().map(|(id, _)| NodeId(id)).collect();
                    let got = g.composite_range(LabelId(label), &keys, std::slice::from_ref(a), *lower, *upper);
                    prop_assert_eq!(
                        got,
                        want,
                        "composite range {:?}, {:?}..{:?} on {} {:?}",
                        a,
                        lower,
                        upper,
                        label,
                        keys
                    );
                }
            }
        }
    }
    let problems = g.check();
    prop_assert!(problems.is_empty(), "{:?}", problems);
    Ok(())
}

/// Compares one index's seeks and ranges with a scan of `entries` (its holders' ids and values).
fn assert_one_index(
    entries: &[(u64, Value)],
    seek: impl Fn(&Value) -> Vec<u64>,
    range: impl Fn(Bound<&Value>, Bound<&Value>) -> Vec<u64>,
    salt: usize,
    which: (&str, u32, u32),
) -> Result<(), TestCaseError> {
    let probes = probes();
    let bounds = bounds(&probes);
    for p in &probes {
        let want: Vec<u64> = entries.iter().filter(|(_, v)| cypher_eq(v, p)).map(|(id, _)| *id).collect();
        prop_assert_eq!(seek(p), want, "seek {:?} on {:?}", p, which);
    }
    for (i, lower) in bounds.iter().enumerate() {
        for (j, upper) in bounds.iter().enumerate() {
            if !(i * bounds.len() + j + salt).is_multiple_of(7) {
                continue;
            }
            let mut want: Vec<&(u64, Value)> = entries.iter().filter(|(_, v)| in_bound(v, *lower, *upper)).collect();
            want.sort_by(|a, b| cypher_cmp(&a.1, &b.1).expect("one type").then(a.0.cmp(&b.0)));
            let want: Vec<u64> = want.iter().map(|(id, _)| *id).collect();
            prop_assert_eq!(range(*lower, *upper), want, "range {:?}..{:?} on {:?}", lower, upper, which);
        }
    }
    Ok(())
}

fn nth(model: &Model, i: usize) -> Option<u64> {
    (!model.nodes.is_empty()).then(|| *model.nodes.keys().nth(i % model.nodes.len()).unwrap())
}

/// Sets property `key` of node `id` to `value` in the transaction and the model, checking that it is refused
/// exactly when it would break a uniqueness constraint.
fn set_prop(t: &mut WriteTxn, working: &mut Model, id: u64, key: u32, value: Value) -> Result<(), TestCaseError> {
    let result = t.set_node_prop(NodeId(id), PropKeyId(key), value.clone());
    let (labels, mut props) = working.nodes[&id].clone();
    if value.is_null() {
        props.remove(&key);
    } else {
        props.insert(key, value);
    }
    prop_assert_eq!(result.is_err(), node_conflicts(working, Some(id), &labels, &props), "{:?}", result);
    if result.is_ok() {
        working.nodes.get_mut(&id).unwrap().1 = props;
    }
    Ok(())
}

fn run(steps: Vec<Step>) -> Result<(), TestCaseError> {
    let store = Store::in_memory();
    {
        let mut tx = store.write();
        for l in 0..LABELS {
            tx.label(&format!("L{l}"));
        }
        for k in 0..KEYS {
            tx.prop_key(&format!("k{k}"));
        }
        for t in 0..TYPES {
            tx.rel_type(&format!("T{t}"));
        }
        tx.create_index(LabelId(0), PropKeyId(0)).unwrap();
        tx.create_rel_index(TypeId(0), PropKeyId(0), None).unwrap();
        // Constraints from the start, so that writes meet them often.
        tx.create_composite_unique(LabelId(1), &composite_keys(false), None).unwrap();
        tx.create_rel_unique(TypeId(1), PropKeyId(1), None).unwrap();
        tx.commit().unwrap();
    }
    let mut committed = Model {
        indexes: BTreeSet::from([(0, 0)]),
        rel_indexes: BTreeSet::from([(0, 0), (1, 1)]),
        composites: BTreeSet::from([(1, false)]),
        unique_rels: BTreeSet::from([(1, 1)]),
        unique_composites: BTreeSet::from([(1, false)]),
        ..Model::default()
    };
    let mut working = committed.clone();
    let mut tx: Option<WriteTxn> = None;
    for (n, s) in steps.into_iter().enumerate() {
        let t = tx.get_or_insert_with(|| store.write());
        let s = match s {
            Step::CopyNode { node, labels } => {
                let Some(id) = nth(&working, node) else { continue };
                Step::CreateNode { labels, props: working.nodes[&id].1.clone().into_iter().collect() }
            }
            Step::CopyProp { from, to, key } => {
                let Some(id) = nth(&working, from) else { continue };
                let value = working.nodes[&id].1.get(&key).cloned().unwrap_or(Value::Null);
                Step::SetProp { node: to, key, value }
            }
            Step::CopyRelProp { from, to, key } => {
                let Some(r) = working.rels.values().nth(from % working.rels.len().max(1)) else { continue };
                let value = r.3.get(&key).cloned().unwrap_or(Value::Null);
                Step::SetRelProp { rel: to, key, value }
            }
            Step::CopyRel { rel, from, to } => {
                let Some(&(_, _, ty, ref props)) = working.rels.values().nth(rel % working.rels.len().max(1)) else {
                    continue;
                };
                Step::CreateRel { from, to, ty, props: props.clone().into_iter().collect() }
            }
            other => other,
        };
        match s {
            Step::CreateNode { labels, props } => {
                let ls: Vec<LabelId> = labels.iter().map(|&l| LabelId(l)).collect();
                let ps: Vec<(PropKeyId, Value)> = props.iter().map(|(k, v)| (PropKeyId(*k), v.clone())).collect();
                let result = t.create_node(&ls, ps);
                let mut map = BTreeMap::new();
                for (k, v) in props {
                    if v.is_null() {
                        map.remove(&k);
                    } else {
                        map.insert(k, v);
                    }
                }
                let labels: BTreeSet<u32> = labels.into_iter().collect();
                prop_assert_eq!(result.is_err(), node_conflicts(&working, None, &labels, &map), "{:?}", result);
                if let Ok(id) = result {
                    working.nodes.insert(id.0, (labels, map));
                }
            }
            Step::SetProp { node, key, value } => {
                let Some(id) = nth(&working, node) else { continue };
                set_prop(t, &mut working, id, key, value)?;
            }
            Step::CopyBoth { from, to } => {
                let (Some(from), Some(to)) = (nth(&working, from), nth(&working, to)) else { continue };
                for key in 0..KEYS {
                    let value = working.nodes[&from].1.get(&key).cloned().unwrap_or(Value::Null);
                    set_prop(t, &mut working, to, key, value)?;
                }
            }
            Step::AddLabel { node, label } => {
                let Some(id) = nth(&working, node) else { continue };
                let result = t.add_label(NodeId(id), LabelId(label));
                let (mut labels, props) = working.nodes[&id].clone();
                labels.insert(label);
                prop_assert_eq!(result.is_err(), node_conflicts(&working, Some(id), &labels, &props), "{:?}", result);
                if result.is_ok() {
                    working.nodes.get_mut(&id).unwrap().0 = labels;
                }
            }
            Step::RemoveLabel { node, label } => {
                let Some(id) = nth(&working, node) else { continue };
                t.remove_label(NodeId(id), LabelId(label)).unwrap();
                working.nodes.get_mut(&id).unwrap().0.remove(&label);
            }
            Step::DeleteNode { node } => {
                let Some(id) = nth(&working, node) else { continue };
                t.detach_delete_node(NodeId(id)).unwrap();
                working.nodes.remove(&id);
                working.rels.retain(|_, r| r.0 != id && r.1 != id);
            }
            Step::CreateRel { from, to, ty, props } => {
                let (Some(src), Some(dst)) = (nth(&working, from), nth(&working, to)) else { continue };
                let ps: Vec<(PropKeyId, Value)> = props.iter().map(|(k, v)| (PropKeyId(*k), v.clone())).collect();
                let result = t.create_rel(NodeId(src), TypeId(ty), NodeId(dst), ps);
                // The last value given for a key counts, and a null one leaves the key out.
                let map = props.into_iter().collect::<BTreeMap<_, _>>().into_iter().filter(|(_, v)| !v.is_null());
                let map: Props = map.collect();
                prop_assert_eq!(result.is_err(), rel_conflicts(&working, None, ty, &map), "{:?}", result);
                if let Ok(id) = result {
                    working.rels.insert(id.0, (src, dst, ty, map));
                }
            }
            Step::SetRelProp { rel, key, value } => {
                if working.rels.is_empty() {
                    continue;
                }
                let id = *working.rels.keys().nth(rel % working.rels.len()).unwrap();
                let result = t.set_rel_prop(RelId(id), PropKeyId(key), value.clone());
                let (ty, mut props) = (working.rels[&id].2, working.rels[&id].3.clone());
                if value.is_null() {
                    props.remove(&key);
                } else {
                    props.insert(key, value);
                }
                prop_assert_eq!(result.is_err(), rel_conflicts(&working, Some(id), ty, &props), "{:?}", result);
                if result.is_ok() {
                    working.rels.get_mut(&id).unwrap().3 = props;
                }
            }
            Step::DeleteRel { rel } => {
                if working.rels.is_empty() {
                    continue;
                }
                let id = *working.rels.keys().nth(rel % working.rels.len()).unwrap();
                t.delete_rel(RelId(id)).unwrap();
                working.rels.remove(&id);
            }
            Step::CreateRelIndex { ty, key, unique } => {
                let (t_, k_) = (TypeId(ty), PropKeyId(key));
                let result = if unique { t.create_rel_unique(t_, k_, None) } else { t.create_rel_index(t_, k_, None) };
                let refused = working.rel_indexes.contains(&(ty, key)) || (unique && rel_duplicates(&working, ty, key));
                prop_assert_eq!(result.is_err(), refused, "{:?}", result);
                if result.is_ok() {
                    working.rel_indexes.insert((ty, key));
                    if unique {
                        working.unique_rels.insert((ty, key));
                    }
                }
            }
            Step::DropRelIndex { ty, key } => {
                let result = t.drop_rel_index(TypeId(ty), PropKeyId(key));
                prop_assert_eq!(result.is_ok(), working.rel_indexes.remove(&(ty, key)), "{:?}", result);
                working.unique_rels.remove(&(ty, key));
            }
            Step::CreateComposite { label, reversed, unique } => {
                let (l, keys) = (LabelId(label), composite_keys(reversed));
                let result = if unique {
                    t.create_composite_unique(l, &keys, None)
                } else {
                    t.create_composite_index(l, &keys, None)
                };
                let refused = working.composites.contains(&(label, reversed))
                    || (unique && composite_duplicates(&working, label));
                prop_assert_eq!(result.is_err(), refused, "{:?}", result);
                if result.is_ok() {
                    working.composites.insert((label, reversed));
                    if unique {
                        working.unique_composites.insert((label, reversed));
                    }
                }
            }
            Step::DropComposite { label, reversed } => {
                let result = t.drop_composite_index(LabelId(label), &composite_keys(reversed));
                prop_assert_eq!(result.is_ok(), working.composites.remove(&(label, reversed)), "{:?}", result);
                working.unique_composites.remove(&(label, reversed));
            }
            Step::CreateIndex { label, key } => {
                let result = t.create_index(LabelId(label), PropKeyId(key));
                prop_assert_eq!(result.is_ok(), working.indexes.insert((label, key)), "{:?}", result);
            }
            Step::DropIndex { label, key } => {
                let result = t.drop_index(LabelId(label), PropKeyId(key));
                prop_assert_eq!(result.is_ok(), working.indexes.remove(&(label, key)), "{:?}", result);
            }
            Step::CopyNode { .. } | Step::CopyRel { .. } | Step::CopyProp { .. } | Step::CopyRelProp { .. } => {
                unreachable!("made a creation or a write above")
            }
            Step::CopyThenLabel { node, label } => {
                let Some(id) = nth(&working, node) else { continue };
                let (mut labels, props) = working.nodes[&id].clone();
                labels.remove(&label);
                let ls: Vec<LabelId> = labels.iter().map(|&l| LabelId(l)).collect();
                let ps: Vec<(PropKeyId, Value)> = props.iter().map(|(k, v)| (PropKeyId(*k), v.clone())).collect();
                let result = t.create_node(&ls, ps);
                prop_assert_eq!(result.is_err(), node_conflicts(&working, None, &labels, &props), "{:?}", result);
                let Ok(copy) = result else { continue };
                working.nodes.insert(copy.0, (labels.clone(), props.clone()));
                let result = t.add_label(copy, LabelId(label));
                labels.insert(label);
                let refused = node_conflicts(&working, Some(copy.0), &labels, &props);
                prop_assert_eq!(result.is_err(), refused, "{:?}", result);
                if result.is_ok() {
                    working.nodes.get_mut(&copy.0).unwrap().0 = labels;
                }
            }
            Step::Commit => {
                tx.take().unwrap().commit().unwrap();
                committed = working.clone();
            }
            Step::Abort => {
                tx = None;
                working = committed.clone();
            }
        }
        if let Some(t) = &tx {
            assert_indexes(t, &working, n)?;
        }
        assert_indexes(&store.read(), &committed, n + 3)?;
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn indexes_match_a_scan(steps in prop::collection::vec(step(), 1..100)) {
        run(steps)?;
    }
}

fn people(tx: &mut WriteTxn) -> (LabelId, PropKeyId) {
    (tx.label("Person"), tx.prop_key("age"))
}

/// Every seek and range a probe set can ask, as one comparable value.
fn answers(g: &GraphState, l: LabelId, k: PropKeyId) -> Vec<Vec<NodeId>> {
    let probes = probes();
    let bounds = bounds(&probes);
    let mut out: Vec<Vec<NodeId>> = probes.iter().map(|p| g.index_seek(l, k, p)).collect();
    for lower in &bounds {
        for upper in &bounds {
            out.push(g.index_range(l, k, *lower, *upper));
        }
    }
    out
}

#[test]
fn indexes_survive_the_log_and_checkpoints() {
    let dir = tempfile::tempdir().unwrap();
    let options = Options { checkpoint_after_bytes: 0, ..Options::default() };
    let (expected, l, k) = {
        let (store, _) = Store::open_with(dir.path(), options.clone()).unwrap();
        let mut tx = store.write();
        let (l, k) = people(&mut tx);
        let other = tx.label("Other");
        for (i, v) in [Value::Int(1), Value::Float(1.5), Value::from("a"), Value::Int(0), Value::Float(-0.0)]
            .into_iter()
            .enumerate()
        {
            let labels = if i == 3 { vec![other] } else { vec![l] };
            tx.create_node(&labels, vec![(k, v)]).unwrap();
        }
        tx.commit().unwrap();
        // Created over existing data, then maintained.
        let mut tx = store.write();
        tx.create_index(l, k).unwrap();
        let n = tx.create_node(&[l], vec![(k, Value::Int(2))]).unwrap();
        tx.create_node(&[l, other], vec![(k, Value::from("b"))]).unwrap();
        tx.commit().unwrap();
        let mut tx = store.write();
        tx.set_node_prop(n, k, Value::Float(0.5)).unwrap();
        tx.commit().unwrap();
        let snapshot = store.read();
        assert_eq!(snapshot.index_range(l, k, Bound::Excluded(&Value::Int(0)), Bound::Unbounded).len(), 3);
        assert!(snapshot.check().is_empty());
        (answers(&snapshot, l, k), l, k)
    };
    // From the log.
    {
        let (store, report) = Store::open_with(dir.path(), options.clone()).unwrap();
        assert_eq!(report.checkpoint_version, None);
        let snapshot = store.read();
        assert!(snapshot.has_index(l, k));
        assert_eq!(answers(&snapshot, l, k), expected);
        store.checkpoint().unwrap();
    }
    // From the checkpoint.
    {
        let (store, report) = Store::open_with(dir.path(), options.clone()).unwrap();
        assert!(report.checkpoint_version.is_some());
        assert_eq!(report.replayed, 0);
        let snapshot = store.read();
        assert_eq!(snapshot.indexes(), vec![(l, k)]);
        assert_eq!(answers(&snapshot, l, k), expected);
        assert!(snapshot.check().is_empty());
        let mut tx = store.write();
        tx.drop_index(l, k).unwrap();
        tx.commit().unwrap();
    }
    // The drop, from the log on top of the checkpoint.
    let (store, _) = Store::open_with(dir.path(), options).unwrap();
    assert!(!store.read().has_index(l, k));
    assert!(store.read().index_seek(l, k, &Value::Int(1)).is_empty());
}

#[test]
fn relationship_indexes_survive_the_log_and_checkpoints_with_their_names() {
    let dir = tempfile::tempdir().unwrap();
    let options = Options { checkpoint_after_bytes: 0, ..Options::default() };
    let (knows, since, other) = {
        let (store, _) = Store::open_with(dir.path(), options.clone()).unwrap();
        let mut tx = store.write();
        let (knows, other, since) = (tx.rel_type("KNOWS"), tx.rel_type("OTHER"), tx.prop_key("since"));
        let a = tx.create_node(&[], vec![]).unwrap();
        let b = tx.create_node(&[], vec![]).unwrap();
        tx.create_rel(a, knows, b, vec![(since, Value::Int(2001))]).unwrap();
        tx.create_rel(b, other, a, vec![(since, Value::Int(2001))]).unwrap();
        tx.commit().unwrap();
        let mut tx = store.write();
        tx.create_rel_index(knows, since, Some("knows_since")).unwrap();
        // A name is one namespace with node indexes and unique keys.
        let person = tx.label("Person");
        assert!(tx.create_named_index(person, since, Some("knows_since")).is_err());
        tx.create_rel_index(other, since, None).unwrap();
        let r = tx.create_rel(a, knows, a, vec![(since, Value::Float(1999.5))]).unwrap();
        tx.commit().unwrap();
        let mut tx = store.write();
        tx.set_rel_prop(r, since, Value::Int(1999)).unwrap();
        tx.commit().unwrap();
        (knows, since, other)
    };
    let expect = |store: &Store| {
        let s = store.read();
        assert_eq!(s.rel_indexes(), vec![(knows, since), (other, since)]);
        assert_eq!(s.rel_index_name(knows, since).as_deref(), Some("knows_since"));
        assert_eq!(s.rel_index_name(other, since), None);
        assert_eq!(s.rel_index_seek(knows, since, &Value::Int(2001)).len(), 1);
        assert_eq!(s.rel_index_seek(knows, since, &Value::Float(1999.0)).len(), 1);
        assert_eq!(s.rel_index_range(knows, since, Bound::Unbounded, Bound::Included(&Value::Int(2001))).len(), 2);
        assert_eq!(s.rel_index_seek(other, since, &Value::Int(2001)).len(), 1);
        assert!(s.check().is_empty(), "{:?}", s.check());
    };
    // From the log, then from the checkpoint.
    {
        let (store, report) = Store::open_with(dir.path(), options.clone()).unwrap();
        assert_eq!(report.checkpoint_version, None);
        expect(&store);
        store.checkpoint().unwrap();
    }
    {
        let (store, report) = Store::open_with(dir.path(), options.clone()).unwrap();
        assert!(report.checkpoint_version.is_some());
        expect(&store);
        let mut tx = store.write();
        tx.drop_rel_index(knows, since).unwrap();
        assert!(tx.drop_rel_index(knows, since).is_err());
        tx.commit().unwrap();
    }
    let (store, _) = Store::open_with(dir.path(), options).unwrap();
    assert_eq!(store.read().rel_indexes(), vec![(other, since)]);
    assert!(store.read().rel_index_seek(knows, since, &Value::Int(2001)).is_empty());
    // Deleting a node deletes its relationships' entries.
    let mut tx = store.write();
    let nodes: Vec<NodeId> = (0..2).map(NodeId).collect();
    for n in nodes {
        tx.detach_delete_node(n).unwrap();
    }
    tx.commit().unwrap();
    assert!(store.read().rel_index_seek(other, since, &Value::Int(2001)).is_empty());
    assert!(store.read().check().is_empty());
}

#[test]
fn composite_indexes_survive_the_log_and_checkpoints_with_their_names() {
    let dir = tempfile::tempdir().unwrap();
    let options = Options { checkpoint_after_bytes: 0, ..Options::default() };
    let (person, keys) = {
        let (store, _) = Store::open_with(dir.path(), options.clone()).unwrap();
        let mut tx = store.write();
        let (person, first, last) = (tx.label("Person"), tx.prop_key("first"), tx.prop_key("last"));
        let names = [("Ada", "Lovelace"), ("Ada", "Byron"), ("Alan", "Turing")];
        for (f, l) in names {
            tx.create_node(&[person], vec![(first, Value::from(f)), (last, Value::from(l))]).unwrap();
        }
        tx.create_node(&[person], vec![(first, Value::from("Ada"))]).unwrap();
        tx.commit().unwrap();
        let mut tx = store.write();
        let keys = vec![first, last];
        assert!(tx.create_composite_index(person, &[first], None).is_err(), "one key is not composite");
        assert!(tx.create_composite_index(person, &[first, first], None).is_err(), "repeated key");
        tx.create_composite_index(person, &keys, Some("full_name")).unwrap();
        tx.commit().unwrap();
        (person, keys)
    };
    let expect = |store: &Store, found: usize| {
        let s = store.read();
        assert_eq!(s.composite_indexes(), vec![(person, keys.clone())]);
        assert_eq!(s.composite_index_name(person, &keys).as_deref(), Some("full_name"));
        let ada = [Value::from("Ada"), Value::from("Lovelace")];
        assert_eq!(s.composite_seek(person, &keys, &ada).len(), found);
        assert!(s.check().is_empty(), "{:?}", s.check());
    };
    {
        let (store, _) = Store::open_with(dir.path(), options.clone()).unwrap();
        expect(&store, 1);
        store.checkpoint().unwrap();
    }
    {
        let (store, report) = Store::open_with(dir.path(), options.clone()).unwrap();
        assert!(report.checkpoint_version.is_some());
        expect(&store, 1);
        // The fourth Ada gains a last name: now in the index.
        let mut tx = store.write();
        tx.set_node_prop(NodeId(3), keys[1], Value::from("Lovelace")).unwrap();
        tx.commit().unwrap();
        expect(&store, 2);
    }
    let (store, _) = Store::open_with(dir.path(), options).unwrap();
    expect(&store, 2);
}

#[test]
fn checkpoints_without_an_index_section_still_load() {
    let store = Store::in_memory();
    let mut tx = store.write();
    let (l, k) = people(&mut tx);
    tx.create_node(&[l], vec![(k, Value::Int(3))]).unwrap();
    tx.commit().unwrap();
    let body = encode_body(&store.read(), store.catalog());
    // The index section of a state without indexes is one zero byte; older checkpoints end before it.
    assert_eq!(body.last(), Some(&0));
    let old = &body[..body.len() - 1];
    let state = decode_body(old, &Catalog::new(), 1).unwrap();
    assert_eq!(state.node_count(), 1);
    assert!(state.indexes().is_empty());
}

#[test]
fn an_index_created_in_a_rolled_back_transaction_leaves_nothing() {
    let store = Store::in_memory();
    let mut tx = store.write();
    let (l, k) = people(&mut tx);
    tx.create_node(&[l], vec![(k, Value::Int(3))]).unwrap();
    tx.commit().unwrap();
    let mut tx = store.write();
    tx.create_index(l, k).unwrap();
    assert_eq!(tx.index_seek(l, k, &Value::Float(3.0)).len(), 1);
    tx.rollback();
    assert!(!store.read().has_index(l, k));
    let mut tx = store.write();
    let mark = tx.savepoint();
    tx.create_index(l, k).unwrap();
    tx.rollback_to(mark);
    assert!(!tx.has_index(l, k));
    assert!(tx.create_index(l, k).is_ok());
    assert!(tx.create_index(l, k).is_err(), "an index exists only once");
    tx.commit().unwrap();
    assert!(store.read().has_index(l, k));
}

#[test]
fn creating_the_same_index_twice_concurrently_conflicts() {
    let store = Store::in_memory();
    let mut tx = store.write();
    let (l, k) = people(&mut tx);
    let other = tx.prop_key("name");
    tx.create_node(&[l], vec![(k, Value::Int(3))]).unwrap();
    tx.commit().unwrap();
    let mut a = store.write();
    let mut b = store.write();
    let mut c = store.write();
    a.create_index(l, k).unwrap();
    b.create_index(l, k).unwrap();
    c.create_index(l, other).unwrap();
    a.commit().unwrap();
    assert!(b.commit().unwrap_err().is_retryable());
    c.commit().unwrap();
    assert_eq!(store.read().indexes(), vec![(l, k), (l, other)]);
    let mut a = store.write();
    let mut b = store.write();
    a.drop_index(l, k).unwrap();
    b.drop_index(l, k).unwrap();
    a.commit().unwrap();
    assert!(b.commit().unwrap_err().is_retryable());
}

#[test]
fn data_writers_and_index_creation_do_not_conflict() {
    let store = Store::in_memory();
    let mut tx = store.write();
    let (l, k) = people(&mut tx);
    let n = tx.create_node(&[l], vec![(k, Value::Int(3))]).unwrap();
    tx.commit().unwrap();
    // The writer commits first: the creation, replayed onto the newer state, indexes what it wrote.
    let mut create = store.write();
    let mut write = store.write();
    create.create_index(l, k).unwrap();
    write.set_node_prop(n, k, Value::Int(4)).unwrap();
    let m = write.create_node(&[l], vec![(k, Value::Int(5))]).unwrap();
    write.commit().unwrap();
    create.commit().unwrap();
    let snapshot = store.read();
    assert_eq!(snapshot.index_seek(l, k, &Value::Int(4)), vec![n]);
    assert_eq!(snapshot.index_range(l, k, Bound::Included(&Value::Int(4)), Bound::Unbounded), vec![n, m]);
    assert!(snapshot.check().is_empty());
    // The creation commits first: the writer's operations, replayed, maintain the index.
    let mut drop_and_create = store.write();
    let mut write = store.write();
    drop_and_create.drop_index(l, k).unwrap();
    drop_and_create.create_index(l, k).unwrap();
    write.set_node_prop(m, k, Value::Float(2.5)).unwrap();
    drop_and_create.commit().unwrap();
    write.commit().unwrap();
    let snapshot = store.read();
    assert_eq!(snapshot.index_range(l, k, Bound::Unbounded, Bound::Excluded(&Value::Int(4))), vec![m]);
    assert!(snapshot.check().is_empty());
}
