//! The graph image inside a checkpoint: how a whole graph state is encoded into bytes and decoded back.
//!
//! Format 2 (written now), as consecutive sections:
//! 1. tokens and unique keys;
//! 2. nodes: a number of segments, each a count and that many nodes (id delta, labels, properties);
//! 3. relationships, sorted by source, type, target: segments of (source delta, type, target delta within a
//!    (source, type) run, id as a signed delta from the previous id plus one);
//! 4. relationship properties in id order: segments of (id delta, properties), only for relationships that have
//!    any;
//! 5. the property indexes as `(label, key)` pairs (optional: absent from images written before they existed);
//! 6. the names given to unique keys and indexes, as `(kind, label, key, name)` (optional: written only when some
//!    unique key or index has a name, so that an image without names is still read by builds from before names
//!    were kept; without it every unique key and index reads back unnamed);
//! 7. the relationship property indexes as `(type, key, name or "")` (optional: written only when there are
//!    some or section 8 follows, after a names section that may then be empty; a build from before them refuses
//!    such an image as having trailing bytes rather than opening it without them);
//! 8. the composite indexes as `(label, keys, name or "")` (optional, in the same way).
//!
//! Every segment restarts its deltas from zero, so segments (ranges of leaves) are encoded, and compressed, in
//! parallel. Keeping relationship properties apart lets the relationship section be written from adjacency alone,
//! without one random lookup per relationship, and ids assigned in source order (as imports do) cost a byte.
//!
//! Format 1 (still read): one run of nodes, then one run of relationships with their id verbatim and their
//! properties inline.

use std::ops::Range;
use std::sync::Arc;

use crate::adjacency::TypeFilter;
use crate::bulk::{NodeInput, PackedRel, PackedRelProps, RelInput};
use crate::catalog::{Catalog, TokenKind};
use crate::codec::{put_ivarint, put_str, put_u8, put_value, put_varint, DecodeError, DecodeResult, Reader};
use crate::graph::{GraphState, RelRecord};
use crate::ids::{LabelId, NodeId, PropKeyId, RelId, TypeId};
use crate::records::{Labels, PropMap};
use crate::LEAF_BITS;

/// Image formats this build reads; it writes the last.
pub const FORMAT_V1: u8 = 1;
pub const FORMAT_V2: u8 = 2;

/// The kinds of the entries of the names section.
const NAMED_UNIQUE_KEY: u8 = 0;
const NAMED_INDEX: u8 = 1;
/// The kinds of index the tail of an image marks as backing a uniqueness constraint.
const UNIQUE_REL_INDEX: u8 = 1;
const UNIQUE_COMPOSITE: u8 = 2;

/// Segments per section and thread: enough that threads finish together although leaves differ in weight.
const SEGMENTS_PER_THREAD: u64 = 8;

fn put_props(buf: &mut Vec<u8>, props: Option<&PropMap>) {
    match props {
        None => put_varint(buf, 0),
        Some(p) => {
            put_varint(buf, p.len() as u64);
            for (k, v) in p.iter() {
                put_varint(buf, k.0 as u64);
                put_value(buf, v);
            }
        }
    }
}

fn read_props(r: &mut Reader) -> DecodeResult<Option<Arc<PropMap>>> {
    Ok(read_prop_map(r)?.map(Arc::new))
}

/// A property map, unshared: a relationship's single number goes into its leaf's column without an allocation.
fn read_prop_map(r: &mut Reader) -> DecodeResult<Option<PropMap>> {
    let n = r.count(2)?;
    if n == 0 {
        return Ok(None);
    }
    if n == 1 {
        let key = PropKeyId(r.u32v()?);
        return Ok(Some(PropMap::single(key, r.value()?)));
    }
    let mut pairs = Vec::with_capacity(n);
    for _ in 0..n {
        pairs.push((PropKeyId(r.u32v()?), r.value()?));
    }
    Ok(Some(PropMap::from_pairs(pairs)))
}

/// One independently encoded piece of an image; the image is their concatenation in order.
#[derive(Clone, Debug)]
pub(crate) enum Part {
    Head,
    Nodes { segment: usize, segments: usize, leaves: Range<u64> },
    Rels { segment: usize, segments: usize, leaves: Range<u64> },
    RelProps { segment: usize, segments: usize, leaves: Range<u64> },
    Tail,
}

/// The parts of the image of `state` (format 2), for encoding with [`encode_part`] on `threads` threads.
pub(crate) fn parts(state: &GraphState, threads: usize) -> Vec<Part> {
    let node_leaves = state.nodes.last_leaf().map_or(0, |l| l + 1);
    let rel_leaves = state.rels.last_leaf().map_or(0, |l| l + 1);
    parts_over(node_leaves, rel_leaves, threads)
}

/// The parts of an image of `node_leaves` leaves of nodes and `rel_leaves` of relationships, segmented for
/// `threads` threads.
pub(crate) fn parts_over(node_leaves: u64, rel_leaves: u64, threads: usize) -> Vec<Part> {
    let split = |leaves: u64| {
        let n = (threads as u64 * SEGMENTS_PER_THREAD).clamp(1, leaves.max(1));
        (0..n).map(move |i| (i as usize, n as usize, leaves * i / n..leaves * (i + 1) / n))
    };
    let mut parts = vec![Part::Head];
    parts.extend(split(node_leaves).map(|(segment, segments, leaves)| Part::Nodes { segment, segments, leaves }));
    parts.extend(split(node_leaves).map(|(segment, segments, leaves)| Part::Rels { segment, segments, leaves }));
    parts.extend(split(rel_leaves).map(|(segment, segments, leaves)| Part::RelProps { segment, segments, leaves }));
    parts.push(Part::Tail);
    parts
}

/// The image's first section: every token, then the unique keys.
pub(crate) fn encode_head(buf: &mut Vec<u8>, catalog: &Catalog, unique_keys: &[(LabelId, PropKeyId)]) {
    let tokens = catalog.all();
    put_varint(buf, tokens.len() as u64);
    for (kind, id, name) in tokens {
        put_u8(buf, kind as u8);
        put_varint(buf, id as u64);
        put_str(buf, &name);
    }
    put_varint(buf, unique_keys.len() as u64);
    for (l, k) in unique_keys {
        put_varint(buf, l.0 as u64);
        put_varint(buf, k.0 as u64);
    }
}

/// The start of a segment of a section: the first segment carries their number, every one its item count.
pub(crate) fn put_segment_start(buf: &mut Vec<u8>, segment: usize, segments: usize, count: u64) {
    if segment == 0 {
        put_varint(buf, segments as u64);
    }
    put_varint(buf, count);
}

/// One relationship of the relationship section, after `last` (the previous one's source, type, target and id
/// plus one; `(0, u32::MAX, 0, 0)` at a segment's start), which it then becomes.
#[inline]
pub(crate) fn put_rel(buf: &mut Vec<u8>, last: &mut (u64, u32, u64, u64), src: u64, ty: TypeId, dst: u64, id: u64) {
    let (prev_src, prev_ty, prev_dst, next_id) = *last;
    put_varint(buf, src - prev_src);
    put_varint(buf, ty.0 as u64);
    let same_run = src == prev_src && ty.0 == prev_ty;
    put_varint(buf, if same_run { dst - prev_dst } else { dst });
    put_ivarint(buf, id.wrapping_sub(next_id) as i64);
    *last = (src, ty.0, dst, id.wrapping_add(1));
}

/// A node of the node section, after the node `*prev` (0 at a segment's start), which it then becomes.
#[inline]
pub(crate) fn put_node(buf: &mut Vec<u8>, prev: &mut u64, id: u64, labels: &[LabelId], props: Option<&PropMap>) {
    put_node_labels(buf, prev, id, labels);
    put_props(buf, props);
}

/// A node of the node section up to its properties, which must follow.
#[inline]
pub(crate) fn put_node_labels(buf: &mut Vec<u8>, prev: &mut u64, id: u64, labels: &[LabelId]) {
    put_varint(buf, id - *prev);
    *prev = id;
    put_varint(buf, labels.len() as u64);
    for l in labels {
        put_varint(buf, l.0 as u64);
    }
}

/// Properties of one key, as `put_props` writes a map holding only it.
#[inline]
pub(crate) fn put_single_prop(buf: &mut Vec<u8>, key: PropKeyId, value: &crate::value::Value) {
    put_varint(buf, 1);
    put_varint(buf, key.0 as u64);
    put_value(buf, value);
}

/// A relationship's properties in the relationship property section, after relationship `*prev` (0 at a
/// segment's start), which it then becomes. The properties must follow.
#[inline]
pub(crate) fn put_rel_props_id(buf: &mut Vec<u8>, prev: &mut u64, id: u64) {
    put_varint(buf, id - *prev);
    *prev = id;
}

/// Encodes one part of the image.
pub(crate) fn encode_part(state: &GraphState, catalog: &Catalog, part: &Part, buf: &mut Vec<u8>) {
    match part {
        Part::Head => encode_head(buf, catalog, &state.unique_keys()),
        Part::Nodes { segment, segments, leaves } => {
            let mut count = 0u64;
            state.nodes.for_each_in(leaves.clone(), |_, leaf| count += leaf.live.count_ones() as u64);
            put_segment_start(buf, *segment, *segments, count);
            let mut prev = 0u64;
            state.nodes.for_each_in(leaves.clone(), |leaf_index, leaf| {
                for_each_slot(leaf.live, |slot| {
                    let id = (leaf_index << LEAF_BITS) | slot as u64;
                    put_node(buf, &mut prev, id, leaf.labels(slot), leaf.props(slot).as_deref());
                });
            });
        }
        Part::Rels { segment, segments, leaves } => {
            let mut count = 0u64;
            state.nodes.for_each_in(leaves.clone(), |_, leaf| {
                for_each_slot(leaf.live, |slot| count += leaf.out.degree(slot, TypeFilter::All));
            });
            put_segment_start(buf, *segment, *segments, count);
            let mut last = (0u64, u32::MAX, 0u64, 0u64);
            state.nodes.for_each_in(leaves.clone(), |leaf_index, leaf| {
                for_each_slot(leaf.live, |slot| {
                    let src = (leaf_index << LEAF_BITS) | slot as u64;
                    // Each node's outgoing adjacency is sorted by (type, target, id) already.
                    let mut put = |ty: TypeId, dst: u64, id: u64| put_rel(buf, &mut last, src, ty, dst, id);
                    if leaf.out.has_delta(slot) {
                        leaf.out.merged_sorted(slot).into_iter().for_each(|e| put(e.ty, e.nbr, e.rel));
                    } else {
                        let _ = leaf.out.visit::<()>(slot, TypeFilter::All, |e| {
                            put(e.ty, e.nbr, e.rel);
                            std::ops::ControlFlow::Continue(())
                        });
                    }
                });
            });
        }
        Part::RelProps { segment, segments, leaves } => {
            let mut count = 0u64;
            state.rels.for_each_in(leaves.clone(), |_, leaf| {
                if !leaf.props().is_empty() {
                    for_each_slot(leaf.live, |slot| count += leaf.props().has(slot) as u64);
                }
            });
            put_segment_start(buf, *segment, *segments, count);
            let mut prev = 0u64;
            state.rels.for_each_in(leaves.clone(), |leaf_index, leaf| {
                if leaf.props().is_empty() {
                    return;
                }
                // A column of numbers is written as the one-entry maps it stands for, without making them.
                if let Some((key, present)) = leaf.props().number_key() {
                    for_each_slot(leaf.live & present, |slot| {
                        if let Some(value) = leaf.props().value(slot, key) {
                            put_rel_props_id(buf, &mut prev, (leaf_index << LEAF_BITS) | slot as u64);
                            put_single_prop(buf, key, &value);
                        }
                    });
                    return;
                }
                for_each_slot(leaf.live, |slot| {
                    if let Some(p) = leaf.props().get(slot).as_deref() {
                        put_rel_props_id(buf, &mut prev, (leaf_index << LEAF_BITS) | slot as u64);
                        put_props(buf, Some(p));
                    }
                });
            });
        }
        Part::Tail => {
            let indexes = state.indexes();
            put_varint(buf, indexes.len() as u64);
            for &(l, k) in &indexes {
                put_varint(buf, l.0 as u64);
                put_varint(buf, k.0 as u64);
            }
            let keys = state
                .unique_keys()
                .into_iter()
                .filter_map(|(l, k)| state.unique_key_name(l, k).map(|name| (NAMED_UNIQUE_KEY, l, k, name)));
            let index_names =
                indexes.into_iter().filter_map(|(l, k)| state.index_name(l, k).map(|name| (NAMED_INDEX, l, k, name)));
            let names: Vec<_> = keys.chain(index_names).collect();
            let rel_indexes = state.rel_indexes();
            let composites = state.composite_indexes();
            // Which of those back uniqueness constraints: (kind, position in its list).
            let uniques: Vec<(u8, usize)> = (state.rel_indexes.iter().enumerate())
                .filter(|(_, i)| i.unique)
                .map(|(at, _)| (UNIQUE_REL_INDEX, at))
                .chain(
                    state.composites.iter().enumerate().filter(|(_, i)| i.unique).map(|(at, _)| (UNIQUE_COMPOSITE, at)),
                )
                .collect();
            let more = !uniques.is_empty();
            if !names.is_empty() || !rel_indexes.is_empty() || !composites.is_empty() || more {
                put_varint(buf, names.len() as u64);
                for (kind, l, k, name) in names {
                    put_u8(buf, kind);
                    put_varint(buf, l.0 as u64);
                    put_varint(buf, k.0 as u64);
                    put_str(buf, &name);
                }
            }
            if !rel_indexes.is_empty() || !composites.is_empty() || more {
                put_varint(buf, rel_indexes.len() as u64);
                for (ty, k) in rel_indexes {
                    put_varint(buf, ty.0 as u64);
                    put_varint(buf, k.0 as u64);
                    put_str(buf, state.rel_index_name(ty, k).as_deref().unwrap_or(""));
                }
            }
            if !composites.is_empty() || more {
                put_varint(buf, composites.len() as u64);
                for (label, keys) in composites {
                    put_varint(buf, label.0 as u64);
                    put_varint(buf, keys.len() as u64);
                    for k in &keys {
                        put_varint(buf, k.0 as u64);
                    }
                    put_str(buf, state.composite_index_name(label, &keys).as_deref().unwrap_or(""));
                }
            }
            if more {
                put_varint(buf, uniques.len() as u64);
                for (kind, at) in uniques {
                    put_u8(buf, kind);
                    put_varint(buf, at as u64);
                }
            }
        }
    }
}

#[inline]
fn for_each_slot(mut live: u64, mut f: impl FnMut(usize)) {
    while live != 0 {
        let slot = live.trailing_zeros() as usize;
        live &= live - 1;
        f(slot);
    }
}

/// Encodes the whole image (format 2) into one buffer.
pub fn encode_body(state: &GraphState, catalog: &Catalog) -> Vec<u8> {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    crate::parallel::parallel_map(&parts(state, threads), threads, |p| {
        let mut buf = Vec::new();
        encode_part(state, catalog, p, &mut buf);
        buf
    })
    .concat()
}

/// Decodes an image of the current format into a state at `version`, restoring tokens into `catalog`.
pub fn decode_body(body: &[u8], catalog: &Catalog, version: u64) -> DecodeResult<GraphState> {
    decode_body_format(body, catalog, version, FORMAT_V2)
}

/// Decodes an image of `format` ([`FORMAT_V1`] or [`FORMAT_V2`]). A body handed over (`Vec<u8>`) is freed once
/// its sections are decoded, before the relationships' half of the build allocates: the allocator can then
/// serve that half from the body's pages instead of the kernel zeroing fresh ones.
pub(crate) fn decode_body_format<B: AsRef<[u8]>>(
    body: B,
    catalog: &Catalog,
    version: u64,
    format: u8,
) -> DecodeResult<GraphState> {
    let segmented = format >= FORMAT_V2;
    let mut r = Reader::new(body.as_ref());
    let ntok = r.count(3)?;
    for _ in 0..ntok {
        let kind = TokenKind::from_u8(r.u8()?).ok_or_else(|| DecodeError("unknown token kind".into()))?;
        let id = r.u32v()?;
        let name = r.str()?;
        catalog.restore(kind, id, name).map_err(DecodeError)?;
    }
    // Label ids index a vector of label indexes, so an absurd one would allocate without bound: only ids the
    // catalog knows are valid (every label in use was interned, and the checkpoint lists every token).
    let label_tokens = catalog.names(TokenKind::Label).len();
    let nkeys = r.count(2)?;
    let mut keys = Vec::with_capacity(nkeys);
    for _ in 0..nkeys {
        keys.push((LabelId(r.u32v()?), PropKeyId(r.u32v()?)));
    }
    let nodes = decode_nodes(&mut r, label_tokens, segmented)?;
    // The nodes' half of the state builds on another thread while this one decodes the relationships.
    let (built_nodes, rest) = std::thread::scope(|scope| {
        let node_side = scope.spawn(|| crate::bulk::build_nodes(version, nodes, &keys));
        let rest = decode_after_nodes(&mut r, catalog, label_tokens, segmented, &keys);
        (node_side.join().expect("node builder thread"), rest)
    });
    let (rels, indexes, key_names, index_names, (rel_indexes, composites)) = rest?;
    drop(body);
    let built_nodes = built_nodes.map_err(|e| DecodeError(e.to_string()))?;
    let built = match rels {
        Rels::Packed(rels, props) => crate::bulk::add_packed(built_nodes, rels, props),
        Rels::Records(rels) => crate::bulk::add_records(built_nodes, rels),
    };
    let mut state = built.map_err(|e| DecodeError(e.to_string()))?;
    for ((label, key), name) in key_names {
        let unique = Arc::make_mut(&mut state.unique);
        if let Some(u) = unique.iter_mut().find(|u| (u.label, u.key) == (label, key)) {
            u.name = Some(name.into());
        }
    }
    for (label, key) in indexes {
        let name = index_names.iter().find(|(of, _)| *of == (label, key)).map(|(_, name)| name.clone());
        state.apply(&crate::ops::Op::CreateIndex { label, key, name }).map_err(|e| DecodeError(e.to_string()))?;
    }
    for (ty, key, name, unique) in rel_indexes {
        let op = crate::ops::Op::CreateRelIndex { ty, key, name, unique };
        state.apply(&op).map_err(|e| DecodeError(e.to_string()))?;
    }
    for (label, keys, name, unique) in composites {
        let op = crate::ops::Op::CreateCompositeIndex { label, keys, name, unique };
        state.apply(&op).map_err(|e| DecodeError(e.to_string()))?;
    }
    Ok(state)
}

/// What an image holds after its nodes: relationships, indexes, the names of unique keys and indexes, and the
/// relationship property indexes and composite indexes with their names.
type AfterNodes = (
    Rels,
    Vec<(LabelId, PropKeyId)>,
    Vec<((LabelId, PropKeyId), String)>,
    Vec<((LabelId, PropKeyId), String)>,
    (Vec<(TypeId, PropKeyId, Option<String>, bool)>, Vec<(LabelId, Vec<PropKeyId>, Option<String>, bool)>),
);

/// Decodes an image's sections after the nodes, up to its end.
fn decode_after_nodes(
    r: &mut Reader,
    catalog: &Catalog,
    label_tokens: usize,
    segmented: bool,
    keys: &[(LabelId, PropKeyId)],
) -> DecodeResult<AfterNodes> {
    // Format 2 relationships decode packed (16 bytes each) unless some id needs more than 32 bits.
    let mut rels = Rels::Records(Vec::new());
    if segmented {
        let mut packed_reader = r.clone();
        if let Some(packed) = decode_rels_packed(&mut packed_reader)? {
            *r = packed_reader;
            rels = Rels::Packed(packed, read_rel_props(r)?);
        }
    }
    if let Rels::Records(records) = &mut rels {
        *records = decode_rels(r, segmented)?;
        if segmented {
            if !records.is_sorted_by_key(|r| r.rec.id) {
                records.sort_unstable_by_key(|r| r.rec.id);
            }
            attach_rel_props(r, records)?;
        }
    }
    let mut indexes = Vec::new();
    if !r.is_empty() {
        let (labels, prop_keys) = (label_tokens, catalog.names(TokenKind::PropKey).len());
        let n = r.count(2)?;
        for _ in 0..n {
            let (label, key) = (r.u32v()?, r.u32v()?);
            if label as usize >= labels || key as usize >= prop_keys {
                return Err(DecodeError(format!("index ({label}, {key}) names a token not in the catalog")));
            }
            indexes.push((LabelId(label), PropKeyId(key)));
        }
    }
    let mut key_names = Vec::new();
    let mut index_names = Vec::new();
    if !r.is_empty() {
        let n = r.count(4)?;
        for _ in 0..n {
            let kind = r.u8()?;
            let (label, key) = (LabelId(r.u32v()?), PropKeyId(r.u32v()?));
            let name = r.str()?.to_string();
            match kind {
                NAMED_UNIQUE_KEY if keys.contains(&(label, key)) => key_names.push(((label, key), name)),
                NAMED_INDEX if indexes.contains(&(label, key)) => index_names.push(((label, key), name)),
                _ => return Err(DecodeError(format!("a name ({name}) for no unique key or index of the image"))),
            }
        }
    }
    let mut rel_indexes = Vec::new();
    if !r.is_empty() {
        let (types, prop_keys) = (catalog.names(TokenKind::Type).len(), catalog.names(TokenKind::PropKey).len());
        let n = r.count(3)?;
        for _ in 0..n {
            let (ty, key) = (r.u32v()?, r.u32v()?);
            if ty as usize >= types || key as usize >= prop_keys {
                return Err(DecodeError(format!("relationship index ({ty}, {key}) names a token not in the catalog")));
            }
            let name = Some(r.str()?.to_string()).filter(|n| !n.is_empty());
            rel_indexes.push((TypeId(ty), PropKeyId(key), name, false));
        }
    }
    let mut composites = Vec::new();
    if !r.is_empty() {
        let prop_keys = catalog.names(TokenKind::PropKey).len();
        let n = r.count(4)?;
        for _ in 0..n {
            let label = r.u32v()?;
            let keys: Vec<u32> = (0..r.count(1)?).map(|_| r.u32v()).collect::<DecodeResult<_>>()?;
            if label as usize >= label_tokens || keys.iter().any(|&k| k as usize >= prop_keys) {
                return Err(DecodeError(format!(
                    "composite index ({label}, {keys:?}) names a token not in the catalog"
                )));
            }
            let name = Some(r.str()?.to_string()).filter(|n| !n.is_empty());
            composites.push((LabelId(label), keys.into_iter().map(PropKeyId).collect(), name, false));
        }
    }
    if !r.is_empty() {
        for _ in 0..r.count(2)? {
            let (kind, at) = (r.u8()?, r.u32v()? as usize);
            let flag = match kind {
                UNIQUE_REL_INDEX => rel_indexes.get_mut(at).map(|i| &mut i.3),
                UNIQUE_COMPOSITE => composites.get_mut(at).map(|i| &mut i.3),
                _ => return Err(DecodeError(format!("unknown kind {kind} of a uniqueness constraint"))),
            };
            *flag.ok_or_else(|| DecodeError(format!("a uniqueness constraint on index {at}, which is not there")))? =
                true;
        }
    }
    if !r.is_empty() {
        return Err(DecodeError(format!("{} trailing bytes after the graph", r.remaining())));
    }
    Ok((rels, indexes, key_names, index_names, (rel_indexes, composites)))
}

/// The number of segments of a section (format 2), or one implicit segment (format 1).
fn segments(r: &mut Reader, segmented: bool) -> DecodeResult<usize> {
    if segmented {
        r.count(1)
    } else {
        Ok(1)
    }
}

fn decode_nodes(r: &mut Reader, label_tokens: usize, segmented: bool) -> DecodeResult<Vec<NodeInput>> {
    let mut nodes = Vec::new();
    let mut last: Option<u64> = None;
    for _ in 0..segments(r, segmented)? {
        let n = r.count(3)?;
        nodes.reserve(n);
        let mut id = 0u64;
        for _ in 0..n {
            id = id.checked_add(r.varint()?).ok_or_else(|| DecodeError("node id overflow".into()))?;
            if last.is_some_and(|l| id <= l) {
                return Err(DecodeError("node ids out of order".into()));
            }
            last = Some(id);
            let nl = r.count(1)?;
            let mut labels = Labels::new();
            for _ in 0..nl {
                let label = r.u32v()?;
                if label as usize >= label_tokens {
                    return Err(DecodeError(format!("label {label} is not in the catalog")));
                }
                labels.push(LabelId(label));
            }
            labels.sort_unstable();
            labels.dedup();
            nodes.push(NodeInput { id: NodeId(id), labels, props: read_props(r)? });
        }
    }
    Ok(nodes)
}

/// Walks the relationship section, calling `f(record, properties)` for each relationship (properties inline in
/// format 1 only); `f` returns false to stop early, and so does this walk.
fn walk_rels(
    r: &mut Reader,
    segmented: bool,
    mut f: impl FnMut(RelRecord, Option<Arc<PropMap>>, usize) -> bool,
) -> DecodeResult<bool> {
    for _ in 0..segments(r, segmented)? {
        let n = r.count(4)?;
        let (mut prev_src, mut prev_ty, mut prev_dst, mut next_id) = (0u64, u32::MAX, 0u64, 0u64);
        for i in 0..n {
            let src_delta = r.varint()?;
            let src = prev_src.checked_add(src_delta).ok_or_else(|| DecodeError("source id overflow".into()))?;
            let ty = r.u32v()?;
            let dst_field = r.varint()?;
            let dst = if src_delta == 0 && ty == prev_ty {
                prev_dst.checked_add(dst_field).ok_or_else(|| DecodeError("target id overflow".into()))?
            } else {
                dst_field
            };
            let (id, props) = if segmented {
                (next_id.wrapping_add(r.ivarint()? as u64), None)
            } else {
                (r.varint()?, read_props(r)?)
            };
            let rec = RelRecord { id: RelId(id), ty: TypeId(ty), src: NodeId(src), dst: NodeId(dst) };
            // The segment's remaining count, so the caller can reserve room.
            if !f(rec, props, n - i) {
                return Ok(false);
            }
            (prev_src, prev_ty, prev_dst, next_id) = (src, ty, dst, id.wrapping_add(1));
        }
    }
    Ok(true)
}

fn decode_rels(r: &mut Reader, segmented: bool) -> DecodeResult<Vec<RelInput>> {
    let mut rels = Vec::new();
    walk_rels(r, segmented, |rec, props, remaining| {
        rels.reserve(remaining);
        rels.push(RelInput { rec, props });
        true
    })?;
    Ok(rels)
}

/// Decoded relationships: packed when every id fits 32 bits (with their properties apart), else records.
enum Rels {
    Packed(Vec<PackedRel>, PackedRelProps),
    Records(Vec<RelInput>),
}

/// Format 2 relationships as packed records, or `None` when some id needs more than 32 bits.
fn decode_rels_packed(r: &mut Reader) -> DecodeResult<Option<Vec<PackedRel>>> {
    let mut rels = Vec::new();
    let narrow = |v: u64| u32::try_from(v).ok();
    let complete = walk_rels(r, true, |rec, _, remaining| {
        let (Some(id), Some(src), Some(dst)) = (narrow(rec.id.0), narrow(rec.src.0), narrow(rec.dst.0)) else {
            return false;
        };
        rels.reserve(remaining);
        rels.push(PackedRel { id, ty: rec.ty.0, src, dst });
        true
    })?;
    Ok(complete.then_some(rels))
}

/// The relationship-property section: `(id, properties)` in id order, as a column of floats while every
/// relationship listed has one float under one key (a weighted edge list), else as maps.
fn read_rel_props(r: &mut Reader) -> DecodeResult<PackedRelProps> {
    let mut floats: Option<(PropKeyId, Vec<u64>, Vec<f64>)> = None;
    let mut maps: Vec<(u64, Option<PropMap>)> = Vec::new();
    let mut last: Option<u64> = None;
    let mut first = true;
    for _ in 0..segments(r, true)? {
        let n = r.count(2)?;
        let mut id = 0u64;
        for _ in 0..n {
            id = id.checked_add(r.varint()?).ok_or_else(|| DecodeError("relationship id overflow".into()))?;
            if last.is_some_and(|l| id <= l) {
                return Err(DecodeError("relationship property ids out of order".into()));
            }
            last = Some(id);
            // A single float is read without making its map.
            let mut probe = r.clone();
            let float = match probe.count(2)? {
                1 => {
                    let key = PropKeyId(probe.u32v()?);
                    probe.float_value()?.map(|f| (key, f))
                }
                _ => None,
            };
            let props = match float {
                Some(_) => {
                    *r = probe;
                    None
                }
                None => read_prop_map(r)?,
            };
            match (&mut floats, float) {
                (None, Some((k, f))) if first => floats = Some((k, vec![id], vec![f])),
                (Some((key, ids, values)), Some((k, f))) if *key == k => {
                    ids.push(id);
                    values.push(f);
                }
                _ => {
                    if let Some((key, ids, values)) = floats.take() {
                        maps = PackedRelProps::Floats { key, ids, values }.into_maps();
                    }
                    let props = match float {
                        Some((k, f)) => Some(PropMap::single(k, crate::value::Value::Float(f))),
                        None => props,
                    };
                    maps.push((id, props));
                }
            }
            first = false;
        }
    }
    Ok(match floats {
        Some((key, ids, values)) => PackedRelProps::Floats { key, ids, values },
        None => PackedRelProps::Maps(maps),
    })
}

/// Reads the relationship-property section onto `rels`, which are sorted by id.
fn attach_rel_props(r: &mut Reader, rels: &mut [RelInput]) -> DecodeResult<()> {
    let mut at = 0usize;
    for (id, props) in read_rel_props(r)?.into_maps() {
        while at < rels.len() && rels[at].rec.id.0 < id {
            at += 1;
        }
        match rels.get_mut(at) {
            Some(rel) if rel.rec.id.0 == id => rel.props = props.map(Arc::new),
            _ => return Err(DecodeError(format!("properties for relationship {id}, which is not in the image"))),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests;
