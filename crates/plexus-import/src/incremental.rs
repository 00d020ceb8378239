//! Incremental import: node and relationship files added to an existing database through ordinary write
//! transactions (write-ahead log, fsync, conflict checks), committed in batches of `batch_size` operations.
//!
//! A row whose label declares a unique key on the file's id property, and whose id the database already holds,
//! is *matched*: the existing node stands for it (relationships attach to it) and is left unchanged. Other rows
//! become new nodes. Relationship ends are looked up among the nodes of this import first, then in the database
//! by `(label, unique key)`: the labels of the id space's node files, or, for an id space no node file of this
//! import uses, the label named like the space (`:START_ID(Person)` finds `(:Person {id: ...})`).
//!
//! Every file is parsed and every relationship's ends resolved before the first write, so bad input (a bad
//! value, an unknown id) fails the import with the database unchanged. Then each batch is its own
//! transaction: an import interrupted while writing leaves the batches committed before the interruption in
//! place. Running it again matches the nodes they created, but adds their relationships again.

use std::path::Path;
use std::time::Instant;

use plexus_storage::fxhash::FxHashMap;
use plexus_storage::{LabelId, NodeId, PropKeyId, Store, TokenKind, Value, WriteTxn};

use crate::import::{ImportError, ImportSummary};
use crate::load::{count_bad, parse_error, parse_nodes, read_group, unique_keys, GraphImport};
use crate::nodes_rels::{parse_rel_group, ExternalId, IdMaps};
use crate::progress::Progress;

/// Marks node numbers that are database node ids rather than rows of this import.
const EXISTING: u64 = 1 << 63;

/// Write transactions committed every `size` operations.
struct Batches<'s> {
    store: &'s Store,
    tx: Option<WriteTxn>,
    size: usize,
    progress: &'s Progress,
    commits: u64,
}

impl Batches<'_> {
    fn tx(&mut self) -> &mut WriteTxn {
        let store = self.store;
        self.tx.get_or_insert_with(|| store.write())
    }

    /// Commits when the open transaction holds a batch.
    fn tick(&mut self) -> Result<(), ImportError> {
        if self.tx.as_ref().is_some_and(|tx| tx.op_count() >= self.size) {
            self.commit()?;
        }
        Ok(())
    }

    fn commit(&mut self) -> Result<(), ImportError> {
        if let Some(tx) = self.tx.take() {
            let ops = tx.op_count() as u64;
            tx.commit().map_err(ImportError::Storage)?;
            self.progress.add_rows(ops);
            self.commits += 1;
        }
        Ok(())
    }
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
    let mut offsets = Vec::with_capacity(groups.len());
    let mut count = 0u64;
    for g in &groups {
        offsets.push(count);
        count += g.len() as u64;
    }
    // Checks duplicates and maps ids to rows of this import.
    let maps = IdMaps::build(&groups, spec.csv.id_type, |g, r| offsets[g] + r as u64).map_err(ImportError::Target)?;
    let (keys, notes) = unique_keys(&groups, catalog);
    summary.notes = notes;

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
    let snapshot = store.read();
    let fallback = |space: Option<&str>, id: ExternalId| -> Option<u64> {
        let value = match id {
            ExternalId::Int(i) => Value::Int(i),
            ExternalId::Str(s) => Value::from(s),
        };
        let named;
        let labels: &[LabelId] = match (space_labels.get(&space.map(String::from)), space) {
            (Some(labels), _) => labels,
            (None, Some(space)) => {
                named = catalog.lookup(TokenKind::Label, space).map(LabelId);
                named.as_slice()
            }
            // The global id space with no node file in this import: the nodes an earlier import gave ids in it
            // may have any label, so every label with a unique key is asked, and an id found under two
            // different nodes is not guessed at.
            (None, None) => {
                let mut found = snapshot.unique_keys().into_iter().filter_map(|(l, _)| snapshot.node_by_key(l, &value));
                let first = found.next()?;
                return found.all(|n| n == first).then_some(first.0 | EXISTING);
            }
        };
        labels.iter().find_map(|&l| snapshot.node_by_key(l, &value)).map(|n| n.0 | EXISTING)
    };
    let mut rel_groups = Vec::with_capacity(spec.relationships.len());
    for r in &spec.relationships {
        let inputs = read_group(&r.files, &mut summary, progress)?;
        let start = Instant::now();
        let mut columns = parse_rel_group(r, &inputs, &maps, Some(&fallback), &spec.csv, catalog, progress)
            .map_err(|(path, bad)| parse_error(path, bad, 0))?;
        drop(inputs);
        count_bad(std::mem::take(&mut columns.bad), &mut summary, spec.csv.skip_bad_lines)?;
        summary.parse += start.elapsed();
        rel_groups.push(columns);
    }
    drop(snapshot);

    let write_start = Instant::now();
    let mut batches = Batches { store, tx: None, size: spec.batch_size.max(1), progress, commits: 0 };
    let written = write(store, keys, &mut groups, count, rel_groups, &mut batches, &mut summary);
    summary.write = write_start.elapsed();
    if let Err(e) = written {
        if batches.commits == 0 {
            return Err(e);
        }
        // The input was valid, but a write failed (a constraint, a full disk) after some batches committed.
        return Err(ImportError::Target(format!(
            "{e}; before it, {} transactions committed {} nodes and {} relationships, which stay in the database",
            batches.commits, summary.nodes, summary.relationships
        )));
    }
    summary.notes.push(format!("{} transactions committed", batches.commits));
    Ok(summary)
}

/// Declares the unique keys, then writes the nodes and the relationships of an incremental import in batches.
fn write(
    store: &Store,
    keys: Vec<(LabelId, PropKeyId)>,
    groups: &mut [crate::nodes_rels::NodeGroup<'_>],
    count: u64,
    rel_groups: Vec<crate::nodes_rels::RelColumns>,
    batches: &mut Batches<'_>,
    summary: &mut ImportSummary,
) -> Result<(), ImportError> {
    let catalog = store.catalog();
    let name = |kind, id: u32| catalog.name(kind, id).map(|n| n.to_string()).unwrap_or_default();
    for (label, key) in keys {
        match store.read().unique_key(label) {
            Some(k) if k == key => {}
            Some(k) => summary.notes.push(format!(
                "label {} already has the unique key {}; rows are matched by it, not by {}",
                name(TokenKind::Label, label.0),
                name(TokenKind::PropKey, k.0),
                name(TokenKind::PropKey, key.0)
            )),
            None => {
                let mut tx = store.write();
                match tx.declare_unique_key(label, key).and_then(|_| tx.commit()) {
                    Ok(_) => summary.unique_keys.push(crate::load::key_names(&[(label, key)], catalog).remove(0)),
                    Err(e) => summary
                        .notes
                        .push(format!("no unique key declared for label {}: {e}", name(TokenKind::Label, label.0))),
                }
            }
        }
    }

    batches.progress.phase("writing nodes");
    let mut node_ids: Vec<u64> = Vec::with_capacity(count as usize);
    for group in groups.iter_mut() {
        let props = std::mem::take(&mut group.props);
        for (row, props) in props.into_iter().enumerate() {
            let labels = group.labels_of(row);
            let tx = batches.tx();
            let existing = group.id_key.and_then(|key| existing_node(tx, &labels, key, group.id_value(row)?));
            match existing {
                Some(id) => {
                    summary.matched += 1;
                    node_ids.push(id.0);
                }
                None => {
                    let pairs: Vec<(PropKeyId, Value)> =
                        props.map(|p| p.iter().map(|(k, v)| (k, v.clone())).collect()).unwrap_or_default();
                    let id = tx.create_node(&labels, pairs).map_err(ImportError::Storage)?;
                    summary.nodes += 1;
                    node_ids.push(id.0);
                }
            }
            batches.tick()?;
        }
    }
    batches.commit()?;

    let node = |v: u64| NodeId(if v & EXISTING != 0 { v & !EXISTING } else { node_ids[v as usize] });
    batches.progress.phase("writing relationships");
    for mut columns in rel_groups {
        let mut props = std::mem::take(&mut columns.props).into_iter();
        for i in 0..columns.len() {
            let pairs: Vec<(PropKeyId, Value)> =
                props.next().flatten().map(|p| p.iter().map(|(k, v)| (k, v.clone())).collect()).unwrap_or_default();
            let (src, dst) = (node(columns.src[i]), node(columns.dst[i]));
            batches.tx().create_rel(src, columns.ty(i), dst, pairs).map_err(ImportError::Storage)?;
            summary.relationships += 1;
            batches.tick()?;
        }
        batches.commit()?;
    }
    Ok(())
}

/// The existing node with one of `labels` whose unique key `key` equals `value`.
fn existing_node(tx: &WriteTxn, labels: &[LabelId], key: PropKeyId, value: Value) -> Option<NodeId> {
    labels.iter().filter(|&&l| tx.unique_key(l) == Some(key)).find_map(|&l| tx.node_by_key(l, &value))
}
