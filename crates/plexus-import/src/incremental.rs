//! Incremental import: node and relationship files added to an existing database through ordinary write
//! transactions (write-ahead log, fsync, conflict checks), committed in batches of `batch_size` operations.
//!
//! Rows are matched to the database by the unique keys of their labels: the key the database declares for the
//! label (whatever the files' id column is called, when the file has a column of that name), else the key this
//! import declares on the files' id property. A row whose value of such a key the database holds is *matched*:
//! the existing node stands for it (relationships attach to it) and is left unchanged. Other rows become new
//! nodes. Relationship ends are looked up among the nodes of this import first, then in the database by
//! `(label, unique key)`: the labels of the id space's node files, or, for an id space no node file of this
//! import uses, the label named like the space (`:START_ID(Person)` finds `(:Person {id: ...})`), or when there
//! is no such label (the global space, or `ID(P)` given to `:Person` nodes), the one node any unique key finds.
//!
//! Every file is parsed, every row matched or checked against the unique keys, its label's other unique keys
//! included (a row whose values find two different existing nodes, or find a node by one label's key and none
//! by another's, a new row whose value of another key an existing node holds, or a new row taking a key value an
//! earlier new row took, is a bad line), and every
//! relationship's ends resolved before the first write, so bad input (a bad value, an unknown id, a broken
//! unique key) fails the import with the database unchanged, or is skipped with `skip_bad_lines`. Then each
//! batch is its own transaction: an import interrupted while writing leaves the batches committed before the
//! interruption in place. Running it again matches the nodes they created, but adds their relationships again.

use std::path::Path;
use std::time::Instant;

use std::path::PathBuf;

use plexus_storage::fxhash::FxHashMap;
use plexus_storage::keymap::key_form;
use plexus_storage::{Catalog, LabelId, NodeId, PropKeyId, ReadTxn, Store, TokenKind, Value, WriteTxn};

use crate::edgelist::BadLine;
use crate::import::{plural, ImportError, ImportSummary};
use crate::load::{
    build_id_maps, count_bad, parse_error, parse_nodes, read_group, report_rel_group, unique_keys, GraphImport,
};
use crate::nodes_rels::{bad_rows, parse_rel_group, CsvOptions, ExternalId, Input, NodeGroup};
use crate::progress::Progress;

mod keys;

use keys::{Fate, KeyPlan};

/// Marks node numbers that are database node ids rather than rows of this import.
const EXISTING: u64 = 1 << 63;

/// How far the writing got: the node groups before `group` (or all of them, in the relationship phase) and
/// `rows` rows of `group`.
#[derive(Clone, Copy, Debug, Default)]
struct Position {
    rels: bool,
    group: usize,
    rows: usize,
}

/// Why writing stopped before the end.
enum Halt {
    Failed(ImportError),
    /// A stop was requested (Ctrl-C): the open batch was rolled back.
    Stopped,
}

impl From<ImportError> for Halt {
    fn from(e: ImportError) -> Halt {
        Halt::Failed(e)
    }
}

/// Write transactions committed every `size` operations.
struct Batches<'s> {
    store: &'s Store,
    tx: Option<WriteTxn>,
    size: usize,
    progress: &'s Progress,
    commits: u64,
    /// Where the rows added to the open transaction end, and where the committed ones do.
    pending: Position,
    committed: Position,
    /// What a report of the committed rows says at a position, written after each commit to [`JOURNAL`].
    journal: Option<(PathBuf, JournalReport<'s>)>,
}

/// The properties of a group's rows, taken out of it for writing.
type RowProps = Vec<Option<std::sync::Arc<plexus_storage::records::PropMap>>>;

/// What the journal says when the rows up to a position are committed.
type JournalReport<'s> = Box<dyn Fn(Position) -> String + 's>;

impl Batches<'_> {
    fn tx(&mut self) -> &mut WriteTxn {
        let store = self.store;
        self.tx.get_or_insert_with(|| store.write())
    }

    /// Notes that the rows up to `at` are in the open transaction; commits when it holds a batch. A requested
    /// stop rolls the open transaction back, so the import ends at the last batch boundary.
    fn tick(&mut self, at: Position) -> Result<(), Halt> {
        self.pending = at;
        if self.tx.as_ref().is_some_and(|tx| tx.op_count() >= self.size) {
            self.commit()?;
        }
        if self.progress.stop_requested() {
            self.tx = None;
            return Err(Halt::Stopped);
        }
        Ok(())
    }

    fn commit(&mut self) -> Result<(), ImportError> {
        if let Some(tx) = self.tx.take() {
            let ops = tx.op_count() as u64;
            tx.commit().map_err(ImportError::Storage)?;
            self.progress.add_committed(ops);
            self.commits += 1;
        }
        self.committed = self.pending;
        if let Some((path, report)) = &self.journal {
            // Best effort: the journal only tells a later command what an import killed outright committed.
            let _ = write_journal(path, &report(self.committed));
        }
        Ok(())
    }
}

/// The file in a database's directory that an incremental import keeps while it writes, saying what it has
/// committed so far (rewritten after each batch) and how to finish it. An import that ends, however it ends,
/// removes it and reports for itself; one killed outright leaves it for the next command that opens the
/// database to show ([`interrupted_report`]).
pub const JOURNAL: &str = ".plexus-incremental-import";

fn write_journal(path: &Path, report: &str) -> std::io::Result<()> {
    let partial = path.with_extension("partial");
    std::fs::write(&partial, report)?;
    std::fs::rename(&partial, path)
}

/// What an incremental import into `dir` that was killed before it finished had committed, as its journal
/// says; `None` when none was.
pub fn interrupted_report(dir: &Path) -> Option<String> {
    std::fs::read_to_string(dir.join(JOURNAL)).ok()
}

pub(crate) fn import(dir: &Path, spec: &GraphImport, progress: &Progress) -> Result<ImportSummary, ImportError> {
    if !spec.edges.is_empty() {
        return Err(ImportError::Target("--edges cannot be combined with --mode incremental".into()));
    }
    if !dir.join("plexus.meta").exists() {
        return Err(ImportError::Target(format!(
            "{} holds no database: --mode incremental adds to an existing one (use --mode create for a new one)",
            dir.display()
        )));
    }
    let (store, _) = Store::open(dir).map_err(ImportError::Storage)?;
    let mut summary = import_into(&store, spec, progress)?;
    // A checkpoint at the end, so that the next open loads the imported data instead of replaying all of its log.
    let start = Instant::now();
    store.checkpoint().map_err(ImportError::Storage)?;
    summary.write += start.elapsed();
    Ok(summary)
}

/// Adds node and relationship files to an open database (the incremental import without opening a directory:
/// embedding applications and language bindings hold the store open themselves).
pub fn import_into(store: &Store, spec: &GraphImport, progress: &Progress) -> Result<ImportSummary, ImportError> {
    if !spec.edges.is_empty() {
        return Err(ImportError::Target("edge lists cannot be combined with an incremental import".into()));
    }
    let catalog = store.catalog();
    let mut summary = ImportSummary::default();
    let mut inputs = Vec::with_capacity(spec.nodes.len());
    for n in &spec.nodes {
        inputs.push(read_group(&n.files, &mut summary, progress)?);
    }
    let mut groups = parse_nodes(spec, &inputs, catalog, &mut summary, progress)?;
    // Checks duplicates (or skips them).
    let mut maps = build_id_maps(&mut groups, &inputs, &spec.csv, &mut summary)?;
    let (planned, notes) = unique_keys(&groups, catalog);
    summary.notes.extend(notes);
    let snapshot = store.read();

    // Which rows are nodes the database holds already (by the unique keys of their labels), and which would
    // break a unique key (a value two new rows share, or that two existing nodes hold): decided against the
    // snapshot before anything is written, so that writing cannot meet a violation.
    let start = Instant::now();
    let keys = KeyPlan::new(&groups, &planned, &snapshot, catalog, &mut summary.notes);
    let (mut fates, bad) = keys.match_rows(&groups, &inputs, &spec.csv, catalog);
    let declare = keys.declare;
    if !bad.is_empty() {
        drop(maps);
        for (g, group) in groups.iter_mut().enumerate() {
            let keep: Vec<bool> = fates[g].iter().map(|f| !matches!(f, Fate::Bad)).collect();
            group.retain(&keep);
            fates[g].retain(|f| !matches!(f, Fate::Bad));
        }
        count_bad(bad, &mut summary, spec.csv.skip_bad_lines)?;
        // The rows left out must not be found by relationships.
        maps = build_id_maps(&mut groups, &inputs, &spec.csv, &mut summary)?;
    }
    summary.parse += start.elapsed();
    let (maps, _, count) = maps;

    // Every relationship file is parsed and its ends resolved before anything is written: an unknown id or a
    // bad value fails the import with the database unchanged. Ends are rows of this import (by the id maps) or
    // nodes the database held before it (by their unique key).
    let mut space_labels: FxHashMap<Option<String>, Vec<LabelId>> = FxHashMap::default();
    for group in &groups {
        let labels = space_labels.entry(group.header.space().map(String::from)).or_default();
        for row in 0..group.len().max(1) {
            for l in group.labels_of(row) {
                if !labels.contains(&l) {
                    labels.push(l);
                }
            }
        }
    }
    let fallback = |space: Option<&str>, id: ExternalId| -> Option<u64> {
        let value = match id {
            ExternalId::Int(i) => Value::Int(i),
            ExternalId::Str(s) => Value::from(s),
        };
        let named = space.and_then(|space| catalog.lookup(TokenKind::Label, space)).map(LabelId);
        let labels: &[LabelId] = match (space_labels.get(&space.map(String::from)), named.as_ref()) {
            (Some(labels), _) => labels,
            (None, Some(label)) => std::slice::from_ref(label),
            // No node file of this import uses the space, and no label is named like it (the global space, or
            // one named for the files, `ID(P)` on `:Person`): the nodes an earlier import gave ids in it may
            // have any label, so every label with a unique key is asked, and an id found under two different
            // nodes is not guessed at.
            (None, None) => {
                let mut found = snapshot
                    .unique_keys()
                    .into_iter()
                    .filter(|&(l, k)| snapshot.unique_key(l) == Some(k))
                    .filter_map(|(l, _)| snapshot.node_by_key(l, &value));
                let first = found.next()?;
                let only = found.all(|n| n == first);
                return Some(if only { first.0 | EXISTING } else { crate::nodes_rels::AMBIGUOUS });
            }
        };
        labels.iter().find_map(|&l| snapshot.node_by_key(l, &value)).map(|n| n.0 | EXISTING)
    };
    let mut rel_groups = Vec::with_capacity(spec.relationships.len());
    for r in &spec.relationships {
        let inputs = read_group(&r.files, &mut summary, progress)?;
        let start = Instant::now();
        let mut columns = parse_rel_group(r, &inputs, &maps, Some(&fallback), &spec.csv, catalog, progress)
            .map_err(|(path, bad)| parse_error(path, bad))?;
        drop(inputs);
        report_rel_group(&mut columns, &mut summary, &spec.csv)?;
        summary.parse += start.elapsed();
        rel_groups.push(columns);
    }
    drop(snapshot);

    if !progress.start_writing() {
        return Err(ImportError::Target("interrupted before anything was written: the database is unchanged".into()));
    }
    let write_start = Instant::now();
    let node_props: Vec<_> = groups.iter_mut().map(|g| std::mem::take(&mut g.props)).collect();
    let rel_props: Vec<_> = rel_groups.iter_mut().map(|c| std::mem::take(&mut c.props)).collect();
    let journal = store.path().map(|dir| dir.join(JOURNAL));
    if let Some(earlier) = store.path().and_then(interrupted_report) {
        summary.notes.push(format!("an earlier incremental import did not finish: {earlier}"));
    }
    let why = "an incremental import into this database was killed before it finished (counted at its last \
               commit: a batch it was committing then may be in the database too)";
    let (groups_ref, fates_ref, rel_ref) = (&groups, &fates, &rel_groups);
    let no_summary = ImportSummary::default();
    let tally = FateTally::default();
    let report = |at: Position| halted(why, groups_ref, fates_ref, rel_ref, at, &no_summary, &tally);
    let mut batches = Batches {
        store,
        tx: None,
        size: spec.batch_size.max(1),
        progress,
        commits: 0,
        pending: Position::default(),
        committed: Position::default(),
        journal: journal.clone().map(|path| (path, Box::new(report) as JournalReport)),
    };
    if let Some(path) = &journal {
        let _ = write_journal(path, &report(Position::default()));
    }
    let written =
        write(store, declare, &groups, node_props, &fates, count, &rel_groups, rel_props, &mut batches, &mut summary);
    batches.journal = None;
    if let Some(path) = &journal {
        let _ = std::fs::remove_file(path);
    }
    summary.write = write_start.elapsed();
    match written {
        Ok(()) => {}
        Err(Halt::Stopped) => {
            let at = batches.committed;
            let report = halted("interrupted", &groups, &fates, &rel_groups, at, &summary, &FateTally::default());
            return Err(ImportError::Target(report));
        }
        Err(Halt::Failed(e)) if batches.commits == 0 => return Err(e),
        Err(Halt::Failed(e)) => {
            // The input was valid, but a write failed (a full disk, a concurrent writer) after some batches
            // committed: say what they hold, file by file, as for an interrupt.
            let why = format!("{e} (after {} committed)", plural(batches.commits, "transaction"));
            let report = halted(&why, &groups, &fates, &rel_groups, batches.committed, &summary, &FateTally::default());
            return Err(ImportError::Target(report));
        }
    }
    summary.notes.push(format!("{} committed", plural(batches.commits, "transaction")));
    Ok(summary)
}

/// How a file's committed node rows fared: added, found in the database, and whether any added one has no
/// unique key to be found by again.
#[derive(Clone, Copy, Default)]
struct FateCounts {
    added: u64,
    found: u64,
    unkeyed: bool,
}

/// [`FateCounts`] of the committed rows of each node file, kept between reports: the journal asks after every
/// batch, for ranges that only grow, so each row is counted once instead of once per batch.
#[derive(Default)]
struct FateTally {
    /// By (group, first row of the file): the end of the rows counted, and their counts.
    counted: std::cell::RefCell<FxHashMap<(usize, usize), (usize, FateCounts)>>,
}

impl FateTally {
    /// The counts of `fates[first..reached]`, the rows of the file of group `g` that starts at `first`.
    fn count(&self, fates: &[Fate], g: usize, first: usize, reached: usize) -> FateCounts {
        let mut counted = self.counted.borrow_mut();
        let (to, counts) = counted.entry((g, first)).or_insert((first, FateCounts::default()));
        if reached < *to {
            (*to, *counts) = (first, FateCounts::default());
        }
        for fate in &fates[*to..reached] {
            match fate {
                Fate::New { keyed } => {
                    counts.added += 1;
                    counts.unkeyed |= !keyed;
                }
                Fate::Existing(_) => counts.found += 1,
                Fate::Bad => {}
            }
        }
        *to = reached;
        *counts
    }
}

/// What an import stopped part-way (interrupted, or failed to write) committed, file by file, and how to
/// finish it; `why` says what stopped it.
fn halted(
    why: &str,
    groups: &[NodeGroup],
    fates: &[Vec<Fate>],
    rel_groups: &[crate::nodes_rels::RelColumns],
    at: Position,
    summary: &ImportSummary,
    tally: &FateTally,
) -> String {
    let mut lines = vec![format!("{why}; what was committed before it stays in the database:")];
    if !summary.unique_keys.is_empty() {
        lines.push(format!("  unique keys declared: {}", summary.unique_keys.join(", ")));
    }
    // Files whose committed rows would be added again by running the same import again.
    let mut unkeyed: Vec<String> = Vec::new();
    for (g, group) in groups.iter().enumerate() {
        // (Writing took the rows' properties: the lines tell how many rows there are.)
        let len = group.lines.len();
        let done = if at.rels || g < at.group {
            len
        } else if g == at.group {
            at.rows
        } else {
            0
        };
        for (i, (first, path)) in group.files.iter().enumerate() {
            let end = group.files.get(i + 1).map_or(len, |f| f.0);
            let reached = done.clamp(*first, end);
            let file = path.display();
            if reached == *first {
                lines.push(format!("  {file}: no rows committed"));
                continue;
            }
            let FateCounts { added, found, unkeyed: any_unkeyed } = tally.count(&fates[g], g, *first, reached);
            let line = group.lines[reached - 1];
            let how_far = if reached == end { "all rows".to_string() } else { format!("rows up to line {line}") };
            lines.push(format!(
                "  {file}: {how_far} committed ({} added, {} already there)",
                plural(added, "node"),
                found
            ));
            if any_unkeyed {
                unkeyed.push(format!("{file} up to line {line}"));
            }
        }
    }
    let mut resume_rels = None;
    for (g, columns) in rel_groups.iter().enumerate() {
        let done = if !at.rels {
            0
        } else if g < at.group {
            columns.len()
        } else if g == at.group {
            at.rows
        } else {
            0
        };
        for (i, (first, path)) in columns.files.iter().enumerate() {
            let end = columns.files.get(i + 1).map_or(columns.len(), |f| f.0);
            let reached = done.clamp(*first, end);
            let file = path.display();
            if reached == *first {
                lines.push(format!("  {file}: no rows committed"));
                resume_rels.get_or_insert_with(|| format!("{file} from its first row"));
                continue;
            }
            let line = columns.lines[reached - 1];
            if reached == end {
                lines.push(format!("  {file}: all rows committed ({})", plural((end - first) as u64, "relationship")));
            } else {
                lines.push(format!(
                    "  {file}: rows up to line {line} committed ({})",
                    plural((reached - first) as u64, "relationship")
                ));
                resume_rels.get_or_insert_with(|| format!("{file} after line {line}"));
            }
        }
    }
    let nodes = if unkeyed.is_empty() {
        "give the node files again: the nodes committed are found by their unique keys and not added twice".to_string()
    } else {
        format!(
            "leave out the node rows committed from {} (their labels have no unique key to find them by, so they \
             would be added twice)",
            unkeyed.join(", ")
        )
    };
    match resume_rels {
        None if !at.rels => lines.push(format!("to finish, run the import again: {nodes}")),
        None => lines.push("every row was committed: nothing is left to import".into()),
        Some(rels) if at.rels => lines.push(format!(
            "to finish, run the import again with the relationship rows not committed (from {rels}, keeping the \
             header line, and the relationship files after it: rows committed would be added again); {nodes}"
        )),
        Some(_) => lines.push(format!("to finish, run the import again with all relationship files; {nodes}")),
    }
    lines.join("\n")
}

/// Declares the unique keys, then writes the nodes and the relationships of an incremental import in batches.
#[allow(clippy::too_many_arguments)]
fn write(
    store: &Store,
    declare: Vec<(LabelId, PropKeyId)>,
    groups: &[NodeGroup<'_>],
    node_props: Vec<RowProps>,
    fates: &[Vec<Fate>],
    count: u64,
    rel_groups: &[crate::nodes_rels::RelColumns],
    rel_props: Vec<RowProps>,
    batches: &mut Batches<'_>,
    summary: &mut ImportSummary,
) -> Result<(), Halt> {
    let catalog = store.catalog();
    let name = |kind, id: u32| catalog.name(kind, id).map(|n| n.to_string()).unwrap_or_default();
    for (label, key) in declare {
        let mut tx = store.write();
        match tx.declare_unique_key(label, key).and_then(|_| tx.commit()) {
            Ok(_) => summary.unique_keys.push(crate::load::key_names(&[(label, key)], catalog).remove(0)),
            Err(e) => {
                summary.notes.push(format!("no unique key declared for label {}: {e}", name(TokenKind::Label, label.0)))
            }
        }
    }

    batches.progress.phase("writing nodes");
    let mut node_ids: Vec<u64> = Vec::with_capacity(count as usize);
    for (g, ((group, fates), props)) in groups.iter().zip(fates).zip(node_props).enumerate() {
        for ((row, props), fate) in props.into_iter().enumerate().zip(fates) {
            match *fate {
                Fate::Existing(id) => {
                    summary.matched += 1;
                    node_ids.push(id.0);
                }
                _ => {
                    let pairs: Vec<(PropKeyId, Value)> =
                        props.map(|p| p.iter().map(|(k, v)| (k, v.clone())).collect()).unwrap_or_default();
                    let id = batches.tx().create_node(&group.labels_of(row), pairs).map_err(ImportError::Storage)?;
                    summary.nodes += 1;
                    node_ids.push(id.0);
                }
            }
            batches.tick(Position { rels: false, group: g, rows: row + 1 })?;
        }
    }
    batches.commit()?;

    let node = |v: u64| NodeId(if v & EXISTING != 0 { v & !EXISTING } else { node_ids[v as usize] });
    batches.progress.phase("writing relationships");
    for (g, (columns, props)) in rel_groups.iter().zip(rel_props).enumerate() {
        let mut props = props.into_iter();
        batches.pending = Position { rels: true, group: g, rows: 0 };
        for i in 0..columns.len() {
            let pairs: Vec<(PropKeyId, Value)> =
                props.next().flatten().map(|p| p.iter().map(|(k, v)| (k, v.clone())).collect()).unwrap_or_default();
            let (src, dst) = (node(columns.src[i]), node(columns.dst[i]));
            batches.tx().create_rel(src, columns.ty(i), dst, pairs).map_err(ImportError::Storage)?;
            summary.relationships += 1;
            batches.tick(Position { rels: true, group: g, rows: i + 1 })?;
        }
        batches.commit()?;
    }
    Ok(())
}
