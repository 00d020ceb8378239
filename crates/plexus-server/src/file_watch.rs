//! Tells whether one file of a directory may have been written, replaced or removed since last asked, without a
//! `stat` of its path each time. The users file is checked before every request (so that `plexus user`, run while
//! the server runs, takes effect at the next one); a `stat` walks the whole path and cost about a tenth of the
//! server's CPU on a point read over Bolt. An inotify watch on the directory costs one non-blocking `read` that
//! finds nothing. The kernel queues the event inside the `rename` or `close` that changed the file, so a request
//! that starts after the change returned always sees it.

use std::path::Path;

/// A watch on one file name in a directory (Linux); elsewhere, or when the kernel refuses a watch, `new` returns
/// `None` and the caller compares the file's stamp every time, as before.
pub(crate) struct FileWatch {
    #[cfg(target_os = "linux")]
    inotify: std::os::fd::OwnedFd,
    #[cfg(target_os = "linux")]
    name: Vec<u8>,
    /// A change was seen that the caller has not yet acknowledged with [`FileWatch::settled`].
    pending: bool,
    /// Events were lost (the queue overflowed) or the watch ended (the directory was removed or moved): every
    /// question answers "maybe changed" from then on.
    lost: bool,
}

impl FileWatch {
    #[cfg(target_os = "linux")]
    pub(crate) fn new(file: &Path) -> Option<FileWatch> {
        use std::os::fd::{FromRawFd, OwnedFd};
        use std::os::unix::ffi::OsStrExt;
        let dir = file.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
        let name = file.file_name()?.as_bytes().to_vec();
        let dir = std::ffi::CString::new(dir.as_os_str().as_bytes()).ok()?;
        // SAFETY: plain system calls; the descriptor is owned by `OwnedFd` from here on.
        let fd = unsafe { libc::inotify_init1(libc::IN_NONBLOCK | libc::IN_CLOEXEC) };
        if fd < 0 {
            return None;
        }
        let inotify = unsafe { OwnedFd::from_raw_fd(fd) };
        // Every way the file's content can change: replaced by a rename (how Plexus saves it), created, deleted,
        // renamed away, or written in place and closed (an editor).
        let mask = libc::IN_MOVED_TO
            | libc::IN_MOVED_FROM
            | libc::IN_CREATE
            | libc::IN_DELETE
            | libc::IN_CLOSE_WRITE
            | libc::IN_DELETE_SELF
            | libc::IN_MOVE_SELF
            | libc::IN_ONLYDIR;
        let watch = unsafe { libc::inotify_add_watch(fd, dir.as_ptr(), mask) };
        (watch >= 0).then_some(FileWatch { inotify, name, pending: false, lost: false })
    }

    #[cfg(not(target_os = "linux"))]
    pub(crate) fn new(_file: &Path) -> Option<FileWatch> {
        None
    }

    /// Whether the file may have changed since the last [`FileWatch::settled`]. Reads the events queued since the
    /// last call, without blocking.
    pub(crate) fn maybe_changed(&mut self) -> bool {
        #[cfg(target_os = "linux")]
        self.read_events();
        self.pending || self.lost
    }

    /// The caller has read the file as it is now: changes before this call are accounted for.
    pub(crate) fn settled(&mut self) {
        self.pending = false;
    }

    #[cfg(target_os = "linux")]
    fn read_events(&mut self) {
        use std::os::fd::AsRawFd;
        const HEADER: usize = std::mem::size_of::<libc::inotify_event>();
        // Room for one event with the longest name (the kernel refuses a smaller buffer); more are read in turn.
        let mut buffer = [0u8; HEADER + 256 + 16];
        loop {
            // SAFETY: reads at most the buffer's length into it.
            let n = unsafe { libc::read(self.inotify.as_raw_fd(), buffer.as_mut_ptr().cast(), buffer.len()) };
            if n <= 0 {
                // Nothing queued (EAGAIN), or an error, which a later call meets again: the file is then compared
                // every time.
                if n < 0 && std::io::Error::last_os_error().kind() != std::io::ErrorKind::WouldBlock {
                    self.lost = true;
                }
                return;
            }
            let bytes = &buffer[..n as usize];
            let mut at = 0;
            while at + HEADER <= bytes.len() {
                // SAFETY: the kernel writes whole events; the header is read without assuming its alignment.
                let event = unsafe { std::ptr::read_unaligned(bytes[at..].as_ptr().cast::<libc::inotify_event>()) };
                let name_len = event.len as usize;
                let name = bytes.get(at + HEADER..at + HEADER + name_len).unwrap_or(&[]);
                let name = &name[..name.iter().position(|&b| b == 0).unwrap_or(name.len())];
                if event.mask & (libc::IN_Q_OVERFLOW | libc::IN_IGNORED | libc::IN_DELETE_SELF | libc::IN_MOVE_SELF)
                    != 0
                {
                    self.lost = true;
                } else if name == self.name.as_slice() {
                    self.pending = true;
                }
                at += HEADER + name_len;
            }
        }
    }
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
        std::fs::remove_file(&file).unwrap();
        assert!(watch.maybe_changed(), "removed");
        watch.settled();
    }

    #[test]
    fn a_removed_directory_makes_every_answer_maybe() {
        let dir = tempfile::tempdir().unwrap();
        let sub = dir.path().join("data");
        std::fs::create_dir(&sub).unwrap();
        let mut watch = FileWatch::new(&sub.join("users.json")).unwrap();
        std::fs::remove_dir(&sub).unwrap();
        assert!(watch.maybe_changed());
        watch.settled();
        assert!(watch.maybe_changed(), "the watch is gone");
    }
}
