//! Updating operators (CREATE, MERGE, SET, REMOVE, DELETE, FOREACH) and procedure calls.
//!
//! An update reads all of its input before changing anything (see [`crate::exec`]); MERGE then handles its rows
//! one at a time, so a later row sees what an earlier one created. A CREATE that nothing could tell from an
//! eager one (`UNWIND $rows AS r CREATE ...`, the bulk write; `crate::plan::planner::stream_creates`) changes
//! each batch of rows as it arrives instead.

use std::collections::BTreeSet;
use std::sync::Arc;

use plexus_storage::{LabelId, NodeId, PropKeyId, RelId, TokenKind, TypeId};

use super::ctx::{Ctx, DeletedRel};
use super::{approx_bytes, run_plan, Batch, Op, Operator, Row, RowExpander, BATCH};
use crate::error::{CypherError, ErrorKind, Phase, Result};
use crate::expr::{properties_of, CExpr};
use crate::plan::{CreateNode, CreateRel, PlanNode, Procedure, PropKey, SetOp};
use crate::procedures::ParamType;
use crate::token::Token;
use crate::value::{Map, Value};

pub(crate) struct Update<'p> {
    input: Op<'p>,
    plan: &'p PlanNode,
    output: Option<std::vec::IntoIter<Row>>,
}

impl<'p> Update<'p> {
    pub fn new(input: Op<'p>, plan: &'p PlanNode) -> Self {
        Update { input, plan, output: None }
    }
}

impl Operator for Update<'_> {
    fn next(&mut self, ctx: &mut Ctx) -> Result<Option<Batch>> {
        // A CREATE the planner lets stream changes each batch of rows as it arrives.
        if let PlanNode::Create { nodes, rels, streams: true, .. } = self.plan {
            let Some(mut batch) = self.input.next(ctx)? else { return Ok(None) };
            check_update_memory(ctx, 0)?;
            for row in &mut batch {
                create(row, nodes, rels, ctx, false)?;
            }
            return Ok(Some(batch));
        }
        if self.output.is_none() {
            let (rows, buffered) = read_all(&mut self.input, ctx)?;
            let rows = apply(self.plan, rows, ctx, buffered)?;
            self.output = Some(rows.into_iter());
        }
        let out: Batch = self.output.as_mut().unwrap().take(BATCH).collect();
        Ok(if out.is_empty() { None } else { Some(out) })
    }
}

/// Every row of `input`, and (under a memory limit) about how many bytes they hold, refused once they and the
/// statement's changes need more than the limit.
pub(crate) fn read_all(input: &mut Op<'_>, ctx: &mut Ctx) -> Result<(Vec<Row>, usize)> {
    let mut rows = Vec::new();
    let mut buffered = 0usize;
    // Sizes are added up only under a memory limit: a walk of every value held (a million maps of a parameter
    // list) is a pass the update does not otherwise need.
    let limited = ctx.memory_limited();
    while let Some(b) = input.next(ctx)? {
        if limited {
            buffered += b.iter().map(|row| row.iter().map(approx_bytes).sum::<usize>()).sum::<usize>();
            check_update_memory(ctx, buffered)?;
        }
        rows.extend(b);
    }
    Ok((rows, buffered))
}

/// What one recorded change of a write transaction takes in memory, roughly: the redo operation with its
/// values, and its share of the copied leaves. Only for the memory limit, which this keeps from being exceeded
/// by an order of magnitude, not to the byte.
const BYTES_PER_CHANGE: usize = 160;

/// Under a memory limit, an error once the rows an update holds (`buffered` bytes) and the changes its
/// transaction made so far need more than the limit: a statement like `UNWIND range(1, 100000000) AS i CREATE
/// (...)` would otherwise grow the process by gigabytes before it could fail.
fn check_update_memory(ctx: &mut Ctx, buffered: usize) -> Result<()> {
    let Some(interrupt) = ctx.interrupt.clone() else { return Ok(()) };
    if interrupt.max_result_bytes.is_none() {
        return Ok(());
    }
    let changes = ctx.tx().map_or(0, |tx| tx.op_count());
    interrupt.check_memory(buffered + changes * BYTES_PER_CHANGE, |limit| {
        format!(
            "the statement's changes and the rows it holds need more than its memory limit of {limit} bytes; \
             write in smaller transactions (CALL {{ ... }} IN TRANSACTIONS OF 10000 ROWS)"
        )
    })
}

fn apply(plan: &PlanNode, rows: Vec<Row>, ctx: &mut Ctx, buffered: usize) -> Result<Vec<Row>> {
    match plan {
        PlanNode::Create { nodes, rels, .. } => {
            // The created entities are written into the rows in place: no second vector of a million rows.
            let mut rows = rows;
            for (i, row) in rows.iter_mut().enumerate() {
                if i % BATCH == BATCH - 1 {
                    check_update_memory(ctx, buffered)?;
                }
                create(row, nodes, rels, ctx, false)?;
            }
            Ok(rows)
        }
        PlanNode::Set { items, .. } => {
            for (i, row) in rows.iter().enumerate() {
                if i % BATCH == BATCH - 1 {
                    check_update_memory(ctx, buffered)?;
                }
                set_all(row, items, ctx)?;
            }
            Ok(rows)
        }
        PlanNode::Delete { targets, detach, .. } => {
            let mut nodes = BTreeSet::new();
            let mut rels = BTreeSet::new();
            for row in &rows {
                for t in targets {
                    collect_deletions(t.eval(row, ctx)?, &mut nodes, &mut rels)?;
                }
            }
            delete(nodes, rels, *detach, ctx)?;
            Ok(rows)
        }
        PlanNode::Merge { matcher, nodes, rels, on_create, on_match, .. } => {
            let mut out = Vec::new();
            for (i, row) in rows.into_iter().enumerate() {
                if i % BATCH == BATCH - 1 {
                    check_update_memory(ctx, buffered)?;
                }
                let found = run_plan(matcher, Some(row.clone()), ctx, None)?;
                if found.is_empty() {
                    let mut row = row;
                    create(&mut row, nodes, rels, ctx, true)?;
                    set_all(&row, on_create, ctx)?;
                    out.push(row);
                } else {
                    for r in found {
                        set_all(&r, on_match, ctx)?;
                        out.push(r);
                    }
                }
            }
            Ok(out)
        }
        PlanNode::Foreach { slot, list, body, .. } => {
            for row in &rows {
                let items = match list.eval(row, ctx)? {
                    Value::Null => continue,
                    Value::List(items) => items,
                    // One value is a list of one, as Neo4j reads `FOREACH (x IN 1 | ...)`.
                    other => std::sync::Arc::from(vec![other]),
                };
                for item in items.iter() {
                    let mut inner = row.clone();
                    inner[*slot] = item.clone();
                    run_plan(body, Some(inner), ctx, None)?;
                }
            }
            Ok(rows)
        }
        _ => unreachable!("not an update"),
    }
}

/// The error for a MERGE whose property `key` holds a value that equals nothing, so that MERGE could never find
/// what it creates: null, or NaN (not even equal to itself).
fn unmatchable_merge_error(what: &str, key: &str, value: &Value) -> CypherError {
    let why = if value.is_null() {
        "is null: null never equals anything"
    } else {
        "is NaN: NaN equals nothing, not even itself"
    };
    let advice = if value.is_null() { " (leave the property out, or give it a value)" } else { "" };
    CypherError::new(
        ErrorKind::SemanticError,
        Phase::Runtime,
        "MergeReadOwnWrites",
        format!("cannot merge a {what} whose property '{key}' {why}, so MERGE could never find the {what} it creates{advice}"),
    )
}

/// A property key as a statement names it: written in the pattern (resolved once per plan) or from a map value.
enum Key<'a> {
    Token(&'a Token),
    Name(&'a str),
}

impl Key<'_> {
    fn name(&self) -> &str {
        match self {
            Key::Name(name) => name,
            Key::Token(token) => token.name(),
        }
    }
}

/// Evaluates a property map for CREATE/MERGE into storable pairs (null values are skipped).
fn eval_props(
    e: &Option<CExpr>,
    row: &Row,
    ctx: &mut Ctx,
    merge: bool,
    what: &str,
) -> Result<Vec<(PropKeyId, plexus_storage::Value)>> {
    let Some(e) = e else { return Ok(Vec::new()) };
    let mut out = Vec::with_capacity(if let CExpr::Map(entries) = e { entries.len() } else { 0 });
    let mut put = |k: Key, v: Value, ctx: &mut Ctx| -> Result<()> {
        if merge && (v.is_null() || matches!(v, Value::Float(f) if f.is_nan())) {
            return Err(unmatchable_merge_error(what, k.name(), &v));
        }
        if v.is_null() {
            return Ok(());
        }
        if k.name().is_empty() {
            return Err(empty_key());
        }
        let stored = v.to_stored().map_err(|m| CypherError::type_error("InvalidPropertyType", m))?;
        let tx = ctx.tx()?;
        let key = match k {
            Key::Name(name) => tx.prop_key(name),
            Key::Token(token) => PropKeyId(token.intern(tx.catalog(), TokenKind::PropKey)),
        };
        out.push((key, stored));
        Ok(())
    };
    // A map written in the pattern is evaluated entry by entry, without building the map.
    if let CExpr::Map(entries) = e {
        for (i, (k, x)) in entries.iter().enumerate() {
            let v = x.eval(row, ctx)?;
            // A key written twice (`{a: 1, a: 2}`) takes its last value, as in a map literal.
            if entries[i + 1..].iter().any(|(later, _)| later.name() == k.name()) {
                continue;
            }
            put(Key::Token(k), v, ctx)?;
        }
        out.sort_by_key(|(k, _)| *k);
        return Ok(out);
    }
    match e.eval(row, ctx)? {
        Value::Map(m) => {
            for (k, v) in m.iter() {
                put(Key::Name(k), v.clone(), ctx)?;
            }
        }
        // Null too, as in Neo4j: `CREATE (n $props)` with no map is a mistake, not an empty node.
        other => {
            return Err(CypherError::type_error(
                "InvalidArgumentType",
                format!("properties must be a map, got {}", other.type_name()),
            ))
        }
    }
    Ok(out)
}

fn create(row: &mut Row, nodes: &[CreateNode], rels: &[CreateRel], ctx: &mut Ctx, merge: bool) -> Result<()> {
    for n in nodes {
        if n.bound {
            match &row[n.slot] {
                Value::Node(_) => continue,
                Value::Null => {
                    return Err(CypherError::new(
                        ErrorKind::SemanticError,
                        Phase::Runtime,
                        "CreateNullNode",
                        "cannot create a relationship to or from a null node",
                    ))
                }
                other => {
                    return Err(CypherError::type_error(
                        "InvalidArgumentType",
                        format!("expected a node, got {}", other.type_name()),
                    ))
                }
            }
        }
        let props = eval_props(&n.properties, row, ctx, merge, "node")?;
        let computed = computed_labels(&n.dynamic_labels, row, ctx)?;
        let tx = ctx.tx()?;
        let mut labels = plexus_storage::records::Labels::new();
        // A label written twice (`:A:B:A`) is one label, and counted once.
        let named = n.labels.iter().map(|l| LabelId(l.intern(tx.catalog(), TokenKind::Label)));
        for id in named.chain(computed.iter().map(|name| tx.label(name))) {
            if !labels.contains(&id) {
                labels.push(id);
            }
        }
        let nprops = props.len() as u64;
        let id = tx.create_node(&labels, props)?;
        ctx.stats.nodes_created += 1;
        ctx.stats.labels_added += labels.len() as u64;
        ctx.stats.properties_set += nprops;
        row[n.slot] = Value::Node(id);
    }
    for r in rels {
        let (Value::Node(from), Value::Node(to)) = (&row[r.from], &row[r.to]) else {
            return Err(CypherError::new(
                ErrorKind::SemanticError,
                Phase::Runtime,
                "CreateNullNode",
                "cannot create a relationship to or from a null node",
            ));
        };
        let (from, to) = (*from, *to);
        let props = eval_props(&r.properties, row, ctx, merge, "relationship")?;
        let computed = match &r.dynamic_type {
            Some(e) => Some(type_name(&e.eval(row, ctx)?)?),
            None => None,
        };
        let tx = ctx.tx()?;
        let ty = match computed {
            Some(name) => TypeId(Token::new(&*name).intern(tx.catalog(), TokenKind::Type)),
            None => TypeId(r.rel_type.intern(tx.catalog(), TokenKind::Type)),
        };
        let nprops = props.len() as u64;
        if !tx.node_exists(from) || !tx.node_exists(to) {
            return Err(deleted_node());
        }
        if merge {
            tx.declare_merged_edge(from, ty, to);
        }
        let id = tx.create_rel(from, ty, to, props)?;
        ctx.stats.relationships_created += 1;
        ctx.stats.properties_set += nprops;
        row[r.slot] = Value::Rel(id);
    }
    Ok(())
}

fn deleted_node() -> CypherError {
    CypherError::new(ErrorKind::EntityNotFound, Phase::Runtime, "DeletedEntityAccess", "the node was deleted")
}

fn stored(v: &Value) -> Result<plexus_storage::Value> {
    v.to_stored().map_err(|m| CypherError::type_error("InvalidPropertyType", m))
}

enum Entity {
    Node(NodeId),
    Rel(RelId),
}

fn entity(v: Value, what: &str) -> Result<Option<Entity>> {
    match v {
        Value::Null => Ok(None),
        Value::Node(n) => Ok(Some(Entity::Node(n))),
        Value::Rel(r) => Ok(Some(Entity::Rel(r))),
        other => Err(CypherError::type_error(
            "InvalidArgumentType",
            format!("{what} expects a node or relationship, got {}", other.type_name()),
        )),
    }
}

/// Whether `target` exists and has no property `key` (a deleted entity does not lack it: writing to it fails).
fn lacks_prop(ctx: &Ctx, target: &Entity, key: &str) -> bool {
    let g = ctx.g();
    let k = ctx.prop_key(key);
    match target {
        Entity::Node(n) => g.node_exists(*n) && k.is_none_or(|k| g.node_prop(*n, k).is_none()),
        Entity::Rel(r) => g.rel_exists(*r) && k.is_none_or(|k| g.rel_prop(*r, k).is_none()),
    }
}

/// A property key must have a name, as in Neo4j: one written from a map (`SET n = $map`) is checked here.
fn empty_key() -> CypherError {
    CypherError::syntax("InvalidTokenName", "'' is not a valid token name: a property key cannot be empty")
}

fn set_prop(ctx: &mut Ctx, target: &Entity, key: &str, value: plexus_storage::Value) -> Result<()> {
    if key.is_empty() {
        return Err(empty_key());
    }
    let tx = ctx.tx()?;
    let k = tx.prop_key(key);
    match target {
        Entity::Node(n) => {
            if !tx.node_exists(*n) {
                return Err(deleted_node());
            }
            tx.set_node_prop(*n, k, value)?
        }
        Entity::Rel(r) => {
            if !tx.rel_exists(*r) {
                return Err(deleted_node());
            }
            tx.set_rel_prop(*r, k, value)?
        }
    }
    ctx.stats.properties_set += 1;
    Ok(())
}

/// The labels `:$(expr)` items compute: each a string or a list of strings, none empty.
pub(crate) fn computed_labels(exprs: &[CExpr], row: &Row, ctx: &Ctx) -> Result<Vec<Arc<str>>> {
    let values = exprs.iter().map(|e| e.eval(row, ctx)).collect::<Result<Vec<_>>>()?;
    label_names(&values)
}

/// The relationship type `[:$(...)]` names: a non-empty string (or a list of exactly one).
pub(crate) fn type_name(v: &Value) -> Result<Arc<str>> {
    match v {
        Value::String(s) if !s.is_empty() => Ok(s.clone()),
        Value::List(items) if items.len() == 1 => type_name(&items[0]),
        other => {
            let got = if matches!(other, Value::String(_)) {
                "an empty string".to_string()
            } else {
                other.type_name().to_string()
            };
            Err(CypherError::type_error(
                "InvalidArgumentType",
                format!("a relationship type must be one non-empty string, got {got}"),
            ))
        }
    }
}

/// The labels `:$(...)` values name: each a non-empty string or a list of them.
pub(crate) fn label_names(values: &[Value]) -> Result<Vec<Arc<str>>> {
    let mut labels = Vec::new();
    let bad = |v: &Value| {
        let got = if matches!(v, Value::String(_)) { "an empty string" } else { v.type_name() };
        CypherError::type_error("InvalidArgumentType", format!("a label must be a non-empty string, got {got}"))
    };
    for v in values {
        let items = match v {
            Value::List(items) => items.iter().cloned().collect(),
            _ => vec![v.clone()],
        };
        for item in items {
            match item {
                Value::String(s) if !s.is_empty() => labels.push(Arc::from(&*s)),
                other => return Err(bad(&other)),
            }
        }
    }
    Ok(labels)
}

/// The key a SET or REMOVE item names; a computed one must be a string.
fn property_key(key: &PropKey, row: &Row, ctx: &mut Ctx) -> Result<Arc<str>> {
    match key {
        PropKey::Name(name) => Ok(name.clone()),
        PropKey::Dynamic(key) => match key.eval(row, ctx)? {
            Value::String(s) => Ok(Arc::from(&*s)),
            other => Err(CypherError::type_error(
                "InvalidArgumentType",
                format!("a property key must be a string, got {}", other.type_name()),
            )),
        },
    }
}

/// The items of one SET (or ON CREATE / ON MATCH SET) for one row, in order, as Neo4j applies them: a run of
/// consecutive `n.key = value` items on the same variable is evaluated before any of it is written (so
/// `SET n.a = n.b, n.b = n.a` swaps), and every other item is written before the next is evaluated (so
/// `SET a.x = b.x, b.x = a.x` gives both `b.x`, and `SET n:B, n.l = labels(n)` sees `B`).
fn set_all(row: &Row, items: &[SetOp], ctx: &mut Ctx) -> Result<()> {
    let same_variable = |item: &SetOp| match item {
        SetOp::Property { target: CExpr::Slot(slot), .. } => Some(*slot),
        _ => None,
    };
    let mut start = 0;
    while start < items.len() {
        let end = match same_variable(&items[start]) {
            Some(slot) => start + items[start..].iter().take_while(|item| same_variable(item) == Some(slot)).count(),
            None => start + 1,
        };
        let mut values = Vec::with_capacity(end - start);
        for item in &items[start..end] {
            values.push(match item {
                SetOp::Property { value, .. } => Some(value.eval(row, ctx)?),
                SetOp::Properties { value, .. } => Some(match value.eval(row, ctx)? {
                    v @ (Value::Node(_) | Value::Rel(_)) => properties_of(&v, ctx)?,
                    v => v,
                }),
                _ => None,
            });
        }
        for (item, value) in items[start..end].iter().zip(values) {
            set(row, item, value, ctx)?;
        }
        start = end;
    }
    Ok(())
}

/// One SET item, with its value already evaluated (`value`, for the items that have one).
fn set(row: &Row, item: &SetOp, value: Option<Value>, ctx: &mut Ctx) -> Result<()> {
    match item {
        SetOp::Property { target, key, .. } => {
            let Some(t) = entity(target.eval(row, ctx)?, "SET")? else { return Ok(()) };
            let key = property_key(key, row, ctx)?;
            let v = stored(&value.unwrap_or(Value::Null))?;
            // Setting null removes: nothing to do (or count) when there is nothing to remove.
            if matches!(v, plexus_storage::Value::Null) && lacks_prop(ctx, &t, &key) {
                return Ok(());
            }
            set_prop(ctx, &t, &key, v)
        }
        SetOp::RemoveProperty { target, key } => {
            let Some(t) = entity(target.eval(row, ctx)?, "REMOVE")? else { return Ok(()) };
            let key = property_key(key, row, ctx)?;
            if !lacks_prop(ctx, &t, &key) {
                set_prop(ctx, &t, &key, plexus_storage::Value::Null)?;
            }
            Ok(())
        }
        SetOp::Properties { slot, merge, .. } => {
            let Some(t) = entity(row[*slot].clone(), "SET")? else { return Ok(()) };
            let new: Map = match value.unwrap_or(Value::Null) {
                Value::Map(m) => (*m).clone(),
                // Not an empty map: `SET n = $props` with a missing value would otherwise remove every property.
                other => {
                    return Err(CypherError::type_error(
                        "InvalidArgumentType",
                        format!("SET expects a map, got {}", other.type_name()),
                    ))
                }
            };
            if !*merge {
                let current = match &t {
                    Entity::Node(n) => properties_of(&Value::Node(*n), ctx)?,
                    Entity::Rel(r) => properties_of(&Value::Rel(*r), ctx)?,
                };
                if let Value::Map(current) = current {
                    for k in current.keys() {
                        if !new.contains_key(k) {
                            set_prop(ctx, &t, k, plexus_storage::Value::Null)?;
                        }
                    }
                }
            }
            for (k, v) in new.iter() {
                // A null for a key the entity does not have changes nothing, and is not counted (as in Neo4j).
                if v.is_null() && lacks_prop(ctx, &t, k) {
                    continue;
                }
                set_prop(ctx, &t, k, stored(v)?)?;
            }
            Ok(())
        }
        SetOp::Labels { slot, labels, dynamic } => {
            let n = match &row[*slot] {
                Value::Null => return Ok(()),
                Value::Node(n) => *n,
                other => {
                    return Err(CypherError::type_error(
                        "InvalidArgumentType",
                        format!("labels can only be set on nodes, not {}", other.type_name()),
                    ))
                }
            };
            let computed = computed_labels(dynamic, row, ctx)?;
            for l in labels.iter().chain(&computed) {
                let tx = ctx.tx()?;
                let id = tx.label(l);
                if !tx.node_exists(n) {
                    return Err(deleted_node());
                }
                if !tx.node_has_label(n, id) {
                    tx.add_label(n, id)?;
                    ctx.stats.labels_added += 1;
                }
            }
            Ok(())
        }
        SetOp::RemoveLabels { slot, labels, dynamic } => {
            let n = match &row[*slot] {
                Value::Null => return Ok(()),
                Value::Node(n) => *n,
                other => {
                    return Err(CypherError::type_error(
                        "InvalidArgumentType",
                        format!("labels can only be removed from nodes, not {}", other.type_name()),
                    ))
                }
            };
            let computed = computed_labels(dynamic, row, ctx)?;
            for l in labels.iter().chain(&computed) {
                let Some(id) = ctx.label_id(l) else { continue };
                let tx = ctx.tx()?;
                if tx.node_has_label(n, id) {
                    tx.remove_label(n, id)?;
                    ctx.stats.labels_removed += 1;
                }
            }
            Ok(())
        }
    }
}

fn collect_deletions(v: Value, nodes: &mut BTreeSet<NodeId>, rels: &mut BTreeSet<RelId>) -> Result<()> {
    match v {
        Value::Null => {}
        Value::Node(n) => {
            nodes.insert(n);
        }
        Value::Rel(r) => {
            rels.insert(r);
        }
        Value::Path(p) => {
            nodes.extend(p.nodes.iter().copied());
            rels.extend(p.rels.iter().copied());
        }
        other => {
            return Err(CypherError::type_error(
                "InvalidArgumentType",
                format!("DELETE expects a node, relationship or path, got {}", other.type_name()),
            ))
        }
    }
    Ok(())
}

fn delete(nodes: BTreeSet<NodeId>, rels: BTreeSet<RelId>, detach: bool, ctx: &mut Ctx) -> Result<()> {
    for r in rels {
        let tx = ctx.tx()?;
        if let Some(rec) = tx.rel(r) {
            tx.delete_rel(r)?;
            ctx.deleted_mut().rels.insert(r, DeletedRel { ty: rec.ty, start: rec.src, end: rec.dst });
            ctx.stats.relationships_deleted += 1;
            // A node deleted earlier in the statement while this relationship still held it goes now.
            for end in [rec.src, rec.dst] {
                if ctx.deleted.as_ref().is_some_and(|d| d.connected.contains(&end)) && delete_if_unconnected(ctx, end)?
                {
                    ctx.deleted_mut().connected.remove(&end);
                }
            }
        }
    }
    for n in nodes {
        let tx = ctx.tx()?;
        if !tx.node_exists(n) {
            continue;
        }
        let waiting = ctx.deleted.as_ref().is_some_and(|d| d.connected.contains(&n));
        if ctx.deleted_node(n) && !(detach && waiting) {
            continue;
        }
        if detach {
            let tx = ctx.tx()?;
            let out = tx.rels_of(n, plexus_storage::Direction::Out, plexus_storage::TypeFilter::All);
            let incoming = tx.rels_of(n, plexus_storage::Direction::In, plexus_storage::TypeFilter::All);
            let deleted = ctx.deleted_mut();
            let kept = |e: &plexus_storage::RelEntry, start, end| (e.rel, DeletedRel { ty: e.ty, start, end });
            deleted.rels.extend(out.iter().map(|e| kept(e, n, e.nbr)));
            deleted.rels.extend(incoming.iter().map(|e| kept(e, e.nbr, n)));
            deleted.connected.remove(&n);
            let tx = ctx.tx()?;
            let removed = tx.detach_delete_node(n)?;
            ctx.stats.relationships_deleted += removed;
            if waiting {
                // Counted when it was first deleted.
                continue;
            }
        } else if !delete_if_unconnected(ctx, n)? {
            // As in Neo4j, what counts is that its relationships are gone by the end of the statement (`DELETE n
            // DELETE r` in two clauses): it is deleted for the rest of the statement, and [`settle_deletions`]
            // refuses the statement if it is still connected then.
            ctx.deleted_mut().connected.insert(n);
        }
        ctx.deleted_mut().nodes.insert(n);
        ctx.stats.nodes_deleted += 1;
    }
    Ok(())
}

/// Ends the deletions of a statement (or of a part of it that commits): a node deleted while it still had
/// relationships must have lost them all by now.
pub(crate) fn settle_deletions(ctx: &mut Ctx) -> Result<()> {
    let Some(waiting) = ctx.deleted.as_ref().filter(|d| !d.connected.is_empty()).map(|d| d.connected.clone()) else {
        return Ok(());
    };
    for n in waiting {
        if !ctx.tx()?.node_exists(n) {
            continue;
        }
        if !delete_if_unconnected(ctx, n)? {
            return Err(CypherError::new(
                ErrorKind::ConstraintVerificationFailed,
                Phase::Runtime,
                "DeleteConnectedNode",
                format!("cannot delete node {}: it still has relationships; use DETACH DELETE", n.0),
            ));
        }
    }
    ctx.deleted_mut().connected.clear();
    Ok(())
}

/// Deletes node `n` if no relationship holds it; whether it did.
fn delete_if_unconnected(ctx: &mut Ctx, n: NodeId) -> Result<bool> {
    let tx = ctx.tx()?;
    if tx.degree(n, plexus_storage::Direction::Both, plexus_storage::TypeFilter::All) > 0 {
        return Ok(false);
    }
    tx.delete_node(n)?;
    Ok(true)
}

/// A call's argument values, each checked against its declared type (`of`: the procedure, named in the error).
fn checked_args<'a>(
    exprs: &[CExpr],
    inputs: impl Iterator<Item = (&'a str, ParamType)>,
    of: Option<&str>,
    row: &Row,
    ctx: &mut Ctx,
) -> Result<Vec<Value>> {
    let mut args = Vec::with_capacity(exprs.len());
    for (e, (name, ty)) in exprs.iter().zip(inputs) {
        let v = e.eval(row, ctx)?;
        if !ty.accepts(&v) {
            let of = of.map(|p| format!(" of {p}")).unwrap_or_default();
            return Err(CypherError::type_error(
                "InvalidArgumentType",
                format!("argument `{name}`{of} must be {ty:?}, got {}", v.type_name()),
            ));
        }
        args.push(v);
    }
    Ok(args)
}

pub(crate) struct ProcedureCall<'p> {
    pub procedure: &'p Procedure,
    pub args: &'p [CExpr],
    pub yields: &'p [(usize, usize)],
    /// `OPTIONAL CALL` and its `WHERE` (see `PlanNode::Call`).
    pub optional: Option<&'p Option<CExpr>>,
}

impl RowExpander for ProcedureCall<'_> {
    fn expand(&mut self, row: &mut Row, ctx: &mut Ctx, out: &mut Batch) -> Result<bool> {
        let rows = match self.procedure {
            Procedure::Builtin(b) => {
                let inputs = b.inputs().0.iter().map(|&(name, ty)| (name, ty));
                let args = checked_args(self.args, inputs, None, row, ctx)?;
                b.rows(ctx, &args)?
            }
            Procedure::Listing { rows, .. } => rows.to_vec(),
            Procedure::User(p) => {
                let inputs = p.signature.inputs.iter().map(|(name, ty)| (name.as_str(), *ty));
                (p.body)(&checked_args(self.args, inputs, Some(&p.signature.name), row, ctx)?)?
            }
        };
        if self.procedure.fields().is_empty() {
            // A procedure without outputs leaves the rows as they are.
            out.push(row.clone());
            return Ok(false);
        }
        let before = out.len();
        for values in rows {
            let mut r = row.clone();
            for (field, slot) in self.yields {
                r[*slot] = values.get(*field).cloned().unwrap_or(Value::Null);
            }
            if let Some(Some(predicate)) = self.optional {
                if predicate.eval(&r, ctx)? != Value::Bool(true) {
                    continue;
                }
            }
            out.push(r);
        }
        if self.optional.is_some() && out.len() == before {
            let mut r = row.clone();
            for (_, slot) in self.yields {
                r[*slot] = Value::Null;
            }
            out.push(r);
        }
        Ok(false)
    }
}
