//! `CREATE INDEX` and `DROP INDEX` in their three kinds: on one property of a label's nodes, on one property of a relationship
//! type, and on several properties of a label's nodes (composite); and the uniqueness constraints that the last two
//! kinds back (`REQUIRE (n.a, n.b) IS UNIQUE`, `FOR ()-[r:T]-() REQUIRE r.p IS UNIQUE`; a constraint on one
//! node property is the storage's unique key, in the engine). As in Neo4j, an index or constraint is known by its
//! name (given, or derived from what it covers), no two share one, and `IF NOT EXISTS` does nothing when one of
//! that name or on the same schema exists.

use plexus_storage::{LabelId, PropKeyId, TypeId, WriteTxn};

use crate::builtin::{
    constraint_name, index_name, rel_constraint_name, rel_index_name, schema_objects, SchemaKind, SchemaObject,
};
use crate::error::{CypherError, ErrorKind, Phase, Result};

/// What an index covers.
#[derive(PartialEq)]
enum Covered {
    Node(LabelId, PropKeyId),
    Relationship(TypeId, PropKeyId),
    Composite(LabelId, Vec<PropKeyId>),
}

impl Covered {
    fn exists(&self, tx: &WriteTxn) -> bool {
        match self {
            Covered::Node(l, k) => tx.has_index(*l, *k),
            Covered::Relationship(t, k) => tx.has_rel_index(*t, *k),
            Covered::Composite(l, keys) => tx.composite_index(*l, keys).is_some(),
        }
    }

    /// Whether the index that exists on it backs a uniqueness constraint.
    fn is_constraint(&self, tx: &WriteTxn) -> bool {
        match self {
            Covered::Node(l, k) => tx.has_unique_key(*l, *k),
            Covered::Relationship(t, k) => tx.rel_index_is_unique(*t, *k),
            Covered::Composite(l, keys) => tx.composite_index_is_unique(*l, keys),
        }
    }

    /// What the index `o` covers; none for a constraint.
    fn of(o: &SchemaObject) -> Option<Covered> {
        Some(match o.kind {
            SchemaKind::Index => Covered::Node(LabelId(o.token), o.key),
            SchemaKind::RelIndex => Covered::Relationship(TypeId(o.token), o.key),
            SchemaKind::CompositeIndex => {
                Covered::Composite(LabelId(o.token), std::iter::once(o.key).chain(o.more.iter().copied()).collect())
            }
            SchemaKind::Constraint => return None,
        })
    }

    /// What the constraint `o` covers, when an index of another kind backs it.
    fn of_constraint(o: &SchemaObject) -> Option<Covered> {
        if o.kind == SchemaKind::Constraint {
            return None;
        }
        Covered::of(o)
    }

    fn create(&self, tx: &mut WriteTxn, name: Option<&str>) -> plexus_storage::Result<()> {
        match self {
            Covered::Node(l, k) => tx.create_named_index(*l, *k, name),
            Covered::Relationship(t, k) => tx.create_rel_index(*t, *k, name),
            Covered::Composite(l, keys) => tx.create_composite_index(*l, keys, name),
        }
    }

    fn drop(&self, tx: &mut WriteTxn) -> plexus_storage::Result<()> {
        match self {
            Covered::Node(l, k) => tx.drop_index(*l, *k),
            Covered::Relationship(t, k) => tx.drop_rel_index(*t, *k),
            Covered::Composite(l, keys) => tx.drop_composite_index(*l, keys),
        }
    }
}

/// Drops the uniqueness constraint `o`, with the index that backs it.
pub(crate) fn drop_constraint(tx: &mut WriteTxn, o: &SchemaObject) -> Result<()> {
    match Covered::of_constraint(o) {
        Some(covered) => covered.drop(tx)?,
        None => tx.drop_unique_key(LabelId(o.token), o.key)?,
    }
    Ok(())
}

/// The error for a uniqueness constraint that the data already breaks.
pub(crate) fn creation_failed(e: plexus_storage::StorageError) -> CypherError {
    CypherError::new(ErrorKind::ConstraintVerificationFailed, Phase::Runtime, "ConstraintCreationFailed", e.to_string())
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
    let (covered, derived, shown) = match (relationships, keys.as_slice()) {
        (true, _) => {
            let t = tx.rel_type(label);
            let derived = if constraint { rel_constraint_name } else { rel_index_name };
            (Covered::Relationship(t, keys[0]), derived(label, &properties[0]), format!("()-[:{label}]-()"))
        }
        (false, &[k]) => (Covered::Node(tx.label(label), k), index_name(label, &properties[0]), format!(":{label}")),
        (false, _) => {
            let l = tx.label(label);
            let derived = if constraint { constraint_name } else { index_name };
            (Covered::Composite(l, keys.clone()), derived(label, &properties.join("_")), format!(":{label}"))
        }
    };
    (covered, derived, format!("{shown}({})", properties.join(", ")))
}

/// Creates the uniqueness constraint on `properties` (several) of the nodes of `label`, or on one property of
/// the relationships of type `label` with `relationships`, named `given`; returns whether it was created.
pub(crate) fn create_constraint(
    tx: &mut WriteTxn,
    given: Option<&str>,
    label: &str,
    relationships: bool,
    properties: &[String],
    if_not_exists: bool,
) -> Result<bool> {
    let (covered, derived, shown) = covered(tx, label, relationships, properties, true);
    let name = given.map_or(derived, str::to_owned);
    let objects = schema_objects(tx, tx.catalog());
    let holder = objects.iter().find(|o| o.name == name);
    if covered.exists(tx) {
        if covered.is_constraint(tx) {
            if if_not_exists {
                return Ok(false);
            }
            // The same constraint again, or under another name (Neo4j's two codes).
            let same = given.is_none() || holder.is_some_and(|h| Covered::of_constraint(h).as_ref() == Some(&covered));
            let detail = if same { "EquivalentSchemaRuleAlreadyExists" } else { "ConstraintAlreadyExists" };
            let message = format!("a uniqueness constraint on {shown} already exists");
            return Err(CypherError::new(ErrorKind::SemanticError, Phase::Runtime, detail, message));
        }
        // The constraint's own index would be a second index on the same schema (refused as in Neo4j, `IF NOT
        // EXISTS` or not: nothing equivalent exists).
        let message =
            format!("an index on {shown} already exists; drop it before creating a uniqueness constraint on it");
        return Err(CypherError::new(ErrorKind::SemanticError, Phase::Runtime, "IndexAlreadyExists", message));
    }
    if let Some(holder) = holder {
        if if_not_exists {
            return Ok(false);
        }
        return Err(crate::engine::name_taken(holder));
    }
    match covered {
        Covered::Relationship(t, k) => tx.create_rel_unique(t, k, given),
        Covered::Composite(l, keys) => tx.create_composite_unique(l, &keys, given),
        Covered::Node(..) => unreachable!("a constraint on one node property is a unique key"),
    }
    .map_err(creation_failed)?;
    Ok(true)
}

/// Drops the index `o` (of any kind; a constraint is not an index and is left alone).
pub(crate) fn drop_index(tx: &mut WriteTxn, o: &SchemaObject) -> Result<()> {
    if let Some(covered) = Covered::of(o) {
        covered.drop(tx)?;
    }
    Ok(())
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
    let name = given.map_or(derived, str::to_owned);
    let objects = schema_objects(tx, tx.catalog());
    let holder = objects.iter().find(|o| o.name == name);
    if covered.exists(tx) {
        if if_not_exists {
            return Ok(false);
        }
        if covered.is_constraint(tx) {
            let message = format!("a uniqueness constraint on {shown} already indexes those properties");
            return Err(CypherError::new(ErrorKind::SemanticError, Phase::Runtime, "ConstraintAlreadyExists", message));
        }
        // The same index again, or under another name (Neo4j's two codes).
        let same = given.is_none() || holder.is_some_and(|h| Covered::of(h).as_ref() == Some(&covered));
        let detail = if same { "EquivalentSchemaRuleAlreadyExists" } else { "IndexAlreadyExists" };
        let message = format!("an index on {shown} already exists");
        return Err(CypherError::new(ErrorKind::SemanticError, Phase::Runtime, detail, message));
    }
    if let Some(holder) = holder {
        if if_not_exists {
            return Ok(false);
        }
        return Err(crate::engine::name_taken(holder));
    }
    if let Covered::Node(l, k) = covered {
        if tx.has_unique_key(l, k) {
            // A uniqueness constraint's key is already indexed (and seeks use it).
            if if_not_exists {
                return Ok(false);
            }
            let message = format!("a uniqueness constraint on {shown} already indexes that property");
            return Err(CypherError::new(ErrorKind::SemanticError, Phase::Runtime, "ConstraintAlreadyExists", message));
        }
    }
    covered.create(tx, given)?;
    Ok(true)
}
