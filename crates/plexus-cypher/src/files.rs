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
        let path = match url.split_once("://") {
            Some((scheme, rest)) if scheme.eq_ignore_ascii_case("file") => rest,
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

/// A CSV file read one record at a time: RFC 4180 fields (quotes doubled inside quoted fields, which may span
/// lines), a chosen one-byte field separator, a UTF-8 byte-order mark skipped, `.gz` and `.zst` files
/// decompressed. An unquoted empty field is `None` (Cypher's null), a quoted one `Some("")`.
pub struct CsvRecords {
    input: Box<dyn BufRead>,
    separator: u8,
    url: String,
    /// The line the next record starts on (1-based), for error messages and `linenumber()`.
    line: u64,
    line_buf: Vec<u8>,
    started: bool,
}

impl CsvRecords {
    pub fn open(path: &Path, url: &str, separator: u8) -> Result<CsvRecords> {
        let file = std::fs::File::open(path).map_err(|e| failed(format!("cannot load {url}: {e}")))?;
        if file.metadata().is_ok_and(|m| m.is_dir()) {
            return Err(failed(format!("cannot load {url}: it is a directory")));
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
        CsvRecords { input, separator, url: url.to_string(), line: 1, line_buf: Vec::new(), started: false }
    }

    fn read_line(&mut self) -> Result<bool> {
        self.line_buf.clear();
        let n = self
            .input
            .read_until(b'\n', &mut self.line_buf)
            .map_err(|e| failed(format!("reading {} (line {}): {e}", self.url, self.line)))?;
        if !self.started {
            self.started = true;
            if self.line_buf.starts_with(b"\xEF\xBB\xBF") {
                self.line_buf.drain(..3);
            }
        }
        Ok(n > 0)
    }

    /// The next record's fields, or `None` at the end of the file; `line_number` is set to the line it starts
    /// on. Blank lines are skipped.
    pub fn next_record(&mut self, line_number: &mut u64) -> Result<Option<Vec<Option<String>>>> {
        loop {
            if !self.read_line()? {
                return Ok(None);
            }
            if !trim_newline(&self.line_buf).is_empty() {
                break;
            }
            self.line += 1;
        }
        let start = self.line;
        *line_number = start;
        let mut record = trim_newline(&self.line_buf).to_vec();
        self.line += 1;
        // An odd number of quotes so far: a quoted field goes on over the line break, which it keeps.
        while record.iter().filter(|&&b| b == b'"').count() % 2 == 1 {
            let ending = line_ending(&self.line_buf).to_vec();
            if ending.is_empty() || !self.read_line()? {
                return Err(failed(format!(
                    "{}: a quoted field opened on line {start} is not closed by the end of the file",
                    self.url
                )));
            }
            record.extend_from_slice(&ending);
            record.extend_from_slice(trim_newline(&self.line_buf));
            self.line += 1;
        }
        self.fields(&record, start).map(Some)
    }

    fn fields(&self, record: &[u8], line: u64) -> Result<Vec<Option<String>>> {
        let sep = self.separator;
        let mut fields = Vec::new();
        let mut i = 0;
        loop {
            if record.get(i) == Some(&b'"') {
                let mut field = Vec::new();
                i += 1;
                loop {
                    match record.get(i) {
                        Some(b'"') if record.get(i + 1) == Some(&b'"') => {
                            field.push(b'"');
                            i += 2;
                        }
                        Some(b'"') | None => {
                            i += 1;
                            break;
                        }
                        Some(&b) => {
                            field.push(b);
                            i += 1;
                        }
                    }
                }
                if record.get(i).is_some_and(|&b| b != sep) {
                    return Err(failed(format!(
                        "{} (line {line}): a field that starts with a quote has more text after its closing quote; \
                         double a quote inside a quoted field (\"\")",
                        self.url
                    )));
                }
                fields.push(Some(self.text(field, line)?));
            } else {
                let end = record[i..].iter().position(|&b| b == sep).map_or(record.len(), |k| i + k);
                let raw = &record[i..end];
                fields.push(if raw.is_empty() { None } else { Some(self.text(raw.to_vec(), line)?) });
                i = end;
            }
            if i >= record.len() {
                return Ok(fields);
            }
            i += 1; // the separator
            if i == record.len() {
                // A separator at the end: one more, empty, field.
                fields.push(None);
                return Ok(fields);
            }
        }
    }

    fn text(&self, bytes: Vec<u8>, line: u64) -> Result<String> {
        String::from_utf8(bytes).map_err(|_| failed(format!("{} (line {line}): the text is not UTF-8", self.url)))
    }
}

fn trim_newline(line: &[u8]) -> &[u8] {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    line.strip_suffix(b"\r").unwrap_or(line)
}

fn line_ending(line: &[u8]) -> &[u8] {
    &line[trim_newline(line).len()..]
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
        for bad in ["file:///../etc/passwd", "file:///sub/../../x", "https://example.com/a.csv", "file:///missing.csv"]
        {
            assert_eq!(access.resolve(bad).unwrap_err().kind, ErrorKind::ExternalResource, "{bad}");
        }
        assert!(FileAccess::Nowhere.resolve("file:///sub/a.csv").is_err());
        assert_eq!(FileAccess::Anywhere.resolve("file:///tmp/x.csv").unwrap(), PathBuf::from("/tmp/x.csv"));
        std::fs::remove_dir_all(dir).unwrap();
    }
}
