//! Schema commands: CREATE/DROP INDEX, CREATE/DROP CONSTRAINT ... IS UNIQUE (SHOW is in `show.rs`).

use super::Parser;
use crate::ast::*;
use crate::error::Result;
use crate::lexer::Tok;

impl Parser<'_> {
    pub(super) fn schema_command(&mut self) -> Result<Option<SchemaCommand>> {
        let create = self.at_kw("CREATE");
        let drop = self.at_kw("DROP");
        if !(create || drop) {
            return Ok(None);
        }
        let is_index = self.at_kw_ahead(1, "INDEX") || (self.at_kw_ahead(1, "RANGE") && self.at_kw_ahead(2, "INDEX"));
        let is_constraint = self.at_kw_ahead(1, "CONSTRAINT");
        if !(is_index || is_constraint) {
            return Ok(None);
        }
        self.bump();
        let _ = self.eat_kw("RANGE");
        self.bump();
        match (create, is_index) {
            (true, true) => self.create_index().map(Some),
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

    fn create_index(&mut self) -> Result<SchemaCommand> {
        if self.eat_kw("ON") {
            // Old syntax: CREATE INDEX ON :Label(prop, ...)
            self.expect(&Tok::Colon, "':'")?;
            let label = self.ident("a label")?.name;
            let properties = self.property_name_list()?;
            return Ok(SchemaCommand::CreateIndex { name: None, label, properties, if_not_exists: false });
        }
        let name = self.schema_name()?;
        let if_not_exists = self.if_not_exists()?;
        self.expect_kw("FOR")?;
        let (var, label) = self.schema_node()?;
        self.expect_kw("ON")?;
        self.expect(&Tok::LParen, "'('")?;
        let mut properties = vec![self.schema_property(&var)?];
        while self.eat(&Tok::Comma) {
            properties.push(self.schema_property(&var)?);
        }
        self.expect(&Tok::RParen, "')'")?;
        Ok(SchemaCommand::CreateIndex { name, label, properties, if_not_exists })
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
    /// `CREATE CONSTRAINT ON (n:L) ASSERT n.p IS UNIQUE`.
    fn create_constraint(&mut self) -> Result<SchemaCommand> {
        let name = self.schema_name()?;
        let if_not_exists = self.if_not_exists()?;
        if !(self.eat_kw("FOR") || self.eat_kw("ON")) {
            return Err(self.unexpected("FOR"));
        }
        let (var, label) = self.schema_node()?;
        if !(self.eat_kw("REQUIRE") || self.eat_kw("ASSERT")) {
            return Err(self.unexpected("REQUIRE"));
        }
        let parens = self.eat(&Tok::LParen);
        let property = self.schema_property(&var)?;
        if parens {
            self.expect(&Tok::RParen, "')'")?;
        }
        self.expect_kw("IS")?;
        let span = self.span();
        if !self.eat_kw("UNIQUE") {
            if self.eat_kw("NODE") && self.eat_kw("KEY") {
                return Ok(SchemaCommand::CreateUnique { name, label, property, if_not_exists });
            }
            return Err(self.error_at(
                span,
                "UnexpectedSyntax",
                "only uniqueness constraints (IS UNIQUE) are supported",
            ));
        }
        Ok(SchemaCommand::CreateUnique { name, label, property, if_not_exists })
    }

    fn drop_constraint(&mut self) -> Result<SchemaCommand> {
        if self.eat_kw("ON") {
            let (var, label) = self.schema_node()?;
            self.expect_kw("ASSERT")?;
            let property = self.schema_property(&var)?;
            self.expect_kw("IS")?;
            self.expect_kw("UNIQUE")?;
            return Ok(SchemaCommand::DropConstraint {
                name: None,
                label: Some(label),
                property: Some(property),
                if_exists: false,
            });
        }
        let name = self.ident("a constraint name")?.name;
        let if_exists = if self.eat_kw("IF") {
            self.expect_kw("EXISTS")?;
            true
        } else {
            false
        };
        Ok(SchemaCommand::DropConstraint { name: Some(name), label: None, property: None, if_exists })
    }
}
