//! `LOAD CSV`: for each input row, the records of the file its URL names, as a list of strings per record or,
//! with headers, a map from the first record's names. Records are read as rows are asked for, so a file of any
//! size holds one batch of rows in memory.

use std::sync::Arc;

use super::ctx::Ctx;
use super::{Batch, Row, RowExpander, BATCH};
use crate::error::{CypherError, Result};
use crate::expr::CExpr;
use crate::files::{CsvRecords, FileAccess};
use crate::value::{Map, Value};

/// A file being read, and its header's names when it has one.
pub(crate) type Reading = (CsvRecords, Option<Vec<Arc<str>>>, Value);

pub(crate) struct LoadCsv<'p> {
    pub url: &'p CExpr,
    pub slot: usize,
    /// Where each record's line number and the file's path go.
    pub position: (usize, usize),
    pub headers: bool,
    pub separator: u8,
    pub access: &'p FileAccess,
    /// The file being read for the current input row, and its header names.
    pub reading: Option<Reading>,
}

impl LoadCsv<'_> {
    fn open(&self, row: &Row, ctx: &mut Ctx) -> Result<Option<Reading>> {
        let url = match self.url.eval(row, ctx)? {
            Value::String(s) => s,
            Value::Null => return Ok(None),
            other => {
                return Err(CypherError::type_error(
                    "InvalidArgumentType",
                    format!("LOAD CSV FROM takes a string (the file's URL), not {}", other.type_name()),
                ))
            }
        };
        let path = self.access.resolve(&url)?;
        let mut records = CsvRecords::open(&path, &url, self.separator)?;
        let names = if self.headers {
            let mut line = 0;
            match records.next_record(&mut line)? {
                // An empty file has no header and no rows.
                None => return Ok(None),
                Some(fields) => Some(fields.into_iter().map(|f| Arc::from(f.unwrap_or_default().as_str())).collect()),
            }
        } else {
            None
        };
        Ok(Some((records, names, Value::string(path.to_string_lossy()))))
    }
}

impl RowExpander for LoadCsv<'_> {
    fn expand(&mut self, row: &mut Row, ctx: &mut Ctx, out: &mut Batch) -> Result<bool> {
        let (mut records, names, file) = match self.reading.take() {
            Some(reading) => reading,
            None => match self.open(row, ctx)? {
                Some(reading) => reading,
                None => return Ok(false),
            },
        };
        let mut line = 0;
        while out.len() < BATCH {
            let Some(fields) = records.next_record(&mut line)? else { return Ok(false) };
            let value = match &names {
                None => Value::list(fields.into_iter().map(|f| f.map_or(Value::Null, Value::from)).collect()),
                Some(names) => {
                    // Missing trailing fields are null; fields beyond the header have no name and are left out.
                    let mut map = Map::new();
                    let mut fields = fields.into_iter();
                    for name in names {
                        let v = fields.next().flatten().map_or(Value::Null, Value::from);
                        map.insert(name.clone(), v);
                    }
                    Value::map(map)
                }
            };
            let mut r = row.clone();
            r[self.slot] = value;
            r[self.position.0] = Value::Int(line as i64);
            r[self.position.1] = file.clone();
            out.push(r);
        }
        self.reading = Some((records, names, file));
        Ok(true)
    }
}
