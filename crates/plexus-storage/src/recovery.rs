//! Recovery: from a directory's checkpoint and log segments back to the last committed state.
//!
//! The newest checkpoint is loaded (a damaged one is refused: the log it replaced is gone, so opening without it
//! would silently lose data). Then the segments are replayed in order, skipping records the checkpoint already
//! holds. Replay stops at the first torn or corrupt record: the bytes from there on are copied aside (as
//! `*.log.dropped-at-OFFSET`, unless they are only the torn last write of a crash) before the segment is cut,
//! any later segment is set aside as `*.log.dropped`, and the report says what was dropped and how many intact
//! commits were among it: none after a torn write, some after damage in the middle of the log. No committed
//! data is deleted, so an operator can still look at what was lost. Damage followed by intact commits is only
//! dropped when the caller asked for that (`Options::drop_damaged_log`): otherwise the open is refused before
//! anything changes, since the commits after the open would take the dropped ones' versions and make the loss
//! final.
//! Later segments are set aside before the damaged one is cut, so a recovery interrupted part-way and run again
//! reaches the same state. A segment of another database, a gap in the versions or a record that does not apply
//! is refused with an error naming the file.

use std::fs::OpenOptions;
use std::path::{Path, PathBuf};

use crate::catalog::Catalog;
use crate::checkpoint::{self, parse_checkpoint_name};
use crate::error::{Result, StorageError};
use crate::graph::GraphState;
use crate::ops::{decode_commit, Op};
use crate::wal::{decode_header, parse_segment_name, read_file, read_segment, sync_dir, TailState};

/// What recovery found and did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RecoveryReport {
    /// Version of the checkpoint loaded, if any.
    pub checkpoint_version: Option<u64>,
    /// Committed transactions replayed from the log.
    pub replayed: u64,
    /// The version the database opened at.
    pub version: u64,
    /// Torn or corrupt log data that was dropped: (file, offset, bytes dropped, reason).
    pub dropped: Vec<DroppedTail>,
    /// Bytes of log the database opened with (what the next checkpoint retires).
    pub log_bytes: u64,
    /// The database was opened read-only: what `dropped` lists was skipped in memory and left on disk as it
    /// was, for the next opening for writing to recover.
    pub read_only: bool,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DroppedTail {
    pub file: PathBuf,
    pub offset: u64,
    pub bytes: u64,
    pub reason: String,
    /// Whole, checksum-valid commit records among the dropped bytes: commits that were acknowledged once and are
    /// now lost (zero for the torn last write of a crash).
    pub intact_commits: u64,
    /// Where the dropped bytes were set aside.
    pub kept_in: Option<PathBuf>,
    /// Commits were lost but how many cannot be told (a segment cut inside its header).
    pub unknown_loss: bool,
}

impl RecoveryReport {
    pub fn is_clean(&self) -> bool {
        self.dropped.is_empty()
    }

    /// Whole commits recovery dropped: damage to the log, not the torn end of a crash.
    pub fn lost_commits(&self) -> u64 {
        self.dropped.iter().map(|d| d.intact_commits).sum()
    }

    /// The first damage with intact commits after it: what an open for writing refuses, and what a read-only
    /// open describes without them.
    pub fn damage_before_commits(&self) -> Option<&DroppedTail> {
        self.dropped.iter().find(|d| d.intact_commits > 0)
    }

    /// Whether recovery dropped committed data: whole commits, or a segment too damaged to count them in.
    pub fn lost_data(&self) -> bool {
        self.lost_commits() > 0 || self.dropped.iter().any(|d| d.unknown_loss)
    }
}

impl std::fmt::Display for RecoveryReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.checkpoint_version {
            Some(v) => write!(f, "loaded checkpoint at version {v}")?,
            None => write!(f, "no checkpoint")?,
        }
        let commits = if self.replayed == 1 { "commit" } else { "commits" };
        write!(f, ", replayed {} {commits}, now at version {}", self.replayed, self.version)?;
        for d in &self.dropped {
            write!(f, "; dropped {} bytes of {} from offset {}: {}", d.bytes, d.file.display(), d.offset, d.reason)?;
            if d.intact_commits > 0 {
                write!(f, " (LOST: {} intact commits were among them)", d.intact_commits)?;
            }
            if d.unknown_loss {
                write!(f, " (LOST: the commits it held, how many is unknown)")?;
            }
            if let Some(kept) = &d.kept_in {
                write!(f, " (kept in {})", kept.display())?;
            }
        }
        if self.read_only && !self.dropped.is_empty() {
            write!(f, "; opened read-only, so the files were left as they are")?;
        }
        Ok(())
    }
}

pub(crate) struct Recovered {
    /// Segments that hold no commit, to remove once the next segment has started (removing them first could
    /// leave the recorded newest segment missing after a crash).
    pub empty_segments: Vec<PathBuf>,
    pub state: GraphState,
    pub next_node: u64,
    pub next_rel: u64,
    pub next_segment: u64,
    /// The last segment, when its records end cleanly with room after them: (number, path, end of records).
    /// The open goes on writing it instead of starting `next_segment`.
    pub resumable: Option<(u64, PathBuf, u64)>,
    pub report: RecoveryReport,
}

/// Files found in a database directory, by number: (checkpoints, log segments).
type NumberedFiles = (Vec<(u64, PathBuf)>, Vec<(u64, PathBuf)>);

fn list(dir: &Path) -> Result<NumberedFiles> {
    let mut checkpoints = Vec::new();
    let mut segments = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(|e| StorageError::io(dir, e))? {
        let entry = entry.map_err(|e| StorageError::io(dir, e))?;
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        if let Some(v) = parse_checkpoint_name(name) {
            checkpoints.push((v, entry.path()));
        } else if let Some(seq) = parse_segment_name(name) {
            segments.push((seq, entry.path()));
        }
    }
    checkpoints.sort();
    segments.sort();
    Ok((checkpoints, segments))
}

/// Removes checkpoints, log segments and records of the newest segment whose writing was cut short
/// (`checkpoint-*.plx.tmp`, `checkpoint.head.tmp`, `wal-*.log.tmp`, `wal.head.tmp`; with `checkpoints_only`, the first two alone). Call only
/// with the directory lock held and no checkpoint in progress, and for the log's files only before the log is
/// open: then no such file is being written.
fn remove_temporary_files(dir: &Path, checkpoints_only: bool) -> Result<()> {
    for entry in std::fs::read_dir(dir).map_err(|e| StorageError::io(dir, e))? {
        let entry = entry.map_err(|e| StorageError::io(dir, e))?;
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        let temporary = name.strip_suffix(".tmp");
        let ours = |n: &str| {
            parse_checkpoint_name(n).is_some()
                || n == checkpoint::HEAD_FILE
                || (!checkpoints_only && (parse_segment_name(n).is_some() || n == crate::wal::HEAD_FILE))
        };
        if temporary.is_some_and(ours) {
            let path = entry.path();
            std::fs::remove_file(&path).map_err(|e| StorageError::io(&path, e))?;
        }
    }
    Ok(())
}

pub(crate) fn has_data_files(dir: &Path) -> Result<bool> {
    let (c, s) = list(dir)?;
    Ok(!c.is_empty() || !s.is_empty())
}

/// Raises the id floors past the ids `op` creates. Every operation is listed, so that one added later cannot be
/// missed (a missed one hands out ids that exist after a restart).
fn max_ids(op: &Op, next_node: &mut u64, next_rel: &mut u64) {
    match op {
        Op::CreateNode { id, .. } => *next_node = (*next_node).max(id.0 + 1),
        Op::CreateEmptyNodes { first, count } => *next_node = (*next_node).max(first.0 + count),
        Op::CreateRel { id, .. } => *next_rel = (*next_rel).max(id.0 + 1),
        Op::Token { .. }
        | Op::SetNodeProp { .. }
        | Op::AddLabel { .. }
        | Op::RemoveLabel { .. }
        | Op::DeleteNode { .. }
        | Op::SetRelProp { .. }
        | Op::DeleteRel { .. }
        | Op::DeclareUniqueKey { .. }
        | Op::DropUniqueKey { .. }
        | Op::CreateIndex { .. }
        | Op::DropIndex { .. }
        | Op::CreateRelIndex { .. }
        | Op::DropRelIndex { .. }
        | Op::CreateCompositeIndex { .. }
        | Op::DropCompositeIndex { .. } => {}
    }
}

/// Whether a recovery may change the directory.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    /// Set damaged log aside, cut the damaged segment, remove temporary files: ready for new commits. Unless
    /// `drop_damaged`, damage followed by intact commits is refused before anything changes.
    Repair { drop_damaged: bool },
    /// Change nothing: replay what is intact in memory and report the rest.
    ReadOnly,
}

pub(crate) fn recover(dir: &Path, db_id: &[u8; 16], catalog: &Catalog, mode: Mode) -> Result<Recovered> {
    let repair = matches!(mode, Mode::Repair { .. });
    // Damage that loses commits stops a writable open unless the caller accepts the loss.
    let refuse_loss = |path: &Path, what: String| -> Result<()> {
        match mode {
            Mode::Repair { drop_damaged: false } => Err(StorageError::Corrupt {
                path: path.to_path_buf(),
                message: format!(
                    "{what}; opening for writing would drop them for good, so nothing was changed. Restore the \
                     file from a backup, or open with the damaged log dropped (the command `plexus repair`, or \
                     in a Rust program `Options::drop_damaged_log`), which keeps what it drops in \
                     wal-*.log.dropped* files"
                ),
            }),
            _ => Ok(()),
        }
    };
    let (checkpoints, segments) = list(dir)?;
    if let Some(newest) = checkpoint::recorded_head(dir)? {
        if checkpoints.last().is_none_or(|(v, _)| *v < newest) {
            return Err(StorageError::Corrupt {
                path: dir.join(checkpoint::checkpoint_name(newest)),
                message: format!(
                    "missing: a checkpoint at version {newest} was written, and opening without it would lose the \
                     data it holds; restore it, or remove {} to open without it",
                    checkpoint::HEAD_FILE
                ),
            });
        }
    }
    let mut report = RecoveryReport { read_only: !repair, ..RecoveryReport::default() };
    let (mut state, mut next_node, mut next_rel) = match checkpoints.last() {
        Some((_, path)) => {
            let loaded = checkpoint::load(path, db_id, catalog)?;
            report.checkpoint_version = Some(loaded.state.version());
            (loaded.state, loaded.next_node, loaded.next_rel)
        }
        None => (GraphState::new(), 0, 0),
    };
    let next_segment = segments.last().map_or(0, |(seq, _)| seq + 1);
    // The newest segment ever started must be here, or have been set aside by a recovery: a log that ends
    // before it lost its last commits, and opening would hide that.
    if let Some(head) = crate::wal::recorded_head(dir)? {
        let newest = segments.iter().chain(&set_aside_paths(dir)?).map(|(seq, _)| *seq).max();
        if newest.is_none_or(|n| n < head) {
            let missing = dir.join(crate::wal::segment_name(head));
            return Err(StorageError::Corrupt {
                path: missing,
                message: format!(
                    "missing: the log reached segment {head}, so commits in it would be lost; restore it, or remove {} \
                     to open without it",
                    crate::wal::HEAD_FILE
                ),
            });
        }
    }
    let mut empty_segments = Vec::new();
    let mut resumable = None;
    for (index, (seq, path)) in segments.iter().enumerate() {
        let bytes = read_file(path)?;
        let corrupt = |m: String| StorageError::Corrupt { path: path.clone(), message: m };
        let header = match decode_header(&bytes) {
            Ok(h) => h,
            Err(reason) if index + 1 == segments.len() && bytes.len() < crate::wal::SEGMENT_HEADER_LEN => {
                // Segments are created whole (their header written and fsynced before they are renamed into
                // place), so a short one, or an empty one, was cut by damage and its commits are lost, how many
                // cannot be told. It is set aside, not deleted.
                let kept = if repair { Some(set_aside(path, "log.dropped", None)?) } else { None };
                report.dropped.push(DroppedTail {
                    file: path.clone(),
                    offset: 0,
                    bytes: bytes.len() as u64,
                    reason,
                    intact_commits: 0,
                    kept_in: kept,
                    unknown_loss: true,
                });
                continue;
            }
            Err(reason) => {
                // A damaged header: this segment's commits cannot be trusted to be this database's, nor those
                // after it replayed. Refused unless they may be dropped (kept aside).
                let (counts, intact) = segment_counts(&segments[index..])?;
                if intact > 0 {
                    let lost = format!("{reason}, and {intact} intact commits from here on cannot be replayed");
                    refuse_loss(path, lost)?;
                }
                drop_segments(dir, &segments[index..], &counts, &reason, repair, &mut report)?;
                break;
            }
        };
        if &header.db_id != db_id {
            return Err(StorageError::ForeignFile {
                path: path.clone(),
                found: checkpoint::hex(&header.db_id),
                expected: checkpoint::hex(db_id),
            });
        }
        if header.seq != *seq {
            return Err(corrupt(format!("header says segment {}, the file name says {seq}", header.seq)));
        }
        if header.first_version > state.version() + 1 {
            // Name the file at fault, not this intact one.
            let before = match index.checked_sub(1).map(|i| &segments[i]) {
                Some((prev, prev_path)) if prev + 1 == *seq => format!(
                    "{} before it ends at version {}: it was cut short, so commits {} to {} are lost",
                    prev_path.display(),
                    state.version(),
                    state.version() + 1,
                    header.first_version - 1
                ),
                Some(_) | None if *seq > 0 => {
                    format!("{} before it is missing", dir.join(crate::wal::segment_name(seq - 1)).display())
                }
                _ => "the log before it is missing".to_string(),
            };
            let gap = format!(
                "log starts at version {} but the database is at version {}: {before}",
                header.first_version,
                state.version()
            );
            // The commits from here on cannot be replayed over the gap: refused unless they may be dropped (kept
            // aside, as after damage).
            let (counts, intact) = segment_counts(&segments[index..])?;
            refuse_loss(path, format!("{gap}, and {intact} intact commits from here on cannot be replayed"))?;
            let reason = format!("follows a gap in the log ({before})");
            drop_segments(dir, &segments[index..], &counts, &reason, repair, &mut report)?;
            break;
        }
        let (records, mut good_end, mut tail) = read_segment(&bytes);
        let last = index + 1 == segments.len();
        if last && tail == TailState::Clean && crate::wal::Wal::has_room(good_end) {
            resumable = Some((*seq, path.clone(), good_end));
        }
        if records.is_empty() && tail == TailState::Clean {
            // A segment with no commit (a session that wrote nothing): nothing to keep, unless it is resumed.
            if !last {
                empty_segments.push(path.clone());
            }
            continue;
        }
        for payload in records {
            // A record whose checksum holds but which cannot be replayed in order (damage that kept a valid
            // checksum, records out of order) is damage at its start, as a failed checksum is: the commits from
            // there on are refused, or dropped and kept aside by a repair, never replayed past a gap.
            let fault = match decode_commit(payload) {
                Err(e) => Err(format!("undecodable record: {e}")),
                Ok((version, _)) if version > state.version() + 1 => {
                    Err(format!("version {version} follows {}: a commit is missing", state.version()))
                }
                Ok(decoded) => Ok(decoded),
            };
            let (version, ops) = match fault {
                Ok(decoded) => decoded,
                Err(reason) => {
                    let offset = crate::wal::record_offset(&bytes, payload);
                    (good_end, tail) = (offset, TailState::Damaged { offset, reason });
                    resumable = None;
                    break;
                }
            };
            if version <= state.version() {
                continue;
            }
            for op in &ops {
                match op {
                    Op::Token { kind, id, name } => catalog.restore(*kind, *id, name).map_err(&corrupt)?,
                    op => {
                        catalog.check_op(op).map_err(|e| corrupt(format!("commit {version}: {e}")))?;
                        max_ids(op, &mut next_node, &mut next_rel);
                        state.apply(op).map_err(|e| corrupt(format!("commit {version} does not apply: {e}")))?;
                    }
                }
            }
            state.version = version;
            state.seal();
            report.replayed += 1;
        }
        report.log_bytes += good_end;
        if let TailState::Damaged { offset, reason } = tail {
            // Keep what is dropped, then set the later segments aside, and only then cut this one: run again
            // after a crash at any point, recovery finds the same damage and makes the same choice. The torn last
            // write of a crash (no whole commit after it, no later segment) is not worth a file of its own: it
            // would leave one behind after every crash.
            let dropped = &bytes[good_end as usize..];
            let intact = intact_commits_after(dropped, Some(state.version));
            let damaged_commit = written_whole(dropped, good_end);
            // (size, intact commits) of each later segment, read once: they decide the refusal and the report.
            let later_segments: Vec<(u64, u64)> = segments[index + 1..]
                .iter()
                .map(|(_, later)| read_file(later).map(|b| (b.len() as u64, read_segment(&b).0.len() as u64)))
                .collect::<Result<_>>()?;
            let later: u64 = later_segments.iter().map(|(_, intact)| intact).sum();
            // Refused only while whole commits would be dropped: what is already unreadable (a torn write, a
            // damaged record with nothing intact after it) is lost whether or not the open goes on.
            // Too many bytes to search: refused as if commits followed, since whether they do cannot be told.
            let searched = intact.is_some();
            if !searched {
                let what = format!(
                    "damaged at offset {offset} ({reason}), and the {} bytes after it are too many to search for \
                     intact commits",
                    dropped.len()
                );
                refuse_loss(path, what)?;
            }
            let intact = intact.unwrap_or(0);
            if intact + later > 0 {
                let n = intact + later;
                refuse_loss(path, format!("damaged at offset {offset} ({reason}), and {n} intact commits follow it"))?;
            }
            let kept = if repair && (!searched || intact > 0 || index + 1 < segments.len() || damaged_commit) {
                Some(set_aside(path, &format!("log.dropped-at-{good_end}"), Some(dropped))?)
            } else {
                None
            };
            report.dropped.push(DroppedTail {
                file: path.clone(),
                offset,
                bytes: dropped.len() as u64,
                reason,
                intact_commits: intact,
                kept_in: kept,
                // A segment with a later one after it was complete when the later one began: its damaged
                // record was a whole commit once, not the torn last write of a crash. So was a record written
                // to its end that fails its checksum.
                unknown_loss: !searched || (intact == 0 && (index + 1 < segments.len() || damaged_commit)),
            });
            for ((_, later), &(bytes, intact)) in segments[index + 1..].iter().zip(&later_segments) {
                let kept = if repair { Some(set_aside(later, "log.dropped", None)?) } else { None };
                report.dropped.push(DroppedTail {
                    file: later.clone(),
                    offset: 0,
                    bytes,
                    reason: "follows a damaged segment".into(),
                    intact_commits: intact,
                    kept_in: kept,
                    unknown_loss: false,
                });
            }
            if repair {
                sync_dir(dir)?;
                let file = OpenOptions::new().write(true).open(path).map_err(|e| StorageError::io(path, e))?;
                file.set_len(good_end).map_err(|e| StorageError::io(path, e))?;
                file.sync_all().map_err(|e| StorageError::io(path, e))?;
            }
            break;
        }
    }
    if repair {
        // A crash during a checkpoint leaves its temporary file behind, as large as a checkpoint; nothing else
        // would ever remove it. (Removed only now: an open refused above changes nothing.)
        remove_temporary_files(dir, false)?;
        sync_dir(dir)?;
    }
    report.version = state.version();
    Ok(Recovered { empty_segments, state, next_node, next_rel, next_segment, resumable, report })
}

/// The size and the intact commits of each of `segments`, and the intact commits of all of them.
fn segment_counts(segments: &[(u64, PathBuf)]) -> Result<(Vec<(u64, u64)>, u64)> {
    let counts: Vec<(u64, u64)> = segments
        .iter()
        .map(|(_, p)| read_file(p).map(|b| (b.len() as u64, read_segment(&b).0.len() as u64)))
        .collect::<Result<_>>()?;
    let intact = counts.iter().map(|(_, n)| n).sum();
    Ok((counts, intact))
}

/// Reports `segments` (with their `counts`) dropped, the first for `reason` and the others as following it, and
/// when repairing sets them aside.
fn drop_segments(
    dir: &Path,
    segments: &[(u64, PathBuf)],
    counts: &[(u64, u64)],
    reason: &str,
    repair: bool,
    report: &mut RecoveryReport,
) -> Result<()> {
    for (i, ((_, path), &(bytes, intact_commits))) in segments.iter().zip(counts).enumerate() {
        let kept = if repair { Some(set_aside(path, "log.dropped", None)?) } else { None };
        report.dropped.push(DroppedTail {
            file: path.clone(),
            offset: 0,
            bytes,
            reason: if i == 0 { reason.to_string() } else { "follows a damaged segment".into() },
            intact_commits,
            kept_in: kept,
            unknown_loss: false,
        });
    }
    if repair {
        sync_dir(dir)?;
    }
    Ok(())
}

/// Whether `tail`, the log bytes from file offset `at` on, begins with a record that was written to its end
/// and still fails its check: a damaged commit rather than the torn last write of a crash. Segments are zeroed
/// ahead of their records and disks write whole sectors, so a write cut short leaves the record's declared
/// length in place and its last sectors zero; a record whose last sector holds data was written whole.
fn written_whole(tail: &[u8], at: u64) -> bool {
    const SECTOR: u64 = 512;
    let Some(header) = tail.get(..8) else { return false };
    let len = u32::from_le_bytes(header[..4].try_into().expect("4 bytes")) as usize;
    if len == 0 || len > crate::wal::MAX_RECORD || tail.len() < 8 + len {
        return false;
    }
    let end = at + 8 + len as u64;
    // The record's last sector, or the part of it the record covers.
    let last_sector = ((end - 1) / SECTOR * SECTOR).max(at);
    tail[(last_sector - at) as usize..8 + len].iter().any(|&b| b != 0)
}

/// Log data a recovery set aside in `dir` (`wal-N.log.dropped*`), with the number of the segment it came from.
fn set_aside_paths(dir: &Path) -> Result<Vec<(u64, PathBuf)>> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(|e| StorageError::io(dir, e))? {
        let path = entry.map_err(|e| StorageError::io(dir, e))?.path();
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or_default();
        let Some((base, _)) = name.split_once(".log.dropped") else { continue };
        if let Some(seq) = parse_segment_name(&format!("{base}.log")) {
            out.push((seq, path));
        }
    }
    out.sort();
    Ok(out)
}

/// Sets `path` aside under a new extension `ext` (`.1`, `.2`, ... appended if taken, so nothing set aside before
/// is overwritten): a copy of `contents` when given (the file itself is about to be cut), else the file, renamed.
fn set_aside(path: &Path, ext: &str, contents: Option<&[u8]>) -> Result<PathBuf> {
    let mut aside = path.with_extension(ext);
    let mut n = 1;
    while aside.exists() {
        aside = path.with_extension(format!("{ext}.{n}"));
        n += 1;
    }
    match contents {
        Some(bytes) => {
            let mut file = OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&aside)
                .map_err(|e| StorageError::io(&aside, e))?;
            std::io::Write::write_all(&mut file, bytes).map_err(|e| StorageError::io(&aside, e))?;
            file.sync_all().map_err(|e| StorageError::io(&aside, e))?;
        }
        None => std::fs::rename(path, &aside).map_err(|e| StorageError::io(path, e))?,
    }
    Ok(aside)
}

/// Log data an earlier recovery set aside in `dir` (`wal-*.log.dropped*`), with the intact commit records each
/// holds (`None`: some, but how many cannot be told): evidence of damage that stays until an operator removes it.
pub fn set_aside_files(dir: &Path) -> Result<Vec<(PathBuf, Option<u64>)>> {
    let mut out = Vec::new();
    for (_, path) in set_aside_paths(dir)? {
        let bytes = read_file(&path)?;
        let cut_off_tail = path.to_str().is_some_and(|p| p.contains(".log.dropped-at-"));
        // A whole segment set aside starts with its header, a cut-off tail at a damaged record; a segment cut
        // inside its header, or emptied, held commits that cannot be counted (`None`).
        let intact = match decode_header(&bytes) {
            Ok(_) => Some(read_segment(&bytes).0.len() as u64),
            // Recovery keeps a cut-off tail only when it is not the torn last write of a crash, so one without a
            // whole record in it is still a damaged commit.
            Err(_) if cut_off_tail => intact_commits_after(&bytes, None).filter(|&n| n > 0 || bytes.is_empty()),
            Err(_) => None,
        };
        out.push((path, intact));
    }
    Ok(out)
}

/// Whole, checksum-valid commit records in `dropped` (the bytes from a damaged record on), found by trying every
/// offset: after a torn write there are none, after damage in the middle of the log the commits that followed.
/// `after_version`: the last commit replayed, when known; a later commit has a higher version. `None` when the
/// bytes are too many to try in reasonable time (see [`CHECKSUM_BUDGET`]).
fn intact_commits_after(dropped: &[u8], after_version: Option<u64>) -> Option<u64> {
    intact_commits_within(dropped, after_version, CHECKSUM_BUDGET.saturating_add(dropped.len().saturating_mul(16)))
}

/// [`intact_commits_after`], checksumming at most `budget` bytes.
fn intact_commits_within(dropped: &[u8], after_version: Option<u64>, budget: usize) -> Option<u64> {
    let mut count = 0;
    let mut pos = 1;
    // Bytes checksummed so far: inside a large torn record, many offsets read as a length that fits.
    let mut hashed = 0usize;
    while pos + 8 <= dropped.len() {
        let len = u32::from_le_bytes(dropped[pos..pos + 4].try_into().expect("4 bytes")) as usize;
        let crc = u32::from_le_bytes(dropped[pos + 4..pos + 8].try_into().expect("4 bytes"));
        let payload = dropped.get(pos + 8..pos + 8 + len).filter(|p| !p.is_empty());
        if let Some(payload) = payload.filter(|p| starts_like_a_commit(p, after_version)) {
            hashed += len;
            if hashed > budget {
                return None;
            }
            if crc32fast::hash(payload) == crc {
                count += 1;
                pos += 8 + len;
                continue;
            }
        }
        pos += 1;
    }
    Some(count)
}

/// How many bytes [`intact_commits_after`] checksums at most, beyond 16 times the bytes it searches, before it
/// gives up counting.
const CHECKSUM_BUDGET: usize = 1 << 30;

/// Whether `payload` begins as every commit record does: its version, later than `after_version`, a count of
/// operations that fits its length, and its first operations whole. Offsets that do not are not checksummed.
/// Without this, the bytes of a large torn record (small integers, lengths) read as plausible record lengths at
/// many offsets, each checksummed over megabytes.
fn starts_like_a_commit(payload: &[u8], after_version: Option<u64>) -> bool {
    const CHECKED_OPS: u64 = 32;
    let mut r = crate::codec::Reader::new(payload);
    let (Ok(version), Ok(count)) = (r.varint(), r.varint()) else { return false };
    if after_version.is_some_and(|v| version <= v) || count > payload.len() as u64 / 2 {
        return false;
    }
    for _ in 0..count.min(CHECKED_OPS) {
        if Op::decode(&mut r).is_err() {
            return false;
        }
    }
    // A short commit decodes whole, to its last byte.
    count > CHECKED_OPS || r.is_empty()
}

/// After a checkpoint at `keep` is durable: removes older checkpoints, segments before `first_live_segment`,
/// and leftover temporary files.
pub(crate) fn retire_before(dir: &Path, keep: &Path, first_live_segment: u64) -> Result<()> {
    let (checkpoints, segments) = list(dir)?;
    for (_, path) in checkpoints {
        if path != keep {
            std::fs::remove_file(&path).map_err(|e| StorageError::io(&path, e))?;
        }
    }
    for (seq, path) in segments {
        if seq < first_live_segment {
            std::fs::remove_file(&path).map_err(|e| StorageError::io(&path, e))?;
        }
    }
    // Only a checkpoint's own leftovers: a commit may be starting a new log segment right now (its
    // `wal-N.log.tmp` and `wal.head.tmp` are renamed into place under the log's lock, not the checkpoint's),
    // and removing those would fail its rename and stop the log. Recovery removes any the log left behind.
    remove_temporary_files(dir, true)?;
    sync_dir(dir)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::{LabelId, NodeId, PropKeyId};
    use crate::records::PropMap;
    use crate::value::Value;

    /// A framed commit record of `nodes` created nodes, each with an integer and a string.
    fn record(version: u64, nodes: u64) -> Vec<u8> {
        let ops: Vec<Op> = (0..nodes)
            .map(|i| Op::CreateNode {
                id: NodeId(i),
                labels: crate::records::Labels::from_slice(&[LabelId(0)]),
                props: PropMap::shared(vec![
                    (PropKeyId(0), Value::Int(i as i64)),
                    (PropKeyId(1), Value::from("x".repeat(32))),
                ]),
            })
            .collect();
        let mut payload = Vec::new();
        crate::ops::encode_commit(&mut payload, version, &ops);
        let mut framed = Vec::new();
        crate::wal::frame(&mut framed, &payload);
        framed
    }

    /// The torn last record of a crash, megabytes long: found to hold no intact commit after checksumming a
    /// little of it (every offset inside it read as a record once, at quadratic cost).
    #[test]
    fn a_large_torn_record_is_searched_in_linear_time() {
        let mut torn = record(2, 200_000);
        torn.truncate(torn.len() - 1000);
        assert!(torn.len() > 9_000_000);
        assert_eq!(intact_commits_within(&torn, Some(1), 1 << 20), Some(0));
        assert_eq!(intact_commits_within(&torn, None, 1 << 20), Some(0));
    }

    /// Damage in the header or the body of a record: the whole commits after it are all found.
    #[test]
    fn intact_commits_after_damage_are_counted() {
        let later: Vec<u8> = (3..6).flat_map(|v| record(v, 50)).collect();
        for damage in [0usize, 3, 20, 500] {
            let mut bytes = record(2, 100);
            bytes[damage] ^= 0x40;
            bytes.extend(&later);
            assert_eq!(intact_commits_after(&bytes, Some(1)), Some(3), "damage at {damage}");
        }
        // Commits no later than the last replayed are not counted as lost: they are older than what was kept.
        let mut bytes = record(2, 10);
        bytes[5] ^= 1;
        bytes.extend(record(1, 10));
        assert_eq!(intact_commits_after(&bytes, Some(1)), Some(0));
        assert_eq!(intact_commits_after(&bytes, None), Some(1));
    }
}
