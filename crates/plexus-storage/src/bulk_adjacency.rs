//! Building every leaf's adjacency base for one direction from a whole edge set at once (bulk import, checkpoint
//! load), when every id fits 32 bits.
//!
//! A plain counting sort by node scatters each edge to a random place in an array several times larger than the
//! caches: one cache and TLB miss per edge, which made it the slowest step of an import. Here the sort is split in
//! two passes. The first scatters edges into buckets of `BUCKET_NODES` consecutive nodes: a few thousand write
//! streams, each with its current cache line resident, so the writes run at memory bandwidth. The second sorts
//! each bucket by node inside a scratch array that fits in the cache, sorts each node's short run by (type,
//! neighbour, id) and builds the bucket's leaf bases. Buckets are independent, so the second pass spreads over
//! threads, and the two directions build side by side.

use std::sync::Arc;

use crate::adjacency::{AdjBase, NarrowEntry};
use crate::LEAF_SIZE;

/// log2 of the nodes per bucket: 64 leaves, whose edges (a few hundred KiB on typical graphs) fit in the L2 cache.
const BUCKET_BITS: u32 = 12;
const BUCKET_NODES: usize = 1 << BUCKET_BITS;

/// Edges to build adjacency from, addressed by position.
pub(crate) trait EdgeSource: Sync {
    fn len(&self) -> usize;
    /// `(source, target, type, relationship id)` of edge `i`; every id fits 32 bits.
    fn edge(&self, i: usize) -> (u32, u32, u32, u32);
}

/// The adjacency base of one leaf and direction, with the slots that have a self-loop.
pub(crate) struct LeafAdjacency {
    pub leaf: u64,
    pub base: AdjBase,
    pub loops: u64,
    /// Where the base's run starts in the direction's shared arrays.
    pub start: usize,
}

/// An edge staged in its bucket: the node whose adjacency it belongs to, and the entry as that node sees it.
#[derive(Clone, Copy, Default)]
struct Staged {
    node: u32,
    entry: NarrowEntry,
}

/// Both directions' leaf bases for nodes `0..node_bound`, each sorted by leaf, using up to `threads` threads.
pub(crate) fn build_both<E: EdgeSource>(
    edges: &E,
    node_bound: usize,
    threads: usize,
) -> (Vec<LeafAdjacency>, Vec<LeafAdjacency>) {
    if threads < 2 {
        return (build_direction(edges, node_bound, true, 1), build_direction(edges, node_bound, false, 1));
    }
    let out_threads = threads / 2;
    std::thread::scope(|scope| {
        let out = scope.spawn(move || build_direction(edges, node_bound, true, out_threads));
        let inc = build_direction(edges, node_bound, false, threads - out_threads);
        (out.join().expect("adjacency builder thread"), inc)
    })
}

/// The leaf bases of one direction.
pub(crate) fn build_direction<E: EdgeSource>(
    edges: &E,
    node_bound: usize,
    outgoing: bool,
    threads: usize,
) -> Vec<LeafAdjacency> {
    let staged_of = |i: usize| {
        let (src, dst, ty, rel) = edges.edge(i);
        let (node, nbr) = if outgoing { (src, dst) } else { (dst, src) };
        Staged { node, entry: NarrowEntry { ty, nbr, rel } }
    };
    let buckets = node_bound.div_ceil(BUCKET_NODES).max(1);
    let mut starts = vec![0usize; buckets + 1];
    for i in 0..edges.len() {
        starts[(staged_of(i).node >> BUCKET_BITS) as usize + 1] += 1;
    }
    for b in 1..starts.len() {
        starts[b] += starts[b - 1];
    }
    let mut cursor = starts.clone();
    let mut staged = vec![Staged::default(); edges.len()];
    for i in 0..edges.len() {
        let s = staged_of(i);
        let at = &mut cursor[(s.node >> BUCKET_BITS) as usize];
        staged[*at] = s;
        *at += 1;
    }
    drop(cursor);
    // Split the buckets into contiguous ranges of about equal edge counts, one per thread.
    let threads = threads.clamp(1, buckets);
    let mut ranges = Vec::with_capacity(threads);
    let mut first = 0;
    for t in 1..=threads {
        let goal = edges.len() * t / threads;
        let mut last = first;
        while last < buckets && (starts[last + 1] <= goal || t == threads) {
            last += 1;
        }
        ranges.push(first..last);
        first = last;
    }
    // Every base's ids are a run of two arrays for the whole direction, filled in place: bucket `b` owns
    // entries `starts[b]..starts[b + 1]`, so each thread writes its own part.
    let mut nbr = vec![0u32; edges.len()];
    let mut rel = vec![0u32; edges.len()];
    crate::prefetch::advise_huge_pages(&nbr);
    crate::prefetch::advise_huge_pages(&rel);
    let build_range = |range: std::ops::Range<usize>, nbr: &mut [u32], rel: &mut [u32]| {
        let mut out = Vec::new();
        let mut scratch = (Vec::new(), vec![0u32; BUCKET_NODES + 1]);
        let first = starts[range.start];
        for b in range {
            let (from, to) = (starts[b], starts[b + 1]);
            if from < to {
                let ids = (&mut nbr[from - first..to - first], &mut rel[from - first..to - first]);
                build_bucket(b, &staged[from..to], node_bound, &mut scratch, ids, from, &mut out);
            }
        }
        out
    };
    let mut jobs = Vec::with_capacity(ranges.len());
    let (mut nbr_rest, mut rel_rest) = (&mut nbr[..], &mut rel[..]);
    for range in ranges {
        let len = starts[range.end] - starts[range.start];
        let (n, nr) = std::mem::take(&mut nbr_rest).split_at_mut(len);
        let (r, rr) = std::mem::take(&mut rel_rest).split_at_mut(len);
        (nbr_rest, rel_rest) = (nr, rr);
        jobs.push((range, n, r));
    }
    let mut leaves: Vec<LeafAdjacency> = if jobs.len() == 1 {
        let (range, n, r) = jobs.pop().expect("one job");
        build_range(range, n, r)
    } else {
        std::thread::scope(|scope| {
            let build_range = &build_range;
            let workers: Vec<_> =
                jobs.into_iter().map(|(range, n, r)| scope.spawn(move || build_range(range, n, r))).collect();
            workers.into_iter().flat_map(|w| w.join().expect("adjacency builder thread")).collect()
        })
    };
    let (nbr, rel) = (Arc::new(nbr.into_boxed_slice()), Arc::new(rel.into_boxed_slice()));
    for l in &mut leaves {
        l.base.share_ids(&nbr, &rel, l.start);
    }
    leaves
}

fn build_bucket(
    bucket_index: usize,
    bucket: &[Staged],
    node_bound: usize,
    (scratch, offsets): &mut (Vec<NarrowEntry>, Vec<u32>),
    (nbr, rel): (&mut [u32], &mut [u32]),
    global_start: usize,
    out: &mut Vec<LeafAdjacency>,
) {
    let first_node = bucket_index << BUCKET_BITS;
    let nodes = (node_bound - first_node).min(BUCKET_NODES);
    offsets.fill(0);
    for s in bucket {
        offsets[(s.node as usize & (BUCKET_NODES - 1)) + 1] += 1;
    }
    for i in 1..offsets.len() {
        offsets[i] += offsets[i - 1];
    }
    scratch.clear();
    scratch.resize(bucket.len(), NarrowEntry::default());
    {
        let mut cursor = offsets.to_vec();
        for s in bucket {
            let at = &mut cursor[s.node as usize & (BUCKET_NODES - 1)];
            scratch[*at as usize] = s.entry;
            *at += 1;
        }
    }
    let run = |local: usize| offsets[local] as usize..offsets[local + 1] as usize;
    for local in 0..nodes {
        let r = run(local);
        if r.len() > 1 {
            scratch[r].sort_unstable();
        }
    }
    for first_slot in (0..nodes).step_by(LEAF_SIZE) {
        let slots = (nodes - first_slot).min(LEAF_SIZE);
        if offsets[first_slot] == offsets[first_slot + slots] {
            continue;
        }
        let mut loops = 0u64;
        for slot in 0..slots {
            let node = (first_node + first_slot + slot) as u32;
            if scratch[run(first_slot + slot)].iter().any(|e| e.nbr == node) {
                loops |= 1 << slot;
            }
        }
        let scratch = &scratch[..];
        let ids = offsets[first_slot] as usize..offsets[first_slot + slots] as usize;
        let base = AdjBase::build_narrow_into(
            |slot| if slot < slots { &scratch[run(first_slot + slot)] } else { &[] },
            &mut nbr[ids.clone()],
            &mut rel[ids.clone()],
        );
        let start = global_start + ids.start;
        out.push(LeafAdjacency { leaf: ((first_node + first_slot) / LEAF_SIZE) as u64, base, loops, start });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::adjacency::AdjLeaf;
    use crate::TypeFilter;

    struct Edges(Vec<(u32, u32, u32, u32)>);

    impl EdgeSource for Edges {
        fn len(&self) -> usize {
            self.0.len()
        }
        fn edge(&self, i: usize) -> (u32, u32, u32, u32) {
            self.0[i]
        }
    }

    /// Each built leaf as a readable adjacency leaf, with its loop mask.
    fn by_leaf(built: Vec<LeafAdjacency>) -> std::collections::HashMap<u64, (AdjLeaf, u64)> {
        built.into_iter().map(|l| (l.leaf, (AdjLeaf::from_base(l.base), l.loops))).collect()
    }

    fn entries(leaves: &std::collections::HashMap<u64, (AdjLeaf, u64)>, node: u64) -> Vec<(u32, u64, u64)> {
        let Some((adj, _)) = leaves.get(&(node / LEAF_SIZE as u64)) else { return Vec::new() };
        let mut v = Vec::new();
        let _ = adj.visit::<()>((node % LEAF_SIZE as u64) as usize, TypeFilter::All, |e| {
            v.push((e.ty.0, e.nbr, e.rel));
            std::ops::ControlFlow::Continue(())
        });
        v
    }

    #[test]
    fn matches_a_plain_sort_in_both_directions_across_buckets_and_threads() {
        let node_bound = 3 * BUCKET_NODES + 17;
        let mut x = 12345u64;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let mut list = Vec::new();
        for rel in 0..20_000u32 {
            let src = (next() % node_bound as u64) as u32;
            let dst = if rel % 97 == 0 { src } else { (next() % node_bound as u64) as u32 };
            list.push((src, dst, (next() % 3) as u32, rel));
        }
        let edges = Edges(list.clone());
        for threads in [1, 2, 3] {
            let (out, inc) = build_both(&edges, node_bound, threads);
            assert!(out.windows(2).all(|w| w[0].leaf < w[1].leaf));
            assert!(inc.windows(2).all(|w| w[0].leaf < w[1].leaf));
            let (out, inc) = (by_leaf(out), by_leaf(inc));
            for node in (0..node_bound as u32).step_by(7) {
                let mut want_out: Vec<(u32, u64, u64)> =
                    list.iter().filter(|e| e.0 == node).map(|e| (e.2, e.1 as u64, e.3 as u64)).collect();
                let mut want_in: Vec<(u32, u64, u64)> =
                    list.iter().filter(|e| e.1 == node).map(|e| (e.2, e.0 as u64, e.3 as u64)).collect();
                want_out.sort_unstable();
                want_in.sort_unstable();
                assert_eq!(entries(&out, node as u64), want_out, "out of {node} with {threads} threads");
                assert_eq!(entries(&inc, node as u64), want_in, "in of {node} with {threads} threads");
            }
            for (leaf, (_, loops)) in out.iter().chain(inc.iter()) {
                for slot in 0..LEAF_SIZE {
                    let node = *leaf as u32 * LEAF_SIZE as u32 + slot as u32;
                    let has_loop = list.iter().any(|e| e.0 == node && e.1 == node);
                    assert_eq!(loops >> slot & 1 == 1, has_loop, "loop mask of {node}");
                }
            }
        }
    }
}
