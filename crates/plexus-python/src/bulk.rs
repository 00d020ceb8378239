//! Writes from arrays and files: `Database.import_edges` (NumPy and friends), `Database.import_csv` (the
//! `plexus-import` engine) and the graph view's `upsert_edges` / `remove_edges`.
//!
//! Vertices follow `plexus import --edges`: label `Node`, integer (or string) unique key `id`, relationships of
//! one type with an optional float `weight`. Into an empty database edges are built in one pass by storage's bulk
//! builder and installed at once (`Store::load_bulk`, checkpointed on disk); otherwise they go through one write
//! transaction. Everything here runs without the GIL, on slices borrowed from the caller's arrays.

use std::borrow::Cow;
use std::path::{Path, PathBuf};

use numpy::PyUntypedArrayMethods;
use plexus::value::Value;
use plexus::{EdgeUpsert, Error as StorageError, LabelId, NodeId, PropKeyId, UpsertCounts, WriteTxn};
use plexus_import::edgelist::{self, Format, IdType, VertexIds};
use plexus_import::import::{read_input, ImportError};
use plexus_import::load::{GraphImport, Mode};
use plexus_import::nodes_rels::{CsvOptions, NodeFiles, RelFiles};
use plexus_import::progress::Progress;
use plexus_storage::bulk::{build_edge_list, EdgeListGraph};
use plexus_storage::fxhash::FxHashMap;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString, PyTuple};

use crate::args;
use crate::errors::{self, Failure};
use crate::idindex::IdIndex;

/// Label, key, relationship type and weight property names.
pub type Names<'a> = (&'a str, &'a str, &'a str, &'a str);

/// What an edge load did.
#[derive(Default)]
pub struct Loaded {
    pub nodes: u64,
    pub relationships: u64,
    pub bulk: bool,
}

/// Vertices as dense numbers: `vertices[i]` is the key of vertex `i`; edges as pairs of vertex numbers.
struct Numbered {
    vertices: Vec<Value>,
    src: Vec<u32>,
    dst: Vec<u32>,
}

fn too_many() -> Failure {
    Failure::Argument("more than 4,294,967,294 distinct vertices in one load".into())
}

/// Refuses the smallest id when it is the one the graph view answers "no such node" with: a vertex of that id
/// could never be found.
fn refuse_reserved(min: i64) -> Result<(), Failure> {
    if min == crate::idindex::NO_ID {
        return Err(Failure::Argument(format!(
            "vertex id {} is reserved (it stands for no node)",
            crate::idindex::NO_ID
        )));
    }
    Ok(())
}

/// Whether ids in `min..=max` over `edges` edges are numbered through a flat table, in ascending order.
fn dense(min: i64, max: i64, edges: usize) -> bool {
    let span = max as i128 - min as i128 + 1;
    span <= 4 * edges as i128 + 4096
}

/// Numbers integer ids: in ascending order through a flat table when they are dense, else in order of first
/// appearance through a hash map.
fn number_ints(src: &[i64], dst: &[i64]) -> Result<Numbered, Failure> {
    // The two columns are scanned and mapped on two threads.
    let bounds = |xs: &[i64]| xs.iter().fold((i64::MAX, i64::MIN), |(lo, hi), &x| (lo.min(x), hi.max(x)));
    let ((src_lo, src_hi), (dst_lo, dst_hi)) = std::thread::scope(|scope| {
        let d = scope.spawn(|| bounds(dst));
        (bounds(src), d.join().expect("bounds thread"))
    });
    let (min, max) = (src_lo.min(dst_lo), src_hi.max(dst_hi));
    if min > max {
        return Ok(Numbered { vertices: Vec::new(), src: Vec::new(), dst: Vec::new() });
    }
    refuse_reserved(min)?;
    if dense(min, max, src.len()) {
        let span = max as i128 - min as i128 + 1;
        let mut table = vec![u32::MAX; span as usize];
        for &x in src.iter().chain(dst) {
            table[(x - min) as usize] = 0;
        }
        let mut vertices = Vec::new();
        for (i, slot) in table.iter_mut().enumerate() {
            if *slot == 0 {
                *slot = u32::try_from(vertices.len()).map_err(|_| too_many())?;
                vertices.push(Value::Int(min + i as i64));
            }
        }
        let table = &table;
        let map = move |xs: &[i64]| -> Vec<u32> { xs.iter().map(|&x| table[(x - min) as usize]).collect() };
        let (src, dst) = std::thread::scope(|scope| {
            let d = scope.spawn(move || map(dst));
            (map(src), d.join().expect("numbering thread"))
        });
        return Ok(Numbered { vertices, src, dst });
    }
    let mut ids: FxHashMap<i64, u32> = FxHashMap::default();
    let mut vertices = Vec::new();
    let mut map = |xs: &[i64]| -> Result<Vec<u32>, Failure> {
        xs.iter()
            .map(|&x| {
                if let Some(&n) = ids.get(&x) {
                    return Ok(n);
                }
                let n = u32::try_from(vertices.len()).map_err(|_| too_many())?;
                vertices.push(Value::Int(x));
                ids.insert(x, n);
                Ok(n)
            })
            .collect()
    };
    let (s, d) = (map(src)?, map(dst)?);
    Ok(Numbered { vertices, src: s, dst: d })
}

/// The parser's numbering of one file's integer ids (`ids[v]` is vertex `v`'s id, ascending) turned into
/// [`number_ints`]'s, rewriting the columns in place only where the two differ: the same vertices in the same
/// order, without a column of 64-bit ids per edge end to build, scan and map (each a fresh half-gigabyte of
/// pages for the patents list).
fn renumber_ints(ids: Vec<i64>, mut src: Vec<u32>, mut dst: Vec<u32>) -> Result<Numbered, Failure> {
    debug_assert!(ids.is_sorted(), "the parser numbers integer ids in ascending order");
    let (Some(&min), Some(&max)) = (ids.first(), ids.last()) else {
        return Ok(Numbered { vertices: Vec::new(), src: Vec::new(), dst: Vec::new() });
    };
    refuse_reserved(min)?;
    u32::try_from(ids.len()).map_err(|_| too_many())?;
    if dense(min, max, src.len()) {
        // Both number dense ids in ascending order.
        let vertices = ids.into_iter().map(Value::Int).collect();
        return Ok(Numbered { vertices, src, dst });
    }
    // Sparse ids: `number_ints` numbers them in order of first appearance, every source before every target.
    let mut rank = vec![u32::MAX; ids.len()];
    let mut vertices = Vec::with_capacity(ids.len());
    for &v in src.iter().chain(&dst) {
        if rank[v as usize] == u32::MAX {
            rank[v as usize] = vertices.len() as u32;
            vertices.push(Value::Int(ids[v as usize]));
        }
    }
    let rank = &rank;
    let renumber = move |column: &mut Vec<u32>| column.iter_mut().for_each(|v| *v = rank[*v as usize]);
    std::thread::scope(|scope| {
        scope.spawn(|| renumber(&mut dst));
        renumber(&mut src);
    });
    Ok(Numbered { vertices, src, dst })
}

/// Declares the vertices' unique key, if it is not yet, in a transaction of its own before a load: declaring it
/// is a schema change, which conflicts with every commit made while its transaction runs, so in the load's
/// transaction any concurrent writer made the load fail however often it was retried.
fn declare_key_alone(db: &plexus::Database, names: Names) -> Result<(), Failure> {
    for attempt in 0.. {
        let mut tx = db.write();
        let (label, key) = (tx.label(names.0), tx.prop_key(names.1));
        ensure_key(&mut tx, label, key, names)?;
        match tx.commit() {
            Err(StorageError::Conflict(_)) if attempt < 100 => continue,
            other => {
                other?;
                break;
            }
        }
    }
    Ok(())
}

fn ensure_key(tx: &mut WriteTxn, label: LabelId, key: PropKeyId, names: Names) -> Result<(), Failure> {
    if tx.has_unique_key(label, key) {
        return Ok(());
    }
    match tx.unique_key(label) {
        Some(_) => Err(Failure::Argument(format!(
            "label {0} already has a unique key other than {1}; declare {1} unique too \
             (CREATE CONSTRAINT FOR (n:{0}) REQUIRE n.{1} IS UNIQUE) to address vertices by it",
            names.0, names.1
        ))),
        None => tx.declare_unique_key(label, key).map_err(Failure::Storage),
    }
}

/// Loads numbered edges: in one bulk pass into an empty database, else in one transaction. Weights the caller
/// owns (parsed from a file) are taken as they are; borrowed ones (a caller's array) are copied only for the bulk
/// pass, which keeps them in the state.
fn load(
    db: &plexus::Database,
    g: Numbered,
    weight: Option<Cow<'_, [f64]>>,
    names: Names,
    interrupt: Option<&plexus::cypher::Interrupt>,
) -> Result<Loaded, Failure> {
    let empty = {
        let r = db.read();
        r.node_count() == 0 && r.rel_count() == 0
    };
    // A NaN weight is a missing one (an edge file without weights among weighted ones, a pandas gap): the
    // bulk build gives every relationship the weight column, so such loads take the transactional path, which
    // leaves those relationships without the property instead of inventing `weight: NaN`.
    let gaps = weight.as_deref().is_some_and(|w| w.iter().any(|x| x.is_nan()));
    let (g, weight) = if empty && !gaps {
        match load_bulk(db, g, weight.map(Cow::into_owned), names, interrupt)? {
            Bulk::Loaded(loaded) => return Ok(loaded),
            Bulk::Refused(g, weight) => (g, weight.map(Cow::Owned)),
        }
    } else {
        (g, weight)
    };
    load_transaction(db, &g, weight.as_deref(), names, interrupt)
}

/// What a bulk load did: loaded, or refused because the database is no longer empty (the edges handed back for
/// the transactional path).
enum Bulk {
    Loaded(Loaded),
    Refused(Numbered, Option<Vec<f64>>),
}

fn load_bulk(
    db: &plexus::Database,
    g: Numbered,
    weight: Option<Vec<f64>>,
    names: Names,
    interrupt: Option<&plexus::cypher::Interrupt>,
) -> Result<Bulk, Failure> {
    let store = db.store();
    let catalog = store.catalog();
    let (label, key, ty) = (catalog.label(names.0), catalog.prop_key(names.1), catalog.rel_type(names.2));
    let wkey = catalog.prop_key(names.3);
    let (nodes, relationships) = (g.vertices.len() as u64, g.src.len() as u64);
    // The columns move in and, if the load is refused, back out: the build only reads them.
    let graph =
        EdgeListGraph { label, key, keys: g.vertices, ty, src: g.src, dst: g.dst, weight: weight.map(|w| (wkey, w)) };
    // Ctrl-C during the build (nearly all of a load's time) stops it before anything is installed.
    let stopped = |error| Failure::Query { error, query: "import_edges".to_string() };
    let built = build_edge_list(0, &graph);
    if let Some(interrupt) = interrupt {
        interrupt.check().map_err(stopped)?;
    }
    match built.and_then(|state| store.load_bulk(state)) {
        Ok(_) => Ok(Bulk::Loaded(Loaded { nodes, relationships, bulk: true })),
        // Something was written meanwhile, or a write transaction is open: take the transactional path.
        Err(StorageError::ConstraintViolation(_) | StorageError::UniqueKeyTaken { .. } | StorageError::Conflict(_)) => {
            let EdgeListGraph { keys, src, dst, weight, .. } = graph;
            Ok(Bulk::Refused(Numbered { vertices: keys, src, dst }, weight.map(|(_, w)| w)))
        }
        Err(e) => Err(e.into()),
    }
}

fn load_transaction(
    db: &plexus::Database,
    g: &Numbered,
    weight: Option<&[f64]>,
    names: Names,
    interrupt: Option<&plexus::cypher::Interrupt>,
) -> Result<Loaded, Failure> {
    // Ctrl-C stops the load before it commits (the transaction is dropped, nothing stays), instead of being
    // raised once the whole load has committed, which made running it again add every relationship twice.
    let check = |i: usize| -> Result<(), Failure> {
        match interrupt {
            Some(interrupt) if i % 65_536 == 65_535 => {
                interrupt.check().map_err(|error| Failure::Query { error, query: "import_edges".to_string() })
            }
            _ => Ok(()),
        }
    };
    declare_key_alone(db, names)?;
    let mut tx = db.write();
    let (label, key, ty, wkey) = (tx.label(names.0), tx.prop_key(names.1), tx.rel_type(names.2), tx.prop_key(names.3));
    ensure_key(&mut tx, label, key, names)?;
    let mut loaded = Loaded::default();
    let mut ids = Vec::with_capacity(g.vertices.len());
    for (i, v) in g.vertices.iter().enumerate() {
        check(i)?;
        let id = match tx.node_by_unique(label, key, v) {
            Some(id) => id,
            None => {
                loaded.nodes += 1;
                tx.create_node(&[label], vec![(key, v.clone())])?
            }
        };
        ids.push(id);
    }
    for i in 0..g.src.len() {
        check(i)?;
        let props = match weight {
            Some(w) if !w[i].is_nan() => vec![(wkey, Value::Float(w[i]))],
            _ => Vec::new(),
        };
        tx.create_rel(ids[g.src[i] as usize], ty, ids[g.dst[i] as usize], props)?;
    }
    loaded.relationships = g.src.len() as u64;
    tx.commit()?;
    Ok(loaded)
}

fn loaded_dict<'py>(py: Python<'py>, l: &Loaded) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("nodes_created", l.nodes)?;
    d.set_item("relationships_created", l.relationships)?;
    d.set_item("bulk", l.bulk)?;
    Ok(d)
}

#[allow(clippy::too_many_arguments)]
pub fn import_edges<'py>(
    py: Python<'py>,
    db: &plexus::Database,
    src: &Bound<'py, PyAny>,
    dst: &Bound<'py, PyAny>,
    weight: Option<&Bound<'py, PyAny>>,
    rel_type: &str,
    label: &str,
    key: &str,
    interrupt: Option<&plexus::cypher::Interrupt>,
) -> PyResult<Bound<'py, PyDict>> {
    args::names(&[("type", Some(rel_type)), ("label", Some(label)), ("key", Some(key))])?;
    let (s, d) = (args::id_array(src, "src")?, args::id_array(dst, "dst")?);
    let w = weight.filter(|w| !w.is_none()).map(|w| args::float_array(w, "weight")).transpose()?;
    let mut lengths = vec![("src", s.len()), ("dst", d.len())];
    if let Some(w) = &w {
        lengths.push(("weight", w.len()));
    }
    args::same_length(&lengths)?;
    let (s, d) = (s.as_slice()?, d.as_slice()?);
    let w = w.as_ref().map(|w| w.as_slice()).transpose()?;
    let names = (label, key, rel_type, "weight");
    let loaded = py.detach(|| load(db, number_ints(s, d)?, w.map(Cow::Borrowed), names, interrupt));
    let warning = c"import_edges had committed when it was interrupted: the edges are loaded";
    loaded_dict(py, &crate::database::committed_unless_raised(py, loaded, warning)?)
}

/// Options of `Database.import_csv`.
pub struct CsvSpec<'a> {
    pub delimiter: Option<&'a str>,
    pub array_delimiter: &'a str,
    pub id_type: &'a str,
    pub skip_bad_lines: usize,
    pub batch_size: usize,
    pub rel_type: &'a str,
    pub label: &'a str,
    pub undirected: bool,
}

fn paths(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<Vec<PathBuf>> {
    if obj.is_instance_of::<PyString>() || obj.hasattr("__fspath__")? {
        return Ok(vec![obj.extract()?]);
    }
    if obj.is_instance_of::<PyList>() || obj.is_instance_of::<PyTuple>() {
        return obj.try_iter()?.map(|p| p?.extract::<PathBuf>()).collect();
    }
    Err(errors::argument(format!("{what}: expected a path or a list of paths, got {}", obj.get_type().name()?)))
}

/// `{name: path or paths}` as pairs, or a bare path / list of paths with no name.
fn named_paths(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<Vec<(Option<String>, Vec<PathBuf>)>> {
    if let Ok(d) = obj.cast::<PyDict>() {
        return d.iter().map(|(k, v)| Ok((Some(k.extract::<String>()?), paths(&v, what)?))).collect();
    }
    Ok(paths(obj, what)?.into_iter().map(|p| (None, vec![p])).collect())
}

fn one_byte(s: &str, what: &str) -> Result<u8, Failure> {
    match s.as_bytes() {
        [b] => Ok(*b),
        _ if s == "\\t" || s == "tab" => Ok(b'\t'),
        _ => Err(Failure::Argument(format!("{what} must be one character, got {s:?}"))),
    }
}

/// Reads and parses edge-list files into one numbered edge list (vertices shared across files by id).
/// The edge files parsed into one numbered graph with its weights, and how many bad lines were skipped.
fn parse_edge_files(files: &[PathBuf], spec: &CsvSpec) -> Result<(Numbered, Option<Vec<f64>>, usize), Failure> {
    let delimiter = spec.delimiter.map(edgelist::Delimiter::parse).transpose().map_err(Failure::Argument)?;
    let format = Format { delimiter, header: None, id_type: None };
    let (g, weights, skipped) = match files {
        [path] => parse_one_file(path, &format, spec)?,
        _ => parse_several_files(files, &format, spec)?,
    };
    let (g, weights) = if spec.undirected { both_ways(g, weights) } else { (g, weights) };
    Ok((g, weights, skipped))
}

/// One edge file keeps the parser's columns: integer ids renumbered in place where `number_ints` numbers them
/// otherwise ([`renumber_ints`]); string ids as they are, since the parser numbers them as several files are
/// (by first appearance, each edge's source before its target).
fn parse_one_file(
    path: &Path,
    format: &Format,
    spec: &CsvSpec,
) -> Result<(Numbered, Option<Vec<f64>>, usize), Failure> {
    let bytes = read_input(path)?;
    let list = edgelist::parse(&bytes, format, spec.skip_bad_lines)
        .map_err(|error| ImportError::Parse { path: path.to_path_buf(), error })?;
    drop(bytes);
    match list.vertices {
        VertexIds::Integer(ids) => Ok((renumber_ints(ids, list.src, list.dst)?, list.weight, list.bad_lines.len())),
        VertexIds::String(names) => {
            let vertices = names.iter().map(|name| Value::from(&**name)).collect();
            Ok((Numbered { vertices, src: list.src, dst: list.dst }, list.weight, list.bad_lines.len()))
        }
    }
}

fn parse_several_files(
    files: &[PathBuf],
    format: &Format,
    spec: &CsvSpec,
) -> Result<(Numbered, Option<Vec<f64>>, usize), Failure> {
    let mut ints: Option<bool> = None;
    let (mut int_src, mut int_dst) = (Vec::new(), Vec::new());
    let mut names: FxHashMap<Box<str>, u32> = FxHashMap::default();
    let mut g = Numbered { vertices: Vec::new(), src: Vec::new(), dst: Vec::new() };
    let mut weights: Vec<f64> = Vec::new();
    let mut all_weighted = true;
    let mut skipped = 0;
    for path in files {
        let bytes = read_input(path)?;
        let list = edgelist::parse(&bytes, format, spec.skip_bad_lines.saturating_sub(skipped))
            .map_err(|error| ImportError::Parse { path: path.clone(), error })?;
        skipped += list.bad_lines.len();
        let is_int = matches!(list.vertices, VertexIds::Integer(_));
        if ints.is_some_and(|k| k != is_int) {
            return Err(Failure::Argument("some edge files have integer vertex ids and others string ids".into()));
        }
        ints = Some(is_int);
        match &list.weight {
            Some(w) => weights.extend_from_slice(w),
            None => {
                all_weighted = false;
                weights.extend(std::iter::repeat_n(f64::NAN, list.src.len()));
            }
        }
        match &list.vertices {
            VertexIds::Integer(ids) => {
                int_src.extend(list.src.iter().map(|&v| ids[v as usize]));
                int_dst.extend(list.dst.iter().map(|&v| ids[v as usize]));
            }
            VertexIds::String(ids) => {
                let mut renumber = |v: u32| -> Result<u32, Failure> {
                    let name = &ids[v as usize];
                    if let Some(&n) = names.get(name) {
                        return Ok(n);
                    }
                    let n = u32::try_from(g.vertices.len()).map_err(|_| too_many())?;
                    g.vertices.push(Value::from(&**name));
                    names.insert(name.clone(), n);
                    Ok(n)
                };
                for i in 0..list.src.len() {
                    g.src.push(renumber(list.src[i])?);
                    g.dst.push(renumber(list.dst[i])?);
                }
            }
        }
    }
    if ints == Some(true) {
        g = number_ints(&int_src, &int_dst)?;
    }
    let any_weighted = weights.iter().any(|w| !w.is_nan());
    let weights = (all_weighted || any_weighted).then_some(weights);
    Ok((g, weights, skipped))
}

/// An undirected edge list as relationships both ways: each edge but a self-loop gets its reverse, with the same
/// weight.
fn both_ways(mut g: Numbered, mut weights: Option<Vec<f64>>) -> (Numbered, Option<Vec<f64>>) {
    let n = g.src.len();
    for i in 0..n {
        let (s, d) = (g.src[i], g.dst[i]);
        if s != d {
            g.src.push(d);
            g.dst.push(s);
            if let Some(w) = weights.as_mut() {
                w.push(w[i]);
            }
        }
    }
    (g, weights)
}

pub fn import_csv<'py>(
    py: Python<'py>,
    db: &plexus::Database,
    edges: Option<&Bound<'py, PyAny>>,
    nodes: Option<&Bound<'py, PyAny>>,
    relationships: Option<&Bound<'py, PyAny>>,
    spec: &CsvSpec,
) -> PyResult<Bound<'py, PyDict>> {
    let edge_files = edges.filter(|e| !e.is_none()).map(|e| paths(e, "edges")).transpose()?.unwrap_or_default();
    let node_files: Vec<NodeFiles> = match nodes.filter(|n| !n.is_none()) {
        None => Vec::new(),
        Some(n) => named_paths(n, "nodes")?
            .into_iter()
            .map(|(labels, files)| NodeFiles {
                files,
                labels: labels
                    .map(|l| l.split(':').filter(|s| !s.is_empty()).map(String::from).collect())
                    .unwrap_or_default(),
                ..NodeFiles::default()
            })
            .collect(),
    };
    let rel_files: Vec<RelFiles> = match relationships.filter(|r| !r.is_none()) {
        None => Vec::new(),
        Some(r) => named_paths(r, "relationships")?
            .into_iter()
            .map(|(rel_type, files)| RelFiles { files, rel_type, ..RelFiles::default() })
            .collect(),
    };
    if edge_files.is_empty() && node_files.is_empty() && rel_files.is_empty() {
        return Err(errors::argument("import_csv needs edges, nodes or relationships"));
    }
    let id_type = match spec.id_type {
        "string" => IdType::String,
        "integer" => IdType::Integer,
        other => return Err(errors::argument(format!("unknown id_type {other:?} (expected 'string' or 'integer')"))),
    };
    let csv = CsvOptions {
        delimiter: one_byte(spec.delimiter.unwrap_or(","), "delimiter")?,
        array_delimiter: one_byte(spec.array_delimiter, "array_delimiter")?,
        id_type,
        skip_bad_lines: spec.skip_bad_lines,
        ..CsvOptions::default()
    };
    let graph = GraphImport {
        nodes: node_files,
        relationships: rel_files,
        csv,
        mode: Mode::Incremental,
        batch_size: spec.batch_size.max(1),
        ..GraphImport::default()
    };
    let result = py.detach(|| -> Result<_, Failure> {
        let mut out = (Loaded::default(), 0u64, Vec::new(), 0usize);
        if !graph.nodes.is_empty() || !graph.relationships.is_empty() {
            let summary = plexus_import::incremental::import_into(db.store(), &graph, &Progress::new())?;
            out.0.nodes += summary.nodes;
            out.0.relationships += summary.relationships;
            out.1 = summary.matched;
            out.2 = summary.notes;
            out.3 += summary.bad_lines.len();
        }
        if !edge_files.is_empty() {
            let (g, w, skipped) = parse_edge_files(&edge_files, spec)?;
            out.3 += skipped;
            let l = load(db, g, w.map(Cow::Owned), (spec.label, "id", spec.rel_type, "weight"), None)?;
            out.0.nodes += l.nodes;
            out.0.relationships += l.relationships;
            out.0.bulk = l.bulk;
        }
        Ok(out)
    })?;
    let d = loaded_dict(py, &result.0)?;
    d.set_item("nodes_matched", result.1)?;
    d.set_item("notes", result.2)?;
    d.set_item("bad_lines_skipped", result.3)?;
    Ok(d)
}

/// What `upsert` did, and the versions the graph view needs to keep its id tables current.
pub struct Upserted {
    pub counts: UpsertCounts,
    pub nodes: Vec<(i64, NodeId)>,
    pub start: u64,
    pub version: u64,
}

/// The graph view's id table when it describes the snapshot `tx` starts from and the label's unique key is the
/// view's: its answers are then exactly the key lookups', at the cost of one table read instead of a hashed
/// probe of the key map (two cache misses and a SipHash per edge end).
fn current_index<'a>(tx: &WriteTxn, index: Option<&'a IdIndex>, label: LabelId, key: PropKeyId) -> Option<&'a IdIndex> {
    index.filter(|i| i.version == tx.start_version() && tx.has_unique_key(label, key))
}

/// The node with external id `ext`: from the id table when it is current (it then answers as the key map did at
/// the start of `tx`; callers remember the nodes they create), else from the key map.
fn node_by_ext(tx: &WriteTxn, index: Option<&IdIndex>, label: LabelId, key: PropKeyId, ext: i64) -> Option<NodeId> {
    match index {
        Some(index) => index.node(ext),
        None => crate::idindex::node_keyed(tx, label, key, ext),
    }
}

/// The graph view's writes on a read-only database fail as a write through Cypher does, before anything runs:
/// a batch of edges that all exist already would otherwise report them updated though nothing can be written.
fn refuse_read_only(db: &plexus::Database, what: &str) -> Result<(), Failure> {
    if !db.is_read_only() {
        return Ok(());
    }
    let error = plexus::CypherError::new(
        plexus::cypher::ErrorKind::ReadOnlyDatabase,
        plexus::cypher::Phase::CompileTime,
        "",
        "this call writes, but the database was opened read-only",
    );
    Err(Failure::Query { error, query: what.to_string() })
}

/// Edges a graph view's write hands to the transaction at once: between two chunks it checks its interrupt, so
/// that closing the database or Ctrl-C stops a large call before it commits.
const WRITE_CHUNK: usize = 16_384;

/// Stops a graph view's write named `what` when `interrupt` (closing, Ctrl-C) asks; its transaction then rolls back.
fn check_interrupt(interrupt: Option<&plexus::cypher::Interrupt>, what: &str) -> Result<(), Failure> {
    match interrupt {
        Some(interrupt) => interrupt.check().map_err(|error| Failure::Query { error, query: what.to_string() }),
        None => Ok(()),
    }
}

pub fn upsert(
    db: &plexus::Database,
    src: &[i64],
    dst: &[i64],
    weight: Option<&[f64]>,
    names: Names,
    index: Option<&IdIndex>,
    interrupt: Option<&plexus::cypher::Interrupt>,
) -> Result<Upserted, Failure> {
    refuse_read_only(db, "upsert_edges")?;
    declare_key_alone(db, names)?;
    let mut tx = db.write();
    let (label, key, ty, wkey) = (tx.label(names.0), tx.prop_key(names.1), tx.rel_type(names.2), tx.prop_key(names.3));
    ensure_key(&mut tx, label, key, names)?;
    let index = current_index(&tx, index, label, key);
    let mut created = Vec::new();
    let mut known: FxHashMap<i64, NodeId> = FxHashMap::default();
    let mut node = |tx: &mut WriteTxn, ext: i64| -> Result<NodeId, Failure> {
        if let Some(&n) = known.get(&ext) {
            return Ok(n);
        }
        let n = match node_by_ext(tx, index, label, key, ext) {
            Some(n) => n,
            None => {
                let n = tx.create_node(&[label], vec![(key, Value::Int(ext))])?;
                created.push((ext, n));
                n
            }
        };
        known.insert(ext, n);
        Ok(n)
    };
    let mut counts = UpsertCounts::default();
    let mut edges: Vec<EdgeUpsert> = Vec::with_capacity(src.len().min(WRITE_CHUNK));
    for chunk in (0..src.len()).step_by(WRITE_CHUNK) {
        check_interrupt(interrupt, "upsert_edges")?;
        edges.clear();
        for i in chunk..(chunk + WRITE_CHUNK).min(src.len()) {
            let (a, b) = (node(&mut tx, src[i])?, node(&mut tx, dst[i])?);
            // NaN is no weight, as `import_edges` reads it: the edge is created or kept without setting one.
            let props = match weight {
                Some(w) if !w[i].is_nan() => vec![(wkey, Value::Float(w[i]))],
                _ => Vec::new(),
            };
            edges.push((a, ty, b, props));
        }
        let done = tx.upsert_edges(&edges)?;
        counts.created += done.created;
        counts.updated += done.updated;
    }
    check_interrupt(interrupt, "upsert_edges")?;
    let start = tx.start_version();
    let version = tx.commit()?;
    Ok(Upserted { counts, nodes: created, start, version })
}

pub struct Removed {
    pub removed: u64,
    pub start: u64,
    pub version: u64,
}

pub fn remove(
    db: &plexus::Database,
    src: &[i64],
    dst: &[i64],
    names: Names,
    index: Option<&IdIndex>,
    interrupt: Option<&plexus::cypher::Interrupt>,
) -> Result<Removed, Failure> {
    refuse_read_only(db, "remove_edges")?;
    let mut tx = db.write();
    let start = tx.start_version();
    let (Some(label), Some(ty)) =
        (tx.catalog().lookup(plexus::TokenKind::Label, names.0), tx.catalog().lookup(plexus::TokenKind::Type, names.2))
    else {
        return Ok(Removed { removed: 0, start, version: start });
    };
    let (label, ty) = (LabelId(label), plexus::TypeId(ty));
    let key = tx.catalog().lookup(plexus::TokenKind::PropKey, names.1).map(PropKeyId);
    let index = key.and_then(|key| current_index(&tx, index, label, key));
    let node = |tx: &WriteTxn, ext: i64| node_by_ext(tx, index, label, key?, ext);
    let mut removed = 0;
    for chunk in (0..src.len()).step_by(WRITE_CHUNK) {
        check_interrupt(interrupt, "remove_edges")?;
        let end = (chunk + WRITE_CHUNK).min(src.len());
        let edges: Vec<(NodeId, plexus::TypeId, NodeId)> =
            (chunk..end).filter_map(|i| Some((node(&tx, src[i])?, ty, node(&tx, dst[i])?))).collect();
        removed += tx.remove_edges(&edges)?;
    }
    check_interrupt(interrupt, "remove_edges")?;
    let version = tx.commit()?;
    Ok(Removed { removed, start, version })
}
