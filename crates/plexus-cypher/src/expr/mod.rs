//! Compiled expressions and their evaluation.
//!
//! The planner turns AST expressions into [`CExpr`]: variables become row slots, aggregates become the slots the
//! aggregation wrote, and subqueries (pattern predicates, EXISTS, COUNT, COLLECT, pattern comprehensions) become
//! plans run with the current row as their argument.

use std::borrow::Cow;
use std::sync::Arc;

use plexus_storage::RelId;

use crate::ast::{BinaryOp, Quantifier};
use crate::compare;
use crate::error::{CypherError, ErrorKind, Phase, Result};
use crate::exec::ctx::{is_virtual, Ctx};
use crate::exec::{run_plan, Row};

mod access;
pub(crate) mod constant_in;
mod values;
use access::{build_path, graph_function, index_value, not_a_list, property_resolved};
pub(crate) use access::{properties_of, property};
pub(crate) use values::in_operand;
use values::{binary, slice};

/// A compiled label expression: the names of [`crate::ast::LabelExpr`] as tokens.
pub(crate) type LabelTest = crate::ast::LabelExpr<Token>;

/// The tokens of a label expression's names.
pub(crate) fn label_test(e: &crate::ast::LabelExpr) -> LabelTest {
    e.map(&|n| Token::new(n.name.as_str()))
}
use crate::plan::PlanNode;
use crate::token::Token;
use crate::value::{Map, Path, Value};
use crate::{arith, functions, temporal};

/// Functions that need the graph or special evaluation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum GraphFn {
    Labels,
    Type,
    Id,
    ElementId,
    Keys,
    Properties,
    StartNode,
    EndNode,
    /// `length()` of a path, and of a string or list as older Cypher allowed (the pure `length` takes paths only).
    Length,
    Exists,
    Timestamp,
    RandomUuid,
    /// Whether the node (first argument) has every label the other arguments name (`(n:$(expr))`).
    HasComputedLabels,
    /// Whether the relationship (first argument) has the type the second names (`[:$(expr)]`).
    HasComputedType,
    /// Whether the node (first argument) has at least one of the labels the second names (`(n:$any(expr))`).
    HasAnyComputedLabel,
    /// Whether the relationship (first argument) has one of the types the second names (`[:$any(expr)]`).
    HasAnyComputedType,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum SubqueryKind {
    Exists,
    Count,
    /// Collect the plan's single output column.
    Collect,
}

#[derive(Clone, Debug)]
pub(crate) enum MapProjItem {
    Property(Arc<str>),
    AllProperties,
    Entry(Arc<str>, CExpr),
}

#[derive(Clone, Debug)]
pub(crate) enum CExpr {
    Const(Value),
    Param(Arc<str>),
    Slot(usize),
    Property(Box<CExpr>, Token),
    List(Vec<CExpr>),
    Map(Vec<(Token, CExpr)>),
    Index(Box<CExpr>, Box<CExpr>),
    Slice(Box<CExpr>, Option<Box<CExpr>>, Option<Box<CExpr>>),
    Not(Box<CExpr>),
    Neg(Box<CExpr>),
    Plus(Box<CExpr>),
    And(Box<CExpr>, Box<CExpr>),
    Or(Box<CExpr>, Box<CExpr>),
    Xor(Box<CExpr>, Box<CExpr>),
    Binary(BinaryOp, Box<CExpr>, Box<CExpr>),
    /// `x IN list` where the list is the same for the whole statement (built from parameters and constants):
    /// evaluated once per statement into a hash set (`constant_in`).
    InConstant(Box<CExpr>, Box<CExpr>),
    IsNull(Box<CExpr>, bool),
    /// `x IS [NOT] :: type`.
    TypeTest(Box<CExpr>, Arc<crate::ast::CypherType>, bool),
    HasLabels(Box<CExpr>, Vec<Token>),
    /// A label expression on a node's labels or a relationship's type (`x:A|B`, `x:!A`, `x:%`).
    LabelTest(Box<CExpr>, LabelTest),
    Scalar(Arc<str>, Vec<CExpr>),
    Graph(GraphFn, Vec<CExpr>),
    Case {
        operand: Option<Box<CExpr>>,
        whens: Vec<(CExpr, CExpr)>,
        otherwise: Option<Box<CExpr>>,
    },
    ListComprehension {
        slot: usize,
        list: Box<CExpr>,
        filter: Option<Box<CExpr>>,
        map: Option<Box<CExpr>>,
    },
    Quantified {
        quantifier: Quantifier,
        slot: usize,
        list: Box<CExpr>,
        predicate: Box<CExpr>,
    },
    Reduce {
        acc: usize,
        init: Box<CExpr>,
        slot: usize,
        list: Box<CExpr>,
        expr: Box<CExpr>,
    },
    Subquery {
        kind: SubqueryKind,
        plan: Arc<PlanNode>,
    },
    MapProjection {
        base: Box<CExpr>,
        items: Vec<MapProjItem>,
    },
    /// Builds a path value from node and relationship slots (`p = (a)-[r]->(b)`); a slot holding a list of
    /// relationships (variable length) contributes all of them.
    PathOf {
        nodes: Vec<usize>,
        rels: Vec<usize>,
    },
    /// True when every entry of the map equals the entity's property of that name (`(n $props)` patterns).
    PropsMatch(Box<CExpr>, Box<CExpr>),
    /// A pattern predicate of one relationship from a bound node to a bound node (`(a)-[:T]->(b)`), or to any
    /// node when `to` is `None`: answered from the adjacency without running a subquery.
    HasEdge {
        from: usize,
        to: Option<usize>,
        dir: plexus_storage::Direction,
        types: Vec<Token>,
        /// `EXISTS { ... }` rather than a pattern predicate: a null endpoint matches nothing (false) instead
        /// of making the predicate null.
        exists: bool,
    },
}

fn bool_or_null(v: Option<bool>) -> Value {
    v.map_or(Value::Null, Value::Bool)
}

/// Whether a predicate's value (WHERE, a CASE's WHEN) lets a row through: null does not; a list does when it is
/// not empty, as in Neo4j; any other value that is not a boolean is an error, never a silent false.
fn holds(v: &Value) -> Result<bool> {
    match v {
        Value::Bool(b) => Ok(*b),
        Value::Null => Ok(false),
        Value::List(items) => Ok(!items.is_empty()),
        other => Err(CypherError::type_error(
            "InvalidArgumentType",
            format!("a predicate must be a boolean, got {}", other.type_name()),
        )),
    }
}

fn as_bool(v: &Value, what: &str) -> Result<Option<bool>> {
    match v {
        Value::Bool(b) => Ok(Some(*b)),
        Value::Null => Ok(None),
        other => Err(CypherError::type_error(
            "InvalidArgumentType",
            format!("{what} expects a boolean, got {}", other.type_name()),
        )),
    }
}

impl CExpr {
    /// Evaluates without cloning when the expression is a row slot or a constant: comparisons, label tests
    /// and property reads on a variable then borrow it instead of copying it out of the row and dropping it.
    #[inline]
    fn eval_ref<'a>(&'a self, row: &'a [Value], ctx: &Ctx) -> Result<Cow<'a, Value>> {
        Ok(match self {
            CExpr::Slot(i) => Cow::Borrowed(&row[*i]),
            CExpr::Const(v) => Cow::Borrowed(v),
            other => Cow::Owned(other.eval(row, ctx)?),
        })
    }

    /// The value of the expression for `row`. The commonest expressions (a row slot, a constant, a property of
    /// a variable) are answered here, without entering [`CExpr::eval_any`]: one function over every kind of
    /// expression, whose entry and exit (a large frame, many saved registers) cost more than reading a property.
    #[inline]
    pub fn eval(&self, row: &[Value], ctx: &Ctx) -> Result<Value> {
        match self {
            CExpr::Slot(i) => Ok(row[*i].clone()),
            CExpr::Const(v) => Ok(v.clone()),
            CExpr::Property(base, key) => Self::eval_property(base, key, row, ctx),
            _ => self.eval_any(row, ctx),
        }
    }

    #[inline(never)]
    fn eval_property(base: &CExpr, key: &Token, row: &[Value], ctx: &Ctx) -> Result<Value> {
        let base = base.eval_ref(row, ctx)?;
        property_resolved(&base, key, |ctx| ctx.prop_token(key), ctx)
    }

    fn eval_any(&self, row: &[Value], ctx: &Ctx) -> Result<Value> {
        Ok(match self {
            CExpr::Const(_) | CExpr::Slot(_) | CExpr::Property(..) => unreachable!("answered by CExpr::eval"),
            CExpr::Param(name) => ctx.param(name)?,
            CExpr::List(items) => {
                let list = Value::list(items.iter().map(|e| e.eval(row, ctx)).collect::<Result<_>>()?);
                bounded(list)?
            }
            CExpr::Map(entries) => {
                let mut m = Map::new();
                for (k, e) in entries {
                    m.insert(k.name().clone(), e.eval(row, ctx)?);
                }
                bounded(Value::map(m))?
            }
            CExpr::Index(base, index) => index_value(&base.eval(row, ctx)?, &index.eval(row, ctx)?, ctx)?,
            CExpr::Slice(base, from, to) => {
                let base = base.eval(row, ctx)?;
                let from = from.as_ref().map(|e| e.eval(row, ctx)).transpose()?;
                let to = to.as_ref().map(|e| e.eval(row, ctx)).transpose()?;
                slice(&base, from, to)?
            }
            CExpr::Not(e) => bool_or_null(as_bool(&e.eval(row, ctx)?, "NOT")?.map(|b| !b)),
            CExpr::Neg(e) => arith::neg(&e.eval(row, ctx)?)?,
            CExpr::Plus(e) => arith::plus(&e.eval(row, ctx)?)?,
            CExpr::And(a, b) => {
                let l = as_bool(&a.eval(row, ctx)?, "AND")?;
                if l == Some(false) {
                    return Ok(Value::Bool(false));
                }
                let r = as_bool(&b.eval(row, ctx)?, "AND")?;
                match (l, r) {
                    (_, Some(false)) => Value::Bool(false),
                    (Some(true), Some(true)) => Value::Bool(true),
                    _ => Value::Null,
                }
            }
            CExpr::Or(a, b) => {
                let l = as_bool(&a.eval(row, ctx)?, "OR")?;
                if l == Some(true) {
                    return Ok(Value::Bool(true));
                }
                let r = as_bool(&b.eval(row, ctx)?, "OR")?;
                match (l, r) {
                    (_, Some(true)) => Value::Bool(true),
                    (Some(false), Some(false)) => Value::Bool(false),
                    _ => Value::Null,
                }
            }
            CExpr::Xor(a, b) => {
                let l = as_bool(&a.eval(row, ctx)?, "XOR")?;
                let r = as_bool(&b.eval(row, ctx)?, "XOR")?;
                match (l, r) {
                    (Some(x), Some(y)) => Value::Bool(x != y),
                    _ => Value::Null,
                }
            }
            CExpr::Binary(BinaryOp::In, a, b) => {
                let item = a.eval_ref(row, ctx)?;
                let list = b.eval_ref(row, ctx)?;
                match list.as_ref() {
                    Value::List(items) if items.len() >= constant_in::HASH_FROM => bool_or_null(
                        ctx.repeated_list(self, items)
                            .map_or_else(|| compare::in_list(&item, items), |hashed| hashed.contains(&item)),
                    ),
                    list => binary(BinaryOp::In, &item, list)?,
                }
            }
            CExpr::Binary(op, a, b) => binary(*op, &*a.eval_ref(row, ctx)?, &*b.eval_ref(row, ctx)?)?,
            CExpr::InConstant(item, list) => {
                let item = item.eval_ref(row, ctx)?;
                bool_or_null(ctx.constant_list(self, list, row)?.contains(&item))
            }
            CExpr::IsNull(e, negated) => Value::Bool(e.eval_ref(row, ctx)?.is_null() != *negated),
            CExpr::TypeTest(e, ty, negated) => {
                Value::Bool(crate::functions::is_of_type(e.eval_ref(row, ctx)?.as_ref(), ty) != *negated)
            }
            CExpr::HasLabels(e, labels) => match e.eval_ref(row, ctx)?.as_ref() {
                Value::Null => Value::Null,
                &Value::Node(n) => Value::Bool(ctx.node_has_labels(n, labels)),
                &Value::Rel(r) if is_virtual(r.0) => {
                    let ty = ctx.virtual_rel(r.0).map(|rel| rel.rel_type);
                    Value::Bool(labels.iter().all(|l| ty.as_ref() == Some(l.name())))
                }
                &Value::Rel(r) => {
                    let ty = ctx.g().rel(r).map(|rec| rec.ty);
                    Value::Bool(labels.iter().all(|l| ty.is_some() && ctx.type_token(l) == ty))
                }
                other => {
                    return Err(CypherError::type_error(
                        "InvalidArgumentType",
                        format!("cannot check labels of a {}", other.type_name()),
                    ))
                }
            },
            CExpr::LabelTest(e, test) => match e.eval_ref(row, ctx)?.as_ref() {
                Value::Null => Value::Null,
                &Value::Node(n) if is_virtual(n.0) => {
                    let labels = ctx.virtual_node(n.0).map(|v| v.labels).unwrap_or_default();
                    Value::Bool(test.matches(&|t: &Token| labels.contains(t.name()), !labels.is_empty()))
                }
                &Value::Node(n) => {
                    let g = ctx.g();
                    let labels = g.node_labels(n).map(|l| l.to_vec()).unwrap_or_default();
                    let has = |t: &Token| ctx.label_token(t).is_some_and(|id| labels.contains(&id));
                    Value::Bool(test.matches(&has, !labels.is_empty()))
                }
                &Value::Rel(r) if is_virtual(r.0) => {
                    let ty = ctx.virtual_rel(r.0).map(|rel| rel.rel_type);
                    Value::Bool(test.matches(&|t: &Token| ty.as_ref() == Some(t.name()), true))
                }
                &Value::Rel(r) => {
                    let ty = ctx.g().rel(r).map(|rec| rec.ty);
                    Value::Bool(test.matches(&|t| ty.is_some() && ctx.type_token(t) == ty, true))
                }
                other => {
                    return Err(CypherError::type_error(
                        "InvalidArgumentType",
                        format!("cannot check labels of a {}", other.type_name()),
                    ))
                }
            },
            // Lazy, as in Neo4j: the arguments after the first that is not null are not evaluated, so
            // `coalesce(n.x, 1 / 0)` is `n.x` when it is set.
            CExpr::Scalar(name, args) if &**name == "coalesce" => {
                for e in args {
                    let v = e.eval(row, ctx)?;
                    if !v.is_null() {
                        return Ok(v);
                    }
                }
                Value::Null
            }
            CExpr::Scalar(name, args) => {
                let args = args.iter().map(|e| e.eval(row, ctx)).collect::<Result<Vec<_>>>()?;
                if let Some(r) = temporal::call_function(name, &args, ctx.clock()) {
                    return r;
                }
                if &**name == "range" {
                    check_range_memory(&args, ctx)?;
                }
                if &**name == "point" && matches!(args.first(), Some(Value::Node(_) | Value::Rel(_))) {
                    // A point from an entity's properties, as Neo4j builds one.
                    return functions::spatial::point(&[properties_of(&args[0], ctx)?]);
                }
                match functions::call(name, &args) {
                    Some(r) => r?,
                    None => return Err(CypherError::semantic("UnknownFunction", format!("unknown function '{name}'"))),
                }
            }
            CExpr::Graph(f, args) => {
                let args = args.iter().map(|e| e.eval(row, ctx)).collect::<Result<Vec<_>>>()?;
                graph_function(*f, &args, ctx)?
            }
            CExpr::Case { operand, whens, otherwise } => {
                let operand = operand.as_ref().map(|e| e.eval(row, ctx)).transpose()?;
                for (when, then) in whens {
                    let w = when.eval(row, ctx)?;
                    let hit = match &operand {
                        Some(o) => compare::equals(o, &w) == Some(true),
                        None => holds(&w)?,
                    };
                    if hit {
                        return then.eval(row, ctx);
                    }
                }
                match otherwise {
                    Some(e) => e.eval(row, ctx)?,
                    None => Value::Null,
                }
            }
            CExpr::ListComprehension { slot, list, filter, map } => {
                let items = match list.eval(row, ctx)? {
                    Value::Null => return Ok(Value::Null),
                    Value::List(items) => items,
                    other => return Err(not_a_list(&other)),
                };
                let mut scratch = row.to_vec();
                let mut out = Vec::with_capacity(items.len());
                for item in items.iter() {
                    ctx.tick()?;
                    scratch[*slot] = item.clone();
                    // The filter is a predicate like WHERE's (a list holds when it is not empty).
                    if let Some(f) = filter {
                        if !holds(&f.eval(&scratch, ctx)?)? {
                            continue;
                        }
                    }
                    out.push(match map {
                        Some(m) => m.eval(&scratch, ctx)?,
                        None => item.clone(),
                    });
                }
                Value::list(out)
            }
            CExpr::Quantified { quantifier, slot, list, predicate } => {
                let items = match list.eval(row, ctx)? {
                    Value::Null => return Ok(Value::Null),
                    Value::List(items) => items,
                    other => return Err(not_a_list(&other)),
                };
                let mut scratch = row.to_vec();
                let (mut trues, mut nulls, mut falses) = (0usize, 0usize, 0usize);
                for item in items.iter() {
                    ctx.tick()?;
                    scratch[*slot] = item.clone();
                    match as_bool(&predicate.eval(&scratch, ctx)?, "a quantifier")? {
                        Some(true) => trues += 1,
                        None => nulls += 1,
                        Some(false) => falses += 1,
                    }
                    // Once the answer is known the rest is not evaluated (as in Neo4j, where
                    // `any(x IN [1, 0] WHERE x = 1 OR 1 / x = 1)` is true).
                    let decided = match quantifier {
                        Quantifier::All => falses > 0,
                        Quantifier::Any | Quantifier::None => trues > 0,
                        Quantifier::Single => trues > 1,
                    };
                    if decided {
                        break;
                    }
                }
                match quantifier {
                    Quantifier::All => {
                        if falses > 0 {
                            Value::Bool(false)
                        } else if nulls > 0 {
                            Value::Null
                        } else {
                            Value::Bool(true)
                        }
                    }
                    Quantifier::Any => {
                        if trues > 0 {
                            Value::Bool(true)
                        } else if nulls > 0 {
                            Value::Null
                        } else {
                            Value::Bool(false)
                        }
                    }
                    Quantifier::None => {
                        if trues > 0 {
                            Value::Bool(false)
                        } else if nulls > 0 {
                            Value::Null
                        } else {
                            Value::Bool(true)
                        }
                    }
                    Quantifier::Single => {
                        if trues > 1 {
                            Value::Bool(false)
                        } else if nulls > 0 {
                            Value::Null
                        } else {
                            Value::Bool(trues == 1)
                        }
                    }
                }
            }
            CExpr::Reduce { acc, init, slot, list, expr } => {
                let mut scratch = row.to_vec();
                scratch[*acc] = init.eval(row, ctx)?;
                let items = match list.eval(row, ctx)? {
                    Value::Null => return Ok(Value::Null),
                    Value::List(items) => items,
                    other => return Err(not_a_list(&other)),
                };
                // `reduce` is the one way to nest values without bound (`[acc]` per item), and a value nested
                // deeply enough overflows the stack of whatever recurses through it next (dropping it, encoding
                // it): the accumulator's nesting is kept under a limit.
                let mut depth = nesting(&scratch[*acc], None)?;
                let appended = appended_to(expr, *acc);
                for item in items.iter() {
                    ctx.tick()?;
                    scratch[*slot] = item.clone();
                    if let (Some(tail), Value::List(_)) = (appended, &scratch[*acc]) {
                        let tail = tail.eval(&scratch, ctx)?;
                        depth = append_in_place(&mut scratch[*acc], tail, depth)?;
                        continue;
                    }
                    let next = expr.eval(&scratch, ctx)?;
                    depth = nesting(&next, Some((&scratch[*acc], depth)))?;
                    scratch[*acc] = next;
                }
                std::mem::take(&mut scratch[*acc])
            }
            CExpr::Subquery { kind, plan } => {
                let mut sub = ctx.reader();
                let limit = if *kind == SubqueryKind::Exists { Some(1) } else { None };
                let rows = run_plan(plan, Some(row.to_vec()), &mut sub, limit)?;
                match kind {
                    SubqueryKind::Exists => Value::Bool(!rows.is_empty()),
                    SubqueryKind::Count => Value::Int(rows.len() as i64),
                    SubqueryKind::Collect => {
                        Value::list(rows.into_iter().map(|mut r: Row| std::mem::take(&mut r[0])).collect())
                    }
                }
            }
            CExpr::MapProjection { base, items } => {
                let base = base.eval(row, ctx)?;
                if base.is_null() {
                    return Ok(Value::Null);
                }
                let mut m = Map::new();
                // `.*` gives the properties that the other items then override, wherever it is written (as in
                // Neo4j: `n {id: 0, .*}` has id 0).
                if items.iter().any(|i| matches!(i, MapProjItem::AllProperties)) {
                    if let Value::Map(all) = properties_of(&base, ctx)? {
                        m.extend(all.iter().map(|(k, v)| (k.clone(), v.clone())));
                    }
                }
                for item in items {
                    match item {
                        MapProjItem::Property(k) => {
                            m.insert(k.clone(), property(&base, k, ctx)?);
                        }
                        MapProjItem::AllProperties => {}
                        MapProjItem::Entry(k, e) => {
                            m.insert(k.clone(), e.eval(row, ctx)?);
                        }
                    }
                }
                Value::map(m)
            }
            CExpr::PathOf { nodes, rels } => build_path(row, nodes, rels, ctx)?,
            CExpr::HasEdge { from, to, dir, types, exists } => {
                let unknown = if *exists { Value::Bool(false) } else { Value::Null };
                let Value::Node(a) = row[*from] else { return Ok(unknown) };
                // Resolved per row without allocating: a pattern names few types.
                let mut buf = [plexus_storage::TypeId(0); 8];
                let mut n = 0;
                for t in types.iter().filter_map(|t| ctx.type_token(t)) {
                    if n == buf.len() {
                        break;
                    }
                    buf[n] = t;
                    n += 1;
                }
                let ids = &buf[..n];
                if !types.is_empty() && ids.is_empty() {
                    return Ok(Value::Bool(false));
                }
                let filter = if types.is_empty() {
                    plexus_storage::TypeFilter::All
                } else {
                    plexus_storage::TypeFilter::Only(ids)
                };
                let g = ctx.g();
                match to {
                    Some(to) => match row[*to] {
                        Value::Node(b) => Value::Bool(g.has_edge(a, b, *dir, filter)),
                        _ => unknown,
                    },
                    None => Value::Bool(g.degree(a, *dir, filter) > 0),
                }
            }
            CExpr::PropsMatch(entity, map) => {
                let entity = entity.eval(row, ctx)?;
                match map.eval(row, ctx)? {
                    Value::Null => Value::Bool(true),
                    Value::Map(m) => {
                        for (k, v) in m.iter() {
                            if compare::equals(&property(&entity, k, ctx)?, v) != Some(true) {
                                return Ok(Value::Bool(false));
                            }
                        }
                        Value::Bool(true)
                    }
                    other => {
                        return Err(CypherError::type_error(
                            "InvalidArgumentType",
                            format!("expected a map of properties, got {}", other.type_name()),
                        ))
                    }
                }
            }
        })
    }

    /// Evaluates as a predicate: only `true` passes.
    pub fn is_true(&self, row: &[Value], ctx: &Ctx) -> Result<bool> {
        // A label test on a node of the row (`(x:Item)` in a pattern), the commonest filter of an expansion,
        // without entering `eval_any` and building the boolean it would answer.
        if let CExpr::HasLabels(e, labels) = self {
            if let CExpr::Slot(s) = **e {
                if let Value::Node(n) = row[s] {
                    return Ok(ctx.node_has_labels(n, labels));
                }
            }
        }
        match self.eval_ref(row, ctx)?.as_ref() {
            Value::Bool(b) => Ok(*b),
            v => holds(v),
        }
    }
}

/// `range()` builds its whole list at once, up to 100 million integers (2.4 GB): under a memory limit, a
/// list that alone would exceed it fails before it is built, instead of the allocation failing the process.
fn check_range_memory(args: &[Value], ctx: &Ctx) -> Result<()> {
    let Some(interrupt) = &ctx.interrupt else { return Ok(()) };
    let (Some(Value::Int(start)), Some(Value::Int(end))) = (args.first(), args.get(1)) else { return Ok(()) };
    let step = match args.get(2) {
        Some(Value::Int(step)) => *step,
        _ => 1,
    };
    let Ok(len) = crate::functions::list::range_len(*start, *end, step) else { return Ok(()) };
    let bytes = (len as usize).saturating_mul(std::mem::size_of::<Value>());
    interrupt.check_memory(bytes, |limit| {
        format!("range() of {len} integers needs {bytes} bytes, more than the query's memory limit of {limit}")
    })
}

/// How deeply values may nest lists and maps (see `reduce`): deeper values are refused where they are built,
/// since encoding and dropping them recurse, and a value nested tens of thousands deep (a list literal around a
/// variable, grown by a chain of WITHs) would overflow even a query thread's stack and end the process.
pub const MAX_VALUE_NESTING: usize = 1000;

/// `v`, a list or map just built, if it holds lists or maps no deeper than [`MAX_VALUE_NESTING`]. Scalars alone
/// cost one look each.
fn bounded(v: Value) -> Result<Value> {
    let holds_nested = match &v {
        Value::List(items) => items.iter().any(|i| matches!(i, Value::List(_) | Value::Map(_))),
        Value::Map(map) => map.values().any(|i| matches!(i, Value::List(_) | Value::Map(_))),
        _ => false,
    };
    if holds_nested {
        nesting(&v, None)?;
    }
    Ok(v)
}

/// `tail` when `expr` is `acc + tail` with `tail` not reading `acc`: a `reduce` that builds a list this way
/// (`reduce(l = [], x IN xs | l + f(x))`) appends to its accumulator in place, instead of copying the list on every
/// step, which made building a list of n elements cost n² / 2 copies.
fn appended_to(expr: &CExpr, acc: usize) -> Option<&CExpr> {
    match expr {
        CExpr::Binary(BinaryOp::Add, list, tail) if matches!(**list, CExpr::Slot(s) if s == acc) => {
            crate::plan::fuse::slot_deps(tail).filter(|deps| !deps.contains(&acc)).map(|_| &**tail)
        }
        _ => None,
    }
}

/// `*acc = *acc + tail` for a list `acc`, extending it in place when no one else holds it (a list is copied
/// once, the first time, when it came from elsewhere). Returns the new nesting depth, given the old one.
fn append_in_place(acc: &mut Value, tail: Value, depth: usize) -> Result<usize> {
    let Value::List(items) = acc else { unreachable!("called for a list") };
    let depth = match &tail {
        Value::Null => {
            *acc = Value::Null;
            return Ok(0);
        }
        // `list + list` concatenates, `list + value` appends.
        Value::List(_) => depth.max(nesting(&tail, None)?),
        _ => depth.max(nesting(&tail, None)? + 1),
    };
    if depth > MAX_VALUE_NESTING {
        return Err(CypherError::argument(
            "NestingTooDeep",
            format!("a value with lists or maps nested more than {MAX_VALUE_NESTING} deep"),
        ));
    }
    let items = Arc::make_mut(items);
    match tail {
        Value::List(more) => items.extend(more.iter().cloned()),
        value => items.push(value),
    }
    Ok(depth)
}

/// The nesting depth of `v` (0 for a scalar), given that of a value it may share parts with (`known`: reduce's
/// previous accumulator, whose depth is not worked out again); an error beyond [`MAX_VALUE_NESTING`]. Shared
/// parts (as in `[acc, [acc]]`) are measured once, or a value of a few hundred levels could take exponential
/// time to measure.
fn nesting(v: &Value, known: Option<(&Value, usize)>) -> Result<usize> {
    fn address(v: &Value) -> Option<usize> {
        match v {
            Value::List(items) => Some(Arc::as_ptr(items) as *const u8 as usize),
            Value::Map(map) => Some(Arc::as_ptr(map) as *const u8 as usize),
            _ => None,
        }
    }
    fn depth(
        v: &Value,
        level: usize,
        seen: &mut std::collections::HashMap<usize, usize>,
    ) -> std::result::Result<usize, ()> {
        let Some(key) = address(v) else { return Ok(0) };
        let d = match seen.get(&key) {
            Some(&d) => d,
            None => {
                if level >= MAX_VALUE_NESTING {
                    return Err(());
                }
                let children: Box<dyn Iterator<Item = &Value>> = match v {
                    Value::List(items) => Box::new(items.iter()),
                    Value::Map(map) => Box::new(map.values()),
                    _ => unreachable!("only lists and maps have an address"),
                };
                let mut deepest = 0;
                for child in children {
                    deepest = deepest.max(depth(child, level + 1, seen)?);
                }
                seen.insert(key, deepest + 1);
                deepest + 1
            }
        };
        if level + d > MAX_VALUE_NESTING {
            return Err(());
        }
        Ok(d)
    }
    let mut seen = std::collections::HashMap::new();
    if let Some((prev, d)) = known {
        if let Some(key) = address(prev) {
            seen.insert(key, d);
        }
    }
    depth(v, 0, &mut seen).map_err(|()| {
        CypherError::argument(
            "NestingTooDeep",
            format!("a value with lists or maps nested more than {MAX_VALUE_NESTING} deep"),
        )
    })
}
