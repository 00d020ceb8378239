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

use std::path::Path;

use super::{commit::compact, Store};
use crate::checkpoint;
use crate::error::Result;

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
        let snapshot = self.read();
        let mut state = compact(&snapshot);
        drop(snapshot);
        // An empty database that never committed is at version 0; a checkpoint starts at 1, as an import's does.
        state.version = state.version.max(1);
        let (next_node, next_rel) = (state.node_id_bound(), state.rel_id_bound());
        let catalog = self.catalog();
        let bytes = Self::create_with(dest.as_ref(), |tmp, db_id| {
            let (_, size) = checkpoint::write(tmp, db_id, &state, catalog, next_node, next_rel)?;
            Ok(size)
        })?;
        Ok(Backup { version: state.version(), nodes: state.node_count(), relationships: state.rel_count(), bytes })
    }
}
