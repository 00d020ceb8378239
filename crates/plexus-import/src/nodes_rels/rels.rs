//! Relationship groups: their rows parsed in parallel chunks into flat columns, each end resolved through the
//! id maps (or the database's own keys in incremental mode).

use super::ids::Lookup;
use super::lookahead::Lookahead;
use super::*;

/// The parsed rows of one relationship group: flat columns.
#[derive(Default)]
pub struct RelColumns {
    pub src: Vec<u64>,
    pub dst: Vec<u64>,
    /// One type per row, or empty when every row has `default_type`.
    pub types: Vec<TypeId>,
    pub default_type: Option<TypeId>,
    /// One entry per row, or empty when the group has no property columns.
    pub props: Vec<Option<Arc<PropMap>>>,
    pub bad: Vec<(PathBuf, BadLine)>,
    /// Rows skipped because an end's id names no node (`skip_bad_relationships`).
    pub skipped: Vec<(PathBuf, BadLine)>,
    /// Later files whose first line repeated the header and was skipped (see [`later_file_start`]).
    pub repeated_headers: Vec<PathBuf>,
    /// Per file, the fields past the header's last column that `ignore_extra_columns` dropped.
    pub dropped_fields: Vec<(PathBuf, u64)>,
    /// Per file, the rows with fewer fields than the header.
    pub short_rows: Vec<(PathBuf, super::ShortRows)>,
    /// A chunk's rows with fewer fields than the header, before the file is named.
    chunk_short_rows: super::ShortRows,
    /// Incremental imports (those with a fallback): each row's line, and the first row of each file, to say how
    /// far an interrupted import got.
    pub lines: Vec<u64>,
    pub files: Vec<(usize, PathBuf)>,
}

impl RelColumns {
    pub fn len(&self) -> usize {
        self.src.len()
    }

    pub fn is_empty(&self) -> bool {
        self.src.is_empty()
    }

    pub fn ty(&self, row: usize) -> TypeId {
        self.types.get(row).copied().or(self.default_type).expect("a type per row or a default")
    }
}

/// Parses one relationship group, resolving ends through `maps` (then `fallback`).
pub fn parse_rel_group(
    spec: &RelFiles,
    inputs: &[Input],
    maps: &IdMaps,
    fallback: Option<Fallback>,
    options: &CsvOptions,
    catalog: &Catalog,
    progress: &Progress,
) -> Result<RelColumns, (PathBuf, BadLine)> {
    let first = &inputs[0];
    let (fields, data_start, data_line) =
        header_of(first, options, spec.rewrite.as_ref()).map_err(|b| (first.path.clone(), b))?;
    let header = RelHeader::parse(&fields, spec.rel_type.is_some())
        .map_err(|e| (first.path.clone(), header_error(e, &fields)))?;
    let plans = plans(&header.columns, catalog);
    let has_props = plans.iter().any(|p| matches!(p, Plan::Prop { .. }));
    let (start_name, end_name) = (header.start_space(), header.end_space());
    let (start_space, end_space) = (maps.space_index(start_name), maps.space_index(end_name));
    // An id space no node file has (a misspelt `:END_ID(Persn)`) would make every row a bad line: refused at the
    // header, unless ids may also be looked for in the database imported into.
    if fallback.is_none() {
        for (name, space, column) in [(start_name, start_space, header.start), (end_name, end_space, header.end)] {
            if space.is_none() {
                let what = name.map_or("the global id space (an ID column with no space)".to_string(), |s| {
                    format!("id space '{s}'")
                });
                let defined: Vec<String> = maps
                    .names
                    .iter()
                    .map(|n| n.as_ref().map_or("the global id space".to_string(), |s| format!("'{s}'")))
                    .collect();
                let defined = if defined.is_empty() { "none".to_string() } else { defined.join(", ") };
                let message = format!("{what} is not defined by any node file (the node files define: {defined})");
                return Err((first.path.clone(), header_error(HeaderError { column: column + 1, message }, &fields)));
            }
        }
    }
    let default_type = spec.rel_type.as_deref().map(|t| catalog.rel_type(t));
    let mut all = RelColumns { default_type, ..RelColumns::default() };
    let describe = |name: Option<&str>| name.map_or("the global id space".to_string(), |s| format!("id space {s}"));
    let keep_lines = fallback.is_some();
    for (n, input) in inputs.iter().enumerate() {
        progress.phase(format!("relationships {}", input.path.display()));
        all.files.push((all.src.len(), input.path.clone()));
        let (start, line) = if n == 0 {
            (data_start, data_line)
        } else {
            later_file_start(first, data_start, input, options.delimiter)?
        };
        if n > 0 && line == 2 {
            all.repeated_headers.push(input.path.clone());
        }
        let bytes: &[u8] = &input.bytes;
        let chunks = csv::parse_chunks(bytes, start, line, csv::threads(), options.min_chunk, |range, line, last| {
            let mut out = (RelColumns::default(), Vec::new(), Vec::new());
            let cap = range.len() / 24;
            out.0.src.reserve(cap);
            out.0.dst.reserve(cap);
            let mut cache: FxHashMap<Vec<u8>, TypeId> = FxHashMap::default();
            let len = range.len() as u64;
            let mut ahead = (maps.prefetches(start_space) || maps.prefetches(end_space)).then(|| {
                Lookahead::new(bytes, range.end, options, [header.start, header.end], [start_space, end_space], maps)
            });
            let open = read_chunk(
                bytes,
                range,
                line,
                last,
                options,
                &mut out,
                |o| &mut o.1,
                |rec, (out, _, skipped)| {
                    if let Some(ahead) = &mut ahead {
                        ahead.at_row(&rec.span);
                    }
                    if rec.len() > plans.len() {
                        if !options.ignore_extra_columns {
                            let message = format!("{} fields, but the header has {}", rec.len(), plans.len());
                            return Err(bad_at(rec, bytes, plans.len(), message));
                        }
                        // One count per chunk; the file is named when the chunks are joined.
                        let extra = (rec.len() - plans.len()) as u64;
                        match out.dropped_fields.first_mut() {
                            Some((_, n)) => *n += extra,
                            None => out.dropped_fields.push((PathBuf::new(), extra)),
                        }
                    }
                    out.chunk_short_rows.note(rec.len(), plans.len(), rec.line);
                    // A bad end, and whether --skip-bad-relationships skips it (no id, or one naming no node).
                    let end = |col: usize, name: Option<&str>, space: Option<usize>, what: &str| {
                        let text = id_text(rec.get(bytes, col), rec, col, options);
                        // A missing end is a bad relationship that --skip-bad-relationships skips, as in Neo4j.
                        if text.is_empty() {
                            return Err((bad_at(rec, bytes, col, format!("empty {what} id")), true));
                        }
                        match maps.resolve(space, name, text, fallback) {
                            Lookup::Found(n) => Ok(n),
                            Lookup::Malformed => Err((
                                bad_at(
                                    rec,
                                    bytes,
                                    col,
                                    format!("'{}' is not an integer {what} id", String::from_utf8_lossy(text)),
                                ),
                                false,
                            )),
                            Lookup::Ambiguous => {
                                let message = format!(
                                    "{what} id '{}' names more than one node of the database (under different \
                                     labels); give the id space of the node meant, e.g. :{}_ID(Person)",
                                    String::from_utf8_lossy(text),
                                    what.to_ascii_uppercase()
                                );
                                Err((bad_at(rec, bytes, col, message), true))
                            }
                            Lookup::Unknown => {
                                let hint = maps.hint(space, name, text, fallback);
                                let message = format!(
                                    "unknown {what} id '{}' in {}{hint}",
                                    String::from_utf8_lossy(text),
                                    describe(name)
                                );
                                Err((bad_at(rec, bytes, col, message), true))
                            }
                        }
                    };
                    let ends = end(header.start, start_name, start_space, "start")
                        .and_then(|src| Ok((src, end(header.end, end_name, end_space, "end")?)));
                    let (src, dst) = match ends {
                        Ok(ends) => ends,
                        Err((bad, true)) if options.skip_bad_relationships => {
                            skipped.push(bad);
                            return Ok(());
                        }
                        Err((bad, _)) => return Err(bad),
                    };
                    let ty = match header.ty {
                        None => None,
                        Some(col) => {
                            let text = rec.get(bytes, col);
                            let text = if options.trim_strings && !rec.quoted(col) { text.trim_ascii() } else { text };
                            if text.is_empty() {
                                match default_type {
                                    Some(t) => Some(t),
                                    None => return Err(bad_at(rec, bytes, col, "empty relationship type".into())),
                                }
                            } else {
                                Some(match cache.get(text) {
                                    Some(&t) => t,
                                    None => {
                                        let name = std::str::from_utf8(text).map_err(|_| {
                                            bad_at(rec, bytes, col, "the type is not valid UTF-8".into())
                                        })?;
                                        let t = catalog.rel_type(name);
                                        cache.insert(text.to_vec(), t);
                                        t
                                    }
                                })
                            }
                        }
                    };
                    let props = if has_props { props_of(rec, bytes, &plans, options, None)? } else { None };
                    out.src.push(src);
                    out.dst.push(dst);
                    if let Some(t) = ty {
                        out.types.push(t);
                    }
                    if has_props {
                        out.props.push(props);
                    }
                    if keep_lines {
                        out.lines.push(rec.line);
                    }
                    Ok(())
                },
            );
            progress.add_bytes(len);
            progress.add_rows(out.0.src.len() as u64);
            ChunkResult { out, open }
        });
        let (mut dropped, mut short) = (0, super::ShortRows::default());
        for (c, bad, skipped) in chunks {
            dropped += c.dropped_fields.iter().map(|(_, n)| n).sum::<u64>();
            short.add(c.chunk_short_rows);
            all.skipped.extend(skipped.into_iter().map(|b| (input.path.clone(), b)));
            all.src.extend_from_slice(&c.src);
            all.dst.extend_from_slice(&c.dst);
            all.types.extend_from_slice(&c.types);
            all.props.extend(c.props);
            all.lines.extend_from_slice(&c.lines);
            all.bad.extend(bad.into_iter().map(|b| (input.path.clone(), b)));
        }
        if dropped > 0 {
            all.dropped_fields.push((input.path.clone(), dropped));
        }
        if short.count > 0 {
            all.short_rows.push((input.path.clone(), short));
        }
    }
    Ok(all)
}
