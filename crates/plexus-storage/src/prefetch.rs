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

/// Asks the kernel to back `v`'s buffer with 2 MiB pages where it can (Linux transparent huge pages in `madvise`
/// mode), before the buffer is first written. A random read of a large array costs a TLB miss and a page walk on
/// top of the cache miss with 4 KiB pages; the flat adjacency's arrays are read at random and are tens to
/// hundreds of megabytes. Small buffers and other systems are left alone.
pub fn advise_huge_pages<T>(v: &Vec<T>) {
    const HUGE: usize = 2 << 20;
    let bytes = v.capacity() * std::mem::size_of::<T>();
    if bytes < 2 * HUGE {
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
