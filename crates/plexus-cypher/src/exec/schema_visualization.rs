//! `db.schema.visualization()`: the graph's schema as a small graph of its own, the one Neo4j Browser draws for
//! `:schema`. Each label in use is a node (labelled with it, its `name` the label, with the properties its
//! indexes cover and the names of its constraints), and each relationship type that joins nodes of two labels
//! is a relationship between theirs. These entities are made up: the statement's context holds them
//! ([`Virtuals`]) and results resolve them from there.

use std::collections::{BTreeMap, BTreeSet};
use std::ops::ControlFlow;
use std::sync::Arc;

use plexus_storage::{LabelId, TypeId};

use super::ctx::{Ctx, Virtuals};
use crate::builtin::{labels_in_use, schema_objects};
use crate::error::Result;
use crate::value::{NodeData, RelData, ResultValue, Value};

/// Relationships read between two checks for an interrupt: the walk visits every relationship.
const CHECK_EVERY: usize = 1 << 16;

/// The procedure's one row, `[nodes, relationships]`, with the made-up entities registered in `ctx`.
pub(crate) fn rows(ctx: &Ctx) -> Result<Vec<Vec<Value>>> {
    let g = ctx.g();
    let catalog = ctx.catalog();
    let labels = labels_in_use(ctx);
    let node_of: BTreeMap<LabelId, u64> =
        labels.iter().enumerate().map(|(i, &(l, _))| (l, u64::MAX - i as u64)).collect();
    // Every (start label, type, end label) some relationship joins.
    let mut joined: BTreeSet<(LabelId, TypeId, LabelId)> = BTreeSet::new();
    let mut seen = 0usize;
    let walk = g.visit_all_rels(|r| {
        seen += 1;
        if seen.is_multiple_of(CHECK_EVERY) {
            if let Err(e) = ctx.check_interrupt() {
                return ControlFlow::Break(e);
            }
        }
        let (Some(from), Some(to)) = (g.node_labels(r.src), g.node_labels(r.dst)) else {
            return ControlFlow::Continue(());
        };
        for &a in from {
            for &b in to {
                joined.insert((a, r.ty, b));
            }
        }
        ControlFlow::Continue(())
    });
    if let ControlFlow::Break(e) = walk {
        return Err(e);
    }
    let objects = schema_objects(g, catalog);
    let mut virtuals = Virtuals::default();
    for (label, name) in labels {
        let id = node_of[&label];
        let of_label =
            || objects.iter().filter(|o| o.kind != crate::builtin::SchemaKind::RelIndex && o.token == label.0);
        let indexes: Vec<ResultValue> = of_label()
            .filter(|o| !o.is_constraint())
            .map(|o| ResultValue::String(o.property_names(catalog).join(",").into()))
            .collect();
        let constraints: Vec<ResultValue> =
            of_label().filter(|o| o.is_constraint()).map(|o| ResultValue::String(o.name.as_str().into())).collect();
        let properties = BTreeMap::from([
            (Arc::from("name"), ResultValue::String(name.clone())),
            (Arc::from("indexes"), ResultValue::List(indexes)),
            (Arc::from("constraints"), ResultValue::List(constraints)),
        ]);
        virtuals.nodes.insert(id, NodeData { id, labels: vec![name], properties });
    }
    let mut rels = Vec::new();
    for (i, &(a, ty, b)) in joined.iter().enumerate() {
        let (Some(&start), Some(&end)) = (node_of.get(&a), node_of.get(&b)) else { continue };
        let id = u64::MAX - i as u64;
        virtuals.rels.insert(id, RelData { id, start, end, rel_type: ctx.type_name(ty), properties: BTreeMap::new() });
        rels.push(Value::Rel(plexus_storage::RelId(id)));
    }
    let nodes = node_of.values().map(|&id| Value::Node(plexus_storage::NodeId(id))).collect();
    ctx.add_virtuals(virtuals);
    Ok(vec![vec![Value::list(nodes), Value::list(rels)]])
}
