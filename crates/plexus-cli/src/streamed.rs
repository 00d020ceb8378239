//! Writes a read-only statement's rows as they are produced, a batch at a time, in any output format, for
//! `plexus query` and `plexus shell`: a result of any size needs the memory of one batch (a table, that of the
//! first rows its columns are laid out by).

use std::io::{self, Write};

use plexus::cypher::{CypherError, QueryResult, ReadStream};

use crate::format::{self, Format, TableLayout};

/// Starts `query` (read-only) as a stream on the newest snapshot of `db`; `None` for EXPLAIN of a write, which
/// has no rows to stream (the caller runs it as any statement).
pub fn open(
    db: &plexus::Database,
    query: &str,
    params: std::sync::Arc<plexus::Params>,
    interrupt: Option<&std::sync::Arc<plexus::cypher::Interrupt>>,
) -> Result<Option<ReadStream>, CypherError> {
    // A statement whose first row fails is an error with nothing printed, as one that does not compile.
    let stream = db.engine().execute_read_streaming(db.read(), query, params, interrupt, 1);
    match stream.and_then(ReadStream::failed_before_any_row) {
        Ok(stream) => Ok(Some(stream)),
        Err(e) if e.detail == "WriteInReadOnlyTransaction" => Ok(None),
        Err(e) => Err(e),
    }
}

/// Rows a streamed table is laid out by: its columns are as wide as their widest cell among these (as
/// cypher-shell samples its first 1,000 rows).
pub const TABLE_SAMPLE_ROWS: usize = 1000;

/// How writing a stream ended.
pub enum Ended {
    /// Every row was written: `first` holds the columns, statistics, notifications and plan (its rows may have
    /// been let go), `rows` how many there were.
    Done { first: QueryResult, rows: usize },
    /// A later row failed: the output ends where it was.
    Failed(CypherError),
    /// `stop` said so between two batches.
    Stopped,
}

/// Writes `stream` to `out` in `format`, asking `stop` between batches. A table of up to [`TABLE_SAMPLE_ROWS`]
/// rows is laid out by all of its cells, as a whole result is; a longer one by those first rows, and printed as
/// the rest arrive (a later cell wider than its column is written whole). The plan of EXPLAIN or PROFILE is left
/// to the caller.
pub fn write(stream: ReadStream, format: Format, out: &mut impl Write, stop: &dyn Fn() -> bool) -> io::Result<Ended> {
    let (mut first, mut rest) = (stream.first, stream.rest);
    if format == Format::Table {
        while first.rows.len() < TABLE_SAMPLE_ROWS {
            let Some(cursor) = rest.as_mut() else { break };
            if stop() {
                return Ok(Ended::Stopped);
            }
            match cursor.next_batch() {
                Ok(Some(batch)) => first.rows.extend(batch),
                Ok(None) => rest = None,
                Err(e) => return Ok(Ended::Failed(e)),
            }
        }
        if rest.is_none() {
            out.write_all(format::render(&first, Format::Table).as_bytes())?;
            out.flush()?;
            let rows = first.rows.len();
            return Ok(Ended::Done { first, rows });
        }
    }
    let mut text = String::new();
    let layout = if format == Format::Table {
        let (layout, cells) = TableLayout::fit(&first.columns, &first.rows);
        layout.top(&mut text);
        for row in &cells {
            layout.row(row, &mut text);
        }
        Some(layout)
    } else {
        format::begin(&first.columns, format, &mut text);
        format::rows(&first.rows, format, 0, &mut text);
        None
    };
    let mut rows = first.rows.len();
    first.rows = Vec::new();
    if let Some(mut cursor) = rest {
        loop {
            out.write_all(text.as_bytes())?;
            text.clear();
            if stop() {
                out.flush()?;
                return Ok(Ended::Stopped);
            }
            match cursor.next_batch() {
                Ok(Some(batch)) => {
                    match &layout {
                        Some(layout) => layout.rows(&batch, &mut text),
                        None => format::rows(&batch, format, rows, &mut text),
                    }
                    rows += batch.len();
                }
                Ok(None) => break,
                Err(e) => {
                    out.flush()?;
                    return Ok(Ended::Failed(e));
                }
            }
        }
    }
    match &layout {
        Some(layout) => layout.bottom(&mut text),
        None => format::end(format, &mut text),
    }
    out.write_all(text.as_bytes())?;
    out.flush()?;
    Ok(Ended::Done { first, rows })
}
