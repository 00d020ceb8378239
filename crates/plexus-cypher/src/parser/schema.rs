//! Schema commands: CREATE/DROP INDEX, CREATE/DROP CONSTRAINT ... IS UNIQUE (SHOW is in `show.rs`).

use super::Parser;
use crate::ast::*;
use crate::error::Result;
use crate::lexer::Tok;

/// Index kinds created as range indexes.
const INDEX_KINDS: [&str; 4] = ["RANGE", "TEXT", "POINT", "BTREE"];
/// Index kinds refused with a clear error rather than a syntax error.
const UNSUPPORTED_INDEXES: [&str; 3] = ["FULLTEXT", "VECTOR", "LOOKUP"];

impl Parser<'_> {
    pub(super) fn schema_command(&mut self) -> Result<Option<SchemaCommand>> {
        let create = self.at_kw("CREATE");
        let drop = self.at_kw("DROP");
        if !(create || drop) {
            return Ok(None);
        }
        // A TEXT or POINT index is made a range index: it answers the same predicates (equality, and ranges
        // and prefixes of what it holds), by the same plans.
        let kind = INDEX_KINDS.iter().find(|k| self.at_kw_ahead(1, k) && self.at_kw_ahead(2, "INDEX")).copied();
        let is_index = self.at_kw_ahead(1, "INDEX") || kind.is_some();
        let is_constraint = self.at_kw_ahead(1, "CONSTRAINT");
        if !(is_index || is_constraint) {
            if let Some(kind) =
                UNSUPPORTED_INDEXES.iter().find(|k| self.at_kw_ahead(1, k) && self.at_kw_ahead(2, "INDEX"))
            {
                self.bump();
                return Err(self.error_at(
                    self.span(),
                    "UnsupportedIndex",
                    format!("{kind} indexes are not supported; range indexes (CREATE INDEX) are"),
                ));
            }
            return Ok(None);
        }
        self.bump();
        if kind.is_some() {
            self.bump();
        }
        self.bump();
        match (create, is_index) {
            (true, true) => self.create_index(kind.filter(|k| matches!(*k, "TEXT" | "POINT"))).map(Some),
            (false, true) => self.drop_index().map(Some),
            (true, false) => self.create_constraint().map(Some),
            (false, false) => self.drop_constraint().map(Some),
        }
    }

    /// An optional name before `IF NOT EXISTS` / `FOR` / `ON`.
    fn schema_name(&mut self) -> Result<Option<String>> {
        if self.at_ident() && !self.at_kw("IF") && !self.at_kw("FOR") && !self.at_kw("ON") {
            return Ok(Some(self.ident("a name")?.name));
        }
        Ok(None)
    }

    fn if_not_exists(&mut self) -> Result<bool> {
        if self.eat_kw("IF") {
            self.expect_kw("NOT")?;
            self.expect_kw("EXISTS")?;
            return Ok(true);
        }
        Ok(false)
    }

    /// `OPTIONS {...}` after an index or constraint: accepted and ignored (the provider and configuration
    /// Neo4j takes there have one choice here), as long as it is a map.
    fn schema_options(&mut self) -> Result<()> {
        if self.eat_kw("OPTIONS") {
            let options = self.expr()?;
            if !matches!(options.kind, ExprKind::Map(_) | ExprKind::Parameter(_)) {
                return Err(self.error_at(options.span, "InvalidArgumentType", "OPTIONS takes a map"));
            }
        }
        Ok(())
    }

    /// `(n:Label)` returning the variable and label.
    fn schema_node(&mut self) -> Result<(String, String)> {
        self.expect(&Tok::LParen, "'('")?;
        let var = self.ident("a variable")?.name;
        self.expect(&Tok::Colon, "':'")?;
        let label = self.ident("a label")?.name;
        self.expect(&Tok::RParen, "')'")?;
        Ok((var, label))
    }

    /// `n.p` checked against the pattern's variable.
    fn schema_property(&mut self, var: &str) -> Result<String> {
        let v = self.ident("a variable")?;
        if v.name != var {
            return Err(self.error_at(v.span, "UndefinedVariable", format!("variable `{}` not defined", v.name)));
        }
        self.expect(&Tok::Dot, "'.'")?;
        Ok(self.ident("a property name")?.name)
    }

    fn create_index(&mut self, asked: Option<&'static str>) -> Result<SchemaCommand> {
        if self.eat_kw("ON") {
            // Old syntax: CREATE INDEX ON :Label(prop, ...)
            self.expect(&Tok::Colon, "':'")?;
            let label = self.ident("a label")?.name;
            let at = self.span();
            let properties = self.property_name_list()?;
            self.check_composite(&properties, false, at)?;
            let (name, relationships, if_not_exists) = (None, false, false);
            return Ok(SchemaCommand::CreateIndex { name, label, relationships, properties, if_not_exists, asked });
        }
        let name = self.schema_name()?;
        let if_not_exists = self.if_not_exists()?;
        self.expect_kw("FOR")?;
        let relationships = matches!(self.peek_at(1), Tok::RParen);
        let (var, label) = if relationships { self.schema_relationship()? } else { self.schema_node()? };
        self.expect_kw("ON")?;
        self.expect(&Tok::LParen, "'('")?;
        let at = self.span();
        let mut properties = vec![self.schema_property(&var)?];
        while self.eat(&Tok::Comma) {
            properties.push(self.schema_property(&var)?);
        }
        self.check_composite(&properties, relationships, at)?;
        self.expect(&Tok::RParen, "')'")?;
        self.schema_options()?;
        Ok(SchemaCommand::CreateIndex { name, label, relationships, properties, if_not_exists, asked })
    }

    /// Several properties make a composite index, of distinct properties of nodes.
    fn check_composite(&self, properties: &[String], relationships: bool, at: crate::lexer::Span) -> Result<()> {
        if properties.len() < 2 {
            return Ok(());
        }
        let why = if relationships {
            "composite indexes cover node properties; index each relationship property on its own"
        } else if (1..properties.len()).any(|i| properties[..i].contains(&properties[i])) {
            "a composite index names each property once"
        } else {
            return Ok(());
        };
        let detail = if relationships { "UnsupportedIndex" } else { "RepeatedPropertyInCompositeSchema" };
        Err(crate::error::CypherError::new(
            crate::error::ErrorKind::SemanticError,
            crate::error::Phase::CompileTime,
            detail,
            why,
        )
        .at(crate::error::Position::locate(self.text, at.start)))
    }

    /// `()-[r:TYPE]-()`, in either direction or none, returning the variable and type.
    fn schema_relationship(&mut self) -> Result<(String, String)> {
        self.expect(&Tok::LParen, "'('")?;
        self.expect(&Tok::RParen, "')'")?;
        if !self.eat(&Tok::LeftArrow) {
            self.expect(&Tok::Minus, "'-'")?;
        }
        self.expect(&Tok::LBracket, "'['")?;
        let var = self.ident("a variable")?.name;
        self.expect(&Tok::Colon, "':'")?;
        let ty = self.ident("a relationship type")?.name;
        self.expect(&Tok::RBracket, "']'")?;
        if !self.eat(&Tok::Arrow) {
            self.expect(&Tok::Minus, "'-'")?;
        }
        self.expect(&Tok::LParen, "'('")?;
        self.expect(&Tok::RParen, "')'")?;
        Ok((var, ty))
    }

    fn property_name_list(&mut self) -> Result<Vec<String>> {
        self.expect(&Tok::LParen, "'('")?;
        let mut properties = vec![self.ident("a property name")?.name];
        while self.eat(&Tok::Comma) {
            properties.push(self.ident("a property name")?.name);
        }
        self.expect(&Tok::RParen, "')'")?;
        Ok(properties)
    }

    fn drop_index(&mut self) -> Result<SchemaCommand> {
        if self.eat_kw("ON") {
            self.expect(&Tok::Colon, "':'")?;
            let label = self.ident("a label")?.name;
            let properties = self.property_name_list()?;
            return Ok(SchemaCommand::DropIndex { name: None, label: Some(label), properties, if_exists: false });
        }
        let name = self.ident("an index name")?.name;
        let if_exists = if self.eat_kw("IF") {
            self.expect_kw("EXISTS")?;
            true
        } else {
            false
        };
        Ok(SchemaCommand::DropIndex { name: Some(name), label: None, properties: vec![], if_exists })
    }

    /// `CREATE CONSTRAINT [name] [IF NOT EXISTS] FOR (n:L) REQUIRE n.p IS UNIQUE` or the older
    /// `CREATE CONSTRAINT ON (n:L) ASSERT n.p IS UNIQUE`; `REQUIRE (n.a, n.b)` for several properties unique
    /// together, `FOR ()-[r:TYPE]-() REQUIRE r.p` for a relationship property.
    fn create_constraint(&mut self) -> Result<SchemaCommand> {
        let name = self.schema_name()?;
        let if_not_exists = self.if_not_exists()?;
        if !(self.eat_kw("FOR") || self.eat_kw("ON")) {
            return Err(self.unexpected("FOR"));
        }
        let relationships = matches!(self.peek_at(1), Tok::RParen);
        let (var, label) = if relationships { self.schema_relationship()? } else { self.schema_node()? };
        if !(self.eat_kw("REQUIRE") || self.eat_kw("ASSERT")) {
            return Err(self.unexpected("REQUIRE"));
        }
        let at = self.span();
        let properties = self.constraint_properties(&var)?;
        if properties.len() > 1 {
            if (1..properties.len()).any(|i| properties[..i].contains(&properties[i])) {
                return Err(self.error_at(
                    at,
                    "RepeatedPropertyInCompositeSchema",
                    "a constraint names each property once",
                ));
            }
            if relationships {
                let why =
                    "a constraint on relationships covers one property: several unique together are not supported";
                return Err(self.error_at(at, "UnsupportedConstraint", why));
            }
        }
        self.expect_kw("IS")?;
        let span = self.span();
        let on_nodes = self.eat_kw("NODE");
        let on_relationships = !on_nodes && (self.eat_kw("RELATIONSHIP") || self.eat_kw("REL"));
        if on_nodes && relationships || on_relationships && !relationships {
            let what = if relationships {
                "a relationship pattern takes IS [REL[ATIONSHIP]] UNIQUE"
            } else {
                "a node pattern takes IS [NODE] UNIQUE"
            };
            return Err(self.error_at(span, "UnexpectedSyntax", what));
        }
        if !self.eat_kw("UNIQUE") {
            if self.at_kw("KEY") {
                // A key also requires the property to exist, which nothing here would enforce: taking it as a
                // uniqueness constraint alone would drop that guarantee without a word (Neo4j Community refuses
                // it too).
                return Err(self.error_at(
                    span,
                    "UnsupportedConstraint",
                    "key constraints (unique and required) are not supported; IS UNIQUE gives the uniqueness part",
                ));
            }
            return Err(self.error_at(
                span,
                "UnexpectedSyntax",
                "only uniqueness constraints (IS UNIQUE) are supported",
            ));
        }
        self.schema_options()?;
        Ok(SchemaCommand::CreateUnique { name, label, relationships, properties, if_not_exists })
    }

    /// `v.p` or `(v.p, v.q, ...)` after REQUIRE or ASSERT.
    fn constraint_properties(&mut self, var: &str) -> Result<Vec<String>> {
        if !self.eat(&Tok::LParen) {
            return Ok(vec![self.schema_property(var)?]);
        }
        let mut properties = vec![self.schema_property(var)?];
        while self.eat(&Tok::Comma) {
            properties.push(self.schema_property(var)?);
        }
        self.expect(&Tok::RParen, "')'")?;
        Ok(properties)
    }

    fn drop_constraint(&mut self) -> Result<SchemaCommand> {
        if self.eat_kw("ON") {
            let (var, label) = self.schema_node()?;
            self.expect_kw("ASSERT")?;
            let properties = self.constraint_properties(&var)?;
            self.expect_kw("IS")?;
            self.expect_kw("UNIQUE")?;
            return Ok(SchemaCommand::DropConstraint { name: None, label: Some(label), properties, if_exists: false });
        }
        let name = self.ident("a constraint name")?.name;
        let if_exists = if self.eat_kw("IF") {
            self.expect_kw("EXISTS")?;
            true
        } else {
            false
        };
        Ok(SchemaCommand::DropConstraint { name: Some(name), label: None, properties: vec![], if_exists })
    }
}
