//! EXPLAIN and PROFILE: the plan as an indented operator tree, leaf last, one operator per line; under PROFILE
//! each line also gives the rows the operator produced and the time spent in it with its inputs.

use std::fmt::Write;

use super::{PlanNode, StoreCount, Token};
use crate::exec::ctx::{Ctx, Profile};
use crate::exec::lookup::{choose, Access};
use crate::PlanTree;

/// How a lookup operator finds its nodes: planned whether or not a unique key or index exists (the plan is
/// cached and holds when one is created later), it chooses when it runs. With the graph at hand (`ctx`) the line
/// says what it would choose now; without, what it may choose.
fn lookup_line(ctx: Option<&Ctx>, label: &Token, key: &Token, equality: bool, any_of: bool, slot: usize) -> String {
    let operand = if !equality {
        " range"
    } else if any_of {
        " IN"
    } else {
        ""
    };
    let how = match ctx.map(|c| choose(c, slot, label, key, equality)) {
        Some(Access::UniqueKey(..)) => format!("NodeUniqueIndexSeek(:{label}.{key}{operand})"),
        Some(Access::Index(..)) if equality => format!("NodeIndexSeek(:{label}.{key}{operand})"),
        Some(Access::Index(..)) => format!("NodeIndexRangeSeek(:{label}.{key})"),
        Some(Access::Scan(_)) => format!("NodeByLabelScan(:{label}) filtered on .{key}{operand}: no index"),
        Some(Access::Nothing) => format!("NodeIndexSeek(:{label}.{key}{operand}): no such label or key, no rows"),
        None if equality => format!("NodeKeyLookup(:{label}.{key}{operand}: unique key, index or label scan)"),
        None => format!("NodeRangeLookup(:{label}.{key}: index or label scan)"),
    };
    format!("{how} -> #{slot}")
}

/// One line describing the operator at the top of `node` (not its inputs); `ctx`, when given, is the graph the
/// plan would run against.
pub(crate) fn describe(node: &PlanNode, ctx: Option<&Ctx>) -> String {
    use PlanNode as P;
    match node {
        P::Start => "Start".into(),
        P::ScanNodes { label: Some(l), slot, .. } => format!("NodeByLabelScan(:{l}) -> #{slot}"),
        P::ScanNodes { slot, .. } => format!("AllNodesScan -> #{slot}"),
        P::KeyLookup { label, key, slot, any_of, .. } => lookup_line(ctx, label, key, true, *any_of, *slot),
        P::IndexRange { label, key, slot, .. } => lookup_line(ctx, label, key, false, false, *slot),
        P::NodeById { slot, .. } => format!("NodeByIdSeek -> #{slot}"),
        P::CompositeSeek { slot, label, keys, range, .. } => {
            format!(
                "NodeIndexSeek{}(:{label}({})) -> #{slot}",
                if range.is_some() { "ByRange" } else { "" },
                keys.iter().map(|k| k.as_ref()).collect::<Vec<_>>().join(", ")
            )
        }
        P::RelIndexSeek { rel, left, right, dir, ty, key, lookup, .. } => {
            let which = if *dir == plexus_storage::Direction::Both { "Undirected" } else { "Directed" };
            let how = match lookup {
                super::RelLookup::Equal(_) | super::RelLookup::AnyOf(_) => "Seek",
                super::RelLookup::Range(..) => "SeekByRange",
            };
            format!("{which}RelationshipIndex{how}(#{left} [#{rel}:{ty}.{key}] #{right})")
        }
        P::Expand { from, to, dir, types, to_bound, to_labels, .. } => format!(
            "Expand{}(#{from} {:?} [{}] #{to}{})",
            if *to_bound { "Into" } else { "All" },
            dir,
            types.iter().map(|t| t.as_ref()).collect::<Vec<_>>().join("|"),
            to_labels.iter().map(|l| format!(":{}", l.name())).collect::<String>()
        ),
        P::VarExpand { from, to, min, max, cycle: Some(cycle), .. } => format!(
            "QuantifiedPathExpand(#{from} ({}){{{min},{}}} #{to})",
            cycle
                .steps
                .iter()
                .map(|(dir, types)| format!(
                    "{dir:?} [{}]",
                    types.iter().map(|t| t.as_ref()).collect::<Vec<_>>().join("|")
                ))
                .collect::<Vec<_>>()
                .join(", "),
            max.map_or("".into(), |m| m.to_string())
        ),
        P::VarExpand { from, to, dir, min, max, to_labels, .. } => format!(
            "VarLengthExpand(#{from} {:?} *{min}..{} #{to}{})",
            dir,
            max.map_or("".into(), |m| m.to_string()),
            to_labels.iter().map(|l| format!(":{}", l.name())).collect::<String>()
        ),
        P::ShortestPath { from, to, all, count, path_filters, .. } => format!(
            "{}(#{from}, #{to}){}",
            match (*all, *count) {
                (true, 1) => "AllShortestPaths".to_string(),
                (false, 1) => "ShortestPath".to_string(),
                (true, k) => format!("ShortestGroups[{k}]"),
                (false, k) => format!("ShortestPaths[{k}]"),
            },
            if path_filters.is_empty() { "" } else { " of the paths passing the WHERE" }
        ),
        P::Filter { .. } => "Filter".into(),
        P::Optional { .. } => "Optional".into(),
        P::Apply { rows_per_transaction: None, optional: true, .. } => "Apply(optional)".into(),
        P::Apply { rows_per_transaction: None, .. } => "Apply".into(),
        P::Apply { rows_per_transaction: Some(_), .. } => "Apply(in transactions)".into(),
        P::Unwind { slot, .. } => format!("Unwind -> #{slot}"),
        P::LoadCsv { slot, headers, .. } => {
            format!("LoadCsv{} -> #{slot}", if *headers { "(with headers)" } else { "" })
        }
        P::Project { items, .. } => format!("Projection({} item(s))", items.len()),
        P::Aggregate { keys, aggs, per_run, .. } => format!(
            "Aggregation({} key(s), {} aggregate(s){})",
            keys.len(),
            aggs.len(),
            if per_run.is_empty() { "" } else { ", one row per run" }
        ),
        P::ExpandAggregate { keys, aggs, filters, shape, .. } => format!(
            "ExpandAggregation({} key(s), {} aggregate(s), {} filter(s){})",
            keys.len(),
            aggs.len(),
            filters.len(),
            match shape {
                Some(shape) => match &shape.top {
                    Some(top) if top.exact => ", counted per neighbour, top groups in sort order",
                    Some(_) => ", counted per neighbour, top groups for the sort",
                    None => ", counted per neighbour",
                },
                None => "",
            }
        ),
        P::CountFromStore { counted: StoreCount::Nodes(Some(l)), slot, .. } => {
            format!("NodeCountFromCountStore(:{l}) -> #{slot}")
        }
        P::CountFromStore { counted: StoreCount::Nodes(None), slot, .. } => {
            format!("NodeCountFromCountStore -> #{slot}")
        }
        P::CountFromStore { counted: StoreCount::Rels(types), slot, .. } if types.is_empty() => {
            format!("RelationshipCountFromCountStore -> #{slot}")
        }
        P::CountFromStore { counted: StoreCount::Rels(types), slot, .. } => {
            let types: Vec<String> = types.iter().map(|t| t.to_string()).collect();
            format!("RelationshipCountFromCountStore([:{}]) -> #{slot}", types.join("|"))
        }
        P::Distinct { .. } => "Distinct".into(),
        P::Sort { keys, .. } => format!("Sort({} key(s))", keys.len()),
        P::Skip { .. } => "Skip".into(),
        P::Limit { .. } => "Limit".into(),
        P::Create { nodes, rels, streams, .. } => format!(
            "Create({} node(s), {} relationship(s){})",
            nodes.len(),
            rels.len(),
            if *streams { ", rows as they arrive" } else { "" }
        ),
        P::Merge { .. } => "Merge".into(),
        P::Set { items, .. } => format!("SetOrRemove({} item(s))", items.len()),
        P::Delete { detach, .. } => if *detach { "DetachDelete" } else { "Delete" }.into(),
        P::Foreach { .. } => "Foreach".into(),
        P::Call { procedure, .. } => format!("ProcedureCall({procedure:?})"),
        P::Produce { columns, .. } => format!("ProduceResults({} column(s))", columns.len()),
        P::Union { all, parts } => format!("Union{}({} part(s))", if *all { "All" } else { "" }, parts.len()),
    }
}

/// The whole tree, root first, with nested plans (OPTIONAL MATCH, subqueries, MERGE) indented under their
/// operator; with `profile`, each operator's rows and time (operators that ran inside another one, such as a
/// sort under its LIMIT, have no line of figures of their own).
pub(crate) fn render(root: &PlanNode, profile: Option<&Profile>, ctx: Option<&Ctx>) -> String {
    let mut out = String::new();
    render_into(root, 0, profile, ctx, &mut out);
    out
}

fn render_into(node: &PlanNode, depth: usize, profile: Option<&Profile>, ctx: Option<&Ctx>, out: &mut String) {
    let mut current = Some(node);
    while let Some(n) = current {
        let _ = write!(out, "{}+{}", "| ".repeat(depth), describe(n, ctx));
        if let Some(p) = profile.and_then(|p| p.of(n)) {
            let _ = write!(out, "  rows: {}, time: {:.3} ms", p.rows, p.time.as_secs_f64() * 1e3);
        }
        out.push('\n');
        for nested in nested_plans(n) {
            render_into(nested, depth + 1, profile, ctx, out);
        }
        current = n.input();
    }
}

/// The plan as a tree (see [`PlanTree`]), with `profile`'s figures on each operator that has them.
pub(crate) fn tree(node: &PlanNode, profile: Option<&Profile>, ctx: Option<&Ctx>) -> PlanTree {
    let figures = profile.and_then(|p| p.of(node));
    let children = node.input().into_iter().chain(nested_plans(node)).map(|child| tree(child, profile, ctx)).collect();
    PlanTree { operator: describe(node, ctx), rows: figures.map(|f| f.rows), time: figures.map(|f| f.time), children }
}

/// The plans an operator runs besides its input: OPTIONAL MATCH and subquery bodies, a MERGE pattern, a
/// FOREACH body, the parts of a UNION.
fn nested_plans(node: &PlanNode) -> &[PlanNode] {
    match node {
        PlanNode::Optional { inner, .. } | PlanNode::Apply { inner, .. } => std::slice::from_ref(&**inner),
        PlanNode::Merge { matcher, .. } => std::slice::from_ref(&**matcher),
        PlanNode::Foreach { body, .. } => std::slice::from_ref(&**body),
        PlanNode::Union { parts, .. } => parts,
        _ => &[],
    }
}
