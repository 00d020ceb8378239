//! `plexus.Graph`: a NetworkX-like view for the random-read operations (find an edge, edges out and in, unique
//! neighbours, degrees with summed weight) and for edge upserts and removals, addressed by external integer ids.
//!
//! Every operation takes one id (answering with Python values) or NumPy arrays of ids (answering with NumPy
//! arrays, lists of varying length as CSR `(offsets, values)`). Batches run with the GIL released, split over
//! the cores when large. Single calls keep the GIL: they finish in well under a microsecond, less than releasing
//! and re-acquiring it costs. Each call reads the newest committed snapshot.

use std::borrow::Cow;
use std::ops::ControlFlow;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

use numpy::{PyArray1, PyUntypedArrayMethods};
use parking_lot::RwLock;
use plexus::value::Value;
use plexus::{Direction, IdSlice, LabelId, NodeId, PropKeyId, ReadTxn, RelId, TypeFilter, TypeId};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use pyo3::IntoPyObjectExt;

use plexus_storage::prefetch::filled_on_huge_pages;

use crate::args::{self, Ids};
use crate::batch::{chunks, csr, exact_csr, flat};
use crate::database::Database;
use crate::errors;
use crate::idindex::{IdIndex, NO_ID};

/// Token ids, cached once they exist (tokens are never removed).
#[derive(Default)]
struct Tokens {
    label: OnceLock<u32>,
    key: OnceLock<u32>,
    ty: OnceLock<u32>,
    weight: OnceLock<u32>,
}

/// A NetworkX-like view of the nodes with one label, identified by an integer key property, and their
/// relationships (of one type, or all). Made by :meth:`Database.graph`.
///
/// Methods take an id or a NumPy array of ids. With ids they return Python values; with arrays they return NumPy
/// arrays, and results of varying length as ``(offsets, values)``, the answer for ``ids[i]`` being
/// ``values[offsets[i]:offsets[i+1]]``. Ids that name no node have no edges, neighbours or degree. Weights are
/// the numeric property named by the view's ``weight`` (NaN / ``None`` where absent).
#[pyclass(module = "plexus", frozen)]
pub struct Graph {
    db: Py<Database>,
    label: String,
    key: String,
    rel_type: Option<String>,
    weight: String,
    tokens: Tokens,
    index: RwLock<Option<Arc<IdIndex>>>,
    /// Lookups answered by storage since the tables were last rebuilt: they are rebuilt once this pays for it.
    stale_work: AtomicU64,
    weights: RwLock<Option<Arc<WeightColumn>>>,
    /// Weight reads answered by storage since the weight column was last rebuilt.
    stale_weight_work: AtomicU64,
}

/// The view's weights by relationship id for one snapshot version (NaN where a relationship has none). Reading a
/// weight from storage walks to the relationship's leaf and then its property map, several dependent cache
/// misses per edge; the column makes it one load, so edge lists and weighted degrees of high-degree vertices
/// cost what their adjacency costs. 8 bytes per relationship, built in one sequential pass when enough weight
/// reads pay for it (like the id tables), and not used for a snapshot it was not built from.
struct WeightColumn {
    version: u64,
    values: Vec<f64>,
}

impl WeightColumn {
    fn build(snap: &ReadTxn, key: PropKeyId) -> WeightColumn {
        let mut values = filled_on_huge_pages(f64::NAN, snap.rel_id_bound() as usize);
        let _ = snap.visit_all_rels::<()>(|r| {
            if let Some(w) = snap.rel_prop(r.id, key).and_then(Value::as_f64) {
                values[r.id.0 as usize] = w;
            }
            ControlFlow::Continue(())
        });
        WeightColumn { version: snap.version(), values }
    }
}

/// What one call reads: a snapshot, and the id tables when they match it.
struct View {
    snap: ReadTxn,
    index: Option<Arc<IdIndex>>,
    label: Option<LabelId>,
    key: Option<PropKeyId>,
    types: Option<Vec<TypeId>>,
    weight: Option<PropKeyId>,
    weights: Option<Arc<WeightColumn>>,
}

fn direction(name: &str) -> PyResult<Direction> {
    match name {
        "out" => Ok(Direction::Out),
        "in" => Ok(Direction::In),
        "both" => Ok(Direction::Both),
        other => Err(errors::argument(format!("unknown direction '{other}' (expected 'out', 'in' or 'both')"))),
    }
}

/// How far ahead of the read a batch requests a node's leaf, its adjacency once the leaf has arrived, and its
/// first entries once that has.
const LEAF_AHEAD: usize = 32;
const ADJACENCY_AHEAD: usize = 16;
const ENTRIES_AHEAD: usize = 8;
const LOOKUPS_AHEAD: usize = 4;

/// What a batch reads of each node after its adjacency, so that [`View::prefetch_ahead`] requests those lines too.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Reads {
    /// A search of the adjacency for the relationships to a given node (requesting what the search finds ahead
    /// of time, or the other end's list, measured no faster).
    Search,
    /// Every neighbour, translated to its external id.
    Neighbours,
    /// Every relationship: its neighbour's external id and its weight.
    Edges,
}

impl View {
    fn filter(&self) -> TypeFilter<'_> {
        match &self.types {
            None => TypeFilter::All,
            Some(t) => TypeFilter::Only(t),
        }
    }

    #[inline]
    fn node(&self, ext: i64) -> Option<NodeId> {
        match &self.index {
            Some(index) => index.node(ext),
            None => self.snap.node_by_key(self.label?, &Value::Int(ext)),
        }
    }

    #[inline]
    fn ext(&self, n: NodeId) -> i64 {
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
        self.weight.and_then(|w| self.snap.rel_prop(rel, w)).and_then(Value::as_f64).unwrap_or(f64::NAN)
    }

    fn has_edge(&self, u: i64, v: i64) -> bool {
        match (self.node(u), self.node(v)) {
            (Some(a), Some(b)) => self.snap.has_edge(a, b, Direction::Out, self.filter()),
            _ => false,
        }
    }

    /// Relationships from `u` to `v`: ids into `rels`, weights into `ws`.
    fn between(&self, a: Option<NodeId>, b: Option<NodeId>, rels: &mut Vec<i64>, ws: &mut Vec<f64>) {
        let (Some(a), Some(b)) = (a, b) else { return };
        let _ = self.snap.visit_rels_between::<()>(a, b, Direction::Out, self.filter(), |e| {
            rels.push(e.rel.0 as i64);
            ws.push(self.weight_of(e.rel));
            ControlFlow::Continue(())
        });
    }

    /// Edges of `u` in `dir`: the other ends into `nbrs`, weights into `ws`.
    fn edges(&self, u: i64, dir: Direction, nbrs: &mut Vec<i64>, ws: &mut Vec<f64>) {
        let Some(a) = self.node(u) else { return };
        let _ = self.snap.visit_rels::<()>(a, dir, self.filter(), |e| {
            nbrs.push(self.ext(e.nbr));
            ws.push(self.weight_of(e.rel));
            ControlFlow::Continue(())
        });
    }

    /// External ids of the nodes in `ns` into `out` (as long as `ns`).
    #[inline]
    fn exts_into(&self, ns: IdSlice, out: &mut [i64]) {
        let mut i = 0;
        match &self.index {
            Some(index) => ns.for_each(|n| {
                out[i] = index.ext(NodeId(n));
                i += 1;
            }),
            None => ns.for_each(|n| {
                out[i] = self.ext(NodeId(n));
                i += 1;
            }),
        }
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
    fn fill_edges(&self, a: Option<NodeId>, dir: Direction, nbrs: &mut [i64], ws: &mut [f64]) -> usize {
        let Some(a) = a else { return 0 };
        let mut k = 0;
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

    /// Distinct neighbours of `u` in `dir`, sorted, appended to `out`. Neighbours come in runs straight from the
    /// adjacency and are translated run by run; a node's runs are usually sorted already (external ids are
    /// numbered in ascending order on import), so most calls skip the sort and only drop repeats.
    fn neighbours(&self, a: Option<NodeId>, dir: Direction, out: &mut Vec<i64>) {
        let Some(a) = a else { return };
        let start = out.len();
        // Runs after the first non-empty one (the other direction, or another type's group) and where the first
        // of them starts: two runs are merged, more are sorted.
        let (mut later_runs, mut second) = (0, start);
        let _ = self.snap.visit_neighbour_slices::<()>(a, dir, self.filter(), |ns| {
            let at = out.len();
            if at > start {
                later_runs += 1;
                if later_runs == 1 {
                    second = at;
                }
            }
            out.resize(at + ns.len(), 0);
            self.exts_into(ns, &mut out[at..]);
            ControlFlow::Continue(())
        });
        let found = &mut out[start..];
        if !found.is_sorted() && (later_runs != 1 || !merge_sorted_runs(found, second - start)) {
            found.sort_unstable();
        }
        // Repeats (parallel relationships, or a neighbour both ways) are adjacent now: keep the first of each.
        let mut kept = start;
        for i in start..out.len() {
            if kept == start || out[i] != out[kept - 1] {
                out[kept] = out[i];
                kept += 1;
            }
        }
        out.truncate(kept);
    }

    /// Number of relationships of `u` in `dir` (`Both`: out plus in), from group lengths: no relationship is read.
    fn count(&self, u: i64, dir: Direction) -> i64 {
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
    fn resolve_all(&self, us: &[i64]) -> Vec<Option<NodeId>> {
        chunks(us.len(), |r| self.resolve(&us[r])).concat()
    }

    /// For a thread walking `nodes` in order, at position `i`: requests the lines of the nodes a few positions
    /// ahead (their offsets or leaf, then their adjacency in `dir`), so that their misses overlap with the
    /// work at hand instead of following it (the fill-time counterpart of [`View::pipelined`]).
    #[inline]
    fn prefetch_ahead(&self, nodes: &[Option<NodeId>], i: usize, dir: Direction, reads: Reads) {
        if let Some(Some(n)) = nodes.get(i + ADJACENCY_AHEAD) {
            self.snap.prefetch_node(*n);
        }
        if let Some(Some(n)) = nodes.get(i + ENTRIES_AHEAD) {
            match reads {
                Reads::Edges | Reads::Search => self.snap.prefetch_rel_entries(*n, dir),
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
    /// which land on scattered lines of tables too large for the caches.
    #[inline]
    fn prefetch_lookups(&self, node: NodeId, dir: Direction, weights: bool) {
        let exts = self.index.as_ref().map(|index| index.ext_table());
        let values = self.weights.as_ref().filter(|_| weights).map(|column| &column.values[..]);
        let _ = self.snap.visit_rel_slices::<()>(node, dir, self.filter(), |ns, rs| {
            if let Some(table) = exts {
                ns.for_each(|n| prefetch_entry(table, n));
            }
            if let Some(values) = values {
                rs.for_each(|r| prefetch_entry(values, r));
            }
            ControlFlow::Continue(())
        });
    }

    /// `f(i, nodes[i])` for each node in order, with the storage lines of the nodes some positions ahead
    /// requested first (their leaf, then their adjacency in `dir`, then with `entries` their first group and
    /// neighbours): the cache misses of a batch overlap instead of following one another.
    fn pipelined<T>(
        &self,
        nodes: &[Option<NodeId>],
        dir: Direction,
        entries: bool,
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
            if entries {
                if let Some(Some(n)) = nodes.get(i + ENTRIES_AHEAD) {
                    g.prefetch_entries(*n, dir);
                }
            }
            out.push(f(i, node));
        }
        out
    }

    /// [`View::count`] for each of `us`, pipelined.
    fn counts(&self, us: &[i64], dir: Direction) -> Vec<i64> {
        self.pipelined(&self.resolve(us), dir, false, |_, n| n.map_or(0, |a| self.count_of(a, dir)))
    }

    /// [`View::degree`] for each of `us`, pipelined.
    fn degrees(&self, us: &[i64], dir: Direction) -> Vec<(i64, f64)> {
        self.pipelined(&self.resolve(us), dir, true, |_, n| n.map_or((0, 0.0), |a| self.degree_of(a, dir)))
    }

    /// [`View::has_edge`] for each pair of `us` and `vs` (equally long), pipelined on `us`.
    fn has_edges(&self, us: &[i64], vs: &[i64]) -> Vec<bool> {
        let targets = self.resolve(vs);
        let filter = self.filter();
        self.pipelined(&self.resolve(us), Direction::Out, true, |i, a| match (a, targets[i]) {
            (Some(a), Some(b)) => self.snap.has_edge(a, b, Direction::Out, filter),
            _ => false,
        })
    }

    #[inline]
    fn count_of(&self, a: NodeId, dir: Direction) -> i64 {
        let filter = self.filter();
        match dir {
            Direction::Both => {
                (self.snap.degree(a, Direction::Out, filter) + self.snap.degree(a, Direction::In, filter)) as i64
            }
            d => self.snap.degree(a, d, filter) as i64,
        }
    }

    /// Number of relationships and their summed weight.
    fn degree(&self, u: i64, dir: Direction) -> (i64, f64) {
        self.node(u).map_or((0, 0.0), |a| self.degree_of(a, dir))
    }

    fn degree_of(&self, a: NodeId, dir: Direction) -> (i64, f64) {
        let one = |d: Direction| match (self.weight, &self.weights) {
            (Some(_), Some(column)) => {
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
            (Some(w), None) => {
                let (n, s) = self.snap.count_and_weight(a, d, self.filter(), w);
                (n as i64, s)
            }
            (None, _) => (self.snap.degree(a, d, self.filter()) as i64, 0.0),
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

fn opt_weight(w: f64) -> Option<f64> {
    (!w.is_nan()).then_some(w)
}

impl Graph {
    pub fn new(db: Py<Database>, label: &str, key: &str, rel_type: Option<&str>, weight: &str) -> Graph {
        Graph {
            db,
            label: label.into(),
            key: key.into(),
            rel_type: rel_type.map(String::from),
            weight: weight.into(),
            tokens: Tokens::default(),
            index: RwLock::new(None),
            stale_work: AtomicU64::new(0),
            weights: RwLock::new(None),
            stale_weight_work: AtomicU64::new(0),
        }
    }

    /// The view for a call that will make about `work` lookups.
    fn view(&self, py: Python<'_>, work: u64) -> PyResult<View> {
        let snap = self.db.get().with(|d| d.read())?;
        let cached = |cell: &OnceLock<u32>, kind, name: &str| {
            cell.get().copied().or_else(|| {
                snap.catalog().lookup(kind, name).inspect(|&id| {
                    let _ = cell.set(id);
                })
            })
        };
        use plexus::TokenKind::{Label, PropKey, Type};
        let label = cached(&self.tokens.label, Label, &self.label).map(LabelId);
        let key = cached(&self.tokens.key, PropKey, &self.key).map(PropKeyId);
        let weight = cached(&self.tokens.weight, PropKey, &self.weight).map(PropKeyId);
        let types = self.rel_type.as_ref().map(|t| cached(&self.tokens.ty, Type, t).map(TypeId).into_iter().collect());
        let mut view = View { snap, index: None, label, key, types, weight, weights: None };
        let (Some(label), Some(key)) = (label, key) else { return Ok(view) };
        let current = self.index.read().clone();
        if let Some(index) = current.filter(|i| i.version == view.snap.version()) {
            view.index = Some(index);
            return Ok(view);
        }
        let keyed = view.snap.unique_key(label) == Some(key);
        let done = self.stale_work.fetch_add(work, Ordering::Relaxed) + work;
        if keyed && done < view.snap.label_count(label) / 16 {
            return Ok(view);
        }
        let snap = &view.snap;
        let index = Arc::new(py.detach(|| IdIndex::build(snap, label, key)).map_err(errors::argument)?);
        self.stale_work.store(0, Ordering::Relaxed);
        *self.index.write() = Some(index.clone());
        view.index = Some(index);
        Ok(view)
    }

    /// `view` with the weight column attached, for a call that will read about `work` weights: the column of the
    /// view's snapshot if there is one, else a new one once the weight reads answered by storage since the last
    /// build add up to an eighth of the relationships (a pass over them costs about that).
    fn with_weights(&self, py: Python<'_>, mut view: View, work: u64) -> PyResult<View> {
        let Some(key) = view.weight else { return Ok(view) };
        let current = self.weights.read().clone();
        if let Some(column) = current.filter(|c| c.version == view.snap.version()) {
            view.weights = Some(column);
            return Ok(view);
        }
        let done = self.stale_weight_work.fetch_add(work, Ordering::Relaxed) + work;
        if done < view.snap.rel_count() / 8 {
            return Ok(view);
        }
        let snap = &view.snap;
        let column = Arc::new(py.detach(|| WeightColumn::build(snap, key)));
        self.stale_weight_work.store(0, Ordering::Relaxed);
        *self.weights.write() = Some(column.clone());
        view.weights = Some(column);
        Ok(view)
    }

    /// After a commit of this view's own writes: keeps the tables current when nothing else committed between.
    fn adopt(&self, start: u64, version: u64, created: &[(i64, NodeId)]) {
        let mut slot = self.index.write();
        let Some(index) = slot.as_mut() else { return };
        if index.version != start || version != start + 1 {
            return;
        }
        let index = Arc::make_mut(index);
        for &(ext, n) in created {
            index.insert(ext, n);
        }
        index.version = version;
    }

    /// Runs `one` for a single id or `many` for an array; `weights` says whether the call reads weights.
    fn scalar_or_batch<'py, S, B>(
        &self,
        py: Python<'py>,
        ids: Ids<'py>,
        weights: bool,
        one: S,
        many: B,
    ) -> PyResult<Bound<'py, PyAny>>
    where
        S: FnOnce(&View, i64) -> PyResult<Bound<'py, PyAny>>,
        B: FnOnce(&View, &[i64]) -> PyResult<Bound<'py, PyAny>>,
    {
        // A call reads about a degree's worth of weights per id.
        let per_id = |view: &View| (view.snap.rel_count() / view.snap.node_count().max(1)).max(1);
        match ids {
            Ids::One(u) => {
                let mut view = self.view(py, 1)?;
                if weights {
                    // Single calls count towards building the weight column too: with it, a weight is one
                    // read of an array instead of a walk to the relationship's property map.
                    let work = per_id(&view);
                    view = self.with_weights(py, view, work)?;
                }
                one(&view, u)
            }
            Ids::Many(a) => {
                let mut view = self.view(py, a.len() as u64)?;
                if weights {
                    let work = a.len() as u64 * per_id(&view);
                    view = self.with_weights(py, view, work)?;
                }
                many(&view, a.as_slice()?)
            }
        }
    }

    fn edge_lists<'py>(&self, py: Python<'py>, ids: &Bound<'py, PyAny>, dir: Direction) -> PyResult<Bound<'py, PyAny>> {
        let ids = args::ids(ids, "ids")?;
        self.scalar_or_batch(
            py,
            ids,
            true,
            |v, u| {
                let (mut nbrs, mut ws) = (Vec::new(), Vec::new());
                v.edges(u, dir, &mut nbrs, &mut ws);
                let items = nbrs.iter().zip(&ws).map(|(&x, &w)| {
                    let (a, b) = if dir == Direction::In { (x, u) } else { (u, x) };
                    (a, b, opt_weight(w)).into_pyobject(py)
                });
                Ok(PyList::new(py, items.collect::<PyResult<Vec<_>>>()?)?.into_any())
            },
            |v, us| {
                let (o, n, w) = py.detach(|| {
                    let nodes = v.resolve_all(us);
                    let counts = chunks(nodes.len(), |r| {
                        v.pipelined(&nodes[r], dir, false, |_, n| n.map_or(0, |a| v.count_of(a, dir)))
                    })
                    .concat();
                    exact_csr(&counts, |i, vals, ws| {
                        v.prefetch_ahead(&nodes, i, dir, Reads::Edges);
                        v.fill_edges(nodes[i], dir, vals, ws)
                    })
                });
                (PyArray1::from_vec(py, o), PyArray1::from_vec(py, n), PyArray1::from_vec(py, w)).into_bound_py_any(py)
            },
        )
    }

    fn degrees<'py>(
        &self,
        py: Python<'py>,
        ids: &Bound<'py, PyAny>,
        dir: Direction,
        weight: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let ids = args::ids(ids, "ids")?;
        self.scalar_or_batch(
            py,
            ids,
            weight,
            |v, u| {
                if weight {
                    v.degree(u, dir).into_bound_py_any(py)
                } else {
                    v.count(u, dir).into_bound_py_any(py)
                }
            },
            |v, us| {
                if weight {
                    let pairs = py.detach(|| chunks(us.len(), |r| v.degrees(&us[r], dir)).concat());
                    let (n, s): (Vec<i64>, Vec<f64>) = pairs.into_iter().unzip();
                    (PyArray1::from_vec(py, n), PyArray1::from_vec(py, s)).into_bound_py_any(py)
                } else {
                    let n = py.detach(|| chunks(us.len(), |r| v.counts(&us[r], dir)).concat());
                    Ok(PyArray1::from_vec(py, n).into_any())
                }
            },
        )
    }

    /// Source and target arrays (a scalar is repeated to the other's length).
    fn pairs<'py>(src: &Bound<'py, PyAny>, dst: &Bound<'py, PyAny>) -> PyResult<(Ids<'py>, Ids<'py>, Option<usize>)> {
        let (s, d) = (args::ids(src, "u")?, args::ids(dst, "v")?);
        let n = match (s.len(), d.len()) {
            (None, None) => None,
            (Some(a), None) | (None, Some(a)) => Some(a),
            (Some(a), Some(b)) => Some(args::same_length(&[("u", a), ("v", b)])?),
        };
        Ok((s, d, n))
    }
}

fn id_at(ids: &Ids<'_>, i: usize) -> i64 {
    match ids {
        Ids::One(u) => *u,
        Ids::Many(a) => a.as_slice().map(|s| s[i]).unwrap_or(NO_ID),
    }
}

fn slice_of<'a>(ids: &'a Ids<'_>) -> Option<&'a [i64]> {
    match ids {
        Ids::One(_) => None,
        Ids::Many(a) => a.as_slice().ok(),
    }
}

#[pymethods]
impl Graph {
    /// Whether a relationship leads from ``u`` to ``v``. Ids or two arrays (an id is repeated to the array's
    /// length) -> bool or bool array.
    fn has_edge<'py>(
        &self,
        py: Python<'py>,
        u: &Bound<'py, PyAny>,
        v: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let (s, d, n) = Self::pairs(u, v)?;
        let Some(n) = n else {
            return self.view(py, 2)?.has_edge(id_at(&s, 0), id_at(&d, 0)).into_bound_py_any(py);
        };
        let view = self.view(py, 2 * n as u64)?;
        let (ss, ds) = (slice_of(&s), slice_of(&d));
        let (s0, d0) = (id_at(&s, 0), id_at(&d, 0));
        let out = py.detach(|| {
            // A scalar side is repeated to the other's length; an array side is read in place.
            fn side(x: Option<&[i64]>, one: i64, n: usize) -> Cow<'_, [i64]> {
                x.map_or_else(|| Cow::Owned(vec![one; n]), Cow::Borrowed)
            }
            let (src, dst) = (side(ss, s0, n), side(ds, d0, n));
            chunks(n, |r| view.has_edges(&src[r.clone()], &dst[r])).concat()
        });
        Ok(PyArray1::from_vec(py, out).into_any())
    }

    /// The relationships from ``u`` to ``v``: a list of ``(relationship id, weight)``, or for arrays
    /// ``(offsets, relationship_ids, weights)``.
    fn edges_between<'py>(
        &self,
        py: Python<'py>,
        u: &Bound<'py, PyAny>,
        v: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let (s, d, n) = Self::pairs(u, v)?;
        let Some(n) = n else {
            let (mut rels, mut ws) = (Vec::new(), Vec::new());
            let view = self.view(py, 2)?;
            let view = self.with_weights(py, view, 1)?;
            view.between(view.node(id_at(&s, 0)), view.node(id_at(&d, 0)), &mut rels, &mut ws);
            let items = rels.iter().zip(&ws).map(|(&r, &w)| (r, opt_weight(w)).into_pyobject(py));
            return Ok(PyList::new(py, items.collect::<PyResult<Vec<_>>>()?)?.into_any());
        };
        let view = self.view(py, 2 * n as u64)?;
        let view = self.with_weights(py, view, n as u64)?;
        let (ss, ds) = (slice_of(&s), slice_of(&d));
        let (s0, d0) = (id_at(&s, 0), id_at(&d, 0));
        let (o, r, w) = py.detach(|| {
            let resolve = |x: Option<&[i64]>, one: i64| match x {
                Some(x) => view.resolve_all(x),
                None => vec![view.node(one); n],
            };
            let (froms, tos) = (resolve(ss, s0), resolve(ds, d0));
            csr(n, |i, rels, ws| {
                view.prefetch_ahead(&froms, i, Direction::Out, Reads::Search);
                view.between(froms[i], tos[i], rels, ws)
            })
        });
        (PyArray1::from_vec(py, o), PyArray1::from_vec(py, r), PyArray1::from_vec(py, w)).into_bound_py_any(py)
    }

    /// Edges leaving ``u``: a list of ``(u, v, weight)``, or for an array ``(offsets, targets, weights)``.
    fn out_edges<'py>(&self, py: Python<'py>, u: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        self.edge_lists(py, u, Direction::Out)
    }

    /// Edges entering ``v``: a list of ``(u, v, weight)``, or for an array ``(offsets, sources, weights)``.
    fn in_edges<'py>(&self, py: Python<'py>, v: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        self.edge_lists(py, v, Direction::In)
    }

    /// Distinct neighbours, sorted: ``direction`` is ``"out"`` (successors, NetworkX's default), ``"in"`` or
    /// ``"both"``. A list, or for an array ``(offsets, neighbours)``.
    #[pyo3(signature = (u, direction="out"))]
    fn neighbors<'py>(&self, py: Python<'py>, u: &Bound<'py, PyAny>, direction: &str) -> PyResult<Bound<'py, PyAny>> {
        let dir = self::direction(direction)?;
        let ids = args::ids(u, "u")?;
        self.scalar_or_batch(
            py,
            ids,
            false,
            |v, u| {
                let mut out = Vec::new();
                v.neighbours(v.node(u), dir, &mut out);
                Ok(PyList::new(py, out)?.into_any())
            },
            |v, us| {
                let (o, n, _) = py.detach(|| {
                    let nodes = v.resolve_all(us);
                    csr(nodes.len(), |i, vals, _| {
                        v.prefetch_ahead(&nodes, i, dir, Reads::Neighbours);
                        v.neighbours(nodes[i], dir, vals)
                    })
                });
                (PyArray1::from_vec(py, o), PyArray1::from_vec(py, n)).into_bound_py_any(py)
            },
        )
    }

    /// Same as ``neighbors(u, "out")``.
    fn successors<'py>(&self, py: Python<'py>, u: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        self.neighbors(py, u, "out")
    }

    /// Same as ``neighbors(v, "in")``.
    fn predecessors<'py>(&self, py: Python<'py>, v: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        self.neighbors(py, v, "in")
    }

    /// Number of relationships in and out (a self-loop counts twice, as in NetworkX). With ``weight=True``,
    /// ``(count, summed weight)``. For an array, int64 array(s).
    #[pyo3(signature = (u, weight=false))]
    fn degree<'py>(&self, py: Python<'py>, u: &Bound<'py, PyAny>, weight: bool) -> PyResult<Bound<'py, PyAny>> {
        self.degrees(py, u, Direction::Both, weight)
    }

    /// Number of relationships entering ``v`` (with ``weight=True``: ``(count, summed weight)``).
    #[pyo3(signature = (v, weight=false))]
    fn in_degree<'py>(&self, py: Python<'py>, v: &Bound<'py, PyAny>, weight: bool) -> PyResult<Bound<'py, PyAny>> {
        self.degrees(py, v, Direction::In, weight)
    }

    /// Number of relationships leaving ``u`` (with ``weight=True``: ``(count, summed weight)``).
    #[pyo3(signature = (u, weight=false))]
    fn out_degree<'py>(&self, py: Python<'py>, u: &Bound<'py, PyAny>, weight: bool) -> PyResult<Bound<'py, PyAny>> {
        self.degrees(py, u, Direction::Out, weight)
    }

    /// Whether a node has id ``u`` (bool, or bool array).
    fn has_node<'py>(&self, py: Python<'py>, u: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        let ids = args::ids(u, "u")?;
        self.scalar_or_batch(
            py,
            ids,
            false,
            |v, u| v.node(u).is_some().into_bound_py_any(py),
            |v, us| Ok(PyArray1::from_vec(py, py.detach(|| flat(us.len(), |i| v.node(us[i]).is_some()))).into_any()),
        )
    }

    /// The ids of every node of the view, as an int64 array in node order.
    fn nodes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray1<i64>>> {
        let view = self.view(py, u64::MAX / 2)?;
        let Some(label) = view.label else { return Ok(PyArray1::from_vec(py, Vec::new())) };
        let ids = py.detach(|| {
            let mut out = Vec::new();
            let _ = view.snap.visit_label::<()>(label, |n| {
                out.push(view.ext(n));
                ControlFlow::Continue(())
            });
            out
        });
        Ok(PyArray1::from_vec(py, ids))
    }

    fn number_of_nodes(&self, py: Python<'_>) -> PyResult<u64> {
        let view = self.view(py, 0)?;
        Ok(view.label.map_or(0, |l| view.snap.label_count(l)))
    }

    /// Number of relationships (of the view's type when it has one; counting them then takes a scan).
    fn number_of_edges(&self, py: Python<'_>) -> PyResult<u64> {
        let view = self.view(py, 0)?;
        if view.types.is_none() {
            return Ok(view.snap.rel_count());
        }
        let filter = view.filter();
        Ok(py.detach(|| {
            let mut n = 0;
            let _ = view.snap.visit_nodes::<()>(|a| {
                n += view.snap.degree(a, Direction::Out, filter);
                ControlFlow::Continue(())
            });
            n
        }))
    }

    /// Creates or updates edges ``src[i] -> dst[i]`` of the view's type (``EDGE`` when the view has none),
    /// merging on (source, type, target): an existing relationship gets the new weight, a missing one is created,
    /// and so are missing nodes (with the view's label and key). All in one transaction. Returns
    /// ``{"created", "updated", "nodes_created"}``.
    #[pyo3(signature = (src, dst, weight=None))]
    fn upsert_edges<'py>(
        &self,
        py: Python<'py>,
        src: &Bound<'py, PyAny>,
        dst: &Bound<'py, PyAny>,
        weight: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let (s, d) = (args::id_array(src, "src")?, args::id_array(dst, "dst")?);
        let w = weight.filter(|w| !w.is_none()).map(|w| args::float_array(w, "weight")).transpose()?;
        let mut lengths = vec![("src", s.len()), ("dst", d.len())];
        if let Some(w) = &w {
            lengths.push(("weight", w.len()));
        }
        args::same_length(&lengths)?;
        let (s, d) = (s.as_slice()?, d.as_slice()?);
        let w = w.as_ref().map(|w| w.as_slice()).transpose()?;
        let db = self.db.get().handle()?;
        let names =
            (self.label.as_str(), self.key.as_str(), self.rel_type.as_deref().unwrap_or("EDGE"), self.weight.as_str());
        let out = py.detach(|| crate::bulk::upsert(&db, s, d, w, names))?;
        self.adopt(out.start, out.version, &out.nodes);
        let dict = PyDict::new(py);
        dict.set_item("created", out.counts.created)?;
        dict.set_item("updated", out.counts.updated)?;
        dict.set_item("nodes_created", out.nodes.len())?;
        Ok(dict)
    }

    /// Removes every relationship ``src[i] -> dst[i]`` of the view's type (``EDGE`` when it has none), in one
    /// transaction; returns how many were removed. Nodes stay.
    fn remove_edges(&self, py: Python<'_>, src: &Bound<'_, PyAny>, dst: &Bound<'_, PyAny>) -> PyResult<u64> {
        let (s, d) = (args::id_array(src, "src")?, args::id_array(dst, "dst")?);
        args::same_length(&[("src", s.len()), ("dst", d.len())])?;
        let (s, d) = (s.as_slice()?, d.as_slice()?);
        let db = self.db.get().handle()?;
        let names =
            (self.label.as_str(), self.key.as_str(), self.rel_type.as_deref().unwrap_or("EDGE"), self.weight.as_str());
        let out = py.detach(|| crate::bulk::remove(&db, s, d, names))?;
        self.adopt(out.start, out.version, &[]);
        Ok(out.removed)
    }

    /// Builds the id tables and the weight column for the newest snapshot now (otherwise they are built once enough
    /// lookups were made).
    fn refresh(&self, py: Python<'_>) -> PyResult<()> {
        let view = self.view(py, u64::MAX / 2)?;
        self.with_weights(py, view, u64::MAX / 2).map(drop)
    }

    fn __repr__(&self) -> String {
        let ty = self.rel_type.as_deref().map_or("all types".to_string(), |t| format!(":{t}"));
        format!("Graph(:{}({}), {}, weight={:?})", self.label, self.key, ty, self.weight)
    }
}

/// Requests `table[i]`'s line, if `i` is in range, without waiting for it.
#[inline]
fn prefetch_entry<T>(table: &[T], i: u64) {
    if let Some(entry) = table.get(i as usize) {
        plexus_storage::prefetch::prefetch(entry);
    }
}

/// Merges `v[..mid]` and `v[mid..]` in place when both are sorted (returns false, leaving `v` as it was,
/// otherwise). A node's neighbours arrive as one sorted run per direction, so a merge replaces a sort.
fn merge_sorted_runs(v: &mut [i64], mid: usize) -> bool {
    const SHORT: usize = 64;
    let (a, b) = v.split_at(mid);
    if !a.is_sorted() || !b.is_sorted() {
        return false;
    }
    let mut short = [0i64; SHORT];
    let long;
    let first: &[i64] = if mid <= SHORT {
        short[..mid].copy_from_slice(a);
        &short[..mid]
    } else {
        long = a.to_vec();
        &long
    };
    let (mut i, mut j, mut k) = (0, mid, 0);
    // The write position never passes the read position in the second run: k = i + (j - mid) <= j.
    // Branch-free: which run an element comes from is data, not a jump to predict.
    while i < mid && j < v.len() {
        let (x, y) = (first[i], v[j]);
        let from_first = x <= y;
        v[k] = if from_first { x } else { y };
        i += usize::from(from_first);
        j += usize::from(!from_first);
        k += 1;
    }
    v[k..k + (mid - i)].copy_from_slice(&first[i..]);
    true
}
