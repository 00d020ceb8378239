//! Cypher equality, comparison and orderability (interim: numbers, strings, booleans, lists, maps, ids).

use std::cmp::Ordering;
use std::hash::{Hash, Hasher};

use crate::value::Value;

/// Ternary `=`: `None` when the answer is null.
pub fn equals(a: &Value, b: &Value) -> Option<bool> {
    use Value::*;
    match (a, b) {
        (Null, _) | (_, Null) => None,
        (Int(x), Float(y)) | (Float(y), Int(x)) => Some((*x as f64) == *y),
        (List(x), List(y)) => {
            if x.len() != y.len() {
                return Some(false);
            }
            let mut unknown = false;
            for (p, q) in x.iter().zip(y.iter()) {
                match equals(p, q) {
                    Some(false) => return Some(false),
                    None => unknown = true,
                    _ => {}
                }
            }
            if unknown {
                None
            } else {
                Some(true)
            }
        }
        (Map(x), Map(y)) => {
            if x.len() != y.len() || !x.keys().eq(y.keys()) {
                return Some(false);
            }
            let mut unknown = false;
            for (p, q) in x.values().zip(y.values()) {
                match equals(p, q) {
                    Some(false) => return Some(false),
                    None => unknown = true,
                    _ => {}
                }
            }
            if unknown {
                None
            } else {
                Some(true)
            }
        }
        (Float(x), Float(y)) => Some(x == y),
        _ => {
            if std::mem::discriminant(a) != std::mem::discriminant(b) {
                return Some(false);
            }
            if let Some(o) = crate::temporal::compare(a, b) {
                return Some(o == Ordering::Equal);
            }
            Some(a == b)
        }
    }
}

/// `<` and friends: `None` when the values are not comparable (the result is null).
pub fn compare(a: &Value, b: &Value) -> Option<Ordering> {
    use Value::*;
    match (a, b) {
        (Int(x), Int(y)) => Some(x.cmp(y)),
        (Int(x), Float(y)) => (*x as f64).partial_cmp(y),
        (Float(x), Int(y)) => x.partial_cmp(&(*y as f64)),
        (Float(x), Float(y)) => x.partial_cmp(y),
        (String(x), String(y)) => Some(x.cmp(y)),
        (Bool(x), Bool(y)) => Some(x.cmp(y)),
        (List(x), List(y)) => {
            for (p, q) in x.iter().zip(y.iter()) {
                match compare(p, q)? {
                    Ordering::Equal => continue,
                    o => return Some(o),
                }
            }
            Some(x.len().cmp(&y.len()))
        }
        _ => crate::temporal::compare(a, b),
    }
}

fn type_rank(v: &Value) -> u8 {
    use Value::*;
    match v {
        Map(_) => 0,
        Node(_) => 1,
        Rel(_) => 2,
        List(_) => 3,
        Path(_) => 4,
        DateTime(_) => 5,
        LocalDateTime(_) => 6,
        Date(_) => 7,
        Time(_) => 8,
        LocalTime(_) => 9,
        Duration(_) => 10,
        String(_) => 11,
        Bool(_) => 12,
        Int(_) | Float(_) => 13,
        Bytes(_) => 14,
        Null => 15,
    }
}

/// The total order of ORDER BY.
pub fn order(a: &Value, b: &Value) -> Ordering {
    use Value::*;
    let (ra, rb) = (type_rank(a), type_rank(b));
    if ra != rb {
        return ra.cmp(&rb);
    }
    match (a, b) {
        (Float(x), Float(y)) if x.is_nan() || y.is_nan() => x.is_nan().cmp(&y.is_nan()),
        (Float(x), _) if x.is_nan() => Ordering::Greater,
        (_, Float(y)) if y.is_nan() => Ordering::Less,
        (List(x), List(y)) => {
            for (p, q) in x.iter().zip(y.iter()) {
                match order(p, q) {
                    Ordering::Equal => continue,
                    o => return o,
                }
            }
            x.len().cmp(&y.len())
        }
        (Map(x), Map(y)) => {
            for ((ka, va), (kb, vb)) in x.iter().zip(y.iter()) {
                match ka.cmp(kb).then_with(|| order(va, vb)) {
                    Ordering::Equal => continue,
                    o => return o,
                }
            }
            x.len().cmp(&y.len())
        }
        (Node(x), Node(y)) => x.cmp(y),
        (Rel(x), Rel(y)) => x.cmp(y),
        (Path(x), Path(y)) => x.cmp(y),
        (Duration(x), Duration(y)) => {
            (x.months, x.days, x.seconds, x.nanos).cmp(&(y.months, y.days, y.seconds, y.nanos))
        }
        _ => compare(a, b).unwrap_or(Ordering::Equal),
    }
}

/// A value under equivalence (DISTINCT, grouping): null equals null, 1 equals 1.0, NaN equals NaN.
#[derive(Clone, Debug)]
pub struct Equivalent(pub Value);

impl PartialEq for Equivalent {
    fn eq(&self, other: &Self) -> bool {
        equivalent(&self.0, &other.0)
    }
}

impl Eq for Equivalent {}

fn equivalent(a: &Value, b: &Value) -> bool {
    use Value::*;
    match (a, b) {
        (Null, Null) => true,
        (Float(x), Float(y)) => x == y || (x.is_nan() && y.is_nan()),
        (Int(x), Float(y)) | (Float(y), Int(x)) => (*x as f64) == *y,
        (List(x), List(y)) => x.len() == y.len() && x.iter().zip(y.iter()).all(|(p, q)| equivalent(p, q)),
        (Map(x), Map(y)) => {
            x.len() == y.len() && x.iter().zip(y.iter()).all(|((ka, va), (kb, vb))| ka == kb && equivalent(va, vb))
        }
        _ => equals(a, b) == Some(true),
    }
}

impl Hash for Equivalent {
    fn hash<H: Hasher>(&self, state: &mut H) {
        hash_value(&self.0, state)
    }
}

fn hash_value<H: Hasher>(v: &Value, state: &mut H) {
    use Value::*;
    match v {
        Null => 0u8.hash(state),
        Bool(b) => b.hash(state),
        Int(i) => (*i as f64).to_bits().hash(state),
        Float(f) => {
            if f.is_nan() {
                1u8.hash(state)
            } else if *f == 0.0 {
                0f64.to_bits().hash(state)
            } else {
                f.to_bits().hash(state)
            }
        }
        String(s) => s.hash(state),
        List(items) => {
            items.len().hash(state);
            items.iter().for_each(|i| hash_value(i, state));
        }
        Map(m) => {
            for (k, v) in m.iter() {
                k.hash(state);
                hash_value(v, state);
            }
        }
        Node(n) => n.hash(state),
        Rel(r) => r.hash(state),
        Path(p) => p.hash(state),
        other => std::mem::discriminant(other).hash(state),
    }
}
