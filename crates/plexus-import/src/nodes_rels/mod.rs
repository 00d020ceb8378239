//! Node and relationship files in the format of Neo4j's offline importer, parsed into columns.
//!
//! A *node group* is one `--nodes` argument: one or more files whose header is the first row of the first file,
//! with labels given on the command line and/or in a `:LABEL` column. Every row becomes a node, numbered in
//! input order. Node ids live in id spaces (`:ID(space)`; the global space when unnamed); a duplicate id in one
//! space is an error naming both places, or with `skip_duplicate_nodes` a skipped row (the first one is kept). A *relationship group* is one `--relationships` argument; its start and
//! end ids are resolved through the id spaces while its chunks are parsed in parallel, into flat source, target,
//! type and property columns. An id that resolves to no node is a bad line (file, line, column and text),
//! never an invented node.
//!
//! An empty unquoted field is an absent property; `""` is an empty string (or absent too with
//! `ignore_empty_strings`). Rows with fewer fields than the header leave the rest absent (as Neo4j does); rows
//! with more are bad lines, or with `ignore_extra_columns` their extra fields are dropped. Neo4j's importer's
//! other options that change what a field reads as are here too: the quote character, `trim_strings`, and
//! `skip_bad_relationships` (a relationship to an unknown id skipped and reported instead of a bad line).

use std::borrow::Cow;
use std::ops::Range;
use std::path::PathBuf;
use std::sync::Arc;

use plexus_storage::fxhash::FxHashMap;
use plexus_storage::records::{Labels, PropMap};
use plexus_storage::{Catalog, LabelId, PropKeyId, TypeId, Value};

mod ids;
mod lookahead;
mod rels;

pub use ids::{Duplicate, ExternalId, Fallback, IdMaps, AMBIGUOUS};
pub use rels::{parse_rel_group, RelColumns};

use crate::csv::{self, ChunkResult, Next, Reader, Record};
use crate::edgelist::{BadLine, IdType};
use crate::header::{Column, HeaderError, NodeHeader, RelHeader};
use crate::progress::Progress;
use crate::values::{parse_int, parse_typed, ScalarType};

/// Rewrites a file's own header fields into Neo4j-style column specifications (used by layouts such as LDBC
/// whose headers are plain names).
pub type HeaderRewrite = Arc<dyn Fn(&[String]) -> Result<Vec<String>, String> + Send + Sync>;

/// Options shared by every node and relationship file.
#[derive(Clone, Debug)]
pub struct CsvOptions {
    pub delimiter: u8,
    pub array_delimiter: u8,
    pub id_type: IdType,
    /// Bad lines to skip (and report) across all files before failing.
    pub skip_bad_lines: usize,
    /// Keep the first node with an id in its id space and skip (and report) the others, instead of failing;
    /// they are not counted against `skip_bad_lines`.
    pub skip_duplicate_nodes: bool,
    /// Skip (and report) relationships whose start or end id names no node, instead of failing; they are not
    /// counted against `skip_bad_lines`.
    pub skip_bad_relationships: bool,
    /// At most this many nodes and relationships skipped by `skip_duplicate_nodes` and `skip_bad_relationships`
    /// together before the import fails (Neo4j's `--bad-tolerance`); no limit when `None`.
    pub bad_tolerance: Option<usize>,
    /// The character that quotes a field.
    pub quote: u8,
    /// Fields past the header's last column are dropped instead of making their line bad.
    pub ignore_extra_columns: bool,
    /// Whitespace around unquoted values, ids and types, and around every array element and label, is removed,
    /// and blanks around a quoted field are skipped; a quoted value keeps its own (as Neo4j's `--trim-strings`).
    pub trim_strings: bool,
    /// A quoted empty field (`""`) is no property, as an unquoted empty one is, instead of the empty string.
    pub ignore_empty_strings: bool,
    /// Smallest chunk parsed by one thread (tests make it tiny to exercise chunk boundaries).
    pub min_chunk: usize,
}

impl Default for CsvOptions {
    fn default() -> Self {
        CsvOptions {
            delimiter: b',',
            array_delimiter: b';',
            id_type: IdType::String,
            skip_bad_lines: 0,
            skip_duplicate_nodes: false,
            skip_bad_relationships: false,
            bad_tolerance: None,
            quote: b'"',
            ignore_extra_columns: false,
            trim_strings: false,
            ignore_empty_strings: false,
            min_chunk: 1 << 20,
        }
    }
}

/// One `--nodes [LABEL[:LABEL2]=]FILE[,FILE...]`.
#[derive(Clone, Default)]
pub struct NodeFiles {
    pub files: Vec<PathBuf>,
    pub labels: Vec<String>,
    pub rewrite: Option<HeaderRewrite>,
    /// Upper-case the first letter of labels read from a `:LABEL` column (`city` becomes `City`).
    pub capitalize_labels: bool,
}

/// One `--relationships [TYPE=]FILE[,FILE...]`.
#[derive(Clone, Default)]
pub struct RelFiles {
    pub files: Vec<PathBuf>,
    pub rel_type: Option<String>,
    pub rewrite: Option<HeaderRewrite>,
}

/// What a column turns into.
#[derive(Clone, Copy)]
enum Plan {
    Skip,
    Id,
    Label,
    Start,
    End,
    Type,
    Prop { key: PropKeyId, ty: ScalarType, array: bool },
}

fn plans(columns: &[Column], catalog: &Catalog) -> Vec<Plan> {
    columns
        .iter()
        .map(|c| match c {
            Column::Id { .. } => Plan::Id,
            Column::Label => Plan::Label,
            Column::StartId { .. } => Plan::Start,
            Column::EndId { .. } => Plan::End,
            Column::Type => Plan::Type,
            Column::Ignore => Plan::Skip,
            Column::Property { name, ty, array } => Plan::Prop { key: catalog.prop_key(name), ty: *ty, array: *array },
        })
        .collect()
}

/// A file read into memory, with where its data rows start.
pub struct Input {
    pub path: PathBuf,
    pub bytes: Vec<u8>,
}

/// The header row of a group: the first record of its first file, rewritten if the group says so. Returns the
/// fields and where the data of the first file starts (byte offset, line).
fn header_of(
    input: &Input,
    options: &CsvOptions,
    rewrite: Option<&HeaderRewrite>,
) -> Result<(Vec<String>, usize, u64), BadLine> {
    let start = if input.bytes.starts_with(b"\xEF\xBB\xBF") { 3 } else { 0 };
    let mut reader =
        Reader::new(&input.bytes, start, 1, options.delimiter).quoting(options.quote, options.trim_strings);
    let mut rec = Record::default();
    let err = |message: String| BadLine { line: 1, column: 1, message, text: String::new() };
    match reader.next(&mut rec) {
        Ok(Next::Record) => {}
        Ok(_) => return Err(err("no header row".into())),
        Err(e) => return Err(BadLine { line: e.line, column: e.column, message: e.message, text: e.text }),
    }
    let mut fields: Vec<String> =
        (0..rec.len()).map(|i| String::from_utf8_lossy(rec.get(&input.bytes, i)).into_owned()).collect();
    if let Some(rewrite) = rewrite {
        fields = rewrite(&fields).map_err(err)?;
    }
    Ok((fields, reader.pos, reader.line))
}

/// Where the data of a group's later file starts: past a byte-order mark, and past its first line when that
/// repeats the group's header line (files split from one with the header kept in each, whose header would
/// otherwise become a row of column names; fields compare without the spaces and quotes around them). A first
/// line with an unquoted field that is a header-only column (`x:ID`, `:START_ID(P)`, `:LABEL`, ...) is refused:
/// it is the header of another kind of file, whose rows would be read under the wrong columns.
fn later_file_start(
    first: &Input,
    data_start: usize,
    input: &Input,
    delimiter: u8,
) -> Result<(usize, u64), (PathBuf, BadLine)> {
    const BOM: &[u8] = b"\xEF\xBB\xBF";
    let line_of = |bytes: &[u8], from: usize, to: usize| {
        let line = &bytes[from..to];
        let line = line.strip_suffix(b"\n").unwrap_or(line);
        line.strip_suffix(b"\r").unwrap_or(line).to_vec()
    };
    let header = line_of(&first.bytes, if first.bytes.starts_with(BOM) { 3 } else { 0 }, data_start);
    let bytes = &input.bytes;
    let start = if bytes.starts_with(BOM) { 3 } else { 0 };
    let end = memchr::memchr(b'\n', &bytes[start..]).map_or(bytes.len(), |p| start + p + 1);
    let line = line_of(bytes, start, end);
    let (header_fields, fields) = (header_fields(&header, delimiter), header_fields(&line, delimiter));
    let names = |fields: &[(Vec<u8>, bool)]| fields.iter().map(|(name, _)| name.clone()).collect::<Vec<_>>();
    if !header.is_empty() && names(&fields) == names(&header_fields) {
        return Ok((end, 2));
    }
    if let Some(marker) = fields.iter().find_map(|(field, quoted)| if *quoted { None } else { header_marker(field) }) {
        let message = format!(
            "the first line has the header column {marker} but is not the header of {}, the group's first file \
             (a group's files share its first file's header: import a file with another header in an argument \
             of its own)",
            first.path.display()
        );
        let text = String::from_utf8_lossy(&line).into_owned();
        return Err((input.path.clone(), BadLine { line: 1, column: 1, message, text }));
    }
    Ok((start, 1))
}

/// A header line's fields split at `delimiter`, each without the spaces and the quotes around it, and whether it
/// was quoted. (A rough split: enough to compare headers, whose names hold no delimiters.)
fn header_fields(line: &[u8], delimiter: u8) -> Vec<(Vec<u8>, bool)> {
    line.split(|&b| b == delimiter)
        .map(|field| {
            let field = field.trim_ascii();
            match field.strip_prefix(b"\"").and_then(|f| f.strip_suffix(b"\"")) {
                Some(inner) => (inner.trim_ascii().to_vec(), true),
                None => (field.to_vec(), false),
            }
        })
        .collect()
}

/// The column marker that only a header has, when `field` is such a column: `name:ID`, `:START_ID`, `:END_ID`
/// (each with an id space in parentheses or not), `:TYPE` or `:LABEL`.
fn header_marker(field: &[u8]) -> Option<&'static str> {
    const MARKERS: [&str; 5] = [":START_ID", ":END_ID", ":ID", ":TYPE", ":LABEL"];
    let without_space = match field.strip_suffix(b")") {
        Some(open) => open.iter().rposition(|&b| b == b'(').map_or(field, |at| &field[..at]),
        None => field,
    };
    MARKERS.into_iter().find(|marker| {
        let m = marker.as_bytes();
        let ids = marker.ends_with("ID");
        if ids {
            without_space.ends_with(m)
        } else {
            field.ends_with(m)
        }
    })
}

/// A header error at field `e.column` (1-based), placed like a data error: at the character where that field
/// starts (counted in the fields as read, one delimiter between each; quotes are not counted).
fn header_error(e: HeaderError, fields: &[String]) -> BadLine {
    let before = &fields[..e.column.saturating_sub(1).min(fields.len())];
    let column = 1 + before.iter().map(|f| f.chars().count() + 1).sum::<usize>();
    BadLine { line: 1, column, message: format!("header: {}", e.message), text: fields.join(",") }
}

/// A node id as read: an integer, or the bytes of a string (borrowed from the input unless it was unescaped).
pub enum Ids<'a> {
    None,
    Int(Vec<i64>),
    Str(Vec<Cow<'a, [u8]>>),
}

/// The parsed rows of one node group.
pub struct NodeGroup<'a> {
    pub header: NodeHeader,
    /// Labels every node of the group has.
    pub labels: Labels,
    /// The property storing the id, if the id column is named.
    pub id_key: Option<PropKeyId>,
    pub ids: Ids<'a>,
    /// Per row, labels from a `:LABEL` column (empty when the group has none).
    pub row_labels: Vec<Labels>,
    pub props: Vec<Option<Arc<PropMap>>>,
    /// Per row, its line; and the first row of each file.
    pub lines: Vec<u64>,
    pub files: Vec<(usize, PathBuf)>,
    pub bad: Vec<(PathBuf, BadLine)>,
    /// Later files whose first line repeated the header and was skipped (see [`later_file_start`]).
    pub repeated_headers: Vec<PathBuf>,
    /// Per file, the fields past the header's last column that `ignore_extra_columns` dropped.
    pub dropped_fields: Vec<(PathBuf, u64)>,
    /// Per file, the rows with fewer fields than the header, and the line of the first (see [`ShortRows`]).
    pub short_rows: Vec<(PathBuf, ShortRows)>,
}

impl NodeGroup<'_> {
    pub fn len(&self) -> usize {
        self.props.len()
    }

    pub fn is_empty(&self) -> bool {
        self.props.is_empty()
    }

    /// File and line of row `row`, for messages.
    pub fn place(&self, row: usize) -> String {
        let file = self.files.iter().rev().find(|(first, _)| *first <= row).map(|(_, p)| p.display().to_string());
        format!("{}: line {}", file.unwrap_or_default(), self.lines[row])
    }

    /// The id of row `row` as a property value.
    pub fn id_value(&self, row: usize) -> Option<Value> {
        match &self.ids {
            Ids::None => None,
            Ids::Int(v) => Some(Value::Int(v[row])),
            Ids::Str(v) => Some(Value::from(String::from_utf8_lossy(&v[row]).into_owned())),
        }
    }

    /// The column of the node property `key` (its id column, or a property column of that name).
    pub fn column_of(&self, key: PropKeyId, catalog: &Catalog) -> Option<usize> {
        if self.id_key == Some(key) {
            return self.header.id;
        }
        let name = catalog.name(plexus_storage::TokenKind::PropKey, key.0)?;
        self.header.columns.iter().position(|c| matches!(c, Column::Property { name: n, .. } if **n == *name))
    }

    /// Keeps the rows whose entry in `keep` is true (the files' first rows follow).
    pub fn retain(&mut self, keep: &[bool]) {
        fn filter<T>(v: &mut Vec<T>, keep: &[bool]) {
            let mut i = 0;
            v.retain(|_| {
                i += 1;
                keep[i - 1]
            });
        }
        match &mut self.ids {
            Ids::None => {}
            Ids::Int(v) => filter(v, keep),
            Ids::Str(v) => filter(v, keep),
        }
        if !self.row_labels.is_empty() {
            filter(&mut self.row_labels, keep);
        }
        filter(&mut self.props, keep);
        filter(&mut self.lines, keep);
        for (first, _) in &mut self.files {
            *first = keep[..*first].iter().filter(|&&k| k).count();
        }
    }

    /// Every label of row `row`.
    pub fn labels_of(&self, row: usize) -> Labels {
        let mut labels = self.labels.clone();
        if let Some(extra) = self.row_labels.get(row) {
            for l in extra {
                if !labels.contains(l) {
                    labels.push(*l);
                }
            }
        }
        labels
    }
}

/// Bad lines for rows of a group found bad after parsing: `(row, field, message)`, placed at the field's line and
/// column with the record's text. The group's files are read again for them, one pass per file holding any.
pub fn bad_rows(
    group: &NodeGroup,
    inputs: &[Input],
    options: &CsvOptions,
    mut rows: Vec<(usize, usize, String)>,
) -> Vec<(PathBuf, BadLine)> {
    rows.sort_by_key(|r| r.0);
    let mut out = Vec::with_capacity(rows.len());
    let mut rows = rows.into_iter().peekable();
    for (f, input) in inputs.iter().enumerate() {
        let end = group.files.get(f + 1).map_or(usize::MAX, |(first, _)| *first);
        let mut wanted = Vec::new();
        while let Some(r) = rows.next_if(|r| r.0 < end) {
            wanted.push(r);
        }
        if wanted.is_empty() {
            continue;
        }
        let bytes = &input.bytes;
        let mut reader = Reader::new(bytes, 0, 1, options.delimiter).quoting(options.quote, options.trim_strings);
        let mut rec = Record::default();
        let mut wanted = wanted.into_iter().peekable();
        while let Some(line) = wanted.peek().map(|w| group.lines[w.0]) {
            let found = loop {
                match reader.next(&mut rec) {
                    Ok(Next::Record) if rec.line == line => break true,
                    Ok(Next::Record) => {}
                    Ok(Next::End) => break false,
                    // An unclosed quote was a bad line of its own: reading went on at the next line.
                    Ok(Next::Open { offset, line }) => {
                        let end = memchr::memchr(b'\n', &bytes[offset..]).map_or(bytes.len(), |p| offset + p);
                        reader.pos = (end + 1).min(bytes.len());
                        reader.line = line + 1;
                    }
                    // A malformed record was a bad line of its own: reading goes on after it.
                    Err(_) => {}
                }
            };
            // Several bad fields of one line share its record.
            while let Some((_, field, message)) = wanted.next_if(|w| group.lines[w.0] == line) {
                let bad = match found {
                    true => bad_at(&rec, bytes, field, message),
                    false => BadLine { line, column: 1, message, text: String::new() },
                };
                out.push((input.path.clone(), bad));
            }
        }
    }
    out
}

#[derive(Default)]
struct NodeChunk<'a> {
    ints: Vec<i64>,
    strs: Vec<Cow<'a, [u8]>>,
    row_labels: Vec<Labels>,
    props: Vec<Option<Arc<PropMap>>>,
    lines: Vec<u64>,
    bad: Vec<BadLine>,
    dropped_fields: u64,
    short_rows: ShortRows,
}

/// Rows with fewer fields than their header: their last columns read as absent, as in Neo4j's importer, and
/// the import says how many, since a file written with another delimiter reads that way too.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ShortRows {
    pub count: u64,
    /// The line of the first one (0 while there is none).
    pub first_line: u64,
}

impl ShortRows {
    /// Counts a row of `fields` fields at `line` under a header of `columns`.
    #[inline]
    pub(crate) fn note(&mut self, fields: usize, columns: usize, line: u64) {
        if fields < columns {
            if self.count == 0 {
                self.first_line = line;
            }
            self.count += 1;
        }
    }

    /// Adds the rows of a later part of the same file.
    pub(crate) fn add(&mut self, later: ShortRows) {
        if self.count == 0 {
            self.first_line = later.first_line;
        }
        self.count += later.count;
    }
}

/// The text of id field `col` (a node's, or a relationship's end): trimmed with the other unquoted strings when
/// `trim_strings`, and always when ids are integers (Neo4j reads ` 1 ` as 1).
fn id_text<'t>(text: &'t [u8], rec: &Record, col: usize, options: &CsvOptions) -> &'t [u8] {
    let trim = options.trim_strings && !rec.quoted(col) || matches!(options.id_type, IdType::Integer);
    if trim {
        text.trim_ascii()
    } else {
        text
    }
}

fn bad_at(rec: &Record, input: &[u8], field: usize, message: String) -> BadLine {
    let (line, column) = rec.position(field);
    BadLine { line, column, message, text: rec.text(input) }
}

fn utf8_label(text: &[u8], capitalize: bool) -> Option<String> {
    let s = std::str::from_utf8(text).ok()?;
    if !capitalize {
        return Some(s.to_string());
    }
    let mut chars = s.chars();
    Some(chars.next().map(|c| c.to_uppercase().chain(chars).collect()).unwrap_or_default())
}

/// The typed properties of a record (the id property first, when given).
fn props_of(
    rec: &Record,
    input: &[u8],
    plans: &[Plan],
    options: &CsvOptions,
    first: Option<(PropKeyId, Value)>,
) -> Result<Option<Arc<PropMap>>, BadLine> {
    let mut pairs: Vec<(PropKeyId, Value)> = Vec::new();
    if let Some(p) = first {
        pairs.reserve(plans.len());
        pairs.push(p);
    }
    for (i, plan) in plans.iter().enumerate() {
        let Plan::Prop { key, ty, array } = *plan else { continue };
        let text = rec.get(input, i);
        let is_string = ty == ScalarType::String;
        // Trimming, as Neo4j's: an unquoted value, and each array element even quoted; never a quoted value.
        let text = if options.trim_strings && !rec.quoted(i) { text.trim_ascii() } else { text };
        // An empty field is no property, except a quoted one in a string column: the empty string. (A quoted
        // empty string[] field is no property either, as in Neo4j, rather than a list of one empty string.)
        let empty_string = rec.quoted(i) && is_string && !array && !options.ignore_empty_strings;
        if text.is_empty() && !empty_string {
            continue;
        }
        let value = parse_typed(ty, array, options.array_delimiter, text, options.trim_strings)
            .map_err(|m| bad_at(rec, input, i, m))?;
        if pairs.capacity() == 0 {
            pairs.reserve(plans.len());
        }
        pairs.push((key, value));
    }
    Ok((!pairs.is_empty()).then(|| Arc::new(PropMap::from_pairs(pairs))))
}

/// Reads the records of `input[range]` with `row`, collecting bad lines (at most `max_bad + 1`).
#[allow(clippy::too_many_arguments)]
fn read_chunk<T>(
    input: &[u8],
    range: Range<usize>,
    line: u64,
    last: bool,
    options: &CsvOptions,
    out: &mut T,
    bad: impl Fn(&mut T) -> &mut Vec<BadLine>,
    mut row: impl FnMut(&Record, &mut T) -> Result<(), BadLine>,
) -> Option<(usize, u64)> {
    let slice = &input[..range.end];
    let mut reader =
        Reader::new(slice, range.start, line, options.delimiter).quoting(options.quote, options.trim_strings);
    let mut rec = Record::default();
    loop {
        let result = match reader.next(&mut rec) {
            Ok(Next::Record) => row(&rec, out),
            Ok(Next::End) => return None,
            Ok(Next::Open { offset, line }) if !last => return Some((offset, line)),
            Ok(Next::Open { offset, line }) => {
                // The record's first line is the bad one; reading goes on at the next line, so the lines the
                // open quote ran over are read as records rather than lost.
                let end = memchr::memchr(b'\n', &slice[offset..]).map_or(slice.len(), |p| offset + p);
                let text = String::from_utf8_lossy(&slice[offset..end.min(offset + 200)]).into_owned();
                let message = "a quoted field is not closed before the end of the file".to_string();
                reader.pos = (end + 1).min(slice.len());
                reader.line = line + 1;
                Err(BadLine { line, column: unclosed_quote_column(&slice[offset..end]), message, text })
            }
            Err(e) => Err(BadLine { line: e.line, column: e.column, message: e.message, text: e.text }),
        };
        if let Err(b) = result {
            let list = bad(out);
            list.push(b);
            if list.len() > options.skip_bad_lines {
                return None;
            }
        }
    }
}

/// Parses one node group. The files' bytes must outlive the group (string ids borrow them).
pub fn parse_node_group<'a>(
    spec: &NodeFiles,
    inputs: &'a [Input],
    options: &CsvOptions,
    catalog: &Catalog,
    progress: &Progress,
) -> Result<NodeGroup<'a>, (PathBuf, BadLine)> {
    let first = &inputs[0];
    let (fields, data_start, data_line) =
        header_of(first, options, spec.rewrite.as_ref()).map_err(|b| (first.path.clone(), b))?;
    let header = NodeHeader::parse(&fields).map_err(|e| (first.path.clone(), header_error(e, &fields)))?;
    let plans = plans(&header.columns, catalog);
    let id_key = header.id_property().map(|p| catalog.prop_key(p));
    let mut labels = Labels::new();
    for l in &spec.labels {
        let id = catalog.label(l);
        if !labels.contains(&id) {
            labels.push(id);
        }
    }
    let has_label_column = plans.iter().any(|p| matches!(p, Plan::Label));
    let mut group = NodeGroup {
        labels,
        id_key,
        ids: match (header.id, options.id_type) {
            (None, _) => Ids::None,
            (Some(_), IdType::Integer) => Ids::Int(Vec::new()),
            (Some(_), IdType::String) => Ids::Str(Vec::new()),
        },
        header,
        row_labels: Vec::new(),
        props: Vec::new(),
        lines: Vec::new(),
        files: Vec::new(),
        bad: Vec::new(),
        repeated_headers: Vec::new(),
        dropped_fields: Vec::new(),
        short_rows: Vec::new(),
    };
    for (n, input) in inputs.iter().enumerate() {
        progress.phase(format!("nodes {}", input.path.display()));
        let (start, line) = if n == 0 {
            (data_start, data_line)
        } else {
            later_file_start(first, data_start, input, options.delimiter)?
        };
        if n > 0 && line == 2 {
            group.repeated_headers.push(input.path.clone());
        }
        let bytes: &'a [u8] = &input.bytes;
        let chunks = csv::parse_chunks(bytes, start, line, csv::threads(), options.min_chunk, |range, line, last| {
            let mut out = NodeChunk::default();
            let mut cache: FxHashMap<Vec<u8>, LabelId> = FxHashMap::default();
            let len = range.len() as u64;
            let open = read_chunk(
                bytes,
                range,
                line,
                last,
                options,
                &mut out,
                |o| &mut o.bad,
                |rec, out| {
                    node_row(bytes, rec, &group, &plans, options, spec.capitalize_labels, catalog, &mut cache, out)
                },
            );
            progress.add_bytes(len);
            progress.add_rows(out.props.len() as u64);
            ChunkResult { out, open }
        });
        group.files.push((group.props.len(), input.path.clone()));
        let (mut dropped, mut short) = (0, ShortRows::default());
        for c in chunks {
            dropped += c.dropped_fields;
            short.add(c.short_rows);
            match &mut group.ids {
                Ids::Int(v) => v.extend(c.ints),
                Ids::Str(v) => v.extend(c.strs),
                Ids::None => {}
            }
            if has_label_column {
                group.row_labels.extend(c.row_labels);
            }
            group.props.extend(c.props);
            group.lines.extend(c.lines);
            group.bad.extend(c.bad.into_iter().map(|b| (input.path.clone(), b)));
        }
        if dropped > 0 {
            group.dropped_fields.push((input.path.clone(), dropped));
        }
        if short.count > 0 {
            group.short_rows.push((input.path.clone(), short));
        }
    }
    Ok(group)
}

#[allow(clippy::too_many_arguments)]
fn node_row<'a>(
    input: &'a [u8],
    rec: &Record,
    group: &NodeGroup,
    plans: &[Plan],
    options: &CsvOptions,
    capitalize: bool,
    catalog: &Catalog,
    cache: &mut FxHashMap<Vec<u8>, LabelId>,
    out: &mut NodeChunk<'a>,
) -> Result<(), BadLine> {
    if rec.len() > plans.len() {
        if !options.ignore_extra_columns {
            let message = format!("{} fields, but the header has {}", rec.len(), plans.len());
            return Err(bad_at(rec, input, plans.len(), message));
        }
        out.dropped_fields += (rec.len() - plans.len()) as u64;
    }
    out.short_rows.note(rec.len(), plans.len(), rec.line);
    let mut id_prop = None;
    let mut id: Option<Result<i64, Cow<'a, [u8]>>> = None;
    if let Some(col) = group.header.id {
        let text = id_text(rec.get(input, col), rec, col, options);
        if text.is_empty() {
            return Err(bad_at(rec, input, col, "empty node id".into()));
        }
        match options.id_type {
            IdType::Integer => {
                let v = parse_int(text).ok_or_else(|| {
                    bad_at(rec, input, col, format!("'{}' is not an integer id", String::from_utf8_lossy(text)))
                })?;
                id_prop = group.id_key.map(|k| (k, Value::Int(v)));
                id = Some(Ok(v));
            }
            IdType::String => {
                let s = std::str::from_utf8(text)
                    .map_err(|_| bad_at(rec, input, col, "the node id is not valid UTF-8".into()))?;
                id_prop = group.id_key.map(|k| (k, Value::from(s)));
                // Borrow the input unless the field was unescaped into the record's scratch space.
                id = Some(Err(match rec.get_in(input, col) {
                    Some(borrowed) => Cow::Borrowed(id_text(borrowed, rec, col, options)),
                    None => Cow::Owned(text.to_vec()),
                }));
            }
        }
    }
    let mut labels = Labels::new();
    for (i, plan) in plans.iter().enumerate() {
        if !matches!(plan, Plan::Label) {
            continue;
        }
        let names = rec.get(input, i).split(|&b| b == options.array_delimiter);
        // Labels are an array: each is trimmed when strings are, quoted or not.
        let names = names.map(|n| if options.trim_strings { n.trim_ascii() } else { n });
        for name in names.filter(|n| !n.is_empty()) {
            let label = match cache.get(name) {
                Some(&l) => l,
                None => {
                    let s = utf8_label(name, capitalize)
                        .ok_or_else(|| bad_at(rec, input, i, "the label is not valid UTF-8".into()))?;
                    let l = catalog.label(&s);
                    cache.insert(name.to_vec(), l);
                    l
                }
            };
            if !labels.contains(&label) {
                labels.push(label);
            }
        }
    }
    let props = props_of(rec, input, plans, options, id_prop)?;
    match id {
        Some(Ok(v)) => out.ints.push(v),
        Some(Err(s)) => out.strs.push(s),
        None => {}
    }
    if plans.iter().any(|p| matches!(p, Plan::Label)) {
        out.row_labels.push(labels);
    }
    out.props.push(props);
    out.lines.push(rec.line);
    Ok(())
}

/// The column (in characters, from 1) of the quote that opens the field still open at the end of `line`: the
/// last quote met outside a quoted field (a doubled quote inside one closes and reopens it).
fn unclosed_quote_column(line: &[u8]) -> usize {
    let (mut quoted, mut opened_at, mut closed_at) = (false, 0, None);
    for (at, &b) in line.iter().enumerate() {
        if b == b'"' {
            // A quote right after the one that closed the field is the second of a doubled quote.
            if quoted {
                closed_at = Some(at);
            } else if closed_at.is_none_or(|c| c + 1 != at) {
                opened_at = at;
            }
            quoted = !quoted;
        }
    }
    String::from_utf8_lossy(&line[..opened_at]).chars().count() + 1
}

#[cfg(test)]
mod tests {
    use super::unclosed_quote_column;

    #[test]
    fn the_unclosed_quote_is_found_past_closed_ones() {
        assert_eq!(unclosed_quote_column(b"2,\"bbb"), 3);
        assert_eq!(unclosed_quote_column(b"\"a\",\"b\"\"c"), 5);
        assert_eq!(unclosed_quote_column("é,\"x".as_bytes()), 3);
    }
}
