//! What one call of `plexus.Graph` reads: a snapshot with the id tables and weight column that match it, and the
//! read paths of single and batched calls over it, with the read-ahead that lets a batch's cache misses overlap.

use std::cell::RefCell;
use std::ops::ControlFlow;
use std::sync::Arc;

use plexus::value::Value;
use plexus::{Direction, IdSlice, LabelId, NodeId, PropKeyId, ReadTxn, RelId, TypeFilter, TypeId};
use plexus_storage::prefetch::{filled_on_huge_pages, prefetch_at};
use smallvec::SmallVec;

use crate::batch::chunks;
use crate::idindex::{node_keyed, per_form, IdIndex, NO_ID};

/// The view's weights by relationship id for one snapshot version (NaN where a relationship has none). Reading a
/// weight from storage walks to the relationship's leaf and then its property map, several dependent cache
/// misses per edge; the column makes it one load, so edge lists and weighted degrees of high-degree vertices
/// cost what their adjacency costs. 8 bytes per relationship, built in one sequential pass when enough weight
/// reads pay for it (like the id tables), and not used for a snapshot it was not built from.
pub(crate) struct WeightColumn {
    pub(crate) version: u64,
    pub(crate) values: Vec<f64>,
}

impl WeightColumn {
    pub(crate) fn build(snap: &ReadTxn, key: PropKeyId) -> WeightColumn {
        // A bulk-loaded graph nothing has changed yet: the flat arrays hold the values already, a pass over an
        // array instead of a walk to every relationship's property map.
        let bound = snap.rel_id_bound() as usize;
        if let Some(values) = snap.flat().and_then(|f| f.weights_by_rel(key, snap.version(), bound, snap.rel_count())) {
            return WeightColumn { version: snap.version(), values };
        }
        let mut values = filled_on_huge_pages(f64::NAN, bound);
        let _ = snap.visit_all_rels::<()>(|r| {
            if let Some(w) = snap.rel_prop_f64(r.id, key) {
                values[r.id.0 as usize] = w;
            }
            ControlFlow::Continue(())
        });
        WeightColumn { version: snap.version(), values }
    }
}

/// What one call reads: a snapshot, and the id tables when they match it.
pub(crate) struct View {
    pub(crate) snap: ReadTxn,
    pub(crate) index: Option<Arc<IdIndex>>,
    pub(crate) label: Option<LabelId>,
    pub(crate) key: Option<PropKeyId>,
    pub(crate) types: Option<Vec<TypeId>>,
    pub(crate) weight: Option<PropKeyId>,
    pub(crate) weights: Option<Arc<WeightColumn>>,
}

/// How far ahead of the read a batch requests a node's leaf, its adjacency once the leaf has arrived, and its
/// first entries once that has.
const LEAF_AHEAD: usize = 32;
const ADJACENCY_AHEAD: usize = 16;
const ENTRIES_AHEAD: usize = 8;
const LOOKUPS_AHEAD: usize = 4;

/// What [`View::pipelined`] requests of each node after its offsets or leaf and its adjacency line.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Ahead {
    /// Nothing more (counts read the adjacency line alone).
    Offsets,
    /// The first entries (a search or a walk of the relationships).
    Entries,
    /// The node's stored sums of weights (a count with summed weight the flat arrays answer).
    WeightSums,
}

/// What a batch reads of each node after its adjacency, so that [`View::prefetch_ahead`] requests those lines too.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Reads {
    /// A search of the adjacency for the relationships to a given node (requesting what the search finds ahead
    /// of time, or the other end's list, measured no faster).
    Search,
    /// Every neighbour, translated to its external id.
    Neighbours,
    /// Every relationship: its neighbour's external id and its weight.
    Edges,
    /// [`Reads::Edges`] where storage's flat arrays hold the weights beside the neighbours (see
    /// [`View::weights_beside_entries`]): their lines are requested instead of each relationship's weight.
    WeightedEdges,
}

impl View {
    pub(crate) fn filter(&self) -> TypeFilter<'_> {
        match &self.types {
            None => TypeFilter::All,
            Some(t) => TypeFilter::Only(t),
        }
    }

    #[inline]
    pub(crate) fn node(&self, ext: i64) -> Option<NodeId> {
        match &self.index {
            Some(index) => index.node(ext),
            // Without tables, the label's unique key answers, but only when it is the view's key: a key no
            // node has (`key` is `None`) finds nothing.
            None => {
                let label = self.label.filter(|_| ext != NO_ID)?;
                let key = self.key?;
                self.snap.has_unique_key(label, key).then(|| node_keyed(&self.snap, label, key, ext))?
            }
        }
    }

    #[inline]
    pub(crate) fn ext(&self, n: NodeId) -> i64 {
        match &self.index {
            Some(index) => index.ext(n),
            None => self.key.and_then(|k| self.snap.node_prop(n, k)).and_then(Value::as_int).unwrap_or(NO_ID),
        }
    }

    #[inline]
    fn weight_of(&self, rel: RelId) -> f64 {
        if let Some(column) = &self.weights {
            return column.values.get(rel.0 as usize).copied().unwrap_or(f64::NAN);
        }
        self.weight.and_then(|w| self.snap.rel_prop_f64(rel, w)).unwrap_or(f64::NAN)
    }

    pub(crate) fn has_edge(&self, u: i64, v: i64) -> bool {
        match (self.node(u), self.node(v)) {
            (Some(a), Some(b)) => self.snap.has_edge(a, b, Direction::Out, self.filter()),
            _ => false,
        }
    }

    /// Relationships from `u` to `v`: ids into `rels`.
    pub(crate) fn rels_between(&self, a: Option<NodeId>, b: Option<NodeId>, rels: &mut Vec<i64>) {
        let (Some(a), Some(b)) = (a, b) else { return };
        let _ = self.snap.visit_rels_between::<()>(a, b, Direction::Out, self.filter(), |e| {
            rels.push(e.rel.0 as i64);
            ControlFlow::Continue(())
        });
    }

    /// Relationships from `u` to `v`: ids into `rels`, weights into `ws`.
    pub(crate) fn between(&self, a: Option<NodeId>, b: Option<NodeId>, rels: &mut Vec<i64>, ws: &mut Vec<f64>) {
        let start = rels.len();
        self.rels_between(a, b, rels);
        ws.extend(rels[start..].iter().map(|&rel| self.weight_of(RelId(rel as u64))));
    }

    /// Edges of `u` in `dir`: the other ends into `nbrs`, weights into `ws`. Runs come straight from the
    /// adjacency and are translated in tight loops, so the reads of the ids and weights of a run (scattered over
    /// tables) overlap instead of waiting one by one.
    pub(crate) fn edges(&self, u: i64, dir: Direction, nbrs: &mut SmallVec<[i64; 32]>, ws: &mut SmallVec<[f64; 32]>) {
        let Some(a) = self.node(u) else { return };
        if let Some(runs) = self.weighted_runs(a, dir) {
            for (ns, run_ws) in runs {
                let at = nbrs.len();
                nbrs.resize(at + ns.len(), 0);
                ws.resize(at + ns.len(), 0.0);
                self.exts_and_weights_into(ns, run_ws, &mut nbrs[at..], &mut ws[at..]);
            }
            return;
        }
        let _ = self.snap.visit_rel_slices::<()>(a, dir, self.filter(), |ns, rs| {
            let at = nbrs.len();
            // The weights' lines are requested first: they are scattered for incoming relationships, and the
            // translation of the neighbours' ids then covers their wait.
            if let Some(column) = &self.weights {
                rs.for_each(|r| prefetch_at(&column.values, r as usize));
            }
            nbrs.resize(at + ns.len(), 0);
            ws.resize(at + ns.len(), 0.0);
            self.exts_into(ns, &mut nbrs[at..]);
            self.weights_into(rs, &mut ws[at..]);
            ControlFlow::Continue(())
        });
    }

    /// `a`'s runs in `dir` with the view's weight beside each neighbour, straight from storage's flat arrays when
    /// they hold it: the weights of a run are then one contiguous read (for incoming relationships the weight
    /// column by relationship id is a scattered read per edge). A batch requests those lines ahead
    /// ([`Reads::WeightedEdges`]); read unrequested they measured slower than the weight column requested ahead.
    #[inline]
    fn weighted_runs(&self, a: NodeId, dir: Direction) -> Option<[(&[u32], &[f64]); 2]> {
        self.snap.weighted_neighbour_runs(a, dir, self.filter(), self.weight?)
    }

    /// Whether storage's flat arrays hold the view's weights beside their entries (then a batch of edge lists
    /// reads them there, [`Reads::WeightedEdges`]).
    pub(crate) fn weights_beside_entries(&self) -> bool {
        self.weight.is_some_and(|w| self.snap.flat().is_some_and(|f| f.holds_weights_of(w)))
    }

    /// External ids of the nodes in `ns` into `out` and their weights `run_ws` into `out_ws`, in one loop: a
    /// separate copy of the weights became a `memcpy` whose `rep movsb` ran at half the speed of this loop on
    /// the long runs of high-degree nodes (this machine's AMD EPYC).
    #[inline]
    fn exts_and_weights_into(&self, ns: &[u32], run_ws: &[f64], out: &mut [i64], out_ws: &mut [f64]) {
        // One loop per way of finding an external id, so the choice is made once per run, not per edge.
        #[inline(always)]
        fn fill(ext: impl Fn(NodeId) -> i64, ns: &[u32], run_ws: &[f64], out: &mut [i64], out_ws: &mut [f64]) {
            for (((o, w), &n), &x) in out.iter_mut().zip(out_ws.iter_mut()).zip(ns).zip(run_ws) {
                *o = ext(NodeId(u64::from(n)));
                *w = x;
            }
        }
        let (out, out_ws) = (&mut out[..ns.len()], &mut out_ws[..ns.len()]);
        match &self.index {
            Some(index) => per_form!(index.translation(), |ext| fill(|n| ext(n.0), ns, run_ws, out, out_ws)),
            None => fill(|n| self.ext(n), ns, run_ws, out, out_ws),
        }
    }

    /// External ids of the nodes in `ns` into `out` (as long as `ns`).
    #[inline]
    fn exts_into(&self, ns: IdSlice, out: &mut [i64]) {
        let mut i = 0;
        match self.index.as_ref().map(|index| index.translation()) {
            Some(translation) => ns.for_each(|n| {
                out[i] = translation.ext(n);
                i += 1;
            }),
            None => ns.for_each(|n| {
                out[i] = self.ext(NodeId(n));
                i += 1;
            }),
        }
    }

    /// Weights of relationships `rels`, each weight's line requested some positions ahead: a batch finds its
    /// relationships first and gathers their weights in this second pass, whose reads then overlap.
    pub(crate) fn weights_of_all(&self, rels: &[i64]) -> Vec<f64> {
        const AHEAD: usize = 16;
        chunks(rels.len(), |r| {
            let rels = &rels[r];
            (0..rels.len())
                .map(|i| {
                    if let (Some(column), Some(&ahead)) = (&self.weights, rels.get(i + AHEAD)) {
                        prefetch_at(&column.values, ahead as usize);
                    }
                    self.weight_of(RelId(rels[i] as u64))
                })
                .collect::<Vec<f64>>()
        })
        .concat()
    }

    /// Weights of the relationships in `rs` into `out` (as long as `rs`).
    #[inline]
    fn weights_into(&self, rs: IdSlice, out: &mut [f64]) {
        let mut i = 0;
        match &self.weights {
            Some(column) => rs.for_each(|r| {
                out[i] = column.values.get(r as usize).copied().unwrap_or(f64::NAN);
                i += 1;
            }),
            None => rs.for_each(|r| {
                out[i] = self.weight_of(RelId(r));
                i += 1;
            }),
        }
    }

    /// Edges of `u` in `dir` (`Out` or `In`) written into `nbrs` and `ws`, which are exactly `count(u, dir)` long:
    /// the adjacency is copied run by run from the CSR, with no per-edge call and no growing vector. Returns how
    /// many were written.
    pub(crate) fn fill_edges(&self, a: Option<NodeId>, dir: Direction, nbrs: &mut [i64], ws: &mut [f64]) -> usize {
        let Some(a) = a else { return 0 };
        let mut k = 0;
        if let Some(runs) = self.weighted_runs(a, dir) {
            for (ns, run_ws) in runs {
                let m = ns.len();
                if k + m > nbrs.len() {
                    break;
                }
                self.exts_and_weights_into(ns, run_ws, &mut nbrs[k..k + m], &mut ws[k..k + m]);
                k += m;
            }
            return k;
        }
        let _ = self.snap.visit_rel_slices::<()>(a, dir, self.filter(), |ns, rs| {
            let m = ns.len();
            if k + m > nbrs.len() {
                return ControlFlow::Break(());
            }
            self.exts_into(ns, &mut nbrs[k..k + m]);
            self.weights_into(rs, &mut ws[k..k + m]);
            k += m;
            ControlFlow::Continue(())
        });
        k
    }

    /// Distinct neighbours of `a` in `dir`, sorted, written into `out` (at least the node's degree in `dir` long);
    /// returns how many. Neighbours come in runs straight from the adjacency, translated into a buffer; a node's
    /// runs are usually sorted already (external ids are numbered in ascending order on import), so its two runs
    /// (one per direction) are merged into `out` with repeats dropped on the way, and only other cases sort.
    pub(crate) fn neighbours_into(&self, a: Option<NodeId>, dir: Direction, out: &mut [i64]) -> usize {
        let Some(a) = a else { return 0 };
        // The runs' buffer is kept per thread: a call then allocates nothing.
        thread_local!(static RUNS: RefCell<Vec<i64>> = const { RefCell::new(Vec::new()) });
        RUNS.with_borrow_mut(|scratch| self.merge_neighbour_runs(a, dir, scratch, out))
    }

    #[inline]
    fn merge_neighbour_runs(&self, a: NodeId, dir: Direction, scratch: &mut Vec<i64>, out: &mut [i64]) -> usize {
        // With external ids in node order, the storage's sorted runs are merged as they are and only the
        // neighbours kept are translated, straight into `out`.
        if let Some(index) = self.index.as_ref().filter(|index| index.in_node_order()) {
            if let Some((first, second)) = self.snap.sorted_neighbour_runs(a, dir, self.filter()) {
                let merged = per_form!(index.translation(), |ext| merge_distinct_translated(first, second, ext, out));
                if let Some(n) = merged {
                    return n;
                }
            }
        }
        scratch.clear();
        let (mut runs, mut second) = (0, 0);
        let _ = self.snap.visit_neighbour_slices::<()>(a, dir, self.filter(), |ns| {
            let at = scratch.len();
            if !ns.is_empty() {
                runs += 1;
                if runs == 2 {
                    second = at;
                }
            }
            scratch.resize(at + ns.len(), 0);
            self.exts_into(ns, &mut scratch[at..]);
            ControlFlow::Continue(())
        });
        let (first, rest) = scratch.split_at(if runs == 2 { second } else { scratch.len() });
        if runs == 2 && first.is_sorted() && rest.is_sorted() {
            return merge_distinct(first, rest, out);
        }
        if !scratch.is_sorted() {
            scratch.sort_unstable();
        }
        merge_distinct(scratch, &[], out)
    }

    /// Number of relationships of `u` in `dir` (`Both`: out plus in), from group lengths: no relationship is read.
    pub(crate) fn count(&self, u: i64, dir: Direction) -> i64 {
        self.node(u).map_or(0, |a| self.count_of(a, dir))
    }

    /// The nodes of external ids `us` (`None`: no such node), each id-table line requested ahead of its read.
    fn resolve(&self, us: &[i64]) -> Vec<Option<NodeId>> {
        match &self.index {
            Some(index) => (0..us.len())
                .map(|i| {
                    if let Some(&ahead) = us.get(i + LEAF_AHEAD) {
                        index.prefetch(ahead);
                    }
                    index.node(us[i])
                })
                .collect(),
            None => us.iter().map(|&u| self.node(u)).collect(),
        }
    }

    /// [`View::resolve`] on every core, for a batch that then walks the nodes in order.
    pub(crate) fn resolve_all(&self, us: &[i64]) -> Vec<Option<NodeId>> {
        chunks(us.len(), |r| self.resolve(&us[r])).concat()
    }

    /// For a thread walking `nodes` in order, at position `i`: requests the lines of the nodes a few positions
    /// ahead (their offsets or leaf, then their adjacency in `dir`), so that their misses overlap with the
    /// work at hand instead of following it (the fill-time counterpart of [`View::pipelined`]).
    #[inline]
    pub(crate) fn prefetch_ahead(&self, nodes: &[Option<NodeId>], i: usize, dir: Direction, reads: Reads) {
        if let Some(Some(n)) = nodes.get(i + ADJACENCY_AHEAD) {
            self.snap.prefetch_node(*n);
        }
        if let Some(Some(n)) = nodes.get(i + ENTRIES_AHEAD) {
            match reads {
                Reads::Edges | Reads::Search => self.snap.prefetch_rel_entries(*n, dir),
                Reads::WeightedEdges => self.snap.prefetch_weighted_entries(*n, dir),
                Reads::Neighbours => self.snap.prefetch_adjacency(*n, dir),
            }
        }
        if reads != Reads::Search {
            if let Some(Some(n)) = nodes.get(i + LOOKUPS_AHEAD) {
                self.prefetch_lookups(*n, dir, reads == Reads::Edges);
            }
        }
    }

    /// Last prefetch step, once a node's adjacency has arrived: requests the external-id entry of each of its
    /// neighbours and, with `weights`, the weight of each of its relationships: the per-edge reads of a fill,
    /// which land on scattered lines of tables too large for the caches. An id table that fits the cache is
    /// left alone: walking the node's runs a second time to request its lines cost more than the misses it
    /// saved (a shifted id has no table at all).
    #[inline]
    fn prefetch_lookups(&self, node: NodeId, dir: Direction, weights: bool) {
        let exts =
            self.index.as_ref().filter(|index| index.ext_table_outgrows_cache()).map(|index| index.translation());
        let values = self.weights.as_ref().filter(|_| weights).map(|column| &column.values[..]);
        if exts.is_none() && values.is_none() {
            return;
        }
        let _ = self.snap.visit_rel_slices::<()>(node, dir, self.filter(), |ns, rs| {
            if let Some(exts) = exts {
                ns.for_each(|n| exts.prefetch(n));
            }
            if let Some(values) = values {
                rs.for_each(|r| prefetch_at(values, r as usize));
            }
            ControlFlow::Continue(())
        });
    }

    /// `f(i, nodes[i])` for each node in order, with the storage lines of the nodes some positions ahead
    /// requested first (their leaf, then their adjacency in `dir`, then with `entries` their first group and
    /// neighbours): the cache misses of a batch overlap instead of following one another.
    pub(crate) fn pipelined<T>(
        &self,
        nodes: &[Option<NodeId>],
        dir: Direction,
        ahead: Ahead,
        mut f: impl FnMut(usize, Option<NodeId>) -> T,
    ) -> Vec<T> {
        let g = &*self.snap;
        let mut out = Vec::with_capacity(nodes.len());
        for (i, &node) in nodes.iter().enumerate() {
            if let Some(Some(n)) = nodes.get(i + LEAF_AHEAD) {
                g.prefetch_node(*n);
            }
            if let Some(Some(n)) = nodes.get(i + ADJACENCY_AHEAD) {
                g.prefetch_adjacency(*n, dir);
            }
            if let Some(Some(n)) = nodes.get(i + ENTRIES_AHEAD) {
                match ahead {
                    Ahead::Offsets => {}
                    Ahead::Entries => g.prefetch_entries(*n, dir),
                    Ahead::WeightSums => g.prefetch_weight_sums(*n, dir),
                }
            }
            out.push(f(i, node));
        }
        out
    }

    /// [`View::count_of`] for each of `nodes`, pipelined, on every core.
    pub(crate) fn counts_of_all(&self, nodes: &[Option<NodeId>], dir: Direction) -> Vec<i64> {
        chunks(nodes.len(), |r| {
            self.pipelined(&nodes[r], dir, Ahead::Offsets, |_, n| n.map_or(0, |a| self.count_of(a, dir)))
        })
        .concat()
    }

    /// [`View::count`] for each of `us`, pipelined.
    pub(crate) fn counts(&self, us: &[i64], dir: Direction) -> Vec<i64> {
        self.pipelined(&self.resolve(us), dir, Ahead::Offsets, |_, n| n.map_or(0, |a| self.count_of(a, dir)))
    }

    /// [`View::degree`] for each of `us`, pipelined.
    pub(crate) fn degrees(&self, us: &[i64], dir: Direction) -> Vec<(i64, f64)> {
        // Sums stored with the flat arrays are read instead of the entries: their lines are the ones to request.
        let ahead = if self.weights_beside_entries() { Ahead::WeightSums } else { Ahead::Entries };
        self.pipelined(&self.resolve(us), dir, ahead, |_, n| n.map_or((0, 0.0), |a| self.degree_of(a, dir)))
    }

    /// [`View::has_edge`] for each pair of `us` and `vs` (equally long), pipelined on `us`.
    pub(crate) fn has_edges(&self, us: &[i64], vs: &[i64]) -> Vec<bool> {
        let targets = self.resolve(vs);
        let filter = self.filter();
        self.pipelined(&self.resolve(us), Direction::Out, Ahead::Entries, |i, a| match (a, targets[i]) {
            (Some(a), Some(b)) => self.snap.has_edge(a, b, Direction::Out, filter),
            _ => false,
        })
    }

    #[inline]
    pub(crate) fn count_of(&self, a: NodeId, dir: Direction) -> i64 {
        let filter = self.filter();
        match dir {
            Direction::Both => {
                (self.snap.degree(a, Direction::Out, filter) + self.snap.degree(a, Direction::In, filter)) as i64
            }
            d => self.snap.degree(a, d, filter) as i64,
        }
    }

    /// Number of relationships and their summed weight.
    pub(crate) fn degree(&self, u: i64, dir: Direction) -> (i64, f64) {
        self.node(u).map_or((0, 0.0), |a| self.degree_of(a, dir))
    }

    fn degree_of(&self, a: NodeId, dir: Direction) -> (i64, f64) {
        let flat = |d: Direction| {
            let (n, sum) = self.snap.flat_count_and_weight(a, d, self.filter(), self.weight?)?;
            Some((n as i64, sum))
        };
        let one = |d: Direction| match (self.weight, &self.weights, flat(d)) {
            // Storage's flat arrays keep each node's sum: two loads instead of a read per relationship.
            (_, _, Some(answer)) => answer,
            (Some(_), Some(column), None) => {
                let (mut n, mut sum) = (0i64, 0.0);
                let _ = self.snap.visit_rel_slices::<()>(a, d, self.filter(), |_, rs| {
                    n += rs.len() as i64;
                    rs.for_each(|r| {
                        let w = column.values.get(r as usize).copied().unwrap_or(f64::NAN);
                        if !w.is_nan() {
                            sum += w;
                        }
                    });
                    ControlFlow::Continue(())
                });
                (n, sum)
            }
            (Some(w), None, None) => {
                let (n, s) = self.snap.count_and_weight(a, d, self.filter(), w);
                (n as i64, s)
            }
            (None, _, None) => (self.snap.degree(a, d, self.filter()) as i64, 0.0),
        };
        match dir {
            // NetworkX counts a self-loop twice in `degree`: out plus in.
            Direction::Both => {
                let (o, i) = (one(Direction::Out), one(Direction::In));
                (o.0 + i.0, o.1 + i.1)
            }
            d => one(d),
        }
    }
}

/// [`merge_distinct`] of node ids, each written as its external id (ascending with node ids); `None` if some
/// neighbour has no external id (then its place in the order is the caller's to find).
#[inline]
fn merge_distinct_translated(a: &[u32], b: &[u32], ext_of: impl Fn(u64) -> i64, out: &mut [i64]) -> Option<usize> {
    if out.is_empty() {
        return (a.is_empty() && b.is_empty()).then_some(0);
    }
    // `out` is as long as both runs (a degree counts a self-loop on each side), so a write is always in bounds;
    // should it not be, a repeat is written over the value it repeats, in the last place.
    let top = out.len() - 1;
    let (mut i, mut j, mut k) = (0, 0, 0);
    let mut last = u32::MAX;
    let mut any = false;
    let mut missing = false;
    let mut put = |v: u32, k: &mut usize| {
        let new = !any || v != last;
        let ext = ext_of(u64::from(v));
        missing |= ext == NO_ID;
        out[(*k).min(top)] = ext;
        *k += usize::from(new);
        last = v;
        any = true;
    };
    while i < a.len() && j < b.len() {
        let (x, y) = (a[i], b[j]);
        put(x.min(y), &mut k);
        i += usize::from(x <= y);
        j += usize::from(y <= x);
    }
    for &v in a[i..].iter().chain(&b[j..]) {
        put(v, &mut k);
    }
    (!missing).then_some(k)
}

/// The values of sorted `a` and `b` into `out`, sorted and each once; returns how many. Branch-free: which
/// run a value comes from, and whether it repeats the last one written, are data, not jumps to predict.
fn merge_distinct(a: &[i64], b: &[i64], out: &mut [i64]) -> usize {
    let (mut i, mut j, mut k) = (0, 0, 0);
    let mut last = i64::MIN;
    let mut any = false;
    while i < a.len() && j < b.len() {
        let (x, y) = (a[i], b[j]);
        let v = x.min(y);
        out[k] = v;
        let new = !any || v != last;
        k += usize::from(new);
        last = v;
        any = true;
        i += usize::from(x <= y);
        j += usize::from(y <= x);
    }
    for &v in a[i..].iter().chain(&b[j..]) {
        if !any || v != last {
            out[k] = v;
            k += 1;
        }
        last = v;
        any = true;
    }
    k
}
