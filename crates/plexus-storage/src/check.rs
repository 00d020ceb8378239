//! Consistency checks over a whole graph state: used by `plexus check`, by recovery tests and by crash tests.
//!
//! A state is consistent when every relationship appears exactly once in its source's outgoing and once in its
//! target's incoming adjacency, every adjacency entry names a live relationship with matching ends and type,
//! counts agree with what is stored, and the label, unique-key and property indexes describe the nodes exactly.

use std::collections::BTreeMap;
use std::ops::ControlFlow;

use crate::adjacency::TypeFilter;
use crate::graph::GraphState;
use crate::ids::{Direction, LabelId, NodeId, RelId};
use crate::index::{CompositeIndex, IndexEntry, IndexKey};
use crate::pset::PSet;

/// Returns every inconsistency found (empty when the state is sound); stops after `limit` findings.
pub fn check_state(state: &GraphState, limit: usize) -> Vec<String> {
    let NodesChecked { problems: mut found, nodes, out_total, in_total, seen } = check_nodes(state, limit);
    found.truncate(limit);
    let mut problems = found;
    let mut push = |p: String| {
        if problems.len() < limit {
            problems.push(p);
        }
    };
    if nodes != state.node_count() {
        push(format!("node count says {} but {} nodes are live", state.node_count(), nodes));
    }
    let mut rels = 0u64;
    let mut per_type: Vec<u64> = Vec::new();
    let _ = state.visit_all_rels::<()>(|r| {
        rels += 1;
        let ty = r.ty.0 as usize;
        if per_type.len() <= ty {
            per_type.resize(ty + 1, 0);
        }
        per_type[ty] += 1;
        if !state.node_exists(r.src) || !state.node_exists(r.dst) {
            push(format!("{} joins a missing node", r.id));
        }
        // An entry found above sits in its end's adjacency (checked against this record there).
        if !seen[0].contains(r.id.0) {
            push(format!("{} is missing from the outgoing adjacency of {}", r.id, r.src));
        }
        if !seen[1].contains(r.id.0) {
            push(format!("{} is missing from the incoming adjacency of {}", r.id, r.dst));
        }
        ControlFlow::Continue(())
    });
    if rels != state.rel_count() {
        push(format!("relationship count says {} but {} are live", state.rel_count(), rels));
    }
    for ty in 0..per_type.len().max(state.type_counts.len()) {
        let (kept, live) = (state.type_count(crate::ids::TypeId(ty as u32)), per_type.get(ty).copied().unwrap_or(0));
        if kept != live {
            push(format!("type {ty} counts {kept} relationships but {live} are live"));
        }
    }
    if out_total != rels || in_total != rels {
        push(format!("{rels} relationships but {out_total} outgoing and {in_total} incoming entries"));
    }
    for (l, index) in state.labels.iter().enumerate() {
        let label = LabelId(l as u32);
        let mut counted = 0;
        let _ = state.visit_label::<()>(label, |n| {
            counted += 1;
            if !state.node_has_label(n, label) {
                push(format!("label index {l} lists {n}, which lacks the label"));
            }
            ControlFlow::Continue(())
        });
        if counted != index.count {
            push(format!("label {l} counts {} nodes but indexes {counted}", index.count));
        }
    }
    for u in state.unique.iter() {
        u.map.for_each(|value, id| {
            let node = NodeId(id);
            let matches = state.node_prop(node, u.key).is_some_and(|p| *crate::keymap::key_form(p) == *value);
            if !state.node_has_label(node, u.label) || !matches {
                push(format!(
                    "unique index ({}, {}) maps {value:?} to {node}, which does not match",
                    u.label.0, u.key.0
                ));
            }
        });
        let _ = state.visit_label::<()>(u.label, |n| {
            if let Some(v) = state.node_prop(n, u.key) {
                if u.map.get(v) != Some(&n.0) {
                    push(format!("{n} has key {v:?} but the unique index does not point at it"));
                }
            }
            ControlFlow::Continue(())
        });
    }
    for index in state.indexes.iter() {
        let name = format!("property index ({}, {})", index.label.0, index.key.0);
        let key_of = |n: u64| {
            let node = NodeId(n);
            state
                .node_prop(node, index.key)
                .filter(|_| state.node_has_label(node, index.label))
                .and_then(IndexKey::from_value)
        };
        let covered = |f: &mut dyn FnMut(u64)| {
            let _ = state.visit_label::<()>(index.label, |n| {
                f(n.0);
                ControlFlow::Continue(())
            });
        };
        check_index(&name, &index.entries, key_of, covered, &mut push);
    }
    for index in state.rel_indexes.iter() {
        let name = format!("relationship property index ({}, {})", index.ty.0, index.key.0);
        let key_of = |r: u64| {
            let rel = RelId(r);
            let value = state.rel_prop(rel, index.key).filter(|_| state.rel(rel).is_some_and(|r| r.ty == index.ty));
            value.as_ref().and_then(IndexKey::from_value)
        };
        let covered = |f: &mut dyn FnMut(u64)| {
            let _ = state.visit_all_rels::<()>(|r| {
                if r.ty == index.ty {
                    f(r.id.0);
                }
                ControlFlow::Continue(())
            });
        };
        check_index(&name, &index.entries, key_of, covered, &mut push);
        let duplicate = index.unique.then(|| state.rel_duplicate(index.key, &index.entries)).flatten();
        check_unique(&name, duplicate, &mut push);
    }
    for index in state.composites.iter() {
        let name = format!("composite index ({}, {:?})", index.label.0, index.keys);
        let key_of = |n: u64| {
            let node = NodeId(n);
            let key = CompositeIndex::key_of(index.keys.iter().map(|&k| state.node_prop(node, k)));
            key.filter(|_| state.node_has_label(node, index.label))
        };
        let covered = |f: &mut dyn FnMut(u64)| {
            let _ = state.visit_label::<()>(index.label, |n| {
                f(n.0);
                ControlFlow::Continue(())
            });
        };
        check_index(&name, &index.entries, key_of, covered, &mut push);
        let duplicate = index.unique.then(|| state.composite_duplicate(&index.keys, &index.entries)).flatten();
        check_unique(&name, duplicate, &mut push);
    }
    problems
}

/// Reports two holders of the same values under an index backing a uniqueness constraint.
fn check_unique(name: &str, duplicate: Option<(u64, u64)>, push: &mut impl FnMut(String)) {
    if let Some((a, b)) = duplicate {
        push(format!("{name} must be unique, but {a} and {b} hold the same values"));
    }
}

/// Checks one property index against what it covers: every entry is filed under its holder's key as it is now
/// (`key_of` an id: `None` when it holds nothing the index keeps, or is not covered), every id `covered` visits
/// that holds a key has its entry, and there are as many entries as such ids.
fn check_index(
    name: &str,
    entries: &PSet<IndexEntry>,
    key_of: impl Fn(u64) -> Option<IndexKey>,
    covered: impl FnOnce(&mut dyn FnMut(u64)),
    push: &mut impl FnMut(String),
) {
    let _ = entries.visit::<()>(|(key, id)| {
        let held = key_of(*id);
        if held.as_ref() != Some(key) {
            push(format!("{name} lists {id} under {key:?}, which does not match {held:?}"));
        }
        ControlFlow::Continue(())
    });
    let mut holders = 0;
    covered(&mut |id| {
        if let Some(k) = key_of(id) {
            holders += 1;
            if !entries.contains(&(k, id)) {
                push(format!("{id} has a key {name} lacks"));
            }
        }
    });
    if holders != entries.len() {
        push(format!("{name} has {} entries for {holders} holders", entries.len()));
    }
}

/// What the walk over every node's adjacency found.
#[derive(Default)]
struct NodesChecked {
    problems: Vec<String>,
    nodes: u64,
    out_total: u64,
    in_total: u64,
    /// The relationships seen in each direction's adjacency, by id: with each entry checked against its record,
    /// "every relationship exactly once on each side" needs no search of a node's adjacency per relationship,
    /// which cost a scan of a hub's unsorted recent entries per relationship and made checking a crashed
    /// database with a hub of millions take minutes.
    seen: [RelBits; 2],
}

/// Checks every node's adjacency, degrees and labels, on all cores: each thread takes runs of node leaves in
/// turn (a check is mostly cache misses on relationship records, which threads overlap), and the findings are
/// put back in node order. A relationship listed on one side by two threads is found when their sets merge.
/// Findings are kept only while they can be among the first `limit` in node order, so a badly damaged graph
/// does not pile up messages run after run.
fn check_nodes(state: &GraphState, limit: usize) -> NodesChecked {
    use std::sync::atomic::{AtomicU64, Ordering};
    const LEAVES_PER_RUN: u64 = 256;
    let leaves = state.node_id_bound() >> crate::LEAF_BITS;
    let runs = leaves.div_ceil(LEAVES_PER_RUN);
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    // Findings by run; runs past `cutoff` come after `limit` findings of finished runs before them.
    let kept: parking_lot::Mutex<BTreeMap<u64, Vec<String>>> = parking_lot::Mutex::new(BTreeMap::new());
    let cutoff = AtomicU64::new(u64::MAX);
    let per_thread = crate::parallel::for_each_pulled(runs as usize, threads, NodesChecked::default, |checked, run| {
        let run = run as u64;
        let collect = run <= cutoff.load(Ordering::Relaxed);
        let mut found = Vec::new();
        let range = run * LEAVES_PER_RUN..((run + 1) * LEAVES_PER_RUN).min(leaves);
        state.nodes.for_each_in(range, |leaf_index, leaf| {
            let mut live = leaf.live;
            while live != 0 {
                let slot = live.trailing_zeros() as u64;
                live &= live - 1;
                let n = NodeId((leaf_index << crate::LEAF_BITS) | slot);
                check_node(state, n, checked, &mut |p| {
                    if collect && found.len() < limit {
                        found.push(p);
                    }
                });
            }
        });
        if !found.is_empty() {
            let mut kept = kept.lock();
            kept.insert(run, found);
            let mut total = 0;
            let full_at = kept.iter().find_map(|(&r, f)| {
                total += f.len();
                (total >= limit).then_some(r)
            });
            if let Some(full_at) = full_at {
                cutoff.fetch_min(full_at, Ordering::Relaxed);
                kept.split_off(&(full_at + 1));
            }
        }
    });
    let mut all = NodesChecked::default();
    let mut repeated = Vec::new();
    for checked in per_thread {
        all.nodes += checked.nodes;
        all.out_total += checked.out_total;
        all.in_total += checked.in_total;
        for (dir, (into, from)) in all.seen.iter_mut().zip(checked.seen).enumerate() {
            let dir = if dir == 0 { Direction::Out } else { Direction::In };
            for rel in into.merge(from).into_iter().take(limit.saturating_sub(repeated.len())) {
                repeated.push(format!("{} is more than once in the {dir:?} adjacency", crate::RelId(rel)));
            }
        }
    }
    all.problems = kept.into_inner().into_values().flatten().chain(repeated).collect();
    all
}

/// One node's adjacency against the records, its degrees and its labels.
fn check_node(state: &GraphState, n: NodeId, checked: &mut NodesChecked, push: &mut impl FnMut(String)) {
    checked.nodes += 1;
    for dir in [Direction::Out, Direction::In] {
        let entries = state.rels_of(n, dir, TypeFilter::All);
        if entries.len() as u64 != state.degree(n, dir, TypeFilter::All) {
            push(format!(
                "{n}: {dir:?} degree {} but {} entries",
                state.degree(n, dir, TypeFilter::All),
                entries.len()
            ));
        }
        for e in entries {
            if !checked.seen[(dir == Direction::In) as usize].insert(e.rel.0) {
                push(format!("{} is more than once in the {dir:?} adjacency", e.rel));
            }
            match state.rel(e.rel) {
                None => push(format!("{n}: {dir:?} entry for missing {}", e.rel)),
                Some(r) => {
                    let (me, other) = if dir == Direction::Out { (r.src, r.dst) } else { (r.dst, r.src) };
                    if me != n || other != e.nbr || r.ty != e.ty {
                        push(format!("{n}: {dir:?} entry {:?} disagrees with record {:?}", e, r));
                    }
                }
            }
            if dir == Direction::Out {
                checked.out_total += 1;
            } else {
                checked.in_total += 1;
            }
        }
    }
    let loops = state.rels_between(n, n, Direction::Out, TypeFilter::All).len() as u64;
    let out = state.degree(n, Direction::Out, TypeFilter::All);
    let inc = state.degree(n, Direction::In, TypeFilter::All);
    if state.degree(n, Direction::Both, TypeFilter::All) != out + inc - loops {
        push(format!("{n}: degree in both directions disagrees with {out} out, {inc} in, {loops} self-loops"));
    }
    if let Some(labels) = state.node_labels(n) {
        for &l in labels {
            if !label_contains(state, l, n) {
                push(format!("{n} has label {} but the label index lacks it", l.0));
            }
        }
    }
}

fn label_contains(state: &GraphState, label: LabelId, node: NodeId) -> bool {
    let mut found = false;
    // Label bitmaps are addressed directly; a scan would be quadratic over the whole check.
    if let Some(index) = state.labels.get(label.0 as usize) {
        let per_leaf = crate::records::BITS_PER_LEAF as u64;
        if let Some(bits) = index.bits.get(node.0 / per_leaf) {
            let bit = (node.0 % per_leaf) as usize;
            found = bits.0[bit / 64] & (1 << (bit % 64)) != 0;
        }
    }
    found
}

impl GraphState {
    /// See [`check_state`].
    pub fn check(&self) -> Vec<String> {
        check_state(self, 100)
    }
}

/// A set of relationship ids, one bit each.
#[derive(Default)]
struct RelBits(Vec<u64>);

impl RelBits {
    /// Adds `id`; false if it was there already.
    fn insert(&mut self, id: u64) -> bool {
        let (word, bit) = ((id / 64) as usize, 1u64 << (id % 64));
        if word >= self.0.len() {
            self.0.resize(word + 1, 0);
        }
        let had = self.0[word] & bit != 0;
        self.0[word] |= bit;
        !had
    }

    fn contains(&self, id: u64) -> bool {
        self.0.get((id / 64) as usize).is_some_and(|w| w & (1u64 << (id % 64)) != 0)
    }

    /// Adds every id of `other`; returns the ids that were in both.
    fn merge(&mut self, other: RelBits) -> Vec<u64> {
        if self.0.len() < other.0.len() {
            self.0.resize(other.0.len(), 0);
        }
        let mut both = Vec::new();
        for (word, (mine, theirs)) in self.0.iter_mut().zip(other.0).enumerate() {
            let mut common = *mine & theirs;
            while common != 0 {
                both.push(word as u64 * 64 + common.trailing_zeros() as u64);
                common &= common - 1;
            }
            *mine |= theirs;
        }
        both
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::adjacency::AdjEntry;
    use crate::graph::split;
    use crate::ops::Op;
    use crate::{RelId, TypeId};

    fn small() -> GraphState {
        let mut g = GraphState::new();
        for id in 0..3 {
            g.apply(&Op::CreateNode { id: NodeId(id), labels: Default::default(), props: None }).unwrap();
        }
        for (id, src, dst) in [(0, 0, 1), (1, 1, 2)] {
            let op = Op::CreateRel { id: RelId(id), ty: TypeId(0), src: NodeId(src), dst: NodeId(dst), props: vec![] };
            g.apply(&op).unwrap();
        }
        g.seal();
        g
    }

    /// Adjacency that disagrees with the relationships is found: an entry twice, an entry missing.
    #[test]
    fn a_doubled_or_missing_adjacency_entry_is_found() {
        assert_eq!(check_state(&small(), 10), Vec::<String>::new());
        let mut doubled = small();
        let (leaf, slot) = split(2);
        doubled.nodes.get_mut(leaf).inc.add(slot, AdjEntry { ty: TypeId(0), nbr: 1, rel: 1 });
        let problems = check_state(&doubled, 10);
        assert!(problems.iter().any(|p| p.contains("more than once in the In adjacency")), "{problems:?}");
        let mut missing = small();
        let (leaf, slot) = split(0);
        assert!(missing.nodes.get_mut(leaf).out.remove(slot, AdjEntry { ty: TypeId(0), nbr: 1, rel: 0 }));
        let problems = check_state(&missing, 10);
        assert!(problems.iter().any(|p| p.contains("missing from the outgoing adjacency")), "{problems:?}");
    }

    /// Nodes far apart are checked by different threads when there are several: a relationship listed at both
    /// is still found twice, and findings come back in node order.
    #[test]
    fn a_relationship_listed_by_nodes_far_apart_is_found() {
        let mut g = GraphState::new();
        let far = 40 * 16_384;
        for id in [0, 1, far, far + 1] {
            g.apply(&Op::CreateNode { id: NodeId(id), labels: Default::default(), props: None }).unwrap();
        }
        for (id, src, dst) in [(0, 0, 1), (1, far, far + 1)] {
            let op = Op::CreateRel { id: RelId(id), ty: TypeId(0), src: NodeId(src), dst: NodeId(dst), props: vec![] };
            g.apply(&op).unwrap();
        }
        g.seal();
        assert_eq!(check_state(&g, 10), Vec::<String>::new());
        // Relationship 0 also in the far source's outgoing adjacency, relationship 1 also in node 1's.
        let (leaf, slot) = split(far);
        g.nodes.get_mut(leaf).out.add(slot, AdjEntry { ty: TypeId(0), nbr: 1, rel: 0 });
        let (leaf, slot) = split(1);
        g.nodes.get_mut(leaf).out.add(slot, AdjEntry { ty: TypeId(0), nbr: far + 1, rel: 1 });
        let problems = check_state(&g, 10);
        for rel in ["relationship 0", "relationship 1"] {
            let twice = format!("{rel} is more than once in the Out adjacency");
            assert!(problems.iter().any(|p| p.contains(&twice)), "{problems:?}");
        }
        let disagreements: Vec<&String> = problems.iter().filter(|p| p.contains("disagrees with record")).collect();
        assert_eq!(disagreements.len(), 2, "{problems:?}");
        assert!(
            disagreements[0].starts_with("node 1:") && disagreements[1].starts_with(&format!("node {far}:")),
            "{problems:?}"
        );
    }

    /// With more damage than the limit, the findings kept are the first in node order, whichever thread
    /// reached them first.
    #[test]
    fn the_first_findings_in_node_order_are_kept() {
        let mut g = GraphState::new();
        let nodes: Vec<u64> = (0..12).map(|k| k * 16_384 + 7).collect();
        for &id in &nodes {
            g.apply(&Op::CreateNode { id: NodeId(id), labels: Default::default(), props: None }).unwrap();
        }
        g.seal();
        for (k, &id) in nodes.iter().enumerate() {
            let (leaf, slot) = split(id);
            g.nodes.get_mut(leaf).out.add(slot, AdjEntry { ty: TypeId(0), nbr: id, rel: 1000 + k as u64 });
        }
        // Two findings a node (the entry, and its degree as a self-loop): the limit keeps the first two nodes'.
        let problems = check_state(&g, 4);
        let of = |p: &String| p.split(':').next().unwrap_or_default().to_string();
        let owners: Vec<String> = problems.iter().map(of).collect();
        let first = format!("node {}", nodes[0]);
        let second = format!("node {}", nodes[1]);
        assert_eq!(owners, [first.clone(), first, second.clone(), second], "{problems:?}");
        assert!(problems[0].contains("missing relationship 1000") && problems[2].contains("missing relationship 1001"));
    }

    /// Merging two threads' sets finds the relationships both saw.
    #[test]
    fn merged_sets_name_what_both_saw() {
        let (mut a, mut b) = (RelBits::default(), RelBits::default());
        for id in [3, 64, 700] {
            a.insert(id);
        }
        for id in [64, 65, 700, 5000] {
            b.insert(id);
        }
        assert_eq!(a.merge(b), [64, 700]);
        assert!([3, 64, 65, 700, 5000].iter().all(|&id| a.contains(id)) && !a.contains(4));
        assert_eq!(a.merge(RelBits::default()), Vec::<u64>::new());
    }
}
