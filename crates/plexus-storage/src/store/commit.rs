//! The commit path of a single (ungrouped) commit, conflict checks, publishing and checkpoints: what the store
//! does under and after the commit lock.

use super::*;

impl Shared {
    pub(crate) fn unregister_writer(&self, start: u64) {
        let mut writers = self.writers.lock();
        if let Some(n) = writers.get_mut(&start) {
            self.open_writers.fetch_sub(1, Ordering::Relaxed);
            *n -= 1;
            if *n == 0 {
                writers.remove(&start);
            }
        }
    }

    pub(super) fn check_conflicts(head: &Head, txn: &WriteTxn) -> Result<()> {
        Self::check_conflicts_of(head, txn.start_version, txn.schema_change, &txn.writes)
    }

    /// Whether a transaction that began at `start` and wrote `writes` may commit on top of `head`.
    pub(super) fn check_conflicts_of(head: &Head, start: u64, schema_change: bool, writes: &[WriteKey]) -> Result<()> {
        if head.state.version() == start {
            return Ok(());
        }
        if schema_change || head.last_schema_change > start {
            return Err(StorageError::Conflict("the schema (a unique key declaration)".into()));
        }
        for key in writes {
            for other in key.conflicts_with().into_iter().flatten() {
                if head.last_write.get(&other).is_some_and(|&v| v > start) {
                    return Err(StorageError::Conflict(describe(other)));
                }
            }
        }
        Ok(())
    }

    /// Refuses anything that would write, for a store opened read-only.
    pub(crate) fn writable(&self) -> Result<()> {
        if let Some(read_only) = &self.read_only {
            return Err(StorageError::ReadOnlyDatabase { path: read_only.dir.clone() });
        }
        match &self.disk {
            Some(disk) if crate::process::id() != self.owner => {
                Err(StorageError::ForkedProcess { path: disk.dir.clone(), owner: self.owner })
            }
            _ => Ok(()),
        }
    }

    /// A write transaction starting from the newest published state.
    pub(crate) fn begin_write(shared: &Arc<Shared>) -> WriteTxn {
        let mut writers = shared.writers.lock();
        let snapshot = shared.published.load_full();
        let start = snapshot.version();
        *writers.entry(start).or_insert(0) += 1;
        shared.open_writers.fetch_add(1, Ordering::Relaxed);
        drop(writers);
        WriteTxn::new(shared.clone(), start, (*snapshot).clone())
    }

    pub(crate) fn commit(&self, txn: &mut WriteTxn) -> Result<u64> {
        if txn.ops.is_empty() {
            return Ok(txn.start_version);
        }
        self.writable()?;
        if self.broken.load(Ordering::Acquire) {
            return Err(StorageError::Poisoned(group::BROKEN.into()));
        }
        if let Some(disk) = &self.disk {
            disk.wal.check_poisoned()?;
            if self.options.durability == Durability::Sync {
                return self.commit_grouped(txn, disk);
            }
        }
        let mut head = self.head.lock();
        if head.commits_since_prune >= 4096 || head.last_write.len() > 1 << 16 {
            self.prune(&mut head);
        }
        Self::check_conflicts(&head, txn)?;
        let version = head.state.version() + 1;
        let mut next = if head.state.version() == txn.start_version {
            txn.settle();
            txn.state.take()
        } else {
            let mut next = (*head.state).clone();
            for op in &txn.ops {
                // Conflict detection rules this out, except between writers of one value under a uniqueness
                // constraint on a relationship property or several node properties (those values carry no write
                // key): the later one fails here, as a retryable conflict, and the head stays intact.
                next.apply(op).map_err(|e| StorageError::Conflict(format!("replay failed: {e}")))?;
            }
            next
        };
        next.seal();
        next.version = version;
        let next = Arc::new(next);
        let mut lsn = 0;
        if let Some(disk) = &self.disk {
            let (payload, _) = self.log_record(version, &txn.ops)?;
            lsn = disk.wal.append(&payload, version);
            head.log_bytes_since_checkpoint += payload.len() as u64 + 8;
        }
        if txn.schema_change {
            head.last_schema_change = version;
        }
        let replaced = std::mem::replace(&mut head.state, next.clone());
        head.commits_since_prune += 1;
        let want_checkpoint = self.options.checkpoint_after_bytes > 0
            && head.log_bytes_since_checkpoint >= self.options.checkpoint_after_bytes;
        // Without `sync` (those commits go through `commit_grouped`), a commit is visible at once.
        let unpublished = self.published.swap(next);
        // The written keys only serve writers that started before this version. Once it is published, a writer
        // starting now starts at or after it; so if no other writer is open, nobody can ever need these keys.
        let others_open = {
            let writers = self.writers.lock();
            writers.iter().any(|(&start, &n)| start < version && (start != txn.start_version || n > 1))
        };
        if others_open {
            for key in txn.writes.drain(..) {
                head.last_write.insert(key, version);
            }
        }
        drop(head);
        // Freeing what the commit replaced (every copied branch and leaf, each decrementing its children's
        // counts) happens after the head lock is released, so other committers need not wait for it. It stays on
        // this thread: handing it to a background thread measured 10-35 % slower on small write transactions,
        // since those decrements pull into the other core cache lines this thread touches again next.
        drop((replaced, unpublished));
        if let Some(disk) = &self.disk {
            // Hand the record to the OS before acknowledging: that is what lets it survive a process crash
            // (`batch` fsyncs it within its interval on top). Concurrent committers still share one write, as
            // with group commit.
            if matches!(self.options.durability, Durability::Off | Durability::Batch) {
                disk.wal.sync_to(lsn, false).map_err(|e| {
                    // Readers may already see this commit, but its record may not be in the log (a full disk
                    // refuses it before writing any of it): say that its outcome after a reopen is unknown.
                    StorageError::Poisoned(format!(
                        "{}; this commit is visible until the database is reopened, but it may be absent after that",
                        e.cause()
                    ))
                })?;
            }
        }
        txn.registered = false;
        self.unregister_writer(txn.start_version);
        if want_checkpoint {
            *self.checkpoint_wanted.lock() = true;
            self.checkpoint_cv.notify_one();
        }
        Ok(version)
    }

    /// The log record of a commit at `version` of `ops`, preceded by the tokens created since the last record
    /// (taken from the catalog, and returned with the record so that a commit failing later can give them
    /// back). A record too large for the log is refused and changes nothing.
    pub(super) fn log_record(&self, version: u64, ops: &[Op]) -> Result<(Vec<u8>, UnloggedTokens)> {
        let tokens = self.catalog.take_unlogged();
        let mut payload = Vec::with_capacity(64 + ops.len() * 16);
        let token_ops: Vec<Op> =
            tokens.iter().map(|(kind, id, name)| Op::Token { kind: *kind, id: *id, name: name.to_string() }).collect();
        encode_commit_with_tokens(&mut payload, version, &token_ops, ops);
        debug_assert!(decode_commit(&payload).is_ok());
        if payload.len() > crate::wal::MAX_RECORD {
            self.catalog.return_unlogged(&tokens);
            return Err(StorageError::InvalidValue(format!(
                "the transaction's log record would be {} bytes; split it (at most {} bytes)",
                payload.len(),
                crate::wal::MAX_RECORD
            )));
        }
        Ok((payload, tokens))
    }

    /// Publishes the newest pending state whose log records are durable up to `durable_lsn`.
    pub(super) fn publish_durable(&self, durable_lsn: u64) {
        let mut pending = self.pending.lock();
        let mut newest = None;
        while pending.front().is_some_and(|(lsn, _)| *lsn <= durable_lsn) {
            newest = pending.pop_front().map(|(_, s)| s);
        }
        if let Some(state) = newest {
            let unpublished = self.published.swap(state);
            drop(pending);
            drop(unpublished);
        }
    }

    /// Forgets written keys no transaction can conflict with any more: those at or below both the oldest open
    /// writer's start and the published version (a writer starting now starts there, not at the head).
    pub(super) fn prune(&self, head: &mut Head) {
        head.commits_since_prune = 0;
        let published = self.published.load().version();
        let oldest = self.writers.lock().keys().next().copied().unwrap_or(published).min(published);
        head.last_write.retain(|_, v| *v > oldest);
        if head.last_write.capacity() > 4 * head.last_write.len().max(1024) {
            head.last_write.shrink_to_fit();
        }
    }

    pub(super) fn checkpoint(&self) -> Result<u64> {
        let _guard = self.checkpoint_lock.lock();
        let written = self.checkpoint_locked();
        if let Err(e) = &written {
            self.checkpoint_failures.fetch_add(1, Ordering::Relaxed);
            *self.last_checkpoint_error.lock() = Some(e.to_string());
        }
        written
    }

    pub(super) fn start_log_segment(&self) -> Result<()> {
        let _guard = self.checkpoint_lock.lock();
        self.writable()?;
        if let Some(disk) = &self.disk {
            let head = self.head.lock();
            disk.wal.rotate(head.state.version() + 1)?;
        }
        Ok(())
    }

    pub(super) fn checkpoint_locked(&self) -> Result<u64> {
        self.writable()?;
        let Some(disk) = &self.disk else {
            return Ok(0);
        };
        if self.broken.load(Ordering::Acquire) {
            // The head may hold part of a transaction: never write it out, the log still recovers everything.
            return Err(StorageError::Poisoned(group::BROKEN.into()));
        }
        // Freeze a version boundary: every record at or below it goes to the segments we are about to retire.
        let (state, new_segment) = {
            let mut head = self.head.lock();
            let version = head.state.version();
            let seg = disk.wal.rotate(version + 1)?;
            head.log_bytes_since_checkpoint = 0;
            // Everything logged is now durable: publish it so new readers see the state we checkpoint.
            let state = head.state.clone();
            {
                // Under the lock `publish_durable` stores under, so that a commit made durable by the rotation
                // and published by its committer cannot slip between the clearing and the store: its committer
                // either publishes first (an older state, replaced next) or finds the newer one published.
                let mut pending = self.pending.lock();
                pending.clear();
                self.published.store(state.clone());
            }
            self.prune(&mut head);
            (state, seg)
        };
        let compacted = compact(&state);
        let size = self.write_checkpoint(disk, &compacted, new_segment)?;
        // Adopt the compacted leaves when nothing committed meanwhile, so the memory that removal deltas and
        // emptied leaves held goes back too.
        let compacted = Arc::new(compacted);
        {
            let mut head = self.head.lock();
            if head.state.version() == compacted.version() {
                head.state = compacted.clone();
                self.published.store(compacted.clone());
            }
        }
        drop(compacted);
        drop(state);
        trim_heap();
        Ok(size)
    }
}

impl Shared {
    /// Writes `state`, the state after the head's that replaces it (a bulk load), as the checkpoint,
    /// and retires the log before it; the caller holds the checkpoint and head locks and publishes `state` after.
    /// Returns the checkpoint's size (0 in memory).
    /// The log is rotated to `next_version`, the version the next commit gets if `state` is not published (its
    /// checkpoint failed): after a published one, commits start later, which recovery accepts (a segment may
    /// begin below its first record's version; records at or below the checkpoint's are skipped).
    pub(super) fn checkpoint_unpublished(&self, state: &GraphState, next_version: u64) -> Result<u64> {
        let Some(disk) = &self.disk else {
            return Ok(0);
        };
        let new_segment = disk.wal.rotate(next_version)?;
        self.write_checkpoint(disk, state, new_segment)
    }

    /// Writes `state` as the checkpoint and retires the log segments before `new_segment`, which the caller
    /// started at the version after it. Returns the checkpoint's size.
    fn write_checkpoint(&self, disk: &super::Disk, state: &GraphState, new_segment: u64) -> Result<u64> {
        let (path, size) = checkpoint::write(
            &disk.dir,
            &disk.db_id,
            state,
            &self.catalog,
            self.node_ids.high_water(),
            self.rel_ids.high_water(),
        )?;
        recovery::retire_before(&disk.dir, &path, new_segment)?;
        self.checkpoints.fetch_add(1, Ordering::Relaxed);
        Ok(size)
    }
}

/// Rebuilds every leaf that has deltas, so the checkpoint encodes quickly; the published state is unchanged.
pub(super) fn compact(state: &GraphState) -> GraphState {
    let mut copy = state.clone();
    let mut leaves = Vec::new();
    copy.nodes.for_each(|i, leaf| {
        if leaf.live == 0 || leaf.out.delta_len() > 0 || leaf.inc.delta_len() > 0 {
            leaves.push(i);
        }
    });
    // Rebuilt blocks hold ids of their own: counted, so the flat arrays go once most are no longer shared.
    let released = leaves.into_iter().map(|i| copy.settle_leaf(i, true)).sum();
    copy.release_flat(released);
    copy
}

/// Returns freed heap pages to the OS (glibc keeps them otherwise).
pub(super) fn trim_heap() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only walks the allocator's own free lists.
    unsafe {
        libc::malloc_trim(0);
    }
}

pub(super) fn describe(key: WriteKey) -> String {
    match key {
        WriteKey::NodeRecord(id) => format!("node {id}"),
        WriteKey::NodeDeleted(id) => format!("node {id} (deleted)"),
        WriteKey::NodeLinked(id) => format!("the relationships of node {id}"),
        WriteKey::RelRecord(id) => format!("relationship {id}"),
        WriteKey::Unique(_) => "a unique key value".into(),
        WriteKey::EdgeMerge(_) => "an edge being upserted or removed".into(),
        WriteKey::Index(_) => "a property index being created or dropped".into(),
    }
}
