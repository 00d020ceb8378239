//! Matching an incremental import's rows to the database: the unique key each label's rows are matched by (the
//! database's, or one the import declares), and what becomes of each row (a new node, an existing one, a bad
//! line).

use super::*;

/// What becomes of a row of the node files.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Fate {
    /// A new node; `keyed` when one of its labels has a unique key it has a value of (so running the import
    /// again finds it).
    New { keyed: bool },
    /// The database holds the node already (found by a unique key of one of the row's labels): it stands for
    /// the row, unchanged.
    Existing(NodeId),
    /// The row would break a unique key: a bad line.
    Bad,
}

/// A unique key rows are matched by: the database's, or one this import declares (found by a scan of the
/// label's nodes, since the database has no map for it yet).
struct Key {
    label: LabelId,
    key: PropKeyId,
    declared: Option<FxHashMap<Value, NodeId>>,
    /// Another unique key of a label whose rows are matched by a different one: a row is never matched by
    /// it, but a value of it that an existing node other than the row's holds breaks it.
    check_only: bool,
}

/// The unique keys of an incremental import's labels.
pub(super) struct KeyPlan<'s> {
    keys: Vec<Key>,
    snapshot: &'s ReadTxn,
    /// Keys this import declares before writing.
    pub(super) declare: Vec<(LabelId, PropKeyId)>,
}

impl<'s> KeyPlan<'s> {
    /// The key of each label of the input: the database's when it has one (rows are matched by it whatever the
    /// files' id column is called), else the one this import declares, unless the label's nodes in the
    /// database already share values of it.
    pub(super) fn new(
        groups: &[NodeGroup],
        planned: &[(LabelId, PropKeyId)],
        snapshot: &'s ReadTxn,
        catalog: &Catalog,
        notes: &mut Vec<String>,
    ) -> KeyPlan<'s> {
        let name = |kind, id: u32| catalog.name(kind, id).map(|n| n.to_string()).unwrap_or_default();
        let mut labels: Vec<LabelId> = Vec::new();
        for group in groups {
            for row in 0..group.len().max(1) {
                for l in group.labels_of(row) {
                    if !labels.contains(&l) {
                        labels.push(l);
                    }
                }
            }
        }
        let mut plan = KeyPlan { keys: Vec::new(), snapshot, declare: Vec::new() };
        for label in labels {
            let planned = planned.iter().find(|(l, _)| *l == label).map(|&(_, k)| k);
            // The id column's property is one of the label's unique keys (not necessarily its first): rows are
            // matched by it.
            if let Some(key) = planned.filter(|&k| snapshot.has_unique_key(label, k)) {
                plan.keys.push(Key { label, key, declared: None, check_only: false });
                plan.check_other_keys(label, key);
                continue;
            }
            if let Some(key) = snapshot.unique_key(label) {
                if let Some(id) = planned.filter(|&k| k != key) {
                    let (l, k, id) = (
                        name(TokenKind::Label, label.0),
                        name(TokenKind::PropKey, key.0),
                        name(TokenKind::PropKey, id.0),
                    );
                    let has_column = groups.iter().any(|g| {
                        g.labels.contains(&label) && g.column_of(key, catalog).is_some()
                            || g.row_labels.iter().any(|r| r.contains(&label)) && g.column_of(key, catalog).is_some()
                    });
                    notes.push(if has_column {
                        format!("label {l} has the unique key {k}: rows are matched to existing {l} nodes by {k}, not by {id}")
                    } else {
                        format!(
                            "label {l} has the unique key {k}, which its node files have no column for: their rows \
                             are not matched to existing {l} nodes (the id column {id} is stored as a plain property)"
                        )
                    });
                }
                plan.keys.push(Key { label, key, declared: None, check_only: false });
                plan.check_other_keys(label, key);
                continue;
            }
            let Some(key) = planned else { continue };
            let mut map: FxHashMap<Value, NodeId> = FxHashMap::default();
            let mut shared = None;
            for n in snapshot.nodes_with_label(label) {
                let Some(v) = snapshot.node_prop(n, key) else { continue };
                if let Some(&other) = map.get(&*key_form(v)) {
                    shared = Some((other, n, v.clone()));
                    break;
                }
                map.insert(key_form(v).into_owned(), n);
            }
            match shared {
                Some((a, b, v)) => notes.push(format!(
                    "no unique key declared for label {}: its nodes {} and {} in the database share the value {} of {}",
                    name(TokenKind::Label, label.0),
                    a.0,
                    b.0,
                    plexus_storage::value::shown(&v),
                    name(TokenKind::PropKey, key.0)
                )),
                None => {
                    plan.keys.push(Key { label, key, declared: Some(map), check_only: false });
                    plan.declare.push((label, key));
                }
            }
        }
        plan
    }

    /// Adds the database's other unique keys of `label` (besides `matched_by`) as keys rows are checked against.
    fn check_other_keys(&mut self, label: LabelId, matched_by: PropKeyId) {
        for (l, key) in self.snapshot.unique_keys() {
            if l == label && key != matched_by {
                self.keys.push(Key { label, key, declared: None, check_only: true });
            }
        }
    }

    fn existing(&self, key: &Key, value: &Value) -> Option<NodeId> {
        match &key.declared {
            Some(map) => map.get(value).copied(),
            None => self.snapshot.node_by_unique(key.label, key.key, value),
        }
    }

    /// Each row's fate, and the bad lines of the rows that would break a unique key: a row whose values find
    /// two different existing nodes, or a new row with a value an earlier new row of the input has.
    pub(super) fn match_rows(
        &self,
        groups: &[NodeGroup],
        inputs: &[Vec<Input>],
        csv: &CsvOptions,
        catalog: &Catalog,
    ) -> (Vec<Vec<Fate>>, Vec<(PathBuf, BadLine)>) {
        let name = |kind, id: u32| catalog.name(kind, id).map(|n| n.to_string()).unwrap_or_default();
        let shown = |v: &Value| match v {
            Value::String(s) => format!("'{s}'"),
            v => plexus_storage::value::shown(v),
        };
        // Values new rows take: (label, key, key form) to (group, row).
        let mut taken: FxHashMap<(LabelId, PropKeyId, Value), (usize, usize)> = FxHashMap::default();
        let mut all_fates = Vec::with_capacity(groups.len());
        let mut bad = Vec::new();
        for (g, group) in groups.iter().enumerate() {
            let mut fates = Vec::with_capacity(group.len());
            let mut bad_here: Vec<(usize, usize, String)> = Vec::new();
            // The keys of this group's rows, with their columns.
            let keys: Vec<(&Key, Option<usize>)> =
                self.keys.iter().map(|k| (k, group.column_of(k.key, catalog))).collect();
            for row in 0..group.len() {
                let labels = group.labels_of(row);
                let props = group.props[row].as_deref();
                let values: Vec<(&Key, usize, Value)> = keys
                    .iter()
                    .filter(|(k, _)| labels.contains(&k.label))
                    .filter_map(|&(k, col)| {
                        let v = props?.get(k.key)?;
                        Some((k, col.unwrap_or(0), key_form(v).into_owned()))
                    })
                    .collect();
                // Matched by the matching keys first; the other unique keys only check the match.
                let mut values = values;
                values.sort_by_key(|(k, _, _)| k.check_only);
                let mut fate = Fate::New { keyed: values.iter().any(|(k, _, _)| !k.check_only) };
                let mut first: Option<(&Key, NodeId)> = None;
                // A key the row is matched by whose value finds no node: the row is a node that is not in the
                // database, so another key finding one is a conflict, not a match.
                let mut unmatched: Option<(&Key, usize, &Value)> = None;
                for (k, col, v) in &values {
                    let Some(n) = self.existing(k, v) else {
                        if !k.check_only && unmatched.is_none() {
                            unmatched = Some((k, *col, v));
                        }
                        continue;
                    };
                    match first {
                        None if k.check_only => {
                            let message = format!(
                                "{}({}) = {} is a unique key that node {} of the database holds, and the row is not \
                                 that node",
                                name(TokenKind::Label, k.label.0),
                                name(TokenKind::PropKey, k.key.0),
                                shown(v),
                                n.0
                            );
                            bad_here.push((row, *col, message));
                            fate = Fate::Bad;
                            break;
                        }
                        None => {
                            first = Some((k, n));
                            fate = Fate::Existing(n);
                        }
                        Some((k0, n0)) if n0 != n => {
                            let message = format!(
                                "the row matches two nodes of the database: node {} by {}({}) and node {} by {}({}) = {}",
                                n0.0,
                                name(TokenKind::Label, k0.label.0),
                                name(TokenKind::PropKey, k0.key.0),
                                n.0,
                                name(TokenKind::Label, k.label.0),
                                name(TokenKind::PropKey, k.key.0),
                                shown(v)
                            );
                            bad_here.push((row, *col, message));
                            fate = Fate::Bad;
                            break;
                        }
                        Some(_) => {}
                    }
                }
                if let (Fate::Existing(n), Some((k0, _)), Some((k, col, v))) = (fate, first, unmatched) {
                    let message = format!(
                        "the row matches node {} of the database by {}({}), but {}({}) = {} finds no node: that \
                         node is not the row's",
                        n.0,
                        name(TokenKind::Label, k0.label.0),
                        name(TokenKind::PropKey, k0.key.0),
                        name(TokenKind::Label, k.label.0),
                        name(TokenKind::PropKey, k.key.0),
                        shown(v)
                    );
                    bad_here.push((row, col, message));
                    fate = Fate::Bad;
                }
                if matches!(fate, Fate::New { .. }) {
                    // `1` in a file read with string ids would quietly become a second node beside the database's
                    // integer 1 (or the other way round): almost surely the wrong id type, not a new node.
                    let lookalike = values.iter().filter(|(k, _, _)| !k.check_only).find_map(|(k, col, v)| {
                        let other = other_id_form(v)?;
                        self.existing(k, &other).map(|_| (*k, *col, v, other))
                    });
                    if let Some((k, col, v, other)) = lookalike {
                        let (written, held) = match v {
                            Value::String(_) => ("a string", "--id-type integer"),
                            _ => ("an integer", "--id-type string"),
                        };
                        let message = format!(
                            "{}({}) = {} is {written} here, and the database's node with that key holds {}: give \
                             {held} to match it (the import would otherwise add a second node)",
                            name(TokenKind::Label, k.label.0),
                            name(TokenKind::PropKey, k.key.0),
                            shown(v),
                            shown(&other)
                        );
                        bad_here.push((row, col, message));
                        fate = Fate::Bad;
                    }
                }
                if matches!(fate, Fate::New { .. }) {
                    let clash = values.iter().find_map(|(k, col, v)| {
                        taken.get(&(k.label, k.key, v.clone())).map(|&(g0, r0)| (*k, *col, v, g0, r0))
                    });
                    match clash {
                        Some((k, col, v, g0, r0)) => {
                            let message = format!(
                                "{}({}) = {} is a unique key, which {} has already",
                                name(TokenKind::Label, k.label.0),
                                name(TokenKind::PropKey, k.key.0),
                                shown(v),
                                groups[g0].place(r0)
                            );
                            bad_here.push((row, col, message));
                            fate = Fate::Bad;
                        }
                        None => {
                            for (k, _, v) in values {
                                taken.insert((k.label, k.key, v), (g, row));
                            }
                        }
                    }
                }
                fates.push(fate);
            }
            if !bad_here.is_empty() {
                bad.extend(bad_rows(group, &inputs[g], csv, bad_here));
            }
            all_fates.push(fates);
        }
        (all_fates, bad)
    }
}

/// The same id in the other form an id column may be read in: a string of a plain decimal integer as that
/// integer, an integer as its decimal string.
fn other_id_form(v: &Value) -> Option<Value> {
    match v {
        Value::String(s) => s.parse::<i64>().ok().filter(|i| i.to_string() == **s).map(Value::Int),
        Value::Int(i) => Some(Value::String(i.to_string().into())),
        _ => None,
    }
}
