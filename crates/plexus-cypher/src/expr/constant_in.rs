//! `x IN list` where the list is the same on every row of a statement (`WHERE n.id IN $ids`).
//!
//! Evaluated as written, each row compares `x` with every element: a label of 20,000 nodes filtered against a
//! list of 20,000 ids took 30 s. The planner marks such an `IN` ([`CExpr::InConstant`], decided by
//! [`is_statement_constant`]); the statement evaluates its list once and, when it is long, files the elements
//! in a hash set by a key that two values share exactly when `=` calls them equal. Elements without such a key
//! (null, maps, temporal values, NaN) stay in a list compared one by one, which keeps `IN`'s three-valued answer.

use std::collections::HashSet;
use std::rc::Rc;
use std::sync::Arc;

use plexus_storage::fxhash::FxHashMap;

use super::CExpr;
use crate::compare;
use crate::error::Result;
use crate::value::Value;

/// Lists shorter than this are compared element by element: hashing would cost more than it saves.
pub(crate) const HASH_FROM: usize = 16;

/// The lists of a statement's `IN` tests, by the test's place in the plan (see the module documentation).
#[derive(Default)]
pub(crate) struct InLists {
    /// Of tests whose list is the same on every row ([`CExpr::InConstant`]), evaluated once.
    constant: FxHashMap<*const CExpr, Rc<ConstantList>>,
    /// Of tests whose list is computed per row: the last list each met.
    repeated: FxHashMap<*const CExpr, RepeatedList>,
}

/// The last list an `IN` test met (`WITH collect(a.id) AS ids MATCH (b) WHERE b.id IN ids` hands every row the
/// same list), hashed once the test meets the same list again. Holding the list keeps its address from being
/// reused by another list while it is remembered.
struct RepeatedList {
    list: Arc<Vec<Value>>,
    hashed: Option<Rc<ConstantList>>,
}

impl InLists {
    /// The evaluated list of the constant test `at`, if evaluated before.
    pub(crate) fn constant(&self, at: &CExpr) -> Option<Rc<ConstantList>> {
        self.constant.get(&(at as *const _)).cloned()
    }

    /// Keeps the evaluated list of the constant test `at` for the rest of the statement.
    pub(crate) fn keep_constant(&mut self, at: &CExpr, list: Rc<ConstantList>) {
        self.constant.insert(at as *const _, list);
    }

    /// The hashed form of `items` if the test `at` met the same list before, else `None` (and `items` is
    /// remembered).
    pub(crate) fn repeated(&mut self, at: &CExpr, items: &Arc<Vec<Value>>) -> Option<Rc<ConstantList>> {
        match self.repeated.get_mut(&(at as *const _)) {
            Some(known) if Arc::ptr_eq(&known.list, items) => {
                Some(known.hashed.get_or_insert_with(|| Rc::new(ConstantList::of_items(items.clone()))).clone())
            }
            _ => {
                self.repeated.insert(at as *const _, RepeatedList { list: items.clone(), hashed: None });
                None
            }
        }
    }
}

/// A value's key where `=` between two such values is `true` exactly when their keys are equal, and never null;
/// `None` for values without one (null, maps, entities, temporal values, NaN, lists holding any of them). Query
/// values ([`Key::of`]) and stored ones ([`Key::of_stored`]) get the same key when `=` holds between them.
#[derive(Hash, PartialEq, Eq)]
pub(crate) enum Key {
    Bool(bool),
    /// An integer, or a float with an integral value in the integers' range (`1 = 1.0`, `0 = -0.0`).
    Int(i64),
    /// Any other float but NaN, by its bits.
    Float(u64),
    String(Arc<str>),
    Bytes(Arc<[u8]>),
    List(Vec<Key>),
}

impl Key {
    pub(crate) fn of(v: &Value) -> Option<Key> {
        Some(match v {
            Value::Bool(b) => Key::Bool(*b),
            Value::Int(i) => Key::Int(*i),
            Value::Float(f) => Key::float(*f)?,
            Value::String(s) => Key::String(s.clone()),
            Value::Bytes(b) => Key::Bytes(b.clone()),
            Value::List(items) => Key::List(items.iter().map(Key::of).collect::<Option<_>>()?),
            _ => return None,
        })
    }

    pub(crate) fn of_stored(v: &plexus_storage::Value) -> Option<Key> {
        use plexus_storage::Value as Stored;
        Some(match v {
            Stored::Bool(b) => Key::Bool(*b),
            Stored::Int(i) => Key::Int(*i),
            Stored::Float(f) => Key::float(*f)?,
            Stored::String(s) => Key::String(s.clone()),
            Stored::Bytes(b) => Key::Bytes(b.clone()),
            Stored::List(items) => Key::List(items.iter().map(Key::of_stored).collect::<Option<_>>()?),
            _ => return None,
        })
    }

    fn float(f: f64) -> Option<Key> {
        if f.is_nan() {
            None
        } else if f.fract() == 0.0 && (-9.223_372_036_854_776e18..9.223_372_036_854_776e18).contains(&f) {
            Some(Key::Int(f as i64))
        } else {
            Some(Key::Float(f.to_bits()))
        }
    }
}

/// A statement's evaluated list (see the module documentation).
pub(crate) enum ConstantList {
    Null,
    Short(Arc<Vec<Value>>),
    Hashed {
        all: Arc<Vec<Value>>,
        keyed: HashSet<Key>,
        /// Elements without a key.
        others: Vec<Value>,
    },
}

impl ConstantList {
    /// The right side of an `IN` as a statement keeps it (an error for anything but a list or null).
    pub(crate) fn new(list: &Value) -> Result<ConstantList> {
        Ok(match super::in_operand(list)? {
            None => ConstantList::Null,
            Some(items) => ConstantList::of_items(items.clone()),
        })
    }

    pub(crate) fn of_items(items: Arc<Vec<Value>>) -> ConstantList {
        if items.len() < HASH_FROM {
            return ConstantList::Short(items);
        }
        let mut keyed = HashSet::with_capacity(items.len());
        let mut others = Vec::new();
        for item in items.iter() {
            match Key::of(item) {
                Some(k) => {
                    keyed.insert(k);
                }
                None => others.push(item.clone()),
            }
        }
        ConstantList::Hashed { all: items, keyed, others }
    }

    /// `v IN list`: `true`, `false` or null (`None`), as [`compare::in_list`] answers.
    pub(crate) fn contains(&self, v: &Value) -> Option<bool> {
        match self {
            ConstantList::Null => None,
            ConstantList::Short(items) => compare::in_list(v, items),
            ConstantList::Hashed { all, keyed, others } => match Key::of(v) {
                // Against a keyed element, `=` is true on equal keys and false otherwise, never null; so only
                // the others can make the answer true or null beyond the set.
                Some(k) if keyed.contains(&k) => Some(true),
                Some(_) => compare::in_list(v, others),
                None => compare::in_list(v, all),
            },
        }
    }
}

/// Whether `e` may have one value for the whole statement: built from constants and parameters, with the
/// variables of list comprehensions, quantifiers and `reduce` inside it as the only slots it reads, and no
/// function whose answer changes from call to call or that reads the graph or the current row of LOAD CSV. It
/// does, unless a parameter it reads holds a node, relationship or path, whose properties it could read from
/// the graph as the statement changes it: [`reads_entity_parameters`] tells, once the parameters are known.
pub(crate) fn is_statement_constant(e: &CExpr) -> bool {
    constant(e, &mut Vec::new(), &mut |_| {})
}

/// Whether a parameter `e` reads holds a graph entity (at any depth).
pub(crate) fn reads_entity_parameters(e: &CExpr, params: &crate::Params) -> bool {
    fn entity(v: &Value) -> bool {
        match v {
            Value::Node(_) | Value::Rel(_) | Value::Path(_) => true,
            Value::List(items) => items.iter().any(entity),
            Value::Map(entries) => entries.values().any(entity),
            _ => false,
        }
    }
    let mut found = false;
    constant(e, &mut Vec::new(), &mut |name| found |= params.get(name).is_some_and(entity));
    found
}

fn constant(e: &CExpr, locals: &mut Vec<usize>, param: &mut dyn FnMut(&str)) -> bool {
    fn all(es: &mut dyn Iterator<Item = &CExpr>, locals: &mut Vec<usize>, param: &mut dyn FnMut(&str)) -> bool {
        for e in es {
            if !constant(e, locals, param) {
                return false;
            }
        }
        true
    }
    match e {
        CExpr::Const(_) => true,
        CExpr::Param(name) => {
            param(name);
            true
        }
        CExpr::Slot(s) => locals.contains(s),
        CExpr::Property(b, _) | CExpr::Not(b) | CExpr::Neg(b) | CExpr::Plus(b) | CExpr::IsNull(b, _) => {
            constant(b, locals, param)
        }
        CExpr::TypeTest(b, _, _) => constant(b, locals, param),
        CExpr::List(items) => all(&mut items.iter(), locals, param),
        CExpr::Map(entries) => all(&mut entries.iter().map(|(_, e)| e), locals, param),
        CExpr::Scalar(name, args) => {
            const VARYING: [&str; 4] = ["rand", "randomuuid", "file", "linenumber"];
            !VARYING.iter().any(|v| name.eq_ignore_ascii_case(v)) && all(&mut args.iter(), locals, param)
        }
        CExpr::Index(a, b)
        | CExpr::And(a, b)
        | CExpr::Or(a, b)
        | CExpr::Xor(a, b)
        | CExpr::Binary(_, a, b)
        | CExpr::InConstant(a, b) => constant(a, locals, param) && constant(b, locals, param),
        CExpr::Slice(base, from, to) => {
            all(&mut std::iter::once(&**base).chain(from.as_deref()).chain(to.as_deref()), locals, param)
        }
        CExpr::Case { operand, whens, otherwise } => all(
            &mut operand
                .as_deref()
                .into_iter()
                .chain(whens.iter().flat_map(|(w, t)| [w, t]))
                .chain(otherwise.as_deref()),
            locals,
            param,
        ),
        CExpr::ListComprehension { slot, list, filter, map } => {
            constant(list, locals, param) && {
                locals.push(*slot);
                let inner = all(&mut filter.as_deref().into_iter().chain(map.as_deref()), locals, param);
                locals.pop();
                inner
            }
        }
        CExpr::Quantified { slot, list, predicate, .. } => {
            constant(list, locals, param) && {
                locals.push(*slot);
                let inner = constant(predicate, locals, param);
                locals.pop();
                inner
            }
        }
        CExpr::Reduce { acc, init, slot, list, expr } => {
            constant(init, locals, param) && constant(list, locals, param) && {
                locals.extend([*acc, *slot]);
                let inner = constant(expr, locals, param);
                locals.truncate(locals.len() - 2);
                inner
            }
        }
        CExpr::Graph(..)
        | CExpr::Subquery { .. }
        | CExpr::MapProjection { .. }
        | CExpr::PathOf { .. }
        | CExpr::PropsMatch(..)
        | CExpr::HasEdge { .. }
        | CExpr::HasLabels(..)
        | CExpr::LabelTest(..) => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn value() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            (-3i64..3).prop_map(Value::Int),
            prop_oneof![Just(-0.0), Just(0.0), Just(1.0), Just(1.5), Just(f64::NAN), Just(2.0)].prop_map(Value::Float),
            prop_oneof![Just("a"), Just("b"), Just("1")].prop_map(Value::string),
        ];
        leaf.prop_recursive(2, 12, 3, |inner| proptest::collection::vec(inner, 0..3).prop_map(Value::list))
    }

    proptest! {
        #[test]
        fn answers_as_comparing_every_element(items in proptest::collection::vec(value(), 0..40), v in value()) {
            let expected = compare::in_list(&v, &items);
            let list = ConstantList::new(&Value::list(items)).unwrap();
            prop_assert_eq!(list.contains(&v), expected);
        }
    }
}
