//! Planning shortest paths: `shortestPath()`, `allShortestPaths()` and the selectors `SHORTEST k [GROUPS]`,
//! `ANY k`, over a relationship pattern or a quantified path pattern of one relationship. A WHERE on the path
//! either steers the search (per relationship where it can, else on whole paths) or, for the selectors, filters
//! what they selected.

use std::collections::HashSet;

use super::pattern::{mentioned, to_dir, type_test, Pending};
use super::planner::{AggMode, Planner, Scope, VarKind};
use super::PlanNode;
use crate::ast::*;
use crate::error::{CypherError, Result};
use crate::expr::CExpr;
use crate::token::Token;

impl Planner<'_> {
    #[allow(clippy::too_many_arguments)]
    pub(super) fn shortest_path(
        &mut self,
        mut plan: PlanNode,
        part: &PatternPart,
        scope: &mut Scope,
        bound: &mut HashSet<String>,
        declared: &HashSet<String>,
        pending: &mut Vec<Pending>,
        node_slots: &[usize],
        rel_slots: &[usize],
    ) -> Result<PlanNode> {
        let el = &part.element;
        let hop_of = |r: &RelPattern| r.hop.as_ref().map(|h| (h.steps.is_empty(), r.span));
        match el.chain.iter().find_map(|(r, _)| hop_of(r)) {
            Some((_, span)) if part.kind == PathKind::Shortest || part.kind == PathKind::AllShortest => {
                return Err(self.error(
                    span,
                    CypherError::syntax(
                        "UnsupportedQuantifiedPath",
                        "shortestPath takes a relationship pattern, not a quantified path pattern",
                    ),
                ));
            }
            _ => {}
        }
        if el.chain.len() != 1 {
            return Err(self.error(
                part.span,
                CypherError::syntax("InvalidShortestPath", "shortestPath requires a pattern with one relationship"),
            ));
        }
        let ends = [&el.start, &el.chain[0].1];
        for (i, np) in ends.iter().enumerate() {
            let is_bound = np.variable.as_ref().is_some_and(|v| bound.contains(&v.name));
            if !is_bound {
                // As any pattern starts: by id, unique key or index where the pattern or WHERE allows.
                plan = self.start_node(plan, np, node_slots[i], pending, bound, declared, scope)?;
            } else {
                plan = self.node_filters(plan, np, node_slots[i], false, None, scope)?;
            }
        }
        plan = self.flush(plan, pending, bound, declared, scope)?;
        let rp = &el.chain[0].0;
        if rp.dynamic_type.is_some() {
            return Err(self.error(
                rp.span,
                CypherError::syntax(
                    "UnsupportedFeature",
                    "a computed relationship type is supported on a single relationship, not a shortest path",
                ),
            ));
        }
        let (min, max) = rp.length.unwrap_or((Some(1), Some(1)));
        let path = part.variable.as_ref().map(|p| scope.get(&p.name).expect("declared").slot);
        let rel_scratch = self.slot();
        let mut rel_filters = Vec::new();
        // A quantified path pattern's condition (which holds its relationship map) reads each relationship's two
        // nodes from scratch slots of their own.
        let mut hop_nodes = None;
        let mut cycle = None;
        if let Some(hop) = rp.hop.as_ref().filter(|h| !h.steps.is_empty()) {
            // Several relationships: the search takes each repetition whole, as a variable-length walk does.
            cycle = Some(Box::new(self.hop_cycle(hop, hop.predicate.as_ref(), scope, declared)?));
        } else if let Some(hop) = &rp.hop {
            let (from_scratch, to_scratch) = (self.slot(), self.slot());
            let slots = (from_scratch, rel_scratch, to_scratch);
            rel_filters.extend(self.hop_condition(hop, rp, hop.predicate.as_ref(), slots, scope, declared)?);
            hop_nodes = Some((from_scratch, to_scratch));
        } else if let Some(props) = &rp.properties {
            let map = self.expr(props, scope, &mut AggMode::Forbidden)?;
            rel_filters.push(CExpr::PropsMatch(Box::new(CExpr::Slot(rel_scratch)), Box::new(map)));
        }
        let path_names: Vec<&str> = part.variable.iter().chain(rp.variable.iter()).map(|v| v.name.as_str()).collect();
        // A condition on every node of the path becomes one on both ends of every relationship: the same for
        // paths of at least one relationship, which are all a search between two nodes finds unless its minimum
        // is 0, and not for a walk by whole repetitions (which checks no single relationship).
        let mut per_node = PerNode {
            path: part.variable.as_ref().map(|v| v.name.as_str()).filter(|_| cycle.is_none() && min != Some(0)),
            ends: hop_nodes,
        };
        let mut path_filters = Vec::new();
        let mut after = bound.clone();
        after.extend(path_names.iter().map(|n| n.to_string()));
        let mut i = 0;
        // A path selector's WHERE filters the paths it selected: it stays pending, for after the search.
        let selector = matches!(part.kind, PathKind::ShortestPaths(_) | PathKind::ShortestGroups(_));
        while i < pending.len() && !selector {
            let mentions_path =
                pending[i].names.as_ref().is_some_and(|names| names.iter().any(|n| path_names.contains(&n.as_str())));
            let takes = mentions_path && pending[i].ready(&after, declared);
            if !takes {
                i += 1;
                continue;
            }
            let conjunct = pending.remove(i).expr;
            // Compiled whole first, so it raises the errors it would as a filter.
            let whole = self.expr(&conjunct, scope, &mut AggMode::Forbidden)?;
            match self.per_relationship(&conjunct, &path_names, rel_scratch, &mut per_node, scope)? {
                Some(fs) => rel_filters.extend(fs),
                None => path_filters.push(whole),
            }
        }
        // The parenthesised path's own WHERE steers the search, selector or not: the shortest paths that pass it.
        if let Some(predicate) = &part.predicate {
            let mut parts = Vec::new();
            super::pattern::conjuncts(predicate, &mut parts);
            for conjunct in parts {
                let whole = self.expr(&conjunct, scope, &mut AggMode::Forbidden)?;
                match self.per_relationship(&conjunct, &path_names, rel_scratch, &mut per_node, scope)? {
                    Some(fs) => rel_filters.extend(fs),
                    None => path_filters.push(whole),
                }
            }
        }
        let hop_nodes = per_node.ends;
        if let Some(test) = &rp.type_expr {
            rel_filters.push(type_test(rel_scratch, test));
        }
        plan = PlanNode::ShortestPath {
            input: Box::new(plan),
            from: node_slots[0],
            to: node_slots[1],
            rel: rel_slots[0],
            path,
            dir: to_dir(rp.direction, false),
            types: rp.types.iter().map(|t| Token::new(t.name.as_str())).collect(),
            min: min.unwrap_or(1),
            max,
            all: matches!(part.kind, PathKind::AllShortest | PathKind::ShortestGroups(_)),
            selector,
            count: match part.kind {
                PathKind::ShortestPaths(k) | PathKind::ShortestGroups(k) => k,
                _ => 1,
            },
            rel_scratch,
            rel_filters,
            path_filters,
            hop_nodes,
            cycle,
        };
        if let Some(hop) = &rp.hop {
            plan = self.bind_group_nodes(plan, hop, node_slots[0], rel_slots[0], scope, bound);
        }
        if let Some(v) = &rp.variable {
            bound.insert(v.name.clone());
        }
        if let Some(p) = &part.variable {
            bound.insert(p.name.clone());
        }
        self.flush(plan, pending, bound, declared, scope)
    }

    /// `all(r IN relationships(p) WHERE f)` or `none(...)` (or over a path's relationship list) as a condition on
    /// each relationship, and `all(x IN nodes(p) WHERE f)` or `none(...)` as conditions on each relationship's two
    /// ends when `per_node` allows it, when `f` mentions neither the path nor its list: the search then never
    /// follows a relationship that fails it, which gives the same paths as filtering whole paths, sooner (filtering
    /// whole paths tries every path of each length before the next, exponentially many when none passes).
    fn per_relationship(
        &mut self,
        conjunct: &Expr,
        path_names: &[&str],
        rel_scratch: usize,
        per_node: &mut PerNode<'_>,
        scope: &Scope,
    ) -> Result<Option<Vec<CExpr>>> {
        let ExprKind::Quantified { quantifier, variable, list, predicate } = &conjunct.kind else { return Ok(None) };
        if !matches!(quantifier, Quantifier::All | Quantifier::None) {
            return Ok(None);
        }
        let independent = mentioned(predicate)
            .is_some_and(|names| names.iter().all(|n| n == &variable.name || !path_names.contains(&n.as_str())));
        if !independent {
            return Ok(None);
        }
        let of_path = |args: &[Expr], names: &[&str]| matches!(args, [a] if matches!(&a.kind, ExprKind::Variable(v) if names.contains(&v.as_str())));
        let slots = match &list.kind {
            ExprKind::Variable(v) if path_names.contains(&v.as_str()) => vec![(rel_scratch, VarKind::Rel)],
            ExprKind::Function { name, args, .. } if name == "relationships" && of_path(args, path_names) => {
                vec![(rel_scratch, VarKind::Rel)]
            }
            ExprKind::Function { name, args, .. }
                if name == "nodes" && per_node.path.is_some_and(|path| of_path(args, &[path])) =>
            {
                let (left, right) = *per_node.ends.get_or_insert_with(|| (self.slot(), self.slot()));
                vec![(left, VarKind::Node), (right, VarKind::Node)]
            }
            _ => return Ok(None),
        };
        let mut conditions = Vec::with_capacity(slots.len());
        for (slot, kind) in slots {
            let f = self.expr(predicate, &scope.with(&variable.name, slot, kind), &mut AggMode::Forbidden)?;
            conditions.push(match quantifier {
                Quantifier::None => CExpr::Not(Box::new(f)),
                _ => f,
            });
        }
        Ok(Some(conditions))
    }
}

/// What [`Planner::per_relationship`] may turn into conditions on relationships: the path variable whose nodes they may
/// range over (none when it may not), and the scratch slots of each relationship's two ends, made when first
/// needed unless a quantified path pattern's condition has them already.
struct PerNode<'a> {
    path: Option<&'a str>,
    ends: Option<(usize, usize)>,
}
