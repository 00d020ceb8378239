//! `CREATE INDEX FOR (n:L) ON (n.a, n.b)`: a composite index, under the same rules of names and repeats as
//! a single-property one (`engine::run_schema`).

use plexus_storage::{PropKeyId, WriteTxn};

use crate::builtin::{index_name, schema_objects, SchemaKind};
use crate::error::{CypherError, ErrorKind, Phase, Result};

/// Creates the composite index on `properties` (two or more, distinct: the parser sees to it) of `label`'s nodes
/// named `given`, or the name derived from what it covers; returns whether it was created (`IF NOT EXISTS` does
/// nothing when an index of that name or on those properties exists).
pub(crate) fn create(
    tx: &mut WriteTxn,
    given: Option<&str>,
    label: &str,
    properties: &[String],
    if_not_exists: bool,
) -> Result<bool> {
    let l = tx.label(label);
    let keys: Vec<PropKeyId> = properties.iter().map(|p| tx.prop_key(p)).collect();
    let name = given.map_or_else(|| index_name(label, &properties.join("_")), str::to_owned);
    let objects = schema_objects(tx, tx.catalog());
    let holder = objects.iter().find(|o| o.name == name);
    let shown = format!(":{label}({})", properties.join(", "));
    if tx.composite_index(l, &keys).is_some() {
        if if_not_exists {
            return Ok(false);
        }
        let same = given.is_none() || holder.is_some_and(|h| h.kind == SchemaKind::CompositeIndex && h.token == l.0);
        let detail = if same { "EquivalentSchemaRuleAlreadyExists" } else { "IndexAlreadyExists" };
        return Err(CypherError::new(
            ErrorKind::SemanticError,
            Phase::Runtime,
            detail,
            format!("an index on {shown} already exists"),
        ));
    }
    if let Some(holder) = holder {
        if if_not_exists {
            return Ok(false);
        }
        return Err(crate::engine::name_taken(holder));
    }
    tx.create_composite_index(l, &keys, given)?;
    Ok(true)
}
