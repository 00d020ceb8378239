//! Read-ahead for relationship rows: the lines of the id-map entries that the rows some lines further on will
//! look up are requested while the row at hand is read.
//!
//! Why: resolving a relationship's two string ids is two dependent cache misses each (a slot of the name table,
//! then the name's record; an integer id in a direct table is one), and rows are resolved one at a time as the
//! reader yields them, so each row waited for its misses in turn (58 % of the parse of 5 M relationships over
//! 1 M nodes keyed by strings). A light scan of the lines
//! ahead (split at the delimiter, no quotes, no checks) finds the ids they will most likely name; requesting
//! their slots 16 lines ahead and their records 8 lines ahead lets those misses overlap. It is only a hint: a
//! line it reads differently from the real reader (quotes, a record over several lines) costs a wasted request,
//! never a wrong answer.

use std::collections::VecDeque;

use super::ids::IdMaps;
use super::CsvOptions;
use crate::csv::line_end;
use crate::edgelist::{strip_cr, IdType};

/// Lines between the row at hand and the one whose slots are requested.
const SLOTS_AHEAD: usize = 16;
/// Lines between the row at hand and the one whose records are requested (its slots arrived meanwhile).
const RECORDS_AHEAD: usize = 8;

pub(super) struct Lookahead<'b, 'm> {
    bytes: &'b [u8],
    end: usize,
    /// Where the next line not yet queued starts.
    cursor: usize,
    /// The lines after the row at hand: where each starts, and its two ends' keys ([`IdMaps::prefetch_key`]) when
    /// it was read.
    queue: VecDeque<(usize, Option<[u64; 2]>)>,
    delimiter: u8,
    quote: u8,
    trim: bool,
    columns: [usize; 2],
    spaces: [Option<usize>; 2],
    maps: &'m IdMaps,
}

impl<'b, 'm> Lookahead<'b, 'm> {
    /// For rows of `bytes[..end]` read with `options`, whose start and end ids are in fields `columns`, looked up
    /// in `spaces`.
    pub(super) fn new(
        bytes: &'b [u8],
        end: usize,
        options: &CsvOptions,
        columns: [usize; 2],
        spaces: [Option<usize>; 2],
        maps: &'m IdMaps,
    ) -> Self {
        // As `id_text` takes an unquoted id: integers always trimmed, strings when the options say so.
        let trim = options.trim_strings || options.id_type == IdType::Integer;
        let (delimiter, quote) = (options.delimiter, options.quote);
        Lookahead { bytes, end, cursor: end, queue: VecDeque::new(), delimiter, quote, trim, columns, spaces, maps }
    }

    /// Called with each row's byte range as it is read: requests the lines of the rows ahead.
    #[inline]
    pub(super) fn at_row(&mut self, row: &std::ops::Range<usize>) {
        match self.queue.pop_front() {
            Some((start, _)) if start == row.start => {}
            // First row, or the reader went another way than the scan (a record over several lines): start
            // again after this row.
            _ => {
                self.queue.clear();
                // The row's span ends before its line end (`\n` or `\r\n`): the next line starts after the `\n`.
                let from = row.end.min(self.end);
                self.cursor = (line_end(&self.bytes[..self.end], from) + 1).min(self.end);
            }
        }
        while self.queue.len() < SLOTS_AHEAD && self.cursor < self.end {
            let start = self.cursor;
            let end = line_end(&self.bytes[..self.end], start);
            self.cursor = end + 1;
            let keys = self.ids(&self.bytes[start..end]).and_then(|[a, b]| {
                let keys = [self.maps.prefetch_key(a)?, self.maps.prefetch_key(b)?];
                for (space, &key) in self.spaces.iter().zip(&keys) {
                    self.maps.prefetch_first(*space, key);
                }
                Some(keys)
            });
            self.queue.push_back((start, keys));
        }
        if let Some(&(_, Some(keys))) = self.queue.get(RECORDS_AHEAD) {
            for (space, key) in self.spaces.iter().zip(keys) {
                self.maps.prefetch_second(*space, key);
            }
        }
    }

    /// The line's two id fields as the reader most likely reads them; `None` if it has a quote or too few fields.
    fn ids<'l>(&self, line: &'l [u8]) -> Option<[&'l [u8]; 2]> {
        let line = strip_cr(line);
        if memchr::memchr(self.quote, line).is_some() {
            return None;
        }
        let mut found: [Option<&[u8]>; 2] = [None, None];
        for (i, field) in line.split(|&b| b == self.delimiter).enumerate() {
            for (slot, &column) in found.iter_mut().zip(&self.columns) {
                if column == i {
                    *slot = Some(if self.trim { field.trim_ascii() } else { field });
                }
            }
            if i >= self.columns[0].max(self.columns[1]) {
                break;
            }
        }
        Some([found[0]?, found[1]?])
    }
}
