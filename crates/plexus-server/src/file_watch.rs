//! Tells whether one file of a directory may have been written, replaced or removed since last asked, without a
//! `stat` of its path each time. The users file is checked before every request (so that `plexus user`, run while
//! the server runs, takes effect at the next one); a `stat` walks the whole path and cost about a tenth of the
//! server's CPU on a point read over Bolt. An inotify watch answers with one non-blocking `read` that finds nothing.
//! The kernel queues an event inside the `rename`, `write` or `close` that changed the file, so a request that
//! starts after the change returned always sees it.
//!
//! Two watches: one on the directory, for the file's name being replaced, created, removed or written there; one
//! on the file itself, for writes through another path (a hard link) and new links. A symbolic link, as the file
//! or as the directory, can be repointed without any event here: then there is no watch, and the caller compares
//! the file's stamp every time, as it does where inotify is missing.

use std::path::{Path, PathBuf};

/// A watch on one file (Linux); `new` returns `None` where there can be none that sees every change.
pub(crate) struct FileWatch {
    #[cfg(target_os = "linux")]
    inotify: std::os::fd::OwnedFd,
    #[cfg(target_os = "linux")]
    dir_watch: i32,
    /// The watch on the file now under the name, removed when a replacement is watched (a replaced file still
    /// linked elsewhere would keep its watch, and the kernel's count of them, for as long as it lives).
    #[cfg(target_os = "linux")]
    file_watch: Option<i32>,
    file: PathBuf,
    /// The file's name, which the directory's events carry.
    #[cfg(target_os = "linux")]
    name: Vec<u8>,
    /// A change was seen that the caller has not yet acknowledged with [`FileWatch::settled`].
    pending: bool,
    /// The watch can no longer see every change (the directory was removed or moved, or the file became a
    /// symbolic link): every question answers "maybe changed" from then on.
    lost: bool,
}

/// What [`FileWatch::seen`] answers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Seen {
    Nothing,
    Change,
    Unknown,
}

/// What the watch on the file itself reports: a write through any of its names, a new or removed link.
#[cfg(target_os = "linux")]
const FILE_EVENTS: u32 = libc::IN_MODIFY | libc::IN_CLOSE_WRITE | libc::IN_ATTRIB;

impl FileWatch {
    #[cfg(target_os = "linux")]
    pub(crate) fn new(file: &Path) -> Option<FileWatch> {
        use std::os::fd::{FromRawFd, OwnedFd};
        use std::os::unix::ffi::OsStrExt;
        let dir = file.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
        let name = file.file_name()?.as_bytes().to_vec();
        if is_symlink(dir) || is_symlink(file) {
            return None;
        }
        // SAFETY: plain system calls; the descriptor is owned by `OwnedFd` from here on.
        let fd = unsafe { libc::inotify_init1(libc::IN_NONBLOCK | libc::IN_CLOEXEC) };
        if fd < 0 {
            return None;
        }
        let inotify = unsafe { OwnedFd::from_raw_fd(fd) };
        // Every way the name can come to another content: replaced by a rename (how Plexus saves it), created,
        // deleted, renamed away, written in place.
        let mask = libc::IN_MOVED_TO
            | libc::IN_MOVED_FROM
            | libc::IN_CREATE
            | libc::IN_DELETE
            | libc::IN_MODIFY
            | libc::IN_CLOSE_WRITE
            | libc::IN_ATTRIB
            | libc::IN_DELETE_SELF
            | libc::IN_MOVE_SELF
            | libc::IN_ONLYDIR;
        let dir_watch = add_watch(&inotify, dir, mask)?;
        let mut watch = FileWatch {
            inotify,
            dir_watch,
            file_watch: None,
            file: file.to_path_buf(),
            name,
            pending: false,
            lost: false,
        };
        watch.watch_file();
        Some(watch)
    }

    #[cfg(not(target_os = "linux"))]
    pub(crate) fn new(_file: &Path) -> Option<FileWatch> {
        None
    }

    /// Whether the file may have changed since the last [`FileWatch::settled`]. Reads the events queued since the
    /// last call, without blocking.
    #[cfg(test)]
    pub(crate) fn maybe_changed(&mut self) -> bool {
        self.seen() != Seen::Nothing
    }

    /// What the watch saw since the last [`FileWatch::settled`]; `Unknown` once it can see no longer, when the
    /// caller compares the file's stamp instead.
    pub(crate) fn seen(&mut self) -> Seen {
        #[cfg(target_os = "linux")]
        self.read_events();
        match (self.lost, self.pending) {
            (true, _) => Seen::Unknown,
            (false, true) => Seen::Change,
            (false, false) => Seen::Nothing,
        }
    }

    /// The caller has read the file as it is now: changes before this call are accounted for.
    pub(crate) fn settled(&mut self) {
        self.pending = false;
    }

    /// Watches the file now under the name (a new one after a replacement), unless it is a symbolic link, which
    /// could be repointed unseen.
    #[cfg(target_os = "linux")]
    fn watch_file(&mut self) -> bool {
        use std::os::fd::AsRawFd;
        if is_symlink(&self.file) {
            return false;
        }
        // A missing file has nothing to watch; the directory's watch sees it come.
        let watch = add_watch(&self.inotify, &self.file, FILE_EVENTS | libc::IN_DONT_FOLLOW);
        if let Some(old) = self.file_watch.filter(|&old| Some(old) != watch) {
            // SAFETY: a plain system call; a watch already gone (its file freed) is refused harmlessly.
            unsafe { libc::inotify_rm_watch(self.inotify.as_raw_fd(), old) };
        }
        self.file_watch = watch;
        true
    }

    #[cfg(target_os = "linux")]
    fn read_events(&mut self) {
        use std::os::fd::AsRawFd;
        const HEADER: usize = std::mem::size_of::<libc::inotify_event>();
        // Room for one event with the longest name (the kernel refuses a smaller buffer); more are read in turn.
        let mut buffer = [0u8; HEADER + 256 + 16];
        let mut renamed = false;
        loop {
            // SAFETY: reads at most the buffer's length into it.
            let n = unsafe { libc::read(self.inotify.as_raw_fd(), buffer.as_mut_ptr().cast(), buffer.len()) };
            if n <= 0 {
                // Nothing queued (EAGAIN), or an error, which a later call meets again: the file is then read
                // every time.
                if n < 0 && std::io::Error::last_os_error().kind() != std::io::ErrorKind::WouldBlock {
                    self.lost = true;
                }
                break;
            }
            let bytes = &buffer[..n as usize];
            let mut at = 0;
            while at + HEADER <= bytes.len() {
                // SAFETY: the kernel writes whole events; the header is read without assuming its alignment.
                let event = unsafe { std::ptr::read_unaligned(bytes[at..].as_ptr().cast::<libc::inotify_event>()) };
                let name_len = event.len as usize;
                let named = bytes.get(at + HEADER..at + HEADER + name_len).unwrap_or(&[]);
                let named = &named[..named.iter().position(|&b| b == 0).unwrap_or(named.len())];
                at += HEADER + name_len;
                if event.mask & libc::IN_Q_OVERFLOW != 0 {
                    // Events were dropped: read the file again, whatever they said.
                    self.pending = true;
                } else if event.wd != self.dir_watch {
                    // The file's own watch (of this file, or of one it replaced): anything but its end is a change.
                    self.pending |= event.mask & libc::IN_IGNORED == 0;
                } else if event.mask & (libc::IN_IGNORED | libc::IN_DELETE_SELF | libc::IN_MOVE_SELF) != 0 {
                    self.lost = true;
                } else if named == self.name.as_slice() {
                    self.pending = true;
                    renamed |= event.mask & (libc::IN_CREATE | libc::IN_MOVED_TO) != 0;
                }
            }
        }
        if renamed && !self.watch_file() {
            self.lost = true;
        }
    }
}

#[cfg(target_os = "linux")]
fn add_watch(inotify: &std::os::fd::OwnedFd, path: &Path, mask: u32) -> Option<i32> {
    use std::os::fd::AsRawFd;
    use std::os::unix::ffi::OsStrExt;
    let path = std::ffi::CString::new(path.as_os_str().as_bytes()).ok()?;
    // SAFETY: a plain system call on a valid descriptor and a NUL-terminated path.
    let watch = unsafe { libc::inotify_add_watch(inotify.as_raw_fd(), path.as_ptr(), mask) };
    (watch >= 0).then_some(watch)
}

fn is_symlink(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink())
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    #[test]
    fn sees_the_file_replaced_created_written_and_removed_but_not_its_neighbours() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("users.json");
        let mut watch = FileWatch::new(&file).unwrap();
        assert!(!watch.maybe_changed());
        std::fs::write(dir.path().join("other"), b"x").unwrap();
        assert!(!watch.maybe_changed(), "another file of the directory");
        // More events than one read takes, the file's last.
        for i in 0..40 {
            std::fs::write(dir.path().join(format!("{i:0>200}")), b"x").unwrap();
        }
        std::fs::write(&file, b"{}").unwrap();
        assert!(watch.maybe_changed(), "created");
        assert!(watch.maybe_changed(), "still pending until settled");
        watch.settled();
        assert!(!watch.maybe_changed());
        let tmp = dir.path().join("users.json.tmp-1");
        std::fs::write(&tmp, b"{ }").unwrap();
        assert!(!watch.maybe_changed(), "the temporary file");
        std::fs::rename(&tmp, &file).unwrap();
        assert!(watch.maybe_changed(), "replaced by a rename");
        watch.settled();
        // Written without being closed, and cut short.
        let open = std::fs::OpenOptions::new().write(true).open(&file).unwrap();
        std::io::Write::write_all(&mut &open, b"[]").unwrap();
        assert!(watch.maybe_changed(), "written, still open");
        watch.settled();
        open.set_len(0).unwrap();
        assert!(watch.maybe_changed(), "truncated");
        watch.settled();
        drop(open);
        watch.maybe_changed();
        watch.settled();
        std::fs::remove_file(&file).unwrap();
        assert!(watch.maybe_changed(), "removed");
        watch.settled();
    }

    /// Writes through another name of the file (a hard link elsewhere, made before or after the watch began).
    #[test]
    fn sees_writes_through_a_hard_link() {
        let (dir, elsewhere) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let file = dir.path().join("users.json");
        std::fs::write(&file, b"{}").unwrap();
        let mut watch = FileWatch::new(&file).unwrap();
        let link = elsewhere.path().join("copy.json");
        std::fs::hard_link(&file, &link).unwrap();
        assert!(watch.maybe_changed(), "a new link");
        watch.settled();
        std::fs::write(&link, b"[]").unwrap();
        assert!(watch.maybe_changed(), "written through the link");
        watch.settled();
        // The file replaced: the new one is watched as well.
        std::fs::write(elsewhere.path().join("new"), b"{}").unwrap();
        std::fs::rename(elsewhere.path().join("new"), &file).unwrap();
        assert!(watch.maybe_changed());
        watch.settled();
        let link = elsewhere.path().join("copy2.json");
        std::fs::hard_link(&file, &link).unwrap();
        watch.maybe_changed();
        watch.settled();
        std::fs::write(&link, b"[1]").unwrap();
        assert!(watch.maybe_changed(), "written through a link to the replacement");
    }

    /// A file replaced while a link elsewhere keeps it alive gives up its watch: the kernel's count stays at two.
    #[test]
    fn replaced_files_do_not_keep_their_watches() {
        use std::os::fd::AsRawFd;
        let (dir, elsewhere) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let file = dir.path().join("users.json");
        std::fs::write(&file, b"{}").unwrap();
        let mut watch = FileWatch::new(&file).unwrap();
        for i in 0..20 {
            std::fs::hard_link(&file, elsewhere.path().join(format!("kept-{i}"))).unwrap();
            std::fs::write(dir.path().join("next"), b"{}").unwrap();
            std::fs::rename(dir.path().join("next"), &file).unwrap();
            assert!(watch.maybe_changed());
            watch.settled();
        }
        let info = std::fs::read_to_string(format!("/proc/self/fdinfo/{}", watch.inotify.as_raw_fd())).unwrap();
        assert_eq!(info.lines().filter(|l| l.starts_with("inotify wd:")).count(), 2, "{info}");
    }

    #[test]
    fn symbolic_links_get_no_watch_and_a_removed_directory_makes_every_answer_maybe() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("target.json");
        std::fs::write(&target, b"{}").unwrap();
        std::os::unix::fs::symlink(&target, dir.path().join("users.json")).unwrap();
        assert!(FileWatch::new(&dir.path().join("users.json")).is_none(), "a linked file");
        std::os::unix::fs::symlink(dir.path(), dir.path().join("linked")).unwrap();
        assert!(FileWatch::new(&dir.path().join("linked/target.json")).is_none(), "a linked directory");
        // A file that becomes a link later ends the watch.
        let mut watch = FileWatch::new(&target).unwrap();
        std::fs::remove_file(&target).unwrap();
        std::os::unix::fs::symlink(dir.path().join("other"), &target).unwrap();
        assert!(watch.maybe_changed());
        watch.settled();
        assert!(watch.maybe_changed(), "a link can be repointed unseen");

        let sub = dir.path().join("data");
        std::fs::create_dir(&sub).unwrap();
        let mut watch = FileWatch::new(&sub.join("users.json")).unwrap();
        std::fs::remove_dir(&sub).unwrap();
        assert!(watch.maybe_changed());
        watch.settled();
        assert!(watch.maybe_changed(), "the watch is gone");
    }
}
