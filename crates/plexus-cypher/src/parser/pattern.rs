//! Patterns: `p = (a:L {k: v})-[r:T*1..3]->(b)`, shortestPath, and the relationship-arrow forms.

use super::Parser;
use crate::ast::*;
use crate::error::Result;
use crate::lexer::Tok;

/// Failed attempts to read a pattern predicate in an expression after which no more are tried (see
/// [`Parser::try_relationship_pattern`]); far more than any query written by hand makes.
const MAX_FAILED_PATTERNS: u32 = 4096;

impl Parser<'_> {
    pub(super) fn pattern_list(&mut self) -> Result<Vec<PatternPart>> {
        let mut parts = vec![self.pattern_part()?];
        while self.eat(&Tok::Comma) {
            parts.push(self.pattern_part()?);
        }
        Ok(parts)
    }

    /// The patterns of a MATCH, where quantified path patterns may appear, and its WHERE, which includes the
    /// conditions written inside the patterns.
    pub(super) fn match_patterns_where(&mut self) -> Result<(Vec<PatternPart>, Option<Expr>)> {
        let outer = std::mem::replace(&mut self.quantified_paths, true);
        let patterns = self.with_inline_predicates(Self::pattern_list);
        self.quantified_paths = outer;
        let (patterns, inline) = patterns?;
        let predicate = if self.eat_kw("WHERE") { Some(self.expr()?) } else { None };
        Ok((patterns, conjunction(inline, predicate)))
    }

    /// Runs `parse` where node and relationship patterns may have a WHERE, and returns those conditions joined.
    fn with_inline_predicates<T>(&mut self, parse: impl FnOnce(&mut Self) -> Result<T>) -> Result<(T, Option<Expr>)> {
        let outer = self.inline_predicates.replace(Vec::new());
        let parsed = parse(self);
        let inline = std::mem::replace(&mut self.inline_predicates, outer).unwrap_or_default();
        Ok((parsed?, inline.into_iter().reduce(and)))
    }

    /// `WHERE condition` after a node's or relationship's properties, where it may be written.
    fn inline_predicate(&mut self) -> Result<()> {
        if self.inline_predicates.is_some() && self.eat_kw("WHERE") {
            let condition = self.expr()?;
            self.inline_predicates.as_mut().expect("checked").push(condition);
        }
        Ok(())
    }

    pub(super) fn pattern_part(&mut self) -> Result<PatternPart> {
        let start = self.span();
        let variable = if self.at_ident() && matches!(self.peek_at(1), Tok::Eq) {
            let v = self.ident("a path variable")?;
            self.bump();
            Some(v)
        } else {
            None
        };
        let selector = self.path_selector()?;
        if let Some((element, predicate)) = self.parenthesized_path()? {
            let kind = selector.unwrap_or(PathKind::Normal);
            return Ok(PatternPart { variable, kind, element, predicate, span: start.to(self.prev_span()) });
        }
        if let Some(kind) = selector {
            let element = self.pattern_element()?;
            return Ok(PatternPart { variable, kind, element, predicate: None, span: start.to(self.prev_span()) });
        }
        let kind = if self.at_kw("shortestPath") && matches!(self.peek_at(1), Tok::LParen) {
            PathKind::Shortest
        } else if self.at_kw("allShortestPaths") && matches!(self.peek_at(1), Tok::LParen) {
            PathKind::AllShortest
        } else {
            PathKind::Normal
        };
        let element = if kind == PathKind::Normal {
            self.pattern_element()?
        } else {
            self.bump();
            self.expect(&Tok::LParen, "'('")?;
            let e = self.pattern_element()?;
            self.expect(&Tok::RParen, "')' closing the shortest path pattern")?;
            e
        };
        Ok(PatternPart { variable, kind, element, predicate: None, span: start.to(self.prev_span()) })
    }

    /// A whole path pattern in parentheses with a WHERE, `((a)-[r]-+(b) WHERE ...)`, not followed by a
    /// quantifier (that is a quantified path pattern); `None` with the cursor unmoved otherwise. Without a WHERE
    /// the parentheses change nothing and are read as before.
    fn parenthesized_path(&mut self) -> Result<Option<(PatternElement, Option<Expr>)>> {
        if !(self.at(&Tok::LParen) && self.peek_at(1) == &Tok::LParen) {
            return Ok(None);
        }
        let saved = self.pos;
        self.bump();
        let inner = self.nested(|p| {
            let (element, inline) = p.with_inline_predicates(Self::pattern_element)?;
            if !p.eat_kw("WHERE") {
                return Ok(None);
            }
            let predicate = p.expr()?;
            Ok(Some((element, conjunction(inline, Some(predicate)))))
        });
        match inner {
            Ok(Some(found)) if self.at(&Tok::RParen) => {
                self.bump();
                if matches!(self.peek(), Tok::LBrace | Tok::Plus | Tok::Star) {
                    self.pos = saved;
                    return Ok(None);
                }
                Ok(Some(found))
            }
            _ => {
                self.pos = saved;
                Ok(None)
            }
        }
    }

    /// A path selector of GQL and Neo4j 5 before a path pattern: `ANY SHORTEST`, `SHORTEST k` (the k shortest
    /// paths; one is `shortestPath`), `ALL SHORTEST`, `SHORTEST k GROUP(S)` (every path of the k shortest lengths;
    /// one is `allShortestPaths`), `ANY [k]` (k paths: shortest ones serve) and `ALL [PATHS]` (every path, as
    /// without a selector).
    fn path_selector(&mut self) -> Result<Option<PathKind>> {
        let selector_start = self.at_kw("ANY") || self.at_kw("ALL") || self.at_kw("SHORTEST");
        let next_is_selector = matches!(self.peek_at(1), Tok::Int(_) | Tok::LParen)
            || ["SHORTEST", "PATH", "PATHS"].iter().any(|w| self.at_kw_ahead(1, w));
        if !selector_start || !next_is_selector {
            return Ok(None);
        }
        let start = self.span();
        let first = self.ident("a path selector")?.name.to_ascii_uppercase();
        let shortest = first == "SHORTEST" || self.eat_kw("SHORTEST");
        let count = match self.peek().clone() {
            Tok::Int(n) => {
                self.bump();
                Some(n)
            }
            _ => None,
        };
        let _ = self.eat_kw("PATH") || self.eat_kw("PATHS");
        let groups = self.eat_kw("GROUP") || self.eat_kw("GROUPS");
        if count.is_some_and(|n| n < 1) {
            return Err(self.error_at(start, "InvalidArgument", "a path selector counts at least one path (or group)"));
        }
        let count = count.map_or(1, |n| n as u64);
        Ok(Some(match (first.as_str(), shortest, groups) {
            ("ALL", true, _) => PathKind::ShortestGroups(1),
            (_, true, true) => PathKind::ShortestGroups(count),
            (_, true, false) | ("ANY", false, _) => PathKind::ShortestPaths(count),
            _ => PathKind::Normal,
        }))
    }

    pub(super) fn pattern_element(&mut self) -> Result<PatternElement> {
        let mut chain = Vec::new();
        let mut hops = 0;
        let at_group = |p: &Self| matches!(p.peek(), Tok::LParen) && matches!(p.peek_at(1), Tok::LParen);
        let start = if at_group(self) {
            match self.quantified_hop()? {
                // A pattern may start with a quantified path pattern: its first node is then left unnamed.
                Some(rel) => {
                    let start = anonymous_node(rel.span);
                    self.chain(&mut hops)?;
                    let node = self.node_after_quantified(&rel);
                    chain.push((rel, node?));
                    start
                }
                None => {
                    // Extra parentheses around a whole element are allowed: `((a)-->(b))`.
                    self.bump();
                    let e = self.nested(Self::pattern_element)?;
                    self.expect(&Tok::RParen, "')'")?;
                    return Ok(e);
                }
            }
        } else {
            self.node_pattern()?
        };
        loop {
            if matches!(self.peek(), Tok::Minus | Tok::LeftArrow | Tok::Lt) {
                self.chain(&mut hops)?;
                let rel = self.rel_pattern()?;
                let node = self.node_pattern()?;
                chain.push((rel, node));
            } else if self.quantified_paths && at_group(self) {
                let Some(rel) = self.quantified_hop()? else {
                    return Err(self.unexpected("a quantifier ('{m,n}', '+' or '*') after the parenthesised path"));
                };
                self.chain(&mut hops)?;
                let node = self.node_after_quantified(&rel)?;
                chain.push((rel, node));
            } else {
                break;
            }
        }
        Ok(PatternElement { start, chain })
    }

    /// A quantified path pattern, `((x)-[r:R]->(y) WHERE ...){m,n}`, as the relationship it repeats; `None`
    /// (with the cursor back where it was) when the parentheses are not followed by a quantifier.
    fn quantified_hop(&mut self) -> Result<Option<RelPattern>> {
        if !self.quantified_paths {
            return Ok(None);
        }
        let saved = self.pos;
        let start = self.span();
        self.bump();
        // Quantified path patterns do not nest, and their WHERE is an ordinary expression.
        self.quantified_paths = false;
        let inner = self.nested(|p| {
            let (element, inline) = p.with_inline_predicates(Self::pattern_element)?;
            let predicate = if p.eat_kw("WHERE") { Some(p.expr()?) } else { None };
            Ok((element, conjunction(inline, predicate)))
        });
        self.quantified_paths = true;
        let (element, predicate) = match inner {
            Ok(inner) if self.at(&Tok::RParen) => inner,
            // Not a path in parentheses: whatever it is, the caller reads it again.
            _ => {
                self.pos = saved;
                return Ok(None);
            }
        };
        self.bump();
        let Some(quantifier) = self.quantifier()? else {
            if predicate.is_some() {
                return Err(self.unexpected("a quantifier ('{m,n}', '+' or '*') after the path with its WHERE"));
            }
            self.pos = saved;
            return Ok(None);
        };
        let span = start.to(self.prev_span());
        let PatternElement { start: from, mut chain } = element;
        let plain = |r: &RelPattern| r.length.is_none() && r.hop.is_none();
        if let Some((rel, _)) = chain.iter().find(|(r, _)| !plain(r)) {
            return Err(self.error_at(
                rel.span,
                "UnsupportedQuantifiedPath",
                "a quantified path pattern repeats fixed relationships: no variable length or quantifier inside it",
            ));
        }
        if chain.len() > 1 {
            if let Some(rel) = chain.iter().map(|(r, _)| r).find(|r| r.dynamic_type.is_some()) {
                return Err(self.error_at(
                    rel.span,
                    "UnsupportedFeature",
                    "a computed relationship type is supported on a single relationship, not a path",
                ));
            }
            let to = chain.last().expect("two or more").1.clone();
            return Ok(Some(RelPattern {
                variable: None,
                types: Vec::new(),
                type_expr: None,
                dynamic_type: None,
                direction: RelDirection::Both,
                length: Some(quantifier),
                properties: None,
                hop: Some(Box::new(HopPattern { from, to, predicate, steps: chain })),
                span,
            }));
        }
        if chain.is_empty() {
            return Err(self.error_at(
                span,
                "UnsupportedQuantifiedPath",
                "a quantified path pattern needs at least one relationship, `((a)-[r]->(b)){m,n}`",
            ));
        }
        let (rel, to) = chain.pop().expect("one hop");
        Ok(Some(RelPattern {
            length: Some(quantifier),
            hop: Some(Box::new(HopPattern { from, to, predicate, steps: Vec::new() })),
            span,
            ..rel
        }))
    }

    /// The node pattern after a quantified path pattern, or an unnamed node when none is written there (at the
    /// end of the pattern, or before another quantified path pattern). A relationship cannot follow directly.
    fn node_after_quantified(&mut self, rel: &RelPattern) -> Result<NodePattern> {
        if matches!(self.peek(), Tok::LParen) && !matches!(self.peek_at(1), Tok::LParen) {
            self.node_pattern()
        } else if matches!(self.peek(), Tok::Minus | Tok::LeftArrow | Tok::Lt) {
            Err(self.unexpected("a node pattern after the quantified path pattern"))
        } else {
            Ok(anonymous_node(rel.span))
        }
    }

    /// Parses a pattern element with at least one relationship and the conditions written inside it, or
    /// restores the cursor and returns `None`.
    ///
    /// Only tried where a relationship follows the parenthesised group at the cursor (or, for extra parentheses,
    /// the first group inside it), and only until many attempts have failed: each failed attempt is parsed again
    /// as an expression, so unchecked, nested parentheses made the work grow exponentially with their depth.
    pub(super) fn try_relationship_pattern(&mut self) -> Option<(PatternElement, Option<Expr>)> {
        if self.failed_patterns >= MAX_FAILED_PATTERNS || !self.relationship_after_group(self.pos) {
            return None;
        }
        let saved = self.pos;
        let outer = std::mem::replace(&mut self.quantified_paths, false);
        let element = self.with_inline_predicates(Self::pattern_element);
        self.quantified_paths = outer;
        match element {
            Ok((e, inline)) if !e.chain.is_empty() => Some((e, inline)),
            _ => {
                self.failed_patterns += 1;
                self.pos = saved;
                None
            }
        }
    }

    /// Whether the parenthesised group starting at token `at` is followed by a relationship (`-` or `<`), or its
    /// first token opens a group that is (`((a)-->(b))`).
    fn relationship_after_group(&self, mut at: usize) -> bool {
        while self.tokens.get(at).is_some_and(|t| t.tok == Tok::LParen) {
            let Some(end) = self.closing_paren(at) else { return false };
            if matches!(self.tokens.get(end + 1).map(|t| &t.tok), Some(Tok::Minus | Tok::LeftArrow | Tok::Lt)) {
                return true;
            }
            at += 1;
        }
        false
    }

    pub(super) fn node_pattern(&mut self) -> Result<NodePattern> {
        let start = self.expect(&Tok::LParen, "'(' starting a node pattern")?;
        let variable = if self.at_ident() { Some(self.ident("a variable")?) } else { None };
        let (mut labels, mut label_expr, mut dynamic_labels) = (Vec::new(), None, Vec::new());
        // `:A:B`, any label expression, and labels computed per row, `:$(expr)`, joined by `:` or `&`.
        let mut first = true;
        while if first { self.eat(&Tok::Colon) } else { self.eat(&Tok::Colon) || self.eat(&Tok::Amp) } {
            first = false;
            if let Some(any) = self.computed_at(0) {
                dynamic_labels.push(self.computed(any, "')' closing the computed label")?);
                continue;
            }
            let test = self.label_expression(true)?;
            match (test.conjunction(), &label_expr) {
                (Some(names), _) => labels.extend(names),
                (None, None) => label_expr = Some(test),
                (None, Some(_)) => return Err(self.unexpected("one label expression per node")),
            }
        }
        if label_expr.is_some() && !labels.is_empty() {
            return Err(self.unexpected("one label expression per node"));
        }
        let properties = self.pattern_properties()?;
        self.inline_predicate()?;
        let end = self.expect(&Tok::RParen, "')' closing the node pattern")?;
        Ok(NodePattern { variable, labels, label_expr, dynamic_labels, properties, span: start.to(end) })
    }

    /// Whether the token `ahead` of the current one starts computed labels or a computed type: `$(`, `$all(`
    /// (both every label named) or `$any(` (at least one); with which.
    fn computed_at(&self, ahead: usize) -> Option<bool> {
        if !matches!(self.peek_at(ahead + 1), Tok::LParen) {
            return None;
        }
        match self.peek_at(ahead) {
            Tok::Dollar => Some(false),
            Tok::Param(name) if name.eq_ignore_ascii_case("all") => Some(false),
            Tok::Param(name) if name.eq_ignore_ascii_case("any") => Some(true),
            _ => None,
        }
    }

    /// `$(expr)`, `$all(expr)` or `$any(expr)`, at its first token ([`Self::computed_at`] said which).
    fn computed(&mut self, any: bool, closing: &str) -> Result<Computed> {
        self.bump();
        self.bump();
        let expr = self.expr()?;
        self.expect(&Tok::RParen, closing)?;
        Ok(Computed { expr, any })
    }

    /// A label expression after its ':': alternatives (`|`, also `|:` as relationship types were once written)
    /// of conjunctions (`&`, or `:` as in `:A:B`) of negations (`!`) of a name, `%` (any) or a parenthesised
    /// expression. `or_allowed` is false where a `|` ends the surrounding expression.
    pub(super) fn label_expression(&mut self, or_allowed: bool) -> Result<LabelExpr> {
        let mut items = vec![self.label_conjunction()?];
        while or_allowed && self.eat(&Tok::Pipe) {
            self.eat(&Tok::Colon);
            items.push(self.label_conjunction()?);
        }
        Ok(if items.len() == 1 { items.pop().expect("one") } else { LabelExpr::AnyOf(items) })
    }

    fn label_conjunction(&mut self) -> Result<LabelExpr> {
        let mut items = vec![self.label_factor()?];
        // A computed label (`:$(expr)`) ends the expression: the node pattern reads it.
        while !(matches!(self.peek(), Tok::Colon | Tok::Amp) && self.computed_at(1).is_some())
            && (self.eat(&Tok::Amp) || self.eat(&Tok::Colon))
        {
            items.push(self.label_factor()?);
        }
        Ok(if items.len() == 1 { items.pop().expect("one") } else { LabelExpr::All(items) })
    }

    fn label_factor(&mut self) -> Result<LabelExpr> {
        if self.eat(&Tok::Bang) {
            return Ok(LabelExpr::Not(Box::new(self.label_factor()?)));
        }
        if self.eat(&Tok::Percent) {
            return Ok(LabelExpr::Wildcard);
        }
        if self.eat(&Tok::LParen) {
            let inner = self.label_expression(true)?;
            self.expect(&Tok::RParen, "')' closing the label expression")?;
            return Ok(inner);
        }
        Ok(LabelExpr::Name(self.token_name("a label name")?))
    }

    fn pattern_properties(&mut self) -> Result<Option<Expr>> {
        match self.peek() {
            Tok::LBrace => Ok(Some(self.map_literal()?)),
            Tok::Param(name) => {
                let name = name.clone();
                let span = self.bump().span;
                Ok(Some(Expr::new(ExprKind::Parameter(name), span)))
            }
            _ => Ok(None),
        }
    }

    fn rel_pattern(&mut self) -> Result<RelPattern> {
        let start = self.span();
        let left_arrow = match self.bump().tok {
            Tok::LeftArrow => true,
            Tok::Lt => {
                self.expect(&Tok::Minus, "'-' after '<'")?;
                true
            }
            _ => false,
        };
        let (mut variable, mut types, mut type_expr, mut length, mut properties) = (None, Vec::new(), None, None, None);
        let mut dynamic_type = None;
        let conditions_before = self.inline_predicates.as_ref().map_or(0, Vec::len);
        if self.eat(&Tok::LBracket) {
            if self.at_ident() {
                variable = Some(self.ident("a variable")?);
            }
            if self.eat(&Tok::Colon) {
                if let Some(any) = self.computed_at(0) {
                    dynamic_type = Some(self.computed(any, "')' closing the computed type")?);
                } else {
                    let test = self.label_expression(true)?;
                    match test.disjunction() {
                        Some(names) => types = names,
                        None => type_expr = Some(test),
                    }
                }
            }
            if self.eat(&Tok::Star) {
                length = Some(self.range()?);
            }
            properties = self.pattern_properties()?;
            if length.is_none() {
                self.inline_predicate()?;
            }
            self.expect(&Tok::RBracket, "']' closing the relationship pattern")?;
        }
        let right_arrow = match self.peek() {
            Tok::Arrow => {
                self.bump();
                true
            }
            Tok::Minus => {
                self.bump();
                self.eat(&Tok::Gt)
            }
            _ => return Err(self.unexpected("'-' or '->' closing the relationship pattern")),
        };
        let direction = match (left_arrow, right_arrow) {
            (true, false) => RelDirection::In,
            (false, true) => RelDirection::Out,
            _ => RelDirection::Both,
        };
        // A quantified relationship (GQL, Neo4j 5): `-[:R]->{1,3}`, `{2}`, `{,3}`, `{1,}`, `+`, `*`: a path of
        // that many such relationships, which is what `*1..3` inside the brackets says.
        if let Some(quantifier) = self.quantifier()? {
            if length.is_some() {
                return Err(self.unexpected("a relationship with one length, not '*' and a quantifier"));
            }
            length = Some(quantifier);
            // `-[r WHERE c]->{m,n}` is `(()-[r]->() WHERE c){m,n}`: the condition holds for every repetition.
            let own = self.inline_predicates.as_mut().map(|all| all.split_off(conditions_before)).unwrap_or_default();
            if let Some(predicate) = own.into_iter().reduce(and) {
                let span = start.to(self.prev_span());
                let (from, to) = (anonymous_node(span), anonymous_node(span));
                let hop = Some(Box::new(HopPattern { from, to, predicate: Some(predicate), steps: Vec::new() }));
                return Ok(RelPattern {
                    variable,
                    types,
                    type_expr,
                    dynamic_type,
                    direction,
                    length,
                    properties,
                    hop,
                    span,
                });
            }
        }
        let span = start.to(self.prev_span());
        Ok(RelPattern { variable, types, type_expr, dynamic_type, direction, length, properties, hop: None, span })
    }

    /// `{m,n}`, `{n}`, `{,n}`, `{m,}`, `+` or `*` after a relationship pattern, as (min, max).
    fn quantifier(&mut self) -> Result<Option<(Option<u64>, Option<u64>)>> {
        if self.eat(&Tok::Plus) {
            return Ok(Some((Some(1), None)));
        }
        if self.eat(&Tok::Star) {
            return Ok(Some((Some(0), None)));
        }
        let start = self.span();
        if !self.eat(&Tok::LBrace) {
            return Ok(None);
        }
        let bound = |p: &mut Self| -> Result<Option<u64>> {
            match p.peek().clone() {
                Tok::Int(v) if v >= 0 => {
                    p.bump();
                    Ok(Some(v as u64))
                }
                Tok::RBrace | Tok::Comma => Ok(None),
                _ => Err(p.unexpected("a non-negative integer in the quantifier")),
            }
        };
        let min = bound(self)?;
        let ranged = self.eat(&Tok::Comma);
        let max = if ranged { bound(self)? } else { min };
        if min.is_none() && !ranged {
            return Err(self.unexpected("a bound in the quantifier"));
        }
        let end = self.expect(&Tok::RBrace, "'}' closing the quantifier")?;
        let span = start.to(end);
        let min = min.unwrap_or(0);
        if max == Some(0) {
            return Err(self.error_at(span, "InvalidQuantifier", "a quantifier must not be limited by 0"));
        }
        if let Some(max) = max.filter(|max| min > *max) {
            return Err(self.error_at(
                span,
                "InvalidQuantifier",
                format!("a quantifier's lower bound ({min}) must not exceed its upper bound ({max})"),
            ));
        }
        Ok(Some((Some(min), max)))
    }

    /// After `*`: nothing, `n`, `n..`, `..m`, `n..m`.
    fn range(&mut self) -> Result<(Option<u64>, Option<u64>)> {
        let bound = |p: &mut Self| -> Result<Option<u64>> {
            match p.peek().clone() {
                Tok::Int(v) if v >= 0 => {
                    p.bump();
                    Ok(Some(v as u64))
                }
                Tok::Int(_) | Tok::BigInt(_) | Tok::Float(_) => Err(p.unexpected("a non-negative integer bound")),
                // `[*..$k]` would otherwise read `$k` as the relationship's property map.
                Tok::Param(name) => Err(p.error_at(
                    p.span(),
                    "InvalidParameterUse",
                    format!(
                        "a variable-length relationship's bounds are integer literals: ${name} cannot stand for one"
                    ),
                )),
                _ => Ok(None),
            }
        };
        let min = bound(self)?;
        if self.eat(&Tok::DotDot) {
            let max = bound(self)?;
            Ok((min, max))
        } else {
            Ok((min, min))
        }
    }
}

/// A node pattern with no variable, labels or properties, standing where a pattern leaves a node unwritten.
fn anonymous_node(at: crate::lexer::Span) -> NodePattern {
    NodePattern {
        variable: None,
        labels: Vec::new(),
        label_expr: None,
        dynamic_labels: Vec::new(),
        properties: None,
        span: at,
    }
}

fn and(a: Expr, b: Expr) -> Expr {
    let span = a.span.to(b.span);
    Expr::new(ExprKind::Binary(BinaryOp::And, Box::new(a), Box::new(b)), span)
}

/// Both conditions, either or neither.
pub(super) fn conjunction(a: Option<Expr>, b: Option<Expr>) -> Option<Expr> {
    match (a, b) {
        (Some(a), Some(b)) => Some(and(a, b)),
        (a, b) => a.or(b),
    }
}
