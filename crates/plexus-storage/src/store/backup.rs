//! Online backups: a new database directory holding one checkpoint of a read snapshot, written while readers
//! and writers go on.
//!
//! Copying a live database's files is not a backup: a checkpoint may retire log segments between the copy of one
//! file and the next, and the copy then opens without the commits they held, or not at all. A backup instead
//! encodes the newest published state, the one a reader starting now would see (every commit in it acknowledged
//! and, with `sync` durability, on disk), as the checkpoint of a directory created the way a bulk import creates
//! one: written under a temporary name beside the target, fsynced and renamed into place, so that the target
//! appears complete or not at all. Taking the snapshot is all the backup asks of the store; the encoding runs on
//! the caller's thread (and the checkpoint writer's parts on the other cores) without any of the store's locks.
//!
//! The backup gets a database id of its own: it is a new database that starts where the original was, so a log
//! segment of the original can never be replayed onto it by mistake. Restoring is opening it (or moving it where
//! the original was).

use std::path::{Path, PathBuf};

use parking_lot::Mutex;

use super::{commit::compact, Store};
use crate::error::{Result, StorageError};

/// Backups of one process run one at a time: two at once to the same place would share their temporary
/// directory (it is named after the process), and two at once anywhere only compete for the same disk.
static BACKUPS: Mutex<()> = Mutex::new(());

/// What [`Store::backup`] wrote.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Backup {
    /// The version of the snapshot written: every commit up to it, none after.
    pub version: u64,
    pub nodes: u64,
    pub relationships: u64,
    /// Size of the backup's checkpoint file in bytes.
    pub bytes: u64,
}

impl Store {
    /// Writes the newest published state of this database as a new database in `dest`, which must not exist yet
    /// or be an empty directory (as for [`Store::create_from_state`]): `dest` appears complete or not at all.
    /// Readers and writers are not held up; commits acknowledged before the call are in the backup (with
    /// durability `sync`, once they are durable), later ones are not. Works for an in-memory database too, which
    /// it saves to disk.
    pub fn backup(&self, dest: impl AsRef<Path>) -> Result<Backup> {
        self.backup_with_files(dest, &[])
    }

    /// [`Store::backup`], with `files` (name, contents) written into the backup beside the database's own before
    /// it appears: the server's users, which a restored server should find again.
    pub fn backup_with_files(&self, dest: impl AsRef<Path>, files: &[(&str, &[u8])]) -> Result<Backup> {
        let dest = dest.as_ref();
        if let Some(source) = self.path() {
            refuse_inside(source, dest)?;
        }
        let _one_at_a_time = BACKUPS.lock();
        let state = compact(&self.read());
        // Version 0 (a database that never committed) is written as 1, as a new database's first checkpoint is.
        let (version, nodes, relationships) = (state.version().max(1), state.node_count(), state.rel_count());
        let bytes = Self::create_from_state_with_files(dest, state, self.catalog(), files)?;
        Ok(Backup { version, nodes, relationships, bytes })
    }
}

/// Refuses a backup into the database's own directory (or one under it): its name could be one of the database's
/// files (a `checkpoint-*.plx` or `wal-*.log` directory there stops the database from opening), and a copy of a
/// database inside it is no backup of it.
fn refuse_inside(source: &Path, dest: &Path) -> Result<()> {
    let source = std::fs::canonicalize(source).unwrap_or_else(|_| source.to_path_buf());
    // The destination may not exist yet: its nearest existing ancestor tells where it would be.
    let mut existing: PathBuf = std::path::absolute(dest).unwrap_or_else(|_| dest.to_path_buf());
    let mut rest = Vec::new();
    while !existing.exists() {
        match (existing.file_name().map(|n| n.to_os_string()), existing.parent()) {
            (Some(name), Some(parent)) => {
                rest.push(name);
                existing = parent.to_path_buf();
            }
            _ => break,
        }
    }
    let mut resolved = std::fs::canonicalize(&existing).unwrap_or(existing);
    resolved.extend(rest.iter().rev());
    if resolved.starts_with(&source) {
        let why = format!("is inside the database's own directory {}: back up somewhere else", source.display());
        return Err(StorageError::io(dest, std::io::Error::new(std::io::ErrorKind::InvalidInput, why)));
    }
    Ok(())
}

/// Writes `contents` to a new file at `path` readable by its owner alone (what goes along may be password
/// hashes), fsynced.
pub(super) fn write_private(path: &Path, contents: &[u8]) -> Result<()> {
    use std::io::Write;
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut file = options.open(path).map_err(|e| StorageError::io(path, e))?;
    file.write_all(contents).and_then(|()| file.sync_all()).map_err(|e| StorageError::io(path, e))
}
