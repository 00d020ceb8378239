//! Asking the memory system for a cache line ahead of its use, and for large pages under arrays read at random.
//!
//! A random read of the graph is a chain of dependent cache misses (spine, leaf, adjacency block), so one read
//! at a time waits for each in turn. A caller with many reads to make (a batch of node ids) can instead request
//! the lines of reads a few positions ahead while it answers the current one, and the misses then overlap.

/// Requests the cache line holding `p` without waiting for it. Never faults: any address may be given.
#[inline(always)]
pub fn prefetch<T>(p: *const T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch is a hint; it reads nothing the program can observe and cannot fault.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(p.cast::<i8>())
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

/// Requests the line of `table[i]`, if `i` is in range, without waiting for it.
#[inline(always)]
pub fn prefetch_at<T>(table: &[T], i: usize) {
    if let Some(entry) = table.get(i) {
        prefetch(entry);
    }
}

/// Asks the kernel to back `v`'s buffer with 2 MiB pages where it can (Linux transparent huge pages in `madvise`
/// mode), before the buffer is first written. A random read of a large array costs a TLB miss and a page walk on
/// top of the cache miss with 4 KiB pages; the flat adjacency's arrays are read at random and are tens to
/// hundreds of megabytes. Small buffers and other systems are left alone.
pub fn advise_huge_pages<T>(v: &Vec<T>) {
    const HUGE: usize = 2 << 20;
    let bytes = v.capacity() * std::mem::size_of::<T>();
    if bytes < 2 * HUGE || !advising() {
        return;
    }
    #[cfg(target_os = "linux")]
    {
        let start = v.as_ptr() as usize;
        let first = start.next_multiple_of(HUGE);
        let end = (start + bytes) / HUGE * HUGE;
        if end > first {
            // SAFETY: the range lies inside `v`'s allocation; the advice changes how pages are backed, never
            // their contents. A refusal (no THP support) is harmless, so the result is ignored.
            unsafe {
                libc::madvise(first as *mut libc::c_void, end - first, libc::MADV_HUGEPAGE);
            }
        }
    }
}

static WRITE_ONLY_BUILDS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// While the returned guard lives, [`advise_huge_pages`] advises nothing: for a graph built only to be written
/// out (an import into a directory, dropped once its checkpoint is written). Faulting in a huge page zeroes
/// 2 MiB at once and may wait for the kernel to compact memory; that cost only pays off through random reads,
/// which such a graph never serves (the patents import built in 0.85 s instead of 1.23 s without them).
/// Process-wide, since a build runs on several threads: a graph built meanwhile for reading gets ordinary pages.
pub fn write_only_build() -> WriteOnlyBuild {
    WRITE_ONLY_BUILDS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    WriteOnlyBuild(())
}

/// See [`write_only_build`].
pub struct WriteOnlyBuild(());

/// Whether [`advise_huge_pages`] advises at all now.
fn advising() -> bool {
    WRITE_ONLY_BUILDS.load(std::sync::atomic::Ordering::Relaxed) == 0
}

impl Drop for WriteOnlyBuild {
    fn drop(&mut self) {
        WRITE_ONLY_BUILDS.fetch_sub(1, std::sync::atomic::Ordering::Relaxed);
    }
}

/// `len` copies of `value` in a buffer advised for huge pages before it is written (see [`advise_huge_pages`]):
/// for the tables that batches of random reads index.
pub fn filled_on_huge_pages<T: Clone>(value: T, len: usize) -> Vec<T> {
    let mut v = with_capacity_on_huge_pages(len);
    v.resize(len, value);
    v
}

/// An empty vector with room for `capacity` values, advised for huge pages (see [`advise_huge_pages`]): for
/// large results assembled by appending.
pub fn with_capacity_on_huge_pages<T>(capacity: usize) -> Vec<T> {
    let v = Vec::with_capacity(capacity);
    advise_huge_pages(&v);
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn write_only_builds_turn_the_advice_off_until_the_last_one_ends() {
        assert!(advising());
        let outer = write_only_build();
        let inner = write_only_build();
        assert!(!advising());
        drop(inner);
        assert!(!advising(), "one build still runs");
        drop(outer);
        assert!(advising());
    }
}
