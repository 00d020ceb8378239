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

/// The direction that walks a relationship of direction `d` from its other end.
fn reversed(d: Direction) -> Direction {
    match d {
        Direction::Out => Direction::In,
        Direction::In => Direction::Out,
        Direction::Both => Direction::Both,
    }
}

/// Whether a relationship walked from one node to the next, in the pattern's direction, may be on a path.
pub(super) type RelOk<'r> = dyn FnMut(RelId, NodeId, NodeId) -> Result<bool> + 'r;

/// The shortest paths from `a` to `b` (one, or all of the shortest length), following only relationships that
/// pass `rel_ok`: breadth first from both ends.
pub(super) fn shortest_paths(ctx: &Ctx, s: &Search, rel_ok: &mut RelOk) -> Result<Vec<Vec<RelId>>> {
    if s.a == s.b {
        return Ok(if s.min == 0 { vec![vec![]] } else { vec![] });
    }
    let paths = if s.all {
        all_shortest_paths(ctx, s, rel_ok)?
    } else {
        one_shortest_path(ctx, s, rel_ok)?.into_iter().collect()
    };
    Ok(paths.into_iter().filter(|p| p.len() as u64 >= s.min).collect())
}

/// One side of a search from both ends: each node reached, its depth, and every (relationship, node one step
/// nearer this side's end) that reaches it at that depth.
struct Side {
    depth: HashMap<NodeId, u64>,
    parents: HashMap<NodeId, Vec<(RelId, NodeId)>>,
    frontier: Vec<NodeId>,
    level: u64,
}

impl Side {
    fn new(end: NodeId) -> Side {
        Side { depth: HashMap::from([(end, 0)]), parents: HashMap::new(), frontier: vec![end], level: 0 }
    }

    /// Every walk from this side's end to `n`, as relationships from `n` back to the end.
    fn walks(&self, n: NodeId) -> Vec<Vec<RelId>> {
        let mut out = Vec::new();
        let mut stack = vec![(n, Vec::new())];
        while let Some((at, rels)) = stack.pop() {
            match self.parents.get(&at) {
                None => out.push(rels),
                Some(ps) => {
                    for (rel, prev) in ps {
                        let mut r = rels.clone();
                        r.push(*rel);
                        stack.push((*prev, r));
                    }
                }
            }
        }
        out
    }
}

/// Every shortest path from `a` to `b` (`a != b`), searching from both ends a whole level at a time (the
/// smaller frontier first) and keeping every way a node is reached at its depth. The level at which the two
/// sides first meet holds every node at that position of a shortest path: each such path is one walk from `a`
/// to a meeting node followed by one walk from it to `b`.
fn all_shortest_paths(ctx: &Ctx, s: &Search, rel_ok: &mut RelOk) -> Result<Vec<Vec<RelId>>> {
    let g = ctx.g();
    let backward = reversed(s.dir);
    let (mut from_a, mut from_b) = (Side::new(s.a), Side::new(s.b));
    let mut steps = 0usize;
    let meetings = loop {
        if from_a.frontier.is_empty() || from_b.frontier.is_empty() || from_a.level + from_b.level >= s.max {
            return Ok(Vec::new());
        }
        let forward = from_a.frontier.len() <= from_b.frontier.len();
        let (mine, theirs, dir) =
            if forward { (&mut from_a, &from_b, s.dir) } else { (&mut from_b, &from_a, backward) };
        let depth = mine.level + 1;
        let (mut next, mut meetings) = (Vec::new(), Vec::new());
        for &n in &std::mem::take(&mut mine.frontier) {
            for e in g.rels_of(n, dir, s.filter) {
                steps += 1;
                if steps.is_multiple_of(BATCH) {
                    ctx.check_interrupt()?;
                }
                let seen = mine.depth.get(&e.nbr).copied();
                if seen.is_some_and(|d| d != depth) {
                    continue;
                }
                let ok = if forward { rel_ok(e.rel, n, e.nbr)? } else { rel_ok(e.rel, e.nbr, n)? };
                if !ok {
                    continue;
                }
                mine.parents.entry(e.nbr).or_default().push((e.rel, n));
                if seen.is_none() {
                    mine.depth.insert(e.nbr, depth);
                    next.push(e.nbr);
                    if theirs.depth.contains_key(&e.nbr) {
                        meetings.push(e.nbr);
                    }
                }
            }
        }
        mine.frontier = next;
        mine.level = depth;
        if !meetings.is_empty() {
            break meetings;
        }
    };
    let mut out = Vec::new();
    for m in meetings {
        let tails = from_b.walks(m);
        for mut head in from_a.walks(m) {
            head.reverse();
            for tail in &tails {
                let mut path = head.clone();
                path.extend_from_slice(tail);
                out.push(path);
            }
        }
    }
    Ok(out)
}

/// One shortest path from `a` to `b` (`a != b`), by a breadth-first search from both ends that grows the
/// smaller frontier a whole level at a time, until the two meet. Between two nodes of a large graph the one-sided
/// search visits most of it before it reaches `b`; two searches of half the depth each visit far fewer nodes
/// (1.1 s → a few ms for six hops on 3.3 M relationships).
fn one_shortest_path(ctx: &Ctx, s: &Search, rel_ok: &mut RelOk) -> Result<Option<Vec<RelId>>> {
    let g = ctx.g();
    let backward = reversed(s.dir);
    // Each side's nodes with the relationship and node that led there from its end (none for the end itself).
    let mut from_a: HashMap<NodeId, Option<(RelId, NodeId)>> = HashMap::from([(s.a, None)]);
    let mut from_b: HashMap<NodeId, Option<(RelId, NodeId)>> = HashMap::from([(s.b, None)]);
    let (mut frontier_a, mut frontier_b) = (vec![s.a], vec![s.b]);
    let mut depth = 0u64;
    let mut steps = 0usize;
    let meeting = 'search: loop {
        if frontier_a.is_empty() || frontier_b.is_empty() || depth >= s.max {
            return Ok(None);
        }
        let forward = frontier_a.len() <= frontier_b.len();
        let (frontier, mine, theirs, dir) = if forward {
            (&mut frontier_a, &mut from_a, &from_b, s.dir)
        } else {
            (&mut frontier_b, &mut from_b, &from_a, backward)
        };
        depth += 1;
        let mut next = Vec::new();
        for &n in frontier.iter() {
            for e in g.rels_of(n, dir, s.filter) {
                steps += 1;
                if steps.is_multiple_of(BATCH) {
                    ctx.check_interrupt()?;
                }
                if mine.contains_key(&e.nbr) {
                    continue;
                }
                // The condition sees each relationship the way the pattern walks it, from `a` towards `b`.
                let ok = if forward { rel_ok(e.rel, n, e.nbr)? } else { rel_ok(e.rel, e.nbr, n)? };
                if !ok {
                    continue;
                }
                mine.insert(e.nbr, Some((e.rel, n)));
                if theirs.contains_key(&e.nbr) {
                    break 'search e.nbr;
                }
                next.push(e.nbr);
            }
        }
        *frontier = next;
    };
    let mut path = Vec::new();
    let mut n = meeting;
    while let Some(Some((rel, prev))) = from_a.get(&n) {
        path.push(*rel);
        n = *prev;
    }
    path.reverse();
    let mut n = meeting;
    while let Some(Some((rel, next))) = from_b.get(&n) {
        path.push(*rel);
        n = *next;
    }
    Ok(Some(path))
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
    let backward = reversed(s.dir);
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
    let backward = reversed;
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
