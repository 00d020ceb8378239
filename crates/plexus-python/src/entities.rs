//! Graph entities in results: `plexus.Node`, `plexus.Relationship` and `plexus.Path`. They are values copied out
//! of the snapshot the query read; equality and hashing go by id (and kind), as for Neo4j's drivers.

use plexus::cypher::{NodeData, PathData, RelData};
use pyo3::basic::CompareOp;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};

use crate::values::map_to_py;

/// A node: its id, labels and properties. `node["name"]` reads a property.
#[pyclass(module = "plexus", frozen)]
pub struct Node {
    /// The node's id (stable while the node exists; ids of deleted nodes are reused).
    #[pyo3(get)]
    pub id: u64,
    labels: Vec<String>,
    properties: Py<PyDict>,
}

impl Node {
    pub fn from_data(py: Python<'_>, n: &NodeData) -> PyResult<Node> {
        Ok(Node {
            id: n.id,
            labels: n.labels.iter().map(|l| l.to_string()).collect(),
            properties: map_to_py(py, &n.properties)?.unbind(),
        })
    }
}

#[pymethods]
impl Node {
    /// A node as a result holds it; for unpickling and tests (a query result makes nodes by itself).
    #[new]
    #[pyo3(signature = (id, labels, properties))]
    fn new(id: u64, labels: Vec<String>, properties: Bound<'_, PyDict>) -> Node {
        Node { id, labels, properties: properties.unbind() }
    }

    /// Pickles as its id, labels and properties (a copy: no link to the database travels with it).
    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyTuple>)> {
        let py = slf.py();
        let me = slf.get();
        let args = (me.id, me.labels.clone(), me.properties.clone_ref(py)).into_pyobject(py)?;
        Ok((slf.get_type().into_any(), args))
    }

    /// The labels, in the order the database lists them.
    #[getter]
    fn labels(&self) -> Vec<String> {
        self.labels.clone()
    }

    /// The properties as a dict.
    #[getter]
    fn properties(&self, py: Python<'_>) -> Py<PyDict> {
        self.properties.clone_ref(py)
    }

    fn __getitem__<'py>(&self, py: Python<'py>, key: &str) -> PyResult<Bound<'py, PyAny>> {
        self.properties.bind(py).as_any().get_item(key)
    }

    /// The property `key`, or `default` when the node has none.
    #[pyo3(signature = (key, default=None))]
    fn get<'py>(&self, py: Python<'py>, key: &str, default: Option<Bound<'py, PyAny>>) -> PyResult<Bound<'py, PyAny>> {
        Ok(match self.properties.bind(py).get_item(key)? {
            Some(v) => v,
            None => default.unwrap_or_else(|| py.None().into_bound(py)),
        })
    }

    fn __contains__(&self, py: Python<'_>, key: &str) -> PyResult<bool> {
        self.properties.bind(py).contains(key)
    }

    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        other.cast::<Node>().is_ok_and(|o| o.get().id == self.id)
    }

    fn __hash__(&self) -> u64 {
        self.id.wrapping_mul(0x9e37_79b9_7f4a_7c15)
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        let labels: String = self.labels.iter().map(|l| format!(":{l}")).collect();
        Ok(format!(
            "Node(id={}{}{}, {})",
            self.id,
            if labels.is_empty() { "" } else { " " },
            labels,
            self.properties.bind(py).repr()?
        ))
    }
}

/// A relationship: its id, type, start and end node ids, and properties. `rel["since"]` reads a property.
#[pyclass(module = "plexus", frozen)]
pub struct Relationship {
    #[pyo3(get)]
    pub id: u64,
    /// The relationship type.
    #[pyo3(get)]
    pub r#type: String,
    /// Id of the node it leaves.
    #[pyo3(get)]
    pub start: u64,
    /// Id of the node it enters.
    #[pyo3(get)]
    pub end: u64,
    properties: Py<PyDict>,
}

impl Relationship {
    pub fn from_data(py: Python<'_>, r: &RelData) -> PyResult<Relationship> {
        Ok(Relationship {
            id: r.id,
            r#type: r.rel_type.to_string(),
            start: r.start,
            end: r.end,
            properties: map_to_py(py, &r.properties)?.unbind(),
        })
    }
}

#[pymethods]
impl Relationship {
    /// A relationship as a result holds it; for unpickling and tests.
    #[new]
    #[pyo3(signature = (id, r#type, start, end, properties))]
    fn new(id: u64, r#type: String, start: u64, end: u64, properties: Bound<'_, PyDict>) -> Relationship {
        Relationship { id, r#type, start, end, properties: properties.unbind() }
    }

    /// Pickles as its id, type, ends and properties.
    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyTuple>)> {
        let py = slf.py();
        let me = slf.get();
        let args = (me.id, me.r#type.clone(), me.start, me.end, me.properties.clone_ref(py)).into_pyobject(py)?;
        Ok((slf.get_type().into_any(), args))
    }

    /// The properties as a dict.
    #[getter]
    fn properties(&self, py: Python<'_>) -> Py<PyDict> {
        self.properties.clone_ref(py)
    }

    fn __getitem__<'py>(&self, py: Python<'py>, key: &str) -> PyResult<Bound<'py, PyAny>> {
        self.properties.bind(py).as_any().get_item(key)
    }

    /// The property `key`, or `default` when the relationship has none.
    #[pyo3(signature = (key, default=None))]
    fn get<'py>(&self, py: Python<'py>, key: &str, default: Option<Bound<'py, PyAny>>) -> PyResult<Bound<'py, PyAny>> {
        Ok(match self.properties.bind(py).get_item(key)? {
            Some(v) => v,
            None => default.unwrap_or_else(|| py.None().into_bound(py)),
        })
    }

    fn __contains__(&self, py: Python<'_>, key: &str) -> PyResult<bool> {
        self.properties.bind(py).contains(key)
    }

    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        other.cast::<Relationship>().is_ok_and(|o| o.get().id == self.id)
    }

    fn __hash__(&self) -> u64 {
        self.id.wrapping_mul(0xbf58_476d_1ce4_e5b9) ^ 1
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        Ok(format!(
            "Relationship(id={}, ({})-[:{}]->({}), {})",
            self.id,
            self.start,
            self.r#type,
            self.end,
            self.properties.bind(py).repr()?
        ))
    }
}

/// A path: `nodes` and the `relationships` between them (`relationships[i]` joins `nodes[i]` and `nodes[i+1]`,
/// in either direction). `len(path)` is the number of relationships.
#[pyclass(module = "plexus", frozen)]
pub struct Path {
    #[pyo3(get)]
    nodes: Py<PyTuple>,
    #[pyo3(get)]
    relationships: Py<PyTuple>,
}

impl Path {
    pub fn from_data(py: Python<'_>, p: &PathData) -> PyResult<Path> {
        let nodes = p.nodes.iter().map(|n| Bound::new(py, Node::from_data(py, n)?)).collect::<PyResult<Vec<_>>>()?;
        let rels =
            p.rels.iter().map(|r| Bound::new(py, Relationship::from_data(py, r)?)).collect::<PyResult<Vec<_>>>()?;
        Ok(Path { nodes: PyTuple::new(py, nodes)?.unbind(), relationships: PyTuple::new(py, rels)?.unbind() })
    }
}

#[pymethods]
impl Path {
    /// A path of `nodes` and the `relationships` between them; for unpickling and tests.
    #[new]
    fn new(nodes: Vec<Bound<'_, Node>>, relationships: Vec<Bound<'_, Relationship>>) -> PyResult<Path> {
        if nodes.len() != relationships.len() + 1 {
            return Err(crate::errors::argument(format!(
                "a path of {} relationships joins {} nodes, not {}",
                relationships.len(),
                relationships.len() + 1,
                nodes.len()
            )));
        }
        let py = nodes[0].py();
        Ok(Path { nodes: PyTuple::new(py, nodes)?.unbind(), relationships: PyTuple::new(py, relationships)?.unbind() })
    }

    /// Pickles as its nodes and relationships.
    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyTuple>)> {
        let py = slf.py();
        let me = slf.get();
        let args = (me.nodes.clone_ref(py), me.relationships.clone_ref(py)).into_pyobject(py)?;
        Ok((slf.get_type().into_any(), args))
    }

    /// The first node.
    #[getter]
    fn start_node<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.nodes.bind(py).get_item(0)
    }

    /// The last node.
    #[getter]
    fn end_node<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let nodes = self.nodes.bind(py);
        nodes.get_item(nodes.len() - 1)
    }

    fn __len__(&self, py: Python<'_>) -> usize {
        self.relationships.bind(py).len()
    }

    fn __richcmp__(&self, other: &Bound<'_, PyAny>, op: CompareOp) -> PyResult<Py<PyAny>> {
        let py = other.py();
        let Ok(other) = other.cast::<Path>() else { return Ok(py.NotImplemented()) };
        let other = other.get();
        let same = self.nodes.bind(py).eq(other.nodes.bind(py))?
            && self.relationships.bind(py).eq(other.relationships.bind(py))?;
        Ok(match op {
            CompareOp::Eq => same.into_pyobject(py)?.to_owned().into_any().unbind(),
            CompareOp::Ne => (!same).into_pyobject(py)?.to_owned().into_any().unbind(),
            _ => py.NotImplemented(),
        })
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        Ok(format!(
            "Path(nodes={}, relationships={})",
            self.nodes.bind(py).repr()?,
            self.relationships.bind(py).repr()?
        ))
    }
}
