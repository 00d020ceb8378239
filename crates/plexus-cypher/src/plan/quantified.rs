//! Planning quantified path patterns, `((a)-[r:R]->(b) WHERE ...){m,n}`: their variables (lists over the
//! repetitions), the condition every repetition meets, and, for a pattern of several relationships, the
//! repetition a variable-length walk takes whole.

use std::collections::HashSet;
use std::sync::Arc;

use super::pattern::{conjuncts, mentioned, to_dir, type_test};
use super::planner::{AggMode, Planner, Scope, VarKind};
use super::{GroupItem, HopCycle, PlanNode};
use crate::ast::*;
use crate::error::{CypherError, Result};
use crate::expr::CExpr;
use crate::token::Token;

impl Planner<'_> {
    /// The variables inside a quantified path pattern: new names, each a list after the match (its nodes'
    /// as plain lists; the relationship of a one-relationship pattern as a relationship list, declared with the
    /// other relationships; those of a longer one as plain lists).
    pub(super) fn declare_group_variables(
        &mut self,
        scope: &mut Scope,
        declared: &mut HashSet<String>,
        rel: &RelPattern,
        hop: &HopPattern,
    ) -> Result<()> {
        // (variable, whether it is declared here, whether it names a node)
        let names: Vec<(Option<&Ident>, bool, bool)> = if hop.steps.is_empty() {
            vec![
                (hop.from.variable.as_ref(), true, true),
                (rel.variable.as_ref(), false, false),
                (hop.to.variable.as_ref(), true, true),
            ]
        } else {
            let mut names = vec![(hop.from.variable.as_ref(), true, true)];
            for (r, n) in &hop.steps {
                names.push((r.variable.as_ref(), true, false));
                names.push((n.variable.as_ref(), true, true));
            }
            names
        };
        for (i, (v, here, node)) in names.iter().enumerate() {
            let Some(v) = v else { continue };
            let earlier = names[..i].iter().find(|(w, _, _)| w.is_some_and(|w| w.name == v.name));
            // A node named twice inside is one node in each repetition (`((x)-[:R]->(x))`, a self-loop), as in
            // Neo4j: the repetition's condition joins the two places.
            if *node && earlier.is_some_and(|(_, _, was_node)| *was_node) {
                continue;
            }
            if earlier.is_some() || declared.contains(&v.name) || scope.get(&v.name).is_some() {
                return Err(self.error(
                    v.span,
                    CypherError::semantic(
                        "VariableAlreadyBound",
                        format!(
                            "`{}` inside a quantified path pattern must be a new variable, used once in the pattern",
                            v.name
                        ),
                    ),
                ));
            }
            if *here {
                let slot = self.slot();
                scope.add(&v.name, slot, VarKind::Scalar);
                declared.insert(v.name.clone());
            }
        }
        Ok(())
    }

    /// Refuses a condition inside a quantified path pattern that names a variable this MATCH binds outside the
    /// pattern (`own` are the pattern's own variables).
    fn check_inner_references<'e>(
        &self,
        own: &[&str],
        conditions: impl IntoIterator<Item = &'e Expr>,
        declared: &HashSet<String>,
    ) -> Result<()> {
        // Inside, only the pattern's own variables and those bound before this MATCH may be named (as in Neo4j):
        // the others are not bound yet while a repetition is checked, whichever way the pattern is walked.
        for e in conditions {
            if let Some(name) = mentioned(e)
                .unwrap_or_default()
                .into_iter()
                .find(|n| declared.contains(n) && !own.contains(&n.as_str()))
            {
                return Err(self.error(
                    e.span,
                    CypherError::semantic(
                        "InvalidReference",
                        format!(
                            "`{name}` is bound by this MATCH: inside a quantified path pattern only its own \
                             variables and those bound before this MATCH can be named"
                        ),
                    ),
                ));
            }
        }
        Ok(())
    }

    /// The condition each repetition of a quantified path pattern of one relationship meets, over its nodes
    /// (`from_slot`, `to_slot`, in the pattern's left-to-right order) and relationship (`rel_slot`), given as
    /// scratch slots: the node patterns' labels and properties and the pattern's WHERE.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn hop_condition(
        &mut self,
        hop: &HopPattern,
        rel: &RelPattern,
        predicate: Option<&Expr>,
        (from_slot, rel_slot, to_slot): (usize, usize, usize),
        scope: &Scope,
        declared: &HashSet<String>,
    ) -> Result<Option<CExpr>> {
        let own = own_names(hop, rel);
        let conditions = [predicate, hop.from.properties.as_ref(), hop.to.properties.as_ref(), rel.properties.as_ref()];
        self.check_inner_references(&own, conditions.into_iter().flatten(), declared)?;
        let mut inner = scope.clone();
        for (v, slot, kind) in [
            (&hop.from.variable, from_slot, VarKind::Node),
            (&rel.variable, rel_slot, VarKind::Rel),
            (&hop.to.variable, to_slot, VarKind::Node),
        ] {
            if let Some(v) = v {
                inner = inner.with(&v.name, slot, kind);
            }
        }
        let mut tests = Vec::new();
        if let (Some(a), Some(b)) = (&hop.from.variable, &hop.to.variable) {
            if a.name == b.name {
                tests.push(CExpr::Binary(
                    BinaryOp::Eq,
                    Box::new(CExpr::Slot(from_slot)),
                    Box::new(CExpr::Slot(to_slot)),
                ));
            }
        }
        for (np, slot) in [(&hop.from, from_slot), (&hop.to, to_slot)] {
            self.inner_node_tests(np, slot, &inner, &mut tests)?;
        }
        if let Some(props) = &rel.properties {
            let map = self.expr(props, &inner, &mut AggMode::Forbidden)?;
            tests.push(CExpr::PropsMatch(Box::new(CExpr::Slot(rel_slot)), Box::new(map)));
        }
        if let Some(predicate) = predicate {
            tests.push(self.expr(predicate, &inner, &mut AggMode::Forbidden)?);
        }
        Ok(tests.into_iter().reduce(|a, b| CExpr::And(Box::new(a), Box::new(b))))
    }

    /// After a quantified path pattern matched, its node variables as lists: the left node of each repetition,
    /// and the right one, read off the path from the pattern's left node (`first`) along `rels`.
    ///
    /// A pattern of several relationships has its lists written by the walk that matched it: they are only
    /// marked bound.
    pub(super) fn bind_group_nodes(
        &mut self,
        plan: PlanNode,
        hop: &HopPattern,
        first: usize,
        rels: usize,
        scope: &Scope,
        bound: &mut HashSet<String>,
    ) -> PlanNode {
        if !hop.steps.is_empty() {
            bound.extend(inner_variables(hop, None).into_iter().map(|(v, _)| v.name.clone()));
            return plan;
        }
        let nodes = || {
            let path = CExpr::PathOf { nodes: vec![first], rels: vec![rels] };
            Box::new(CExpr::Scalar(Arc::from("nodes"), vec![path]))
        };
        let int = |i: i64| Some(Box::new(CExpr::Const(crate::value::Value::Int(i))));
        let mut items = Vec::new();
        if let Some(v) = &hop.from.variable {
            items.push((CExpr::Slice(nodes(), int(0), int(-1)), scope.get(&v.name).expect("declared").slot));
            bound.insert(v.name.clone());
        }
        if let Some(v) =
            hop.to.variable.as_ref().filter(|v| hop.from.variable.as_ref().is_none_or(|f| f.name != v.name))
        {
            items.push((CExpr::Slice(nodes(), int(1), None), scope.get(&v.name).expect("declared").slot));
            bound.insert(v.name.clone());
        }
        if items.is_empty() {
            return plan;
        }
        PlanNode::Project { input: Box::new(plan), items }
    }

    /// The tests of a node pattern inside a quantified path pattern on the node in `slot`: its labels, label
    /// expression and property map (`inner` names the repetition's variables).
    fn inner_node_tests(&mut self, np: &NodePattern, slot: usize, inner: &Scope, tests: &mut Vec<CExpr>) -> Result<()> {
        if let Some(e) = np.dynamic_labels.first() {
            return Err(self.error(
                e.expr.span,
                CypherError::syntax(
                    "UnsupportedFeature",
                    "computed labels are not supported inside a quantified path pattern",
                ),
            ));
        }
        if !np.labels.is_empty() {
            let labels = np.labels.iter().map(|l| Token::new(l.name.as_str())).collect();
            tests.push(CExpr::HasLabels(Box::new(CExpr::Slot(slot)), labels));
        }
        if let Some(test) = &np.label_expr {
            tests.push(CExpr::LabelTest(Box::new(CExpr::Slot(slot)), crate::expr::label_test(test)));
        }
        if let Some(props) = &np.properties {
            let map = self.expr(props, inner, &mut AggMode::Forbidden)?;
            tests.push(CExpr::PropsMatch(Box::new(CExpr::Slot(slot)), Box::new(map)));
        }
        Ok(())
    }

    /// One repetition of a quantified path pattern of several relationships, with scratch slots for its nodes
    /// and relationships, the condition each repetition meets, and where its variables' lists go.
    pub(super) fn hop_cycle(
        &mut self,
        hop: &HopPattern,
        predicate: Option<&Expr>,
        scope: &Scope,
        declared: &HashSet<String>,
    ) -> Result<HopCycle> {
        let k = hop.steps.len();
        let node_slots: Vec<usize> = (0..=k).map(|_| self.slot()).collect();
        let rel_slots: Vec<usize> = (0..k).map(|_| self.slot()).collect();
        let nodes: Vec<&NodePattern> = std::iter::once(&hop.from).chain(hop.steps.iter().map(|(_, n)| n)).collect();
        let rels: Vec<&RelPattern> = hop.steps.iter().map(|(r, _)| r).collect();
        let own: Vec<&str> = inner_variables(hop, None).into_iter().map(|(v, _)| v.name.as_str()).collect();
        let conditions =
            nodes.iter().filter_map(|n| n.properties.as_ref()).chain(rels.iter().filter_map(|r| r.properties.as_ref()));
        self.check_inner_references(&own, conditions.chain(predicate), declared)?;

        let mut inner = scope.clone();
        let mut groups = Vec::new();
        let mut tests = Vec::new();
        for (j, n) in nodes.iter().enumerate() {
            if let Some(v) = &n.variable {
                match nodes[..j].iter().position(|m| m.variable.as_ref().is_some_and(|w| w.name == v.name)) {
                    // Named before in the repetition: the same node.
                    Some(first) => tests.push(CExpr::Binary(
                        BinaryOp::Eq,
                        Box::new(CExpr::Slot(node_slots[j])),
                        Box::new(CExpr::Slot(node_slots[first])),
                    )),
                    None => {
                        inner = inner.with(&v.name, node_slots[j], VarKind::Node);
                        groups.push((scope.get(&v.name).expect("declared").slot, GroupItem::Node(j)));
                    }
                }
            }
        }
        for (j, r) in rels.iter().enumerate() {
            if let Some(v) = &r.variable {
                inner = inner.with(&v.name, rel_slots[j], VarKind::Rel);
                groups.push((scope.get(&v.name).expect("declared").slot, GroupItem::Rel(j)));
            }
        }
        for (np, &slot) in nodes.iter().zip(&node_slots) {
            self.inner_node_tests(np, slot, &inner, &mut tests)?;
        }
        for (rp, &slot) in rels.iter().zip(&rel_slots) {
            if let Some(test) = &rp.type_expr {
                tests.push(type_test(slot, test));
            }
            if let Some(props) = &rp.properties {
                let map = self.expr(props, &inner, &mut AggMode::Forbidden)?;
                tests.push(CExpr::PropsMatch(Box::new(CExpr::Slot(slot)), Box::new(map)));
            }
        }
        if let Some(predicate) = predicate {
            tests.push(self.expr(predicate, &inner, &mut AggMode::Forbidden)?);
        }
        let steps = rels
            .iter()
            .map(|r| (to_dir(r.direction, false), r.types.iter().map(|t| Token::new(t.name.as_str())).collect()))
            .collect();
        Ok(HopCycle {
            steps,
            node_slots,
            rel_slots,
            condition: tests.into_iter().reduce(|a, b| CExpr::And(Box::new(a), Box::new(b))),
            groups,
        })
    }

    /// A quantified path pattern's WHERE split in two: the conjuncts a repetition can be checked on as the walk
    /// meets it, and those naming a variable this MATCH binds outside the pattern (`(a) ((x)-->(y) WHERE y.v <
    /// b.v)+ (b)`), which Neo4j accepts and which hold for every repetition once the whole MATCH is bound.
    /// A conjunct naming a path of this MATCH stays in the first part, where it is refused: the path is not
    /// whole while its repetitions are matched.
    pub(super) fn split_repetition_predicate(
        &self,
        hop: &HopPattern,
        rel: &RelPattern,
        scope: &Scope,
        declared: &HashSet<String>,
    ) -> (Option<Expr>, Vec<Expr>) {
        let Some(predicate) = &hop.predicate else { return (None, Vec::new()) };
        let own = own_names(hop, rel);
        let mut parts = Vec::new();
        conjuncts(predicate, &mut parts);
        let elsewhere = |n: &String| declared.contains(n) && !own.contains(&n.as_str());
        let is_path = |n: &String| scope.get(n).is_some_and(|v| v.kind == VarKind::Path);
        let (later, now): (Vec<Expr>, Vec<Expr>) = parts.into_iter().partition(|e| {
            mentioned(e)
                .is_some_and(|names| names.iter().any(elsewhere) && !names.iter().any(|n| elsewhere(n) && is_path(n)))
        });
        let now = now.into_iter().reduce(|a, b| {
            let span = a.span.to(b.span);
            Expr::new(ExprKind::Binary(BinaryOp::And, Box::new(a), Box::new(b)), span)
        });
        (now, later)
    }

    /// Queues `later` (see [`Self::split_repetition_predicate`]) as filters for the end of the MATCH: for each
    /// repetition `i` of the path whose relationships are listed in `rels` (`k` per repetition), each conjunct
    /// with the pattern's variables bound to their `i`-th items.
    pub(super) fn defer_repetition_conditions(
        &mut self,
        later: &[Expr],
        hop: &HopPattern,
        rel: &RelPattern,
        rels: usize,
        scope: &Scope,
    ) -> Result<()> {
        if later.is_empty() {
            return Ok(());
        }
        let k = hop.steps.len().max(1) as i64;
        let repetition = self.slot();
        let mut inner = scope.clone();
        // (scratch slot of the repetition's item, slot of the variable's list)
        let mut items = Vec::new();
        for (v, kind) in inner_variables(hop, rel.variable.as_ref()) {
            let Some(list) = scope.get(&v.name) else { continue };
            let item = self.slot();
            inner = inner.with(&v.name, item, kind);
            items.push((item, list.slot));
        }
        let int = |i: i64| Box::new(CExpr::Const(crate::value::Value::Int(i)));
        let size = CExpr::Scalar(Arc::from("size"), vec![CExpr::Slot(rels)]);
        let last = CExpr::Binary(BinaryOp::Sub, Box::new(CExpr::Binary(BinaryOp::Div, Box::new(size), int(k))), int(1));
        let repetitions = CExpr::Scalar(Arc::from("range"), vec![CExpr::Const(crate::value::Value::Int(0)), last]);
        for e in later {
            let mut predicate = self.expr(e, &inner, &mut AggMode::Forbidden)?;
            // Each variable bound to its item of this repetition: a quantifier over a list of that one item.
            for &(item, list) in &items {
                let at = CExpr::Index(Box::new(CExpr::Slot(list)), Box::new(CExpr::Slot(repetition)));
                predicate = CExpr::Quantified {
                    quantifier: Quantifier::All,
                    slot: item,
                    list: Box::new(CExpr::List(vec![at])),
                    predicate: Box::new(predicate),
                };
            }
            self.repetition_filters.push(CExpr::Quantified {
                quantifier: Quantifier::All,
                slot: repetition,
                list: Box::new(repetitions.clone()),
                predicate: Box::new(predicate),
            });
        }
        Ok(())
    }
}

/// The variables a quantified path pattern names inside, each once with its kind, in the pattern's order
/// (`rel` is the relationship of a pattern of one relationship).
fn inner_variables<'h>(hop: &'h HopPattern, rel: Option<&'h Ident>) -> Vec<(&'h Ident, VarKind)> {
    let nodes = std::iter::once(&hop.from).chain(hop.steps.iter().map(|(_, n)| n)).chain(std::iter::once(&hop.to));
    let rels = rel.into_iter().chain(hop.steps.iter().filter_map(|(r, _)| r.variable.as_ref()));
    let named =
        nodes.filter_map(|n| n.variable.as_ref()).map(|v| (v, VarKind::Node)).chain(rels.map(|v| (v, VarKind::Rel)));
    let mut seen = HashSet::new();
    named.filter(|(v, _)| seen.insert(v.name.as_str())).collect()
}

/// The names of [`inner_variables`].
fn own_names<'h>(hop: &'h HopPattern, rel: &'h RelPattern) -> Vec<&'h str> {
    inner_variables(hop, rel.variable.as_ref()).into_iter().map(|(v, _)| v.name.as_str()).collect()
}
