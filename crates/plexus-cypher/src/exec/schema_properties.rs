//! `db.schema.nodeTypeProperties()` and `db.schema.relTypeProperties()`: the properties each kind of node
//! (set of labels) and relationship (type) has, the types of their values, and whether every one of them has
//! it. Tools that generate queries (schema browsers, text-to-Cypher) read the schema this way. Every node and
//! relationship is read, so the answer is exact.

use std::collections::{BTreeMap, BTreeSet};
use std::ops::ControlFlow;
use std::sync::Arc;

use plexus_storage::value::Value as Stored;
use plexus_storage::{PropKeyId, PropMap};

use super::ctx::Ctx;
use crate::value::Value;

/// What was seen of one kind: how many there are, and per property how many have it and its value types.
#[derive(Default)]
struct Kind {
    count: u64,
    properties: BTreeMap<PropKeyId, (u64, BTreeSet<&'static str>)>,
}

impl Kind {
    fn add(&mut self, props: Option<&PropMap>) {
        self.count += 1;
        for (key, value) in props.into_iter().flat_map(PropMap::iter) {
            let entry = self.properties.entry(key).or_default();
            entry.0 += 1;
            entry.1.insert(type_name(value));
        }
    }

    /// Rows `prefix ++ [propertyName, propertyTypes, mandatory]`, or one with nulls when it has no properties.
    fn rows(&self, prefix: &[Value], ctx: &Ctx, out: &mut Vec<Vec<Value>>) {
        if self.properties.is_empty() {
            let mut row = prefix.to_vec();
            row.extend([Value::Null, Value::Null, Value::Bool(false)]);
            out.push(row);
        }
        for (key, (count, types)) in &self.properties {
            let mut row = prefix.to_vec();
            row.push(Value::String(ctx.catalog().name(plexus_storage::TokenKind::PropKey, key.0).unwrap_or_default()));
            row.push(Value::list(types.iter().map(|t| Value::string(*t)).collect()));
            row.push(Value::Bool(*count == self.count));
            out.push(row);
        }
    }
}

/// Neo4j's names for property types (Java's), which these procedures report.
fn type_name(v: &Stored) -> &'static str {
    match v {
        Stored::Null => "Null",
        Stored::Bool(_) => "Boolean",
        Stored::Int(_) => "Long",
        Stored::Float(_) => "Double",
        Stored::String(_) => "String",
        Stored::Bytes(_) => "ByteArray",
        Stored::Date(_) => "Date",
        Stored::LocalTime(_) => "LocalTime",
        Stored::Time(_) => "Time",
        Stored::LocalDateTime(_) => "LocalDateTime",
        Stored::DateTime(_) => "DateTime",
        Stored::Duration(_) => "Duration",
        Stored::Point(_) => "Point",
        Stored::List(items) => match items.first() {
            None | Some(Stored::String(_)) => "StringArray",
            Some(Stored::Bool(_)) => "BooleanArray",
            Some(Stored::Int(_)) => "LongArray",
            Some(Stored::Float(_)) => "DoubleArray",
            Some(Stored::Date(_)) => "DateArray",
            Some(Stored::LocalTime(_)) => "LocalTimeArray",
            Some(Stored::Time(_)) => "TimeArray",
            Some(Stored::LocalDateTime(_)) => "LocalDateTimeArray",
            Some(Stored::DateTime(_)) => "DateTimeArray",
            Some(Stored::Duration(_)) => "DurationArray",
            Some(Stored::Point(_)) => "PointArray",
            Some(_) => "Array",
        },
    }
}

fn quoted_labels(names: &[Arc<str>]) -> String {
    names.iter().map(|n| format!(":`{}`", n.replace('`', "``"))).collect()
}

pub(crate) fn node_type_properties(ctx: &Ctx) -> Vec<Vec<Value>> {
    let g = ctx.g();
    let mut kinds: BTreeMap<Vec<Arc<str>>, Kind> = BTreeMap::new();
    let _ = g.visit_nodes::<()>(|n| {
        let mut labels: Vec<Arc<str>> = g.node_labels(n).unwrap_or(&[]).iter().map(|l| ctx.label_name(*l)).collect();
        labels.sort();
        kinds.entry(labels).or_default().add(g.node_props(n).flatten());
        ControlFlow::Continue(())
    });
    let mut out = Vec::new();
    for (labels, kind) in &kinds {
        let prefix = [
            Value::string(quoted_labels(labels)),
            Value::list(labels.iter().map(|l| Value::String(l.clone())).collect()),
        ];
        kind.rows(&prefix, ctx, &mut out);
    }
    out
}

pub(crate) fn rel_type_properties(ctx: &Ctx) -> Vec<Vec<Value>> {
    let g = ctx.g();
    let mut kinds: BTreeMap<Arc<str>, Kind> = BTreeMap::new();
    let _ = g.visit_all_rels::<()>(|r| {
        kinds.entry(ctx.type_name(r.ty)).or_default().add(g.rel_props(r.id).flatten().as_deref());
        ControlFlow::Continue(())
    });
    let mut out = Vec::new();
    for (ty, kind) in &kinds {
        kind.rows(&[Value::string(quoted_labels(std::slice::from_ref(ty)))], ctx, &mut out);
    }
    out
}
