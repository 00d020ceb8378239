//! Checkpoints: a compressed image of the whole graph at one version, written atomically.
//!
//! Layout: a 64-byte header (magic, database id, version, next node and relationship ids, CRC), then blocks
//! `[raw length: u32][compressed length: u32][CRC32 of compressed bytes: u32][zstd bytes]`, then an end block with
//! both lengths zero whose CRC field holds the number of blocks. The body, once decompressed, lists tokens,
//! unique keys, nodes (id deltas, labels, properties) and relationships sorted by source then type then target,
//! so source ids, types and target deltas encode in a byte or two, then the property indexes as `(label, key)`
//! pairs (a section absent from checkpoints written before property indexes existed). Only which indexes exist is
//! stored: their entries are derived from the nodes and rebuilt on load, which keeps checkpoints small and leaves
//! no second copy of the data that could disagree with the first. Written to a temporary file, fsynced, renamed
//! into place and the directory fsynced: a crash leaves either the old checkpoint or the new one.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::bulk::{build_state, NodeInput, RelInput};
use crate::catalog::{Catalog, TokenKind};
use crate::codec::{put_str, put_u8, put_value, put_varint, DecodeError, DecodeResult, Reader};
use crate::error::{Result, StorageError};
use crate::graph::{GraphState, RelRecord};
use crate::ids::{LabelId, NodeId, PropKeyId, RelId, TypeId};
use crate::records::{Labels, PropMap};
use crate::wal::{read_file, sync_dir};

pub const CHECKPOINT_MAGIC: &[u8; 8] = b"PLXCKPT\x01";
const HEADER_LEN: usize = 64;
const BLOCK_RAW: usize = 4 << 20;

pub fn checkpoint_name(version: u64) -> String {
    format!("checkpoint-{version:020}.plx")
}

pub fn parse_checkpoint_name(name: &str) -> Option<u64> {
    name.strip_prefix("checkpoint-")?.strip_suffix(".plx")?.parse().ok()
}

/// What a checkpoint restores besides the graph.
pub struct Loaded {
    pub state: GraphState,
    pub next_node: u64,
    pub next_rel: u64,
}

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
    let n = r.count(2)?;
    if n == 0 {
        return Ok(None);
    }
    let mut pairs = Vec::with_capacity(n);
    for _ in 0..n {
        pairs.push((PropKeyId(r.u32v()?), r.value()?));
    }
    Ok(Some(Arc::new(PropMap::from_pairs(pairs))))
}

/// Encodes the graph body (uncompressed).
pub fn encode_body(state: &GraphState, catalog: &Catalog) -> Vec<u8> {
    let mut buf = Vec::new();
    let tokens = catalog.all();
    put_varint(&mut buf, tokens.len() as u64);
    for (kind, id, name) in tokens {
        put_u8(&mut buf, kind as u8);
        put_varint(&mut buf, id as u64);
        put_str(&mut buf, &name);
    }
    let keys = state.unique_keys();
    put_varint(&mut buf, keys.len() as u64);
    for (l, k) in keys {
        put_varint(&mut buf, l.0 as u64);
        put_varint(&mut buf, k.0 as u64);
    }
    put_varint(&mut buf, state.node_count());
    let mut prev = 0u64;
    let _ = state.visit_nodes::<()>(|n| {
        put_varint(&mut buf, n.0 - prev);
        prev = n.0;
        let labels = state.node_labels(n).expect("live node");
        put_varint(&mut buf, labels.len() as u64);
        for l in labels {
            put_varint(&mut buf, l.0 as u64);
        }
        put_props(&mut buf, state.node_props(n).flatten());
        std::ops::ControlFlow::Continue(())
    });
    // Walk each node's outgoing adjacency, already sorted by (type, target, id): relationships come out sorted by
    // source, type and target without collecting and sorting them all.
    put_varint(&mut buf, state.rel_count());
    let mut prev = RelRecord { id: RelId(0), ty: TypeId(0), src: NodeId(0), dst: NodeId(0) };
    let _ = state.visit_nodes::<()>(|src| {
        state.visit_out_sorted(src, |e| {
            let r = RelRecord { id: RelId(e.rel), ty: e.ty, src, dst: NodeId(e.nbr) };
            // Source as a delta; type verbatim; target as a delta within the same (source, type) run.
            put_varint(&mut buf, r.src.0 - prev.src.0);
            put_varint(&mut buf, r.ty.0 as u64);
            if r.src == prev.src && r.ty == prev.ty {
                put_varint(&mut buf, r.dst.0 - prev.dst.0);
            } else {
                put_varint(&mut buf, r.dst.0);
            }
            put_varint(&mut buf, r.id.0);
            put_props(&mut buf, state.rel_props(r.id).flatten());
            prev = r;
        });
        std::ops::ControlFlow::Continue(())
    });
    let indexes = state.indexes();
    put_varint(&mut buf, indexes.len() as u64);
    for (l, k) in indexes {
        put_varint(&mut buf, l.0 as u64);
        put_varint(&mut buf, k.0 as u64);
    }
    buf
}

pub fn decode_body(body: &[u8], catalog: &Catalog, version: u64) -> DecodeResult<GraphState> {
    let mut r = Reader::new(body);
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
    let nnodes = r.count(3)?;
    let mut nodes = Vec::with_capacity(nnodes);
    let mut id = 0u64;
    for i in 0..nnodes {
        let delta = r.varint()?;
        if i > 0 && delta == 0 {
            return Err(DecodeError("node ids out of order".into()));
        }
        id = id.checked_add(delta).ok_or_else(|| DecodeError("node id overflow".into()))?;
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
        nodes.push(NodeInput { id: NodeId(id), labels, props: read_props(&mut r)? });
    }
    let nrels = r.count(5)?;
    let mut rels = Vec::with_capacity(nrels);
    let mut prev_src = 0u64;
    let mut prev_ty = u32::MAX;
    let mut prev_dst = 0u64;
    for _ in 0..nrels {
        let src_delta = r.varint()?;
        let src = prev_src.checked_add(src_delta).ok_or_else(|| DecodeError("source id overflow".into()))?;
        let ty = r.u32v()?;
        let dst_field = r.varint()?;
        let dst = if src_delta == 0 && ty == prev_ty {
            prev_dst.checked_add(dst_field).ok_or_else(|| DecodeError("target id overflow".into()))?
        } else {
            dst_field
        };
        let rid = r.varint()?;
        let props = read_props(&mut r)?;
        rels.push(RelInput {
            rec: RelRecord { id: RelId(rid), ty: TypeId(ty), src: NodeId(src), dst: NodeId(dst) },
            props,
        });
        (prev_src, prev_ty, prev_dst) = (src, ty, dst);
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
    if !r.is_empty() {
        return Err(DecodeError(format!("{} trailing bytes after the graph", r.remaining())));
    }
    let mut state = build_state(version, nodes, rels, &keys).map_err(|e| DecodeError(e.to_string()))?;
    for (label, key) in indexes {
        state.apply(&crate::ops::Op::CreateIndex { label, key }).map_err(|e| DecodeError(e.to_string()))?;
    }
    Ok(state)
}

fn header(db_id: &[u8; 16], version: u64, next_node: u64, next_rel: u64) -> [u8; HEADER_LEN] {
    let mut h = [0u8; HEADER_LEN];
    h[..8].copy_from_slice(CHECKPOINT_MAGIC);
    h[8..24].copy_from_slice(db_id);
    h[24..32].copy_from_slice(&version.to_le_bytes());
    h[32..40].copy_from_slice(&next_node.to_le_bytes());
    h[40..48].copy_from_slice(&next_rel.to_le_bytes());
    let crc = crc32fast::hash(&h[..48]);
    h[48..52].copy_from_slice(&crc.to_le_bytes());
    h
}

/// Writes a checkpoint of `state` into `dir` atomically; returns its path and size in bytes.
pub fn write(
    dir: &Path,
    db_id: &[u8; 16],
    state: &GraphState,
    catalog: &Catalog,
    next_node: u64,
    next_rel: u64,
) -> Result<(PathBuf, u64)> {
    let body = encode_body(state, catalog);
    let final_path = dir.join(checkpoint_name(state.version()));
    let tmp_path = dir.join(format!("{}.tmp", checkpoint_name(state.version())));
    let io = |e| StorageError::io(&tmp_path, e);
    let mut file: File = OpenOptions::new().create(true).truncate(true).write(true).open(&tmp_path).map_err(io)?;
    let mut out = Vec::with_capacity(body.len() / 3 + HEADER_LEN);
    out.extend_from_slice(&header(db_id, state.version(), next_node, next_rel));
    let mut blocks = 0u32;
    // Blocks compress independently: spread them over the cores, keep their order.
    let chunks: Vec<&[u8]> = body.chunks(BLOCK_RAW).collect();
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get()).min(chunks.len().max(1));
    let compressed: Vec<std::io::Result<Vec<u8>>> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|t| {
                let chunks = &chunks;
                scope.spawn(move || {
                    (t..chunks.len())
                        .step_by(threads)
                        .map(|i| (i, zstd::bulk::compress(chunks[i], 3)))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        let mut all: Vec<(usize, std::io::Result<Vec<u8>>)> =
            workers.into_iter().flat_map(|w| w.join().expect("compression thread")).collect();
        all.sort_by_key(|(i, _)| *i);
        all.into_iter().map(|(_, c)| c).collect()
    });
    for (chunk, compressed) in chunks.iter().zip(compressed) {
        let compressed = compressed.map_err(io)?;
        out.extend_from_slice(&(chunk.len() as u32).to_le_bytes());
        out.extend_from_slice(&(compressed.len() as u32).to_le_bytes());
        out.extend_from_slice(&crc32fast::hash(&compressed).to_le_bytes());
        out.extend_from_slice(&compressed);
        blocks += 1;
    }
    out.extend_from_slice(&0u32.to_le_bytes());
    out.extend_from_slice(&0u32.to_le_bytes());
    out.extend_from_slice(&blocks.to_le_bytes());
    file.write_all(&out).map_err(io)?;
    file.sync_all().map_err(io)?;
    drop(file);
    std::fs::rename(&tmp_path, &final_path).map_err(|e| StorageError::io(&final_path, e))?;
    sync_dir(dir)?;
    Ok((final_path, out.len() as u64))
}

/// Reads and verifies a checkpoint; any damage is an error naming the file.
pub fn load(path: &Path, db_id: &[u8; 16], catalog: &Catalog) -> Result<Loaded> {
    let bytes = read_file(path)?;
    let corrupt = |m: String| StorageError::Corrupt { path: path.to_path_buf(), message: m };
    if bytes.len() < HEADER_LEN || &bytes[..8] != CHECKPOINT_MAGIC {
        return Err(corrupt("not a Plexus checkpoint (bad magic or too short)".into()));
    }
    let crc = u32::from_le_bytes(bytes[48..52].try_into().expect("4 bytes"));
    if crc != crc32fast::hash(&bytes[..48]) {
        return Err(corrupt("checkpoint header checksum mismatch".into()));
    }
    // The checksum does not cover the reserved tail of the header; the writer zeroes it, so anything else there
    // is damage, and a checkpoint is the only copy of what it holds.
    if bytes[52..HEADER_LEN].iter().any(|&b| b != 0) {
        return Err(corrupt("checkpoint header has nonzero reserved bytes".into()));
    }
    if &bytes[8..24] != db_id {
        return Err(StorageError::ForeignFile {
            path: path.to_path_buf(),
            found: hex(&bytes[8..24]),
            expected: hex(db_id),
        });
    }
    let u64_at = |o: usize| u64::from_le_bytes(bytes[o..o + 8].try_into().expect("8 bytes"));
    let (version, next_node, next_rel) = (u64_at(24), u64_at(32), u64_at(40));
    let mut r = Reader::new(&bytes[HEADER_LEN..]);
    let mut body = Vec::new();
    let mut blocks = 0u32;
    loop {
        let raw = r.u32_le().map_err(|e| corrupt(format!("truncated block header: {e}")))? as usize;
        let comp = r.u32_le().map_err(|e| corrupt(format!("truncated block header: {e}")))? as usize;
        let crc = r.u32_le().map_err(|e| corrupt(format!("truncated block header: {e}")))?;
        if raw == 0 && comp == 0 {
            if crc != blocks {
                return Err(corrupt(format!("end block counts {crc} blocks, found {blocks}")));
            }
            break;
        }
        if raw > BLOCK_RAW {
            return Err(corrupt(format!("block of {raw} bytes exceeds the format's limit")));
        }
        let data = r.take(comp).map_err(|e| corrupt(format!("truncated block: {e}")))?;
        if crc32fast::hash(data) != crc {
            return Err(corrupt(format!("block {blocks} checksum mismatch")));
        }
        let raw_bytes = zstd::bulk::decompress(data, raw).map_err(|e| corrupt(format!("block {blocks}: {e}")))?;
        if raw_bytes.len() != raw {
            return Err(corrupt(format!("block {blocks} decompressed to the wrong size")));
        }
        body.extend_from_slice(&raw_bytes);
        blocks += 1;
    }
    if !r.is_empty() {
        return Err(corrupt(format!("{} unexpected bytes after the end block", r.remaining())));
    }
    let state = decode_body(&body, catalog, version).map_err(|e| corrupt(format!("graph body: {e}")))?;
    Ok(Loaded { state, next_node, next_rel })
}

pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
