//! External ids of a graph view: the integer unique key (`id`) of its label's nodes, mapped both ways to node
//! ids, in flat tables built once per snapshot version.
//!
//! Storage finds a node by key through a persistent hash map and reads its key through its property map; a
//! table turns each into one array load, which is what makes millions of single lookups per second possible.
//! Tables belong to one version: reads of a newer snapshot use storage's own lookups until enough of them have
//! been made to pay for rebuilding (see `graph`).

use std::ops::ControlFlow;

use plexus::value::Value;
use plexus::{LabelId, NodeId, PropKeyId, ReadTxn};
use plexus_storage::fxhash::FxHashMap;
use plexus_storage::prefetch::filled_on_huge_pages;

/// The external id reported for a node that has none (outside the view's label, or a non-integer key).
pub const NO_ID: i64 = -1;
const NONE: u64 = u64::MAX;

#[derive(Clone)]
enum Lookup {
    /// `table[ext - min]`: when external ids are dense enough.
    Dense {
        min: i64,
        table: Vec<u64>,
    },
    Hash(FxHashMap<i64, u64>),
}

#[derive(Clone)]
pub struct IdIndex {
    /// The snapshot version the tables describe.
    pub version: u64,
    lookup: Lookup,
    /// External id by node id (`NO_ID` when none).
    ext_of: Vec<i64>,
}

impl IdIndex {
    /// Tables for the nodes of `label` keyed by integer property `key` in `snap`.
    pub fn build(snap: &ReadTxn, label: LabelId, key: PropKeyId) -> Result<IdIndex, String> {
        let mut pairs: Vec<(i64, u64)> = Vec::with_capacity(snap.label_count(label) as usize);
        let mut bad = None;
        let _ = snap.visit_label::<()>(label, |n| {
            match snap.node_prop(n, key) {
                Some(Value::Int(i)) => pairs.push((*i, n.0)),
                Some(other) if bad.is_none() => bad = Some(format!("{n} has a non-integer key {other:?}")),
                _ => {}
            }
            ControlFlow::Continue(())
        });
        if let Some(message) = bad {
            return Err(format!("a graph view needs integer ids: {message}"));
        }
        let mut ext_of = filled_on_huge_pages(NO_ID, snap.node_id_bound() as usize);
        for &(ext, n) in &pairs {
            ext_of[n as usize] = ext;
        }
        let lookup = match (pairs.iter().map(|p| p.0).min(), pairs.iter().map(|p| p.0).max()) {
            (Some(min), Some(max)) if dense_enough(min, max, pairs.len()) => {
                let mut table = filled_on_huge_pages(NONE, (max - min + 1) as usize);
                for &(ext, n) in &pairs {
                    table[(ext - min) as usize] = n;
                }
                Lookup::Dense { min, table }
            }
            _ => Lookup::Hash(pairs.into_iter().collect()),
        };
        Ok(IdIndex { version: snap.version(), lookup, ext_of })
    }

    /// Requests the table line that [`IdIndex::node`] will read for `ext`, without waiting for it.
    #[inline]
    pub fn prefetch(&self, ext: i64) {
        if let Lookup::Dense { min, table } = &self.lookup {
            if let Some(entry) = table.get(ext.wrapping_sub(*min) as u64 as usize) {
                plexus_storage::prefetch::prefetch(entry);
            }
        }
    }

    #[inline]
    pub fn node(&self, ext: i64) -> Option<NodeId> {
        let n = match &self.lookup {
            Lookup::Dense { min, table } => {
                let i = ext.wrapping_sub(*min) as u64;
                *table.get(i as usize)?
            }
            Lookup::Hash(map) => *map.get(&ext)?,
        };
        (n != NONE).then_some(NodeId(n))
    }

    /// External ids by node id, for prefetching.
    pub fn ext_table(&self) -> &[i64] {
        &self.ext_of
    }

    #[inline]
    pub fn ext(&self, n: NodeId) -> i64 {
        self.ext_of.get(n.0 as usize).copied().unwrap_or(NO_ID)
    }

    /// Records a node created with external id `ext`.
    pub fn insert(&mut self, ext: i64, n: NodeId) {
        let slot = n.0 as usize;
        if slot >= self.ext_of.len() {
            self.ext_of.resize(slot + 1, NO_ID);
        }
        self.ext_of[slot] = ext;
        if let Lookup::Dense { min, table } = &mut self.lookup {
            let count = table.len();
            let (lo, hi) = (ext.min(*min), ext.max(*min + count as i64 - 1));
            if dense_enough(lo, hi, count) {
                if lo < *min {
                    let mut grown = vec![NONE; (*min - lo) as usize];
                    grown.append(table);
                    *table = grown;
                    *min = lo;
                }
                let i = (ext - *min) as usize;
                if i >= table.len() {
                    table.resize(i + 1, NONE);
                }
                table[i] = n.0;
                return;
            }
            let map =
                table.iter().enumerate().filter(|(_, &v)| v != NONE).map(|(i, &v)| (*min + i as i64, v)).collect();
            self.lookup = Lookup::Hash(map);
        }
        if let Lookup::Hash(map) = &mut self.lookup {
            map.insert(ext, n.0);
        }
    }
}

/// Whether ids spanning `min..=max` for `count` nodes fit a flat table without wasting much.
fn dense_enough(min: i64, max: i64, count: usize) -> bool {
    let span = (max as i128 - min as i128 + 1) as u128;
    span <= 2 * count as u128 + 4096
}
