//! Property indexes: an ordered, persistent map from a property's value to the nodes of one label holding it.
//!
//! An index on `(label, key)` is a persistent B+tree ([`PSet`]) of `(IndexKey, node id)` entries, so a snapshot
//! copies it in O(1) and a transaction's private copy shares every node it does not change. A relationship
//! property index ([`RelPropertyIndex`]) is the same tree over `(IndexKey, relationship id)` for the
//! relationships of one type, and a composite index ([`CompositeIndex`]) files nodes under the list of several
//! properties' keys. [`IndexKey`] is a value
//! projected onto the order Cypher's predicates need:
//!
//! * values of different types are kept apart in *families* (booleans, numbers, strings, bytes, each temporal
//!   type, durations, lists, and `NaN` on its own), and a range never leaves the family of its bounds;
//! * integers and floats form one family ordered numerically and exactly (`1 = 1.0`, `2^53 + 1 > 2.0^53`,
//!   `-0.0 = 0.0`), so `n.x > 1` finds `1.5` and `2`;
//! * strings by code point (byte-wise UTF-8), booleans `false < true`;
//! * zoned times and datetimes by the instant they denote (as Cypher's `=` and `<` do), local temporal values by
//!   their value; durations by their components (for equality only: Cypher does not order durations);
//! * lists element by element, then by length (for equality; ranges over lists are answered by filtering the
//!   list family with Cypher's list comparison).
//!
//! `NaN` is indexed in its own family, which equality and ranges never reach: in Cypher `NaN` equals nothing and
//! every inequality involving it is false. `null` is not a stored value, so it is never indexed.

use std::cmp::Ordering;
use std::ops::{Bound, ControlFlow};
use std::sync::Arc;

use crate::ids::{LabelId, NodeId, PropKeyId, RelId, TypeId};
use crate::pset::PSet;
use crate::value::{Crs, Value};

/// A property value in index order (see the module documentation).
#[derive(Clone, Debug)]
pub enum IndexKey {
    Bool(bool),
    Int(i64),
    /// Never NaN.
    Float(f64),
    NaN,
    String(Arc<str>),
    Bytes(Arc<[u8]>),
    /// Days since the epoch.
    Date(i64),
    /// Nanoseconds since midnight.
    LocalTime(i64),
    /// Nanoseconds since midnight UTC (not wrapped into one day): the instant a time with an offset denotes.
    Time(i64),
    /// Seconds and nanoseconds since the epoch, as if UTC.
    LocalDateTime(i64, u32),
    /// The UTC instant.
    DateTime(i64, u32),
    /// Months, days, seconds, nanoseconds.
    Duration(Arc<(i64, i64, i64, i32)>),
    /// System and coordinates (zero beyond the system's dimensions; never NaN).
    Point(Arc<(Crs, [f64; 3])>),
    List(Arc<[IndexKey]>),
}

/// The families of [`IndexKey`], in index order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Family {
    Bool,
    Number,
    NaN,
    String,
    Bytes,
    Date,
    LocalTime,
    Time,
    LocalDateTime,
    DateTime,
    Duration,
    Point,
    List,
}

impl IndexKey {
    /// The key of a stored value; `None` for `null`.
    pub fn from_value(v: &Value) -> Option<IndexKey> {
        Some(match v {
            Value::Null => return None,
            Value::Bool(b) => IndexKey::Bool(*b),
            Value::Int(i) => IndexKey::Int(*i),
            Value::Float(f) if f.is_nan() => IndexKey::NaN,
            Value::Float(f) => IndexKey::Float(*f),
            Value::String(s) => IndexKey::String(s.clone()),
            Value::Bytes(b) => IndexKey::Bytes(b.clone()),
            Value::Date(d) => IndexKey::Date(d.days),
            Value::LocalTime(t) => IndexKey::LocalTime(t.nanos),
            // |nanos| < 86_400e9 and |offset| < 18 h: no overflow.
            Value::Time(t) => IndexKey::Time(t.nanos - t.offset_seconds as i64 * 1_000_000_000),
            Value::LocalDateTime(t) => IndexKey::LocalDateTime(t.seconds, t.nanos),
            Value::DateTime(t) => IndexKey::DateTime(t.seconds, t.nanos),
            Value::Duration(d) => IndexKey::Duration(Arc::new((d.months, d.days, d.seconds, d.nanos))),
            Value::Point(p) => {
                let mut coords = [0.0; 3];
                coords[..p.coords().len()].copy_from_slice(p.coords());
                IndexKey::Point(Arc::new((p.crs(), coords)))
            }
            Value::List(items) => {
                IndexKey::List(items.iter().map(|x| IndexKey::from_value(x).unwrap_or(IndexKey::NaN)).collect())
            }
        })
    }

    fn family(&self) -> Family {
        match self {
            IndexKey::Bool(_) => Family::Bool,
            IndexKey::Int(_) | IndexKey::Float(_) => Family::Number,
            IndexKey::NaN => Family::NaN,
            IndexKey::String(_) => Family::String,
            IndexKey::Bytes(_) => Family::Bytes,
            IndexKey::Date(_) => Family::Date,
            IndexKey::LocalTime(_) => Family::LocalTime,
            IndexKey::Time(_) => Family::Time,
            IndexKey::LocalDateTime(..) => Family::LocalDateTime,
            IndexKey::DateTime(..) => Family::DateTime,
            IndexKey::Duration(_) => Family::Duration,
            IndexKey::Point(_) => Family::Point,
            IndexKey::List(_) => Family::List,
        }
    }

    /// The smallest key of a family that ranges can start from.
    fn family_min(f: Family) -> IndexKey {
        match f {
            Family::Bool => IndexKey::Bool(false),
            Family::Number => IndexKey::Float(f64::NEG_INFINITY),
            Family::NaN => IndexKey::NaN,
            Family::String => IndexKey::String(Arc::from("")),
            Family::Bytes => IndexKey::Bytes(Arc::from(&[][..])),
            Family::Date => IndexKey::Date(i64::MIN),
            Family::LocalTime => IndexKey::LocalTime(i64::MIN),
            Family::Time => IndexKey::Time(i64::MIN),
            Family::LocalDateTime => IndexKey::LocalDateTime(i64::MIN, 0),
            Family::DateTime => IndexKey::DateTime(i64::MIN, 0),
            Family::Duration => IndexKey::Duration(Arc::new((i64::MIN, i64::MIN, i64::MIN, i32::MIN))),
            Family::Point => IndexKey::Point(Arc::new((Crs::Wgs84, [f64::NEG_INFINITY; 3]))),
            Family::List => IndexKey::List(Arc::from(Vec::new())),
        }
    }

    /// Whether Cypher's `=` can be true between a value with this key and another (false for `NaN` and lists
    /// holding one).
    fn can_equal(&self) -> bool {
        match self {
            IndexKey::NaN => false,
            IndexKey::List(items) => items.iter().all(IndexKey::can_equal),
            _ => true,
        }
    }

    /// Cypher's `<`/`>` comparability of two keys: `Some(order)` when comparable and ordered, `None` when the
    /// comparison is `null` or `false` (different types, durations, bytes, `NaN`).
    fn cypher_cmp(&self, other: &IndexKey) -> Option<Ordering> {
        let (f, g) = (self.family(), other.family());
        if f != g {
            return None;
        }
        match f {
            Family::NaN | Family::Bytes | Family::Duration => None,
            // Points are not ordered by `<`; `<=` holds between equal ones.
            Family::Point => (self.cmp(other) == Ordering::Equal).then_some(Ordering::Equal),
            Family::List => {
                let (IndexKey::List(a), IndexKey::List(b)) = (self, other) else { unreachable!() };
                for (x, y) in a.iter().zip(b.iter()) {
                    match x.cypher_cmp(y)? {
                        Ordering::Equal => {}
                        o => return Some(o),
                    }
                }
                Some(a.len().cmp(&b.len()))
            }
            _ => Some(self.cmp(other)),
        }
    }
}

/// Compares an integer with a float exactly (`f` is not NaN).
fn cmp_int_float(i: i64, f: f64) -> Ordering {
    const TWO_63: f64 = 9_223_372_036_854_775_808.0;
    if f >= TWO_63 {
        return Ordering::Less;
    }
    if f < -TWO_63 {
        return Ordering::Greater;
    }
    let whole = f.trunc();
    // In range, so exact.
    i.cmp(&(whole as i64)).then_with(|| 0.0f64.partial_cmp(&(f - whole)).unwrap_or(Ordering::Equal))
}

impl Ord for IndexKey {
    #[inline]
    fn cmp(&self, other: &Self) -> Ordering {
        match (self, other) {
            (IndexKey::Int(a), IndexKey::Int(b)) => a.cmp(b),
            _ => self.cmp_general(other),
        }
    }
}

impl IndexKey {
    fn cmp_general(&self, other: &Self) -> Ordering {
        use IndexKey::*;
        match (self, other) {
            (Bool(a), Bool(b)) => a.cmp(b),
            (Int(a), Int(b)) => a.cmp(b),
            (Float(a), Float(b)) => a.partial_cmp(b).unwrap_or(Ordering::Equal),
            (Int(a), Float(b)) => cmp_int_float(*a, *b),
            (Float(a), Int(b)) => cmp_int_float(*b, *a).reverse(),
            (NaN, NaN) => Ordering::Equal,
            (String(a), String(b)) => a.cmp(b),
            (Bytes(a), Bytes(b)) => a.cmp(b),
            (Date(a), Date(b)) | (LocalTime(a), LocalTime(b)) | (Time(a), Time(b)) => a.cmp(b),
            (LocalDateTime(a, x), LocalDateTime(b, y)) | (DateTime(a, x), DateTime(b, y)) => (a, x).cmp(&(b, y)),
            (Duration(a), Duration(b)) => a.cmp(b),
            (Point(a), Point(b)) => a.0.cmp(&b.0).then_with(|| {
                a.1.iter().zip(b.1.iter()).map(|(x, y)| x.total_cmp(y)).find(|o| o.is_ne()).unwrap_or(Ordering::Equal)
            }),
            (List(a), List(b)) => a.iter().cmp(b.iter()),
            _ => self.family().cmp(&other.family()),
        }
    }
}

impl PartialOrd for IndexKey {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for IndexKey {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for IndexKey {}

/// One index entry: a value and a node holding it. Ordered by value, then node id.
pub type IndexEntry = (IndexKey, u64);

/// A property index on `(label, key)`.
#[derive(Clone)]
pub struct PropertyIndex {
    pub label: LabelId,
    pub key: PropKeyId,
    pub entries: PSet<IndexEntry>,
    /// The name its creator gave, if any.
    pub name: Option<Arc<str>>,
}

impl PropertyIndex {
    /// An index over `entries`, which may come in any order.
    pub fn build(label: LabelId, key: PropKeyId, entries: Vec<IndexEntry>) -> PropertyIndex {
        PropertyIndex { label, key, entries: entry_tree(entries), name: None }
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Calls `f` with every node whose value equals `value` under Cypher's `=`, by node id.
    pub fn visit_eq<B>(&self, value: &Value, mut f: impl FnMut(NodeId) -> ControlFlow<B>) -> ControlFlow<B> {
        visit_eq(&self.entries, value, |id| f(NodeId(id)))
    }

    /// Calls `f` with every node whose value `v` satisfies `lower < v` (or `<=`) and `v < upper` (or `<=`) under
    /// Cypher's comparison, ascending by value, then node id. An unbounded side stays within the bounded side's
    /// type; with both sides unbounded nothing is visited (use [`PropertyIndex::visit_all`]). Bounds that
    /// compare with nothing (`null`, `NaN`, durations, bytes, or two bounds of different types) visit nothing.
    pub fn visit_range<B>(
        &self,
        lower: Bound<&Value>,
        upper: Bound<&Value>,
        mut f: impl FnMut(NodeId) -> ControlFlow<B>,
    ) -> ControlFlow<B> {
        visit_range(&self.entries, lower, upper, |id| f(NodeId(id)))
    }

    /// Calls `f` with every indexed node (every node of the label holding the property), in index order.
    pub fn visit_all<B>(&self, mut f: impl FnMut(NodeId) -> ControlFlow<B>) -> ControlFlow<B> {
        self.entries.visit(|(_, id)| f(NodeId(*id)))
    }

    pub(crate) fn insert(&mut self, value: &Value, id: NodeId) {
        insert(&mut self.entries, value, id.0);
    }

    pub(crate) fn remove(&mut self, value: &Value, id: NodeId) {
        remove(&mut self.entries, value, id.0);
    }
}

/// A property index on the relationships of one type: `(IndexKey, relationship id)` entries, searched as
/// [`PropertyIndex`] searches nodes.
#[derive(Clone)]
pub struct RelPropertyIndex {
    pub ty: TypeId,
    pub key: PropKeyId,
    pub entries: PSet<IndexEntry>,
    /// The name its creator gave, if any.
    pub name: Option<Arc<str>>,
    /// Whether it backs a uniqueness constraint: no two relationships of its type share a value.
    pub unique: bool,
}

impl RelPropertyIndex {
    /// An index over `entries`, which may come in any order.
    pub fn build(ty: TypeId, key: PropKeyId, entries: Vec<IndexEntry>) -> RelPropertyIndex {
        RelPropertyIndex { ty, key, entries: entry_tree(entries), name: None, unique: false }
    }

    /// The relationships other than `id` filed under `value`'s key: candidates for holding it already (the index
    /// keys zoned values by instant alone; the caller compares the stored values).
    pub fn holders_other_than(&self, value: &Value, id: RelId) -> Vec<RelId> {
        let Some(key) = IndexKey::from_value(value) else { return Vec::new() };
        holders_other_than(&self.entries, key, id.0).into_iter().map(RelId).collect()
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// [`PropertyIndex::visit_eq`] for relationships.
    pub fn visit_eq<B>(&self, value: &Value, mut f: impl FnMut(RelId) -> ControlFlow<B>) -> ControlFlow<B> {
        visit_eq(&self.entries, value, |id| f(RelId(id)))
    }

    /// [`PropertyIndex::visit_range`] for relationships.
    pub fn visit_range<B>(
        &self,
        lower: Bound<&Value>,
        upper: Bound<&Value>,
        mut f: impl FnMut(RelId) -> ControlFlow<B>,
    ) -> ControlFlow<B> {
        visit_range(&self.entries, lower, upper, |id| f(RelId(id)))
    }

    pub(crate) fn insert(&mut self, value: &Value, id: RelId) {
        insert(&mut self.entries, value, id.0);
    }

    pub(crate) fn remove(&mut self, value: &Value, id: RelId) {
        remove(&mut self.entries, value, id.0);
    }
}

/// A composite index on several properties of the nodes of one label: a node holding every one of them is
/// filed under the list of their keys, in the index's order of properties, so an equality on all of them is one
/// seek (`[1, 'a']` finds `[1.0, 'a']`, as `=` does).
#[derive(Clone)]
pub struct CompositeIndex {
    pub label: LabelId,
    /// Two or more distinct keys.
    pub keys: Vec<PropKeyId>,
    pub entries: PSet<IndexEntry>,
    /// The name its creator gave, if any.
    pub name: Option<Arc<str>>,
    /// Whether it backs a uniqueness constraint: no two nodes of its label share all its values.
    pub unique: bool,
}

impl CompositeIndex {
    /// The nodes other than `id` filed under `key` (from [`CompositeIndex::key_of`]): candidates for holding its
    /// values already (the caller compares the stored values).
    pub fn holders_other_than(&self, key: &IndexKey, id: NodeId) -> Vec<NodeId> {
        holders_other_than(&self.entries, key.clone(), id.0).into_iter().map(NodeId).collect()
    }

    /// The entry key of values in the index's order of properties; none when one is null (not indexed).
    pub fn key_of<'v>(values: impl IntoIterator<Item = Option<&'v Value>>) -> Option<IndexKey> {
        let keys: Option<Vec<IndexKey>> = values.into_iter().map(|v| v.and_then(IndexKey::from_value)).collect();
        Some(IndexKey::List(Arc::from(keys?)))
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Calls `f` with every node whose first values equal `prefix` under Cypher's `=` (all the index's
    /// properties but the last) and whose last value lies between the bounds under Cypher's comparison (as
    /// [`PropertyIndex::visit_range`] compares), by that value, then id.
    pub fn visit_prefix_range<B>(
        &self,
        prefix: &[Value],
        lower: Bound<&Value>,
        upper: Bound<&Value>,
        mut f: impl FnMut(NodeId) -> ControlFlow<B>,
    ) -> ControlFlow<B> {
        let none = ControlFlow::Continue(());
        if prefix.len() + 1 != self.keys.len() {
            return none;
        }
        let Some(IndexKey::List(prefix)) = Self::key_of(prefix.iter().map(Some)) else { return none };
        if !prefix.iter().all(IndexKey::can_equal) {
            return none;
        }
        let key = |b: Bound<&Value>| -> Option<Bound<IndexKey>> {
            Some(match b {
                Bound::Included(v) => Bound::Included(IndexKey::from_value(v)?),
                Bound::Excluded(v) => Bound::Excluded(IndexKey::from_value(v)?),
                Bound::Unbounded => Bound::Unbounded,
            })
        };
        let (Some(lo), Some(hi)) = (key(lower), key(upper)) else { return none };
        let family = match (bound_key(&lo), bound_key(&hi)) {
            (Some(a), Some(b)) if a.family() != b.family() => return none,
            (Some(k), _) | (None, Some(k)) => k.family(),
            (None, None) => return none,
        };
        // Lists compare element by element under Cypher's rules, which the index order does not follow: their
        // whole family is walked.
        let from = match (&lo, family) {
            (Bound::Included(k) | Bound::Excluded(k), f) if f != Family::List => k.clone(),
            _ => IndexKey::family_min(family),
        };
        let start = (IndexKey::List(prefix.iter().cloned().chain([from]).collect()), 0);
        let flow = self.entries.visit_from(Bound::Included(&start), |(k, id)| {
            let IndexKey::List(parts) = k else { return ControlFlow::Break(None) };
            let (last, first) = parts.split_last().expect("a composite key has two or more parts");
            if first != &prefix[..] || last.family() != family {
                return ControlFlow::Break(None);
            }
            if family != Family::List && matches!(&hi, Bound::Included(h) | Bound::Excluded(h) if last > h) {
                return ControlFlow::Break(None);
            }
            let above = match &lo {
                Bound::Included(b) => matches!(last.cypher_cmp(b), Some(Ordering::Greater | Ordering::Equal)),
                Bound::Excluded(b) => last.cypher_cmp(b) == Some(Ordering::Greater),
                Bound::Unbounded => true,
            };
            let below = match &hi {
                Bound::Included(b) => matches!(last.cypher_cmp(b), Some(Ordering::Less | Ordering::Equal)),
                Bound::Excluded(b) => last.cypher_cmp(b) == Some(Ordering::Less),
                Bound::Unbounded => true,
            };
            if above && below {
                f(NodeId(*id)).map_break(Some)?;
            }
            ControlFlow::Continue(())
        });
        match flow {
            ControlFlow::Break(Some(b)) => ControlFlow::Break(b),
            _ => ControlFlow::Continue(()),
        }
    }

    /// Calls `f` with every node whose values equal `values` (in the index's order) under Cypher's `=`, by id.
    pub fn visit_eq<B>(&self, values: &[Value], mut f: impl FnMut(NodeId) -> ControlFlow<B>) -> ControlFlow<B> {
        let Some(key) = Self::key_of(values.iter().map(Some)) else { return ControlFlow::Continue(()) };
        visit_key(&self.entries, key, |id| f(NodeId(id)))
    }
}

/// The tree of `entries`, which may come in any order and repeat.
pub(crate) fn entry_tree(mut entries: Vec<IndexEntry>) -> PSet<IndexEntry> {
    entries.sort_unstable();
    entries.dedup();
    PSet::from_sorted(entries)
}

fn insert(entries: &mut PSet<IndexEntry>, value: &Value, id: u64) {
    if let Some(k) = IndexKey::from_value(value) {
        entries.insert((k, id));
    }
}

fn remove(entries: &mut PSet<IndexEntry>, value: &Value, id: u64) {
    if let Some(k) = IndexKey::from_value(value) {
        entries.remove(&(k, id));
    }
}

/// The ids whose value equals `value` under Cypher's `=`, by id.
fn visit_eq<B>(entries: &PSet<IndexEntry>, value: &Value, f: impl FnMut(u64) -> ControlFlow<B>) -> ControlFlow<B> {
    let Some(k) = IndexKey::from_value(value) else { return ControlFlow::Continue(()) };
    visit_key(entries, k, f)
}

/// The ids filed under `key`, by id; none when the key equals nothing (it holds a NaN).
fn visit_key<B>(entries: &PSet<IndexEntry>, key: IndexKey, f: impl FnMut(u64) -> ControlFlow<B>) -> ControlFlow<B> {
    if !key.can_equal() {
        return ControlFlow::Continue(());
    }
    // Only the lower end is located (one descent instead of two); the walk stops at the first other key.
    let start = (key, 0);
    walk(entries, Bound::Included(&start), |k| *k != start.0, f)
}

/// The ids other than `id` filed under `key`: who may already hold a value that must be unique. NaN is one key
/// here (as for a unique key, and as `DISTINCT` counts it), though `=` never holds for it; zoned values of one
/// instant share a key, so callers compare the stored values before refusing.
fn holders_other_than(entries: &PSet<IndexEntry>, key: IndexKey, id: u64) -> Vec<u64> {
    let mut holders = Vec::new();
    let start = (key, 0);
    let _ = walk::<()>(
        entries,
        Bound::Included(&start),
        |k| *k != start.0,
        |other| {
            if other != id {
                holders.push(other);
            }
            ControlFlow::Continue(())
        },
    );
    holders
}

/// The runs of two or more ids filed under one key in sorted `entries`: what may stop a uniqueness constraint
/// from being declared over them (keys as [`holders_other_than`] has them; callers compare the stored values).
pub(crate) fn shared_keys(entries: &PSet<IndexEntry>) -> Vec<Vec<u64>> {
    let mut runs: Vec<Vec<u64>> = Vec::new();
    let mut previous: Option<IndexKey> = None;
    let _ = entries.visit::<()>(|(key, id)| {
        match (&previous, runs.last_mut()) {
            (Some(p), Some(run)) if p == key => run.push(*id),
            _ => runs.push(vec![*id]),
        }
        previous = Some(key.clone());
        ControlFlow::Continue(())
    });
    runs.retain(|run| run.len() > 1);
    runs
}

/// Whether two stored values are one under a uniqueness constraint: as a unique key compares them
/// ([`crate::keymap::key_form`]: `1` and `1.0` are one, NaN is one, zoned values differ by zone).
pub(crate) fn same_unique_value(a: &Value, b: &Value) -> bool {
    crate::keymap::key_form(a) == crate::keymap::key_form(b)
}

/// The ids whose value lies between the bounds (see [`PropertyIndex::visit_range`]).
fn visit_range<B>(
    entries: &PSet<IndexEntry>,
    lower: Bound<&Value>,
    upper: Bound<&Value>,
    f: impl FnMut(u64) -> ControlFlow<B>,
) -> ControlFlow<B> {
    let key = |b: Bound<&Value>| -> Option<Bound<IndexKey>> {
        Some(match b {
            Bound::Included(v) => Bound::Included(IndexKey::from_value(v)?),
            Bound::Excluded(v) => Bound::Excluded(IndexKey::from_value(v)?),
            Bound::Unbounded => Bound::Unbounded,
        })
    };
    let (Some(lo), Some(hi)) = (key(lower), key(upper)) else { return ControlFlow::Continue(()) };
    let family = match (bound_key(&lo), bound_key(&hi)) {
        (None, None) => return ControlFlow::Continue(()),
        (Some(a), Some(b)) if a.family() != b.family() => return ControlFlow::Continue(()),
        (Some(k), _) | (None, Some(k)) => k.family(),
    };
    match family {
        Family::NaN | Family::Bytes | Family::Duration => ControlFlow::Continue(()),
        Family::List => visit_list_range(entries, &lo, &hi, f),
        // `<=` and `>=` hold only between equal points, `<` and `>` never.
        Family::Point => match (&lo, &hi) {
            (Bound::Excluded(_), _) | (_, Bound::Excluded(_)) => ControlFlow::Continue(()),
            (Bound::Included(a), Bound::Included(b)) if a != b => ControlFlow::Continue(()),
            (Bound::Included(k), _) | (_, Bound::Included(k)) => {
                let start = (k.clone(), 0);
                walk(entries, Bound::Included(&start), |key| *key != start.0, f)
            }
            (Bound::Unbounded, Bound::Unbounded) => ControlFlow::Continue(()),
        },
        _ => {
            if let (Some(a), Some(b)) = (bound_key(&lo), bound_key(&hi)) {
                match a.cmp(b) {
                    Ordering::Greater => return ControlFlow::Continue(()),
                    Ordering::Equal if matches!(lo, Bound::Excluded(_)) || matches!(hi, Bound::Excluded(_)) => {
                        return ControlFlow::Continue(())
                    }
                    _ => {}
                }
            }
            let start = match lo {
                Bound::Included(k) => Bound::Included((k, 0)),
                Bound::Excluded(k) => Bound::Excluded((k, u64::MAX)),
                Bound::Unbounded => Bound::Included((IndexKey::family_min(family), 0)),
            };
            // Only the lower end is located; the walk stops at the upper bound or the end of the family.
            let past = |k: &IndexKey| match &hi {
                Bound::Included(h) => k > h,
                Bound::Excluded(h) => k >= h,
                Bound::Unbounded => k.family() != family,
            };
            walk(entries, start.as_ref(), past, f)
        }
    }
}

/// Ranges over lists: the list family is walked and filtered with Cypher's list comparison (lists of
/// different element types do not compare, so matches are not one contiguous run of the index).
fn visit_list_range<B>(
    entries: &PSet<IndexEntry>,
    lo: &Bound<IndexKey>,
    hi: &Bound<IndexKey>,
    mut f: impl FnMut(u64) -> ControlFlow<B>,
) -> ControlFlow<B> {
    let start = (IndexKey::family_min(Family::List), 0);
    entries.visit_from(Bound::Included(&start), |(k, id)| {
        let ok_lo = match lo {
            Bound::Included(b) => matches!(k.cypher_cmp(b), Some(Ordering::Greater | Ordering::Equal)),
            Bound::Excluded(b) => k.cypher_cmp(b) == Some(Ordering::Greater),
            Bound::Unbounded => true,
        };
        let ok_hi = match hi {
            Bound::Included(b) => matches!(k.cypher_cmp(b), Some(Ordering::Less | Ordering::Equal)),
            Bound::Excluded(b) => k.cypher_cmp(b) == Some(Ordering::Less),
            Bound::Unbounded => true,
        };
        if ok_lo && ok_hi {
            f(*id)?;
        }
        ControlFlow::Continue(())
    })
}

/// Visits the entries from `start` until `stop` says a key is past the end, handing their ids to `f`.
fn walk<B>(
    entries: &PSet<IndexEntry>,
    start: Bound<&IndexEntry>,
    stop: impl Fn(&IndexKey) -> bool,
    mut f: impl FnMut(u64) -> ControlFlow<B>,
) -> ControlFlow<B> {
    let flow = entries.visit_from(start, |(k, id)| {
        if stop(k) {
            return ControlFlow::Break(None);
        }
        f(*id).map_break(Some)
    });
    match flow {
        ControlFlow::Break(Some(b)) => ControlFlow::Break(b),
        _ => ControlFlow::Continue(()),
    }
}

fn bound_key(b: &Bound<IndexKey>) -> Option<&IndexKey> {
    match b {
        Bound::Included(k) | Bound::Excluded(k) => Some(k),
        Bound::Unbounded => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::{DateTime, Duration, Time};

    fn key(v: impl Into<Value>) -> IndexKey {
        IndexKey::from_value(&v.into()).unwrap()
    }

    #[test]
    fn integers_and_floats_interleave_exactly() {
        let mut keys = vec![key(2i64), key(1.5), key(-0.0), key(0i64), key(f64::INFINITY), key(i64::MAX), key(-3.25)];
        keys.sort();
        let expect = [key(-3.25), key(0i64), key(0i64), key(1.5), key(2i64), key(i64::MAX), key(f64::INFINITY)];
        assert_eq!(keys, expect);
        assert_eq!(key(1i64), key(1.0));
        assert_eq!(key(-0.0), key(0.0));
        // 2^53 + 1 is not a float; the comparison must not round it.
        assert!(key((1i64 << 53) + 1) > key((1u64 << 53) as f64));
        assert!(key(i64::MAX) < key(9_223_372_036_854_775_808.0));
        assert!(key(i64::MIN) == key(-9_223_372_036_854_775_808.0));
    }

    #[test]
    fn families_stay_apart() {
        assert!(key(true) < key(i64::MIN));
        assert!(key(f64::INFINITY) < IndexKey::NaN);
        assert!(IndexKey::NaN < key(""));
        assert!(key("zzz") < key(vec![1u8]));
        assert!(key(vec![1i64]) > key("a"));
        assert_eq!(IndexKey::from_value(&Value::Null), None);
        assert_eq!(key(f64::NAN), IndexKey::NaN);
    }

    #[test]
    fn zoned_values_order_by_instant() {
        let t = |nanos: i64, offset: i32| key(Time { nanos, offset_seconds: offset });
        // 12:00+01:00 is 11:00Z, before 11:30Z.
        assert!(t(12 * 3_600_000_000_000, 3600) < t(11 * 3_600_000_000_000 + 1_800_000_000_000, 0));
        assert_eq!(t(12 * 3_600_000_000_000, 3600), t(11 * 3_600_000_000_000, 0));
        let dt = |seconds: i64, offset: i32| key(DateTime { seconds, nanos: 0, offset_seconds: offset, zone: None });
        assert_eq!(dt(100, 0), dt(100, 7200));
        let d = key(Duration { months: 1, days: 0, seconds: 0, nanos: 0 });
        assert_eq!(d.cypher_cmp(&d), None);
    }

    fn index(values: &[Value]) -> PropertyIndex {
        let entries =
            values.iter().enumerate().filter_map(|(i, v)| IndexKey::from_value(v).map(|k| (k, i as u64))).collect();
        PropertyIndex::build(LabelId(0), PropKeyId(0), entries)
    }

    fn collect(f: impl FnOnce(&mut dyn FnMut(NodeId) -> ControlFlow<()>)) -> Vec<u64> {
        let mut out = Vec::new();
        f(&mut |n| {
            out.push(n.0);
            ControlFlow::Continue(())
        });
        out
    }

    #[test]
    fn seeks_and_ranges_follow_cypher() {
        let values: Vec<Value> = vec![
            1i64.into(),                        // 0
            1.5.into(),                         // 1
            2i64.into(),                        // 2
            "a".into(),                         // 3
            "b".into(),                         // 4
            f64::NAN.into(),                    // 5
            true.into(),                        // 6
            1.0.into(),                         // 7
            vec![1i64, 2].into(),               // 8
            vec![1.0, 3.0].into(),              // 9
            vec!["x"].into(),                   // 10
            Value::List(Arc::from(Vec::new())), // 11
        ];
        let ix = index(&values);
        let eq = |v: Value| {
            collect(|f| {
                let _ = ix.visit_eq(&v, f);
            })
        };
        let range = |lo: Bound<&Value>, hi: Bound<&Value>| {
            collect(|f| {
                let _ = ix.visit_range(lo, hi, f);
            })
        };
        assert_eq!(eq(1i64.into()), vec![0, 7]);
        assert_eq!(eq(1.0.into()), vec![0, 7]);
        assert_eq!(eq(f64::NAN.into()), Vec::<u64>::new());
        assert_eq!(eq(Value::Null), Vec::<u64>::new());
        assert_eq!(eq(vec![1.0, 2.0].into()), vec![8]);
        let one = Value::Int(1);
        assert_eq!(range(Bound::Excluded(&one), Bound::Unbounded), vec![1, 2]);
        assert_eq!(range(Bound::Included(&one), Bound::Unbounded), vec![0, 7, 1, 2]);
        assert_eq!(range(Bound::Unbounded, Bound::Excluded(&Value::Float(1.5))), vec![0, 7]);
        assert_eq!(range(Bound::Unbounded, Bound::Included(&Value::from("a"))), vec![3]);
        assert_eq!(range(Bound::Excluded(&Value::from("a")), Bound::Unbounded), vec![4]);
        assert_eq!(range(Bound::Included(&Value::from(false)), Bound::Unbounded), vec![6]);
        // Bounds of different types, inverted bounds, NaN and null bounds find nothing.
        assert!(range(Bound::Included(&one), Bound::Included(&Value::from("z"))).is_empty());
        assert!(range(Bound::Included(&Value::Int(3)), Bound::Included(&one)).is_empty());
        assert!(range(Bound::Excluded(&one), Bound::Excluded(&one)).is_empty());
        assert!(range(Bound::Included(&Value::Float(f64::NAN)), Bound::Unbounded).is_empty());
        assert!(range(Bound::Included(&Value::Null), Bound::Unbounded).is_empty());
        assert!(range(Bound::Unbounded, Bound::Unbounded).is_empty());
        // Lists: [1, 2] < [1.0, 3.0]; ["x"] does not compare with numbers; [] is below every list.
        let l = Value::from(vec![1i64, 2]);
        assert_eq!(range(Bound::Excluded(&l), Bound::Unbounded), vec![9]);
        assert_eq!(range(Bound::Unbounded, Bound::Included(&l)), vec![11, 8]);
        assert_eq!(range(Bound::Excluded(&Value::List(Arc::from(Vec::new()))), Bound::Unbounded), vec![8, 9, 10]);
    }
}
