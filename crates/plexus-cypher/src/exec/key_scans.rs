//! Statement-local hash tables over one label's values of one property, standing in for a unique key or property
//! index the schema does not have, when a statement looks the same `(label, key)` up by value again and again.
//!
//! `UNWIND $rows AS r MERGE (:Person {id: r.id})` without a constraint looks every row's `id` up among the
//! `Person` nodes, those created by earlier rows included. Scanning the label for each row made that quadratic:
//! 32,000 rows took 54 s. After a few scans of the same `(label, key)` in one statement, the statement builds a
//! table from value to nodes once and keeps it up to date with its own writes, read from the transaction's log
//! of operations (a table built over a read-only snapshot never changes). Lookups then cost a hash probe.
//!
//! The table only proposes candidates: the caller checks each with Cypher's `=` (and the label), so a hash
//! collision or a node whose value changed costs a comparison, never a wrong answer. Values are bucketed by their
//! [`Key`] (the one `IN` hashes by); the rare values without one (temporal values, durations, points) are
//! proposed for every lookup.

use std::hash::BuildHasher;

use plexus_storage::fxhash::FxHashMap;
use plexus_storage::ops::Op;
use plexus_storage::{GraphState, LabelId, NodeId, PropKeyId, Value};
use smallvec::SmallVec;

use crate::expr::constant_in::Key;

/// Scans of one `(label, key)` a statement makes before building a table for it. Building costs a few scans'
/// work and memory for every node of the label, which a statement that looks up once or twice never earns back.
const SCANS_BEFORE_TABLE: u32 = 3;

/// Nodes of a label per further scan before a table: a table takes some 70-90 bytes a node, so a label of tens of
/// millions is scanned a few dozen times first, and a statement with a handful of lookups there never holds
/// gigabytes for them (a statement with thousands still gets its table after a small share of them).
const NODES_PER_EXTRA_SCAN: u64 = 1 << 20;

/// What a table may take per node of its label, on the high side (two hash-map entries and a bucket).
const TABLE_BYTES_PER_NODE: u64 = 96;

/// Whether `scans` lookups of a label of `nodes` nodes call for a table, for a statement that may hold
/// `memory_limit` bytes (when it has a limit). A table that would not fit is never built: the lookups scan, slower
/// but within the limit, where the table would have held memory the limit does not see.
fn wants_table(scans: u32, nodes: u64, memory_limit: Option<usize>) -> bool {
    u64::from(scans) > u64::from(SCANS_BEFORE_TABLE).max(nodes / NODES_PER_EXTRA_SCAN)
        && memory_limit.is_none_or(|limit| nodes.saturating_mul(TABLE_BYTES_PER_NODE) <= limit as u64)
}

/// Nodes that may hold a value.
pub(crate) type Candidates = SmallVec<[NodeId; 4]>;

/// The tables of one statement (see the module documentation).
#[derive(Default)]
pub(crate) struct KeyScans {
    keys: FxHashMap<(LabelId, PropKeyId), KeyScan>,
}

enum KeyScan {
    /// Scans so far, while there is no table.
    Counting(u32),
    Table(Box<KeyTable>),
}

/// A transaction's history of operations and how far a table has read it.
#[derive(Clone, Copy, PartialEq, Eq)]
struct LogPosition {
    generation: u64,
    read: usize,
}

struct KeyTable {
    /// Where in the writing transaction's log the table is; `None` over a read-only snapshot.
    position: Option<LogPosition>,
    hasher: std::hash::RandomState,
    /// Nodes by the hash of their value's key form.
    buckets: FxHashMap<u64, SmallVec<[NodeId; 1]>>,
    /// The bucket each hashed node is in, to move it when its value changes.
    bucket_of: FxHashMap<NodeId, u64>,
    /// Nodes whose value does not hash consistently with `=`.
    unhashed: std::collections::BTreeSet<NodeId>,
}

impl KeyScans {
    /// Nodes that may have `value` under `key` among those labelled `label`, or `None` when the caller should
    /// scan the label instead (the first few lookups of a statement, or all of them when a table would not fit in
    /// `memory_limit`). `log` is the writing transaction's [`plexus_storage::WriteTxn::change_log`], `None` for a
    /// read-only snapshot, which never changes.
    pub(crate) fn candidates(
        &mut self,
        state: &GraphState,
        log: Option<(u64, &[Op])>,
        (label, key): (LabelId, PropKeyId),
        value: &Value,
        memory_limit: Option<usize>,
    ) -> Option<Candidates> {
        let scan = self.keys.entry((label, key)).or_insert(KeyScan::Counting(0));
        match scan {
            KeyScan::Counting(n) => {
                *n += 1;
                if !wants_table(*n, state.label_count(label), memory_limit) {
                    return None;
                }
                *scan = KeyScan::Table(Box::new(KeyTable::build(state, log, label, key)));
            }
            KeyScan::Table(table) => {
                if !table.catch_up(state, log, label, key) {
                    **table = KeyTable::build(state, log, label, key);
                }
            }
        }
        let KeyScan::Table(table) = scan else { unreachable!("a table was just made") };
        Some(table.candidates(value))
    }
}

impl KeyTable {
    fn build(state: &GraphState, log: Option<(u64, &[Op])>, label: LabelId, key: PropKeyId) -> KeyTable {
        let mut table = KeyTable {
            position: log.map(|(generation, ops)| LogPosition { generation, read: ops.len() }),
            hasher: std::hash::RandomState::new(),
            buckets: FxHashMap::default(),
            bucket_of: FxHashMap::default(),
            unhashed: Default::default(),
        };
        let _ = state.visit_label::<()>(label, |n| {
            if let Some(v) = state.node_prop(n, key) {
                table.insert(n, v);
            }
            std::ops::ControlFlow::Continue(())
        });
        table
    }

    /// The hash of `v`'s [`Key`], if it has one.
    fn hash(&self, v: &Value) -> Option<u64> {
        Key::of_stored(v).map(|k| self.hasher.hash_one(k))
    }

    fn insert(&mut self, node: NodeId, v: &Value) {
        match self.hash(v) {
            Some(h) => {
                self.buckets.entry(h).or_default().push(node);
                self.bucket_of.insert(node, h);
            }
            None => {
                self.unhashed.insert(node);
            }
        }
    }

    fn remove(&mut self, node: NodeId) {
        if let Some(h) = self.bucket_of.remove(&node) {
            if let Some(bucket) = self.buckets.get_mut(&h) {
                bucket.retain(|n| *n != node);
                if bucket.is_empty() {
                    self.buckets.remove(&h);
                }
            }
        }
        self.unhashed.remove(&node);
    }

    /// Files `node` again as the state has it now.
    fn refile(&mut self, state: &GraphState, node: NodeId, label: LabelId, key: PropKeyId) {
        self.remove(node);
        if state.node_has_label(node, label) {
            if let Some(v) = state.node_prop(node, key) {
                self.insert(node, v);
            }
        }
    }

    /// Applies the operations recorded since the table last looked; false when the log is not the one the table
    /// read (another transaction, or a rollback to a savepoint), which calls for a new table.
    fn catch_up(&mut self, state: &GraphState, log: Option<(u64, &[Op])>, label: LabelId, key: PropKeyId) -> bool {
        let (generation, ops) = match (self.position, log) {
            (None, None) => return true,
            (Some(p), Some((generation, ops))) if p.generation == generation && p.read <= ops.len() => {
                (generation, &ops[p.read..])
            }
            _ => return false,
        };
        for op in ops {
            match op {
                Op::CreateNode { id, labels, .. } if labels.contains(&label) => self.refile(state, *id, label, key),
                Op::SetNodeProp { id, key: k, .. } if *k == key => self.refile(state, *id, label, key),
                Op::AddLabel { id, label: l } | Op::RemoveLabel { id, label: l } if *l == label => {
                    self.refile(state, *id, label, key)
                }
                Op::DeleteNode { id } => self.remove(*id),
                _ => {}
            }
        }
        let read = self.position.map_or(0, |p| p.read) + ops.len();
        self.position = Some(LogPosition { generation, read });
        true
    }

    fn candidates(&self, value: &Value) -> Candidates {
        let mut out = Candidates::new();
        match self.hash(value) {
            Some(h) => out.extend(self.buckets.get(&h).into_iter().flatten().copied()),
            None => out.extend(self.buckets.values().flatten().copied()),
        }
        out.extend(self.unhashed.iter().copied());
        // In id order, as a scan of the label finds them.
        out.sort_unstable();
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn large_labels_are_scanned_longer_before_a_table() {
        assert!(!wants_table(3, 10, None));
        assert!(wants_table(4, 10, None));
        assert!(wants_table(4, 3 << 20, None));
        assert!(!wants_table(40, 50 << 20, None));
        assert!(wants_table(51, 50 << 20, None));
    }

    #[test]
    fn a_table_over_the_memory_limit_is_never_built() {
        assert!(wants_table(4, 1000, Some(96_000)));
        assert!(!wants_table(4, 1001, Some(96_000)));
        assert!(!wants_table(u32::MAX, 1 << 20, Some(1 << 20)));
    }
}
