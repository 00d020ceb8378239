//! An edge list's checkpoint image, encoded straight from its columns: what an import into a directory writes.
//!
//! Such an import writes the graph out and is done with it. Building the graph in memory first, as
//! [`crate::bulk::build_edge_list`] does for a graph that is to be read, makes both directions' adjacency, the
//! node and relationship leaves, the key table and the flat arrays, only for the checkpoint writer to walk the
//! outgoing side once: about two thirds of such an import's time, and most of its memory. The image needs far
//! less: the relationships sorted by source and target (their ids are numbered in that order, as the build
//! numbers them), the keys, and the weights in the new order. The bytes are the same as the built graph's
//! image (a test compares them), so the database opens exactly as one written from the built graph.

use std::path::Path;

use crate::bulk::EdgeListGraph;
use crate::catalog::Catalog;
use crate::codec::put_varint;
use crate::error::Result;
use crate::ids::{LabelId, PropKeyId, TypeId};
use crate::image::{self, Part};
use crate::value::Value;
use crate::{LEAF_BITS, LEAF_SIZE};

/// Sources per bucket of the first sorting pass: a bucket's entries then sort by source inside the L2 cache,
/// and the few hundred or thousand buckets are streams the scatter's writes keep resident.
const BUCKET_BITS: u32 = 12;

/// An edge list with its relationships sorted by (source, target, input position), ready to be written as a
/// checkpoint image. Relationship `i` is the `i`-th in that order.
pub struct EdgeListImage {
    label: LabelId,
    key: PropKeyId,
    keys: Vec<Value>,
    ty: TypeId,
    src: Vec<u32>,
    dst: Vec<u32>,
    weight: Option<(PropKeyId, Vec<f64>)>,
    threads: usize,
}

impl EdgeListImage {
    /// Sorts the relationships of `g`, whose vertices' keys must be distinct (an import's numbering makes
    /// them so; a duplicate would make the database refuse to open).
    pub fn new(g: EdgeListGraph) -> Result<EdgeListImage> {
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
        Self::with_threads(g, threads)
    }

    /// As [`Self::new`], sorting and encoding on `threads` threads.
    pub fn with_threads(g: EdgeListGraph, threads: usize) -> Result<EdgeListImage> {
        g.validate()?;
        let n = g.keys.len();
        let threads = threads.max(1);
        let EdgeListGraph { label, key, keys, ty, src, dst, weight } = g;
        let sorted = sort_edges(src, dst, n, threads);
        let weight = weight.map(|(k, w)| match &sorted.order {
            None => (k, w),
            Some(order) => (k, crate::bulk::gather(&w, order, threads)),
        });
        Ok(EdgeListImage { label, key, keys, ty, src: sorted.src, dst: sorted.dst, weight, threads })
    }

    pub fn node_count(&self) -> u64 {
        self.keys.len() as u64
    }

    pub fn rel_count(&self) -> u64 {
        self.src.len() as u64
    }

    fn parts(&self) -> Vec<Part> {
        let leaves = |count: usize| count.div_ceil(LEAF_SIZE) as u64;
        image::parts_over(leaves(self.keys.len()), leaves(self.src.len()), self.threads)
    }

    /// The whole image (format 2) in one buffer, as [`image::encode_body`] makes it of a built graph.
    pub fn encode_body(&self, catalog: &Catalog) -> Vec<u8> {
        crate::parallel::parallel_map(&self.parts(), self.threads, |part| {
            let mut buf = Vec::new();
            self.encode_part(catalog, part, &mut buf);
            buf
        })
        .concat()
    }

    /// Writes the checkpoint (version 1) into the new database directory `dir`; returns its size in bytes.
    pub(crate) fn write_checkpoint(&self, dir: &Path, db_id: &[u8; 16], catalog: &Catalog) -> Result<u64> {
        // Ids are allocated above the last leaf, as a built graph's bounds say.
        let bound = |count: usize| (count.div_ceil(LEAF_SIZE) * LEAF_SIZE) as u64;
        let ids = (1, bound(self.keys.len()), bound(self.src.len()));
        let parts = self.parts();
        let (_, size) =
            crate::checkpoint::write_parts(dir, db_id, ids, &parts, |p, buf| self.encode_part(catalog, p, buf))?;
        Ok(size)
    }

    fn encode_part(&self, catalog: &Catalog, part: &Part, buf: &mut Vec<u8>) {
        // The ids of the items a segment's leaves hold: leaves are full but for the last.
        let ids = |leaves: &std::ops::Range<u64>, count: usize| {
            (leaves.start << LEAF_BITS).min(count as u64)..(leaves.end << LEAF_BITS).min(count as u64)
        };
        match part {
            Part::Head => image::encode_head(buf, catalog, &[(self.label, self.key)]),
            Part::Nodes { segment, segments, leaves } => {
                let nodes = ids(leaves, self.keys.len());
                image::put_segment_start(buf, *segment, *segments, nodes.end - nodes.start);
                let (labels, mut prev) = ([self.label], 0u64);
                for id in nodes {
                    image::put_node_labels(buf, &mut prev, id, &labels);
                    image::put_single_prop(buf, self.key, &self.keys[id as usize]);
                }
            }
            Part::Rels { segment, segments, leaves } => {
                let sources = ids(leaves, self.keys.len());
                let first = self.src.partition_point(|&s| (s as u64) < sources.start);
                let end = self.src.partition_point(|&s| (s as u64) < sources.end);
                image::put_segment_start(buf, *segment, *segments, (end - first) as u64);
                let mut last = (0u64, u32::MAX, 0u64, 0u64);
                for i in first..end {
                    let (src, dst) = (self.src[i] as u64, self.dst[i] as u64);
                    image::put_rel(buf, &mut last, src, self.ty, dst, i as u64);
                }
            }
            Part::RelProps { segment, segments, leaves } => match &self.weight {
                None => image::put_segment_start(buf, *segment, *segments, 0),
                Some((key, weights)) => {
                    let rels = ids(leaves, weights.len());
                    image::put_segment_start(buf, *segment, *segments, rels.end - rels.start);
                    let mut prev = 0u64;
                    for id in rels {
                        image::put_rel_props_id(buf, &mut prev, id);
                        image::put_single_prop(buf, *key, &Value::Float(weights[id as usize]));
                    }
                }
            },
            // No property indexes, and no names for the unique key.
            Part::Tail => put_varint(buf, 0),
        }
    }
}

/// Relationships sorted by (source, target, input position).
struct SortedEdges {
    src: Vec<u32>,
    dst: Vec<u32>,
    /// The input position of each, unless every one kept its place.
    order: Option<Vec<u32>>,
}

/// Sorts the edges `(src[i], dst[i])` over `n` vertices by source, then target, then `i`. Input already sorted
/// by source (as many edge lists are) only has each source's run sorted by target.
fn sort_edges(src: Vec<u32>, dst: Vec<u32>, n: usize, threads: usize) -> SortedEdges {
    let m = src.len();
    if src.windows(2).all(|w| w[0] <= w[1]) {
        let mut dst = dst;
        let mut order: Vec<u32> = Vec::new();
        if !runs_sorted_by_target(&src, &dst) {
            order = (0..m as u32).collect();
            sort_runs_by_target(&src, &mut dst, &mut order, threads);
        }
        return SortedEdges { src, dst, order: (!order.is_empty()).then_some(order) };
    }
    // Scatter into buckets of sources, stable so that each bucket keeps the input order.
    let buckets = n.div_ceil(1 << BUCKET_BITS).max(1);
    let mut starts = vec![0usize; buckets + 1];
    for &s in &src {
        starts[(s >> BUCKET_BITS) as usize + 1] += 1;
    }
    for b in 1..starts.len() {
        starts[b] += starts[b - 1];
    }
    let mut staged = vec![(0u32, 0u32, 0u32); m];
    let mut cursor = starts.clone();
    for (i, (&s, &d)) in src.iter().zip(&dst).enumerate() {
        let at = &mut cursor[(s >> BUCKET_BITS) as usize];
        staged[*at] = (s, d, i as u32);
        *at += 1;
    }
    drop(cursor);
    // The input columns take the sorted ones: memory already faulted in, where fresh pages cost the kernel
    // zeroing them.
    let (mut src, mut dst, mut order) = (src, dst, vec![0u32; m]);
    // Each thread sorts a run of whole buckets by source (counting, stable), then each source by target.
    let cuts = balanced_cuts(&starts, threads);
    std::thread::scope(|scope| {
        let (mut src_rest, mut dst_rest, mut order_rest) = (&mut src[..], &mut dst[..], &mut order[..]);
        for pair in cuts.windows(2) {
            let (first, last) = (pair[0], pair[1]);
            let len = starts[last] - starts[first];
            let (s, rest) = std::mem::take(&mut src_rest).split_at_mut(len);
            src_rest = rest;
            let (d, rest) = std::mem::take(&mut dst_rest).split_at_mut(len);
            dst_rest = rest;
            let (o, rest) = std::mem::take(&mut order_rest).split_at_mut(len);
            order_rest = rest;
            let (staged, starts) = (&staged, &starts);
            scope.spawn(move || {
                let base = starts[first];
                let mut counts = vec![0usize; (1 << BUCKET_BITS) + 1];
                for b in first..last {
                    let entries = &staged[starts[b]..starts[b + 1]];
                    counts.fill(0);
                    for e in entries {
                        counts[(e.0 as usize & ((1 << BUCKET_BITS) - 1)) + 1] += 1;
                    }
                    for c in 1..counts.len() {
                        counts[c] += counts[c - 1];
                    }
                    let offset = starts[b] - base;
                    for &(es, ed, ei) in entries {
                        let at = &mut counts[es as usize & ((1 << BUCKET_BITS) - 1)];
                        (s[offset + *at], d[offset + *at], o[offset + *at]) = (es, ed, ei);
                        *at += 1;
                    }
                    let range = offset..offset + entries.len();
                    sort_runs_by_target(&s[range.clone()], &mut d[range.clone()], &mut o[range], 1);
                }
            });
        }
    });
    SortedEdges { src, dst, order: Some(order) }
}

/// Bucket indexes `0 = c[0] < c[1] < ... = buckets` cutting the buckets (entry offsets `starts`) into up to
/// `threads` runs of about equal entry counts.
fn balanced_cuts(starts: &[usize], threads: usize) -> Vec<usize> {
    let buckets = starts.len() - 1;
    let total = starts[buckets];
    let mut cuts = vec![0];
    for t in 1..threads.min(buckets) {
        let goal = total * t / threads;
        let cut = starts.partition_point(|&s| s < goal).min(buckets);
        if cut > *cuts.last().expect("starts at 0") {
            cuts.push(cut);
        }
    }
    if *cuts.last().expect("starts at 0") < buckets {
        cuts.push(buckets);
    }
    cuts
}

/// Whether every run of equal sources in `src` has its targets in order.
fn runs_sorted_by_target(src: &[u32], dst: &[u32]) -> bool {
    src.windows(2).zip(dst.windows(2)).all(|(s, d)| s[0] != s[1] || d[0] <= d[1])
}

/// Sorts each run of equal sources of the source-sorted `src` by target, keeping the input order (the order
/// `order` holds) among equal targets, on up to `threads` threads.
fn sort_runs_by_target(src: &[u32], dst: &mut [u32], order: &mut [u32], threads: usize) {
    if threads > 1 && src.len() > 1 << 16 {
        // Cut at source boundaries into about equal pieces.
        let mut cuts = vec![0];
        for t in 1..threads {
            let goal = src.len() * t / threads;
            let cut = goal + src[goal..].iter().position(|&s| s != src[goal - 1]).unwrap_or(src.len() - goal);
            if cut > *cuts.last().expect("starts at 0") && cut < src.len() {
                cuts.push(cut);
            }
        }
        cuts.push(src.len());
        std::thread::scope(|scope| {
            let (mut dst_rest, mut order_rest) = (dst, order);
            for pair in cuts.windows(2) {
                let len = pair[1] - pair[0];
                let (d, rest) = std::mem::take(&mut dst_rest).split_at_mut(len);
                dst_rest = rest;
                let (o, rest) = std::mem::take(&mut order_rest).split_at_mut(len);
                order_rest = rest;
                let s = &src[pair[0]..pair[1]];
                scope.spawn(move || sort_runs_by_target(s, d, o, 1));
            }
        });
        return;
    }
    let mut keys: Vec<u64> = Vec::new();
    let mut first = 0;
    while first < src.len() {
        let end = first + src[first..].iter().position(|&s| s != src[first]).unwrap_or(src.len() - first);
        let (d, o) = (&mut dst[first..end], &mut order[first..end]);
        if d.windows(2).any(|w| w[0] > w[1]) {
            if d.len() <= 16 {
                // Insertion sort: stable, so equal targets keep the input order.
                for i in 1..d.len() {
                    let (kd, ko) = (d[i], o[i]);
                    let mut j = i;
                    while j > 0 && d[j - 1] > kd {
                        (d[j], o[j]) = (d[j - 1], o[j - 1]);
                        j -= 1;
                    }
                    (d[j], o[j]) = (kd, ko);
                }
            } else {
                keys.clear();
                keys.extend(d.iter().zip(o.iter()).map(|(&t, &i)| (t as u64) << 32 | i as u64));
                keys.sort_unstable();
                for ((t, i), k) in d.iter_mut().zip(o.iter_mut()).zip(&keys) {
                    (*t, *i) = ((k >> 32) as u32, *k as u32);
                }
            }
        }
        first = end;
    }
}

#[cfg(test)]
mod tests;
