//! Query values: everything a Cypher expression can evaluate to.
//!
//! Inside the engine nodes and relationships are ids into the transaction's snapshot ([`Value::Node`],
//! [`Value::Rel`]), so passing them between operators costs nothing. Results leave the engine as
//! [`ResultValue`]s, with labels, types and properties resolved, because a client reads them after the snapshot is
//! gone.

use std::collections::BTreeMap;
use std::sync::Arc;

use plexus_storage::value::{self as stored, Date, DateTime, Duration, LocalDateTime, LocalTime, Point, Time};
use plexus_storage::{NodeId, RelId};

/// A Cypher map. Keys are kept sorted, which makes maps comparable and printing deterministic.
pub type Map = BTreeMap<Arc<str>, Value>;

/// A path: `nodes.len() == rels.len() + 1`.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Path {
    pub nodes: Vec<NodeId>,
    pub rels: Vec<RelId>,
}

/// A value in the query engine.
#[derive(Clone, Debug, Default)]
pub enum Value {
    #[default]
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    String(Arc<str>),
    Bytes(Arc<[u8]>),
    List(Arc<Vec<Value>>),
    Map(Arc<Map>),
    Node(NodeId),
    Rel(RelId),
    Path(Arc<Path>),
    Date(Date),
    LocalTime(LocalTime),
    Time(Time),
    LocalDateTime(LocalDateTime),
    DateTime(Box<DateTime>),
    /// Boxed because it is twice the size of every other payload: inline, it would make each value 40 bytes
    /// instead of 24, and every row clone, batch and sort pays for that width.
    Duration(Box<Duration>),
    /// Boxed for the same reason.
    Point(Box<Point>),
}

const _: () = assert!(std::mem::size_of::<Value>() == 24);

// The payloads `Value::frees_on_drop` treats as plain data: none of them may own memory.
const _: () = assert!(
    !std::mem::needs_drop::<NodeId>()
        && !std::mem::needs_drop::<RelId>()
        && !std::mem::needs_drop::<Date>()
        && !std::mem::needs_drop::<LocalTime>()
        && !std::mem::needs_drop::<Time>()
        && !std::mem::needs_drop::<LocalDateTime>()
);

impl Value {
    /// Whether dropping this value frees anything. Rows are mostly nulls, numbers and ids, and the value's drop is
    /// a call per slot that [`crate::exec::clear_row`] skips for those.
    #[inline]
    pub(crate) fn frees_on_drop(&self) -> bool {
        !matches!(
            self,
            Value::Null
                | Value::Bool(_)
                | Value::Int(_)
                | Value::Float(_)
                | Value::Node(_)
                | Value::Rel(_)
                | Value::Date(_)
                | Value::LocalTime(_)
                | Value::Time(_)
                | Value::LocalDateTime(_)
        )
    }

    pub fn string(s: impl Into<Arc<str>>) -> Value {
        Value::String(s.into())
    }

    /// A duration kept as the temporal module keeps them, `0 <= nanos < 1e9`, whoever made it (a driver's
    /// parameter, a stored value, the embedding program): equal durations are then equal structs, which equality,
    /// grouping and index keys rely on, and the Bolt encoding is the one Neo4j sends.
    pub fn duration(d: Duration) -> Value {
        Value::Duration(Box::new(crate::temporal::canonical_duration(&d)))
    }

    pub fn from_point(p: Point) -> Value {
        Value::Point(Box::new(p))
    }

    pub fn list(items: Vec<Value>) -> Value {
        Value::List(Arc::new(items))
    }

    pub fn map(entries: Map) -> Value {
        Value::Map(Arc::new(entries))
    }

    pub fn is_null(&self) -> bool {
        matches!(self, Value::Null)
    }

    /// The type name used in error messages, as Cypher spells it.
    pub fn type_name(&self) -> &'static str {
        match self {
            Value::Null => "NULL",
            Value::Bool(_) => "BOOLEAN",
            Value::Int(_) => "INTEGER",
            Value::Float(_) => "FLOAT",
            Value::String(_) => "STRING",
            Value::Bytes(_) => "BYTES",
            Value::List(_) => "LIST",
            Value::Map(_) => "MAP",
            Value::Node(_) => "NODE",
            Value::Rel(_) => "RELATIONSHIP",
            Value::Path(_) => "PATH",
            Value::Date(_) => "DATE",
            Value::LocalTime(_) => "LOCAL TIME",
            Value::Time(_) => "ZONED TIME",
            Value::LocalDateTime(_) => "LOCAL DATETIME",
            Value::DateTime(_) => "ZONED DATETIME",
            Value::Duration(_) => "DURATION",
            Value::Point(_) => "POINT",
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::String(s) => Some(s),
            _ => None,
        }
    }

    pub fn as_int(&self) -> Option<i64> {
        match self {
            Value::Int(i) => Some(*i),
            _ => None,
        }
    }

    pub fn as_map(&self) -> Option<&Map> {
        match self {
            Value::Map(m) => Some(m),
            _ => None,
        }
    }

    /// Converts a stored property value.
    pub fn from_stored(value: &stored::Value) -> Value {
        match value {
            stored::Value::Null => Value::Null,
            stored::Value::Bool(b) => Value::Bool(*b),
            stored::Value::Int(i) => Value::Int(*i),
            stored::Value::Float(f) => Value::Float(*f),
            stored::Value::String(s) => Value::String(s.clone()),
            stored::Value::Bytes(b) => Value::Bytes(b.clone()),
            stored::Value::Date(d) => Value::Date(*d),
            stored::Value::LocalTime(t) => Value::LocalTime(*t),
            stored::Value::Time(t) => Value::Time(*t),
            stored::Value::LocalDateTime(t) => Value::LocalDateTime(*t),
            stored::Value::DateTime(t) => Value::DateTime(t.clone()),
            stored::Value::Duration(d) => Value::duration(**d),
            stored::Value::Point(p) => Value::Point(p.clone()),
            stored::Value::List(items) => Value::list(items.iter().map(Value::from_stored).collect()),
        }
    }

    /// Converts to a value that can be stored as a property, or explains why it cannot.
    pub fn to_stored(&self) -> Result<stored::Value, String> {
        let mut value = self.to_lookup()?;
        if let stored::Value::List(items) = &value {
            // A list of integers and floats is stored as floats, as Neo4j stores it.
            let float = |v: &stored::Value| matches!(v, stored::Value::Float(_));
            let number = |v: &stored::Value| float(v) || matches!(v, stored::Value::Int(_));
            if items.iter().any(float) && items.iter().all(number) {
                let widened = items.iter().map(|v| match v {
                    stored::Value::Int(i) => stored::Value::Float(*i as f64),
                    other => other.clone(),
                });
                value = stored::Value::List(widened.collect::<Vec<_>>().into());
            }
            value.validate()?;
        }
        Ok(value)
    }

    /// The value as a storage value to look stored properties up by (an index seek or range, a unique key):
    /// like [`Value::to_stored`], but a list need not be one a property could hold, since `[1.0, 2]` equals the
    /// stored `[1, 2]` under Cypher's `=`.
    pub fn to_lookup(&self) -> Result<stored::Value, String> {
        Ok(match self {
            Value::Null => stored::Value::Null,
            Value::Bool(b) => stored::Value::Bool(*b),
            Value::Int(i) => stored::Value::Int(*i),
            Value::Float(f) => stored::Value::Float(*f),
            Value::String(s) => stored::Value::String(s.clone()),
            Value::Bytes(b) => stored::Value::Bytes(b.clone()),
            Value::Date(d) => stored::Value::Date(*d),
            Value::LocalTime(t) => stored::Value::LocalTime(*t),
            Value::Time(t) => stored::Value::Time(*t),
            Value::LocalDateTime(t) => stored::Value::LocalDateTime(*t),
            Value::DateTime(t) => stored::Value::DateTime(t.clone()),
            Value::Duration(d) => stored::Value::Duration(d.clone()),
            Value::Point(p) => stored::Value::Point(p.clone()),
            Value::List(items) => {
                let items = items.iter().map(|v| v.to_lookup()).collect::<Result<Vec<_>, _>>()?;
                stored::Value::List(items.into())
            }
            other => return Err(format!("a property cannot hold a {}", other.type_name())),
        })
    }
}

/// Structural identity (same variant, same contents; floats by value), for tests and plan comparison. Cypher's
/// own equality, with nulls and numeric coercion, is in the `compare` module.
impl PartialEq for Value {
    fn eq(&self, other: &Self) -> bool {
        use Value::*;
        match (self, other) {
            (Null, Null) => true,
            (Bool(a), Bool(b)) => a == b,
            (Int(a), Int(b)) => a == b,
            (Float(a), Float(b)) => a == b || (a.is_nan() && b.is_nan()),
            (String(a), String(b)) => a == b,
            (Bytes(a), Bytes(b)) => a == b,
            (List(a), List(b)) => a == b,
            (Map(a), Map(b)) => a == b,
            (Node(a), Node(b)) => a == b,
            (Rel(a), Rel(b)) => a == b,
            (Path(a), Path(b)) => a == b,
            (Date(a), Date(b)) => a == b,
            (LocalTime(a), LocalTime(b)) => a == b,
            (Time(a), Time(b)) => a == b,
            (LocalDateTime(a), LocalDateTime(b)) => a == b,
            (DateTime(a), DateTime(b)) => a == b,
            (Duration(a), Duration(b)) => a == b,
            (Point(a), Point(b)) => a == b,
            _ => false,
        }
    }
}

impl From<bool> for Value {
    fn from(v: bool) -> Self {
        Value::Bool(v)
    }
}
impl From<i64> for Value {
    fn from(v: i64) -> Self {
        Value::Int(v)
    }
}
impl From<f64> for Value {
    fn from(v: f64) -> Self {
        Value::Float(v)
    }
}
impl From<&str> for Value {
    fn from(v: &str) -> Self {
        Value::String(v.into())
    }
}
impl From<String> for Value {
    fn from(v: String) -> Self {
        Value::String(v.into())
    }
}
impl From<Vec<Value>> for Value {
    fn from(v: Vec<Value>) -> Self {
        Value::list(v)
    }
}

/// A node as a client sees it.
#[derive(Clone, Debug, PartialEq)]
pub struct NodeData {
    pub id: u64,
    pub labels: Vec<Arc<str>>,
    pub properties: BTreeMap<Arc<str>, ResultValue>,
}

/// A relationship as a client sees it.
#[derive(Clone, Debug, PartialEq)]
pub struct RelData {
    pub id: u64,
    pub start: u64,
    pub end: u64,
    pub rel_type: Arc<str>,
    pub properties: BTreeMap<Arc<str>, ResultValue>,
}

/// A path as a client sees it: `rels[i]` joins `nodes[i]` and `nodes[i + 1]` in either direction.
#[derive(Clone, Debug, PartialEq)]
pub struct PathData {
    pub nodes: Vec<NodeData>,
    pub rels: Vec<RelData>,
}

/// A value in a query result, with graph entities resolved.
#[derive(Clone, Debug, PartialEq, Default)]
pub enum ResultValue {
    #[default]
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    String(Arc<str>),
    Bytes(Arc<[u8]>),
    List(Vec<ResultValue>),
    Map(BTreeMap<Arc<str>, ResultValue>),
    Node(Box<NodeData>),
    Rel(Box<RelData>),
    Path(Box<PathData>),
    Date(Date),
    LocalTime(LocalTime),
    Time(Time),
    LocalDateTime(LocalDateTime),
    DateTime(Box<DateTime>),
    Duration(Duration),
    Point(Point),
}

impl ResultValue {
    /// A rough count of the bytes this value takes in memory, for result-size limits.
    pub fn approx_size(&self) -> usize {
        let base = std::mem::size_of::<ResultValue>();
        let props =
            |p: &BTreeMap<Arc<str>, ResultValue>| p.iter().map(|(k, v)| 48 + k.len() + v.approx_size()).sum::<usize>();
        base + match self {
            ResultValue::String(s) => s.len(),
            ResultValue::Bytes(b) => b.len(),
            ResultValue::List(items) => items.iter().map(ResultValue::approx_size).sum(),
            ResultValue::Map(m) => props(m),
            ResultValue::Node(n) => 64 + n.labels.iter().map(|l| l.len() + 16).sum::<usize>() + props(&n.properties),
            ResultValue::Rel(r) => 64 + r.rel_type.len() + props(&r.properties),
            ResultValue::Path(p) => {
                p.nodes.iter().map(|n| ResultValue::Node(Box::new(n.clone())).approx_size()).sum::<usize>()
                    + p.rels.iter().map(|r| ResultValue::Rel(Box::new(r.clone())).approx_size()).sum::<usize>()
            }
            ResultValue::DateTime(d) => 32 + d.zone.as_ref().map_or(0, |z| z.len()),
            _ => 0,
        }
    }

    /// Converts a client value into a query value (for parameters). Graph entities become their ids.
    pub fn into_value(self) -> Value {
        match self {
            ResultValue::Null => Value::Null,
            ResultValue::Bool(b) => Value::Bool(b),
            ResultValue::Int(i) => Value::Int(i),
            ResultValue::Float(f) => Value::Float(f),
            ResultValue::String(s) => Value::String(s),
            ResultValue::Bytes(b) => Value::Bytes(b),
            ResultValue::List(items) => Value::list(items.into_iter().map(ResultValue::into_value).collect()),
            ResultValue::Map(m) => Value::map(m.into_iter().map(|(k, v)| (k, v.into_value())).collect()),
            ResultValue::Node(n) => Value::Node(NodeId(n.id)),
            ResultValue::Rel(r) => Value::Rel(RelId(r.id)),
            ResultValue::Path(p) => Value::Path(Arc::new(Path {
                nodes: p.nodes.iter().map(|n| NodeId(n.id)).collect(),
                rels: p.rels.iter().map(|r| RelId(r.id)).collect(),
            })),
            ResultValue::Date(d) => Value::Date(d),
            ResultValue::LocalTime(t) => Value::LocalTime(t),
            ResultValue::Time(t) => Value::Time(t),
            ResultValue::LocalDateTime(t) => Value::LocalDateTime(t),
            ResultValue::DateTime(t) => Value::DateTime(t),
            ResultValue::Duration(d) => Value::duration(d),
            ResultValue::Point(p) => Value::Point(Box::new(p)),
        }
    }
}
