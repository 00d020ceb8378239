//! Turning the rows a plan produced into client values: nodes and relationships resolved to their labels, type,
//! ends and properties (each node once per result), within the run's result-size limit.

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::error::{CypherError, ErrorKind, Phase, Result};
use crate::exec::ctx::Ctx;
use crate::exec::Row;
use crate::plan::PlanNode;
use crate::value::{NodeData, PathData, RelData, ResultValue, Value};

/// A result's rows as client values; checks the interrupt and the result-size limit between batches.
pub(crate) fn materialize(rows: Vec<Row>, ctx: &Ctx) -> Result<Vec<Vec<ResultValue>>> {
    let mut nodes: plexus_storage::fxhash::FxHashMap<u64, NodeData> = Default::default();
    let interrupt = match &ctx.interrupt {
        // Without a size limit, a result of one batch needs no check of its own: the operators made theirs.
        Some(i) if i.max_result_bytes.is_some() || rows.len() > crate::exec::BATCH => i.clone(),
        _ => {
            let mut out = Vec::with_capacity(rows.len());
            for row in rows {
                out.push(resolve_row(row, ctx, &mut nodes)?);
            }
            return Ok(out);
        }
    };
    let mut bytes = 0usize;
    let mut out = Vec::with_capacity(rows.len());
    for (i, row) in rows.into_iter().enumerate() {
        if i % crate::exec::BATCH == 0 {
            interrupt.check()?;
        }
        let row = resolve_row(row, ctx, &mut nodes)?;
        bytes += result_row_bytes(&row);
        interrupt.check_result_size(bytes)?;
        out.push(row);
    }
    Ok(out)
}

/// The rows of a read-only plan whose root returns columns `columns` of its input's rows, converted as `input`
/// lends them: no row is collected, copied to its columns or freed first. Checks the interrupt and the
/// result-size limit as [`materialize`] does.
pub(crate) fn materialize_lent(input: &PlanNode, columns: &[usize], ctx: &mut Ctx) -> Result<Vec<Vec<ResultValue>>> {
    let mut nodes: plexus_storage::fxhash::FxHashMap<u64, NodeData> = Default::default();
    let interrupt = ctx.interrupt.clone();
    let sized = interrupt.as_ref().is_some_and(|i| i.max_result_bytes.is_some());
    let mut bytes = 0usize;
    let mut out: Vec<Vec<ResultValue>> = Vec::new();
    let mut op = crate::exec::open(input, None);
    op.for_each_row(ctx, &mut |row, ctx| {
        if let Some(interrupt) = &interrupt {
            if out.len() % crate::exec::BATCH == crate::exec::BATCH - 1 {
                interrupt.check()?;
            }
        }
        let mut values = Vec::with_capacity(columns.len());
        for &c in columns {
            // Scalars read in place: a clone of every value would go through the value's clone, out of line.
            values.push(match &row[c] {
                &Value::Int(i) => ResultValue::Int(i),
                Value::Null => ResultValue::Null,
                v => client_value(v.clone(), ctx, &mut nodes)?,
            });
        }
        if out.capacity() == 0 {
            // Grown from empty, a small result would be reallocated at 4, 8 and 16 rows.
            out.reserve(16);
        }
        if let (true, Some(interrupt)) = (sized, &interrupt) {
            bytes += result_row_bytes(&values);
            interrupt.check_result_size(bytes)?;
        }
        out.push(values);
        Ok(std::ops::ControlFlow::Continue(()))
    })?;
    Ok(out)
}

fn props_map(props: Option<&plexus_storage::PropMap>, ctx: &Ctx) -> BTreeMap<Arc<str>, ResultValue> {
    let mut m = BTreeMap::new();
    if let Some(props) = props {
        for (k, v) in props.iter() {
            m.insert(ctx.key_name(k), plain(Value::from_stored(v)));
        }
    }
    m
}

fn node_data(
    id: plexus_storage::NodeId,
    ctx: &Ctx,
    cache: &mut plexus_storage::fxhash::FxHashMap<u64, NodeData>,
) -> Result<NodeData> {
    if let Some(n) = cache.get(&id.0) {
        return Ok(n.clone());
    }
    let g = ctx.g();
    let Some(labels) = g.node_labels(id) else {
        // Not in the graph: made up by a procedure (off the path of every stored node), or deleted.
        if let Some(n) = ctx.virtual_node(id.0) {
            return Ok(n);
        }
        // As Neo4j answers: a node the statement deleted is returned empty, without labels or properties.
        if ctx.deleted_node(id) {
            return Ok(NodeData { id: id.0, labels: Vec::new(), properties: Default::default() });
        }
        return Err(deleted_in_result("node", id.0));
    };
    // Sorted by id in storage: the order they were first created in the database, as Neo4j lists them.
    let labels: Vec<Arc<str>> = labels.iter().map(|l| ctx.label_name(*l)).collect();
    let n = NodeData { id: id.0, labels, properties: props_map(g.node_props(id).flatten(), ctx) };
    cache.insert(id.0, n.clone());
    Ok(n)
}

fn rel_data(id: plexus_storage::RelId, ctx: &Ctx) -> Result<RelData> {
    let g = ctx.g();
    let Some(rec) = g.rel(id) else {
        if let Some(r) = ctx.virtual_rel(id.0) {
            return Ok(r);
        }
        // As Neo4j answers: a relationship the statement deleted keeps its type and ends, without properties.
        let kept = ctx.deleted_rel(id).ok_or_else(|| deleted_in_result("relationship", id.0))?;
        return Ok(RelData {
            id: id.0,
            start: kept.start.0,
            end: kept.end.0,
            rel_type: ctx.type_name(kept.ty),
            properties: Default::default(),
        });
    };
    Ok(RelData {
        id: id.0,
        start: rec.src.0,
        end: rec.dst.0,
        rel_type: ctx.type_name(rec.ty),
        properties: props_map(g.rel_props(id).flatten().as_deref(), ctx),
    })
}

/// An entity gone from the graph that this statement did not delete (one deleted by an earlier statement of the
/// transaction): nothing is known of it to send.
fn deleted_in_result(what: &str, id: u64) -> CypherError {
    CypherError::new(
        ErrorKind::EntityNotFound,
        Phase::Runtime,
        "DeletedEntityAccess",
        format!(
            "the {what} with id {id} was deleted earlier in this transaction and cannot be returned; \
             return what is needed from it before the deletion, e.g. WITH x, properties(x) AS p DELETE x RETURN p"
        ),
    )
}

/// Converts a value with no graph entities inside.
fn plain(v: Value) -> ResultValue {
    match v {
        Value::Null => ResultValue::Null,
        Value::Bool(b) => ResultValue::Bool(b),
        Value::Int(i) => ResultValue::Int(i),
        Value::Float(f) => ResultValue::Float(f),
        Value::String(s) => ResultValue::String(s),
        Value::Bytes(b) => ResultValue::Bytes(b),
        Value::List(items) => ResultValue::List(items.iter().cloned().map(plain).collect()),
        Value::Map(m) => ResultValue::Map(m.iter().map(|(k, v)| (k.clone(), plain(v.clone()))).collect()),
        Value::Date(d) => ResultValue::Date(d),
        Value::LocalTime(t) => ResultValue::LocalTime(t),
        Value::Time(t) => ResultValue::Time(t),
        Value::LocalDateTime(t) => ResultValue::LocalDateTime(t),
        Value::DateTime(t) => ResultValue::DateTime(t),
        Value::Duration(d) => ResultValue::Duration(*d),
        Value::Point(p) => ResultValue::Point(*p),
        Value::Node(_) | Value::Rel(_) | Value::Path(_) => ResultValue::Null,
    }
}

/// A row's values as result values, in a plain loop (the adapters that collect a `Result` cost more than the
/// conversion of a small result), scalars without the call that resolves entities.
fn resolve_row(
    row: Row,
    ctx: &Ctx,
    nodes: &mut plexus_storage::fxhash::FxHashMap<u64, NodeData>,
) -> Result<Vec<ResultValue>> {
    let mut values = Vec::with_capacity(row.len());
    for v in row {
        values.push(client_value(v, ctx, nodes)?);
    }
    Ok(values)
}

/// One value as a result value, the common scalars without the call that resolves entities.
#[inline]
fn client_value(
    v: Value,
    ctx: &Ctx,
    nodes: &mut plexus_storage::fxhash::FxHashMap<u64, NodeData>,
) -> Result<ResultValue> {
    Ok(match v {
        Value::Int(i) => ResultValue::Int(i),
        Value::Null => ResultValue::Null,
        Value::String(s) => ResultValue::String(s),
        v => resolve(v, ctx, nodes)?,
    })
}

/// What a result row counts against the result-size limit: its values and its own allocation too (for narrow
/// rows of small values that is most of their memory).
fn result_row_bytes(row: &[ResultValue]) -> usize {
    std::mem::size_of::<Vec<ResultValue>>() + 16 + row.iter().map(ResultValue::approx_size).sum::<usize>()
}

fn resolve(v: Value, ctx: &Ctx, nodes: &mut plexus_storage::fxhash::FxHashMap<u64, NodeData>) -> Result<ResultValue> {
    Ok(match v {
        Value::Node(n) => ResultValue::Node(Box::new(node_data(n, ctx, nodes)?)),
        Value::Rel(r) => ResultValue::Rel(Box::new(rel_data(r, ctx)?)),
        Value::Path(p) => ResultValue::Path(Box::new(PathData {
            nodes: p.nodes.iter().map(|n| node_data(*n, ctx, nodes)).collect::<Result<_>>()?,
            rels: p.rels.iter().map(|r| rel_data(*r, ctx)).collect::<Result<_>>()?,
        })),
        Value::List(items) => {
            ResultValue::List(items.iter().cloned().map(|v| resolve(v, ctx, nodes)).collect::<Result<_>>()?)
        }
        Value::Map(m) => ResultValue::Map(
            m.iter().map(|(k, v)| Ok((k.clone(), resolve(v.clone(), ctx, nodes)?))).collect::<Result<_>>()?,
        ),
        other => plain(other),
    })
}
