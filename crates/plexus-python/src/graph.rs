//! `plexus.Graph`: a NetworkX-like view for the random-read operations (find an edge, edges out and in, unique
//! neighbours, degrees with summed weight) and for edge upserts and removals, addressed by external integer ids.
//!
//! Every operation takes one id (answering with Python values) or NumPy arrays of ids (answering with NumPy
//! arrays, lists of varying length as CSR `(offsets, values)`). Batches run with the GIL released, split over
//! the cores when large. Single calls keep the GIL: they finish in well under a microsecond, less than releasing
//! and re-acquiring it costs. Each call reads the newest committed snapshot through a [`View`] (`view.rs`), which
//! holds the read paths; this module holds the Python-facing methods and the tables' caching.

use std::borrow::Cow;
use std::ops::ControlFlow;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

use numpy::{PyArray1, PyUntypedArrayMethods};
use parking_lot::RwLock;
use plexus::{Direction, LabelId, NodeId, PropKeyId, TypeId};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use pyo3::IntoPyObjectExt;
use smallvec::SmallVec;

use crate::args::{self, Ids};
use crate::batch::{bounded_csr, chunks, csr, exact_csr, flat};
use crate::bufpool;
use crate::database::Database;
use crate::errors;
use crate::idindex::{IdIndex, NO_ID};
use crate::view::{Reads, View, WeightColumn};

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
/// the numeric property named by the view's ``weight`` (NaN / ``None`` where absent). A neighbour outside the
/// view (without its label, or with a key that is not an integer) is ``None`` in lists and ``plexus.NO_ID``
/// (-2**63) in arrays; that id is reserved, so it never names a node of the view.
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

fn direction(name: &str) -> PyResult<Direction> {
    match name {
        "out" => Ok(Direction::Out),
        "in" => Ok(Direction::In),
        "both" => Ok(Direction::Both),
        other => Err(errors::argument(format!("unknown direction '{other}' (expected 'out', 'in' or 'both')"))),
    }
}

/// A list of `(me, other, weight)` tuples (`(other, me, weight)` when `incoming`), weight `None` for NaN, built
/// with CPython's constructors directly: a single call's cost is mostly these objects.
fn edge_tuples<'py>(
    py: Python<'py>,
    me: &Bound<'py, PyAny>,
    others: &[i64],
    weights: &[f64],
    incoming: bool,
) -> PyResult<Bound<'py, PyAny>> {
    use pyo3::ffi;
    // SAFETY: with the GIL held (`py`), each object is checked for NULL right after it is made, and every
    // reference is either stolen by the container it is set in or released on the error path.
    unsafe {
        let list = ffi::PyList_New(others.len() as ffi::Py_ssize_t);
        let list = Bound::from_owned_ptr_or_err(py, list)?;
        for (i, (&x, &w)) in others.iter().zip(weights).enumerate() {
            let tuple = Bound::from_owned_ptr_or_err(py, ffi::PyTuple_New(3))?;
            let other = int_or_none(py, x)?;
            let weight = match opt_weight(w) {
                Some(w) => Bound::from_owned_ptr_or_err(py, ffi::PyFloat_FromDouble(w))?,
                None => py.None().into_bound(py),
            };
            let (a, b) = if incoming { (other, me.clone()) } else { (me.clone(), other) };
            ffi::PyTuple_SetItem(tuple.as_ptr(), 0, a.into_ptr());
            ffi::PyTuple_SetItem(tuple.as_ptr(), 1, b.into_ptr());
            ffi::PyTuple_SetItem(tuple.as_ptr(), 2, weight.into_ptr());
            ffi::PyList_SetItem(list.as_ptr(), i as ffi::Py_ssize_t, tuple.into_ptr());
        }
        Ok(list)
    }
}

/// An external id as a Python int, or `None` for a node without one ([`NO_ID`]).
#[inline]
fn int_or_none(py: Python<'_>, ext: i64) -> PyResult<Bound<'_, PyAny>> {
    if ext == NO_ID {
        return Ok(py.None().into_bound(py));
    }
    // SAFETY: with the GIL held (`py`); the new reference is checked for NULL.
    unsafe { Bound::from_owned_ptr_or_err(py, pyo3::ffi::PyLong_FromLongLong(ext)) }
}

/// A list of ints (`None` for neighbours without an id), built with CPython's constructors directly (see
/// [`edge_tuples`]).
fn int_list<'py>(py: Python<'py>, values: &[i64]) -> PyResult<Bound<'py, PyAny>> {
    use pyo3::ffi;
    // SAFETY: as in `edge_tuples`.
    unsafe {
        let list = Bound::from_owned_ptr_or_err(py, ffi::PyList_New(values.len() as ffi::Py_ssize_t))?;
        for (i, &v) in values.iter().enumerate() {
            ffi::PyList_SetItem(list.as_ptr(), i as ffi::Py_ssize_t, int_or_none(py, v)?.into_ptr());
        }
        Ok(list)
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
        let keyed = view.snap.has_unique_key(label, key);
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
    /// Takes the write's own handle on the tables (`held`) to let go of it first: while it is held the update
    /// below copies the tables whole, which made a single-edge write on a graph of 170 K nodes 20 times slower.
    fn adopt(&self, held: Option<Arc<IdIndex>>, start: u64, version: u64, created: &[(i64, NodeId)]) {
        drop(held);
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
            args::OneOrMany::One(u) => {
                let mut view = self.view(py, 1)?;
                if weights {
                    // Single calls count towards building the weight column too: with it, a weight is one
                    // read of an array instead of a walk to the relationship's property map.
                    let work = per_id(&view);
                    view = self.with_weights(py, view, work)?;
                }
                one(&view, u)
            }
            args::OneOrMany::Many(a) => {
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
                let (mut nbrs, mut ws) = (SmallVec::<[i64; 32]>::new(), SmallVec::<[f64; 32]>::new());
                v.edges(u, dir, &mut nbrs, &mut ws);
                // Every tuple holds the queried id: one Python int shared by all of them.
                let me = u.into_pyobject(py)?.into_any();
                edge_tuples(py, &me, &nbrs, &ws, dir == Direction::In)
            },
            |v, us| {
                let (o, n, w) = py.detach(|| {
                    let nodes = v.resolve_all(us);
                    let counts = v.counts_of_all(&nodes, dir);
                    let reads = if v.weights_beside_entries() { Reads::WeightedEdges } else { Reads::Edges };
                    exact_csr(&counts, |i, vals, ws| {
                        v.prefetch_ahead(&nodes, i, dir, reads);
                        v.fill_edges(nodes[i], dir, vals, ws)
                    })
                });
                (bufpool::into_numpy(py, o)?, bufpool::into_numpy(py, n)?, bufpool::into_numpy(py, w)?)
                    .into_bound_py_any(py)
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
        let n = args::common_len(&[("u", s.len()), ("v", d.len())])?;
        Ok((s, d, n))
    }
}

fn id_at(ids: &Ids<'_>, i: usize) -> i64 {
    match ids {
        args::OneOrMany::One(u) => *u,
        // An empty array has no first id (only a scalar on the other side asks for one, then unused).
        args::OneOrMany::Many(a) => a.as_slice().ok().and_then(|s| s.get(i).copied()).unwrap_or(NO_ID),
    }
}

fn slice_of<'a>(ids: &'a Ids<'_>) -> Option<&'a [i64]> {
    match ids {
        args::OneOrMany::One(_) => None,
        args::OneOrMany::Many(a) => a.as_slice().ok(),
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
            let (offsets, rels, _) = csr(n, |i, rels, _| {
                view.prefetch_ahead(&froms, i, Direction::Out, Reads::Search);
                view.rels_between(froms[i], tos[i], rels)
            });
            let weights = view.weights_of_all(&rels);
            (offsets, rels, weights)
        });
        (bufpool::into_numpy(py, o)?, bufpool::into_numpy(py, r)?, bufpool::into_numpy(py, w)?).into_bound_py_any(py)
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
                // A buffer kept per thread: a single call then allocates only its Python objects.
                thread_local!(static FOUND: std::cell::RefCell<Vec<i64>> = const { std::cell::RefCell::new(Vec::new()) });
                FOUND.with_borrow_mut(|found| {
                    let a = v.node(u);
                    found.resize(a.map_or(0, |a| v.count_of(a, dir)) as usize, 0);
                    let n = v.neighbours_into(a, dir, found);
                    int_list(py, &found[..n])
                })
            },
            |v, us| {
                let (o, n, _, _) = py.detach(|| {
                    let nodes = v.resolve_all(us);
                    // A node's distinct neighbours are at most its degree: written in place, then closed up.
                    let bounds = v.counts_of_all(&nodes, dir);
                    bounded_csr(&bounds, false, |i, vals, _| {
                        v.prefetch_ahead(&nodes, i, dir, Reads::Neighbours);
                        v.neighbours_into(nodes[i], dir, vals)
                    })
                });
                (bufpool::into_numpy(py, o)?, bufpool::into_numpy(py, n)?).into_bound_py_any(py)
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
    /// ``(count, summed weight)``, where a relationship without the weight property adds nothing to the sum
    /// (NetworkX's ``degree(weight=...)`` counts it as 1: compare the count with the sum to tell). For an array,
    /// int64 array(s).
    #[pyo3(signature = (u, weight=None))]
    fn degree<'py>(
        &self,
        py: Python<'py>,
        u: &Bound<'py, PyAny>,
        weight: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        self.degrees(py, u, Direction::Both, self.weight_flag(weight)?)
    }

    /// Number of relationships entering ``v`` (with ``weight=True``: ``(count, summed weight)``).
    #[pyo3(signature = (v, weight=None))]
    fn in_degree<'py>(
        &self,
        py: Python<'py>,
        v: &Bound<'py, PyAny>,
        weight: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        self.degrees(py, v, Direction::In, self.weight_flag(weight)?)
    }

    /// Number of relationships leaving ``u`` (with ``weight=True``: ``(count, summed weight)``).
    #[pyo3(signature = (u, weight=None))]
    fn out_degree<'py>(
        &self,
        py: Python<'py>,
        u: &Bound<'py, PyAny>,
        weight: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        self.degrees(py, u, Direction::Out, self.weight_flag(weight)?)
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
                let ext = view.ext(n);
                if ext != NO_ID {
                    out.push(ext);
                }
                ControlFlow::Continue(())
            });
            out
        });
        Ok(PyArray1::from_vec(py, ids))
    }

    /// Number of the view's nodes: those of its label with an integer key (as ``nodes()`` lists them).
    fn number_of_nodes(&self, py: Python<'_>) -> PyResult<u64> {
        let view = self.view(py, 0)?;
        let Some(label) = view.label else { return Ok(0) };
        Ok(py.detach(|| {
            let mut n = 0;
            let _ = view.snap.visit_label::<()>(label, |a| {
                n += u64::from(view.ext(a) != NO_ID);
                ControlFlow::Continue(())
            });
            n
        }))
    }

    /// Number of relationships out of the view's nodes (of the view's type when it has one): the sum of their
    /// out-degrees, as NetworkX counts edges. Relationships of other nodes (another label, or no integer key) are
    /// not the view's.
    fn number_of_edges(&self, py: Python<'_>) -> PyResult<u64> {
        let view = self.view(py, 0)?;
        let Some(label) = view.label else { return Ok(0) };
        let filter = view.filter();
        Ok(py.detach(|| {
            let mut n = 0;
            let _ = view.snap.visit_label::<()>(label, |a| {
                if view.ext(a) != NO_ID {
                    n += view.snap.degree(a, Direction::Out, filter);
                }
                ControlFlow::Continue(())
            });
            n
        }))
    }

    /// Creates or updates edges ``src[i] -> dst[i]`` of the view's type (``EDGE`` when the view has none),
    /// merging on (source, type, target): an existing relationship gets the new weight (a NaN weight sets none,
    /// as ``import_edges`` reads it), a missing one is created,
    /// and so are missing nodes (with the view's label and key). All in one transaction, which runs again when
    /// its commit meets a write conflict (as :meth:`Database.execute` does). ``src``, ``dst`` and ``weight`` are
    /// arrays of one length, or single values standing for every row. Returns
    /// ``{"created", "updated", "nodes_created"}``.
    #[pyo3(signature = (src, dst, weight=None))]
    fn upsert_edges<'py>(
        &self,
        py: Python<'py>,
        src: &Bound<'py, PyAny>,
        dst: &Bound<'py, PyAny>,
        weight: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let (s, d) = (args::ids(src, "src")?, args::ids(dst, "dst")?);
        let w = weight.filter(|w| !w.is_none()).map(|w| args::weights(w, "weight")).transpose()?;
        let lengths = [("src", s.len()), ("dst", d.len()), ("weight", w.as_ref().and_then(|w| w.len()))];
        let n = args::common_len(&lengths)?.unwrap_or(1);
        let (s, d) = (s.rows(n)?, d.rows(n)?);
        let w = w.as_ref().map(|w| w.rows(n)).transpose()?;
        let (s, d) = (&*s, &*d);
        if s.contains(&NO_ID) || d.contains(&NO_ID) {
            return Err(errors::argument(format!(
                "id {NO_ID} is reserved: a graph view reports it (as plexus.NO_ID) for neighbours without an id"
            )));
        }
        let w = w.as_deref();
        let db = self.db.get().handle()?;
        let names =
            (self.label.as_str(), self.key.as_str(), self.rel_type.as_deref().unwrap_or("EDGE"), self.weight.as_str());
        let index = self.index.read().clone();
        let interrupt = db.own_interrupt();
        let out = py.detach(|| {
            rerun_on_conflict(&db, &interrupt, || {
                crate::bulk::upsert(&db, s, d, w, names, index.as_deref(), Some(&interrupt))
            })
        });
        let out = crate::database::committed_unless_raised(
            py,
            out,
            c"upsert_edges had committed when it was interrupted: the change stands",
        )?;
        self.adopt(index, out.start, out.version, &out.nodes);
        let dict = PyDict::new(py);
        dict.set_item("created", out.counts.created)?;
        dict.set_item("updated", out.counts.updated)?;
        dict.set_item("nodes_created", out.nodes.len())?;
        Ok(dict)
    }

    /// Removes every relationship ``src[i] -> dst[i]`` of the view's type (``EDGE`` when it has none), in one
    /// transaction; returns how many were removed. Nodes stay.
    fn remove_edges(&self, py: Python<'_>, src: &Bound<'_, PyAny>, dst: &Bound<'_, PyAny>) -> PyResult<u64> {
        let (s, d) = (args::ids(src, "src")?, args::ids(dst, "dst")?);
        let n = args::common_len(&[("src", s.len()), ("dst", d.len())])?.unwrap_or(1);
        let (s, d) = (s.rows(n)?, d.rows(n)?);
        let (s, d) = (&*s, &*d);
        let db = self.db.get().handle()?;
        let names =
            (self.label.as_str(), self.key.as_str(), self.rel_type.as_deref().unwrap_or("EDGE"), self.weight.as_str());
        let index = self.index.read().clone();
        let interrupt = db.own_interrupt();
        let out = py.detach(|| {
            rerun_on_conflict(&db, &interrupt, || {
                crate::bulk::remove(&db, s, d, names, index.as_deref(), Some(&interrupt))
            })
        });
        let out = crate::database::committed_unless_raised(
            py,
            out,
            c"remove_edges had committed when it was interrupted: the change stands",
        )?;
        self.adopt(index, out.start, out.version, &[]);
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

impl Graph {
    /// `weight=` of the degree methods: a bool. NetworkX users write the property's name there, which means
    /// something else (NetworkX then answers one weighted number): say what this view takes instead of a bare
    /// type error.
    fn weight_flag(&self, weight: Option<&Bound<'_, PyAny>>) -> PyResult<bool> {
        let Some(weight) = weight.filter(|w| !w.is_none()) else { return Ok(false) };
        if let Ok(flag) = weight.cast::<pyo3::types::PyBool>() {
            return Ok(flag.is_true());
        }
        Err(crate::errors::argument(format!(
            "weight takes True or False here, not {}: with True the answer is (count, summed weight), the weight \
             being the view's property '{}' (chosen when the view was made)",
            weight.repr()?,
            self.weight
        )))
    }
}

/// Runs a batch write of the view again when its commit meets a write conflict, as `Database.execute` runs a
/// statement again: its input is fixed and nothing of it was visible, so a rerun on the newest state is what
/// waiting for a lock would give (reruns take the database's turn; see `plexus::cypher::ConflictReruns`).
fn rerun_on_conflict<T>(
    db: &plexus::Database,
    interrupt: &plexus::cypher::Interrupt,
    write: impl FnMut() -> Result<T, crate::errors::Failure>,
) -> Result<T, crate::errors::Failure> {
    let conflict = |e: &crate::errors::Failure| matches!(e, crate::errors::Failure::Storage(s) if s.is_retryable());
    db.engine().rerun_on_conflict(true, || interrupt.check().is_err(), conflict, write)
}
