//! Databases open in this process, by directory, so that opening one again while a handle to it is open shares
//! it instead of failing on the directory lock. That is what a notebook does when a cell with
//! `db = plexus.Database("graph")` runs twice: the new handle is made before the old one is let go.
//!
//! The handles of one directory share one database, so they must agree on how it was opened; one that asks for
//! other settings is refused with the settings in use. The database closes when the last handle does.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Weak};

use parking_lot::Mutex;

use crate::errors::Failure;

/// One open database and the settings it was opened with; a handle holds it while open.
pub struct Opened {
    pub db: plexus::Database,
    settings: String,
}

impl Opened {
    /// A database no other handle can share (in memory).
    pub fn alone(db: plexus::Database) -> Opened {
        Opened { db, settings: String::new() }
    }
}

static OPEN: Mutex<Vec<(PathBuf, Weak<Opened>)>> = Mutex::new(Vec::new());

/// What a handle opened: the shared database, and whether this call opened it (so recovery is reported once).
pub struct Shared {
    pub opened: Arc<Opened>,
    pub fresh: bool,
}

/// The database in `dir`, shared with the handles of this process that have it open, or opened by `open`.
/// `settings` names the options the caller asks for, as the user wrote them. Must be called without the GIL:
/// opening may take long, and the registry's lock is held meanwhile so two threads never both open `dir`.
pub fn open_shared(
    dir: &Path,
    settings: String,
    open: impl FnOnce() -> plexus::Result<plexus::Database>,
) -> Result<Shared, Failure> {
    let mut registry = OPEN.lock();
    registry.retain(|(_, weak)| weak.strong_count() > 0);
    if let Ok(canonical) = std::fs::canonicalize(dir) {
        if let Some(opened) = registry.iter().find(|(p, _)| *p == canonical).and_then(|(_, w)| w.upgrade()) {
            if opened.settings != settings {
                return Err(Failure::Argument(format!(
                    "the database at {} is already open in this process with {}: open it with the same settings, \
                     or close that handle first",
                    dir.display(),
                    opened.settings
                )));
            }
            return Ok(Shared { opened, fresh: false });
        }
    }
    let db = open().map_err(Failure::Storage)?;
    let opened = Arc::new(Opened { db, settings });
    if let Ok(canonical) = std::fs::canonicalize(dir) {
        registry.push((canonical, Arc::downgrade(&opened)));
    }
    Ok(Shared { opened, fresh: true })
}
