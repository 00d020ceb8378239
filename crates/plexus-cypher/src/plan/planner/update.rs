//! The planner's update clauses: CREATE (nodes, relationships and paths to create), MERGE, and the items of SET
//! and REMOVE.

use super::*;
use crate::plan::PropKey;

impl Planner<'_> {
    pub(super) fn create(&mut self, input: PlanNode, patterns: &[PatternPart], scope: &mut Scope) -> Result<PlanNode> {
        let (nodes, rels, paths) = self.creation(patterns, scope, None)?;
        let mut plan = PlanNode::Create { input: Box::new(input), nodes, rels, streams: false };
        if !paths.is_empty() {
            plan = PlanNode::Project { input: Box::new(plan), items: paths };
        }
        Ok(plan)
    }

    /// What CREATE (or the creating half of MERGE) makes of patterns: nodes, relationships, path projections.
    /// When merging, `merging` is the scope of the matching half: what the pattern creates goes into the slots
    /// the match binds, so that MERGE's later clauses and the pattern's own properties (`(b {v: a.v})`) read
    /// one slot whichever half ran.
    #[allow(clippy::type_complexity)]
    pub(crate) fn creation(
        &mut self,
        patterns: &[PatternPart],
        scope: &mut Scope,
        merging: Option<&Scope>,
    ) -> Result<(Vec<CreateNode>, Vec<CreateRel>, Vec<(CExpr, usize)>)> {
        // The slot of a new element: the matching half's for a named one when merging, else a fresh one.
        let slot_for = |p: &mut Self, v: &Option<Ident>| match merging.zip(v.as_ref()).and_then(|(m, v)| m.get(&v.name))
        {
            Some(var) => var.slot,
            None => p.slot(),
        };
        let mut nodes = Vec::new();
        let mut rels = Vec::new();
        let mut paths = Vec::new();
        let mut created_here: HashSet<String> = HashSet::new();
        for part in patterns {
            if part.kind != PathKind::Normal {
                return Err(self.error(
                    part.span,
                    CypherError::syntax("InvalidClauseComposition", "shortestPath cannot be used to create"),
                ));
            }
            let mut node_slots = Vec::new();
            let mut rel_slots = Vec::new();
            let mut node = |p: &mut Self,
                            np: &NodePattern,
                            scope: &mut Scope,
                            nodes: &mut Vec<CreateNode>|
             -> Result<usize> {
                if np.label_expr.is_some() {
                    return Err(p.error(
                        np.span,
                        CypherError::syntax(
                            "InvalidLabelExpression",
                            "a node to create or merge takes labels joined by ':' or '&' only, not '|', '!' or '%'",
                        ),
                    ));
                }
                if let Some(v) = &np.variable {
                    if let Some(existing) = scope.get(&v.name) {
                        let (slot, kind) = (existing.slot, existing.kind);
                        if !np.labels.is_empty() || !np.dynamic_labels.is_empty() || np.properties.is_some() {
                            return Err(p.error(
                                v.span,
                                CypherError::semantic(
                                    "VariableAlreadyBound",
                                    format!("variable `{}` already declared", v.name),
                                ),
                            ));
                        }
                        if kind != VarKind::Node && kind != VarKind::Unknown {
                            return Err(p.error(
                                v.span,
                                CypherError::semantic("VariableTypeConflict", format!("`{}` is not a node", v.name)),
                            ));
                        }
                        if !created_here.contains(&v.name) {
                            nodes.push(CreateNode {
                                slot,
                                bound: true,
                                labels: vec![],
                                dynamic_labels: vec![],
                                properties: None,
                            });
                        }
                        return Ok(slot);
                    }
                }
                let slot = slot_for(p, &np.variable);
                if let Some(v) = &np.variable {
                    scope.add(&v.name, slot, VarKind::Node);
                    created_here.insert(v.name.clone());
                }
                let properties =
                    np.properties.as_ref().map(|e| p.expr(e, scope, &mut AggMode::Forbidden)).transpose()?;
                let dynamic_labels =
                    np.dynamic_labels.iter().map(|d| p.written_computed(d, scope)).collect::<Result<Vec<_>>>()?;
                nodes.push(CreateNode {
                    slot,
                    bound: false,
                    labels: np.labels.iter().map(|l| Token::new(l.name.as_str())).collect(),
                    dynamic_labels,
                    properties,
                });
                Ok(slot)
            };
            if part.element.chain.is_empty() {
                if let Some(v) = &part.element.start.variable {
                    self.check_new(scope, v)?;
                }
            }
            let mut prev = node(self, &part.element.start, scope, &mut nodes)?;
            node_slots.push(prev);
            for (rp, np) in &part.element.chain {
                let next = node(self, np, scope, &mut nodes)?;
                if rp.types.len() != 1 && rp.dynamic_type.is_none() {
                    return Err(self.error(
                        rp.span,
                        CypherError::syntax(
                            "NoSingleRelationshipType",
                            "a relationship must have exactly one type to be created",
                        ),
                    ));
                }
                if rp.length.is_some() {
                    return Err(self.error(
                        rp.span,
                        CypherError::syntax("CreatingVarLength", "variable length relationships cannot be created"),
                    ));
                }
                let (from, to) = match rp.direction {
                    RelDirection::Out => (prev, next),
                    RelDirection::In => (next, prev),
                    RelDirection::Both if merging.is_some() => (prev, next),
                    RelDirection::Both => {
                        return Err(self.error(
                            rp.span,
                            CypherError::syntax(
                                "RequiresDirectedRelationship",
                                "only directed relationships are supported in CREATE",
                            ),
                        ))
                    }
                };
                let slot = slot_for(self, &rp.variable);
                if let Some(v) = &rp.variable {
                    self.check_new(scope, v)?;
                    scope.add(&v.name, slot, VarKind::Rel);
                }
                let properties =
                    rp.properties.as_ref().map(|e| self.expr(e, scope, &mut AggMode::Forbidden)).transpose()?;
                let (rel_type, dynamic_type) = match &rp.dynamic_type {
                    Some(d) => (Token::new(""), Some(self.written_computed(d, scope)?)),
                    None => (Token::new(rp.types[0].name.as_str()), None),
                };
                rels.push(CreateRel { slot, from, to, rel_type, dynamic_type, properties });
                rel_slots.push(slot);
                node_slots.push(next);
                prev = next;
            }
            if let Some(p) = &part.variable {
                self.check_new(scope, p)?;
                let slot = slot_for(self, &part.variable);
                scope.add(&p.name, slot, VarKind::Path);
                paths.push((CExpr::PathOf { nodes: node_slots, rels: rel_slots }, slot));
            }
        }
        Ok((nodes, rels, paths))
    }

    pub(super) fn merge(
        &mut self,
        input: PlanNode,
        pattern: &PatternPart,
        on_create: &[SetItem],
        on_match: &[SetItem],
        scope: &mut Scope,
    ) -> Result<PlanNode> {
        // Every element gets a name, so the match half and the create half bind the same slots.
        let pattern = &name_anonymous(pattern, &mut self.anonymous);
        let mut match_scope = scope.clone();
        let matcher =
            self.match_patterns(PlanNode::Start, std::slice::from_ref(pattern), None, &mut match_scope, true)?;
        let mut create_scope = scope.clone();
        let (nodes, rels, paths) =
            self.creation(std::slice::from_ref(pattern), &mut create_scope, Some(&match_scope))?;
        *scope = match_scope;
        let on_create = on_create.iter().map(|i| self.set_item(i, scope)).collect::<Result<Vec<_>>>()?;
        let on_match = on_match.iter().map(|i| self.set_item(i, scope)).collect::<Result<Vec<_>>>()?;
        let mut plan =
            PlanNode::Merge { input: Box::new(input), matcher: Arc::new(matcher), nodes, rels, on_create, on_match };
        if !paths.is_empty() {
            plan = PlanNode::Project { input: Box::new(plan), items: paths };
        }
        Ok(plan)
    }

    pub(super) fn set_item(&mut self, item: &SetItem, scope: &Scope) -> Result<SetOp> {
        Ok(match item {
            SetItem::Property { value, .. } if matches!(value.kind, ExprKind::PatternPredicate(_)) => {
                return Err(self
                    .error(value.span, CypherError::syntax("UnexpectedSyntax", "a pattern cannot be used as a value")))
            }
            SetItem::Property { target, key, value } => SetOp::Property {
                target: self.expr(target, scope, &mut AggMode::Forbidden)?,
                key: self.property_key(key, scope)?,
                value: self.expr(value, scope, &mut AggMode::Forbidden)?,
            },
            SetItem::Properties { variable, value, merge } => {
                let Some(v) = scope.get(&variable.name) else {
                    return Err(self.undefined(&variable.name, variable.span));
                };
                let slot = v.slot;
                SetOp::Properties { slot, value: self.expr(value, scope, &mut AggMode::Forbidden)?, merge: *merge }
            }
            SetItem::Labels { variable, labels, dynamic } => {
                let Some(v) = scope.get(&variable.name) else {
                    return Err(self.undefined(&variable.name, variable.span));
                };
                self.check_labelled(v.kind, variable.span)?;
                let slot = v.slot;
                let dynamic = self.dynamic_labels(dynamic, scope)?;
                SetOp::Labels { slot, labels: labels.iter().map(|l| Arc::from(l.name.as_str())).collect(), dynamic }
            }
        })
    }

    /// Labels are set on and removed from nodes only: a variable known to hold something else is refused before
    /// the statement runs (and changes anything), as Neo4j refuses it.
    fn check_labelled(&self, kind: VarKind, span: crate::lexer::Span) -> Result<()> {
        let held = match kind {
            VarKind::Rel => "Relationship",
            VarKind::RelList => "List<Relationship>",
            VarKind::Path => "Path",
            VarKind::Map => "Map",
            VarKind::Scalar => "a value that is not a node",
            VarKind::Node | VarKind::Unknown => return Ok(()),
        };
        let message = format!("Type mismatch: expected Node but was {held}");
        Err(self.error(span, CypherError::syntax("InvalidArgumentType", message)))
    }

    /// A computed label or type that CREATE or MERGE writes: `$any(...)` names no labels to write.
    fn written_computed(&mut self, computed: &Computed, scope: &Scope) -> Result<CExpr> {
        if computed.any {
            let message = "$any(...) picks among labels or types to match; CREATE and MERGE need $(...) or $all(...)";
            return Err(self.error(computed.expr.span, CypherError::syntax("InvalidDynamicLabel", message)));
        }
        self.expr(&computed.expr, scope, &mut AggMode::Forbidden)
    }

    fn dynamic_labels(&mut self, labels: &[Expr], scope: &Scope) -> Result<Vec<CExpr>> {
        labels.iter().map(|e| self.expr(e, scope, &mut AggMode::Forbidden)).collect()
    }

    fn property_key(&mut self, key: &PropertyKey, scope: &Scope) -> Result<PropKey> {
        Ok(match key {
            PropertyKey::Name(name) => PropKey::Name(Arc::from(name.name.as_str())),
            PropertyKey::Dynamic(key) => PropKey::Dynamic(self.expr(key, scope, &mut AggMode::Forbidden)?),
        })
    }

    pub(super) fn remove_item(&mut self, item: &RemoveItem, scope: &Scope) -> Result<SetOp> {
        Ok(match item {
            RemoveItem::Property { target, key } => SetOp::RemoveProperty {
                target: self.expr(target, scope, &mut AggMode::Forbidden)?,
                key: self.property_key(key, scope)?,
            },
            RemoveItem::Labels { variable, labels, dynamic } => {
                let Some(v) = scope.get(&variable.name) else {
                    return Err(self.undefined(&variable.name, variable.span));
                };
                self.check_labelled(v.kind, variable.span)?;
                SetOp::RemoveLabels {
                    slot: v.slot,
                    labels: labels.iter().map(|l| Arc::from(l.name.as_str())).collect(),
                    dynamic: self.dynamic_labels(dynamic, scope)?,
                }
            }
        })
    }
}
