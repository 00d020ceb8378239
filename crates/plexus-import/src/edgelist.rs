//! Edge-list parsing: `source,target[,weight]` lines, comma, tab or space separated, optional header, `#`
//! comments, integer or string vertex ids.
//!
//! The whole input is parsed into dense vertex numbers (in order of first appearance for string ids, in order of
//! value for integer ids) plus flat source/target/weight columns, which is what the bulk builder wants. Parsing is
//! a hand-written byte loop over large chunks split at line ends and parsed in parallel, one chunk per core.
//!
//! Plain lines take direct paths (`int_line`, `str_line`); the numbering of vertices is in `int_ids` (by value)
//! and `names` (string ids, by first appearance).

use std::fmt;

use crate::values::parse_int;

/// How fields are separated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Delimiter {
    Comma,
    Tab,
    /// One or more spaces.
    Space,
}

impl Delimiter {
    pub fn parse(s: &str) -> Result<Delimiter, String> {
        match s {
            "," | "comma" => Ok(Delimiter::Comma),
            "\t" | "\\t" | "tab" => Ok(Delimiter::Tab),
            " " | "space" => Ok(Delimiter::Space),
            other => Err(format!("unknown delimiter '{other}' (expected comma, tab or space)")),
        }
    }
}

/// Whether vertex ids are integers or strings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IdType {
    Integer,
    String,
}

/// What the caller knows about the format; `None` means detect it.
#[derive(Clone, Debug, Default)]
pub struct Format {
    pub delimiter: Option<Delimiter>,
    pub header: Option<bool>,
    pub id_type: Option<IdType>,
}

/// A line that could not be parsed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BadLine {
    pub line: u64,
    pub column: usize,
    pub message: String,
    pub text: String,
}

impl fmt::Display for BadLine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (message, text) = (printable(&self.message), printable(&self.text));
        write!(f, "line {}, column {}: {message} in \"{text}\"", self.line, self.column)
    }
}

/// `text` with control characters escaped ([`escape_control`]): a bad line quoted in a message must not move the
/// cursor, ring the bell or recolour the user's terminal.
pub fn printable(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.chars().any(char::is_control) {
        return text.into();
    }
    let mut out = String::with_capacity(text.len() + 8);
    text.chars().for_each(|c| escape_control(c, &mut out));
    out.into()
}

/// `c`, or its escape when it is a control character (C0, DEL, C1): `\n`, `\t`, `\r`, else `\u001B`. What the
/// command line shows of stored or read text: it must not change the terminal's state, nor take no width and
/// misalign a table's column.
pub fn escape_control(c: char, out: &mut String) {
    match c {
        '\n' => out.push_str("\\n"),
        '\t' => out.push_str("\\t"),
        '\r' => out.push_str("\\r"),
        c if c.is_control() => {
            let _ = std::fmt::Write::write_fmt(out, format_args!("\\u{:04X}", c as u32));
        }
        c => out.push(c),
    }
}

/// Vertex ids, indexed by dense vertex number.
#[derive(Clone, Debug)]
pub enum VertexIds {
    Integer(Vec<i64>),
    String(Vec<Box<str>>),
}

impl VertexIds {
    pub fn len(&self) -> usize {
        match self {
            VertexIds::Integer(v) => v.len(),
            VertexIds::String(v) => v.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// A parsed edge list.
#[derive(Debug)]
pub struct EdgeList {
    pub src: Vec<u32>,
    pub dst: Vec<u32>,
    /// Present when the input has a third column.
    pub weight: Option<Vec<f64>>,
    pub vertices: VertexIds,
    pub delimiter: Delimiter,
    pub header: bool,
    /// Lines skipped under `skip_bad_lines`.
    pub bad_lines: Vec<BadLine>,
}

/// Parsing failed: the first bad line (or the one past the allowance).
#[derive(Debug)]
pub struct ParseError {
    pub bad: BadLine,
    pub skipped: usize,
    /// The lines skipped before it, described (with their file when several were read), at most
    /// [`SKIPPED_LISTED`]: the import fails, so they are reported nowhere else.
    pub skipped_lines: Vec<String>,
}

/// How many of the lines skipped before a failure its message lists.
pub const SKIPPED_LISTED: usize = 10;

impl ParseError {
    /// The error at `bad`, after skipping `skipped` (in the order they were met).
    pub fn after(bad: BadLine, skipped: impl IntoIterator<Item = String>) -> ParseError {
        let mut skipped_lines: Vec<String> = Vec::new();
        let mut count = 0;
        for line in skipped {
            count += 1;
            if skipped_lines.len() < SKIPPED_LISTED {
                skipped_lines.push(line);
            }
        }
        ParseError { bad, skipped: count, skipped_lines }
    }
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.skipped == 0 {
            return write!(f, "{}", self.bad);
        }
        let lines = if self.skipped == 1 { "line" } else { "lines" };
        write!(f, "{} (after skipping {} bad {lines}", self.bad, self.skipped)?;
        if !self.skipped_lines.is_empty() {
            write!(f, ": {}", self.skipped_lines.join("; "))?;
            if self.skipped > self.skipped_lines.len() {
                write!(f, "; and {} more", self.skipped - self.skipped_lines.len())?;
            }
        }
        write!(f, ")")
    }
}

fn is_blank_or_comment(line: &[u8]) -> bool {
    let trimmed = line.iter().position(|b| !b.is_ascii_whitespace()).map_or(&[][..], |i| &line[i..]);
    trimmed.is_empty() || trimmed[0] == b'#'
}

pub(crate) fn strip_cr(line: &[u8]) -> &[u8] {
    line.strip_suffix(b"\r").unwrap_or(line)
}

/// The fields of one line: up to four (a fifth is only counted), each with its starting column. A fixed array,
/// so that splitting a line allocates nothing.
struct Fields<'a> {
    items: [(&'a [u8], usize); 4],
    len: usize,
    /// A quoted field that is not well formed: its column and what is wrong.
    malformed: Option<(usize, &'static str)>,
}

impl<'a> Fields<'a> {
    fn push(&mut self, field: &'a [u8], column: usize) {
        if self.len < self.items.len() {
            self.items[self.len] = (field, column);
        }
        self.len += 1;
    }

    fn len(&self) -> usize {
        self.len
    }

    fn get(&self, i: usize) -> (&'a [u8], usize) {
        self.items[i]
    }

    fn first(&self) -> Option<(&'a [u8], usize)> {
        (self.len > 0).then(|| self.items[0])
    }

    fn iter(&self) -> impl Iterator<Item = (&'a [u8], usize)> + '_ {
        self.items[..self.len.min(self.items.len())].iter().copied()
    }
}

/// Splits a line into fields with their starting columns. Comma- and tab-separated fields may be quoted as in
/// RFC 4180 (`"New York, NY"`, what spreadsheets, R and pandas write); the field is then what is between the
/// quotes, and its column is that of the opening quote.
fn fields(line: &[u8], delimiter: Delimiter) -> Fields<'_> {
    let mut out = Fields { items: [(&[][..], 0); 4], len: 0, malformed: None };
    match delimiter {
        Delimiter::Space => {
            let blank = |b: u8| b == b' ' || b == b'\t';
            let mut i = 0;
            while i < line.len() {
                while i < line.len() && blank(line[i]) {
                    i += 1;
                }
                let start = i;
                if line.get(i) == Some(&b'"') {
                    // Quoted as for the other delimiters: `"New York" Boston`.
                    let Some(close) = closing_quote(line, start) else {
                        out.malformed = Some((start, NOT_CLOSED));
                        return out;
                    };
                    if close + 1 < line.len() && !blank(line[close + 1]) {
                        out.malformed = Some((close + 1, "text after the closing quote of a field"));
                        return out;
                    }
                    out.push(&line[start + 1..close], start);
                    i = close + 1;
                    continue;
                }
                while i < line.len() && !blank(line[i]) {
                    i += 1;
                }
                if start < i {
                    if line[start..i].contains(&b'"') {
                        out.malformed = Some((start, "a quote inside an unquoted field"));
                        return out;
                    }
                    out.push(&line[start..i], start);
                }
            }
        }
        Delimiter::Comma | Delimiter::Tab if !line.contains(&b'"') => {
            let sep = if delimiter == Delimiter::Comma { b',' } else { b'\t' };
            let mut start = 0;
            for (i, &b) in line.iter().enumerate() {
                if b == sep {
                    out.push(trim(&line[start..i]), start);
                    start = i + 1;
                }
            }
            out.push(trim(&line[start..]), start);
        }
        Delimiter::Comma | Delimiter::Tab => {
            quoted_fields(line, if delimiter == Delimiter::Comma { b',' } else { b'\t' }, &mut out)
        }
    }
    out
}

/// [`fields`] for a line with quotes in it.
fn quoted_fields<'a>(line: &'a [u8], sep: u8, out: &mut Fields<'a>) {
    let mut start = 0;
    loop {
        let lead = line[start..].iter().take_while(|&&b| b != sep && b.is_ascii_whitespace()).count();
        let field_start = start + lead;
        let end = if line.get(field_start) == Some(&b'"') {
            let open = field_start + 1;
            let Some(close) = closing_quote(line, field_start) else {
                out.malformed = Some((field_start, NOT_CLOSED));
                return;
            };
            if line.get(close + 1) == Some(&b'"') {
                // A doubled quote stands for one quote inside the field: fields here borrow the input, and
                // vertex ids with quotes in them are rare enough to send to node and relationship files.
                out.malformed = Some((
                    close,
                    "a quoted field holds a quote (\"\"), which edge lists do not support; use --nodes and --relationships",
                ));
                return;
            }
            out.push(&line[open..close], field_start);
            let trailing = line[close + 1..].iter().take_while(|&&b| b != sep && b.is_ascii_whitespace()).count();
            let end = close + 1 + trailing;
            if end < line.len() && line[end] != sep {
                out.malformed = Some((end, "text after the closing quote of a field"));
                return;
            }
            end
        } else {
            let end = line[start..].iter().position(|&b| b == sep).map_or(line.len(), |p| start + p);
            let field = trim(&line[start..end]);
            if field.contains(&b'"') {
                out.malformed = Some((field_start, "a quote inside an unquoted field"));
                return;
            }
            out.push(field, start);
            end
        };
        if end >= line.len() {
            return;
        }
        start = end + 1;
    }
}

const NOT_CLOSED: &str = "a quoted field is not closed on its line";

/// Where the quoted field opening at `quote` ends: the position of its closing quote, if the line has one.
fn closing_quote(line: &[u8], quote: usize) -> Option<usize> {
    line[quote + 1..].iter().position(|&b| b == b'"').map(|p| quote + 1 + p)
}

fn trim(field: &[u8]) -> &[u8] {
    let start = field.iter().position(|b| !b.is_ascii_whitespace()).unwrap_or(field.len());
    let end = field.iter().rposition(|b| !b.is_ascii_whitespace()).map_or(start, |e| e + 1);
    &field[start..end.max(start)]
}

fn parse_float(field: &[u8]) -> Option<f64> {
    std::str::from_utf8(field).ok()?.parse::<f64>().ok()
}

const HEADER_NAMES: [&str; 12] =
    ["source", "target", "src", "dst", "from", "to", "weight", "u", "v", "start", "end", "id"];

/// Words that column names of edge lists are made of (`from_id`, `source node`, `target-vertex`): a first line
/// whose two id fields are made only of these is a header. No digits: `node_1,node_2` are vertices.
const HEADER_WORDS: [&str; 22] = [
    "source",
    "target",
    "src",
    "dst",
    "dest",
    "destination",
    "from",
    "to",
    "start",
    "end",
    "begin",
    "head",
    "tail",
    "id",
    "ids",
    "node",
    "vertex",
    "key",
    "name",
    "in",
    "out",
    "edge",
];

/// Whether `field` names an edge list's column: a known name, or words that column names are made of.
fn is_column_name(field: &[u8]) -> bool {
    let name = String::from_utf8_lossy(field).to_ascii_lowercase();
    let name = name.split(':').next().unwrap_or("").trim().to_string();
    if HEADER_NAMES.contains(&name.as_str()) {
        return true;
    }
    let mut words = name.split(['_', '-', ' ', '.']).filter(|w| !w.is_empty());
    let mut any = false;
    words.all(|w| {
        any = true;
        HEADER_WORDS.contains(&w)
    }) && any
}

/// Whether the integer text `field` is not written the one way an integer id prints back: a `+` sign, a leading
/// zero or `-0` (`007` and `7`, `+7` and `7` would otherwise become one vertex).
fn drops_text(field: &[u8]) -> bool {
    let digits = field.strip_prefix(b"-").unwrap_or(field);
    field.starts_with(b"+") || (digits.len() > 1 && digits[0] == b'0') || field == b"-0"
}

/// Whether `field` is an integer written the one way an integer id prints back (see [`drops_text`]).
fn is_canonical_int(field: &[u8]) -> bool {
    parse_int(field).is_some() && !drops_text(field)
}

/// How many of the first data lines [`consistent_delimiter`] looks at.
const DELIMITER_SAMPLE: usize = 20;

/// The delimiter that splits each of the first lines into two or three fields, quotes respected: tab before
/// comma (a comma inside a tab-separated name such as `Smith, Ann` is common, a tab inside a comma-separated one
/// is not), then comma, then spaces. `None` when none does (a bad line among them), for the first line alone to
/// decide.
fn consistent_delimiter<'a>(first: &'a [u8], rest: impl Iterator<Item = &'a [u8]>) -> Option<Delimiter> {
    let sample: Vec<&[u8]> = std::iter::once(first).chain(rest.take(DELIMITER_SAMPLE - 1)).collect();
    [Delimiter::Tab, Delimiter::Comma, Delimiter::Space].into_iter().find(|&d| {
        sample.iter().all(|line| {
            let f = fields(line, d);
            f.malformed.is_none() && (2..=3).contains(&f.len())
        })
    })
}

/// Detects the delimiter, header and id type from the first data lines.
fn detect(input: &[u8], format: &Format) -> (Delimiter, bool, IdType) {
    let mut lines = input.split(|&b| b == b'\n').map(strip_cr).filter(|l| !is_blank_or_comment(l));
    let first = lines.next().unwrap_or(&[]);
    let delimiter = format.delimiter.or_else(|| consistent_delimiter(first, lines.clone())).unwrap_or_else(|| {
        // Only what is outside quotes: `"New York, NY"\tBoston` is tab-separated.
        let mut quoted = false;
        let unquoted: Vec<u8> = first
            .iter()
            .filter(|&&b| {
                quoted ^= b == b'"';
                !quoted && b != b'"'
            })
            .copied()
            .collect();
        if unquoted.contains(&b',') {
            Delimiter::Comma
        } else if unquoted.contains(&b'\t') {
            Delimiter::Tab
        } else {
            Delimiter::Space
        }
    });
    let first_fields = fields(first, delimiter);
    let header = format.header.unwrap_or_else(|| {
        // Both ids named like columns (`source,target`, `from_id,to_id`): a header. One such name is not enough,
        // since vertices may be called `start` or `end`.
        let named = first_fields.len() >= 2 && first_fields.iter().take(2).all(|(f, _)| is_column_name(f));
        // The other rules take only a first line whose ids could be names: present and not numbers. A line with a
        // number or nothing for an id is data, and a bad value in it is reported, not dropped as a header.
        let could_name = |i: usize| {
            i < first_fields.len() && {
                let f = first_fields.get(i).0;
                !f.is_empty() && parse_float(f).is_none()
            }
        };
        let names_ids = could_name(0) && (first_fields.len() < 2 || could_name(1));
        // Or ids that are no numbers above lines that start with integers.
        let second = lines.clone().next().map(|l| fields(l, delimiter));
        let numeric_second = second.as_ref().and_then(|f| f.first().map(|(f, _)| parse_int(f).is_some()));
        // Or a third field that is no number above a line whose third field is one: `x,y,w` over `a,b,0.5`.
        let weight_named = first_fields.len() == 3
            && could_name(2)
            && second.as_ref().is_some_and(|f| f.len() == 3 && parse_float(f.get(2).0).is_some());
        named || (names_ids && (weight_named || numeric_second.unwrap_or(false)))
    });
    let id_type = format.id_type.unwrap_or_else(|| {
        let sample = if header { lines.next().unwrap_or(&[]) } else { first };
        let width = fields(sample, delimiter).len();
        let mut all_ints = true;
        for line in std::iter::once(sample).chain(lines.take(1000)) {
            let f = fields(line, delimiter);
            // A line of another width is a bad line (reported, or skipped with --skip-bad-lines): its text says
            // nothing of the ids.
            if f.len() != width {
                continue;
            }
            if f.iter().take(2).any(|(x, _)| !is_canonical_int(x)) {
                all_ints = false;
                break;
            }
        }
        if all_ints {
            IdType::Integer
        } else {
            IdType::String
        }
    });
    (delimiter, header, id_type)
}

/// One parsed edge's ids, still raw.
enum RawId<'a> {
    Int(i64),
    Str(&'a [u8]),
}

struct ChunkOut<'a> {
    /// Edges with integer ids (integer mode): 16 bytes an edge.
    ints: Vec<(i64, i64)>,
    /// Edges with string ids, borrowing the input.
    strs: Vec<(&'a [u8], &'a [u8])>,
    /// The hashes of each edge's two names ([`names::hash_name`]), computed here on the parse threads.
    str_hashes: Vec<[u64; 2]>,
    weights: Vec<f64>,
    /// Number of data fields seen on the first data line (2 or 3).
    columns: Option<usize>,
    bad: Vec<BadLine>,
    /// Line number of the chunk's first line (1-based), for messages.
    lines: u64,
}

impl<'a> ChunkOut<'a> {
    /// An edge between string ids, with their names' hashes.
    fn push_names(&mut self, src: &'a [u8], dst: &'a [u8]) {
        self.strs.push((src, dst));
        self.str_hashes.push([names::hash_name(src), names::hash_name(dst)]);
    }
}

fn parse_chunk<'a>(
    chunk: &'a [u8],
    first_line: u64,
    delimiter: Delimiter,
    id_type: IdType,
    columns_hint: Option<usize>,
    max_bad: usize,
    guessed: bool,
) -> ChunkOut<'a> {
    let mut out = ChunkOut {
        ints: Vec::new(),
        strs: Vec::new(),
        str_hashes: Vec::new(),
        weights: Vec::new(),
        columns: columns_hint,
        bad: Vec::new(),
        lines: 0,
    };
    match id_type {
        IdType::Integer => out.ints.reserve(chunk.len() / 12),
        IdType::String => {
            out.strs.reserve(chunk.len() / 16);
            out.str_hashes.reserve(chunk.len() / 16);
        }
    }
    let mut line_no = first_line;
    // Plain `integer<sep>integer[<sep>decimal]` lines (nearly every line of a large edge list) take a direct
    // path; anything else (spaces, signs, exponents, comments, errors) goes through field splitting below.
    let plain = match (delimiter, out.columns) {
        (Delimiter::Comma, Some(columns @ (2 | 3))) => Some((b',', columns == 3)),
        (Delimiter::Tab, Some(columns @ (2 | 3))) => Some((b'\t', columns == 3)),
        _ => None,
    };
    let fast = plain.filter(|_| id_type == IdType::Integer);
    // The same for string ids, in a chunk with no quote and only ASCII (`str_line`).
    let fast_str = plain.filter(|_| id_type == IdType::String && str_line::direct_path_fits(chunk));
    let mut pos = 0usize;
    let mut done = false;
    while !done {
        if let Some((sep, weighted)) = fast_str {
            if let Some(l) = str_line::str_line(chunk, pos, sep, weighted) {
                out.push_names(l.src, l.dst);
                if weighted {
                    out.weights.push(l.weight);
                }
                line_no += 1;
                pos = l.next;
                done = !l.newline;
                continue;
            }
        }
        if let Some((sep, weighted)) = fast {
            if let Some((a, b, w, next, newline)) = int_line(chunk, pos, sep, weighted) {
                out.ints.push((a, b));
                if weighted {
                    out.weights.push(w);
                }
                line_no += 1;
                pos = next;
                done = !newline;
                continue;
            }
        }
        let end = memchr::memchr(b'\n', &chunk[pos..]).map_or(chunk.len(), |p| pos + p);
        let raw = &chunk[pos..end];
        if end == chunk.len() {
            done = true;
        } else {
            pos = end + 1;
        }
        let line = strip_cr(raw);
        line_no += 1;
        if is_blank_or_comment(line) {
            continue;
        }
        let f = fields(line, delimiter);
        let bad = |column: usize, message: String| BadLine {
            line: line_no - 1,
            column: column + 1,
            message,
            text: String::from_utf8_lossy(&line[..line.len().min(200)]).into_owned(),
        };
        if let Some((column, message)) = f.malformed {
            out.bad.push(bad(column, message.into()));
            if out.bad.len() > max_bad {
                break;
            }
            continue;
        }
        let expected = *out.columns.get_or_insert(f.len().clamp(2, 3));
        let problem = if f.len() < 2 || f.len() > 3 {
            Some(bad(0, format!("expected 2 or 3 fields, found {}", f.len())))
        } else if f.len() != expected {
            Some(bad(0, format!("expected {expected} fields like the lines before, found {}", f.len())))
        } else if let Some((_, col)) = f.iter().take(2).find(|(x, _)| x.is_empty()) {
            Some(bad(col, "empty vertex id".into()))
        } else {
            None
        };
        if let Some(p) = problem {
            out.bad.push(p);
            if out.bad.len() > max_bad {
                break;
            }
            continue;
        }
        let id = |(field, col): (&'a [u8], usize)| -> Result<RawId<'a>, BadLine> {
            match id_type {
                IdType::Integer => match parse_int(field) {
                    Some(_) if guessed && drops_text(field) => Err(bad(
                        col,
                        format!(
                            "'{}' has a sign or leading zero that an integer id would drop, merging it with another \
                             (ids were taken for integers from the first lines: add --id-type string to keep them \
                             as written, or --id-type integer to read them as numbers)",
                            String::from_utf8_lossy(field)
                        ),
                    )),
                    Some(v) => Ok(RawId::Int(v)),
                    None => {
                        // The first lines had integers only: later ones may not.
                        let hint = if guessed {
                            " (ids were taken for integers from the first lines: add --id-type string to read them \
                             as strings)"
                        } else {
                            ""
                        };
                        Err(bad(col, format!("'{}' is not an integer vertex id{hint}", String::from_utf8_lossy(field))))
                    }
                },
                IdType::String => match std::str::from_utf8(field) {
                    Ok(_) => Ok(RawId::Str(field)),
                    Err(_) => Err(bad(col, format!("'{}' is not valid UTF-8", String::from_utf8_lossy(field)))),
                },
            }
        };
        let pair = id(f.get(0)).and_then(|s| id(f.get(1)).map(|d| (s, d)));
        let weight = if expected == 3 {
            let (text, column) = f.get(2);
            match parse_float(text) {
                Some(w) => Some(w),
                None => {
                    out.bad.push(bad(column, format!("'{}' is not a number", String::from_utf8_lossy(text))));
                    if out.bad.len() > max_bad {
                        break;
                    }
                    continue;
                }
            }
        } else {
            None
        };
        match pair {
            Ok(p) => {
                match p {
                    (RawId::Int(a), RawId::Int(b)) => out.ints.push((a, b)),
                    (RawId::Str(a), RawId::Str(b)) => out.push_names(a, b),
                    _ => unreachable!("one id type per parse"),
                }
                if let Some(w) = weight {
                    out.weights.push(w);
                }
            }
            Err(b) => {
                out.bad.push(b);
                if out.bad.len() > max_bad {
                    break;
                }
            }
        }
    }
    out.lines = line_no - first_line;
    out
}

/// Splits `input` into about `parts` chunks at line ends; returns (chunk, number of the line before it).
fn split_lines(input: &[u8], parts: usize) -> Vec<(&[u8], u64)> {
    let mut chunks = Vec::new();
    let target = input.len().div_ceil(parts.max(1)).max(1 << 20);
    let mut start = 0;
    let mut line = 0u64;
    while start < input.len() {
        let mut end = (start + target).min(input.len());
        if end < input.len() {
            end = match input[end..].iter().position(|&b| b == b'\n') {
                Some(p) => end + p + 1,
                None => input.len(),
            };
        }
        let chunk = &input[start..end];
        chunks.push((chunk, line));
        line += chunk.iter().filter(|&&b| b == b'\n').count() as u64;
        start = end;
    }
    chunks
}

/// Parses a whole edge list held in memory. Up to `skip_bad_lines` bad lines are collected and skipped; one
/// more is an error.
pub fn parse(input: &[u8], format: &Format, skip_bad_lines: usize) -> Result<EdgeList, ParseError> {
    let (delimiter, header, id_type) = detect(input, format);
    // Drop the header line before splitting, so the chunks hold data only.
    let (body, header_lines) = if header {
        let mut offset = 0;
        let mut lines = 0u64;
        for raw in input.split(|&b| b == b'\n') {
            offset += raw.len() + 1;
            lines += 1;
            if !is_blank_or_comment(strip_cr(raw)) {
                break;
            }
        }
        (&input[offset.min(input.len())..], lines)
    } else {
        (input, 0)
    };
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let chunks = split_lines(body, threads * 4);
    // The column count of the first data line decides for every chunk.
    let columns = body
        .split(|&b| b == b'\n')
        .map(strip_cr)
        .find(|l| !is_blank_or_comment(l))
        .map(|l| fields(l, delimiter).len().clamp(2, 3));
    let next = std::sync::atomic::AtomicUsize::new(0);
    let results = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some(&(chunk, line)) = chunks.get(i) else { break };
                let first = line + header_lines + 1;
                let guessed = format.id_type.is_none();
                let out = parse_chunk(chunk, first, delimiter, id_type, columns, skip_bad_lines, guessed);
                results.lock().expect("no panics while holding").push((i, out));
            });
        }
    });
    let mut results = results.into_inner().expect("threads joined");
    results.sort_by_key(|(i, _)| *i);
    let outs: Vec<ChunkOut> = results.into_iter().map(|(_, o)| o).collect();
    let mut bad_lines: Vec<BadLine> = outs.iter().flat_map(|o| o.bad.iter().cloned()).collect();
    if bad_lines.len() > skip_bad_lines {
        bad_lines.sort_by_key(|b| b.line);
        let bad = bad_lines[skip_bad_lines].clone();
        return Err(ParseError::after(bad, bad_lines[..skip_bad_lines].iter().map(ToString::to_string)));
    }
    let edges: usize = outs.iter().map(|o| o.ints.len() + o.strs.len()).sum();
    if edges > u32::MAX as usize {
        let bad = BadLine { line: 0, column: 0, message: "more than 4 billion edges".into(), text: String::new() };
        return Err(ParseError::after(bad, []));
    }
    let weighted = columns == Some(3);
    let mut weight = weighted.then(|| Vec::with_capacity(edges));
    if let Some(w) = &mut weight {
        for o in &outs {
            w.extend_from_slice(&o.weights);
        }
    }
    let (src, dst, vertices) = match id_type {
        IdType::Integer => number_integer_ids(&outs, edges),
        IdType::String => number_string_ids(&outs, edges),
    };
    Ok(EdgeList { src, dst, weight, vertices, delimiter, header, bad_lines })
}

/// String ids are numbered by first appearance, each edge's source before its target ([`names`]).
fn number_string_ids(outs: &[ChunkOut<'_>], edges: usize) -> (Vec<u32>, Vec<u32>, VertexIds) {
    let chunks: Vec<names::NamedEdges<'_, '_>> = outs.iter().map(|o| (&o.strs[..], &o.str_hashes[..])).collect();
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let (src, dst, names) = names::number_names(&chunks, edges, threads);
    (src, dst, VertexIds::String(names))
}

mod int_ids;
mod int_line;
pub(crate) mod names;
mod str_line;

use int_ids::number_integer_ids;
use int_line::int_line;
#[cfg(test)]
use int_line::short_decimal;
#[cfg(test)]
mod tests;
