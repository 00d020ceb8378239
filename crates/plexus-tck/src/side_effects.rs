//! Side effects, measured the way the reference implementation does: the state of the graph before and after the
//! query as sets of nodes, relationships, label names in use, and property entries `(entity, key, value)`, and the
//! sizes of the set differences. Setting a property to the value it had is no side effect; replacing a value is
//! one `-properties` and one `+properties`. The engine's own statistics are not consulted.

use std::collections::HashSet;
use std::ops::ControlFlow;

use plexus::{ReadTxn, TokenKind};

use crate::notation::TckValue;

/// The eight counters of `the side effects should be`, in the TCK's spelling.
pub const KEYS: [&str; 8] =
    ["+nodes", "-nodes", "+relationships", "-relationships", "+labels", "-labels", "+properties", "-properties"];

/// A property entry: node or relationship, its id, the key, and the value in canonical notation.
type PropEntry = (bool, u64, String, String);

/// What side effects are measured on.
#[derive(Debug, Default, Clone)]
pub struct GraphState {
    nodes: HashSet<u64>,
    rels: HashSet<u64>,
    labels: HashSet<String>,
    props: HashSet<PropEntry>,
}

/// Counts per [`KEYS`] entry.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct SideEffects(pub [u64; 8]);

fn stored_to_tck(value: &plexus::Value) -> TckValue {
    use plexus::Value as S;
    match value {
        S::Null => TckValue::Null,
        S::Bool(b) => TckValue::Bool(*b),
        S::Int(i) => TckValue::Int(*i),
        S::Float(f) => TckValue::Float(*f),
        S::String(s) => TckValue::String(s.to_string()),
        S::List(items) => TckValue::List(items.iter().map(stored_to_tck).collect()),
        // Temporal values and bytes: their debug form distinguishes values, which is all a diff needs.
        other => TckValue::String(format!("{other:?}")),
    }
}

impl GraphState {
    /// Reads the state of a snapshot.
    pub fn capture(txn: &ReadTxn) -> GraphState {
        let catalog = txn.catalog();
        let name = |kind: TokenKind, id: u32| catalog.name(kind, id).map(|n| n.to_string()).unwrap_or_default();
        let mut state = GraphState::default();
        let _ = txn.visit_nodes(|id| {
            state.nodes.insert(id.0);
            for label in txn.node_labels(id).unwrap_or(&[]) {
                if !state.labels.contains(&name(TokenKind::Label, label.0)) {
                    state.labels.insert(name(TokenKind::Label, label.0));
                }
            }
            if let Some(Some(props)) = txn.node_props(id) {
                for (key, value) in props.iter() {
                    let entry = (true, id.0, name(TokenKind::PropKey, key.0), stored_to_tck(value).canonical(false));
                    state.props.insert(entry);
                }
            }
            ControlFlow::<()>::Continue(())
        });
        let _ = txn.visit_all_rels(|rel| {
            state.rels.insert(rel.id.0);
            if let Some(Some(props)) = txn.rel_props(rel.id) {
                for (key, value) in props.iter() {
                    let entry =
                        (false, rel.id.0, name(TokenKind::PropKey, key.0), stored_to_tck(value).canonical(false));
                    state.props.insert(entry);
                }
            }
            ControlFlow::<()>::Continue(())
        });
        state
    }

    /// The side effects of going from `self` to `after`.
    pub fn diff(&self, after: &GraphState) -> SideEffects {
        fn both<T: Eq + std::hash::Hash>(a: &HashSet<T>, b: &HashSet<T>) -> [u64; 2] {
            [b.difference(a).count() as u64, a.difference(b).count() as u64]
        }
        let [n1, n2] = both(&self.nodes, &after.nodes);
        let [r1, r2] = both(&self.rels, &after.rels);
        let [l1, l2] = both(&self.labels, &after.labels);
        let [p1, p2] = both(&self.props, &after.props);
        SideEffects([n1, n2, r1, r2, l1, l2, p1, p2])
    }
}

impl SideEffects {
    /// The expected side effects from a `| +nodes | 1 |` table; counters it does not name are zero.
    pub fn from_table(rows: &[Vec<String>]) -> Result<SideEffects, String> {
        let mut counts = [0u64; 8];
        for row in rows {
            let [key, value] = row.as_slice() else {
                return Err(format!("a side effect row has {} cells", row.len()));
            };
            let index = KEYS.iter().position(|k| k == key).ok_or_else(|| format!("unknown side effect `{key}`"))?;
            counts[index] = value.parse().map_err(|_| format!("side effect `{key}`: bad count `{value}`"))?;
        }
        Ok(SideEffects(counts))
    }
}

impl std::fmt::Display for SideEffects {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let parts: Vec<String> =
            KEYS.iter().zip(self.0).filter(|(_, n)| *n != 0).map(|(k, n)| format!("{k} {n}")).collect();
        if parts.is_empty() {
            f.write_str("none")
        } else {
            f.write_str(&parts.join(", "))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use plexus::{Database, Value};

    #[test]
    fn diffs_sets_of_entities_labels_and_properties() {
        let db = Database::in_memory();
        let mut tx = db.write();
        let (a, b, name, t) = (tx.label("A"), tx.label("B"), tx.prop_key("name"), tx.rel_type("T"));
        let n1 = tx.create_node(&[a], vec![(name, Value::from("x"))]).unwrap();
        let n2 = tx.create_node(&[a], vec![]).unwrap();
        tx.commit().unwrap();
        let before = GraphState::capture(&db.read());

        let mut tx = db.write();
        tx.create_node(&[a, b], vec![]).unwrap();
        tx.set_node_prop(n1, name, Value::from("y")).unwrap();
        tx.set_node_prop(n2, name, Value::from("z")).unwrap();
        tx.create_rel(n1, t, n2, vec![(name, Value::Int(1))]).unwrap();
        tx.commit().unwrap();
        let after = GraphState::capture(&db.read());
        // One new node; label B newly in use (A already was); name on n1 replaced, on n2 and the rel added.
        assert_eq!(before.diff(&after).0, [1, 0, 1, 0, 1, 0, 3, 1]);
        assert_eq!(
            before.diff(&after).to_string(),
            "+nodes 1, +relationships 1, +labels 1, +properties 3, -properties 1"
        );

        let mut tx = db.write();
        tx.detach_delete_node(n1).unwrap();
        tx.commit().unwrap();
        let gone = GraphState::capture(&db.read());
        assert_eq!(after.diff(&gone).0, [0, 1, 0, 1, 0, 0, 0, 2]);
        assert_eq!(gone.diff(&gone), SideEffects::default());
    }

    #[test]
    fn expected_tables() {
        let rows = vec![vec!["+nodes".to_string(), "2".to_string()], vec!["-labels".into(), "1".into()]];
        assert_eq!(SideEffects::from_table(&rows).unwrap().0, [2, 0, 0, 0, 0, 1, 0, 0]);
        assert!(SideEffects::from_table(&[vec!["+widgets".into(), "1".into()]]).is_err());
    }
}
