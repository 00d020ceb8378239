//! A child forked from a process that opened a database inherits the handle: it may read what the parent had,
//! but a write would append to the parent's log through shared file offsets, so it is refused, and dropping the
//! handle in the child touches neither the parent's files nor its threads.

#![cfg(unix)]

use plexus_storage::{StorageError, Store};

fn add_node(store: &Store) -> Result<u64, StorageError> {
    let mut tx = store.write();
    let label = tx.label("N");
    tx.create_node(&[label], vec![])?;
    tx.commit()
}

#[test]
fn a_forked_child_may_read_but_not_write_and_leaves_the_parents_log_alone() {
    let dir = tempfile::tempdir().unwrap();
    let (store, _) = Store::open(dir.path()).unwrap();
    add_node(&store).unwrap();
    // SAFETY: the child only uses this thread's data and ends with `_exit`, running no destructor of the parent's.
    let pid = unsafe { libc::fork() };
    assert!(pid >= 0, "fork failed");
    if pid == 0 {
        let refused = matches!(add_node(&store), Err(StorageError::ForkedProcess { .. }));
        let reads = store.read().node_count() == 1;
        drop(store);
        // SAFETY: ends the child without unwinding into the test harness.
        unsafe { libc::_exit(if refused && reads { 0 } else { 1 }) };
    }
    let mut status = 0;
    // SAFETY: waits for the child forked above.
    assert_eq!(unsafe { libc::waitpid(pid, &mut status, 0) }, pid);
    assert!(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0, "the child wrote, or could not read");
    add_node(&store).unwrap();
    drop(store);
    let (store, report) = Store::open(dir.path()).unwrap();
    assert!(report.is_clean(), "{report}");
    assert_eq!(store.read().node_count(), 2);
}
