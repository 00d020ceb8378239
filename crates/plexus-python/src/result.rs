//! `plexus.Result`: the rows of a query, read as dicts or tuples, or converted whole to pandas, Arrow or
//! NetworkX. The rows stay in Rust until asked for, so a result read only through `.arrow()` never becomes
//! Python objects row by row.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use plexus::cypher::{NodeData, RelData, ResultValue};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyTuple};

use crate::columns;
use crate::entities::{Node, Relationship};
use crate::values::to_py;

/// The answer to a query. Iterating gives one dict per row (column name to value); see also :meth:`tuples`,
/// :meth:`df`, :meth:`arrow` and :meth:`networkx`. ``len(result)`` is the number of rows.
#[pyclass(module = "plexus", name = "Result", frozen)]
pub struct QueryResult {
    inner: Arc<plexus::QueryResult>,
    /// For a batch of a stream: the Arrow type of each column so far, shared by the stream's batches so that
    /// they all convert to one schema (see `_frames.table_from_columns`).
    arrow_types: Option<Py<PyList>>,
}

impl QueryResult {
    pub fn new(result: plexus::QueryResult) -> Self {
        QueryResult { inner: Arc::new(result), arrow_types: None }
    }

    /// A batch of a stream whose batches share `arrow_types`.
    pub fn batch(result: plexus::QueryResult, arrow_types: Py<PyList>) -> Self {
        QueryResult { inner: Arc::new(result), arrow_types: Some(arrow_types) }
    }
}

fn row_dict<'py>(py: Python<'py>, columns: &[String], row: &[ResultValue]) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    for (c, v) in columns.iter().zip(row) {
        d.set_item(c, to_py(py, v)?)?;
    }
    Ok(d)
}

fn row_tuple<'py>(py: Python<'py>, row: &[ResultValue]) -> PyResult<Bound<'py, PyTuple>> {
    PyTuple::new(py, row.iter().map(|v| to_py(py, v)).collect::<PyResult<Vec<_>>>()?)
}

fn helper<'py>(py: Python<'py>, name: &str) -> PyResult<Bound<'py, PyAny>> {
    py.import("plexus._frames")?.getattr(name)
}

/// Collects the distinct nodes and relationships anywhere in a value.
fn collect<'a>(v: &'a ResultValue, nodes: &mut BTreeMap<u64, &'a NodeData>, rels: &mut BTreeMap<u64, &'a RelData>) {
    match v {
        ResultValue::Node(n) => {
            nodes.entry(n.id).or_insert(n);
        }
        ResultValue::Rel(r) => {
            rels.entry(r.id).or_insert(r);
        }
        ResultValue::Path(p) => {
            for n in &p.nodes {
                nodes.entry(n.id).or_insert(n);
            }
            for r in &p.rels {
                rels.entry(r.id).or_insert(r);
            }
        }
        ResultValue::List(items) => items.iter().for_each(|i| collect(i, nodes, rels)),
        ResultValue::Map(m) => m.values().for_each(|i| collect(i, nodes, rels)),
        _ => {}
    }
}

#[pymethods]
impl QueryResult {
    /// The column names, in order.
    #[getter]
    fn columns(&self) -> Vec<String> {
        self.inner.columns.to_vec()
    }

    /// What the statement changed, as a dict of counters (``nodes_created``, ``properties_set``, ...).
    #[getter]
    fn stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let s = &self.inner.stats;
        let d = PyDict::new(py);
        for (k, v) in [
            ("nodes_created", s.nodes_created),
            ("nodes_deleted", s.nodes_deleted),
            ("relationships_created", s.relationships_created),
            ("relationships_deleted", s.relationships_deleted),
            ("properties_set", s.properties_set),
            ("labels_added", s.labels_added),
            ("labels_removed", s.labels_removed),
            ("indexes_added", s.indexes_added),
            ("indexes_removed", s.indexes_removed),
            ("constraints_added", s.constraints_added),
            ("constraints_removed", s.constraints_removed),
        ] {
            d.set_item(k, v)?;
        }
        Ok(d)
    }

    /// The plan text for ``EXPLAIN`` and ``PROFILE`` statements, else ``None``.
    #[getter]
    fn plan(&self) -> Option<String> {
        self.inner.plan.clone()
    }

    /// What the database told about the statement, as Neo4j's drivers give it: a list of dicts with ``code``,
    /// ``title``, ``description``, ``severity``, ``category`` and ``position`` (``offset``, ``line``, ``column``).
    #[getter]
    fn notifications<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let mut out = Vec::with_capacity(self.inner.notifications.len());
        for n in &self.inner.notifications {
            let d = PyDict::new(py);
            d.set_item("code", n.code)?;
            d.set_item("title", n.title)?;
            d.set_item("description", &*n.description)?;
            d.set_item("severity", n.severity.name())?;
            d.set_item("category", n.category)?;
            let at = PyDict::new(py);
            at.set_item("offset", n.position.offset)?;
            at.set_item("line", n.position.line)?;
            at.set_item("column", n.position.column)?;
            d.set_item("position", at)?;
            out.push(d);
        }
        PyList::new(py, out)
    }

    fn __len__(&self) -> usize {
        self.inner.rows.len()
    }

    /// Row ``i`` as a dict (negative ``i`` counts from the end).
    fn __getitem__<'py>(&self, py: Python<'py>, i: isize) -> PyResult<Bound<'py, PyDict>> {
        let n = self.inner.rows.len() as isize;
        let j = if i < 0 { i + n } else { i };
        if !(0..n).contains(&j) {
            return Err(pyo3::exceptions::PyIndexError::new_err(format!("row {i} of a result of {n} rows")));
        }
        row_dict(py, &self.inner.columns, &self.inner.rows[j as usize])
    }

    fn __iter__(&self) -> Rows {
        Rows { inner: self.inner.clone(), next: AtomicUsize::new(0) }
    }

    /// Every row as a tuple, in column order.
    fn tuples<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let rows = self.inner.rows.iter().map(|r| row_tuple(py, r)).collect::<PyResult<Vec<_>>>()?;
        PyList::new(py, rows)
    }

    /// Every row as a dict.
    fn dicts<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let rows =
            self.inner.rows.iter().map(|r| row_dict(py, &self.inner.columns, r)).collect::<PyResult<Vec<_>>>()?;
        PyList::new(py, rows)
    }

    /// The first column of the first row (``None`` for an empty result): for queries that return one value.
    fn scalar<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        match self.inner.rows.first().and_then(|r| r.first()) {
            Some(v) => to_py(py, v),
            None => Ok(py.None().into_bound(py)),
        }
    }

    /// The result as a ``pandas.DataFrame``. Integer, float and boolean columns become NumPy columns (nullable
    /// pandas arrays when they hold nulls), other columns hold Python objects as :meth:`tuples` gives them.
    fn df<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let cols = columns::export(py, &self.inner, columns::Target::Pandas)?;
        helper(py, "frame_from_columns")?.call1((self.columns(), cols))
    }

    /// The result as a ``pyarrow.Table``, built from buffers filled in Rust: integers (int64), floats (float64),
    /// booleans, strings (large_string), dates (date32), local times (time64[ns]), local and zoned datetimes
    /// (timestamp[ns], or [us] when a value is out of the nanosecond range; zoned ones in UTC) and durations
    /// (month_day_nano_interval) never become Python objects. Columns of other or mixed types are converted from
    /// Python values (nodes and relationships as dicts). The batches of a stream share one schema: a column
    /// takes the type of the first batch where it holds a value, later batches are cast to it where no value
    /// changes (a float column takes later integers that are exact as floats; datetimes are microseconds unless
    /// a value needs nanoseconds, so that a later date past 2262 fits), and a batch whose values need another
    /// type (floats in a column that began as integers, say) raises ``TypeError`` naming the column: convert it
    /// in the query (``toFloat``) or read the whole result at once.
    fn arrow<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let cols = columns::export(py, &self.inner, columns::Target::Arrow)?;
        let types = self.arrow_types.as_ref().map(|t| t.clone_ref(py));
        helper(py, "table_from_columns")?.call1((self.columns(), cols, types))
    }

    /// The nodes and relationships anywhere in the result (also inside paths, lists and maps) as a
    /// ``networkx.MultiDiGraph``: nodes keyed by id with attribute ``labels`` and their properties, edges
    /// ``(start, end, key=relationship id)`` with attribute ``type`` and their properties (a property named
    /// ``labels`` or ``type`` keeps its name, and the labels or type go under ``_labels`` or ``_type``). Ends of
    /// relationships whose nodes are not in the result appear as nodes without attributes.
    fn networkx<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let (nodes, rels) = self.entities(py)?;
        helper(py, "graph_from_entities")?.call1((nodes, rels))
    }

    /// The distinct nodes and relationships of the result, as two lists.
    fn entities<'py>(&self, py: Python<'py>) -> PyResult<(Bound<'py, PyList>, Bound<'py, PyList>)> {
        let (mut nodes, mut rels) = (BTreeMap::new(), BTreeMap::new());
        for row in &self.inner.rows {
            row.iter().for_each(|v| collect(v, &mut nodes, &mut rels));
        }
        let nodes = nodes.values().map(|n| Bound::new(py, Node::from_data(py, n)?)).collect::<PyResult<Vec<_>>>()?;
        let rels =
            rels.values().map(|r| Bound::new(py, Relationship::from_data(py, r)?)).collect::<PyResult<Vec<_>>>()?;
        Ok((PyList::new(py, nodes)?, PyList::new(py, rels)?))
    }

    fn __repr__(&self) -> String {
        format!("Result(columns={:?}, rows={})", self.inner.columns, self.inner.rows.len())
    }
}

/// Iterator over a result's rows as dicts.
#[pyclass(module = "plexus", frozen)]
pub struct Rows {
    inner: Arc<plexus::QueryResult>,
    next: AtomicUsize,
}

#[pymethods]
impl Rows {
    fn __iter__(slf: Bound<'_, Self>) -> Bound<'_, Self> {
        slf
    }

    fn __next__<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyDict>>> {
        let i = self.next.fetch_add(1, Ordering::Relaxed);
        match self.inner.rows.get(i) {
            Some(row) => row_dict(py, &self.inner.columns, row).map(Some),
            None => Ok(None),
        }
    }
}
