//! The write-ahead log: append-only segments of checksummed, length-framed commit records, with group commit.
//!
//! Committers append encoded records to a shared buffer (in version order, under the commit lock) and then ask
//! for durability up to their record's end. The first to ask becomes the flusher: it takes everything buffered so
//! far, writes it with one `write` and one `fdatasync`, and wakes everyone it covered. While it waits on the disk
//! the next committers keep appending, so one fsync serves as many commits as arrive during the previous one:
//! throughput grows with concurrency, as in the Bitsy write-up, and there is never a seek.
//!
//! Segment layout: a 48-byte header (magic, database id, segment number, first version, CRC), then records
//! `[payload length: u32 LE][CRC32 of payload: u32 LE][payload]`, then zeros up to the file's end. Records are
//! only ever appended; recovery cuts a torn tail off the last segment, and the next open appends to that segment
//! if it ended cleanly and has room (`Wal::resume`).
//!
//! **Zeroed ahead.** The file is extended with zeros ahead of the records (from 64 KiB up to 4 MiB at a time,
//! growing with the segment) and records are written over them. An `fdatasync` of a file whose size changed
//! must also write its inode (on ext4 without a journal a second synchronous write, with a journal a journal
//! commit); over bytes already there it writes the data alone. On the benchmark machine that made an fsync
//! 1.4× faster (7.8k against 11k appends+fsyncs a second). The price is writing each byte of the log twice.
//! A record length of zero with nothing but zeros after it is the clean end of a segment.

use parking_lot::{Condvar, Mutex};
use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use crate::error::{Result, StorageError};

pub const SEGMENT_MAGIC: &[u8; 8] = b"PLXWAL\x00\x01";
pub const SEGMENT_HEADER_LEN: usize = 48;
/// A record's payload may not exceed this (a larger declared length is corruption).
pub const MAX_RECORD: usize = 1 << 30;
/// Start a new segment once the current one passes this size.
const SEGMENT_TARGET: u64 = 64 << 20;
/// Bounds of how far ahead of its records a segment is zeroed (a quarter of its size, within these).
const ZEROED_AHEAD_MIN: u64 = 64 << 10;
const ZEROED_AHEAD_MAX: u64 = 4 << 20;

/// The file recording the newest segment ever started (its number and a CRC of it), so that recovery can tell
/// a newest segment that is missing (deleted by hand, lost with a disk) from one that never existed.
pub const HEAD_FILE: &str = "wal.head";

/// Records `seq` as the newest segment started, atomically.
fn record_head(dir: &Path, seq: u64) -> Result<()> {
    write_marker(dir, HEAD_FILE, seq)
}

/// The newest segment started, as recorded; `None` for a database from before the record (or a damaged one,
/// which then checks nothing).
pub fn recorded_head(dir: &Path) -> Result<Option<u64>> {
    read_marker(dir, HEAD_FILE)
}

/// Writes `value` with its checksum to the small file `name`, atomically (a temporary file, fsynced, then
/// renamed, and the directory fsynced).
pub(crate) fn write_marker(dir: &Path, name: &str, value: u64) -> Result<()> {
    let mut bytes = value.to_le_bytes().to_vec();
    bytes.extend_from_slice(&crc32fast::hash(&value.to_le_bytes()).to_le_bytes());
    let (path, temporary) = (dir.join(name), dir.join(format!("{name}.tmp")));
    let mut file = File::create(&temporary).map_err(|e| StorageError::io(&temporary, e))?;
    file.write_all(&bytes).and_then(|()| file.sync_all()).map_err(|e| StorageError::io(&temporary, e))?;
    std::fs::rename(&temporary, &path).map_err(|e| StorageError::io(&path, e))?;
    sync_dir(dir)
}

/// The value [`write_marker`] wrote to `name`; `None` when the file is absent. A damaged one is an error: it is
/// written whole before it is renamed into place, so damage is not a crash's, and what it guards (a missing
/// newest segment or checkpoint) would otherwise go unnoticed.
pub(crate) fn read_marker(dir: &Path, name: &str) -> Result<Option<u64>> {
    let path = dir.join(name);
    let bytes = match std::fs::read(&path) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(StorageError::io(&path, e)),
    };
    let value = (bytes.len() == 12 && crc32fast::hash(&bytes[..8]).to_le_bytes() == bytes[8..12])
        .then(|| u64::from_le_bytes(bytes[..8].try_into().expect("8 bytes")));
    value.map(Some).ok_or_else(|| StorageError::Corrupt {
        path,
        message: format!(
            "damaged (it records the newest file written, to notice one gone missing); remove it to open without \
             that check, after making sure no {} file is missing",
            if name == HEAD_FILE { "wal-*.log" } else { "checkpoint-*.plx" }
        ),
    })
}

pub fn segment_name(seq: u64) -> String {
    format!("wal-{seq:016}.log")
}

pub fn parse_segment_name(name: &str) -> Option<u64> {
    name.strip_prefix("wal-")?.strip_suffix(".log")?.parse().ok()
}

pub fn encode_header(db_id: &[u8; 16], seq: u64, first_version: u64) -> [u8; SEGMENT_HEADER_LEN] {
    let mut h = [0u8; SEGMENT_HEADER_LEN];
    h[..8].copy_from_slice(SEGMENT_MAGIC);
    h[8..24].copy_from_slice(db_id);
    h[24..32].copy_from_slice(&seq.to_le_bytes());
    h[32..40].copy_from_slice(&first_version.to_le_bytes());
    let crc = crc32fast::hash(&h[..40]);
    h[40..44].copy_from_slice(&crc.to_le_bytes());
    h
}

/// A segment header, decoded.
pub struct SegmentHeader {
    pub db_id: [u8; 16],
    pub seq: u64,
    pub first_version: u64,
}

pub fn decode_header(h: &[u8]) -> Result<SegmentHeader, String> {
    if h.len() < SEGMENT_HEADER_LEN {
        return Err("segment shorter than its header".into());
    }
    if &h[..8] != SEGMENT_MAGIC {
        return Err("not a Plexus WAL segment (bad magic)".into());
    }
    let crc = u32::from_le_bytes(h[40..44].try_into().expect("4 bytes"));
    if crc != crc32fast::hash(&h[..40]) {
        return Err("segment header checksum mismatch".into());
    }
    // The checksum does not cover the reserved tail; the writer zeroes it, so anything else there is damage.
    if h[44..SEGMENT_HEADER_LEN].iter().any(|&b| b != 0) {
        return Err("segment header has nonzero reserved bytes".into());
    }
    Ok(SegmentHeader {
        db_id: h[8..24].try_into().expect("16 bytes"),
        seq: u64::from_le_bytes(h[24..32].try_into().expect("8 bytes")),
        first_version: u64::from_le_bytes(h[32..40].try_into().expect("8 bytes")),
    })
}

/// Frames one payload as a record into `buf`.
pub fn frame(buf: &mut Vec<u8>, payload: &[u8]) {
    buf.extend_from_slice(&(payload.len() as u32).to_le_bytes());
    buf.extend_from_slice(&crc32fast::hash(payload).to_le_bytes());
    buf.extend_from_slice(payload);
}

/// How reading a segment ended.
#[derive(Debug, PartialEq, Eq)]
pub enum TailState {
    /// Every byte belonged to a valid record.
    Clean,
    /// Bytes from `offset` on do not form a valid record.
    Damaged { offset: u64, reason: String },
}

/// Where the record of `payload`, one of the slices [`read_segment`] returned from `segment`, starts: its
/// frame's length and checksum come before it.
pub fn record_offset(segment: &[u8], payload: &[u8]) -> u64 {
    (payload.as_ptr() as usize - segment.as_ptr() as usize - 8) as u64
}

/// Reads a segment's records, stopping at the first torn or corrupt one.
pub fn read_segment(bytes: &[u8]) -> (Vec<&[u8]>, u64, TailState) {
    let mut records = Vec::new();
    let mut pos = SEGMENT_HEADER_LEN;
    while pos < bytes.len() {
        if bytes.len() - pos < 8 && bytes[pos..].iter().all(|&b| b == 0) {
            return (records, pos as u64, TailState::Clean);
        }
        if bytes.len() - pos < 8 {
            return (
                records,
                pos as u64,
                TailState::Damaged { offset: pos as u64, reason: "torn record header".into() },
            );
        }
        let len = u32::from_le_bytes(bytes[pos..pos + 4].try_into().expect("4 bytes")) as usize;
        let crc = u32::from_le_bytes(bytes[pos + 4..pos + 8].try_into().expect("4 bytes"));
        if len == 0 && bytes[pos..].iter().all(|&b| b == 0) {
            // The zeroed space ahead of the records: the segment ends here.
            return (records, pos as u64, TailState::Clean);
        }
        if len > MAX_RECORD || len == 0 {
            // A zero length over bytes that are not all zero: no record starts here, yet the space kept for the
            // next ones holds something.
            let reason = if len == 0 {
                "bytes that are not zero after the last record, where the log is kept zeroed".to_string()
            } else {
                format!("implausible record length {len}")
            };
            return (records, pos as u64, TailState::Damaged { offset: pos as u64, reason });
        }
        if bytes.len() - pos - 8 < len {
            let reason = format!("torn record: {len} bytes declared, {} present", bytes.len() - pos - 8);
            return (records, pos as u64, TailState::Damaged { offset: pos as u64, reason });
        }
        let payload = &bytes[pos + 8..pos + 8 + len];
        if crc32fast::hash(payload) != crc {
            return (
                records,
                pos as u64,
                TailState::Damaged { offset: pos as u64, reason: "checksum mismatch".into() },
            );
        }
        records.push(payload);
        pos += 8 + len;
    }
    (records, pos as u64, TailState::Clean)
}

pub fn read_file(path: &Path) -> Result<Vec<u8>> {
    let mut bytes = Vec::new();
    File::open(path).and_then(|mut f| f.read_to_end(&mut bytes)).map_err(|e| StorageError::io(path, e))?;
    Ok(bytes)
}

/// fsyncs a directory so that renames and new files in it are durable.
pub fn sync_dir(dir: &Path) -> Result<()> {
    File::open(dir).and_then(|d| d.sync_all()).map_err(|e| StorageError::io(dir, e))
}

struct Pending {
    bytes: Vec<u8>,
    /// Log sequence number (a byte count over the life of the database) after the last buffered byte.
    end_lsn: u64,
    /// Version of the last buffered record.
    last_version: u64,
}

#[derive(Default)]
struct FlushState {
    /// Whether a leader is writing (and fsyncing) now.
    flushing: bool,
    /// The end LSN of what the flush in progress writes.
    target: u64,
    /// Number of the flush in progress, or of the next one.
    epoch: u64,
}

struct Segment {
    file: File,
    path: PathBuf,
    seq: u64,
    /// End of the records.
    size: u64,
    /// End of the records known to be on disk (fsynced).
    synced: u64,
    /// Length of the file: zeros from `size` to here.
    allocated: u64,
}

/// The open log of a database.
pub struct Wal {
    dir: PathBuf,
    db_id: [u8; 16],
    pending: Mutex<Pending>,
    segment: Mutex<Segment>,
    durable_lsn: AtomicU64,
    /// The flush in progress, if any; followers wait on `covered` instead of queueing on a mutex.
    flush: Mutex<FlushState>,
    /// Followers covered by flush `e` wait on `covered[e % 2]`, the others on the other one: a flush wakes only
    /// the commits it made durable (and one more to lead the next), instead of every follower, most of which would
    /// go back to sleep. With 64 committers, waking all of them cost more context switches than the commits.
    covered: [Condvar; 2],
    poisoned: AtomicBool,
    fsyncs: AtomicU64,
    /// See [`Wal::rollover_failure`].
    rollover_failure: Mutex<Option<String>>,
    /// The failure that poisoned the log (see [`Wal::poison`]).
    poison_cause: Mutex<Option<String>>,
}

impl Wal {
    /// Starts a new segment `seq` whose first record will have version `next_version`.
    pub fn create(dir: &Path, db_id: [u8; 16], seq: u64, next_version: u64) -> Result<Wal> {
        let segment = Self::new_segment(dir, &db_id, seq, next_version)?;
        Ok(Self::with_segment(dir, db_id, segment, next_version))
    }

    /// Goes on writing the segment at `path` (number `seq`), whose records recovery read to a clean end at
    /// `end`; the next record will have version `next_version`. A database opened for a few commits at a time
    /// (each `plexus query`, a short script) then adds to one segment instead of leaving a file per session.
    pub fn resume(dir: &Path, db_id: [u8; 16], seq: u64, path: &Path, end: u64, next_version: u64) -> Result<Wal> {
        let file = OpenOptions::new().read(true).write(true).open(path).map_err(|e| StorageError::io(path, e))?;
        let allocated = file.metadata().map_err(|e| StorageError::io(path, e))?.len().max(end);
        // The record of the newest segment must name this one before anything more is written to it: it may be
        // missing (removed by hand, a database from before it) or behind (a crash between a segment's creation
        // and its record), and commits added here would then not be missed if the segment were lost.
        if recorded_head(dir).ok().flatten() != Some(seq) {
            record_head(dir, seq)?;
        }
        let segment = Segment { file, path: path.to_path_buf(), seq, size: end, synced: end, allocated };
        Ok(Self::with_segment(dir, db_id, segment, next_version))
    }

    /// Whether a segment whose records end at `end` has room left for more, or should be left for a new one.
    pub fn has_room(end: u64) -> bool {
        end < SEGMENT_TARGET
    }

    fn with_segment(dir: &Path, db_id: [u8; 16], segment: Segment, next_version: u64) -> Wal {
        Wal {
            dir: dir.to_path_buf(),
            db_id,
            pending: Mutex::new(Pending { bytes: Vec::new(), end_lsn: 0, last_version: next_version - 1 }),
            segment: Mutex::new(segment),
            durable_lsn: AtomicU64::new(0),
            flush: Mutex::new(FlushState::default()),
            covered: [Condvar::new(), Condvar::new()],
            poisoned: AtomicBool::new(false),
            fsyncs: AtomicU64::new(0),
            rollover_failure: Mutex::new(None),
            poison_cause: Mutex::new(None),
        }
    }

    /// Creates segment `seq` whole or not at all: its header is written and fsynced under a temporary name, then
    /// renamed. So a segment shorter than its header is always damage, never a creation cut short by a crash.
    fn new_segment(dir: &Path, db_id: &[u8; 16], seq: u64, first_version: u64) -> Result<Segment> {
        let path = dir.join(segment_name(seq));
        if path.exists() {
            let taken = std::io::Error::new(std::io::ErrorKind::AlreadyExists, "the segment exists already");
            return Err(StorageError::io(&path, taken));
        }
        let temporary = path.with_extension("log.tmp");
        let created = (|| {
            let mut file = OpenOptions::new()
                .create(true)
                .truncate(true)
                .write(true)
                .open(&temporary)
                .map_err(|e| StorageError::io(&temporary, e))?;
            file.write_all(&encode_header(db_id, seq, first_version)).map_err(|e| StorageError::io(&temporary, e))?;
            file.sync_all().map_err(|e| StorageError::io(&temporary, e))?;
            std::fs::rename(&temporary, &path).map_err(|e| StorageError::io(&path, e))?;
            sync_dir(dir)?;
            record_head(dir, seq)?;
            Ok(file)
        })();
        match created {
            Ok(file) => {
                let size = SEGMENT_HEADER_LEN as u64;
                Ok(Segment { file, path, seq, size, synced: size, allocated: size })
            }
            Err(e) => {
                // Nothing was written to it, and the segment in use goes on taking records: what was made of
                // this one goes, so that the next attempt (or the next open) starts from nothing. A segment of
                // no records, if its removal fails too, ends cleanly for recovery.
                let _ = std::fs::remove_file(&temporary);
                if recorded_head(dir).ok().flatten() != Some(seq) {
                    let _ = std::fs::remove_file(&path);
                }
                Err(e)
            }
        }
    }

    pub fn check_poisoned(&self) -> Result<()> {
        if self.poisoned.load(Ordering::Acquire) {
            let cause = self.poison_cause.lock().clone().unwrap_or_else(|| "an I/O error".into());
            return Err(StorageError::Poisoned(format!("an earlier write to the log failed ({cause})")));
        }
        Ok(())
    }

    /// Refuses every later write: the log may hold part of what failed. The first failure is kept, to be named
    /// in every refusal after it.
    fn poison(&self, e: &StorageError) {
        let mut cause = self.poison_cause.lock();
        if cause.is_none() {
            *cause = Some(e.cause());
        }
        self.poisoned.store(true, Ordering::Release);
    }

    /// Buffers one commit record; returns its end LSN. Callers append in version order.
    pub fn append(&self, payload: &[u8], version: u64) -> u64 {
        let mut p = self.pending.lock();
        frame(&mut p.bytes, payload);
        p.end_lsn += 8 + payload.len() as u64;
        p.last_version = version;
        p.end_lsn
    }

    pub fn buffered_bytes(&self) -> usize {
        self.pending.lock().bytes.len()
    }

    /// Makes everything up to `lsn` durable (group commit); with `fsync` false, only writes it to the OS.
    ///
    /// Leader/follower: the first committer to find no flush in progress becomes the leader, takes everything
    /// buffered so far and writes and fsyncs it; the others sleep on a condition variable, and those it covers
    /// are all woken at once when it finishes. One of those it does not cover is woken too and becomes the next
    /// leader, taking everything appended during the previous fsync, so one fsync serves as many commits as
    /// arrive while it runs.
    pub fn sync_to(&self, lsn: u64, fsync: bool) -> Result<()> {
        if self.durable_lsn.load(Ordering::Acquire) >= lsn {
            return Ok(());
        }
        let mut state = self.flush.lock();
        loop {
            if self.durable_lsn.load(Ordering::Acquire) >= lsn {
                return Ok(());
            }
            self.check_poisoned()?;
            if state.flushing {
                let epoch = if lsn <= state.target { state.epoch } else { state.epoch + 1 };
                self.covered[(epoch % 2) as usize].wait(&mut state);
                continue;
            }
            // Lead: take everything buffered, so that `target` says exactly which followers this flush covers.
            state.flushing = true;
            let mut seg = self.segment.lock();
            let (bytes, end_lsn, last_version) = {
                let mut p = self.pending.lock();
                (std::mem::take(&mut p.bytes), p.end_lsn, p.last_version)
            };
            state.target = end_lsn;
            drop(state);
            let result = self.write_out(&mut seg, &bytes, fsync, last_version);
            drop(seg);
            state = self.flush.lock();
            let epoch = state.epoch;
            state.flushing = false;
            state.epoch += 1;
            match result {
                Ok(()) => {
                    self.durable_lsn.fetch_max(end_lsn, Ordering::AcqRel);
                    self.covered[(epoch % 2) as usize].notify_all();
                    // One of those who need the next flush leads it.
                    self.covered[((epoch + 1) % 2) as usize].notify_one();
                }
                Err(e) => {
                    self.poison(&e);
                    self.wake_all();
                    return Err(e);
                }
            }
        }
    }

    fn wake_all(&self) {
        for cv in &self.covered {
            cv.notify_all();
        }
    }

    fn write_out(&self, seg: &mut Segment, bytes: &[u8], fsync: bool, last_version: u64) -> Result<()> {
        if !bytes.is_empty() {
            let end = seg.size + bytes.len() as u64;
            if end > seg.allocated {
                // Past the zeroed space: zero the records' space and the next stretch first, so that the fsyncs
                // until it is used up find the file's size unchanged, and so that a full disk fails the commit
                // before any of its bytes are in the log (a record written, then refused the space after it,
                // would come back at the next open although its commit was reported failed). A segment about to
                // be left zeroes nothing beyond its records.
                let ahead = if end >= SEGMENT_TARGET { 0 } else { (end / 4).clamp(ZEROED_AHEAD_MIN, ZEROED_AHEAD_MAX) };
                zero_fill(&seg.file, seg.allocated, end + ahead).map_err(|e| StorageError::io(&seg.path, e))?;
                seg.allocated = end + ahead;
            }
            seg.file.write_all_at(bytes, seg.size).map_err(|e| StorageError::io(&seg.path, e))?;
            seg.size = end;
        }
        // A segment being left is made durable first: only the current one is fsynced later (`fsync_written`).
        if fsync || (seg.size >= SEGMENT_TARGET && seg.synced < seg.size) {
            seg.file.sync_data().map_err(|e| StorageError::io(&seg.path, e))?;
            seg.synced = seg.size;
            self.fsyncs.fetch_add(1, Ordering::Relaxed);
        }
        if seg.size >= SEGMENT_TARGET {
            // The records are in the log (and on disk, when asked): a new segment that cannot be made now (no
            // file descriptor left, a directory turned read-only, a full disk) fails none of their commits, which
            // a reopen would replay. This segment goes on taking records, and the next write tries again.
            trim(seg);
            match Self::new_segment(&self.dir, &self.db_id, seg.seq + 1, last_version + 1) {
                Ok(new) => {
                    *seg = new;
                    *self.rollover_failure.lock() = None;
                }
                Err(e) => *self.rollover_failure.lock() = Some(e.to_string()),
            }
        }
        Ok(())
    }

    /// Why the log could not start its next segment when it last tried, while it has not managed to since:
    /// commits go on (into the current segment), but an operator should hear of it.
    pub fn rollover_failure(&self) -> Option<String> {
        self.rollover_failure.lock().clone()
    }

    /// Flushes and fsyncs everything, then starts a new segment; returns the new segment's number. Call with
    /// no commit in progress: every record in older segments then has a version below `next_version`.
    pub fn rotate(&self, next_version: u64) -> Result<u64> {
        let mut seg = self.segment.lock();
        self.check_poisoned()?;
        let (bytes, end_lsn, last_version) = {
            let mut p = self.pending.lock();
            (std::mem::take(&mut p.bytes), p.end_lsn, p.last_version)
        };
        if let Err(e) = self.write_out(&mut seg, &bytes, true, last_version) {
            drop(seg);
            self.poison(&e);
            let _flush = self.flush.lock();
            self.wake_all();
            return Err(e);
        }
        // Everything taken is durable, whatever happens to the new segment.
        self.durable_lsn.fetch_max(end_lsn, Ordering::AcqRel);
        trim(&mut seg);
        // A new segment that cannot be made fails the caller (a checkpoint, which then leaves the log as it is),
        // not the log: commits go on into the current segment.
        let result = Self::new_segment(&self.dir, &self.db_id, seg.seq + 1, next_version).map(|new| {
            *seg = new;
            seg.seq
        });
        drop(seg);
        let _flush = self.flush.lock();
        self.wake_all();
        result
    }

    /// Fsyncs the records already written to the OS but not yet made durable: with `batch` durability, commits
    /// write their records at once (so a crash of the process loses none, as with `off`), and this runs every
    /// few milliseconds (so a crash of the machine loses only those since).
    pub fn fsync_written(&self) -> Result<()> {
        let mut seg = self.segment.lock();
        if seg.synced < seg.size {
            if let Err(e) = seg.file.sync_data() {
                let e = StorageError::io(&seg.path, e);
                self.poison(&e);
                return Err(e);
            }
            seg.synced = seg.size;
            self.fsyncs.fetch_add(1, Ordering::Relaxed);
        }
        Ok(())
    }

    /// Cuts the zeroed space off the current segment, for a database being closed (it holds no record, and
    /// the next session starts a segment of its own).
    pub fn trim_zeroed(&self) -> Result<()> {
        let mut seg = self.segment.lock();
        if seg.allocated > seg.size {
            trim(&mut seg);
            seg.file.sync_all().map_err(|e| StorageError::io(&seg.path, e))?;
        }
        Ok(())
    }

    pub fn current_segment(&self) -> u64 {
        self.segment.lock().seq
    }

    pub fn fsync_count(&self) -> u64 {
        self.fsyncs.load(Ordering::Relaxed)
    }

    pub fn end_lsn(&self) -> u64 {
        self.pending.lock().end_lsn
    }
}

/// Cuts the zeroed space off a segment being left for a new one. Nothing depends on it (zeros end a segment
/// cleanly, and a crash before the new length is on disk leaves them), so a failure is ignored; it only keeps
/// the retired segments small until a checkpoint removes them.
fn trim(seg: &mut Segment) {
    if seg.allocated > seg.size && seg.file.set_len(seg.size).is_ok() {
        seg.allocated = seg.size;
    }
}

/// Writes zeros over `from..to` of `file`.
fn zero_fill(file: &File, from: u64, to: u64) -> std::io::Result<()> {
    static ZEROS: [u8; 64 << 10] = [0; 64 << 10];
    let mut at = from;
    while at < to {
        let n = (to - at).min(ZEROS.len() as u64) as usize;
        file.write_all_at(&ZEROS[..n], at)?;
        at += n as u64;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_round_trips_and_detects_damage() {
        let id = [7u8; 16];
        let h = encode_header(&id, 3, 99);
        let d = decode_header(&h).unwrap();
        assert_eq!((d.db_id, d.seq, d.first_version), (id, 3, 99));
        let mut bad = h;
        bad[30] ^= 1;
        assert!(decode_header(&bad).is_err());
    }

    #[test]
    fn zeros_after_the_records_end_a_segment_cleanly() {
        let mut seg = encode_header(&[1; 16], 0, 1).to_vec();
        for i in 0..3u8 {
            frame(&mut seg, &[i + 1; 20]);
        }
        let end = seg.len() as u64;
        for pad in [1, 7, 8, 9, 4096] {
            let mut padded = seg.clone();
            padded.resize(seg.len() + pad, 0);
            let (recs, good_end, state) = read_segment(&padded);
            assert_eq!((recs.len(), good_end, state), (3, end, TailState::Clean), "{pad} zeros");
            // Anything but zeros there is damage after the last record.
            for at in [0, pad / 2, pad - 1] {
                let mut bad = padded.clone();
                bad[seg.len() + at] = 0x10;
                let (recs, good_end, state) = read_segment(&bad);
                assert_eq!((recs.len(), good_end), (3, end), "{pad} zeros, byte {at} set");
                assert!(matches!(state, TailState::Damaged { .. }), "{pad} zeros, byte {at} set");
            }
        }
    }

    /// A next segment that cannot be made (here a directory where its file goes, which no permission bypasses)
    /// fails no commit whose records are in the log: they come back at the next open, so reporting them failed
    /// would invite writing them twice. Commits go on in the current segment until a new one can be made.
    #[test]
    fn a_segment_that_cannot_be_started_fails_no_commit_and_is_retried() {
        let dir = tempfile::tempdir().unwrap();
        let wal = Wal::create(dir.path(), [4; 16], 1, 1).unwrap();
        let blocker = dir.path().join(segment_name(2)).with_extension("log.tmp");
        std::fs::create_dir(&blocker).unwrap();
        let big = vec![9u8; SEGMENT_TARGET as usize];
        let lsn = wal.append(&big, 1);
        wal.sync_to(lsn, true).expect("the record is durable: its commit succeeds");
        assert!(wal.rollover_failure().is_some_and(|e| e.contains("log.tmp")), "{:?}", wal.rollover_failure());
        wal.check_poisoned().unwrap();
        let lsn = wal.append(b"second", 2);
        wal.sync_to(lsn, true).unwrap();
        assert_eq!(wal.current_segment(), 1, "records go on into the current segment");
        // A checkpoint's rotation fails alone, and the log goes on.
        assert!(wal.rotate(3).is_err());
        wal.check_poisoned().unwrap();
        assert!(!dir.path().join(segment_name(2)).exists(), "nothing is left of the attempt");
        std::fs::remove_dir(&blocker).unwrap();
        let lsn = wal.append(b"third", 3);
        wal.sync_to(lsn, true).unwrap();
        assert_eq!((wal.current_segment(), wal.rollover_failure()), (2, None), "the next write started it");
        let bytes = read_file(&dir.path().join(segment_name(1))).unwrap();
        let (recs, _, state) = read_segment(&bytes);
        assert_eq!(state, TailState::Clean);
        assert_eq!(recs, vec![big.as_slice(), b"second".as_slice(), b"third".as_slice()]);
    }

    #[test]
    fn records_are_written_over_zeros_written_ahead() {
        let dir = tempfile::tempdir().unwrap();
        let wal = Wal::create(dir.path(), [3; 16], 1, 1).unwrap();
        let mut expected = 0;
        for v in 1..=50u64 {
            let payload = vec![v as u8; 100 + v as usize];
            let lsn = wal.append(&payload, v);
            wal.sync_to(lsn, v % 2 == 0).unwrap();
            expected += 1;
            let bytes = read_file(&dir.path().join(segment_name(1))).unwrap();
            let (recs, good_end, state) = read_segment(&bytes);
            assert_eq!((recs.len(), state), (expected, TailState::Clean));
            assert!(bytes.len() as u64 > good_end, "zeros ahead of the records");
            assert_eq!(recs.last().unwrap(), &payload.as_slice());
        }
        let file_len = std::fs::metadata(dir.path().join(segment_name(1))).unwrap().len();
        assert!(file_len >= ZEROED_AHEAD_MIN, "zeroed ahead: {file_len} bytes");
        // A segment left for a new one is cut to its records.
        assert_eq!(wal.rotate(51).unwrap(), 2);
        let bytes = read_file(&dir.path().join(segment_name(1))).unwrap();
        assert_eq!(read_segment(&bytes).1, bytes.len() as u64, "trimmed to the records at rotation");
        let lsn = wal.append(b"after the rotation", 51);
        wal.sync_to(lsn, true).unwrap();
        assert!(std::fs::metadata(dir.path().join(segment_name(2))).unwrap().len() >= ZEROED_AHEAD_MIN);
        wal.trim_zeroed().unwrap();
        let bytes = read_file(&dir.path().join(segment_name(2))).unwrap();
        assert_eq!(read_segment(&bytes).1, bytes.len() as u64, "trimmed to the records on close");
    }

    #[test]
    fn torn_and_corrupt_tails_are_detected_at_every_offset() {
        let mut seg = encode_header(&[1; 16], 0, 1).to_vec();
        for i in 0..5u8 {
            frame(&mut seg, &vec![i + 1; 10 + i as usize]);
        }
        let (all, end, state) = read_segment(&seg);
        assert_eq!((all.len(), end as usize, state), (5, seg.len(), TailState::Clean));
        for cut in SEGMENT_HEADER_LEN..seg.len() {
            let (recs, good_end, state) = read_segment(&seg[..cut]);
            assert!(good_end as usize <= cut);
            assert!(recs.len() <= 5);
            if good_end as usize != cut {
                assert!(matches!(state, TailState::Damaged { .. }));
            }
        }
        for flip in SEGMENT_HEADER_LEN..seg.len() {
            let mut bad = seg.clone();
            bad[flip] ^= 0x40;
            let (recs, _, state) = read_segment(&bad);
            assert!(recs.len() < 5 || state != TailState::Clean || recs.iter().zip(&all).all(|(a, b)| a == b));
            assert!(recs.len() < 5, "a flipped byte at {flip} went unnoticed");
        }
    }
}
