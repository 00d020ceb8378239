//! The node counts per label a statement is planned on. A pattern with several labelled nodes and nothing better
//! to start from (a bound node, an id, a key) starts at the node whose label has the fewest nodes, and a node of
//! several labels is scanned by its rarest one. The counts are the graph's at planning time; a cached plan is
//! made again when one of the counts it rested on has moved by more than a factor of two (a graph filled after
//! its queries were first planned), so a plan never stays tied to the graph it first met. Whether a relationship
//! property index exists is recorded the same way: a pattern that starts at one is planned again once it is
//! dropped, and one that could have is planned again once it is created; so are the composite indexes of a
//! label whose node a pattern looks up.

use std::sync::Arc;

use plexus_storage::{Catalog, GraphState, LabelId, PropKeyId, TokenKind, TypeId};

use super::planner::Planner;
use crate::ast::NodePattern;

/// The property names of one composite index, in its order.
pub(crate) type KeyNames = Vec<Arc<str>>;

/// Counts are compared loosely: beyond this slack, a change of more than twice is a reason to plan again (a few
/// nodes more or less never are).
const SLACK: u64 = 64;

/// Node counts per label, read from the graph a statement is about to run on.
#[derive(Clone, Copy)]
pub(crate) struct LabelCounts<'g> {
    state: &'g GraphState,
    catalog: &'g Catalog,
}

impl<'g> LabelCounts<'g> {
    pub fn new(state: &'g GraphState, catalog: &'g Catalog) -> LabelCounts<'g> {
        LabelCounts { state, catalog }
    }

    /// The nodes with `label` (none for a label no node ever had).
    pub fn of(&self, label: &str) -> u64 {
        self.catalog.lookup(TokenKind::Label, label).map_or(0, |l| self.state.label_count(LabelId(l)))
    }

    /// The properties of each composite index on `label`'s nodes, in creation order.
    pub fn composites_of(&self, label: &str) -> Vec<KeyNames> {
        let Some(l) = self.catalog.lookup(TokenKind::Label, label) else { return Vec::new() };
        let name = |k: &PropKeyId| self.catalog.name(TokenKind::PropKey, k.0).unwrap_or_default();
        self.state.composite_keys(LabelId(l)).map(|keys| keys.iter().map(name).collect()).collect()
    }

    /// Whether [`Self::composites_of`] `label` is `had`, asked without building it: a cached plan asks on every
    /// run.
    fn composites_are(&self, label: &str, had: &[KeyNames]) -> bool {
        let Some(l) = self.catalog.lookup(TokenKind::Label, label) else { return had.is_empty() };
        let named = |k: &PropKeyId, name: &Arc<str>| self.catalog.lookup(TokenKind::PropKey, name) == Some(k.0);
        let mut now = self.state.composite_keys(LabelId(l));
        had.iter().all(|names| {
            now.next().is_some_and(|keys| keys.len() == names.len() && keys.iter().zip(names).all(|(k, n)| named(k, n)))
        }) && now.next().is_none()
    }

    /// Whether the relationships of type `ty` have a property index on `key`.
    pub fn has_rel_index(&self, ty: &str, key: &str) -> bool {
        match (self.catalog.lookup(TokenKind::Type, ty), self.catalog.lookup(TokenKind::PropKey, key)) {
            (Some(t), Some(k)) => self.state.has_rel_index(TypeId(t), PropKeyId(k)),
            _ => false,
        }
    }
}

/// The counts a plan's choices rested on.
#[derive(Clone, Debug, Default)]
pub(crate) struct PlannedOn {
    counts: Vec<(Arc<str>, u64)>,
    /// Relationship property indexes asked about, as (type, key, whether it existed).
    rel_indexes: Vec<(Arc<str>, Arc<str>, bool)>,
    /// The composite indexes of the labels asked about, as (label, each index's properties).
    composites: Vec<(Arc<str>, Vec<KeyNames>)>,
    /// A choice was made without counts (a statement compiled before it had a graph to run on, for `EXPLAIN`
    /// or to learn whether it writes): the first run with a graph plans it again.
    blind: bool,
}

impl PlannedOn {
    /// Whether the plan made a choice that counts decide.
    pub fn consults_counts(&self) -> bool {
        self.blind || !self.counts.is_empty() || !self.rel_indexes.is_empty() || !self.composites.is_empty()
    }

    /// Whether the plan still suits a graph with `now`'s counts (a plan that consulted none always does).
    pub fn still_fits(&self, now: &LabelCounts) -> bool {
        !self.blind
            && self.counts.iter().all(|(label, planned)| {
                let current = now.of(label);
                let (low, high) = if current < *planned { (current, *planned) } else { (*planned, current) };
                high <= low.saturating_mul(2).saturating_add(SLACK)
            })
            && self.rel_indexes.iter().all(|(ty, key, had)| now.has_rel_index(ty, key) == *had)
            && self.composites.iter().all(|(label, had)| now.composites_are(label, had))
    }

    /// The properties of each composite index on `label`'s nodes, recorded as [`PlannedOn::rel_index`] records
    /// its answer; none without a graph to ask.
    pub fn composites(&mut self, counts: Option<&LabelCounts>, label: &str) -> Vec<KeyNames> {
        let Some(counts) = counts else {
            self.blind = true;
            return Vec::new();
        };
        if let Some((_, had)) = self.composites.iter().find(|(l, _)| **l == *label) {
            return had.clone();
        }
        let now = counts.composites_of(label);
        self.composites.push((Arc::from(label), now.clone()));
        now
    }

    /// Whether the relationships of type `ty` have a property index on `key`, recorded so that a later run can
    /// tell whether that still holds; false without a graph to ask.
    pub fn rel_index(&mut self, counts: Option<&LabelCounts>, ty: &str, key: &str) -> bool {
        let Some(counts) = counts else {
            self.blind = true;
            return false;
        };
        if let Some((_, _, had)) = self.rel_indexes.iter().find(|(t, k, _)| **t == *ty && **k == *key) {
            return *had;
        }
        let has = counts.has_rel_index(ty, key);
        self.rel_indexes.push((Arc::from(ty), Arc::from(key), has));
        has
    }

    /// The count of `label` for a choice, recorded so that a later run can tell whether the choice still holds;
    /// `None` without counts.
    pub fn count(&mut self, counts: Option<&LabelCounts>, label: &str) -> Option<u64> {
        let Some(counts) = counts else {
            self.blind = true;
            return None;
        };
        if let Some((_, n)) = self.counts.iter().find(|(l, _)| &**l == label) {
            return Some(*n);
        }
        let n = counts.of(label);
        self.counts.push((Arc::from(label), n));
        Some(n)
    }
}

impl Planner<'_> {
    /// Of the nodes `candidate` accepts, the one whose rarest label has the fewest nodes in the graph planned
    /// for (the first on a tie, or without counts).
    pub(super) fn rarest(&mut self, nodes: &[&NodePattern], candidate: impl Fn(&NodePattern) -> bool) -> Option<usize> {
        let candidates: Vec<usize> = (0..nodes.len()).filter(|&i| candidate(nodes[i])).collect();
        if candidates.len() < 2 {
            return candidates.first().copied();
        }
        let mut best: Option<(u64, usize)> = None;
        for &i in &candidates {
            let Some((fewest, _)) = self.rarest_of(nodes[i]) else { return candidates.first().copied() };
            if best.is_none_or(|(least, _)| fewest < least) {
                best = Some((fewest, i));
            }
        }
        best.map(|(_, i)| i)
    }

    /// The position of the rarest of a node pattern's labels, when it has several and there are counts.
    pub(super) fn rarest_label(&mut self, np: &NodePattern) -> Option<usize> {
        if np.labels.len() < 2 {
            return None;
        }
        self.rarest_of(np).map(|(_, i)| i)
    }

    /// The node count of a node pattern's rarest label and that label's position (the first on a tie); `None`
    /// without counts or labels.
    fn rarest_of(&mut self, np: &NodePattern) -> Option<(u64, usize)> {
        let mut best: Option<(u64, usize)> = None;
        for (i, label) in np.labels.iter().enumerate() {
            let n = self.planned_on.count(self.counts.as_ref(), &label.name)?;
            if best.is_none_or(|(least, _)| n < least) {
                best = Some((n, i));
            }
        }
        best
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use plexus_storage::Store;

    #[test]
    fn a_plan_fits_until_a_count_it_used_moves_by_more_than_twice() {
        let store = Store::in_memory();
        let engine = crate::Engine::new();
        let create = |n: i64| {
            let params = [("n".to_string(), crate::Value::Int(n))].into_iter().collect();
            engine.execute(&store, "UNWIND range(1, $n) AS i CREATE (:A)", &params).unwrap();
        };
        create(100);
        let snapshot = store.read();
        let counts = LabelCounts::new(&snapshot, snapshot.catalog());
        let mut planned = PlannedOn::default();
        assert!(!planned.consults_counts());
        assert_eq!(planned.count(Some(&counts), "A"), Some(100));
        assert_eq!(planned.count(Some(&counts), "Nowhere"), Some(0));
        assert!(planned.consults_counts() && planned.still_fits(&counts));

        create(200);
        let snapshot = store.read();
        let grown = LabelCounts::new(&snapshot, snapshot.catalog());
        assert_eq!(grown.of("A"), 300);
        assert!(!planned.still_fits(&grown), "100 -> 300 is more than twice and the slack");

        let mut blind = PlannedOn::default();
        assert_eq!(blind.count(None, "A"), None);
        assert!(blind.consults_counts() && !blind.still_fits(&grown));
    }
}
