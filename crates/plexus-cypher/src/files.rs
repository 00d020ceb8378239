//! Files a statement may read (`LOAD CSV`), and reading CSV records from them.
//!
//! Which files is the embedding program's choice ([`FileAccess`], set with `Engine::set_file_access`): an
//! embedded database reads any file its process can (the program's own files, as `sqlite3`'s `.import` does); a
//! server reads only under its import directory, where a URL `file:///people.csv` names `IMPORT/people.csv` and
//! nothing may lead outside (no `..`, no symbolic link out), as Neo4j does with its import directory.

use std::io::{BufRead, BufReader, Read};
use std::path::{Component, Path, PathBuf};

use crate::error::{CypherError, ErrorKind, Phase, Result};

/// The files `LOAD CSV` may read.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum FileAccess {
    /// Any file the process can read; relative paths from its working directory.
    #[default]
    Anywhere,
    /// Only files under this directory; every URL's path is taken relative to it.
    Under(PathBuf),
    /// None: `LOAD CSV` is refused.
    Nowhere,
}

fn failed(message: impl Into<String>) -> CypherError {
    CypherError::new(ErrorKind::ExternalResource, Phase::Runtime, "ExternalResourceFailed", message)
}

impl FileAccess {
    /// The file a `LOAD CSV` URL names (`file:///path`, `file:path` or a plain path), if it may be read.
    pub fn resolve(&self, url: &str) -> Result<PathBuf> {
        let decoded;
        let path = match url.split_once("://") {
            Some((scheme, rest)) if scheme.eq_ignore_ascii_case("file") => {
                // A URL spells a space `%20`, as Neo4j requires.
                decoded = percent_decoded(rest);
                decoded.as_str()
            }
            Some((scheme, _)) => {
                return Err(failed(format!(
                    "LOAD CSV reads local files only (file:///...), not {scheme}:// URLs: cannot load {url}"
                )))
            }
            None => url.strip_prefix("file:").unwrap_or(url),
        };
        if path.is_empty() {
            return Err(failed(format!("LOAD CSV needs the path of a file, got '{url}'")));
        }
        match self {
            FileAccess::Anywhere => Ok(PathBuf::from(path)),
            FileAccess::Nowhere => Err(failed(format!(
                "LOAD CSV is not allowed here: this server has no import directory (cannot load {url})"
            ))),
            FileAccess::Under(root) => {
                let mut inside = PathBuf::new();
                for part in Path::new(path).components() {
                    match part {
                        Component::Normal(name) => inside.push(name),
                        Component::RootDir | Component::CurDir => {}
                        Component::ParentDir | Component::Prefix(_) => {
                            return Err(failed(format!(
                                "LOAD CSV reads files inside the import directory only; '{url}' leads outside it"
                            )))
                        }
                    }
                }
                if !root.is_dir() {
                    return Err(failed(format!(
                        "cannot load {url}: the import directory {} does not exist (create it and put the file there)",
                        root.display()
                    )));
                }
                let file = root.join(&inside);
                // A symbolic link may still lead out: what it resolves to must be inside too.
                let (Ok(real_root), Ok(real_file)) = (root.canonicalize(), file.canonicalize()) else {
                    return Err(failed(format!(
                        "cannot load {url}: no file {} in the import directory {}",
                        inside.display(),
                        root.display()
                    )));
                };
                if !real_file.starts_with(&real_root) {
                    return Err(failed(format!(
                        "LOAD CSV reads files inside the import directory only; '{url}' leads outside it"
                    )));
                }
                Ok(real_file)
            }
        }
    }
}

/// `%XX` escapes decoded (anything else, and an escape that is not one, kept as written).
fn percent_decoded(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        match (bytes[i], bytes.get(i + 1).and_then(|&b| hex(b)), bytes.get(i + 2).and_then(|&b| hex(b))) {
            (b'%', Some(hi), Some(lo)) => {
                out.push((hi * 16 + lo) as u8);
                i += 3;
            }
            (b, _, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8(out).unwrap_or_else(|_| s.to_string())
}

/// The longest record read: a longer one (a file with no line breaks, an unclosed quote running on) is an error
/// rather than all of memory.
pub const MAX_RECORD_BYTES: usize = 64 << 20;

/// A CSV file read one record at a time: RFC 4180 fields (a quote opening a field runs to the closing quote, which
/// may be lines later; `""` and `\"` inside stand for a quote, as Neo4j reads them), a chosen one-byte field
/// separator, a UTF-8 byte-order mark skipped, `.gz` and `.zst` files decompressed. A quote elsewhere in a field
/// is an ordinary character. An unquoted empty field is `None` (Cypher's null), a quoted one `Some("")`.
pub struct CsvRecords {
    input: Box<dyn BufRead>,
    separator: u8,
    url: String,
    /// The line the next record starts on (1-based), for error messages.
    line: u64,
    started: bool,
}

impl CsvRecords {
    /// Opens the file at `path`. Only regular files are read: a FIFO or a device could block or never end.
    pub fn open(path: &Path, url: &str, separator: u8) -> Result<CsvRecords> {
        let file = std::fs::File::open(path).map_err(|e| failed(format!("cannot load {url}: {e}")))?;
        match file.metadata() {
            Ok(m) if m.is_file() => {}
            Ok(m) if m.is_dir() => return Err(failed(format!("cannot load {url}: it is a directory"))),
            _ => return Err(failed(format!("cannot load {url}: not a regular file"))),
        }
        let name = path.to_string_lossy().to_ascii_lowercase();
        let input: Box<dyn Read> = if name.ends_with(".gz") {
            Box::new(flate2::read::MultiGzDecoder::new(file))
        } else if name.ends_with(".zst") {
            Box::new(zstd::stream::read::Decoder::new(file).map_err(|e| failed(format!("cannot load {url}: {e}")))?)
        } else {
            Box::new(file)
        };
        Ok(CsvRecords::from_reader(Box::new(BufReader::with_capacity(1 << 16, input)), url, separator))
    }

    pub fn from_reader(input: Box<dyn BufRead>, url: &str, separator: u8) -> CsvRecords {
        CsvRecords { input, separator, url: url.to_string(), line: 1, started: false }
    }

    /// The input's buffered bytes (empty at its end), past a byte-order mark at the start.
    fn fill(&mut self) -> Result<&[u8]> {
        if !self.started {
            self.started = true;
            let buf =
                self.input.fill_buf().map_err(|e| failed(format!("reading {} (line {}): {e}", self.url, self.line)))?;
            if buf.starts_with(b"\xEF\xBB\xBF") {
                self.input.consume(3);
            }
        }
        self.input.fill_buf().map_err(|e| failed(format!("reading {} (line {}): {e}", self.url, self.line)))
    }

    /// The next byte, or `None` at the end of the input.
    fn byte(&mut self) -> Result<Option<u8>> {
        let Some(&b) = self.fill()?.first() else { return Ok(None) };
        self.input.consume(1);
        Ok(Some(b))
    }

    fn peek(&mut self) -> Result<Option<u8>> {
        Ok(self.fill()?.first().copied())
    }

    /// The next record's fields, or `None` at the end of the file; `line_number` is set to the line it starts
    /// on. Blank lines are skipped.
    pub fn next_record(&mut self, line_number: &mut u64) -> Result<Option<Vec<Option<String>>>> {
        // Blank lines first.
        loop {
            match self.peek()? {
                None => return Ok(None),
                Some(b'\n') => {
                    self.byte()?;
                    self.line += 1;
                }
                Some(b'\r') => {
                    self.byte()?;
                }
                Some(_) => break,
            }
        }
        let start = self.line;
        *line_number = start;
        let sep = self.separator;
        let mut fields = Vec::new();
        let mut field: Vec<u8> = Vec::new();
        let mut size = 0usize;
        loop {
            // At the start of a field.
            if self.peek()? == Some(b'"') {
                self.byte()?;
                loop {
                    let Some(b) = self.byte()? else {
                        return Err(failed(format!(
                            "{}: a quoted field opened on line {start} is not closed by the end of the file",
                            self.url
                        )));
                    };
                    match b {
                        b'"' if self.peek()? == Some(b'"') => {
                            self.byte()?;
                            field.push(b'"');
                        }
                        b'"' => break,
                        b'\\' if self.peek()? == Some(b'"') => {
                            self.byte()?;
                            field.push(b'"');
                        }
                        b'\n' => {
                            self.line += 1;
                            field.push(b);
                        }
                        _ => field.push(b),
                    }
                    size += 1;
                    if size > MAX_RECORD_BYTES {
                        return Err(self.too_long(start));
                    }
                }
                match self.peek()? {
                    Some(b) if b == sep => {}
                    None | Some(b'\n') | Some(b'\r') => {}
                    Some(_) => {
                        return Err(failed(format!(
                            "{} (line {}): a field that starts with a quote has more text after its closing quote; \
                             double a quote inside a quoted field (\"\")",
                            self.url, self.line
                        )))
                    }
                }
                fields.push(Some(self.text(std::mem::take(&mut field), start)?));
            } else {
                loop {
                    match self.peek()? {
                        Some(b) if b == sep => break,
                        None | Some(b'\n') => break,
                        Some(b'\r') => {
                            self.byte()?;
                            if matches!(self.peek()?, None | Some(b'\n')) {
                                break;
                            }
                            field.push(b'\r');
                        }
                        Some(b) => {
                            self.byte()?;
                            field.push(b);
                        }
                    }
                    size += 1;
                    if size > MAX_RECORD_BYTES {
                        return Err(self.too_long(start));
                    }
                }
                let raw = std::mem::take(&mut field);
                fields.push(if raw.is_empty() { None } else { Some(self.text(raw, start)?) });
            }
            // After a field: a separator, or the end of the record.
            match self.byte()? {
                Some(b) if b == sep => {
                    // A separator at the end of the record: one more, empty, field.
                    if matches!(self.peek()?, None | Some(b'\n') | Some(b'\r')) {
                        fields.push(None);
                        self.end_of_record()?;
                        return Ok(Some(fields));
                    }
                }
                Some(b'\r') => {
                    self.end_of_record()?;
                    return Ok(Some(fields));
                }
                Some(b'\n') => {
                    self.line += 1;
                    return Ok(Some(fields));
                }
                None => return Ok(Some(fields)),
                Some(_) => unreachable!("a field ends at a separator or a line break"),
            }
        }
    }

    /// Consumes the line break that ends a record (`\r\n`, `\n`, a lone `\r`, or the end of the file).
    fn end_of_record(&mut self) -> Result<()> {
        if self.peek()? == Some(b'\r') {
            self.byte()?;
        }
        if self.peek()? == Some(b'\n') {
            self.byte()?;
        }
        self.line += 1;
        Ok(())
    }

    fn too_long(&self, line: u64) -> CypherError {
        failed(format!(
            "{} (line {line}): a record longer than {} MiB (no line break, or a quote never closed?)",
            self.url,
            MAX_RECORD_BYTES >> 20
        ))
    }

    fn text(&self, bytes: Vec<u8>, line: u64) -> Result<String> {
        String::from_utf8(bytes).map_err(|_| failed(format!("{} (line {line}): the text is not UTF-8", self.url)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn records(text: &str, sep: u8) -> Result<Vec<Vec<Option<String>>>> {
        let mut r = CsvRecords::from_reader(Box::new(std::io::Cursor::new(text.as_bytes().to_vec())), "test.csv", sep);
        let mut out = Vec::new();
        let mut line = 0;
        while let Some(rec) = r.next_record(&mut line)? {
            out.push(rec);
        }
        Ok(out)
    }

    fn s(x: &str) -> Option<String> {
        Some(x.to_string())
    }

    #[test]
    fn fields_quotes_and_empties() {
        assert_eq!(
            records("a,b,c\n1,,\"x, y\"\n\"he said \"\"hi\"\"\",\"\",z\r\n", b',').unwrap(),
            vec![vec![s("a"), s("b"), s("c")], vec![s("1"), None, s("x, y")], vec![s("he said \"hi\""), s(""), s("z")],]
        );
        assert_eq!(records("a,\n\n,b\n", b',').unwrap(), vec![vec![s("a"), None], vec![None, s("b")]]);
        assert_eq!(records("\u{feff}k\tv\n1\t2", b'\t').unwrap(), vec![vec![s("k"), s("v")], vec![s("1"), s("2")]]);
        assert_eq!(records("\"multi\nline\",2\n", b',').unwrap(), vec![vec![s("multi\nline"), s("2")]]);
        assert_eq!(records("\"a\",\n", b',').unwrap(), vec![vec![s("a"), None]]);
        assert!(records("\"never closed,1\n2,3\n", b',').is_err());
        assert!(records("\"a\"b,1\n", b',').is_err(), "text after a closing quote");
        // A quote inside an unquoted field is an ordinary character: the next line is its own record.
        assert_eq!(
            records("1,5'11\",a\n2,6'0\",b\n", b',').unwrap(),
            vec![vec![s("1"), s("5'11\""), s("a")], vec![s("2"), s("6'0\""), s("b")]]
        );
        assert!(records("a\"b,\"c\n", b',').is_err(), "a quote opening the last field and never closed");
        assert_eq!(records("\"a \\\"q\\\" b\",x\n", b',').unwrap(), vec![vec![s("a \"q\" b"), s("x")]]);
        assert_eq!(records("a\r\nb\rc\n", b',').unwrap(), vec![vec![s("a")], vec![s("b\rc")]]);
        assert_eq!(records("x,\r\n", b',').unwrap(), vec![vec![s("x"), None]]);
        // Many lines inside one quoted field take linear time.
        let long = format!("\"{}\",1\n", "line\n".repeat(200_000));
        assert_eq!(records(&long, b',').unwrap()[0][1], s("1"));
    }

    #[test]
    fn paths_stay_inside_the_import_directory() {
        let dir = std::env::temp_dir().join(format!("plexus-files-test-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("sub")).unwrap();
        std::fs::write(dir.join("sub/a.csv"), "1\n").unwrap();
        let access = FileAccess::Under(dir.clone());
        let real = dir.canonicalize().unwrap().join("sub/a.csv");
        assert_eq!(access.resolve("file:///sub/a.csv").unwrap(), real);
        assert_eq!(access.resolve("sub/a.csv").unwrap(), real);
        std::fs::write(dir.join("sub/a b.csv"), "1\n").unwrap();
        assert_eq!(access.resolve("file:///sub/a%20b.csv").unwrap(), dir.canonicalize().unwrap().join("sub/a b.csv"));
        assert!(access.resolve("file:///sub/%2e%2e/%2e%2e/x").is_err(), "decoded dots lead nowhere either");
        for bad in ["file:///../etc/passwd", "file:///sub/../../x", "https://example.com/a.csv", "file:///missing.csv"]
        {
            assert_eq!(access.resolve(bad).unwrap_err().kind, ErrorKind::ExternalResource, "{bad}");
        }
        assert!(FileAccess::Nowhere.resolve("file:///sub/a.csv").is_err());
        assert_eq!(FileAccess::Anywhere.resolve("file:///tmp/x.csv").unwrap(), PathBuf::from("/tmp/x.csv"));
        std::fs::remove_dir_all(dir).unwrap();
    }
}
