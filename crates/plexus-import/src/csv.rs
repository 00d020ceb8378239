//! CSV records as Neo4j's offline importer reads them, and record-aligned parallel chunking.
//!
//! One delimiter byte; a field that *starts* with `"` is quoted: it ends at the next lone `"`, holds `""` for a
//! quote and may span lines; after its closing quote only a delimiter or the end of the line may follow. A `"`
//! inside an unquoted field is an ordinary character. `\r\n` line ends are accepted; blank lines are skipped.
//!
//! Splitting a large input for parallel parsing cannot know where quoted fields are without reading everything
//! before, so chunks are cut at line ends and parsed speculatively, each as if it began at a record: a chunk
//! that ends inside a quoted field tells where its unfinished record began, and that record and the whole next
//! chunk are parsed again from there ([`parse_chunks`]). Chunk `i + 1` is therefore only ever trusted when
//! chunk `i` ended exactly at a record boundary, so a quoted newline never splits a record, whatever the data.
//!
//! Splitting a record allocates nothing: fields are ranges into the input, or into a scratch buffer reused
//! across records for the rare quoted field holding `""`.

use std::ops::Range;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// One field of a record: where its text is and where it started, for messages.
#[derive(Clone, Copy, Debug, Default)]
struct Field {
    start: usize,
    end: usize,
    /// The text is in the record's scratch buffer (a quoted field that held `""`).
    scratch: bool,
    quoted: bool,
    /// Lines between the record's first line and the field's.
    line: u32,
    /// 1-based byte column of the field's first character in its line.
    column: u32,
}

/// The fields of one record, reused from record to record.
#[derive(Debug, Default)]
pub struct Record {
    fields: Vec<Field>,
    scratch: Vec<u8>,
    /// 1-based line number of the record's first line.
    pub line: u64,
    /// Byte range of the record's text in the input (without the line end).
    pub span: Range<usize>,
}

impl Record {
    pub fn len(&self) -> usize {
        self.fields.len()
    }

    pub fn is_empty(&self) -> bool {
        self.fields.is_empty()
    }

    /// Field `i`'s text (quotes removed, `""` turned into `"`); empty past the last field.
    #[inline]
    pub fn get<'a>(&'a self, input: &'a [u8], i: usize) -> &'a [u8] {
        match self.fields.get(i) {
            Some(f) if f.scratch => &self.scratch[f.start..f.end],
            Some(f) => &input[f.start..f.end],
            None => &[],
        }
    }

    /// Field `i`'s text when it lies in the input as is (not unescaped into scratch space), with the input's
    /// lifetime.
    #[inline]
    pub fn get_in<'a>(&self, input: &'a [u8], i: usize) -> Option<&'a [u8]> {
        match self.fields.get(i) {
            Some(f) if !f.scratch => Some(&input[f.start..f.end]),
            Some(_) => None,
            None => Some(&[]),
        }
    }

    /// Field `i` was quoted (so an empty text is an empty string rather than a missing value).
    pub fn quoted(&self, i: usize) -> bool {
        self.fields.get(i).is_some_and(|f| f.quoted)
    }

    /// Line and 1-based column where field `i` starts (past the last field: the end of the record).
    pub fn position(&self, i: usize) -> (u64, usize) {
        match self.fields.get(i) {
            Some(f) => (self.line + f.line as u64, f.column as usize),
            None => match self.fields.last() {
                Some(f) => (self.line + f.line as u64, f.column as usize + (f.end - f.start)),
                None => (self.line, 1),
            },
        }
    }

    /// The record's text for messages, cut at 200 bytes.
    /// The record's text for a message: its first 200 bytes, with "…" after them when there is more.
    pub fn text(&self, input: &[u8]) -> String {
        let text = &input[self.span.clone()];
        let mut out = String::from_utf8_lossy(&text[..text.len().min(200)]).into_owned();
        if text.len() > 200 {
            out.push('…');
        }
        out
    }
}

/// Why a record could not be read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SyntaxError {
    pub line: u64,
    pub column: usize,
    pub message: String,
    pub text: String,
}

/// What [`Reader::next`] found.
#[derive(Debug, PartialEq, Eq)]
pub enum Next {
    Record,
    End,
    /// The input ends inside a quoted field of the record starting at this byte offset and line.
    Open {
        offset: usize,
        line: u64,
    },
}

/// Reads records from `input[pos..]`.
pub struct Reader<'a> {
    input: &'a [u8],
    pub pos: usize,
    /// Line number of the line `pos` is on.
    pub line: u64,
    delimiter: u8,
    quote: u8,
    /// Blanks around a quoted field are skipped (Neo4j's `--trim-strings`).
    trim: bool,
}

impl<'a> Reader<'a> {
    pub fn new(input: &'a [u8], pos: usize, line: u64, delimiter: u8) -> Reader<'a> {
        Reader { input, pos, line, delimiter, quote: b'"', trim: false }
    }

    /// The same reader with `quote` as the quoting character instead of `"`, and, when `trim`, blanks (spaces and
    /// tabs that are not the delimiter) skipped before a field's opening quote and after its closing one, so that
    /// `1, "a,b" ,2` has three fields. (An unquoted field keeps its blanks here; its value is trimmed.)
    pub fn quoting(self, quote: u8, trim: bool) -> Reader<'a> {
        Reader { quote, trim, ..self }
    }

    /// `pos` moved past blanks when trimming.
    fn past_blanks(&self, mut pos: usize) -> usize {
        if self.trim {
            while pos < self.input.len() && matches!(self.input[pos], b' ' | b'\t') && self.input[pos] != self.delimiter
            {
                pos += 1;
            }
        }
        pos
    }

    /// Skips the rest of the current line (after a syntax error).
    fn skip_line(&mut self, from: usize) {
        match memchr::memchr(b'\n', &self.input[from.min(self.input.len())..]) {
            Some(p) => {
                self.pos = from + p + 1;
                self.line += 1;
            }
            None => self.pos = self.input.len(),
        }
    }

    /// Reads the next record into `rec`. On a syntax error the rest of the offending line is skipped, so the
    /// caller may go on with the next record.
    pub fn next(&mut self, rec: &mut Record) -> Result<Next, SyntaxError> {
        let input = self.input;
        rec.fields.clear();
        rec.scratch.clear();
        // Skip blank lines.
        loop {
            if self.pos >= input.len() {
                return Ok(Next::End);
            }
            match input[self.pos] {
                b'\n' => {
                    self.pos += 1;
                    self.line += 1;
                }
                b'\r' if input.get(self.pos + 1) == Some(&b'\n') => {
                    self.pos += 2;
                    self.line += 1;
                }
                _ => break,
            }
        }
        let (record_start, record_line) = (self.pos, self.line);
        rec.line = record_line;
        let mut line_start = record_start;
        let mut pos = record_start;
        // The first quoted field that ran over a line end: its line, column and byte offset.
        let mut first_multiline: Option<(u64, usize, usize)> = None;
        loop {
            // At the start of a field.
            let column = (pos - line_start + 1) as u32;
            let line = (self.line - record_line) as u32;
            let opening = self.past_blanks(pos);
            if opening < input.len() && input[opening] == self.quote {
                pos = opening;
                let mut seg = pos + 1;
                let mut scratch_start: Option<usize> = None;
                let end;
                loop {
                    let Some(q) = memchr::memchr(self.quote, &input[seg..]) else {
                        return Ok(Next::Open { offset: record_start, line: record_line });
                    };
                    let q = seg + q;
                    for nl in memchr::memchr_iter(b'\n', &input[seg..q]) {
                        first_multiline.get_or_insert((self.line, column as usize, pos));
                        self.line += 1;
                        line_start = seg + nl + 1;
                    }
                    if input.get(q + 1) == Some(&self.quote) {
                        scratch_start.get_or_insert(rec.scratch.len());
                        rec.scratch.extend_from_slice(&input[seg..=q]);
                        seg = q + 2;
                        continue;
                    }
                    if let Some(s) = scratch_start {
                        rec.scratch.extend_from_slice(&input[seg..q]);
                        rec.fields.push(Field {
                            start: s,
                            end: rec.scratch.len(),
                            scratch: true,
                            quoted: true,
                            line,
                            column,
                        });
                    } else {
                        rec.fields.push(Field { start: pos + 1, end: q, scratch: false, quoted: true, line, column });
                    }
                    end = q + 1;
                    break;
                }
                pos = self.past_blanks(end);
                match input.get(pos) {
                    None => {
                        self.pos = pos;
                        break;
                    }
                    Some(&b) if b == self.delimiter => pos += 1,
                    Some(b'\n') => {
                        self.pos = pos + 1;
                        self.line += 1;
                        break;
                    }
                    Some(b'\r') if matches!(input.get(pos + 1), Some(b'\n') | None) => {
                        self.pos = (pos + 2).min(input.len());
                        if input.get(pos + 1).is_some() {
                            self.line += 1;
                        }
                        break;
                    }
                    Some(_) => {
                        let column = pos - line_start + 1;
                        if let Some((line, field_column, field_at)) = first_multiline {
                            // A quote opened on an earlier line and closed only here, where the record makes no
                            // sense: most likely a stray quote. The error is the quote's, and reading goes on at
                            // the line after it, so the lines it would have swallowed are read as records.
                            let error = SyntaxError {
                                line,
                                column: field_column,
                                message: format!(
                                    "a quoted field is not closed on its line (read as running over lines \
                                     {line}-{}, it is followed by other characters at line {}, column {column})",
                                    self.line, self.line
                                ),
                                text: lossy(&input[field_at + 1 - field_column..line_end(input, field_at)]),
                            };
                            self.line = line;
                            self.skip_line(field_at);
                            return Err(error);
                        }
                        let error = SyntaxError {
                            line: self.line,
                            column,
                            message: "characters after the closing quote of a quoted field".into(),
                            text: lossy(&input[line_start..line_end(input, pos)]),
                        };
                        self.skip_line(pos);
                        return Err(error);
                    }
                }
            } else {
                let (end, terminator) = match memchr::memchr2(self.delimiter, b'\n', &input[pos..]) {
                    Some(p) => (pos + p, Some(input[pos + p])),
                    None => (input.len(), None),
                };
                let text_end = if terminator != Some(self.delimiter) && end > pos && input[end - 1] == b'\r' {
                    end - 1
                } else {
                    end
                };
                rec.fields.push(Field { start: pos, end: text_end, scratch: false, quoted: false, line, column });
                match terminator {
                    Some(b'\n') => {
                        self.pos = end + 1;
                        self.line += 1;
                        break;
                    }
                    None => {
                        self.pos = end;
                        break;
                    }
                    Some(_) => pos = end + 1,
                }
            }
        }
        let mut span_end = self.pos.min(input.len());
        while span_end > record_start && matches!(input[span_end - 1], b'\n' | b'\r') {
            span_end -= 1;
        }
        rec.span = record_start..span_end;
        Ok(Next::Record)
    }
}

pub(crate) fn line_end(input: &[u8], from: usize) -> usize {
    memchr::memchr(b'\n', &input[from..]).map_or(input.len(), |p| from + p)
}

fn lossy(text: &[u8]) -> String {
    String::from_utf8_lossy(&text[..text.len().min(200)]).into_owned()
}

/// What parsing one chunk produced.
pub struct ChunkResult<T> {
    pub out: T,
    /// The chunk ended inside a quoted field of the record starting here (offset into the whole input, line).
    pub open: Option<(usize, u64)>,
}

/// Cuts `input[start..]` into about `parts` pieces at line ends (each at least `min` bytes).
fn cut(input: &[u8], start: usize, parts: usize, min: usize) -> Vec<Range<usize>> {
    let target = (input.len() - start).div_ceil(parts.max(1)).max(min).max(1);
    let mut ranges = Vec::new();
    let mut at = start;
    while at < input.len() {
        let mut end = (at + target).min(input.len());
        if end < input.len() {
            end = memchr::memchr(b'\n', &input[end..]).map_or(input.len(), |p| end + p + 1);
        }
        ranges.push(at..end);
        at = end;
    }
    ranges
}

/// Parses `input[start..]` (whose first line is `first_line`) in parallel chunks of at least `min` bytes.
/// `parse(range, line, last)` parses the records of `input[range]` starting at line `line`; `last` says the
/// range runs to the end of the input (so an open quoted field is an error there, not a cut). Results come back
/// in input order; a chunk that ends inside a quoted field is re-parsed together with the next one.
pub fn parse_chunks<T: Send>(
    input: &[u8],
    start: usize,
    first_line: u64,
    threads: usize,
    min: usize,
    parse: impl Fn(Range<usize>, u64, bool) -> ChunkResult<T> + Sync,
) -> Vec<T> {
    let ranges = cut(input, start, threads * 4, min);
    if ranges.is_empty() {
        return Vec::new();
    }
    // Line numbers: count line ends per chunk in parallel, then add up.
    let newlines =
        run_parallel(threads, ranges.len(), |i| memchr::memchr_iter(b'\n', &input[ranges[i].clone()]).count());
    let mut lines = Vec::with_capacity(ranges.len());
    let mut line = first_line;
    for n in &newlines {
        lines.push(line);
        line += *n as u64;
    }
    let n = ranges.len();
    let mut results: Vec<Option<ChunkResult<T>>> =
        run_parallel(threads, n, |i| Some(parse(ranges[i].clone(), lines[i], i + 1 == n)));
    let mut outs = Vec::with_capacity(n);
    let mut i = 0;
    while i < n {
        let r = results[i].take().expect("each chunk taken once");
        let open = r.open;
        outs.push(r.out);
        if let Some((offset, line)) = open {
            // Chunk i + 1 began inside a quoted field: parse from the open record through its end instead.
            debug_assert!(i + 1 < n, "the last chunk reports open fields as errors");
            let redo = parse(offset..ranges[i + 1].end, line, i + 2 == n);
            results[i + 1] = Some(redo);
        }
        i += 1;
    }
    outs
}

/// Runs `f(0..n)` on up to `threads` threads, results in index order.
pub fn run_parallel<T: Send>(threads: usize, n: usize, f: impl Fn(usize) -> T + Sync) -> Vec<T> {
    if threads <= 1 || n <= 1 {
        return (0..n).map(f).collect();
    }
    let next = AtomicUsize::new(0);
    let results = Mutex::new(Vec::with_capacity(n));
    std::thread::scope(|scope| {
        for _ in 0..threads.min(n) {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= n {
                    break;
                }
                let out = f(i);
                results.lock().expect("no panics while holding").push((i, out));
            });
        }
    });
    let mut results = results.into_inner().expect("threads joined");
    results.sort_by_key(|(i, _)| *i);
    results.into_iter().map(|(_, r)| r).collect()
}

/// Number of worker threads for parsing.
pub fn threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// A record's line and fields.
    type Row = (u64, Vec<Vec<u8>>);

    /// Every record of `input` as owned fields (a syntax error as `Err`).
    fn records(input: &[u8], delimiter: u8) -> Vec<Result<Row, SyntaxError>> {
        let mut reader = Reader::new(input, 0, 1, delimiter);
        let mut rec = Record::default();
        let mut out = Vec::new();
        loop {
            match reader.next(&mut rec) {
                Ok(Next::Record) => {
                    out.push(Ok((rec.line, (0..rec.len()).map(|i| rec.get(input, i).to_vec()).collect())))
                }
                Ok(Next::End) => break,
                Ok(Next::Open { .. }) => {
                    out.push(Err(SyntaxError { line: 0, column: 0, message: "open".into(), text: String::new() }));
                    break;
                }
                Err(e) => out.push(Err(e)),
            }
        }
        out
    }

    fn fields(input: &str) -> Vec<Vec<String>> {
        records(input.as_bytes(), b',')
            .into_iter()
            .map(|r| r.unwrap().1.into_iter().map(|f| String::from_utf8(f).unwrap()).collect())
            .collect()
    }

    #[test]
    fn splits_quoted_and_plain_fields() {
        assert_eq!(fields("a,b,c\n"), [["a", "b", "c"]]);
        assert_eq!(
            fields("a,,\r\n\n1,\"x,y\",\"say \"\"hi\"\"\"\n"),
            [vec!["a", "", ""], vec!["1", "x,y", "say \"hi\""]]
        );
        assert_eq!(fields("\"multi\nline\",2\nnext,3"), [vec!["multi\nline", "2"], vec!["next", "3"]]);
        assert_eq!(fields("5'11\" tall,x\n"), [["5'11\" tall", "x"]]);
        assert_eq!(fields("\"\",\"\"\"\"\n"), [["", "\""]]);
    }

    #[test]
    fn trimming_skips_blanks_around_a_quoted_field() {
        let read = |input: &[u8], quote: u8, trim: bool| {
            let mut reader = Reader::new(input, 0, 1, b',').quoting(quote, trim);
            let mut rec = Record::default();
            reader.next(&mut rec).unwrap();
            (0..rec.len())
                .map(|i| (String::from_utf8_lossy(rec.get(input, i)).into_owned(), rec.quoted(i)))
                .collect::<Vec<_>>()
        };
        let owned = |v: &[(&str, bool)]| v.iter().map(|(s, q)| (s.to_string(), *q)).collect::<Vec<_>>();
        let line = b"1, \"a,b\" , c ,\t'x'\n";
        assert_eq!(read(line, b'"', true), owned(&[("1", false), ("a,b", true), (" c ", false), ("\t'x'", false)]));
        assert_eq!(read(b"'p''q' ,2\n", b'\'', true), owned(&[("p'q", true), ("2", false)]));
        // Without trimming a quote after a blank is an ordinary character.
        assert_eq!(read(b"1, \"a\"\n", b'"', false), owned(&[("1", false), (" \"a\"", false)]));
    }

    #[test]
    fn positions_count_lines_inside_quotes() {
        let input = b"a,b\n\"x\ny\",z\nq,r\n";
        let mut reader = Reader::new(input, 0, 1, b',');
        let mut rec = Record::default();
        reader.next(&mut rec).unwrap();
        reader.next(&mut rec).unwrap();
        assert_eq!((rec.line, rec.position(0), rec.position(1)), (2, (2, 1), (3, 4)));
        reader.next(&mut rec).unwrap();
        assert_eq!((rec.line, rec.position(1)), (4, (4, 3)));
        assert_eq!(rec.text(input), "q,r");
        // A long record is quoted in part, and says so.
        let long = format!("{},x\n", "a".repeat(300));
        let mut reader = Reader::new(long.as_bytes(), 0, 1, b',');
        reader.next(&mut rec).unwrap();
        let text = rec.text(long.as_bytes());
        assert!(text.starts_with(&"a".repeat(200)) && text.ends_with('…') && text.chars().count() == 201, "{text}");
    }

    #[test]
    fn junk_after_a_closing_quote_is_an_error_and_reading_goes_on() {
        let r = records(b"\"ab\"c,d\ne,f\n", b',');
        let e = r[0].clone().unwrap_err();
        assert_eq!((e.line, e.column), (1, 5), "{e:?}");
        assert_eq!(r[1].clone().unwrap(), (2, vec![b"e".to_vec(), b"f".to_vec()]));
        // An unterminated quote runs to the end of the input.
        let mut reader = Reader::new(b"1,2\n\"open,3\n4,5\n", 0, 1, b',');
        let mut rec = Record::default();
        reader.next(&mut rec).unwrap();
        assert_eq!(reader.next(&mut rec).unwrap(), Next::Open { offset: 4, line: 2 });
    }

    /// Parses with chunking forced small, collecting records as (line, fields).
    fn chunked(input: &[u8], min: usize, threads: usize) -> Vec<Result<Row, String>> {
        let outs = parse_chunks(input, 0, 1, threads, min, |range, line, last| {
            let slice = &input[..range.end];
            let mut reader = Reader::new(slice, range.start, line, b',');
            let mut rec = Record::default();
            let mut out = Vec::new();
            loop {
                match reader.next(&mut rec) {
                    Ok(Next::Record) => {
                        out.push(Ok((rec.line, (0..rec.len()).map(|i| rec.get(slice, i).to_vec()).collect())))
                    }
                    Ok(Next::End) => return ChunkResult { out, open: None },
                    Ok(Next::Open { offset, line }) if !last => return ChunkResult { out, open: Some((offset, line)) },
                    Ok(Next::Open { .. }) => {
                        out.push(Err("open".to_string()));
                        return ChunkResult { out, open: None };
                    }
                    Err(e) => out.push(Err(format!("{}:{}", e.line, e.column))),
                }
            }
        });
        outs.into_iter().flatten().collect()
    }

    fn render(rows: &[Vec<String>]) -> String {
        let mut s = String::new();
        for row in rows {
            let fields: Vec<String> = row
                .iter()
                .map(|f| {
                    if f.contains([',', '"', '\n']) || f.is_empty() {
                        format!("\"{}\"", f.replace('"', "\"\""))
                    } else {
                        f.clone()
                    }
                })
                .collect();
            s.push_str(&fields.join(","));
            s.push('\n');
        }
        s
    }

    #[test]
    fn chunks_never_split_a_quoted_newline() {
        let rows: Vec<Vec<String>> =
            (0..500).map(|i| vec![i.to_string(), format!("line {i}\nmore\n\n{i}"), "x".into()]).collect();
        let text = render(&rows);
        let got = chunked(text.as_bytes(), 7, 3);
        assert_eq!(got.len(), 500);
        for (i, r) in got.iter().enumerate() {
            let (line, fields) = r.as_ref().unwrap();
            assert_eq!(*line, 1 + 4 * i as u64);
            assert_eq!(fields[1], rows[i][1].as_bytes());
        }
    }

    proptest! {
        #[test]
        fn quoting_round_trips_and_chunking_matches_one_pass(
            rows in proptest::collection::vec(
                proptest::collection::vec("[a-c,\"\n x]{0,6}", 1..4), 0..40),
            min in 1usize..40,
            threads in 1usize..4,
        ) {
            let text = render(&rows);
            let one = records(text.as_bytes(), b',');
            // Blank-looking rows (one empty unquoted field) are rendered quoted, so nothing is skipped.
            let expect: Vec<Vec<Vec<u8>>> =
                rows.iter().map(|r| r.iter().map(|f| f.as_bytes().to_vec()).collect()).collect();
            let got: Vec<Vec<Vec<u8>>> = one.iter().map(|r| r.clone().unwrap().1).collect();
            prop_assert_eq!(&got, &expect);
            let many: Vec<_> = chunked(text.as_bytes(), min, threads);
            let one: Vec<_> = one.into_iter().map(|r| r.map_err(|e| format!("{}:{}", e.line, e.column))).collect();
            prop_assert_eq!(many, one);
        }
    }
}
