//! Recycled memory for the large NumPy arrays that batch calls return.
//!
//! Why: a batch of edge lists answers with arrays of tens of megabytes. Fresh memory that large comes from the
//! kernel as new pages, and this machine's kernel faults and zeroes them at 0.3–1.3 s per GiB, so one call in a
//! loop took anywhere from 35 to 200 ms depending on how much of its answer landed on fresh pages, for the same
//! work. An array built here hands its memory back when Python drops it, and the next batch call writes its
//! answer into those pages, already mapped: a loop over batches pays the kernel once, not every call.
//!
//! The pool keeps a few buffers of at least [`MIN_POOLED`] values, [`MAX_POOLED_BYTES`] in all; anything else
//! is freed as usual. Only 8-byte element types pass through it (`i64`, `f64`), stored as `u64` words: every bit
//! pattern of those is a valid value, so a recycled buffer's old contents are initialised memory of the new
//! type.
//!
//! Fresh buffers are zeroed memory from the allocator, on ordinary pages. Advised onto 2 MiB pages they faulted
//! in faster when the kernel had huge pages free (the first call of a 432 MB answer 93-99 ms against 143-176 ms),
//! but stalled while it compacted memory when it had none (706-927 ms, in half the runs one afternoon); a batch's
//! answer is written and read in order, where huge pages saved little once recycled (35-45 against 40-49 ms).

use std::mem::ManuallyDrop;

use numpy::ndarray::ArrayView1;
use numpy::{Element, PyArray1};
use parking_lot::Mutex;
use pyo3::prelude::*;

/// Buffers smaller than this many values (32 MiB) are left to the allocator: glibc's allocator serves blocks up
/// to that size from memory freed earlier once it has seen one freed (its mapping threshold adapts up to 32 MiB),
/// and a pool holding them back was measured to make calls of a size it could not serve fault in fresh pages
/// instead (three to four times slower). Larger blocks glibc always maps fresh and unmaps on free.
pub const MIN_POOLED: usize = 4 << 20;
/// At most this much idle memory is kept for reuse.
pub const MAX_POOLED_BYTES: usize = 768 << 20;
/// At most this many idle buffers are kept (a call returns up to three arrays, and a loop holds the previous
/// call's answer while it makes the next).
const MAX_POOLED_BUFFERS: usize = 12;

static POOL: Mutex<Vec<Vec<u64>>> = Mutex::new(Vec::new());

/// Element types stored as plain 8-byte words.
pub trait Word: Copy + Element + Send + 'static {
    const ZERO: Self;
}

impl Word for i64 {
    const ZERO: i64 = 0;
}

impl Word for f64 {
    const ZERO: f64 = 0.0;
}

impl Word for u64 {
    const ZERO: u64 = 0;
}

fn cast<A, B>(v: Vec<A>) -> Vec<B> {
    const { assert!(size_of::<A>() == size_of::<B>() && align_of::<A>() == align_of::<B>()) };
    let mut v = ManuallyDrop::new(v);
    // SAFETY: same size and alignment (checked above), so the allocation's layout is the same; callers only cast
    // between 8-byte types for which every bit pattern is a valid value.
    unsafe { Vec::from_raw_parts(v.as_mut_ptr().cast::<B>(), v.len(), v.capacity()) }
}

/// A vector of `len` values: recycled memory when the pool has a buffer that fits (its contents are left as
/// they were: the caller overwrites what it uses), else fresh memory filled with zeros.
pub fn take<T: Word>(len: usize) -> Vec<T> {
    if len >= MIN_POOLED {
        let mut pool = POOL.lock();
        // The smallest buffer that holds `len`, and not one more than twice its size (that one may fit a larger
        // request later).
        let best = (0..pool.len())
            .filter(|&i| pool[i].capacity() >= len && pool[i].capacity() / 2 <= len)
            .min_by_key(|&i| pool[i].capacity());
        if let Some(i) = best {
            let mut words = pool.swap_remove(i);
            drop(pool);
            if words.len() < len {
                words.resize(len, 0);
            }
            words.truncate(len);
            return cast(words);
        }
    }
    vec![T::ZERO; len]
}

/// Hands a vector's memory back to the pool (or frees it when the pool is full or the vector small).
pub fn give<T: Word>(v: Vec<T>) {
    if v.capacity() < MIN_POOLED || v.capacity() * 8 > MAX_POOLED_BYTES {
        return;
    }
    let words: Vec<u64> = cast(v);
    let mut pool = POOL.lock();
    pool.push(words);
    // Over the bounds, drop the smallest buffers first: large answers are the ones that cost faults.
    while pool.len() > MAX_POOLED_BUFFERS || pool.iter().map(|w| w.capacity() * 8).sum::<usize>() > MAX_POOLED_BYTES {
        let smallest = (0..pool.len()).min_by_key(|&i| pool[i].capacity()).expect("the pool is not empty");
        let freed = pool.swap_remove(smallest);
        drop(freed);
    }
}

/// Frees every idle buffer.
#[cfg(test)]
fn clear() {
    let idle = std::mem::take(&mut *POOL.lock());
    drop(idle);
}

/// Owns a NumPy array's memory and returns it to the pool when the array goes.
#[pyclass(frozen)]
struct PooledMemory {
    words: Mutex<Vec<u64>>,
}

impl Drop for PooledMemory {
    fn drop(&mut self) {
        give(std::mem::take(self.words.get_mut()));
    }
}

/// A NumPy array over `v`'s memory, which goes back to the pool when the array is dropped.
pub fn into_numpy<T: Word>(py: Python<'_>, v: Vec<T>) -> PyResult<Bound<'_, PyArray1<T>>> {
    if v.capacity() < MIN_POOLED {
        return Ok(PyArray1::from_vec(py, v));
    }
    let (ptr, len) = (v.as_ptr(), v.len());
    let owner = Bound::new(py, PooledMemory { words: Mutex::new(cast(v)) })?;
    // SAFETY: the vector's heap block does not move when the vector does, and `owner` keeps it, unchanged in
    // size, until the array (whose base it becomes) is dropped.
    unsafe {
        let view = ArrayView1::from_shape_ptr(len, ptr);
        Ok(PyArray1::borrow_from_array(&view, owner.into_any()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recycles_returned_buffers_within_its_bounds() {
        clear();
        let mut v: Vec<i64> = take(MIN_POOLED * 2);
        assert!(v.iter().all(|&x| x == 0), "fresh memory is zeroed");
        v[7] = 42;
        let ptr = v.as_ptr() as usize;
        give(v);
        let w: Vec<f64> = take(MIN_POOLED * 2 - 5);
        assert_eq!(w.as_ptr() as usize, ptr, "the returned buffer is reused");
        assert_eq!(w.len(), MIN_POOLED * 2 - 5);
        assert_eq!(w[7].to_bits(), 42, "old contents are left in place");
        give(w);
        let big: Vec<i64> = take(MIN_POOLED * 5);
        assert_ne!(big.as_ptr() as usize, ptr, "a buffer too small is not handed out");
        assert_eq!(big.len(), MIN_POOLED * 5);
        let small: Vec<i64> = take(MIN_POOLED / 2);
        assert_eq!(small.len(), MIN_POOLED / 2);
        assert!(small.iter().all(|&x| x == 0), "small requests get fresh memory");
        clear();

        // The bounds (in the same test: the pool is one per process).
        for _ in 0..MAX_POOLED_BUFFERS + 4 {
            give(vec![0i64; MIN_POOLED]);
        }
        assert_eq!(POOL.lock().len(), MAX_POOLED_BUFFERS);
        give(vec![0i64; MAX_POOLED_BYTES / 8 + 1]);
        let held: usize = POOL.lock().iter().map(|w| w.capacity() * 8).sum();
        assert!(held <= MAX_POOLED_BYTES);
        clear();
        assert!(POOL.lock().is_empty());
    }
}
