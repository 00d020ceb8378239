//! Writing a new database into its target directory so that the target is, at any moment and whatever
//! interrupts the import, either as it was before (absent, or an empty directory) or a complete database.
//!
//! The database is first written in full into a temporary directory of this process ([`temp_dirs`]), then
//! published in one step taken under [`PUBLISH`]:
//! - a target that does not exist: the database is written in a hidden sibling, `.NAME.importing-PID/db`, and that
//!   directory is renamed to the target (one atomic rename);
//! - a target that is an existing, empty directory (or a symbolic link to one): the database is written inside it,
//!   in `TARGET/.plexus-importing-PID/db`, and its files are renamed into the target one by one, the metadata file
//!   last. The directory itself is kept, with its inode, mode, owner and any process's working directory in it.
//!   Before the first rename the names to move are written to `TARGET/.plexus-importing-PID/moving`, so a move
//!   cut short (the process killed) is recognisable: the temporary directory is still there, and the target has no
//!   metadata file. A database directory without its metadata file does not open (it is not taken for a new, empty
//!   database), and the next import into the target removes the listed files and the temporary directory,
//!   leaving the target empty again.
//!
//! An interrupt handler calls [`cancel`]: it takes the same lock, so it runs before the publish step starts (the
//! temporary directories are removed and the target is untouched) or after it ended (the database is complete).

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use plexus_storage::edge_list_image::EdgeListImage;
/// The name an import's working directory inside its target starts with (what an interrupted one leaves).
pub use plexus_storage::store::IMPORT_INSIDE_PREFIX as INSIDE_PREFIX;
use plexus_storage::{Catalog, GraphState, Result as StorageResult, Store};

use crate::import::ImportError;

/// The metadata file of a database directory, moved last into an existing target.
const META_FILE: &str = "plexus.meta";
/// The list of file names being moved into an existing target.
const MOVING: &str = "moving";

/// The targets this process published a database into, and those whose import was cancelled.
struct Targets {
    published: Vec<PathBuf>,
    cancelled: Vec<PathBuf>,
}

static PUBLISH: Mutex<Targets> = Mutex::new(Targets { published: Vec::new(), cancelled: Vec::new() });

/// What [`cancel`] found.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Cancelled {
    /// The database was not published; what was written of it is removed and the target is as it was.
    Removed,
    /// The database had already been published in full.
    Complete,
}

fn lock() -> std::sync::MutexGuard<'static, Targets> {
    PUBLISH.lock().unwrap_or_else(|e| e.into_inner())
}

/// Stops an import into `target` by this process: waits for a publish step in progress, then either removes the
/// temporary directories (nothing is published from then on) or reports that the database is already complete.
/// The lock stays taken when this returns `Removed` (the caller is expected to exit), so no other thread of the
/// process publishes anything afterwards.
pub fn cancel(target: &Path) -> Cancelled {
    let mut state = lock();
    if state.published.iter().any(|p| p == target) {
        return Cancelled::Complete;
    }
    state.cancelled.push(target.to_path_buf());
    for dir in temp_dirs(target) {
        let _ = std::fs::remove_dir_all(dir);
    }
    std::mem::forget(state);
    Cancelled::Removed
}

/// The temporary directories an import into `target` by this process uses.
pub fn temp_dirs(target: &Path) -> Vec<PathBuf> {
    let mut dirs = vec![Store::import_temp_dir(target)];
    if let Ok(real) = std::fs::canonicalize(target) {
        dirs.push(real.join(format!("{INSIDE_PREFIX}{}", std::process::id())));
    }
    dirs
}

fn io(path: &Path) -> impl Fn(std::io::Error) -> ImportError + '_ {
    move |error| ImportError::Io { path: path.to_path_buf(), error }
}

fn process_gone(pid: &str) -> bool {
    pid.parse::<u32>().is_ok_and(|pid| pid != std::process::id() && !Path::new("/proc").join(pid.to_string()).exists())
}

/// Removes what an import into the existing directory `dir` by a process that no longer runs left behind: its
/// temporary directory, and the files it had moved into `dir` when it did not get as far as the metadata file.
fn remove_abandoned_inside(dir: &Path) -> Result<(), ImportError> {
    let Ok(entries) = std::fs::read_dir(dir) else { return Ok(()) };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name.to_str().and_then(|n| n.strip_prefix(INSIDE_PREFIX)) else { continue };
        if !process_gone(pid) {
            continue;
        }
        let temp = entry.path();
        if !dir.join(META_FILE).exists() {
            if let Ok(list) = std::fs::read_to_string(temp.join(MOVING)) {
                for moved in list.lines().filter(|l| !l.is_empty() && !l.contains('/')) {
                    let _ = std::fs::remove_file(dir.join(moved));
                }
            }
        }
        std::fs::remove_dir_all(&temp).map_err(io(&temp))?;
    }
    Ok(())
}

fn sync_dir(dir: &Path) -> Result<(), ImportError> {
    std::fs::File::open(dir).and_then(|f| f.sync_all()).map_err(io(dir))
}

/// The existing target directory (symbolic links followed) when `dir` is one.
fn existing_dir(dir: &Path) -> Result<Option<PathBuf>, ImportError> {
    match std::fs::metadata(dir) {
        Ok(m) if m.is_dir() => std::fs::canonicalize(dir).map(Some).map_err(io(dir)),
        Ok(_) => Err(ImportError::Target(format!("{} exists and is not a directory", dir.display()))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(io(dir)(e)),
    }
}

/// Cleans what interrupted imports into `dir` left, and refuses a target that holds anything else.
pub(crate) fn prepare_target(dir: &Path, with_edge_lists: bool) -> Result<(), ImportError> {
    plexus_storage::store::remove_abandoned_imports(dir);
    let Some(real) = existing_dir(dir)? else { return Ok(()) };
    remove_abandoned_inside(&real)?;
    plexus_storage::Store::clear_unfinished_creation(&real)
        .map_err(|e| ImportError::Target(format!("{}: {e}", dir.display())))?;
    let mut entries = std::fs::read_dir(&real).map_err(io(dir))?;
    if entries.next().is_some() {
        let hint = if with_edge_lists {
            "choose another directory"
        } else {
            "choose another directory, or add to this one with --mode incremental"
        };
        // `plexus query` and `plexus shell` create the database they are pointed at: a mistyped or early one leaves
        // an empty database where the import was meant to go.
        let holds = if real.join("plexus.meta").exists() {
            " and holds a database (perhaps an empty one that `plexus query` or `plexus shell` created there: delete \
             the directory if so)"
        } else {
            ""
        };
        return Err(ImportError::Target(format!(
            "{} is not empty{holds}: import creates a new database ({hint})",
            dir.display()
        )));
    }
    Ok(())
}

/// Writes a new database holding `state` into `dir` (absent, or an empty directory), all or nothing (see the
/// module documentation). Returns the checkpoint's size in bytes.
pub fn create(dir: &Path, state: GraphState, catalog: &Catalog) -> Result<u64, ImportError> {
    create_with(dir, |built| Store::create_from_state(built, state, catalog))
}

/// As [`create`], for an edge list written without building its graph.
pub fn create_edge_list(dir: &Path, image: &EdgeListImage, catalog: &Catalog) -> Result<u64, ImportError> {
    create_with(dir, |built| Store::create_from_edge_list(built, image, catalog))
}

/// As [`create`], with `write` creating the database in the directory it is given.
fn create_with(dir: &Path, write: impl FnOnce(&Path) -> StorageResult<u64>) -> Result<u64, ImportError> {
    match existing_dir(dir)? {
        None => create_new(dir, write),
        Some(real) => fill_existing(dir, &real, write),
    }
}

fn create_new(dir: &Path, write: impl FnOnce(&Path) -> StorageResult<u64>) -> Result<u64, ImportError> {
    let temp = Store::import_temp_dir(dir);
    let parent = temp.parent().map(Path::to_path_buf).unwrap_or_else(|| PathBuf::from("."));
    std::fs::create_dir_all(&parent).map_err(io(&parent))?;
    if temp.exists() {
        std::fs::remove_dir_all(&temp).map_err(io(&temp))?;
    }
    // The temporary sibling is ours to name: a failure to make it is told of the target the user gave.
    std::fs::create_dir(&temp)
        .map_err(|e| ImportError::Target(format!("cannot create {} (in {}): {e}", dir.display(), parent.display())))?;
    let built = temp.join("db");
    let result = (|| {
        let size = write(&built).map_err(ImportError::Storage)?;
        let mut published = lock();
        if published.cancelled.iter().any(|p| p == dir) {
            return Err(ImportError::Target("interrupted".into()));
        }
        std::fs::rename(&built, dir).map_err(|e| match e.kind() {
            std::io::ErrorKind::DirectoryNotEmpty | std::io::ErrorKind::AlreadyExists => ImportError::Target(format!(
                "{} appeared during the import (another import or program wrote it); it was left as it is",
                dir.display()
            )),
            _ => ImportError::Io { path: dir.to_path_buf(), error: e },
        })?;
        sync_dir(&parent)?;
        published.published.push(dir.to_path_buf());
        Ok(size)
    })();
    let _ = std::fs::remove_dir_all(&temp);
    result
}

/// `target` as given (the key [`cancel`] is called with), `dir` the directory it is.
fn fill_existing(
    target: &Path,
    dir: &Path,
    write: impl FnOnce(&Path) -> StorageResult<u64>,
) -> Result<u64, ImportError> {
    remove_abandoned_inside(dir)?;
    let temp = dir.join(format!("{INSIDE_PREFIX}{}", std::process::id()));
    if temp.exists() {
        std::fs::remove_dir_all(&temp).map_err(io(&temp))?;
    }
    std::fs::create_dir(&temp).map_err(io(&temp))?;
    let built = temp.join("db");
    let mut moved: Vec<String> = Vec::new();
    let result = (|| {
        let size = write(&built).map_err(ImportError::Storage)?;
        let mut names: Vec<String> = Vec::new();
        for entry in std::fs::read_dir(&built).map_err(io(&built))? {
            let name = entry.map_err(io(&built))?.file_name();
            let name = name.into_string().map_err(|n| ImportError::Target(format!("unexpected file {n:?}")))?;
            if name != META_FILE {
                names.push(name);
            }
        }
        names.sort();
        names.push(META_FILE.to_string());
        let list = temp.join(MOVING);
        std::fs::write(&list, names.join("\n") + "\n").map_err(io(&list))?;
        std::fs::File::open(&list).and_then(|f| f.sync_all()).map_err(io(&list))?;
        sync_dir(&temp)?;
        let mut published = lock();
        if published.cancelled.iter().any(|p| p == target) {
            return Err(ImportError::Target("interrupted".into()));
        }
        // Anything in the target now is an interrupted import's: the check before the work may be long ago.
        for entry in std::fs::read_dir(dir).map_err(io(dir))?.flatten() {
            if entry.path() != temp {
                return Err(ImportError::Target(format!(
                    "{} is no longer empty: {:?} appeared during the import",
                    dir.display(),
                    entry.file_name()
                )));
            }
        }
        for name in &names {
            if name == META_FILE {
                // Every other file is in place before the metadata file is.
                sync_dir(dir)?;
            }
            std::fs::rename(built.join(name), dir.join(name)).map_err(io(&dir.join(name)))?;
            moved.push(name.clone());
        }
        sync_dir(dir)?;
        published.published.push(target.to_path_buf());
        Ok(size)
    })();
    if result.is_err() && moved.last().map(String::as_str) != Some(META_FILE) {
        for name in &moved {
            let _ = std::fs::remove_file(dir.join(name));
        }
    }
    let _ = std::fs::remove_dir_all(&temp);
    result
}

/// Waits while an interrupt is removing the partly built database (the process is about to exit), so that an
/// error the interrupted import ran into is not reported as the cause of its end.
pub fn settle() {
    drop(lock());
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use super::*;

    fn small_state() -> (GraphState, Catalog) {
        (GraphState::new(), Catalog::new())
    }

    #[test]
    fn an_empty_target_is_filled_in_place() {
        use std::os::unix::fs::MetadataExt;
        let tmp = tempfile::tempdir().unwrap();
        let target = tmp.path().join("db");
        std::fs::create_dir(&target).unwrap();
        std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o2770)).unwrap();
        let before = std::fs::metadata(&target).unwrap();
        // Through a symbolic link, too.
        let link = tmp.path().join("link");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        let (state, catalog) = small_state();
        create(&link, state, &catalog).unwrap();
        let after = std::fs::metadata(&target).unwrap();
        assert_eq!((after.ino(), after.mode()), (before.ino(), before.mode()));
        assert!(target.join(META_FILE).exists());
        let names: Vec<_> = std::fs::read_dir(&target).unwrap().flatten().map(|e| e.file_name()).collect();
        assert!(names.iter().all(|n| !n.to_string_lossy().starts_with(INSIDE_PREFIX)), "{names:?}");
        assert!(Store::open(&target).is_ok());
    }

    #[test]
    fn a_move_cut_short_is_cleaned_up_by_the_next_import() {
        let tmp = tempfile::tempdir().unwrap();
        let target = tmp.path().join("db");
        std::fs::create_dir(&target).unwrap();
        // What a process killed in the middle of moving the files in leaves: its temporary directory with the
        // list of names, and some of the files, but no metadata file.
        let left = target.join(format!("{INSIDE_PREFIX}4000000"));
        std::fs::create_dir(&left).unwrap();
        std::fs::write(left.join(MOVING), "checkpoint-00000000000000000001.plx\nplexus.meta\n").unwrap();
        std::fs::write(target.join("checkpoint-00000000000000000001.plx"), "partial").unwrap();
        assert!(Store::holds_database(&target));
        prepare_target(&target, false).unwrap();
        assert_eq!(std::fs::read_dir(&target).unwrap().count(), 0);
        let (state, catalog) = small_state();
        create(&target, state, &catalog).unwrap();
        assert!(Store::open(&target).is_ok());
    }

    #[test]
    fn a_cancel_before_publishing_leaves_the_target_as_it_was() {
        let tmp = tempfile::tempdir().unwrap();
        let target = tmp.path().join("db");
        std::fs::create_dir(&target).unwrap();
        lock().cancelled.push(target.clone());
        let (graph, catalog) = small_state();
        let err = create(&target, graph, &catalog).unwrap_err().to_string();
        assert!(err.contains("interrupted"), "{err}");
        assert_eq!(std::fs::read_dir(&target).unwrap().count(), 0, "the target stays empty");
        let (graph, catalog) = small_state();
        let absent = tmp.path().join("absent");
        lock().cancelled.push(absent.clone());
        let err = create(&absent, graph, &catalog).unwrap_err().to_string();
        assert!(err.contains("interrupted") && !absent.exists(), "{err}");
        assert!(std::fs::read_dir(tmp.path()).unwrap().count() == 1, "no temporary directory is left");
    }
}
