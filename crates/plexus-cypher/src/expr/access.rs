//! What expressions read from values and the graph: properties of entities, maps and temporals, indexing into
//! lists and maps, paths built from a row, and the functions that need the graph.

use super::*;
use crate::exec::ctx::is_virtual;
use crate::ResultValue;

pub(super) fn not_a_list(v: &Value) -> CypherError {
    CypherError::type_error("InvalidArgumentType", format!("expected a list, got {}", v.type_name()))
}

pub(super) fn build_path(row: &[Value], nodes: &[usize], rels: &[usize], ctx: &Ctx) -> Result<Value> {
    let g = ctx.g();
    let first = match &row[nodes[0]] {
        Value::Node(n) => *n,
        Value::Null => return Ok(Value::Null),
        other => {
            return Err(CypherError::type_error("InvalidArgumentType", format!("not a node: {}", other.type_name())))
        }
    };
    let mut path = Path { nodes: vec![first], rels: Vec::new() };
    for &r in rels {
        let segment: Vec<RelId> = match &row[r] {
            Value::Rel(id) => vec![*id],
            Value::List(items) => {
                items.iter().filter_map(|v| if let Value::Rel(id) = v { Some(*id) } else { None }).collect()
            }
            Value::Null => return Ok(Value::Null),
            _ => vec![],
        };
        for rel in segment {
            let last = *path.nodes.last().unwrap();
            let rec = g.rel(rel).ok_or_else(deleted)?;
            let next = if rec.src == last { rec.dst } else { rec.src };
            path.rels.push(rel);
            path.nodes.push(next);
        }
    }
    Ok(Value::Path(Arc::new(path)))
}

pub(super) fn deleted() -> CypherError {
    CypherError::new(ErrorKind::EntityNotFound, Phase::Runtime, "DeletedEntityAccess", "the entity was deleted")
}

/// `base.key`.
pub(crate) fn property(base: &Value, key: &str, ctx: &Ctx) -> Result<Value> {
    property_resolved(base, key, |ctx| ctx.prop_key(key), ctx)
}

/// [`property`] with the way to find the key's id, which entities need and maps and temporals do not.
#[inline]
pub(super) fn property_resolved(
    base: &Value,
    key: &str,
    key_id: impl Fn(&Ctx) -> Option<plexus_storage::PropKeyId>,
    ctx: &Ctx,
) -> Result<Value> {
    Ok(match base {
        Value::Null => Value::Null,
        Value::Node(n) => {
            if is_virtual(n.0) {
                return Ok(virtual_property(base, key, ctx));
            }
            if ctx.deleted_node(*n) && !ctx.g().node_exists(*n) {
                return Err(deleted());
            }
            let Some(k) = key_id(ctx) else { return Ok(Value::Null) };
            match ctx.g().node_prop(*n, k) {
                Some(v) => Value::from_stored(v),
                None => Value::Null,
            }
        }
        Value::Rel(r) => {
            if is_virtual(r.0) {
                return Ok(virtual_property(base, key, ctx));
            }
            if ctx.deleted_rel(*r).is_some() && !ctx.g().rel_exists(*r) {
                return Err(deleted());
            }
            let Some(k) = key_id(ctx) else { return Ok(Value::Null) };
            match ctx.g().rel_prop(*r, k) {
                Some(v) => Value::from_stored(&v),
                None => Value::Null,
            }
        }
        Value::Map(m) => m.get(key).cloned().unwrap_or(Value::Null),
        Value::Point(p) => crate::functions::spatial::field(p, key)?,
        other => match temporal::property(other, key) {
            Some(r) => r?,
            None => {
                return Err(CypherError::type_error(
                    "InvalidArgumentType",
                    format!("cannot read property '{key}' of a {}", other.type_name()),
                ))
            }
        },
    })
}

/// The properties of a made-up entity ([`crate::exec::ctx::Virtuals`]), if `v` is one this statement made.
fn virtual_props(v: &Value, ctx: &Ctx) -> Option<std::collections::BTreeMap<Arc<str>, ResultValue>> {
    match v {
        Value::Node(n) if is_virtual(n.0) => ctx.virtual_node(n.0).map(|d| d.properties),
        Value::Rel(r) if is_virtual(r.0) => ctx.virtual_rel(r.0).map(|d| d.properties),
        _ => None,
    }
}

/// Property `key` of a made-up entity; null when it has none, or when this statement made no such entity.
#[cold]
fn virtual_property(entity: &Value, key: &str, ctx: &Ctx) -> Value {
    virtual_props(entity, ctx).and_then(|props| props.get(key).map(from_result)).unwrap_or(Value::Null)
}

/// A made-up entity's property as an expression reads it (those properties are strings and lists of them).
fn from_result(v: &ResultValue) -> Value {
    match v {
        ResultValue::Bool(b) => Value::Bool(*b),
        ResultValue::Int(i) => Value::Int(*i),
        ResultValue::Float(f) => Value::Float(*f),
        ResultValue::String(s) => Value::String(s.clone()),
        ResultValue::List(items) => Value::list(items.iter().map(from_result).collect()),
        _ => Value::Null,
    }
}

/// The stored properties of a node or relationship. A node this transaction created and this statement deleted
/// has none left (Neo4j answers `properties()` with `{}` and `keys()` with `[]`); reading one that was there
/// before the transaction, or any relationship, after deleting it is an error, as in Neo4j.
fn entity_props<'g>(v: &Value, ctx: &'g Ctx) -> Result<Option<std::borrow::Cow<'g, plexus_storage::PropMap>>> {
    let g = ctx.g();
    match v {
        Value::Node(n) => match g.node_props(*n) {
            Some(props) => Ok(props.map(std::borrow::Cow::Borrowed)),
            None if ctx.deleted_node(*n) && ctx.created_here(*n) => Ok(None),
            None => Err(deleted()),
        },
        Value::Rel(r) => g.rel_props(*r).ok_or_else(deleted),
        _ => unreachable!("called for entities only"),
    }
}

/// All properties of a node, relationship or map, as a map.
pub(crate) fn properties_of(v: &Value, ctx: &Ctx) -> Result<Value> {
    if let Some(props) = virtual_props(v, ctx) {
        return Ok(Value::map(props.iter().map(|(k, v)| (k.clone(), from_result(v))).collect()));
    }
    let props = match v {
        Value::Null => return Ok(Value::Null),
        Value::Map(_) => return Ok(v.clone()),
        Value::Node(_) | Value::Rel(_) => entity_props(v, ctx)?,
        other => {
            return Err(CypherError::type_error(
                "InvalidArgumentType",
                format!("properties() cannot take a {}", other.type_name()),
            ))
        }
    };
    let mut m = Map::new();
    if let Some(props) = props {
        for (k, v) in props.iter() {
            m.insert(ctx.key_name(k), Value::from_stored(v));
        }
    }
    Ok(Value::map(m))
}

/// Where index `i` (negative: from the end) falls in a sequence of `len`, if inside it.
fn position(len: usize, i: i64) -> Option<usize> {
    let i = if i < 0 { i.checked_add(len as i64)? } else { i };
    (0..len as i64).contains(&i).then_some(i as usize)
}

pub(super) fn index_value(base: &Value, index: &Value, ctx: &Ctx) -> Result<Value> {
    Ok(match (base, index) {
        (Value::Null, _) | (_, Value::Null) => Value::Null,
        (Value::List(items), Value::Int(i)) => position(items.len(), *i).map_or(Value::Null, |i| items[i].clone()),
        // A byte array's bytes read as integers, as in Neo4j (`$bytes[1]`).
        (Value::Bytes(b), Value::Int(i)) => {
            position(b.len(), *i).map_or(Value::Null, |i| Value::Int(i64::from(b[i] as i8)))
        }
        (Value::Map(m), Value::String(k)) => m.get(&**k).cloned().unwrap_or(Value::Null),
        (Value::Node(_) | Value::Rel(_) | Value::Point(_), Value::String(k)) => property(base, k, ctx)?,
        // `d['year']` reads a temporal value's field as `d.year` does.
        (other, Value::String(k)) if temporal::property(other, k).is_some() => property(base, k, ctx)?,
        (Value::List(_), other) => {
            return Err(CypherError::type_error(
                "InvalidArgumentType",
                format!("a list index must be an integer, got {}", other.type_name()),
            ))
        }
        (Value::Map(_) | Value::Node(_) | Value::Rel(_), other) => {
            return Err(CypherError::type_error(
                "InvalidArgumentType",
                format!("a map key must be a string, got {}", other.type_name()),
            ))
        }
        (other, _) => {
            return Err(CypherError::type_error(
                "InvalidArgumentType",
                format!("cannot index into a {}", other.type_name()),
            ))
        }
    })
}

pub(super) fn graph_function(f: GraphFn, args: &[Value], ctx: &Ctx) -> Result<Value> {
    let g = ctx.g();
    let arg = args.first().unwrap_or(&Value::Null);
    let wrong = |name: &str| {
        CypherError::type_error("InvalidArgumentType", format!("{name}() cannot take a {}", arg.type_name()))
    };
    Ok(match f {
        GraphFn::Timestamp => {
            let clock = ctx.clock();
            Value::Int(clock.seconds * 1000 + (clock.nanos / 1_000_000) as i64)
        }
        GraphFn::RandomUuid => {
            let (a, b): (u64, u64) = (crate::random_u64(), crate::random_u64());
            let b = (b & 0x3fff_ffff_ffff_ffff) | 0x8000_0000_0000_0000;
            let a = (a & 0xffff_ffff_ffff_0fff) | 0x0000_0000_0000_4000;
            Value::string(format!(
                "{:08x}-{:04x}-{:04x}-{:04x}-{:012x}",
                a >> 32,
                (a >> 16) & 0xffff,
                a & 0xffff,
                b >> 48,
                b & 0xffff_ffff_ffff
            ))
        }
        GraphFn::HasComputedType | GraphFn::HasAnyComputedType => {
            // `[:$(x)]` names one type; `[:$any(x)]` any number, of which the relationship's must be one.
            let (one, any) = if f == GraphFn::HasAnyComputedType {
                (None, crate::exec::update::label_names(&args[1..])?)
            } else {
                (Some(crate::exec::update::type_name(args.get(1).unwrap_or(&Value::Null))?), Vec::new())
            };
            match arg {
                Value::Null => Value::Null,
                Value::Rel(r) => {
                    let rec = g.rel(*r).ok_or_else(deleted)?;
                    let ty = ctx.type_name(rec.ty);
                    Value::Bool(one.map_or_else(|| any.contains(&ty), |name| name == ty))
                }
                other => {
                    return Err(CypherError::type_error(
                        "InvalidArgumentType",
                        format!("a type belongs to a relationship, not to a {}", other.type_name()),
                    ))
                }
            }
        }
        GraphFn::HasComputedLabels | GraphFn::HasAnyComputedLabel => {
            let names = crate::exec::update::label_names(&args[1..])?;
            match arg {
                Value::Null => Value::Null,
                Value::Node(n) => {
                    let labels = g.node_labels(*n).ok_or_else(deleted)?;
                    let has = |name: &Arc<str>| ctx.label_id(name).is_some_and(|l| labels.contains(&l));
                    Value::Bool(if f == GraphFn::HasAnyComputedLabel {
                        names.iter().any(has)
                    } else {
                        names.iter().all(has)
                    })
                }
                other => {
                    return Err(CypherError::type_error(
                        "InvalidArgumentType",
                        format!("labels belong to nodes, not to a {}", other.type_name()),
                    ))
                }
            }
        }
        _ if arg.is_null() => Value::Null,
        GraphFn::Labels
        | GraphFn::Type
        | GraphFn::StartNode
        | GraphFn::EndNode
        | GraphFn::Keys
        | GraphFn::ElementId
            if matches!(arg, Value::Node(n) if is_virtual(n.0)) || matches!(arg, Value::Rel(r) if is_virtual(r.0)) =>
        {
            virtual_function(f, arg, ctx).ok_or_else(deleted)??
        }
        GraphFn::Labels => match arg {
            Value::Node(n) => {
                // Storage keeps them sorted by id, the order they were first created in the database, which is how
                // Neo4j lists them: `labels(n)[0]` is the same label in both.
                let labels = g.node_labels(*n).ok_or_else(deleted)?;
                Value::list(labels.iter().map(|l| Value::String(ctx.label_name(*l))).collect())
            }
            _ => return Err(wrong("labels")),
        },
        GraphFn::Type => match arg {
            Value::Rel(r) => match g.rel(*r) {
                Some(rec) => Value::String(ctx.type_name(rec.ty)),
                None => Value::String(ctx.type_name(ctx.deleted_rel(*r).ok_or_else(deleted)?.ty)),
            },
            _ => return Err(wrong("type")),
        },
        GraphFn::Id => match arg {
            Value::Node(n) => Value::Int(n.0 as i64),
            Value::Rel(r) => Value::Int(r.0 as i64),
            _ => return Err(wrong("id")),
        },
        GraphFn::ElementId => match arg {
            Value::Node(n) => Value::string(format!("n:{}", n.0)),
            Value::Rel(r) => Value::string(format!("r:{}", r.0)),
            _ => return Err(wrong("elementId")),
        },
        // An entity's keys in the order the keys were first created in the database, as Neo4j lists them.
        GraphFn::Keys if matches!(arg, Value::Node(_) | Value::Rel(_)) => {
            let props = entity_props(arg, ctx)?;
            Value::list(props.iter().flat_map(|p| p.iter()).map(|(k, _)| Value::String(ctx.key_name(k))).collect())
        }
        GraphFn::Keys => match properties_of(arg, ctx).map_err(|e| {
            if e.kind == ErrorKind::EntityNotFound {
                e
            } else {
                wrong("keys")
            }
        })? {
            Value::Map(m) => Value::list(m.keys().map(|k| Value::String(k.clone())).collect()),
            _ => Value::Null,
        },
        GraphFn::Properties => properties_of(arg, ctx)?,
        GraphFn::StartNode | GraphFn::EndNode => match arg {
            Value::Rel(r) => {
                let rec = g.rel(*r).ok_or_else(deleted)?;
                Value::Node(if f == GraphFn::StartNode { rec.src } else { rec.dst })
            }
            _ => return Err(wrong(if f == GraphFn::StartNode { "startNode" } else { "endNode" })),
        },
        // A path's length only, as in Neo4j 5: size() counts a string's characters or a list's elements.
        GraphFn::Length => match arg {
            Value::Path(p) => Value::Int(p.rels.len() as i64),
            Value::String(_) | Value::List(_) => {
                return Err(CypherError::type_error(
                    "InvalidArgumentType",
                    format!("length() takes a path, not a {}: size() counts its elements", arg.type_name()),
                ))
            }
            _ => return Err(wrong("length")),
        },
        GraphFn::Exists => Value::Bool(!arg.is_null()),
    })
}

/// [`graph_function`] of a made-up entity ([`crate::exec::ctx::Virtuals`]); `None` when this statement made
/// no such entity.
fn virtual_function(f: GraphFn, arg: &Value, ctx: &Ctx) -> Option<Result<Value>> {
    let wrong = |name: &str| {
        Err(CypherError::type_error("InvalidArgumentType", format!("{name}() cannot take a {}", arg.type_name())))
    };
    Some(match (f, arg) {
        (GraphFn::ElementId, Value::Node(n)) => Ok(Value::string(format!("n:{}", n.0 as i64))),
        (GraphFn::ElementId, Value::Rel(r)) => Ok(Value::string(format!("r:{}", r.0 as i64))),
        (GraphFn::Keys, _) => Ok(Value::list(virtual_props(arg, ctx)?.into_keys().map(Value::String).collect())),
        (GraphFn::Labels, Value::Node(n)) => {
            Ok(Value::list(ctx.virtual_node(n.0)?.labels.into_iter().map(Value::String).collect()))
        }
        (GraphFn::Labels, _) => wrong("labels"),
        (GraphFn::Type, Value::Rel(r)) => Ok(Value::String(ctx.virtual_rel(r.0)?.rel_type)),
        (GraphFn::Type, _) => wrong("type"),
        (GraphFn::StartNode | GraphFn::EndNode, Value::Rel(r)) => {
            let rel = ctx.virtual_rel(r.0)?;
            Ok(Value::Node(plexus_storage::NodeId(if f == GraphFn::StartNode { rel.start } else { rel.end })))
        }
        (GraphFn::StartNode, _) => wrong("startNode"),
        (GraphFn::EndNode, _) => wrong("endNode"),
        _ => return None,
    })
}
