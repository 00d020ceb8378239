//! EXPLAIN and PROFILE: the plan as an indented operator tree, leaf last, one operator per line; under PROFILE
//! each line also gives the rows the operator produced and the time spent in it with its inputs.

use std::fmt::Write;

use super::PlanNode;
use crate::exec::ctx::Profile;
use crate::PlanTree;

/// One line describing the operator at the top of `node` (not its inputs).
pub(crate) fn describe(node: &PlanNode) -> String {
    use PlanNode as P;
    match node {
        P::Start => "Start".into(),
        P::ScanNodes { label: Some(l), slot, .. } => format!("NodeByLabelScan(:{l}) -> #{slot}"),
        P::ScanNodes { slot, .. } => format!("AllNodesScan -> #{slot}"),
        P::KeyLookup { label, key, slot, any_of: false, .. } => format!("NodeIndexSeek(:{label}.{key}) -> #{slot}"),
        P::KeyLookup { label, key, slot, any_of: true, .. } => format!("NodeIndexSeek(:{label}.{key} IN) -> #{slot}"),
        // Planned whether or not the index exists yet: without one it reads the label's nodes (the plan is cached
        // and holds when an index is created later).
        P::IndexRange { label, key, slot, .. } => {
            format!("NodeIndexRangeSeek(:{label}.{key}, a label scan while no such index exists) -> #{slot}")
        }
        P::NodeById { slot, .. } => format!("NodeByIdSeek -> #{slot}"),
        P::Expand { from, to, dir, types, to_bound, .. } => format!(
            "Expand{}(#{from} {:?} [{}] #{to})",
            if *to_bound { "Into" } else { "All" },
            dir,
            types.iter().map(|t| t.as_ref()).collect::<Vec<_>>().join("|")
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
        P::VarExpand { from, to, dir, min, max, .. } => {
            format!("VarLengthExpand(#{from} {:?} *{min}..{} #{to})", dir, max.map_or("".into(), |m| m.to_string()))
        }
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
        P::Aggregate { keys, aggs, .. } => format!("Aggregation({} key(s), {} aggregate(s))", keys.len(), aggs.len()),
        P::ExpandAggregate { keys, aggs, filters, shape, .. } => format!(
            "ExpandAggregation({} key(s), {} aggregate(s), {} filter(s){})",
            keys.len(),
            aggs.len(),
            filters.len(),
            match shape {
                Some(shape) if shape.top.is_some() => ", counted per neighbour, top groups for the sort",
                Some(_) => ", counted per neighbour",
                None => "",
            }
        ),
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
pub(crate) fn render(root: &PlanNode, profile: Option<&Profile>) -> String {
    let mut out = String::new();
    render_into(root, 0, profile, &mut out);
    out
}

fn render_into(node: &PlanNode, depth: usize, profile: Option<&Profile>, out: &mut String) {
    let mut current = Some(node);
    while let Some(n) = current {
        let _ = write!(out, "{}+{}", "| ".repeat(depth), describe(n));
        if let Some(p) = profile.and_then(|p| p.of(n)) {
            let _ = write!(out, "  rows: {}, time: {:.3} ms", p.rows, p.time.as_secs_f64() * 1e3);
        }
        out.push('\n');
        for nested in nested_plans(n) {
            render_into(nested, depth + 1, profile, out);
        }
        current = n.input();
    }
}

/// The plan as a tree (see [`PlanTree`]), with `profile`'s figures on each operator that has them.
pub(crate) fn tree(node: &PlanNode, profile: Option<&Profile>) -> PlanTree {
    let figures = profile.and_then(|p| p.of(node));
    let children = node.input().into_iter().chain(nested_plans(node)).map(|child| tree(child, profile)).collect();
    PlanTree { operator: describe(node), rows: figures.map(|f| f.rows), time: figures.map(|f| f.time), children }
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
