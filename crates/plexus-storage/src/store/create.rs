//! Creating a database directory whole (bulk import writes one beside the target and renames it into place),
//! its metadata file (the database id every log segment and checkpoint must carry), and clearing what an
//! interrupted creation left behind.

use super::*;

pub(super) fn new_db_id() -> [u8; 16] {
    use std::hash::{BuildHasher, Hasher};
    let mut id = [0u8; 16];
    for (i, chunk) in id.chunks_mut(8).enumerate() {
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        h.write_u128(std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos()));
        h.write_u32(std::process::id());
        h.write_usize(i);
        chunk.copy_from_slice(&h.finish().to_le_bytes());
    }
    id
}

pub(super) fn write_meta(dir: &Path, db_id: &[u8; 16]) -> Result<()> {
    let mut bytes = Vec::with_capacity(28);
    bytes.extend_from_slice(META_MAGIC);
    bytes.extend_from_slice(db_id);
    bytes.extend_from_slice(&crc32fast::hash(&bytes).to_le_bytes());
    let tmp = dir.join(format!("{META_FILE}.tmp"));
    let io = |e| StorageError::io(&tmp, e);
    let mut f = File::create(&tmp).map_err(io)?;
    f.write_all(&bytes).map_err(io)?;
    f.sync_all().map_err(io)?;
    std::fs::rename(&tmp, dir.join(META_FILE)).map_err(|e| StorageError::io(dir.join(META_FILE), e))?;
    sync_dir(dir)
}

pub(super) fn read_meta(dir: &Path) -> Result<[u8; 16]> {
    let path = dir.join(META_FILE);
    let bytes = crate::wal::read_file(&path)?;
    let corrupt = |m: &str| StorageError::Corrupt { path: path.clone(), message: m.to_string() };
    if bytes.len() != 28 || &bytes[..8] != META_MAGIC {
        return Err(corrupt("not a Plexus database metadata file"));
    }
    if crc32fast::hash(&bytes[..24]).to_le_bytes() != bytes[24..28] {
        return Err(corrupt("metadata checksum mismatch"));
    }
    Ok(bytes[8..24].try_into().expect("16 bytes"))
}

/// The name, before the process id, of the working directory an import into an existing empty directory keeps
/// inside it while it moves its files in (`plexus_import::publish`).
pub const IMPORT_INSIDE_PREFIX: &str = ".plexus-importing-";

/// The directory the temporary directories of imports into `dir` go in, and their names before the process id.
pub(super) fn import_temp_prefix(dir: &Path) -> (PathBuf, String) {
    let name = dir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| "plexus".into());
    let parent = match dir.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    (parent, format!(".{name}.importing-"))
}

/// Removes what imports (and backups) into `dir` by processes that no longer run left behind (killed before they
/// could clean up). Best effort: a directory that cannot be removed is left for the next attempt.
pub fn remove_abandoned_imports(dir: &Path) {
    let (parent, prefix) = import_temp_prefix(dir);
    let Ok(entries) = std::fs::read_dir(&parent) else { return };
    for entry in entries.flatten() {
        let file_name = entry.file_name();
        let Some(pid) = file_name.to_str().and_then(|n| n.strip_prefix(&prefix)) else { continue };
        let Ok(pid) = pid.parse::<u32>() else { continue };
        if pid != std::process::id() && !Path::new("/proc").join(pid.to_string()).exists() {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

impl Store {
    /// Writes a new database holding `state` into `dir`, which must not exist yet or be an empty directory:
    /// the files are written into a sibling temporary directory ([`Self::import_temp_dir`]), fsynced, and the
    /// directory is renamed into place (an empty `dir` is replaced in the same step), so `dir` appears complete
    /// or not at all (bulk import). Returns the checkpoint's size in bytes.
    pub fn create_from_state(dir: impl AsRef<Path>, state: GraphState, catalog: &Catalog) -> Result<u64> {
        Self::create_from_state_with_files(dir.as_ref(), state, catalog, &[])
    }

    /// [`Self::create_from_state`], with `files` (name, contents) written beside the database's own, readable by
    /// their owner alone, before the directory appears (a backup's users).
    pub(super) fn create_from_state_with_files(
        dir: &Path,
        mut state: GraphState,
        catalog: &Catalog,
        files: &[(&str, &[u8])],
    ) -> Result<u64> {
        Self::create_with(dir, |tmp, db_id| {
            for (name, contents) in files {
                backup::write_private(&tmp.join(name), contents)?;
            }
            // An empty database that never committed is at version 0; a checkpoint starts at 1.
            state.version = state.version.max(1);
            state.seal();
            let (next_node, next_rel) = (state.node_id_bound(), state.rel_id_bound());
            let (_, size) = checkpoint::write(tmp, db_id, &state, catalog, next_node, next_rel)?;
            Ok(size)
        })
    }

    /// Writes a new database holding the edge list `image` into `dir`, as [`Self::create_from_state`] does
    /// for a built graph, without building one. Returns the checkpoint's size in bytes.
    pub fn create_from_edge_list(
        dir: impl AsRef<Path>,
        image: &crate::edge_list_image::EdgeListImage,
        catalog: &Catalog,
    ) -> Result<u64> {
        Self::create_with(dir.as_ref(), |tmp, db_id| image.write_checkpoint(tmp, db_id, catalog))
    }

    /// Creates a new database in `dir` (see [`Self::create_from_state`]) whose checkpoint `write` writes into
    /// the directory it is given, under the database id it is given.
    fn create_with(dir: &Path, write: impl FnOnce(&Path, &[u8; 16]) -> Result<u64>) -> Result<u64> {
        let occupied = match std::fs::read_dir(dir) {
            Ok(mut entries) => entries.next().is_some(),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => false,
            Err(_) => dir.exists(),
        };
        if occupied {
            return Err(StorageError::io(
                dir,
                std::io::Error::new(std::io::ErrorKind::AlreadyExists, "already exists and is not empty"),
            ));
        }
        let tmp = Self::import_temp_dir(dir);
        let parent = tmp.parent().map(Path::to_path_buf).unwrap_or_else(|| PathBuf::from("."));
        std::fs::create_dir_all(&parent).map_err(|e| StorageError::io(&parent, e))?;
        remove_abandoned_imports(dir);
        if tmp.exists() {
            std::fs::remove_dir_all(&tmp).map_err(|e| StorageError::io(&tmp, e))?;
        }
        std::fs::create_dir(&tmp).map_err(|e| StorageError::io(&tmp, e))?;
        let result = (|| {
            let db_id = new_db_id();
            write_meta(&tmp, &db_id)?;
            let size = write(&tmp, &db_id)?;
            std::fs::rename(&tmp, dir).map_err(|e| StorageError::io(dir, e))?;
            sync_dir(&parent)?;
            Ok(size)
        })();
        if result.is_err() {
            let _ = std::fs::remove_dir_all(&tmp);
        }
        result
    }

    /// Where [`Self::create_from_state`] builds the database for `dir` in this process: a hidden sibling
    /// named after it and the process id, so that an interrupted import can be cleaned up (by a handler of
    /// the interrupt, or by the next import into `dir` once the process is gone).
    pub fn import_temp_dir(dir: &Path) -> PathBuf {
        let (parent, prefix) = import_temp_prefix(dir);
        parent.join(format!("{prefix}{}", std::process::id()))
    }

    /// Whether `dir` holds a database, or what is left of one (its metadata, log or checkpoint files): opening a
    /// directory without them creates a new, empty database.
    pub fn holds_database(dir: impl AsRef<Path>) -> bool {
        let dir = dir.as_ref();
        dir.join(META_FILE).exists() || recovery::has_data_files(dir).unwrap_or(false)
    }

    /// Removes what a creation of a database in `dir` that was killed before it wrote its metadata left (the lock
    /// file, the metadata's temporary file) when the directory holds nothing else and no process holds it, so that
    /// `dir` reads as empty again. Returns whether it removed anything. A creation writes no data before its
    /// metadata, so nothing is lost; without this, every tool would take the directory for someone's own files.
    pub fn clear_unfinished_creation(dir: impl AsRef<Path>) -> Result<bool> {
        let dir = dir.as_ref();
        let meta_tmp = format!("{META_FILE}.tmp");
        let Ok(entries) = std::fs::read_dir(dir) else { return Ok(false) };
        let mut names = Vec::new();
        for entry in entries {
            let name = entry.map_err(|e| StorageError::io(dir, e))?.file_name();
            if name != LOCK_FILE && name != meta_tmp.as_str() {
                return Ok(false);
            }
            names.push(name);
        }
        if names.is_empty() {
            return Ok(false);
        }
        // Held the way an open holds them, so a process still creating the database is never disturbed.
        let dir_lock = File::open(dir).map_err(|e| StorageError::io(dir, e))?;
        locked(dir_lock.try_lock(), dir, dir)?;
        let lock_path = dir.join(LOCK_FILE);
        let lock = match File::open(&lock_path) {
            Ok(file) => Some(file),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => return Err(StorageError::io(&lock_path, e)),
        };
        if let Some(file) = &lock {
            locked(file.try_lock(), dir, &lock_path)?;
        }
        for name in [meta_tmp.as_str(), LOCK_FILE] {
            match std::fs::remove_file(dir.join(name)) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(StorageError::io(dir.join(name), e)),
            }
        }
        sync_dir(dir)?;
        Ok(true)
    }
}
