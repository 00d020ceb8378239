//! Shortest-path searches between two bound nodes: breadth first for the shortest paths, or length by length
//! for those that pass a condition on whole paths and for the `SHORTEST k [GROUPS]` selectors.

use std::collections::{HashMap, HashSet, VecDeque};

use plexus_storage::{Direction, NodeId, RelId, TypeFilter};

use super::ctx::Ctx;
use super::expand::CycleWalk;
use super::BATCH;
use crate::error::Result;

/// What a shortest-path search looks for: paths from `a` to `b` along relationships of `filter` in `dir`, of
/// `min..=max` relationships; one of the shortest, or `all` of them.
pub(super) struct Search<'t> {
    pub a: NodeId,
    pub b: NodeId,
    pub dir: Direction,
    pub filter: TypeFilter<'t>,
    pub min: u64,
    pub max: u64,
    pub all: bool,
    /// How many paths are sought, or with `all`, how many lengths.
    pub count: u64,
    /// Whether a relationship's check depends on the way it is walked (a quantified path pattern's condition
    /// on its nodes): the check is then repeated where a search would otherwise reuse an earlier answer.
    pub oriented: bool,
    /// Whether paths from a node back to itself are sought (the GQL selectors), beyond the empty one.
    pub cycles: bool,
}

/// Paths a length-by-length search took, and lengths at which it took one, against what it seeks.
#[derive(Default)]
struct Tally {
    paths: u64,
    lengths: u64,
}

impl Tally {
    fn took_empty(&mut self) {
        (self.paths, self.lengths) = (1, 1);
    }

    /// Counts a path taken; whether the search has all it seeks (when it counts paths).
    fn took_path(&mut self, s: &Search) -> bool {
        self.paths += 1;
        !s.all && self.paths >= s.count
    }

    /// Counts the end of a length at which a path was `found`; whether the search has all it seeks (when it
    /// counts lengths).
    fn length_done(&mut self, s: &Search, found: bool) -> bool {
        self.lengths += u64::from(found);
        s.all && self.lengths >= s.count
    }

    fn has_all(&self, s: &Search) -> bool {
        (if s.all { self.lengths } else { self.paths }) >= s.count
    }
}

/// Whether a relationship walked from one node to the next, in the pattern's direction, may be on a path.
pub(super) type RelOk<'r> = dyn FnMut(RelId, NodeId, NodeId) -> Result<bool> + 'r;

/// Breadth-first search for the shortest paths from `a` to `b` (one, or all of the shortest length), following
/// only relationships that pass `rel_ok`.
pub(super) fn shortest_paths(ctx: &Ctx, s: &Search, rel_ok: &mut RelOk) -> Result<Vec<Vec<RelId>>> {
    let g = ctx.g();
    let (a, b) = (s.a, s.b);
    if a == b {
        return Ok(if s.min == 0 { vec![vec![]] } else { vec![] });
    }
    // parents[n] = the (relationship, previous node) pairs reaching n at its BFS depth.
    let mut parents: HashMap<NodeId, Vec<(RelId, NodeId)>> = HashMap::new();
    let mut depth_of: HashMap<NodeId, u64> = HashMap::new();
    depth_of.insert(a, 0);
    let mut frontier = VecDeque::from([a]);
    let mut found_depth = None;
    let mut steps = 0usize;
    while let Some(n) = frontier.pop_front() {
        let d = depth_of[&n];
        if found_depth.is_some_and(|f| d >= f) || d >= s.max {
            continue;
        }
        for e in g.rels_of(n, s.dir, s.filter) {
            steps += 1;
            if steps.is_multiple_of(BATCH) {
                ctx.check_interrupt()?;
            }
            match depth_of.get(&e.nbr) {
                None => {
                    if !rel_ok(e.rel, n, e.nbr)? {
                        continue;
                    }
                    depth_of.insert(e.nbr, d + 1);
                    parents.entry(e.nbr).or_default().push((e.rel, n));
                    if e.nbr == b {
                        found_depth = Some(d + 1);
                    } else {
                        frontier.push_back(e.nbr);
                    }
                }
                Some(&dn) if dn == d + 1 && s.all && rel_ok(e.rel, n, e.nbr)? => {
                    parents.entry(e.nbr).or_default().push((e.rel, n));
                }
                _ => {}
            }
        }
    }
    let Some(len) = found_depth else { return Ok(vec![]) };
    if len < s.min {
        return Ok(vec![]);
    }
    let mut out = Vec::new();
    let mut stack: Vec<(NodeId, Vec<RelId>)> = vec![(b, vec![])];
    while let Some((n, rels)) = stack.pop() {
        if n == a {
            let mut rels = rels;
            rels.reverse();
            out.push(rels);
            if !s.all {
                break;
            }
            continue;
        }
        for (rel, prev) in parents.get(&n).into_iter().flatten() {
            let mut r = rels.clone();
            r.push(*rel);
            stack.push((*prev, r));
        }
    }
    Ok(out)
}

/// The shortest paths from `a` to `b` that `accept` takes: paths are offered shortest first, every path of one
/// length before any longer one, and the search stops once `accept` took `count` of them, or with `all`, after
/// the `count`-th length at which it took one. Offering paths in length order is what makes a `WHERE` on the path part of
/// the search, as openCypher asks: the shortest path that passes, not the shortest path if it passes.
///
/// Paths of each length are enumerated depth first (relationships distinct within a path), cut off where the
/// node reached is further from `b` than the hops left; distances to `b` come from one backward search first.
/// That is exhaustive when many paths fail, so the query's interrupt is checked as it goes.
pub(super) fn shortest_paths_passing(
    ctx: &Ctx,
    s: &Search,
    rel_ok: &mut RelOk,
    accept: &mut dyn FnMut(&[RelId]) -> Result<bool>,
) -> Result<()> {
    let g = ctx.g();
    let (a, b) = (s.a, s.b);
    let mut tally = Tally::default();
    if a == b {
        if s.min == 0 && accept(&[])? {
            tally.took_empty();
        }
        // `shortestPath` between a node and itself finds the empty path or none; a selector goes on to cycles
        // while it wants more.
        if !s.cycles || tally.has_all(s) {
            return Ok(());
        }
    }
    let backward = match s.dir {
        Direction::Out => Direction::In,
        Direction::In => Direction::Out,
        Direction::Both => Direction::Both,
    };
    // Hops from each node to `b`, and the relationships that lie on some walk to `b`: no path to `b` can be
    // longer than there are of them.
    let mut to_b: HashMap<NodeId, u64> = HashMap::from([(b, 0)]);
    let mut on_walks: HashSet<RelId> = HashSet::new();
    let mut frontier = VecDeque::from([b]);
    let mut steps = 0usize;
    while let Some(n) = frontier.pop_front() {
        let d = to_b[&n];
        if d >= s.max {
            continue;
        }
        for e in g.rels_of(n, backward, s.filter) {
            steps += 1;
            if steps.is_multiple_of(BATCH) {
                ctx.check_interrupt()?;
            }
            if on_walks.contains(&e.rel) || !rel_ok(e.rel, e.nbr, n)? {
                continue;
            }
            on_walks.insert(e.rel);
            to_b.entry(e.nbr).or_insert_with(|| {
                frontier.push_back(e.nbr);
                d + 1
            });
        }
    }
    let Some(&nearest) = to_b.get(&a) else { return Ok(()) };
    let longest = s.max.min(on_walks.len() as u64);
    let mut path: Vec<RelId> = Vec::new();
    for len in nearest.max(s.min).max(1)..=longest {
        let mut found = false;
        // One frame per node of the path so far: the relationships out of it and how many have been tried.
        let mut frames = vec![(g.rels_of(a, s.dir, s.filter), 0usize, a)];
        while let Some((entries, next, at)) = frames.last_mut() {
            let Some(&e) = entries.get(*next) else {
                frames.pop();
                path.pop();
                continue;
            };
            *next += 1;
            let at = *at;
            steps += 1;
            if steps.is_multiple_of(BATCH) {
                ctx.check_interrupt()?;
            }
            let hops_left = len - path.len() as u64 - 1;
            if to_b.get(&e.nbr).is_none_or(|&d| d > hops_left)
                || path.contains(&e.rel)
                || !on_walks.contains(&e.rel)
                || (s.oriented && !rel_ok(e.rel, at, e.nbr)?)
            {
                continue;
            }
            path.push(e.rel);
            if hops_left == 0 {
                if accept(&path)? {
                    found = true;
                    if tally.took_path(s) {
                        return Ok(());
                    }
                }
                path.pop();
            } else {
                frames.push((g.rels_of(e.nbr, s.dir, s.filter), 0, e.nbr));
            }
        }
        if tally.length_done(s, found) {
            return Ok(());
        }
    }
    Ok(())
}

/// The shortest paths from `a` to `b` made of whole repetitions of a quantified path pattern of several
/// relationships (`cycle`, each of its steps with its own direction and types, each repetition meeting its
/// condition), offered to `accept` as [`shortest_paths_passing`] offers them; `s.min` and `s.max` count
/// repetitions. Distances to `b` come from a backward search over (node, step of the repetition) pairs, which
/// cuts off every walk that cannot reach `b` in the hops left.
pub(super) fn shortest_repetitions(
    ctx: &Ctx,
    s: &Search,
    cycle: &mut CycleWalk,
    accept: &mut dyn FnMut(&[RelId]) -> Result<bool>,
) -> Result<()> {
    let g = ctx.g();
    let k = cycle.len() as u64;
    let (a, b) = (s.a, s.b);
    let mut tally = Tally::default();
    if a == b && s.min == 0 {
        if accept(&[])? {
            tally.took_empty();
        }
        if tally.has_all(s) {
            return Ok(());
        }
    }
    let max_hops = s.max.saturating_mul(k);
    let backward = |d: Direction| match d {
        Direction::Out => Direction::In,
        Direction::In => Direction::Out,
        Direction::Both => Direction::Both,
    };
    // Hops from (node, step about to be taken) to `b` at a repetition's end, and the relationships on those walks.
    let mut to_b: HashMap<(NodeId, u64), u64> = HashMap::from([((b, 0), 0)]);
    let mut on_walks: HashSet<RelId> = HashSet::new();
    let mut frontier = VecDeque::from([(b, 0u64)]);
    let mut steps = 0usize;
    while let Some((n, phase)) = frontier.pop_front() {
        let d = to_b[&(n, phase)];
        if d >= max_hops {
            continue;
        }
        let before = (phase + k - 1) % k;
        let (dir, filter) = cycle.step(before as usize);
        for e in g.rels_of(n, backward(dir), filter) {
            steps += 1;
            if steps.is_multiple_of(BATCH) {
                ctx.check_interrupt()?;
            }
            on_walks.insert(e.rel);
            to_b.entry((e.nbr, before)).or_insert_with(|| {
                frontier.push_back((e.nbr, before));
                d + 1
            });
        }
    }
    let Some(&nearest) = to_b.get(&(a, 0)) else { return Ok(()) };
    let longest = max_hops.min(on_walks.len() as u64);
    let first = nearest.max(s.min.saturating_mul(k)).max(k);
    let mut path: Vec<RelId> = Vec::new();
    let mut nodes: Vec<NodeId> = vec![a];
    for len in (first..=longest).step_by(k as usize) {
        let mut found = false;
        let (dir, filter) = cycle.step(0);
        let mut frames = vec![(g.rels_of(a, dir, filter), 0usize)];
        while let Some((entries, next)) = frames.last_mut() {
            let Some(&e) = entries.get(*next) else {
                frames.pop();
                if path.pop().is_some() {
                    nodes.pop();
                }
                continue;
            };
            *next += 1;
            steps += 1;
            if steps.is_multiple_of(BATCH) {
                ctx.check_interrupt()?;
            }
            let depth = path.len() as u64 + 1;
            let hops_left = len - depth;
            if to_b.get(&(e.nbr, depth % k)).is_none_or(|&d| d > hops_left) || path.contains(&e.rel) {
                continue;
            }
            path.push(e.rel);
            nodes.push(e.nbr);
            if depth.is_multiple_of(k) && !cycle.passes(&nodes, &path, ctx)? {
                path.pop();
                nodes.pop();
                continue;
            }
            if hops_left == 0 {
                if accept(&path)? {
                    found = true;
                    if tally.took_path(s) {
                        return Ok(());
                    }
                }
                path.pop();
                nodes.pop();
            } else {
                let (dir, filter) = cycle.step(depth as usize);
                frames.push((g.rels_of(e.nbr, dir, filter), 0));
            }
        }
        if tally.length_done(s, found) {
            return Ok(());
        }
    }
    Ok(())
}
