//! Asking the memory system for a cache line ahead of its use.
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
