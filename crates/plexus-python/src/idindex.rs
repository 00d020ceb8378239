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
use plexus_storage::prefetch::{filled_on_huge_pages, prefetch_at, with_capacity_on_huge_pages};
use plexus_storage::GraphState;

/// The node of `label` whose unique key `key` is the integer `ext`, looked up in the key map. Only a node whose
/// key is that integer is the view's node `ext`, as the tables have it: one keyed `5.0` (equal under the key map)
/// is not, or the same call would answer differently with the tables' age.
pub(crate) fn node_keyed(g: &GraphState, label: LabelId, key: PropKeyId, ext: i64) -> Option<NodeId> {
    g.node_by_unique(label, key, &Value::Int(ext)).filter(|&n| matches!(g.node_prop(n, key), Some(Value::Int(_))))
}

/// The external id reported in arrays for a neighbour that has none (outside the view's label, or a key that is
/// not an integer); Python lists hold `None` there. Reserved: a node whose key is this value is outside the view,
/// and the view refuses to create one, so it never stands for a real node.
pub const NO_ID: i64 = i64::MIN;
const NONE: u64 = u64::MAX;

#[derive(Clone)]
enum Lookup {
    /// `table[ext - min]`: when external ids are dense enough.
    Dense {
        min: i64,
        table: Vec<u64>,
        /// Entries of `table` in use: how dense it is (the table is longer, and may grow only with them).
        filled: usize,
    },
    /// When external ids are too sparse for a flat table but not very sparse (R-MAT graphs leave over half the
    /// ids of their range unused): a bitmap of the ids present and a running count per word, small enough to
    /// stay in the cache (under a quarter of a byte per id in the range), instead of a hash table whose probe
    /// is two dependent cache misses.
    Ranked(Ranked),
    Hash(FxHashMap<i64, u64>),
}

/// External ids as ranks in a bitmap over `min..`: the node of the `r`-th smallest id is `first + r` when node
/// ids follow the external ids' order (as every bulk import numbers them), else `by_rank[r]`.
#[derive(Clone)]
struct Ranked {
    min: i64,
    words: Vec<u64>,
    /// Number of ids present before each word.
    ranks: Vec<u32>,
    first: u64,
    by_rank: Option<Vec<u64>>,
    /// Nodes created after the tables were built.
    extra: FxHashMap<i64, u64>,
}

impl Ranked {
    /// From `(external id, node)` pairs sorted by external id, without repeats.
    fn build(sorted: &[(i64, u64)]) -> Ranked {
        let min = sorted.first().map_or(0, |p| p.0);
        let span = sorted.last().map_or(0, |p| (p.0 - min) as usize + 1);
        let mut words = vec![0u64; span.div_ceil(64)];
        for &(ext, _) in sorted {
            let i = (ext - min) as usize;
            words[i / 64] |= 1 << (i % 64);
        }
        let mut ranks = Vec::with_capacity(words.len());
        let mut seen = 0u32;
        for w in &words {
            ranks.push(seen);
            seen += w.count_ones();
        }
        let first = sorted.first().map_or(0, |p| p.1);
        let sequential = sorted.iter().enumerate().all(|(r, p)| p.1 == first + r as u64);
        let by_rank = (!sequential).then(|| sorted.iter().map(|p| p.1).collect());
        Ranked { min, words, ranks, first, by_rank, extra: FxHashMap::default() }
    }

    #[inline]
    fn word_of(&self, ext: i64) -> Option<(usize, u32)> {
        let i = ext.wrapping_sub(self.min) as u64;
        let w = (i / 64) as usize;
        (w < self.words.len()).then_some((w, (i % 64) as u32))
    }

    fn in_bitmap(&self, ext: i64) -> bool {
        self.word_of(ext).is_some_and(|(w, bit)| self.words[w] >> bit & 1 == 1)
    }

    /// Every `(external id, node)` held, the bitmap's in order, then the others.
    fn pairs(&self) -> impl Iterator<Item = (i64, u64)> + '_ {
        let bitmap = self.words.iter().enumerate().flat_map(move |(w, &word)| {
            (0..64u32)
                .filter(move |bit| word >> bit & 1 == 1)
                .map(move |bit| self.min + (w * 64) as i64 + i64::from(bit))
        });
        bitmap
            .enumerate()
            .map(|(rank, ext)| (ext, self.by_rank.as_ref().map_or(self.first + rank as u64, |nodes| nodes[rank])))
            .chain(self.extra.iter().map(|(&e, &n)| (e, n)))
    }

    #[inline]
    fn node(&self, ext: i64) -> Option<u64> {
        if let Some((w, bit)) = self.word_of(ext) {
            let word = self.words[w];
            if word >> bit & 1 == 1 {
                let rank = u64::from(self.ranks[w]) + u64::from((word & ((1u64 << bit) - 1)).count_ones());
                return Some(match &self.by_rank {
                    None => self.first + rank,
                    Some(nodes) => nodes[rank as usize],
                });
            }
        }
        if self.extra.is_empty() {
            return None;
        }
        self.extra.get(&ext).copied()
    }
}

#[derive(Clone)]
pub struct IdIndex {
    /// The snapshot version the tables describe.
    pub version: u64,
    lookup: Lookup,
    /// External id by node id (`NO_ID` when none).
    ext_of: ExtTable,
    /// Whether external ids ascend with node ids (as every bulk import numbers them): then a node's neighbours,
    /// sorted by node id in storage, are sorted by external id as well.
    in_node_order: bool,
}

/// External ids by node id, in the narrowest form that holds them: a batch of edge lists translates every
/// neighbour through this table, and on a graph of a few hundred thousand nodes the 8-byte table overflows a
/// core's second-level cache where the 4-byte one stays in it (measured: a third of an edge list's time was
/// waiting for entries of the wide table).
#[derive(Clone)]
enum ExtTable {
    /// `n + shift` for every node id `n < len`, none above (as a bulk import of dense integer ids numbers them):
    /// no table.
    Shift {
        shift: i64,
        len: usize,
    },
    /// `base + exts[n]`, [`NARROW_NONE`] for none: ids spanning less than `u32::MAX`.
    Narrow {
        base: i64,
        exts: Vec<u32>,
    },
    Wide(Vec<i64>),
}

const NARROW_NONE: u32 = u32::MAX;

impl ExtTable {
    /// The narrowest table holding `wide` (`NO_ID` for a node without an external id).
    fn narrowest(wide: Vec<i64>) -> ExtTable {
        let mut present = wide.iter().copied().filter(|&e| e != NO_ID);
        let Some(first) = present.next() else { return ExtTable::Wide(wide) };
        let (min, max) = present.fold((first, first), |(lo, hi), e| (lo.min(e), hi.max(e)));
        // Node ids are handed out by the leaf, so a bulk load's last leaf ends in slots without a node: the
        // shift covers the nodes up to the first that breaks it, if none but empty slots follow. (No overflow:
        // `n + shift` is compared only while it has matched every entry before, all real ids.)
        let shift = wide[0];
        let len =
            wide.iter().enumerate().take_while(|&(n, &e)| e != NO_ID && (n as i64).wrapping_add(shift) == e).count();
        if len > 0 && wide[len..].iter().all(|&e| e == NO_ID) {
            return ExtTable::Shift { shift, len };
        }
        if (max as i128 - min as i128) < i128::from(NARROW_NONE) {
            let mut exts = with_capacity_on_huge_pages(wide.len());
            exts.extend(wide.iter().map(|&e| if e == NO_ID { NARROW_NONE } else { (e - min) as u32 }));
            return ExtTable::Narrow { base: min, exts };
        }
        ExtTable::Wide(wide)
    }

    fn len(&self) -> usize {
        match self {
            ExtTable::Shift { len, .. } => *len,
            ExtTable::Narrow { exts, .. } => exts.len(),
            ExtTable::Wide(exts) => exts.len(),
        }
    }

    #[inline]
    fn translation(&self) -> Translation<'_> {
        match self {
            ExtTable::Shift { shift, len } => Translation::Shift { shift: *shift, len: *len as u64 },
            ExtTable::Narrow { base, exts } => Translation::Narrow { base: *base, exts },
            ExtTable::Wide(exts) => Translation::Wide(exts),
        }
    }

    fn to_wide(&self) -> Vec<i64> {
        let t = self.translation();
        (0..self.len() as u64).map(|n| t.ext(n)).collect()
    }

    /// Records `ext` for node `slot`, growing the table (with `NO_ID` between) and widening it as needed.
    fn set(&mut self, slot: usize, ext: i64) {
        match self {
            ExtTable::Shift { shift, len } if slot == *len && (slot as i64).checked_add(*shift) == Some(ext) => {
                *len += 1;
                return;
            }
            ExtTable::Narrow { base, exts } if ext != NO_ID => {
                if let Ok(e) = u32::try_from(ext as i128 - *base as i128) {
                    if e != NARROW_NONE {
                        if slot >= exts.len() {
                            exts.resize(slot + 1, NARROW_NONE);
                        }
                        exts[slot] = e;
                        return;
                    }
                }
            }
            ExtTable::Wide(exts) => {
                if slot >= exts.len() {
                    exts.resize(slot + 1, NO_ID);
                }
                exts[slot] = ext;
                return;
            }
            _ => {}
        }
        // A change of form, through the wide table: from a shift to the narrowest form that holds the new id, from
        // offsets to full ids. Never back, so a table changes form at most twice (offsets re-based at every new
        // lowest id would be rebuilt at every insert of descending ids).
        let mut wide = self.to_wide();
        if slot >= wide.len() {
            wide.resize(slot + 1, NO_ID);
        }
        wide[slot] = ext;
        *self = match self {
            ExtTable::Shift { .. } => ExtTable::narrowest(wide),
            _ => ExtTable::Wide(wide),
        };
    }

    /// Bytes of table a translation may read.
    fn bytes(&self) -> usize {
        match self {
            ExtTable::Shift { .. } => 0,
            ExtTable::Narrow { exts, .. } => exts.len() * 4,
            ExtTable::Wide(exts) => exts.len() * 8,
        }
    }
}

/// How node ids become external ids ([`IdIndex::translation`]), taken once for a loop over many.
#[derive(Clone, Copy)]
pub enum Translation<'a> {
    Shift { shift: i64, len: u64 },
    Narrow { base: i64, exts: &'a [u32] },
    Wide(&'a [i64]),
}

impl Translation<'_> {
    #[inline(always)]
    pub fn ext(self, n: u64) -> i64 {
        match self {
            // Computed for every `n` and then chosen: a loop over a run has no branch and vectorises.
            Translation::Shift { shift, len } => {
                let ext = (n as i64).wrapping_add(shift);
                if n < len {
                    ext
                } else {
                    NO_ID
                }
            }
            Translation::Narrow { base, exts } => match exts.get(n as usize) {
                Some(&e) if e != NARROW_NONE => base + i64::from(e),
                _ => NO_ID,
            },
            Translation::Wide(exts) => exts.get(n as usize).copied().unwrap_or(NO_ID),
        }
    }

    /// Requests the table line that [`Translation::ext`] will read for `n`, without waiting for it.
    #[inline]
    pub fn prefetch(self, n: u64) {
        match self {
            Translation::Shift { .. } => {}
            Translation::Narrow { exts, .. } => prefetch_at(exts, n as usize),
            Translation::Wide(exts) => prefetch_at(exts, n as usize),
        }
    }
}

/// Evaluates `$body` with `$ext` bound to a closure `Fn(u64) -> i64` (node id to external id) made for the form of
/// translation `$t`: the body is compiled once per form, so a loop in it holds no choice of form (one over a
/// shift has no load and vectorises).
macro_rules! per_form {
    ($t:expr, |$ext:ident| $body:expr) => {
        match $t {
            $crate::idindex::Translation::Shift { shift, len } => {
                let $ext = |n: u64| $crate::idindex::Translation::Shift { shift, len }.ext(n);
                $body
            }
            $crate::idindex::Translation::Narrow { base, exts } => {
                let $ext = |n: u64| $crate::idindex::Translation::Narrow { base, exts }.ext(n);
                $body
            }
            $crate::idindex::Translation::Wide(exts) => {
                let $ext = |n: u64| $crate::idindex::Translation::Wide(exts).ext(n);
                $body
            }
        }
    };
}
pub(crate) use per_form;

/// How far [`IdIndex::insert`] looks for the nodes around a new one before assuming the order broken.
const ORDER_LOOK: usize = 64;

impl IdIndex {
    /// Tables for the nodes of `label` keyed by integer property `key` in `snap`. A node whose key is not an
    /// integer is not in the view (as when the view looks nodes up by the unique key before it has tables);
    /// when no node has an integer key but some have another, the view cannot answer anything, and says so.
    /// Refuses a key that two of the label's nodes share (possible without a unique constraint on it): a view
    /// answers for one node per id, and picking one would drop the other's edges without a word.
    pub fn build(snap: &ReadTxn, label: LabelId, key: PropKeyId) -> Result<IdIndex, String> {
        let mut pairs: Vec<(i64, u64)> = Vec::with_capacity(snap.label_count(label) as usize);
        let mut other_key = None;
        let _ = snap.visit_label::<()>(label, |n| {
            match snap.node_prop(n, key) {
                Some(Value::Int(i)) if *i != NO_ID => pairs.push((*i, n.0)),
                Some(other) if other_key.is_none() => other_key = Some(format!("{n} has the key {other:?}")),
                _ => {}
            }
            ControlFlow::Continue(())
        });
        if let (true, Some(example)) = (pairs.is_empty(), other_key) {
            return Err(format!("a graph view needs integer ids, and no node has one: {example}"));
        }
        let mut ext_of = filled_on_huge_pages(NO_ID, snap.node_id_bound() as usize);
        for &(ext, n) in &pairs {
            ext_of[n as usize] = ext;
        }
        let lookup = match (pairs.iter().map(|p| p.0).min(), pairs.iter().map(|p| p.0).max()) {
            (Some(min), Some(max)) if dense_enough(min, max, pairs.len()) => {
                let mut table = filled_on_huge_pages(NONE, (max - min + 1) as usize);
                for &(ext, n) in &pairs {
                    let slot = &mut table[(ext - min) as usize];
                    if *slot != NONE {
                        return Err(not_unique(ext, *slot, n));
                    }
                    *slot = n;
                }
                Lookup::Dense { min, table, filled: pairs.len() }
            }
            (Some(min), Some(max)) if ranked_enough(min, max, pairs.len()) => {
                // A label's nodes come in node order, and bulk-imported ids ascend with it: usually sorted already.
                if !pairs.is_sorted() {
                    pairs.sort_unstable();
                }
                if let Some(w) = pairs.windows(2).find(|w| w[0].0 == w[1].0) {
                    return Err(not_unique(w[0].0, w[0].1, w[1].1));
                }
                Lookup::Ranked(Ranked::build(&pairs))
            }
            _ => {
                let mut map: FxHashMap<i64, u64> = FxHashMap::default();
                map.reserve(pairs.len());
                for (ext, n) in pairs {
                    if let Some(other) = map.insert(ext, n) {
                        return Err(not_unique(ext, other, n));
                    }
                }
                Lookup::Hash(map)
            }
        };
        let in_node_order = ext_of.iter().filter(|&&e| e != NO_ID).is_sorted_by(|a, b| a < b);
        Ok(IdIndex { version: snap.version(), lookup, ext_of: ExtTable::narrowest(ext_of), in_node_order })
    }

    /// Requests the table line that [`IdIndex::node`] will read for `ext`, without waiting for it.
    #[inline]
    pub fn prefetch(&self, ext: i64) {
        // `node` answers a shift without reading the lookup table.
        if let ExtTable::Shift { .. } = self.ext_of {
            return;
        }
        match &self.lookup {
            Lookup::Dense { min, table, .. } => prefetch_at(table, ext.wrapping_sub(*min) as u64 as usize),
            Lookup::Ranked(ranked) => {
                if let Some((w, _)) = ranked.word_of(ext) {
                    plexus_storage::prefetch::prefetch(&ranked.words[w]);
                    plexus_storage::prefetch::prefetch(&ranked.ranks[w]);
                }
            }
            Lookup::Hash(_) => {}
        }
    }

    #[inline]
    pub fn node(&self, ext: i64) -> Option<NodeId> {
        if ext == NO_ID {
            return None;
        }
        if let ExtTable::Shift { shift, len } = self.ext_of {
            // Wrapped, an `ext` far below the shift would land in range: checked instead.
            let n = ext.checked_sub(shift)?;
            return (0..len as i64).contains(&n).then_some(NodeId(n as u64));
        }
        let n = match &self.lookup {
            Lookup::Dense { min, table, .. } => {
                let i = ext.wrapping_sub(*min) as u64;
                *table.get(i as usize)?
            }
            Lookup::Ranked(ranked) => ranked.node(ext)?,
            Lookup::Hash(map) => *map.get(&ext)?,
        };
        (n != NONE).then_some(NodeId(n))
    }

    /// How node ids become external ids: for a loop over many, taken once before it.
    #[inline]
    pub fn translation(&self) -> Translation<'_> {
        self.ext_of.translation()
    }

    /// Whether the table of external ids is larger than a core's second-level cache, so that a batch reading
    /// many entries does better requesting them ahead (measured both ways: on 170,000 nodes, 0.7 MB of table,
    /// requesting them cost more than it saved; on 1.1 million it saved more than it cost).
    #[inline]
    pub fn ext_table_outgrows_cache(&self) -> bool {
        self.ext_of.bytes() > 1 << 20
    }

    /// Whether external ids ascend with node ids (see the field).
    #[inline]
    pub fn in_node_order(&self) -> bool {
        self.in_node_order
    }

    #[inline]
    pub fn ext(&self, n: NodeId) -> i64 {
        self.ext_of.translation().ext(n.0)
    }

    /// Records a node created with external id `ext`.
    pub fn insert(&mut self, ext: i64, n: NodeId) {
        let slot = n.0 as usize;
        self.ext_of.set(slot, ext);
        if self.in_node_order {
            // The nearest nodes with ids on either side must keep their places (within a bounded look).
            let t = self.ext_of.translation();
            let len = self.ext_of.len();
            let below = (slot.saturating_sub(ORDER_LOOK)..slot).rev().map(|m| t.ext(m as u64)).find(|&e| e != NO_ID);
            let above_end = (slot + 1 + ORDER_LOOK).min(len);
            let above = (slot + 1..above_end).map(|m| t.ext(m as u64)).find(|&e| e != NO_ID);
            let looked_far_enough = slot < ORDER_LOOK || below.is_some();
            self.in_node_order = looked_far_enough
                && below.is_none_or(|b| b < ext)
                && above.is_none_or(|a| a > ext)
                && (above.is_some() || above_end == len);
        }
        if let Lookup::Dense { min, table, filled } = &mut self.lookup {
            // In i128: a table ending at i64::MAX would overflow its end's sum.
            let end = (*min as i128 + table.len() as i128 - 1).clamp(i64::MIN as i128, i64::MAX as i128) as i64;
            let (lo, hi) = (ext.min(*min), ext.max(end));
            // Judged by the ids held, not the table's length: ids far apart would otherwise double it each time.
            if dense_enough(lo, hi, *filled + 1) {
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
                if table[i] == NONE {
                    *filled += 1;
                }
                table[i] = n.0;
                return;
            }
            let map =
                table.iter().enumerate().filter(|(_, &v)| v != NONE).map(|(i, &v)| (*min + i as i64, v)).collect();
            self.lookup = Lookup::Hash(map);
        }
        match &mut self.lookup {
            Lookup::Hash(map) => {
                map.insert(ext, n.0);
            }
            // An id the bitmap already holds (its node was deleted and the id reused) cannot be overridden there.
            Lookup::Ranked(ranked) if ranked.in_bitmap(ext) => {
                let mut map: FxHashMap<i64, u64> = ranked.pairs().collect();
                map.insert(ext, n.0);
                self.lookup = Lookup::Hash(map);
            }
            Lookup::Ranked(ranked) => {
                ranked.extra.insert(ext, n.0);
            }
            Lookup::Dense { .. } => {}
        }
    }
}

/// Whether ids spanning `min..=max` for `count` nodes fit a flat table without wasting much.
fn dense_enough(min: i64, max: i64, count: usize) -> bool {
    let span = (max as i128 - min as i128 + 1) as u128;
    span <= 2 * count as u128 + 4096
}

/// Whether ids spanning `min..=max` for `count` nodes suit a [`Ranked`] bitmap: smaller than a hash table.
fn ranked_enough(min: i64, max: i64, count: usize) -> bool {
    let span = (max as i128 - min as i128 + 1) as u128;
    span <= 64 * count as u128 && span < 1 << 40
}

/// The error for an id that nodes `a` and `b` both have.
fn not_unique(ext: i64, a: u64, b: u64) -> String {
    let (a, b) = (a.min(b), a.max(b));
    format!(
        "a graph view needs one node per id, and nodes {a} and {b} both have the id {ext}: make the key unique \
         (and declare it with CREATE CONSTRAINT ... REQUIRE n.key IS UNIQUE), or choose a key that is"
    )
}
