//! Checkpoints: a compressed image of the whole graph at one version, written atomically.
//!
//! Layout: a 64-byte header (magic with the image format, database id, version, next node and relationship ids,
//! CRC), then blocks `[raw length: u32][compressed length: u32][CRC32 of compressed bytes: u32][zstd bytes]`, then
//! an end block with both lengths zero whose CRC field holds the number of blocks. The blocks, decompressed and
//! concatenated, are the graph image ([`crate::image`]). The image is encoded in parts, and each part is split
//! into blocks and compressed, on all cores. Only which property indexes exist is stored: their entries are
//! derived from the nodes and rebuilt on load, which keeps checkpoints small and leaves no second copy of the data
//! that could disagree with the first. Written to a temporary file, fsynced, renamed into place and the directory
//! fsynced: a crash leaves either the old checkpoint or the new one.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::catalog::Catalog;
use crate::codec::Reader;
use crate::error::{Result, StorageError};
use crate::graph::GraphState;
use crate::image;
pub use crate::image::{decode_body, encode_body};
use crate::wal::{read_file, sync_dir};

/// The magic's first seven bytes; the eighth is the image format ([`image::FORMAT_V2`] when written).
pub const CHECKPOINT_MAGIC_PREFIX: &[u8; 7] = b"PLXCKPT";
const HEADER_LEN: usize = 64;
const BLOCK_RAW: usize = 4 << 20;

/// Records the version of the newest checkpoint written, so that an open finding none (or only older ones)
/// refuses instead of opening without the data it held: a database made by a bulk import has no log to
/// reveal a deleted checkpoint.
pub const HEAD_FILE: &str = "checkpoint.head";

/// The version of the newest checkpoint written, as recorded; `None` for a database from before the record, an
/// error when the record is damaged.
pub fn recorded_head(dir: &Path) -> crate::error::Result<Option<u64>> {
    crate::wal::read_marker(dir, HEAD_FILE)
}

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

fn header(db_id: &[u8; 16], version: u64, next_node: u64, next_rel: u64) -> [u8; HEADER_LEN] {
    let mut h = [0u8; HEADER_LEN];
    h[..7].copy_from_slice(CHECKPOINT_MAGIC_PREFIX);
    h[7] = image::FORMAT_V2;
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
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let parts = image::parts(state, threads);
    let ids = (state.version(), next_node, next_rel);
    write_parts(dir, db_id, ids, &parts, |part, buf| image::encode_part(state, catalog, part, buf))
}

/// Writes a checkpoint at `version` whose image is the concatenation of `parts`, each encoded by `encode` (into
/// the empty buffer it is given),
/// into `dir` atomically; returns its path and size in bytes. `(version, next_node, next_rel)` go to the header.
pub(crate) fn write_parts(
    dir: &Path,
    db_id: &[u8; 16],
    (version, next_node, next_rel): (u64, u64, u64),
    parts: &[image::Part],
    encode: impl Fn(&image::Part, &mut Vec<u8>) + Sync,
) -> Result<(PathBuf, u64)> {
    let final_path = dir.join(checkpoint_name(version));
    let tmp_path = dir.join(format!("{}.tmp", checkpoint_name(version)));
    let header = header(db_id, version, next_node, next_rel);
    let written = write_image(&tmp_path, &header, parts, encode);
    if written.is_err() {
        // A failed write (a full disk) must not keep the space it took until the next open: commits go on in
        // what is left.
        let _ = std::fs::remove_file(&tmp_path);
    }
    let size = written?;
    std::fs::rename(&tmp_path, &final_path).map_err(|e| StorageError::io(&final_path, e))?;
    sync_dir(dir)?;
    crate::wal::write_marker(dir, HEAD_FILE, version)?;
    Ok((final_path, size))
}

/// Writes `header` and the image of `parts` to `tmp_path` and syncs it; returns its size in bytes.
///
/// Workers on every core encode parts, cut them into blocks and compress those; this thread writes the blocks
/// in order as they come, so that the file's writing overlaps the compression instead of following it.
fn write_image(
    tmp_path: &Path,
    header: &[u8; HEADER_LEN],
    parts: &[image::Part],
    encode: impl Fn(&image::Part, &mut Vec<u8>) + Sync,
) -> Result<u64> {
    let io = |e| StorageError::io(tmp_path, e);
    let mut file: File = OpenOptions::new().create(true).truncate(true).write(true).open(tmp_path).map_err(io)?;
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get()).clamp(1, parts.len().max(1));
    let next = AtomicUsize::new(0);
    let (done_tx, done_rx) = std::sync::mpsc::channel::<(usize, Vec<CompressedBlock>)>();
    let written: std::io::Result<u64> = std::thread::scope(|scope| {
        for _ in 0..threads {
            let (done, next, encode) = (done_tx.clone(), &next, &encode);
            scope.spawn(move || {
                // One buffer per worker, reused: fresh memory for every part cost page faults.
                let mut raw = Vec::new();
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(part) = parts.get(i) else { break };
                    raw.clear();
                    encode(part, &mut raw);
                    let blocks = raw.chunks(BLOCK_RAW).map(|c| (c.len(), zstd::bulk::compress(c, 1))).collect();
                    if done.send((i, blocks)).is_err() {
                        break;
                    }
                }
            });
        }
        drop(done_tx);
        let mut waiting: std::collections::BTreeMap<usize, Vec<CompressedBlock>> = Default::default();
        let (mut size, mut blocks, mut wanted) = (0u64, 0u32, 0usize);
        let mut put = |bytes: &[u8]| {
            size += bytes.len() as u64;
            file.write_all(bytes)
        };
        put(header)?;
        for (i, part) in done_rx {
            waiting.insert(i, part);
            while let Some(part) = waiting.remove(&wanted) {
                wanted += 1;
                for (raw_len, compressed) in part {
                    let compressed = compressed?;
                    let mut frame = [0u8; 12];
                    frame[..4].copy_from_slice(&(raw_len as u32).to_le_bytes());
                    frame[4..8].copy_from_slice(&(compressed.len() as u32).to_le_bytes());
                    frame[8..].copy_from_slice(&crc32fast::hash(&compressed).to_le_bytes());
                    put(&frame)?;
                    put(&compressed)?;
                    blocks += 1;
                }
            }
        }
        let mut end = [0u8; 12];
        end[8..].copy_from_slice(&blocks.to_le_bytes());
        put(&end)?;
        Ok(size)
    });
    // An error ends the writing loop, and with it the channel: the workers stop at their next part.
    let size = written.map_err(io)?;
    file.sync_all().map_err(io)?;
    Ok(size)
}

/// A block of an image: its raw length and its compressed bytes.
type CompressedBlock = (usize, std::io::Result<Vec<u8>>);

/// One block to check and decompress: its number, compressed bytes, checksum and place in the image.
type BlockWork<'a> = (usize, &'a [u8], u32, &'a mut [u8]);

/// Reads and verifies a checkpoint; any damage is an error naming the file.
pub fn load(path: &Path, db_id: &[u8; 16], catalog: &Catalog) -> Result<Loaded> {
    let bytes = read_file(path)?;
    let corrupt = |m: String| StorageError::Corrupt { path: path.to_path_buf(), message: m };
    if bytes.len() < HEADER_LEN || &bytes[..7] != CHECKPOINT_MAGIC_PREFIX {
        return Err(corrupt("not a Plexus checkpoint (bad magic or too short)".into()));
    }
    let format = bytes[7];
    if !(image::FORMAT_V1..=image::FORMAT_V2).contains(&format) {
        return Err(corrupt(format!(
            "checkpoint image format {format} is not one this build reads (1 to {})",
            image::FORMAT_V2
        )));
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
    // Block headers first (lengths and checksums), then every block checked and decompressed in parallel into
    // its place in one buffer sized up front.
    let mut blocks: Vec<(usize, &[u8], u32)> = Vec::new();
    loop {
        let raw = r.u32_le().map_err(|e| corrupt(format!("truncated block header: {e}")))? as usize;
        let comp = r.u32_le().map_err(|e| corrupt(format!("truncated block header: {e}")))? as usize;
        let crc = r.u32_le().map_err(|e| corrupt(format!("truncated block header: {e}")))?;
        if raw == 0 && comp == 0 {
            if crc as usize != blocks.len() {
                return Err(corrupt(format!("end block counts {crc} blocks, found {}", blocks.len())));
            }
            break;
        }
        if raw > BLOCK_RAW {
            return Err(corrupt(format!("block of {raw} bytes exceeds the format's limit")));
        }
        let data = r.take(comp).map_err(|e| corrupt(format!("truncated block: {e}")))?;
        blocks.push((raw, data, crc));
    }
    if !r.is_empty() {
        return Err(corrupt(format!("{} unexpected bytes after the end block", r.remaining())));
    }
    let mut body = vec![0u8; blocks.iter().map(|b| b.0).sum()];
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get()).clamp(1, blocks.len().max(1));
    let mut work: Vec<Vec<BlockWork>> = (0..threads).map(|_| Vec::new()).collect();
    let mut rest = &mut body[..];
    for (i, &(raw, data, crc)) in blocks.iter().enumerate() {
        let (place, tail) = std::mem::take(&mut rest).split_at_mut(raw);
        rest = tail;
        work[i % threads].push((i, data, crc, place));
    }
    let failures: Vec<(usize, String)> = std::thread::scope(|scope| {
        let workers: Vec<_> = work
            .into_iter()
            .map(|blocks| {
                scope.spawn(move || {
                    let mut failures = Vec::new();
                    for (i, data, crc, place) in blocks {
                        if crc32fast::hash(data) != crc {
                            failures.push((i, format!("block {i} checksum mismatch")));
                            continue;
                        }
                        match zstd::bulk::decompress_to_buffer(data, place) {
                            Ok(n) if n == place.len() => {}
                            Ok(_) => failures.push((i, format!("block {i} decompressed to the wrong size"))),
                            Err(e) => failures.push((i, format!("block {i}: {e}"))),
                        }
                    }
                    failures
                })
            })
            .collect();
        workers.into_iter().flat_map(|w| w.join().expect("checkpoint decompression thread")).collect()
    });
    if let Some((_, message)) = failures.into_iter().min_by_key(|(i, _)| *i) {
        return Err(corrupt(message));
    }
    let state =
        image::decode_body_format(body, catalog, version, format).map_err(|e| corrupt(format!("graph body: {e}")))?;
    Ok(Loaded { state, next_node, next_rel })
}

pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
