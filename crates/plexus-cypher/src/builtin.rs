//! The built-in procedures and what the `SHOW` commands list. `SHOW INDEXES`, `SHOW CONSTRAINTS`,
//! `SHOW PROCEDURES` and `SHOW FUNCTIONS` are parsed into a call of one of the listing procedures here followed
//! by the command's `YIELD` / `WHERE` / `RETURN` (see `parser/show.rs`), so they are ordinary read-only
//! queries: they run in read transactions, stream, and filter and sort like any other query. Columns and
//! values follow Neo4j 5, which tools and drivers read.

use std::collections::BTreeMap;
use std::sync::Arc;

use plexus_storage::catalog::Catalog;
use plexus_storage::{GraphState, PropKeyId, TokenKind};

use crate::error::{CypherError, ErrorKind, Phase, Result};
use crate::exec::ctx::Ctx;
use crate::procedures::{ParamType, ProcedureRegistry};
use crate::value::{Map, Value};

/// The Neo4j version Plexus answers as (the Bolt agent, `dbms.components()`): drivers and tools choose
/// features by it.
pub const NEO4J_COMPATIBLE_VERSION: &str = "5.26.0";

/// The built-in procedures.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Builtin {
    Labels,
    RelationshipTypes,
    PropertyKeys,
    Ping,
    Components,
    NodeTypeProperties,
    RelTypeProperties,
    SchemaVisualization,
    AwaitIndexes,
    AwaitIndex,
    ShowIndexes,
    ShowConstraints,
}

/// `(name, description, signature)` of each procedure `CALL` can reach by name; the listing ones behind the
/// `SHOW` commands are not among them.
const CALLABLE: &[(Builtin, &str, &str, &str)] = &[
    (
        Builtin::Labels,
        "db.labels",
        "List all labels attached to nodes within a database.",
        "db.labels() :: (label :: STRING)",
    ),
    (
        Builtin::RelationshipTypes,
        "db.relationshipTypes",
        "List all types attached to relationships within a database.",
        "db.relationshipTypes() :: (relationshipType :: STRING)",
    ),
    (
        Builtin::PropertyKeys,
        "db.propertyKeys",
        "List all property keys in the database.",
        "db.propertyKeys() :: (propertyKey :: STRING)",
    ),
    (
        Builtin::Ping,
        "db.ping",
        "This procedure can be used by client side tooling to test whether they are correctly connected to a database.",
        "db.ping() :: (success :: BOOLEAN)",
    ),
    (
        Builtin::Components,
        "dbms.components",
        "List DBMS components and their versions.",
        "dbms.components() :: (name :: STRING, versions :: LIST<STRING>, edition :: STRING)",
    ),
    (
        Builtin::NodeTypeProperties,
        "db.schema.nodeTypeProperties",
        "Show the derived property schema of the nodes in tabular form.",
        "db.schema.nodeTypeProperties() :: (nodeType :: STRING, nodeLabels :: LIST<STRING>, propertyName :: STRING, \
         propertyTypes :: LIST<STRING>, mandatory :: BOOLEAN)",
    ),
    (
        Builtin::RelTypeProperties,
        "db.schema.relTypeProperties",
        "Show the derived property schema of the relationships in tabular form.",
        "db.schema.relTypeProperties() :: (relType :: STRING, propertyName :: STRING, propertyTypes :: LIST<STRING>, \
         mandatory :: BOOLEAN)",
    ),
    (
        Builtin::SchemaVisualization,
        "db.schema.visualization",
        "Visualize the schema of the data: a node per label, a relationship per type joining two labels.",
        "db.schema.visualization() :: (nodes :: LIST<NODE>, relationships :: LIST<RELATIONSHIP>)",
    ),
    (
        Builtin::AwaitIndexes,
        "db.awaitIndexes",
        "Wait for all indexes to come online (for example: CALL db.awaitIndexes(300)).",
        "db.awaitIndexes(timeOutSeconds = 300 :: INTEGER)",
    ),
    (
        Builtin::AwaitIndex,
        "db.awaitIndex",
        "Wait for an index to come online (for example: CALL db.awaitIndex(\"MyIndex\", 300)).",
        "db.awaitIndex(indexName :: STRING, timeOutSeconds = 300 :: INTEGER)",
    ),
];

/// The names `SHOW INDEXES` and `SHOW CONSTRAINTS` call (not listed by `SHOW PROCEDURES`).
pub(crate) const SHOW_INDEXES: &str = "plexus.show.indexes";
pub(crate) const SHOW_CONSTRAINTS: &str = "plexus.show.constraints";
pub(crate) const SHOW_PROCEDURES: &str = "plexus.show.procedures";
pub(crate) const SHOW_FUNCTIONS: &str = "plexus.show.functions";

/// Every column of `SHOW INDEXES` (`YIELD *`) and the ones it shows by default.
pub(crate) const INDEX_COLUMNS: &[&str] = &[
    "id",
    "name",
    "state",
    "populationPercent",
    "type",
    "entityType",
    "labelsOrTypes",
    "properties",
    "indexProvider",
    "owningConstraint",
    "lastRead",
    "readCount",
    "trackedSince",
    "options",
    "failureMessage",
    "createStatement",
];
pub(crate) const INDEX_DEFAULT: usize = 12;
pub(crate) const CONSTRAINT_COLUMNS: &[&str] = &[
    "id",
    "name",
    "type",
    "entityType",
    "labelsOrTypes",
    "properties",
    "ownedIndex",
    "propertyType",
    "options",
    "createStatement",
];
pub(crate) const CONSTRAINT_DEFAULT: usize = 8;
pub(crate) const PROCEDURE_COLUMNS: &[&str] = &[
    "name",
    "description",
    "mode",
    "worksOnSystem",
    "signature",
    "argumentDescription",
    "returnDescription",
    "admin",
    "rolesExecution",
    "rolesBoostedExecution",
    "isDeprecated",
    "deprecatedBy",
    "option",
];
pub(crate) const PROCEDURE_DEFAULT: usize = 4;
pub(crate) const FUNCTION_COLUMNS: &[&str] = &[
    "name",
    "category",
    "description",
    "signature",
    "isBuiltIn",
    "argumentDescription",
    "returnDescription",
    "aggregating",
    "rolesExecution",
    "rolesBoostedExecution",
    "isDeprecated",
    "deprecatedBy",
];
pub(crate) const FUNCTION_DEFAULT: usize = 3;

impl Builtin {
    /// The built-in procedure called `name` (any case).
    pub fn resolve(name: &str) -> Option<Builtin> {
        if let Some((b, ..)) = CALLABLE.iter().find(|(_, n, ..)| n.eq_ignore_ascii_case(name)) {
            return Some(*b);
        }
        [(SHOW_INDEXES, Builtin::ShowIndexes), (SHOW_CONSTRAINTS, Builtin::ShowConstraints)]
            .into_iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, b)| b)
    }

    pub fn fields(self) -> &'static [&'static str] {
        match self {
            Builtin::Labels => &["label"],
            Builtin::RelationshipTypes => &["relationshipType"],
            Builtin::PropertyKeys => &["propertyKey"],
            Builtin::Ping => &["success"],
            Builtin::Components => &["name", "versions", "edition"],
            Builtin::NodeTypeProperties => &["nodeType", "nodeLabels", "propertyName", "propertyTypes", "mandatory"],
            Builtin::RelTypeProperties => &["relType", "propertyName", "propertyTypes", "mandatory"],
            Builtin::SchemaVisualization => &["nodes", "relationships"],
            Builtin::AwaitIndexes | Builtin::AwaitIndex => &[],
            Builtin::ShowIndexes => INDEX_COLUMNS,
            Builtin::ShowConstraints => CONSTRAINT_COLUMNS,
        }
    }

    /// The arguments it takes (as its signature in `CALLABLE` names them), and how many of the last ones may be
    /// left out.
    pub fn inputs(self) -> (&'static [(&'static str, ParamType)], usize) {
        const TIMEOUT: (&str, ParamType) = ("timeOutSeconds", ParamType::Integer);
        match self {
            Builtin::AwaitIndexes => (&[TIMEOUT], 1),
            Builtin::AwaitIndex => (&[("indexName", ParamType::String), TIMEOUT], 1),
            _ => (&[], 0),
        }
    }

    pub fn rows(self, ctx: &Ctx, args: &[Value]) -> Result<Vec<Vec<Value>>> {
        let g = ctx.g();
        let strings = |names: Vec<Arc<str>>| names.into_iter().map(|n| vec![Value::String(n)]).collect();
        Ok(match self {
            Builtin::Labels => strings(labels_in_use(ctx).into_iter().map(|(_, name)| name).collect()),
            Builtin::RelationshipTypes => {
                let mut used = std::collections::BTreeSet::new();
                let _ = g.visit_all_rels::<()>(|r| {
                    used.insert(r.ty);
                    std::ops::ControlFlow::Continue(())
                });
                strings(used.into_iter().map(|t| ctx.type_name(t)).collect())
            }
            Builtin::PropertyKeys => strings(ctx.catalog().names(TokenKind::PropKey)),
            Builtin::Ping => vec![vec![Value::Bool(true)]],
            Builtin::Components => vec![vec![
                Value::string("Neo4j Kernel"),
                Value::list(vec![Value::string(NEO4J_COMPATIBLE_VERSION)]),
                Value::string("community"),
            ]],
            Builtin::NodeTypeProperties => crate::exec::schema_properties::node_type_properties(ctx),
            Builtin::RelTypeProperties => crate::exec::schema_properties::rel_type_properties(ctx),
            // Its entities are made up, and kept in the context for the results to resolve.
            Builtin::SchemaVisualization => crate::exec::schema_visualization::rows(ctx)?,
            // An index is built by the statement that creates it and is online once that commits: there is
            // nothing to wait for, only the name to check.
            Builtin::AwaitIndexes => {
                non_negative_timeout(args.first())?;
                Vec::new()
            }
            Builtin::AwaitIndex => {
                non_negative_timeout(args.get(1))?;
                let name = match args.first() {
                    Some(Value::String(s)) => s.clone(),
                    _ => {
                        return Err(CypherError::argument("InvalidArgumentValue", "db.awaitIndex needs an index name"))
                    }
                };
                if !schema_objects(g, ctx.catalog()).iter().any(|o| *o.name == *name) {
                    return Err(CypherError::new(
                        ErrorKind::ProcedureError,
                        Phase::Runtime,
                        "ProcedureCallFailed",
                        format!("Failed to invoke procedure `db.awaitIndex`: there is no index called `{name}`"),
                    ));
                }
                Vec::new()
            }
            Builtin::ShowIndexes => index_rows(g, ctx.catalog()),
            Builtin::ShowConstraints => constraint_rows(g, ctx.catalog()),
        })
    }
}

/// An await procedure's timeout (in seconds, when given) must not be negative.
fn non_negative_timeout(timeout: Option<&Value>) -> Result<()> {
    match timeout {
        Some(Value::Int(t)) if *t < 0 => {
            Err(CypherError::argument("InvalidArgumentValue", format!("the timeout must not be negative, got {t}")))
        }
        _ => Ok(()),
    }
}

/// Whether an index or constraint.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum SchemaKind {
    Index,
    Constraint,
    /// An index on a property of the relationships of one type.
    RelIndex,
    /// An index on several properties of the nodes of one label.
    CompositeIndex,
}

/// An index or uniqueness constraint, with the name it is known by.
pub(crate) struct SchemaObject {
    pub kind: SchemaKind,
    /// The id of its label, or of its relationship type for a [`SchemaKind::RelIndex`].
    pub token: u32,
    /// Its (first) property.
    pub key: PropKeyId,
    /// A composite index's further properties.
    pub more: Vec<PropKeyId>,
    pub name: String,
    /// A relationship or composite index that backs a uniqueness constraint: listed, named and dropped as the
    /// constraint.
    pub unique: bool,
}

impl SchemaObject {
    /// Whether it is a uniqueness constraint (on one node property, or backed by a unique index of another
    /// kind), rather than an index.
    pub fn is_constraint(&self) -> bool {
        self.kind == SchemaKind::Constraint || self.unique
    }
}

/// The labels some node has, in the catalog's order (the order their names were first created).
pub(crate) fn labels_in_use(ctx: &Ctx) -> Vec<(plexus_storage::LabelId, Arc<str>)> {
    let g = ctx.g();
    ctx.catalog()
        .names(TokenKind::Label)
        .into_iter()
        .filter_map(|name| ctx.label_id(&name).filter(|&l| g.label_count(l) > 0).map(|l| (l, name)))
        .collect()
}

/// The name of a uniqueness constraint on a relationship property created without one.
pub(crate) fn rel_constraint_name(ty: &str, key: &str) -> String {
    format!("rel_constraint_{ty}_{key}")
}

/// The name of a uniqueness constraint created without one.
pub(crate) fn constraint_name(label: &str, key: &str) -> String {
    format!("constraint_{label}_{key}")
}

/// The name of an index created without one.
pub(crate) fn index_name(label: &str, key: &str) -> String {
    format!("index_{label}_{key}")
}

/// The name of a relationship property index created without one (apart from node indexes' names, which a
/// label spelled as the type would otherwise share).
pub(crate) fn rel_index_name(ty: &str, key: &str) -> String {
    format!("rel_index_{ty}_{key}")
}

fn token_name(catalog: &Catalog, kind: TokenKind, id: u32) -> Arc<str> {
    catalog.name(kind, id).unwrap_or_default()
}

impl SchemaObject {
    /// The names of its label (or relationship type) and property.
    pub fn names(&self, catalog: &Catalog) -> (Arc<str>, Arc<str>) {
        let kind = if self.kind == SchemaKind::RelIndex { TokenKind::Type } else { TokenKind::Label };
        (token_name(catalog, kind, self.token), token_name(catalog, TokenKind::PropKey, self.key.0))
    }

    /// The names of all its properties, in order.
    pub fn property_names(&self, catalog: &Catalog) -> Vec<Arc<str>> {
        std::iter::once(self.key)
            .chain(self.more.iter().copied())
            .map(|k| token_name(catalog, TokenKind::PropKey, k.0))
            .collect()
    }
}

/// Every uniqueness constraint, then every index in creation order, each under the name its creator gave or
/// else one derived from what it covers.
pub(crate) fn schema_objects(g: &GraphState, catalog: &Catalog) -> Vec<SchemaObject> {
    let object = |kind, token: u32, keys: &[PropKeyId], given: Option<Arc<str>>, unique: bool| {
        let (key, more) = (keys[0], keys[1..].to_vec());
        let mut o = SchemaObject { kind, token, key, more, name: String::new(), unique };
        o.name = match given {
            Some(n) => n.to_string(),
            None => {
                let (l, k) = o.names(catalog);
                let properties = o.property_names(catalog).join("_");
                match (kind, unique) {
                    (SchemaKind::Constraint, _) => constraint_name(&l, &k),
                    (SchemaKind::Index, _) => index_name(&l, &k),
                    (SchemaKind::RelIndex, false) => rel_index_name(&l, &k),
                    (SchemaKind::RelIndex, true) => rel_constraint_name(&l, &k),
                    (SchemaKind::CompositeIndex, false) => index_name(&l, &properties),
                    (SchemaKind::CompositeIndex, true) => constraint_name(&l, &properties),
                }
            }
        };
        o
    };
    let unique_keys = g
        .unique_keys()
        .into_iter()
        .map(|(l, k)| object(SchemaKind::Constraint, l.0, &[k], g.unique_key_name(l, k), false));
    let indexes = g.indexes().into_iter().map(|(l, k)| object(SchemaKind::Index, l.0, &[k], g.index_name(l, k), false));
    let rel_indexes = g
        .rel_indexes()
        .into_iter()
        .map(|(t, k)| object(SchemaKind::RelIndex, t.0, &[k], g.rel_index_name(t, k), g.rel_index_is_unique(t, k)));
    let composites = g.composite_indexes().into_iter().map(|(l, keys)| {
        let (name, unique) = (g.composite_index_name(l, &keys), g.composite_index_is_unique(l, &keys));
        object(SchemaKind::CompositeIndex, l.0, &keys, name, unique)
    });
    let (constraints, indexes): (Vec<_>, Vec<_>) =
        unique_keys.chain(indexes).chain(rel_indexes).chain(composites).partition(SchemaObject::is_constraint);
    constraints.into_iter().chain(indexes).collect()
}

/// `` `name` `` as Cypher quotes a name in a statement.
fn quoted(name: &str) -> String {
    format!("`{}`", name.replace('`', "``"))
}

fn index_options() -> Value {
    let mut m = Map::new();
    m.insert("indexConfig".into(), Value::map(Map::new()));
    m.insert("indexProvider".into(), Value::string("range-1.0"));
    Value::map(m)
}

/// The rows of `SHOW INDEXES`: each index, and the index backing each uniqueness constraint (named as the
/// constraint, as in Neo4j), by name; ids number them in that order.
fn index_rows(g: &GraphState, catalog: &Catalog) -> Vec<Vec<Value>> {
    let mut objects = schema_objects(g, catalog);
    objects.sort_by(|a, b| a.name.cmp(&b.name));
    let mut rows = Vec::with_capacity(objects.len());
    for (n, o) in objects.iter().enumerate() {
        let (label, key) = o.names(catalog);
        let properties = o.property_names(catalog);
        let create = match o.kind {
            _ if o.is_constraint() => constraint_statement(o, &label, &properties),
            SchemaKind::Index | SchemaKind::CompositeIndex => {
                let on: Vec<String> = properties.iter().map(|p| format!("n.{}", quoted(p))).collect();
                format!("CREATE RANGE INDEX {} FOR (n:{}) ON ({})", quoted(&o.name), quoted(&label), on.join(", "))
            }
            SchemaKind::RelIndex => {
                format!(
                    "CREATE RANGE INDEX {} FOR ()-[r:{}]-() ON (r.{})",
                    quoted(&o.name),
                    quoted(&label),
                    quoted(&key)
                )
            }
            SchemaKind::Constraint => unreachable!("a constraint's statement is made above"),
        };
        let owner = if o.is_constraint() { Value::string(o.name.as_str()) } else { Value::Null };
        let entity = if o.kind == SchemaKind::RelIndex { "RELATIONSHIP" } else { "NODE" };
        rows.push(vec![
            Value::Int(n as i64 + 1),
            Value::string(o.name.as_str()),
            Value::string("ONLINE"),
            Value::Float(100.0),
            Value::string("RANGE"),
            Value::string(entity),
            Value::list(vec![Value::String(label)]),
            Value::list(properties.into_iter().map(Value::String).collect()),
            Value::string("range-1.0"),
            owner,
            Value::Null,
            Value::Null,
            Value::Null,
            index_options(),
            Value::string(""),
            Value::string(create),
        ]);
    }
    rows
}

/// The statement that creates the constraint `o` on `properties` of `label` (or of its relationship type).
fn constraint_statement(o: &SchemaObject, label: &str, properties: &[Arc<str>]) -> String {
    let (pattern, var) = match o.kind {
        SchemaKind::RelIndex => (format!("()-[r:{}]-()", quoted(label)), "r"),
        _ => (format!("(n:{})", quoted(label)), "n"),
    };
    let on: Vec<String> = properties.iter().map(|p| format!("{var}.{}", quoted(p))).collect();
    format!("CREATE CONSTRAINT {} FOR {pattern} REQUIRE ({}) IS UNIQUE", quoted(&o.name), on.join(", "))
}

/// The rows of `SHOW CONSTRAINTS`, by name.
fn constraint_rows(g: &GraphState, catalog: &Catalog) -> Vec<Vec<Value>> {
    let mut objects: Vec<SchemaObject> =
        schema_objects(g, catalog).into_iter().filter(SchemaObject::is_constraint).collect();
    objects.sort_by(|a, b| a.name.cmp(&b.name));
    objects
        .iter()
        .enumerate()
        .map(|(n, o)| {
            let (label, _) = o.names(catalog);
            let properties = o.property_names(catalog);
            let (kind, entity) = match o.kind {
                SchemaKind::RelIndex => ("RELATIONSHIP_UNIQUENESS", "RELATIONSHIP"),
                _ => ("UNIQUENESS", "NODE"),
            };
            vec![
                Value::Int(n as i64 + 1),
                Value::string(o.name.as_str()),
                Value::string(kind),
                Value::string(entity),
                Value::list(vec![Value::String(label.clone())]),
                Value::list(properties.iter().cloned().map(Value::String).collect()),
                Value::string(o.name.as_str()),
                Value::Null,
                index_options(),
                Value::string(constraint_statement(o, &label, &properties)),
            ]
        })
        .collect()
}

/// `[{name, description, type, isDeprecated}]` of a signature's arguments (`f(a :: INTEGER, b :: ANY) :: ...`)
/// and the text after the last `::` outside them.
fn describe_signature(signature: &str) -> (Value, String) {
    let open = signature.find('(').unwrap_or(signature.len());
    let mut depth = 0usize;
    let mut close = signature.len();
    for (i, c) in signature.char_indices().skip(open) {
        match c {
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth == 0 {
                    close = i;
                    break;
                }
            }
            _ => {}
        }
    }
    let inner = signature.get(open + 1..close).unwrap_or("");
    let args: Vec<Value> = split_top_level(inner)
        .into_iter()
        .filter_map(|arg| {
            let (name, ty) = arg.split_once("::")?;
            let mut m = Map::new();
            // `input = DEFAULT_TEMPORAL_ARGUMENT :: ANY`: the name before any default.
            m.insert("name".into(), Value::string(name.trim().split([' ', '=']).next().unwrap_or("")));
            m.insert("type".into(), Value::string(ty.trim()));
            m.insert("description".into(), Value::string(""));
            m.insert("isDeprecated".into(), Value::Bool(false));
            Some(Value::map(m))
        })
        .collect();
    let returns = signature.get(close + 1..).and_then(|r| r.trim().strip_prefix("::")).unwrap_or("").trim();
    (Value::list(args), returns.to_string())
}

/// `a :: INTEGER, b :: LIST<ANY>` split at the commas outside brackets.
fn split_top_level(s: &str) -> Vec<&str> {
    let (mut parts, mut depth, mut start) = (Vec::new(), 0i32, 0);
    for (i, c) in s.char_indices() {
        match c {
            '(' | '<' | '[' => depth += 1,
            ')' | '>' | ']' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&s[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    if !s[start..].trim().is_empty() {
        parts.push(&s[start..]);
    }
    parts
}

/// The rows of `SHOW PROCEDURES`: the built-in procedures and those `registry` holds, by name.
pub(crate) fn procedure_rows(registry: &ProcedureRegistry) -> Vec<Vec<Value>> {
    let mut listed: BTreeMap<String, (String, String, bool)> = BTreeMap::new();
    for (_, name, description, signature) in CALLABLE {
        listed.insert(name.to_string(), (description.to_string(), signature.to_string(), true));
    }
    for p in registry.all() {
        let s = &p.signature;
        let part = |items: &[(String, crate::procedures::ParamType)]| {
            items.iter().map(|(n, t)| format!("{n} :: {}", t.name())).collect::<Vec<_>>().join(", ")
        };
        let signature = if s.outputs.is_empty() {
            format!("{}({})", s.name, part(&s.inputs))
        } else {
            format!("{}({}) :: ({})", s.name, part(&s.inputs), part(&s.outputs))
        };
        listed.insert(s.name.clone(), (s.description.clone(), signature, false));
    }
    listed
        .into_iter()
        .map(|(name, (description, signature, builtin))| {
            let (args, returns) = describe_signature(&signature);
            // The outputs are written like arguments: `(label :: STRING)`.
            let (outputs, _) = describe_signature(&format!("outputs{returns}"));
            let mut option = Map::new();
            option.insert("deprecated".into(), Value::Bool(false));
            // `dbms.*` procedures are about the server, the others read the database; the built-in ones work on
            // the system database too.
            let mode = if name.starts_with("dbms.") { "DBMS" } else { "READ" };
            vec![
                Value::string(name),
                Value::string(description),
                Value::string(mode),
                Value::Bool(builtin),
                Value::string(signature),
                args,
                outputs,
                Value::Bool(false),
                Value::Null,
                Value::Null,
                Value::Bool(false),
                Value::Null,
                Value::map(option),
            ]
        })
        .collect()
}

/// The rows of `SHOW FUNCTIONS`, by name.
pub(crate) fn function_rows() -> Vec<Vec<Value>> {
    let mut functions: Vec<_> = crate::functions::catalogue::FUNCTIONS.to_vec();
    functions.sort_by_key(|f| f.name.to_ascii_lowercase());
    functions
        .into_iter()
        .map(|f| {
            let (args, returns) = describe_signature(f.signature);
            vec![
                Value::string(f.name),
                Value::string(f.category),
                Value::string(f.description),
                Value::string(f.signature),
                Value::Bool(true),
                args,
                Value::string(returns),
                Value::Bool(f.category == "Aggregating"),
                Value::Null,
                Value::Null,
                Value::Bool(false),
                Value::Null,
            ]
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signatures_describe_their_arguments() {
        let (args, returns) =
            describe_signature("substring(original :: STRING, start :: INTEGER, length :: INTEGER) :: STRING");
        let Value::List(args) = args else { panic!() };
        assert_eq!(args.len(), 3);
        assert_eq!(args[1].as_map().unwrap()["type"], Value::string("INTEGER"));
        assert_eq!(returns, "STRING");
        let (args, returns) = describe_signature("pi() :: FLOAT");
        assert_eq!((args, returns.as_str()), (Value::list(vec![]), "FLOAT"));
        assert_eq!(split_top_level("a :: LIST<ANY>, b :: MAP"), vec!["a :: LIST<ANY>", " b :: MAP"]);
    }

    #[test]
    fn callable_procedures_resolve_by_any_case() {
        assert_eq!(Builtin::resolve("DB.LABELS"), Some(Builtin::Labels));
        assert_eq!(Builtin::resolve("dbms.components"), Some(Builtin::Components));
        assert_eq!(Builtin::resolve("db.nothing"), None);
    }
}
