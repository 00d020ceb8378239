//! Importing node, relationship and edge-list files: reading the inputs, deciding unique keys, and building a
//! new database (create mode) or adding to an existing one ([`crate::incremental`]).
//!
//! **Unique keys.** A named id column (`name:ID`) is stored as the property `name`, as Neo4j does. A label gets
//! a unique key on that property when every node carrying the label comes from files whose id column has that
//! same name, and the ids are distinct across those nodes: always true within one id space (duplicates there
//! are errors), checked when the label spans several id spaces (LDBC's `Message`, made of posts and comments).
//! A label with nodes whose files name their id differently, or not at all, gets no key, and the summary says
//! why, since the key is what incremental imports and lookups by id use.

use std::path::{Path, PathBuf};
use std::time::Instant;

use plexus_storage::bulk::{build_state, NodeInput, RelInput};
use plexus_storage::fxhash::FxHashSet;
use plexus_storage::{Catalog, LabelId, NodeId, PropKeyId, RelId, RelRecord, Value};

use crate::edgelist::{BadLine, ParseError};
use crate::import::{
    parse_edge_files, prepare_target, read_input, to_edge_list_graph, EdgeImport, ImportError, ImportSummary,
};
use crate::nodes_rels::{
    bad_rows, parse_node_group, parse_rel_group, CsvOptions, IdMaps, Input, NodeFiles, NodeGroup, RelColumns, RelFiles,
};
use crate::progress::Progress;

/// Whether an import builds a new database or adds to an existing one.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Mode {
    /// Build a new database in memory and write it once; the target must not exist or be empty.
    #[default]
    Create,
    /// Open the existing database and add through write transactions, committed in batches.
    Incremental,
}

/// Everything one `plexus import` loads.
#[derive(Clone, Default)]
pub struct GraphImport {
    pub nodes: Vec<NodeFiles>,
    pub relationships: Vec<RelFiles>,
    /// Edge lists, imported as by [`crate::import::import_edge_lists`] (their own nodes, keyed by `id`).
    pub edges: Vec<PathBuf>,
    pub edge_options: EdgeImport,
    pub csv: CsvOptions,
    pub mode: Mode,
    /// Incremental mode: operations per committed transaction.
    pub batch_size: usize,
}

pub(crate) fn parse_error(path: PathBuf, bad: BadLine) -> ImportError {
    ImportError::Parse { path, error: ParseError::after(bad, []) }
}

/// Reads every file of a group.
pub(crate) fn read_group(
    files: &[PathBuf],
    summary: &mut ImportSummary,
    progress: &Progress,
) -> Result<Vec<Input>, ImportError> {
    let start = Instant::now();
    let mut inputs = Vec::with_capacity(files.len());
    for path in files {
        let on_disk = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
        let bytes = read_input(path)?;
        // Compressed inputs parse more bytes than they occupy on disk.
        progress.set_total(progress.snapshot().bytes_total + (bytes.len() as u64).saturating_sub(on_disk));
        summary.input_bytes += bytes.len() as u64;
        inputs.push(Input { path: path.clone(), bytes });
    }
    if inputs.is_empty() {
        return Err(ImportError::Target("a --nodes or --relationships argument names no file".into()));
    }
    summary.read += start.elapsed();
    Ok(inputs)
}

/// Takes into the summary what parsing a relationship group found besides its rows: bad lines (failing past
/// `skip_bad_lines`), relationships skipped for an end that names no node (failing past the bad tolerance),
/// repeated headers and dropped fields.
pub(crate) fn report_rel_group(
    columns: &mut RelColumns,
    summary: &mut ImportSummary,
    csv: &CsvOptions,
) -> Result<(), ImportError> {
    count_bad(std::mem::take(&mut columns.bad), summary, csv.skip_bad_lines)?;
    count_skipped(std::mem::take(&mut columns.skipped), summary, csv)?;
    summary.repeated_headers.append(&mut columns.repeated_headers);
    summary.dropped_fields.extend_from_slice(&columns.dropped_fields);
    summary.short_rows.extend_from_slice(&columns.short_rows);
    Ok(())
}

/// Records relationships skipped for an end that names no node (`skip_bad_relationships`).
fn count_skipped(
    skipped: Vec<(PathBuf, BadLine)>,
    summary: &mut ImportSummary,
    csv: &CsvOptions,
) -> Result<(), ImportError> {
    let mut skipped = skipped;
    skipped.sort_by_key(|(_, b)| b.line);
    summary.skipped_relationships.extend(skipped);
    check_tolerance(summary, csv)
}

/// Fails once the duplicate nodes and the relationships to unknown ids skipped so far are more than
/// `bad_tolerance`, naming the first one past it.
fn check_tolerance(summary: &ImportSummary, csv: &CsvOptions) -> Result<(), ImportError> {
    let Some(limit) = csv.bad_tolerance else { return Ok(()) };
    let Some((path, bad)) = summary.duplicates.iter().chain(&summary.skipped_relationships).nth(limit) else {
        return Ok(());
    };
    let mut bad = bad.clone();
    bad.message = format!("{} (more skipped nodes and relationships than the bad tolerance of {limit})", bad.message);
    Err(parse_error(path.clone(), bad))
}

/// The error at bad line `allowed` (counting from 0) of `bad_lines`, listing those skipped before it (with
/// their files when they come from several).
pub(crate) fn past_allowance(bad_lines: &[(PathBuf, BadLine)], allowed: usize) -> ImportError {
    let (path, bad) = bad_lines[allowed].clone();
    let several = bad_lines.iter().any(|(p, _)| *p != path);
    let skipped =
        bad_lines[..allowed].iter().map(|(p, b)| if several { format!("{}: {b}", p.display()) } else { b.to_string() });
    ImportError::Parse { path, error: ParseError::after(bad, skipped) }
}

/// Adds a group's bad lines to the summary; fails once there are more than allowed.
pub(crate) fn count_bad(
    bad: Vec<(PathBuf, BadLine)>,
    summary: &mut ImportSummary,
    allowed: usize,
) -> Result<(), ImportError> {
    let mut bad = bad;
    bad.sort_by_key(|(_, b)| b.line);
    summary.bad_lines.extend(bad);
    if summary.bad_lines.len() > allowed {
        return Err(past_allowance(&summary.bad_lines, allowed));
    }
    Ok(())
}

/// The id spaces of the node groups, with each group's first node number and the number of nodes. Duplicate ids
/// are errors, or with `skip_duplicate_nodes` rows left out of their groups (the first with an id is kept) and
/// reported in the summary.
pub(crate) fn build_id_maps<'a>(
    groups: &mut [NodeGroup<'a>],
    inputs: &[Vec<Input>],
    csv: &CsvOptions,
    summary: &mut ImportSummary,
) -> Result<(IdMaps, Vec<u64>, u64), ImportError> {
    let offsets_of = |groups: &[NodeGroup]| {
        let mut offsets = Vec::with_capacity(groups.len());
        let mut count = 0u64;
        for g in groups {
            offsets.push(count);
            count += g.len() as u64;
        }
        (offsets, count)
    };
    let (offsets, count) = offsets_of(groups);
    let (maps, duplicates) = IdMaps::build(groups, csv.id_type, csv.skip_duplicate_nodes, |g, r| offsets[g] + r as u64)
        .map_err(ImportError::Target)?;
    if duplicates.is_empty() {
        return Ok((maps, offsets, count));
    }
    drop(maps);
    let mut skip: Vec<Vec<bool>> = groups.iter().map(|g| vec![false; g.len()]).collect();
    let mut rows: Vec<Vec<(usize, usize, String)>> = vec![Vec::new(); groups.len()];
    for d in duplicates {
        skip[d.group][d.row] = true;
        let column = groups[d.group].header.id.unwrap_or(0);
        rows[d.group].push((d.row, column, d.message));
    }
    for (g, group) in groups.iter_mut().enumerate() {
        let rows = std::mem::take(&mut rows[g]);
        if rows.is_empty() {
            continue;
        }
        summary.duplicates.extend(bad_rows(group, &inputs[g], csv, rows));
        let keep: Vec<bool> = skip[g].iter().map(|s| !s).collect();
        group.retain(&keep);
    }
    check_tolerance(summary, csv)?;
    let (offsets, count) = offsets_of(groups);
    let (maps, _) =
        IdMaps::build(groups, csv.id_type, false, |g, r| offsets[g] + r as u64).map_err(ImportError::Target)?;
    Ok((maps, offsets, count))
}

/// Which labels get a unique key, and notes on those that do not.
pub(crate) fn unique_keys(groups: &[NodeGroup], catalog: &Catalog) -> (Vec<(LabelId, PropKeyId)>, Vec<String>) {
    struct Info {
        key: Option<PropKeyId>,
        conflict: bool,
        groups: Vec<usize>,
    }
    let mut info: Vec<(LabelId, Info)> = Vec::new();
    for (g, group) in groups.iter().enumerate() {
        let mut labels: FxHashSet<LabelId> = group.labels.iter().copied().collect();
        for row in &group.row_labels {
            labels.extend(row.iter().copied());
        }
        let mut labels: Vec<LabelId> = labels.into_iter().collect();
        labels.sort_unstable();
        for l in labels {
            match info.iter_mut().find(|(x, _)| *x == l) {
                Some((_, i)) => {
                    i.conflict |= i.key != group.id_key;
                    i.groups.push(g);
                }
                None => info.push((l, Info { key: group.id_key, conflict: false, groups: vec![g] })),
            }
        }
    }
    let name =
        |l: LabelId| catalog.name(plexus_storage::TokenKind::Label, l.0).map(|n| n.to_string()).unwrap_or_default();
    let mut keys = Vec::new();
    let mut notes = Vec::new();
    for (label, i) in info {
        let Some(key) = i.key.filter(|_| !i.conflict) else {
            if i.groups.iter().any(|&g| groups[g].id_key.is_some()) {
                notes.push(format!(
                    "label {} has no unique key: its node files do not all name their :ID column the same",
                    name(label)
                ));
            }
            continue;
        };
        let spaces: FxHashSet<Option<&str>> = i.groups.iter().map(|&g| groups[g].header.space()).collect();
        if spaces.len() > 1 {
            let mut seen: FxHashSet<Value> = FxHashSet::default();
            let mut repeated = false;
            'groups: for &g in &i.groups {
                let group = &groups[g];
                for row in 0..group.len() {
                    let has =
                        group.labels.contains(&label) || group.row_labels.get(row).is_some_and(|l| l.contains(&label));
                    if has && !seen.insert(group.id_value(row).expect("keyed groups have ids")) {
                        repeated = true;
                        break 'groups;
                    }
                }
            }
            if repeated {
                notes.push(format!(
                    "label {} has no unique key: its nodes come from several id spaces that share id values",
                    name(label)
                ));
                continue;
            }
        }
        keys.push((label, key));
    }
    (keys, notes)
}

pub(crate) fn key_names(keys: &[(LabelId, PropKeyId)], catalog: &Catalog) -> Vec<String> {
    use plexus_storage::TokenKind;
    keys.iter()
        .map(|&(l, k)| {
            let label = catalog.name(TokenKind::Label, l.0).unwrap_or_default();
            let key = catalog.name(TokenKind::PropKey, k.0).unwrap_or_default();
            format!("{label}({key})")
        })
        .collect()
}

/// Imports node, relationship and edge-list files into `dir`.
pub fn import_graph(dir: &Path, spec: &GraphImport, progress: &Progress) -> Result<ImportSummary, ImportError> {
    let total: u64 = spec
        .nodes
        .iter()
        .flat_map(|n| &n.files)
        .chain(spec.relationships.iter().flat_map(|r| &r.files))
        .chain(&spec.edges)
        .map(|p| std::fs::metadata(p).map(|m| m.len()).unwrap_or(0))
        .sum();
    progress.set_total(total);
    match spec.mode {
        Mode::Create => create(dir, spec, progress),
        Mode::Incremental => crate::incremental::import(dir, spec, progress),
    }
}

/// Parses every node group (all node files stay in memory: string ids borrow them).
pub(crate) fn parse_nodes<'a>(
    spec: &GraphImport,
    inputs: &'a [Vec<Input>],
    catalog: &Catalog,
    summary: &mut ImportSummary,
    progress: &Progress,
) -> Result<Vec<NodeGroup<'a>>, ImportError> {
    let start = Instant::now();
    let mut groups = Vec::with_capacity(spec.nodes.len());
    for (files, inputs) in spec.nodes.iter().zip(inputs) {
        let mut group = parse_node_group(files, inputs, &spec.csv, catalog, progress)
            .map_err(|(path, bad)| parse_error(path, bad))?;
        count_bad(std::mem::take(&mut group.bad), summary, spec.csv.skip_bad_lines)?;
        summary.repeated_headers.append(&mut group.repeated_headers);
        summary.dropped_fields.extend_from_slice(&group.dropped_fields);
        summary.short_rows.extend_from_slice(&group.short_rows);
        groups.push(group);
    }
    summary.parse += start.elapsed();
    Ok(groups)
}

fn create(dir: &Path, spec: &GraphImport, progress: &Progress) -> Result<ImportSummary, ImportError> {
    prepare_target(dir, !spec.edges.is_empty())?;
    let mut summary = ImportSummary::default();
    let catalog = Catalog::new();
    let mut inputs = Vec::with_capacity(spec.nodes.len());
    for n in &spec.nodes {
        inputs.push(read_group(&n.files, &mut summary, progress)?);
    }
    let mut groups = parse_nodes(spec, &inputs, &catalog, &mut summary, progress)?;
    let start = Instant::now();
    let (maps, offsets, count) = build_id_maps(&mut groups, &inputs, &spec.csv, &mut summary)?;
    let (mut keys, notes) = unique_keys(&groups, &catalog);
    summary.notes.extend(notes);
    let mut nodes: Vec<NodeInput> = Vec::with_capacity(count as usize);
    for (g, group) in groups.iter_mut().enumerate() {
        let props = std::mem::take(&mut group.props);
        for (row, props) in props.into_iter().enumerate() {
            nodes.push(NodeInput { id: NodeId(offsets[g] + row as u64), labels: group.labels_of(row), props });
        }
    }
    summary.build += start.elapsed();
    let mut rels: Vec<RelInput> = Vec::new();
    for r in &spec.relationships {
        let inputs = read_group(&r.files, &mut summary, progress)?;
        let start = Instant::now();
        let mut columns = parse_rel_group(r, &inputs, &maps, None, &spec.csv, &catalog, progress)
            .map_err(|(path, bad)| parse_error(path, bad))?;
        drop(inputs);
        report_rel_group(&mut columns, &mut summary, &spec.csv)?;
        summary.parse += start.elapsed();
        let start = Instant::now();
        rels.reserve(columns.len());
        let mut props = std::mem::take(&mut columns.props).into_iter();
        for i in 0..columns.len() {
            let id = RelId(rels.len() as u64);
            let rec = RelRecord { id, ty: columns.ty(i), src: NodeId(columns.src[i]), dst: NodeId(columns.dst[i]) };
            rels.push(RelInput { rec, props: props.next().flatten() });
        }
        summary.build += start.elapsed();
    }
    drop(maps);
    drop(groups);
    drop(inputs);
    if !spec.edges.is_empty() {
        add_edge_lists(spec, &catalog, &mut nodes, &mut rels, &mut keys, &mut summary)?;
    }
    summary.nodes = nodes.len() as u64;
    summary.relationships = rels.len() as u64;
    summary.unique_keys = key_names(&keys, &catalog);
    progress.phase("building the graph");
    let start = Instant::now();
    // The graph is only written out and dropped: ordinary pages (see `write_only_build`).
    let write_only = plexus_storage::prefetch::write_only_build();
    let state = build_state(1, nodes, rels, &keys).map_err(ImportError::Storage)?;
    summary.build += start.elapsed();
    progress.phase("writing the checkpoint");
    let start = Instant::now();
    summary.bytes_on_disk = crate::publish::create(dir, state, &catalog)?;
    drop(write_only);
    summary.write = start.elapsed();
    Ok(summary)
}

/// Edge lists next to node files: their vertices become nodes of their own (label `--label`, key `id`).
fn add_edge_lists(
    spec: &GraphImport,
    catalog: &Catalog,
    nodes: &mut Vec<NodeInput>,
    rels: &mut Vec<RelInput>,
    keys: &mut Vec<(LabelId, PropKeyId)>,
    summary: &mut ImportSummary,
) -> Result<(), ImportError> {
    let label = catalog.label(&spec.edge_options.label);
    if nodes.iter().any(|n| n.labels.contains(&label)) {
        return Err(ImportError::Target(format!(
            "the edge lists' label {} is also used by node files: choose another --label",
            spec.edge_options.label
        )));
    }
    let lists = parse_edge_files(&spec.edges, &spec.edge_options, summary, &mut |_| {})?;
    let start = Instant::now();
    let graph = to_edge_list_graph(catalog, &spec.edges, lists, &spec.edge_options)?;
    let edge_keys = [(graph.label, graph.key)];
    let (edge_nodes, edge_rels) = graph.into_records();
    let (node_base, rel_base) = (nodes.len() as u64, rels.len() as u64);
    nodes.extend(edge_nodes.into_iter().map(|mut n| {
        n.id = NodeId(n.id.0 + node_base);
        n
    }));
    rels.extend(edge_rels.into_iter().map(|mut r| {
        r.rec.id = RelId(r.rec.id.0 + rel_base);
        r.rec.src = NodeId(r.rec.src.0 + node_base);
        r.rec.dst = NodeId(r.rec.dst.0 + node_base);
        r
    }));
    keys.extend(edge_keys);
    summary.build += start.elapsed();
    Ok(())
}
