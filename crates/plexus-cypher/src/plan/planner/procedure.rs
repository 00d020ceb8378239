//! The planner's CALL of built-in procedures: resolving the procedure, checking its arguments, and the YIELD
//! columns it binds.

use super::*;

impl Planner<'_> {
    pub(super) fn procedure(
        &mut self,
        input: PlanNode,
        call: &ProcedureCall,
        scope: &mut Scope,
        standalone: bool,
    ) -> Result<(PlanNode, Vec<String>)> {
        let Some(procedure) = Procedure::resolve(&call.name, self.procedures) else {
            return Err(self.error(
                call.span,
                CypherError::new(
                    crate::error::ErrorKind::ProcedureError,
                    crate::error::Phase::CompileTime,
                    "ProcedureNotFound",
                    format!("there is no procedure with the name `{}`", call.name),
                ),
            ));
        };
        self.calls_user_procedures |= matches!(procedure, Procedure::User(_));
        let inputs = procedure.inputs();
        let args = match &call.args {
            Some(a) => {
                let least = inputs.len() - procedure.optional_inputs();
                if a.len() < least || a.len() > inputs.len() {
                    let takes = if least == inputs.len() {
                        inputs.len().to_string()
                    } else {
                        format!("{least} to {}", inputs.len())
                    };
                    return Err(self.error(
                        call.span,
                        CypherError::syntax(
                            "InvalidNumberOfArguments",
                            format!("{} takes {takes} argument(s), got {}", call.name, a.len()),
                        ),
                    ));
                }
                for (x, (name, ty)) in a.iter().zip(&inputs) {
                    if let ExprKind::Literal(v) = &x.kind {
                        if !ty.accepts(v) {
                            return Err(self.error(
                                x.span,
                                CypherError::syntax("InvalidArgumentType", format!("argument `{name}` must be {ty:?}")),
                            ));
                        }
                    }
                }
                a.iter().map(|x| self.expr(x, scope, &mut AggMode::Forbidden)).collect::<Result<Vec<_>>>()?
            }
            // `CALL proc` without parentheses takes its arguments from the parameters of the same names.
            None if standalone => inputs[..inputs.len() - procedure.optional_inputs()]
                .iter()
                .map(|(name, _)| {
                    self.params.entry(name.clone()).or_insert(None);
                    CExpr::Param(Arc::from(name.as_str()))
                })
                .collect(),
            None if inputs.len() == procedure.optional_inputs() => vec![],
            None => {
                return Err(self.error(
                    call.span,
                    CypherError::syntax(
                        "InvalidArgumentPassingMode",
                        "a procedure called inside a query takes its arguments in parentheses",
                    ),
                ))
            }
        };
        let fields = procedure.fields();
        if call.yield_star && !standalone {
            return Err(self.error(
                call.span,
                CypherError::syntax("UnexpectedSyntax", "YIELD * is only allowed in a standalone procedure call"),
            ));
        }
        if call.yields.is_none() && !call.yield_star && !standalone && !fields.is_empty() {
            return Err(self.error(
                call.span,
                CypherError::syntax("UndefinedVariable", "a procedure call inside a query must YIELD its outputs"),
            ));
        }
        let items: Vec<(String, String)> = match &call.yields {
            Some(items) => items
                .iter()
                .map(|(f, a)| (f.name.clone(), a.as_ref().map_or(f.name.clone(), |a| a.name.clone())))
                .collect(),
            None => fields.iter().map(|f| (f.clone(), f.clone())).collect(),
        };
        let mut yields = Vec::new();
        let mut columns = Vec::new();
        for (field, alias) in items {
            let Some(index) = fields.iter().position(|f| *f == field) else {
                return Err(self.error(
                    call.span,
                    CypherError::syntax("UndefinedVariable", format!("unknown procedure output `{field}`")),
                ));
            };
            if scope.get(&alias).is_some() {
                return Err(self.error(
                    call.span,
                    CypherError::semantic("VariableAlreadyBound", format!("variable `{alias}` already declared")),
                ));
            }
            let slot = self.slot();
            scope.add(&alias, slot, VarKind::Unknown);
            yields.push((index, slot));
            columns.push((alias, slot));
        }
        if let Some(predicate) = &call.predicate {
            self.check_predicate(predicate)?;
        }
        let predicate = call.predicate.as_ref().map(|p| self.expr(p, scope, &mut AggMode::Forbidden)).transpose()?;
        let (predicate, optional) = if call.optional { (None, Some(predicate)) } else { (predicate, None) };
        let mut plan = PlanNode::Call { input: Box::new(input), procedure, args, yields, optional };
        if let Some(predicate) = predicate {
            plan = PlanNode::Filter { input: Box::new(plan), predicate };
        }
        if standalone {
            let names = columns.iter().map(|(n, _)| n.clone()).collect();
            let slots = columns.iter().map(|(_, s)| *s).collect();
            return Ok((PlanNode::Produce { input: Box::new(plan), columns: slots }, names));
        }
        Ok((plan, vec![]))
    }
}
