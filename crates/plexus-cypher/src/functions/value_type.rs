//! `valueType(x)`: the name of a value's type as Neo4j 5 spells it (`INTEGER NOT NULL`, `LIST<STRING NOT NULL |
//! INTEGER NOT NULL> NOT NULL`, `NULL`). The members of a list's element type are listed once each, in the order
//! Neo4j normalises type unions to (booleans, strings, numbers, temporals, graph values, maps, lists, paths), and
//! lose their `NOT NULL` when the list also holds null.

use std::cmp::Ordering;

use crate::ast::{BaseType, CypherType, TypeMember};
use crate::error::Result;
use crate::value::Value;

/// The type of the values of a list: its distinct members, and whether null is among them.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
struct Union {
    members: Vec<Member>,
    nullable: bool,
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Member {
    Plain(BaseType),
    List(Union),
}

/// Where lists stand among the base types.
const LIST_RANK: u8 = BaseType::Map as u8 + 1;

impl Member {
    fn of(v: &Value) -> Option<Member> {
        let base = match v {
            Value::Null => return None,
            Value::Bool(_) => BaseType::Boolean,
            Value::String(_) => BaseType::String,
            Value::Int(_) => BaseType::Integer,
            Value::Float(_) => BaseType::Float,
            Value::Date(_) => BaseType::Date,
            Value::LocalTime(_) => BaseType::LocalTime,
            Value::Time(_) => BaseType::ZonedTime,
            Value::LocalDateTime(_) => BaseType::LocalDateTime,
            Value::DateTime(_) => BaseType::ZonedDateTime,
            Value::Duration(_) => BaseType::Duration,
            Value::Point(_) => BaseType::Point,
            Value::Bytes(_) => BaseType::Bytes,
            Value::Node(_) => BaseType::Node,
            Value::Rel(_) => BaseType::Relationship,
            Value::Map(_) => BaseType::Map,
            Value::List(items) => return Some(Member::List(Union::of(items))),
            Value::Path(_) => BaseType::Path,
        };
        Some(Member::Plain(base))
    }

    fn rank(&self) -> u8 {
        match self {
            Member::Plain(base) => *base as u8,
            Member::List(_) => LIST_RANK,
        }
    }

    fn write(&self, not_null: bool, out: &mut String) {
        match self {
            Member::Plain(base) => out.push_str(base.name()),
            Member::List(inner) => {
                out.push_str("LIST<");
                inner.write(out);
                out.push('>');
            }
        }
        if not_null {
            out.push_str(" NOT NULL");
        }
    }
}

impl Ord for Member {
    fn cmp(&self, other: &Member) -> Ordering {
        match (self, other) {
            (Member::List(a), Member::List(b)) => a.cmp(b),
            _ => self.rank().cmp(&other.rank()),
        }
    }
}

impl PartialOrd for Member {
    fn partial_cmp(&self, other: &Member) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Union {
    fn of(items: &[Value]) -> Union {
        let mut union = Union::default();
        for item in items {
            match Member::of(item) {
                None => union.nullable = true,
                Some(m) if !union.members.contains(&m) => union.members.push(m),
                Some(_) => {}
            }
        }
        union.members.sort();
        union
    }

    fn write(&self, out: &mut String) {
        if self.members.is_empty() {
            out.push_str(if self.nullable { "NULL" } else { "NOTHING" });
        }
        for (i, m) in self.members.iter().enumerate() {
            if i > 0 {
                out.push_str(" | ");
            }
            m.write(!self.nullable, out);
        }
    }
}

/// Lists whose element types are only null come first, then by their members in order.
impl Ord for Union {
    fn cmp(&self, other: &Union) -> Ordering {
        self.members.cmp(&other.members).then(self.nullable.cmp(&other.nullable))
    }
}

impl PartialOrd for Union {
    fn partial_cmp(&self, other: &Union) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// Whether `v` is of type `ty` (`v IS :: ty`): every type holds null unless it says `NOT NULL`; a list type
/// holds a list whose every element is of its element type.
pub fn is_of_type(v: &Value, ty: &CypherType) -> bool {
    ty.members.iter().any(|(member, not_null)| match v {
        Value::Null => (!not_null && *member != TypeMember::Nothing) || *member == TypeMember::Null,
        v => match member {
            TypeMember::Any => true,
            TypeMember::Nothing | TypeMember::Null => false,
            TypeMember::PropertyValue => is_property_value(v),
            TypeMember::Plain(base) => Member::of(v) == Some(Member::Plain(*base)),
            TypeMember::List(inner) => match v {
                Value::List(items) => items.iter().all(|item| is_of_type(item, inner)),
                _ => false,
            },
        },
    })
}

/// What a property can hold: a scalar, a temporal value, or a list of one kind of those.
fn is_property_value(v: &Value) -> bool {
    match v {
        Value::Node(_) | Value::Rel(_) | Value::Path(_) | Value::Map(_) => false,
        Value::List(items) => items.iter().all(|i| !matches!(i, Value::List(_)) && is_property_value(i)),
        _ => true,
    }
}

pub fn value_type(args: &[Value]) -> Result<Value> {
    let mut out = String::new();
    match Member::of(super::arg(args, 0)) {
        None => out.push_str("NULL"),
        Some(m) => m.write(true, &mut out),
    }
    Ok(Value::from(out))
}
