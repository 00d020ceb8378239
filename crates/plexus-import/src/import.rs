//! Building a new database from parsed edge lists.
//!
//! Every vertex becomes a node with one label and its external id as the unique key property; every edge a
//! relationship of one type, with a `weight` property when the input has a third column. The graph is built in
//! memory by the storage engine's bulk builder (sorted passes, no per-edge transactions) and written once, as a
//! compressed checkpoint, into a directory that appears complete or not at all.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use plexus_storage::bulk::EdgeListGraph;
use plexus_storage::edge_list_image::EdgeListImage;
use plexus_storage::fxhash::FxHashMap;
use plexus_storage::{Catalog, Value};

use crate::edgelist::{self, EdgeList, Format, VertexIds};

/// How edge-list files become a graph.
#[derive(Clone, Debug)]
pub struct EdgeImport {
    pub label: String,
    pub key: String,
    pub rel_type: String,
    /// Store each edge in both directions (a self-loop once).
    pub undirected: bool,
    pub format: Format,
    pub skip_bad_lines: usize,
}

impl Default for EdgeImport {
    fn default() -> Self {
        EdgeImport {
            label: "Node".into(),
            key: "id".into(),
            rel_type: "EDGE".into(),
            undirected: false,
            format: Format::default(),
            skip_bad_lines: 0,
        }
    }
}

/// What an import did, for the summary line and the benchmark.
#[derive(Clone, Debug, Default)]
pub struct ImportSummary {
    pub nodes: u64,
    pub relationships: u64,
    pub input_bytes: u64,
    pub bytes_on_disk: u64,
    pub bad_lines: Vec<(PathBuf, edgelist::BadLine)>,
    /// Node rows skipped because an earlier row of their id space has their id (`skip_duplicate_nodes`).
    pub duplicates: Vec<(PathBuf, edgelist::BadLine)>,
    /// Relationship rows skipped because an end's id names no node (`skip_bad_relationships`).
    pub skipped_relationships: Vec<(PathBuf, edgelist::BadLine)>,
    /// Per file, the fields past the header's last column dropped by `ignore_extra_columns`.
    pub dropped_fields: Vec<(PathBuf, u64)>,
    /// Per file, the rows with fewer fields than the header (their last columns read as absent).
    pub short_rows: Vec<(PathBuf, crate::nodes_rels::ShortRows)>,
    /// Later files of a group whose first line repeated the header, and was skipped as one.
    pub repeated_headers: Vec<PathBuf>,
    /// Incremental mode: nodes of the input that already existed (found by label and key) and were kept.
    pub matched: u64,
    /// Unique keys declared, as `Label(key)`.
    pub unique_keys: Vec<String>,
    /// Things the user should know (labels left without a unique key, and why).
    pub notes: Vec<String>,
    pub read: Duration,
    pub parse: Duration,
    pub build: Duration,
    pub write: Duration,
}

/// `1 node`, `2 nodes`: a count and its noun, singular for one.
pub fn plural(n: u64, noun: &str) -> String {
    format!("{n} {noun}{}", if n == 1 { "" } else { "s" })
}

impl ImportSummary {
    pub fn total(&self) -> Duration {
        self.read + self.parse + self.build + self.write
    }
}

/// An import failure, naming the file.
#[derive(Debug)]
pub enum ImportError {
    Io { path: PathBuf, error: std::io::Error },
    Parse { path: PathBuf, error: edgelist::ParseError },
    Target(String),
    Storage(plexus_storage::StorageError),
}

impl std::fmt::Display for ImportError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ImportError::Io { path, error } => write!(f, "{}: {error}", path.display()),
            ImportError::Parse { path, error } => write!(f, "{}: {error}", path.display()),
            ImportError::Target(m) => f.write_str(m),
            ImportError::Storage(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for ImportError {}

/// Reads a whole file, decompressing `.gz` and `.zst` by extension or by their magic bytes. `-` is standard
/// input, and a pipe (`<(zcat ...)`, `/dev/stdin`) reads like a file: nothing here seeks.
pub fn read_input(path: &Path) -> Result<Vec<u8>, ImportError> {
    let io = |error| ImportError::Io { path: path.to_path_buf(), error };
    let (mut source, size): (Box<dyn Read>, usize) = if path == Path::new("-") {
        (Box::new(std::io::stdin().lock()), 0)
    } else {
        let file = std::fs::File::open(path).map_err(io)?;
        let size = file.metadata().map(|m| m.len() as usize).unwrap_or(0);
        (Box::new(file), size)
    };
    let mut bytes = Vec::with_capacity(size);
    let name = path.to_string_lossy();
    // Compressed input is recognised by its magic bytes as well as by its extension; the bytes read to tell are
    // put back in front of the rest.
    let mut magic = [0u8; 6];
    let mut magic_len = 0;
    while magic_len < magic.len() {
        match source.read(&mut magic[magic_len..]) {
            Ok(0) => break,
            Ok(n) => magic_len += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(io(e)),
        }
    }
    let file = std::io::Cursor::new(magic[..magic_len].to_vec()).chain(source);
    let magic = &magic[..magic_len];
    let gzip = magic.starts_with(&[0x1f, 0x8b]);
    let zstd = magic.starts_with(&[0x28, 0xb5, 0x2f, 0xfd]);
    let other = if magic.starts_with(b"PK\x03\x04") {
        Some("zip")
    } else if magic.starts_with(b"BZh") {
        Some("bzip2")
    } else if magic.starts_with(&[0xfd, b'7', b'z', b'X', b'Z', 0]) {
        Some("xz")
    } else if magic.starts_with(b"7z\xbc\xaf") {
        Some("7z")
    } else {
        None
    };
    if let Some(format) = other {
        return Err(io(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("unsupported compressed format ({format}): decompress it first, or compress with gzip or zstd"),
        )));
    }
    if !magic.is_empty() && !gzip && !zstd && (name.ends_with(".gz") || name.ends_with(".zst")) {
        // Decoding would fail with "unexpected end of file" or the like, which does not say what is wrong.
        let format = if name.ends_with(".gz") { "gzip" } else { "zstd" };
        return Err(io(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("the name says {format} but the file does not start as a {format} stream does"),
        )));
    }
    if gzip {
        flate2::read::MultiGzDecoder::new(std::io::BufReader::new(file)).read_to_end(&mut bytes).map_err(io)?;
    } else if zstd {
        zstd::stream::read::Decoder::new(file).and_then(|mut d| d.read_to_end(&mut bytes)).map_err(io)?;
    } else {
        let mut file = file;
        file.read_to_end(&mut bytes).map_err(io)?;
    }
    // Text in UTF-16 (spreadsheets on Windows save "Unicode text" so) would read as fields full of NUL bytes.
    let utf16 = bytes.starts_with(&[0xff, 0xfe]) || bytes.starts_with(&[0xfe, 0xff]) || {
        let head = &bytes[..bytes.len().min(64)];
        head.len() >= 4 && head.iter().skip(1).step_by(2).all(|&b| b == 0)
    };
    if utf16 {
        return Err(io(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            "the file is UTF-16 text: convert it to UTF-8 first (for example iconv -f UTF-16 -t UTF-8)",
        )));
    }
    // A byte-order mark (spreadsheets write one) is not part of the first field.
    if bytes.starts_with(UTF8_BOM) {
        bytes.drain(..UTF8_BOM.len());
    }
    // Lines ended by a carriage return alone would read as one long line.
    let head = &bytes[..bytes.len().min(1 << 20)];
    if head.contains(&b'\r') && !head.contains(&b'\n') {
        return Err(io(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            "lines end in a carriage return alone: convert them to \\n or \\r\\n line ends",
        )));
    }
    Ok(bytes)
}

const UTF8_BOM: &[u8] = b"\xef\xbb\xbf";

/// Refuses a target that holds anything (an empty one is filled with the new database when it is complete), after
/// removing what interrupted imports into it left.
pub(crate) fn prepare_target(dir: &Path, with_edge_lists: bool) -> Result<(), ImportError> {
    crate::publish::prepare_target(dir, with_edge_lists)
}

/// A vertex's external id, for numbering vertices across several files.
#[derive(Clone, PartialEq, Eq, Hash)]
enum VertexKey {
    Int(i64),
    Str(Box<str>),
}

/// Imports edge-list files into a new database at `dir`.
pub fn import_edge_lists(
    dir: &Path,
    files: &[PathBuf],
    options: &EdgeImport,
    mut progress: impl FnMut(&str),
) -> Result<ImportSummary, ImportError> {
    prepare_target(dir, true)?;
    let mut summary = ImportSummary::default();
    let lists = parse_edge_files(files, options, &mut summary, &mut progress)?;
    let start = Instant::now();
    let catalog = Catalog::new();
    let graph = to_edge_list_graph(&catalog, files, lists, options)?;
    summary.nodes = graph.keys.len() as u64;
    summary.relationships = graph.src.len() as u64;
    // Only written out: sorted, not built (see `EdgeListImage`).
    let image = EdgeListImage::new(graph).map_err(ImportError::Storage)?;
    summary.build = start.elapsed();
    progress(&format!(
        "numbered {} and sorted {} in {:.2?}",
        plural(summary.nodes, "node"),
        plural(summary.relationships, "relationship"),
        summary.build
    ));
    let start = Instant::now();
    summary.bytes_on_disk = crate::publish::create_edge_list(dir, &image, &catalog)?;
    drop(image);
    summary.write = start.elapsed();
    progress(&format!("wrote {} in {:.2?}", plural(summary.bytes_on_disk, "byte"), summary.write));
    Ok(summary)
}

/// Reads and parses edge-list files, adding to the summary's times and bad lines.
pub(crate) fn parse_edge_files(
    files: &[PathBuf],
    options: &EdgeImport,
    summary: &mut ImportSummary,
    progress: &mut impl FnMut(&str),
) -> Result<Vec<EdgeList>, ImportError> {
    let mut lists: Vec<EdgeList> = Vec::with_capacity(files.len());
    for path in files {
        let start = Instant::now();
        let bytes = read_input(path)?;
        summary.read += start.elapsed();
        summary.input_bytes += bytes.len() as u64;
        progress(&format!(
            "read {} ({}) in {:.2?}",
            path.display(),
            plural(bytes.len() as u64, "byte"),
            start.elapsed()
        ));
        let start = Instant::now();
        let list = edgelist::parse(&bytes, &options.format, options.skip_bad_lines)
            .map_err(|error| ImportError::Parse { path: path.clone(), error })?;
        summary.parse += start.elapsed();
        progress(&format!("parsed {} in {:.2?}", plural(list.src.len() as u64, "edge"), start.elapsed()));
        if list.header && options.format.header.is_none() {
            // Guessed, so say so: a first edge taken for a header would otherwise vanish unnoticed.
            summary.notes.push(format!(
                "{}: the first line was read as a header (--no-header reads it as an edge)",
                path.display()
            ));
        }
        summary.bad_lines.extend(list.bad_lines.iter().map(|b| (path.clone(), b.clone())));
        lists.push(list);
    }
    let skipped = summary.bad_lines.len();
    if skipped > options.skip_bad_lines {
        return Err(crate::load::past_allowance(&summary.bad_lines, options.skip_bad_lines));
    }
    Ok(lists)
}

/// The parsed edge lists as one keyed edge-list graph (several files are numbered through their external ids).
pub(crate) fn to_edge_list_graph(
    catalog: &Catalog,
    files: &[PathBuf],
    lists: Vec<EdgeList>,
    options: &EdgeImport,
) -> Result<EdgeListGraph, ImportError> {
    // Files that hold edges must agree on their columns: a weight cannot be made up for the edges of a file
    // without one, nor an id of one kind read as the other.
    let holding: Vec<(&PathBuf, &EdgeList)> = files.iter().zip(&lists).filter(|(_, l)| !l.src.is_empty()).collect();
    if let (Some(with), Some(without)) =
        (holding.iter().find(|(_, l)| l.weight.is_some()), holding.iter().find(|(_, l)| l.weight.is_none()))
    {
        return Err(ImportError::Target(format!(
            "{} has a weight column and {} does not: give every edge list the same columns (add the weights \
             to the one without, or import the two into separate databases)",
            with.0.display(),
            without.0.display()
        )));
    }
    if let (Some(ints), Some(strings)) = (
        holding.iter().find(|(_, l)| matches!(l.vertices, VertexIds::Integer(_))),
        holding.iter().find(|(_, l)| matches!(l.vertices, VertexIds::String(_))),
    ) {
        return Err(ImportError::Target(format!(
            "{} has integer vertex ids and {} string ids: pass --id-type string to read them all as strings",
            ints.0.display(),
            strings.0.display()
        )));
    }
    let label = catalog.label(&options.label);
    let key = catalog.prop_key(&options.key);
    let ty = catalog.rel_type(&options.rel_type);
    let weight_key = catalog.prop_key("weight");
    // One file keeps its own numbering; several are renumbered through their external ids.
    let (vertices, numbering): (Vec<VertexKey>, Vec<Vec<u32>>) = if lists.len() == 1 {
        let keys = match &lists[0].vertices {
            VertexIds::Integer(ids) => ids.iter().map(|&i| VertexKey::Int(i)).collect(),
            VertexIds::String(ids) => ids.iter().map(|s| VertexKey::Str(s.clone())).collect(),
        };
        (keys, vec![Vec::new()])
    } else {
        let mut global: FxHashMap<VertexKey, u32> = FxHashMap::default();
        let mut keys = Vec::new();
        let mut numbering = Vec::new();
        for list in &lists {
            let local: Vec<VertexKey> = match &list.vertices {
                VertexIds::Integer(ids) => ids.iter().map(|&i| VertexKey::Int(i)).collect(),
                VertexIds::String(ids) => ids.iter().map(|s| VertexKey::Str(s.clone())).collect(),
            };
            numbering.push(
                local
                    .into_iter()
                    .map(|k| {
                        *global.entry(k.clone()).or_insert_with(|| {
                            keys.push(k);
                            (keys.len() - 1) as u32
                        })
                    })
                    .collect(),
            );
        }
        (keys, numbering)
    };
    let keys: Vec<Value> = vertices
        .into_iter()
        .map(|k| match k {
            VertexKey::Int(v) => Value::Int(v),
            VertexKey::Str(s) => Value::String(Arc::from(&*s)),
        })
        .collect();
    let weighted = lists.iter().any(|l| l.weight.is_some());
    let single = lists.len() == 1 && !options.undirected;
    let (src, dst, weight) = if single {
        // One file, one direction: its columns are the graph's.
        let list = lists.into_iter().next().expect("one list");
        (list.src, list.dst, list.weight)
    } else {
        let total: usize = lists.iter().map(|l| l.src.len() * if options.undirected { 2 } else { 1 }).sum();
        let (mut src, mut dst) = (Vec::with_capacity(total), Vec::with_capacity(total));
        let mut weight = weighted.then(|| Vec::with_capacity(total));
        for (list, numbers) in lists.iter().zip(&numbering) {
            let map = |v: u32| if numbers.is_empty() { v } else { numbers[v as usize] };
            for i in 0..list.src.len() {
                let (s, d) = (map(list.src[i]), map(list.dst[i]));
                let w = list.weight.as_ref().map_or(f64::NAN, |w| w[i]);
                let ends: &[(u32, u32)] = if options.undirected && s != d { &[(s, d), (d, s)] } else { &[(s, d)] };
                for &(a, b) in ends {
                    src.push(a);
                    dst.push(b);
                    if let Some(weight) = &mut weight {
                        weight.push(w);
                    }
                }
            }
        }
        (src, dst, weight)
    };
    Ok(EdgeListGraph { label, key, keys, ty, src, dst, weight: weight.map(|w| (weight_key, w)) })
}

#[cfg(test)]
mod tests {
    use super::*;
    use plexus_storage::{Direction, Store, TypeFilter};

    fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        path
    }

    #[test]
    fn imports_an_edge_list_into_a_database_that_opens() {
        let tmp = tempfile::tempdir().unwrap();
        let file = write(tmp.path(), "edges.csv", "source,target,weight\n1,2,0.5\n2,3,1.5\n3,1,2\n1,2,4\n");
        let db = tmp.path().join("db");
        let summary = import_edge_lists(&db, &[file], &EdgeImport::default(), |_| {}).unwrap();
        assert_eq!((summary.nodes, summary.relationships), (3, 4));
        let (store, report) = Store::open(&db).unwrap();
        assert_eq!(report.checkpoint_version, Some(1));
        let r = store.read();
        let (node, id, weight) =
            (r.label_id("Node").unwrap(), r.prop_key_id("id").unwrap(), r.prop_key_id("weight").unwrap());
        let one = r.node_by_key(node, &Value::Int(1)).unwrap();
        let two = r.node_by_key(node, &Value::Int(2)).unwrap();
        assert_eq!(r.node_prop(one, id), Some(&Value::Int(1)));
        assert_eq!(r.rels_between(one, two, Direction::Out, TypeFilter::All).len(), 2);
        assert_eq!(r.count_and_weight(two, Direction::In, TypeFilter::All, weight), (2, 4.5));
        assert!(r.check().is_empty());
        // New commits go on top of the imported graph and survive a reopen.
        let mut tx = store.write();
        let n = tx.create_node(&[node], vec![(id, Value::Int(99))]).unwrap();
        tx.create_rel(n, r.type_id("EDGE").unwrap(), one, vec![]).unwrap();
        tx.commit().unwrap();
        drop((r, store));
        let (store, _) = Store::open(&db).unwrap();
        assert_eq!(store.read().rel_count(), 5);
    }

    #[test]
    fn several_files_share_vertices_and_undirected_doubles_edges() {
        let tmp = tempfile::tempdir().unwrap();
        let a = write(tmp.path(), "a.tsv", "alice\tbob\n");
        let b = write(tmp.path(), "b.tsv", "bob\tcarol\ncarol\tcarol\n");
        let db = tmp.path().join("db");
        let options =
            EdgeImport { undirected: true, rel_type: "KNOWS".into(), label: "Person".into(), ..Default::default() };
        let summary = import_edge_lists(&db, &[a, b], &options, |_| {}).unwrap();
        assert_eq!((summary.nodes, summary.relationships), (3, 5));
        let (store, _) = Store::open(&db).unwrap();
        let r = store.read();
        let person = r.label_id("Person").unwrap();
        let bob = r.node_by_key(person, &Value::from("bob")).unwrap();
        assert_eq!(r.degree(bob, Direction::Out, TypeFilter::All), 2);
        assert_eq!(r.degree(bob, Direction::In, TypeFilter::All), 2);
    }

    #[test]
    fn failures_leave_no_database_behind() {
        let tmp = tempfile::tempdir().unwrap();
        let file = write(tmp.path(), "bad.csv", "1,2\n2,three\n");
        let db = tmp.path().join("db");
        let options = EdgeImport {
            format: Format { id_type: Some(edgelist::IdType::Integer), ..Format::default() },
            ..Default::default()
        };
        let err = import_edge_lists(&db, std::slice::from_ref(&file), &options, |_| {}).unwrap_err();
        assert!(err.to_string().contains("bad.csv: line 2, column 3"), "{err}");
        assert!(!db.exists());
        let leftovers: Vec<_> = std::fs::read_dir(tmp.path()).unwrap().collect();
        assert_eq!(leftovers.len(), 1, "only the input file remains");
        // Skipping the bad line imports the rest.
        let options = EdgeImport { skip_bad_lines: 1, ..options };
        let summary = import_edge_lists(&db, &[file], &options, |_| {}).unwrap();
        assert_eq!((summary.relationships, summary.bad_lines.len()), (1, 1));
        // A non-empty target is refused and left alone.
        let again = write(tmp.path(), "ok.csv", "1,2\n");
        let err = import_edge_lists(&db, &[again], &EdgeImport::default(), |_| {}).unwrap_err();
        assert!(err.to_string().contains("not empty"), "{err}");
        assert!(Store::open(&db).is_ok());
    }

    #[test]
    fn compressed_inputs_are_read_by_extension() {
        use std::io::Write;
        let tmp = tempfile::tempdir().unwrap();
        let gz = tmp.path().join("e.csv.gz");
        let mut enc = flate2::write::GzEncoder::new(std::fs::File::create(&gz).unwrap(), flate2::Compression::fast());
        enc.write_all(b"1,2\n2,3\n").unwrap();
        enc.finish().unwrap();
        let zst = tmp.path().join("e.csv.zst");
        std::fs::write(&zst, zstd::encode_all(&b"5,6\n"[..], 3).unwrap()).unwrap();
        assert_eq!(read_input(&gz).unwrap(), b"1,2\n2,3\n");
        // A name that promises compression the bytes do not have is named as such.
        let fake = tmp.path().join("fake.csv.gz");
        std::fs::write(&fake, "1,2\n").unwrap();
        assert!(read_input(&fake).unwrap_err().to_string().contains("the name says gzip"));
        std::fs::write(tmp.path().join("fake.csv.zst"), "1,2\n").unwrap();
        let err = read_input(&tmp.path().join("fake.csv.zst")).unwrap_err().to_string();
        assert!(err.contains("the name says zstd"), "{err}");
        std::fs::write(&fake, "").unwrap();
        assert_eq!(read_input(&fake).unwrap(), b"");
        let utf16 = tmp.path().join("utf16.csv");
        let text: Vec<u8> = "\u{feff}1,2\n".encode_utf16().flat_map(|u| u.to_le_bytes()).collect();
        std::fs::write(&utf16, &text).unwrap();
        assert!(read_input(&utf16).unwrap_err().to_string().contains("UTF-16"));
        std::fs::write(&utf16, &text[2..]).unwrap();
        assert!(read_input(&utf16).unwrap_err().to_string().contains("UTF-16"), "without a byte-order mark too");
        assert_eq!(read_input(&zst).unwrap(), b"5,6\n");
        let summary = import_edge_lists(&tmp.path().join("db"), &[gz, zst], &EdgeImport::default(), |_| {}).unwrap();
        assert_eq!((summary.nodes, summary.relationships), (5, 3));
    }
}
