//! `CREATE INDEX`, `DROP INDEX`, `CREATE CONSTRAINT ... IS UNIQUE` and `DROP CONSTRAINT` in their three kinds: on
//! one property of a label's nodes, on one property of a relationship type, and on several properties of a label's
//! nodes (composite). A constraint on one node property is the storage's unique key; on the other two kinds, an
//! index that refuses duplicates. As in Neo4j, an index or constraint is known by its name (given, or derived
//! from what it covers), no two share one, and `IF NOT EXISTS` does nothing when one of that name or on the same
//! schema exists. The engine hands every such command here to run, under EXPLAIN and PROFILE too (one operator,
//! named as Neo4j names it).

use std::time::Instant;

use plexus_storage::{LabelId, PropKeyId, TypeId, WriteTxn};

use crate::ast::{RunMode, SchemaCommand};

use crate::builtin::{
    constraint_name, index_name, rel_constraint_name, rel_index_name, schema_objects, SchemaKind, SchemaObject,
};
use crate::error::{CypherError, ErrorKind, Phase, Result};
use crate::{PlanTree, QueryResult, QueryStats};

/// What an index covers.
#[derive(PartialEq)]
enum Covered {
    Node(LabelId, PropKeyId),
    Relationship(TypeId, PropKeyId),
    Composite(LabelId, Vec<PropKeyId>),
}

impl Covered {
    /// Whether a plain index (one backing no constraint) covers it.
    fn has_index(&self, tx: &WriteTxn) -> bool {
        match self {
            Covered::Node(l, k) => tx.has_index(*l, *k),
            Covered::Relationship(t, k) => tx.has_rel_index(*t, *k) && !tx.rel_index_is_unique(*t, *k),
            Covered::Composite(l, keys) => {
                tx.composite_index(*l, keys).is_some() && !tx.composite_index_is_unique(*l, keys)
            }
        }
    }

    /// Whether a uniqueness constraint covers it (and indexes it).
    fn has_constraint(&self, tx: &WriteTxn) -> bool {
        match self {
            Covered::Node(l, k) => tx.has_unique_key(*l, *k),
            Covered::Relationship(t, k) => tx.rel_index_is_unique(*t, *k),
            Covered::Composite(l, keys) => tx.composite_index_is_unique(*l, keys),
        }
    }

    /// What the index or constraint `o` covers.
    fn of(o: &SchemaObject) -> Covered {
        match o.kind {
            SchemaKind::Index | SchemaKind::Constraint => Covered::Node(LabelId(o.token), o.key),
            SchemaKind::RelIndex => Covered::Relationship(TypeId(o.token), o.key),
            SchemaKind::CompositeIndex => {
                Covered::Composite(LabelId(o.token), std::iter::once(o.key).chain(o.more.iter().copied()).collect())
            }
        }
    }

    fn create_index(&self, tx: &mut WriteTxn, name: Option<&str>) -> plexus_storage::Result<()> {
        match self {
            Covered::Node(l, k) => tx.create_named_index(*l, *k, name),
            Covered::Relationship(t, k) => tx.create_rel_index(*t, *k, name),
            Covered::Composite(l, keys) => tx.create_composite_index(*l, keys, name),
        }
    }

    fn create_constraint(&self, tx: &mut WriteTxn, name: Option<&str>) -> plexus_storage::Result<()> {
        match self {
            Covered::Node(l, k) => tx.declare_named_unique_key(*l, *k, name),
            Covered::Relationship(t, k) => tx.create_rel_unique(*t, *k, name),
            Covered::Composite(l, keys) => tx.create_composite_unique(*l, keys, name),
        }
    }

    /// Drops the index or constraint on it (whichever `constraint` says).
    fn drop(&self, tx: &mut WriteTxn, constraint: bool) -> plexus_storage::Result<()> {
        match self {
            Covered::Node(l, k) if constraint => tx.drop_unique_key(*l, *k),
            Covered::Node(l, k) => tx.drop_index(*l, *k),
            Covered::Relationship(t, k) => tx.drop_rel_index(*t, *k),
            Covered::Composite(l, keys) => tx.drop_composite_index(*l, keys),
        }
    }
}

/// Drops the uniqueness constraint `o`, with the index that backs it.
pub(crate) fn drop_constraint(tx: &mut WriteTxn, o: &SchemaObject) -> Result<()> {
    Covered::of(o).drop(tx, true)?;
    Ok(())
}

/// Drops the index `o` (of any kind; a constraint is not an index and is left alone).
pub(crate) fn drop_index(tx: &mut WriteTxn, o: &SchemaObject) -> Result<()> {
    if !o.is_constraint() {
        Covered::of(o).drop(tx, false)?;
    }
    Ok(())
}

/// The error for a uniqueness constraint that the data already breaks.
fn creation_failed(e: plexus_storage::StorageError) -> CypherError {
    CypherError::new(ErrorKind::ConstraintVerificationFailed, Phase::Runtime, "ConstraintCreationFailed", e.to_string())
}

fn schema_error(detail: &'static str, message: String) -> CypherError {
    CypherError::new(ErrorKind::SemanticError, Phase::Runtime, detail, message)
}

/// What `properties` of the nodes of `label` (of the relationships of type `label` with `relationships`) are
/// to an index or constraint: what it covers, the name it gets without one given, and how messages show it.
fn covered(
    tx: &mut WriteTxn,
    label: &str,
    relationships: bool,
    properties: &[String],
    constraint: bool,
) -> (Covered, String, String) {
    let keys: Vec<PropKeyId> = properties.iter().map(|p| tx.prop_key(p)).collect();
    let joined = properties.join("_");
    let (covered, derived, shown) = match (relationships, keys.as_slice()) {
        (true, _) => {
            let t = tx.rel_type(label);
            let derived = if constraint { rel_constraint_name } else { rel_index_name };
            (Covered::Relationship(t, keys[0]), derived(label, &joined), format!("()-[:{label}]-()"))
        }
        (false, &[k]) => {
            let derived = if constraint { constraint_name } else { index_name };
            (Covered::Node(tx.label(label), k), derived(label, &joined), format!(":{label}"))
        }
        (false, _) => {
            let derived = if constraint { constraint_name } else { index_name };
            (Covered::Composite(tx.label(label), keys.clone()), derived(label, &joined), format!(":{label}"))
        }
    };
    (covered, derived, format!("{shown}({})", properties.join(", ")))
}

/// The name to store for a new index or constraint created without one: none when the name derived from what
/// it covers is free, else that name with the first free number after it (`L_a` and `b` derive the same name as
/// `L` and `a_b`; an explicit name may also have taken it).
fn unnamed(objects: &[SchemaObject], derived: &str) -> Option<String> {
    let taken = |name: &str| objects.iter().any(|o| o.name == name);
    if !taken(derived) {
        return None;
    }
    (2..).map(|n| format!("{derived}_{n}")).find(|name| !taken(name))
}

/// Creates the uniqueness constraint on `properties` of the nodes of `label` (one, or several unique together),
/// or on one property of the relationships of type `label` with `relationships`, named `given`; returns whether
/// it was created. As in Neo4j: the same constraint again is an error unless `IF NOT EXISTS`; a plain index on
/// the same schema must be dropped first; a name taken by an index is an error even with `IF NOT EXISTS`.
pub(crate) fn create_constraint(
    tx: &mut WriteTxn,
    given: Option<&str>,
    label: &str,
    relationships: bool,
    properties: &[String],
    if_not_exists: bool,
) -> Result<bool> {
    let (covered, derived, shown) = covered(tx, label, relationships, properties, true);
    let objects = schema_objects(tx, tx.catalog());
    if covered.has_constraint(tx) {
        if if_not_exists {
            return Ok(false);
        }
        // The same constraint again under the same name, or under another (Neo4j's two codes).
        let existing = objects.iter().find(|o| o.is_constraint() && Covered::of(o) == covered);
        let same = existing.is_some_and(|o| o.name == given.unwrap_or(&derived));
        let detail = if same { "EquivalentSchemaRuleAlreadyExists" } else { "ConstraintAlreadyExists" };
        return Err(schema_error(detail, format!("a uniqueness constraint on {shown} already exists")));
    }
    if let Some(holder) = given.and_then(|g| objects.iter().find(|o| o.name == g)) {
        if if_not_exists && holder.is_constraint() {
            return Ok(false);
        }
        return Err(name_taken(holder));
    }
    if covered.has_index(tx) {
        // The constraint's own index would be a second index on the same schema (refused as in Neo4j, `IF NOT
        // EXISTS` or not: nothing equivalent exists).
        let message =
            format!("an index on {shown} already exists; drop it before creating a uniqueness constraint on it");
        return Err(schema_error("IndexAlreadyExists", message));
    }
    let name = given.map(str::to_owned).or_else(|| unnamed(&objects, &derived));
    covered.create_constraint(tx, name.as_deref()).map_err(creation_failed)?;
    Ok(true)
}

/// Creates the index on `properties` of the nodes of `label` (of the relationships of type `label` with
/// `relationships`) named `given`; returns whether it was created.
pub(crate) fn create_index(
    tx: &mut WriteTxn,
    given: Option<&str>,
    label: &str,
    relationships: bool,
    properties: &[String],
    if_not_exists: bool,
) -> Result<bool> {
    let (covered, derived, shown) = covered(tx, label, relationships, properties, false);
    let objects = schema_objects(tx, tx.catalog());
    if covered.has_index(tx) {
        if if_not_exists {
            return Ok(false);
        }
        // The same index again under the same name (an unnamed one under the name it would get), or under
        // another name: Neo4j's two codes, as for constraints.
        let existing = objects.iter().find(|o| !o.is_constraint() && Covered::of(o) == covered);
        let same = existing.is_some_and(|o| o.name == given.unwrap_or(&derived));
        let detail = if same { "EquivalentSchemaRuleAlreadyExists" } else { "IndexAlreadyExists" };
        return Err(schema_error(detail, format!("an index on {shown} already exists")));
    }
    if let Some(holder) = given.and_then(|g| objects.iter().find(|o| o.name == g)) {
        if if_not_exists {
            return Ok(false);
        }
        return Err(name_taken(holder));
    }
    if covered.has_constraint(tx) {
        // A uniqueness constraint already indexes it (and seeks use it).
        if if_not_exists {
            return Ok(false);
        }
        let message = format!("a uniqueness constraint on {shown} already indexes those properties");
        return Err(schema_error("ConstraintAlreadyExists", message));
    }
    let name = given.map(str::to_owned).or_else(|| unnamed(&objects, &derived));
    covered.create_index(tx, name.as_deref())?;
    Ok(true)
}

/// The answer to EXPLAIN of an index or constraint command: its one operator, as Neo4j plans it, and nothing
/// changed.
pub(crate) fn explained_schema(cmd: &SchemaCommand) -> QueryResult {
    let (plan, plan_tree) = schema_plan(cmd, None);
    QueryResult { plan: Some(plan), plan_tree: Some(plan_tree), ..Default::default() }
}

/// A schema command's plan, as text and as a tree: its one operator, with the time it took under PROFILE.
pub(crate) fn schema_plan(cmd: &SchemaCommand, profiled: Option<std::time::Duration>) -> (String, PlanTree) {
    let operator = schema_operator(cmd);
    let text = match profiled {
        Some(t) => format!("+{operator}  rows: 0, time: {:.3} ms\n", t.as_secs_f64() * 1e3),
        None => format!("+{operator}\n"),
    };
    (text, PlanTree { operator, rows: profiled.map(|_| 0), time: profiled, children: vec![] })
}

/// The operator Neo4j names for a schema command, with what it creates or drops.
fn schema_operator(cmd: &SchemaCommand) -> String {
    let named = |name: &Option<String>| name.as_ref().map(|n| format!(" {n}")).unwrap_or_default();
    match cmd {
        SchemaCommand::CreateIndex { name, label, properties, relationships: false, .. } => {
            format!("CreateIndex(RANGE INDEX{} FOR (:{label}) ON ({}))", named(name), properties.join(", "))
        }
        SchemaCommand::CreateIndex { name, label, properties, relationships: true, .. } => {
            format!("CreateIndex(RANGE INDEX{} FOR ()-[:{label}]-() ON ({}))", named(name), properties.join(", "))
        }
        SchemaCommand::DropIndex { name, label, properties, .. } => match label {
            Some(label) => format!("DropIndex(INDEX ON :{label}({}))", properties.join(", ")),
            None => format!("DropIndex(INDEX{})", named(name)),
        },
        SchemaCommand::CreateUnique { name, label, properties, relationships, .. } => {
            let (kind, pattern) = match relationships {
                true => ("RELATIONSHIP UNIQUENESS", format!("()-[:{label}]-()")),
                false => ("UNIQUENESS", format!("(:{label})")),
            };
            let properties = properties.join(", ");
            format!("CreateConstraint({kind} CONSTRAINT{} FOR {pattern} REQUIRE ({properties}) IS UNIQUE)", named(name))
        }
        SchemaCommand::DropConstraint { name, label, properties, .. } => match label {
            Some(label) => {
                format!("DropConstraint(CONSTRAINT ON (:{label}) ASSERT ({}) IS UNIQUE)", properties.join(", "))
            }
            None => format!("DropConstraint(CONSTRAINT{})", named(name)),
        },
    }
}

/// Which object of `kind` a DROP names: by label and properties (in order), or by name.
fn schema_target(
    tx: &WriteTxn,
    kind: SchemaKind,
    name: Option<&str>,
    label: Option<&str>,
    properties: &[String],
) -> Option<SchemaObject> {
    // A DROP INDEX finds indexes of every kind by name, and node indexes (single or composite) by label.
    let of_kind = |o: &SchemaObject| match kind {
        SchemaKind::Index => !o.is_constraint() && (label.is_none() || o.kind != SchemaKind::RelIndex),
        _ => o.is_constraint() && (label.is_none() || o.kind != SchemaKind::RelIndex),
    };
    schema_objects(tx, tx.catalog()).into_iter().filter(of_kind).find(|o| match (label, name) {
        (Some(label), _) => {
            let names = o.property_names(tx.catalog());
            *o.names(tx.catalog()).0 == *label && names.iter().map(|n| &**n).eq(properties.iter().map(String::as_str))
        }
        (None, Some(name)) => o.name == name,
        (None, None) => false,
    })
}

/// The error for a CREATE whose name another index or constraint already has.
fn name_taken(holder: &SchemaObject) -> CypherError {
    let (code, what) = match holder.is_constraint() {
        false => ("IndexWithNameAlreadyExists", "an index"),
        true => ("ConstraintWithNameAlreadyExists", "a constraint"),
    };
    CypherError::new(
        ErrorKind::SemanticError,
        Phase::Runtime,
        code,
        format!("there already is {what} named '{}'", holder.name),
    )
}

/// Runs a schema command; under PROFILE its result carries the command's one operator as its plan.
pub(crate) fn schema(tx: &mut WriteTxn, cmd: &SchemaCommand, mode: RunMode) -> Result<QueryResult> {
    let started = Instant::now();
    let mut result = run_schema(tx, cmd)?;
    if mode == RunMode::Profile {
        let (plan, plan_tree) = schema_plan(cmd, Some(started.elapsed()));
        (result.plan, result.plan_tree) = (Some(plan), Some(plan_tree));
    }
    Ok(result)
}

/// Runs a schema command. As in Neo4j, a name given to an index or constraint is how SHOW lists it and DROP
/// finds it, no two have the same name, and `IF NOT EXISTS` makes a CREATE do nothing when an index or
/// constraint of the same name, or on the same schema, exists.
fn run_schema(tx: &mut WriteTxn, cmd: &SchemaCommand) -> Result<QueryResult> {
    let mut stats = QueryStats::default();
    let mut result = QueryResult::default();
    match cmd {
        SchemaCommand::CreateUnique { name: given, label, relationships, properties, if_not_exists } => {
            let (given, label) = (given.as_deref(), label.as_str());
            if crate::index_schema::create_constraint(tx, given, label, *relationships, properties, *if_not_exists)? {
                stats.constraints_added = 1;
            }
        }
        SchemaCommand::DropConstraint { name, label, properties, if_exists } => {
            let found = schema_target(tx, SchemaKind::Constraint, name.as_deref(), label.as_deref(), properties);
            match found {
                Some(o) => {
                    crate::index_schema::drop_constraint(tx, &o)?;
                    stats.constraints_removed = 1;
                }
                None if *if_exists => {}
                None => {
                    return Err(CypherError::new(
                        ErrorKind::SemanticError,
                        Phase::Runtime,
                        "ConstraintNotFound",
                        "no such constraint",
                    ))
                }
            }
        }
        SchemaCommand::CreateIndex { name, label, properties, if_not_exists, asked, relationships } => {
            if let Some(kind) = asked {
                result.notifications.push(crate::notices::range_index_instead(kind));
            }
            let (given, label) = (name.as_deref(), label.as_str());
            if crate::index_schema::create_index(tx, given, label, *relationships, properties, *if_not_exists)? {
                stats.indexes_added = 1;
            }
        }
        SchemaCommand::DropIndex { name, label, properties, if_exists } => {
            let target = schema_target(tx, SchemaKind::Index, name.as_deref(), label.as_deref(), properties);
            match target {
                Some(o) => {
                    crate::index_schema::drop_index(tx, &o)?;
                    stats.indexes_removed = 1;
                }
                None => {
                    let objects = schema_objects(tx, tx.catalog());
                    // SHOW INDEXES lists a uniqueness constraint's index under the constraint's name: dropping it
                    // fails, `IF EXISTS` or not (as in Neo4j).
                    if let Some(owner) = objects.iter().find(|o| o.is_constraint() && name.as_ref() == Some(&o.name)) {
                        return Err(CypherError::new(
                            ErrorKind::SemanticError,
                            Phase::Runtime,
                            "IndexNotFound",
                            format!(
                                "the index {0} belongs to the constraint {0}: drop the constraint instead (DROP CONSTRAINT {0})",
                                owner.name
                            ),
                        ));
                    }
                    if *if_exists {
                        return Ok(QueryResult { stats, ..result });
                    }
                    let names: Vec<String> =
                        objects.into_iter().filter(|o| !o.is_constraint()).map(|o| o.name).collect();
                    return Err(CypherError::new(
                        ErrorKind::SemanticError,
                        Phase::Runtime,
                        "IndexNotFound",
                        format!("no such index; these exist: [{}]", names.join(", ")),
                    ));
                }
            }
        }
    }
    result.stats = stats;
    Ok(result)
}
