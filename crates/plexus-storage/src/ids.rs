//! Identifiers and id allocation.
//!
//! Nodes and relationships have dense `u64` ids so that storage can address them by position. Ids are handed out
//! from per-thread blocks carved off a shared atomic counter: allocation is a thread-local increment, never a
//! lock, never I/O, so a writer can never stall waiting for ids (the JanusGraph write-up's p99 lesson). A block is
//! one storage leaf wide, so the nodes one thread creates share a leaf and a commit copies few leaves.

use std::cell::Cell;
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};

/// Internal id of a node.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct NodeId(pub u64);

/// Internal id of a relationship.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RelId(pub u64);

/// Interned label.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct LabelId(pub u32);

/// Interned relationship type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TypeId(pub u32);

/// Interned property key.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PropKeyId(pub u32);

impl fmt::Display for NodeId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "node {}", self.0)
    }
}
impl fmt::Display for RelId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "relationship {}", self.0)
    }
}

/// Which relationships of a node: leaving it, entering it, or both.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Direction {
    Out,
    In,
    Both,
}

/// How many ids a thread takes from the shared counter at a time.
pub const ID_BLOCK: u64 = 64;

static NEXT_ALLOCATOR_ID: AtomicU64 = AtomicU64::new(1);

/// How many allocators (databases) a thread keeps a block of at once.
const THREAD_BLOCKS: usize = 8;

thread_local! {
    /// (allocator id, next, end) of the block this thread holds in each allocator it drew from lately; allocator
    /// id 0 marks a free entry. Plain cells with a constant initialiser: reaching them is a load from the thread's
    /// own storage, with no lazy setup or destructor registration to check on every id.
    static BLOCKS: [Cell<(u64, u64, u64)>; THREAD_BLOCKS] = const { [const { Cell::new((0, 0, 0)) }; THREAD_BLOCKS] };
    /// The entry to give up next when all are taken.
    static EVICT: Cell<usize> = const { Cell::new(0) };
}

/// A lock-free id allocator with per-thread blocks.
#[derive(Debug)]
pub struct IdAllocator {
    /// What this allocator's thread blocks are filed under; a raised floor files them under a new one, which
    /// retires every block a thread holds (its ids may lie below the floor).
    id: AtomicU64,
    next_block: AtomicU64,
}

impl IdAllocator {
    /// An allocator whose first block starts at or above `start` (rounded up to a block boundary).
    pub fn new(start: u64) -> Self {
        IdAllocator {
            id: AtomicU64::new(NEXT_ALLOCATOR_ID.fetch_add(1, Ordering::Relaxed)),
            next_block: AtomicU64::new(start.div_ceil(ID_BLOCK) * ID_BLOCK),
        }
    }

    /// Makes sure no id below `floor` is ever handed out again (used by recovery and bulk loads). The blocks
    /// threads hold are retired too: a bulk load into a store whose writers had drawn ids would otherwise hand
    /// out ids of the loaded graph's nodes. Call with no allocation running (no write transaction is open).
    pub fn raise_floor(&self, floor: u64) {
        let floor = floor.div_ceil(ID_BLOCK) * ID_BLOCK;
        self.next_block.fetch_max(floor, Ordering::AcqRel);
        // Whether a thread's block reaches below the floor is not known here (only where blocks start is): all go.
        self.id.store(NEXT_ALLOCATOR_ID.fetch_add(1, Ordering::Relaxed), Ordering::Release);
    }

    /// The smallest id that may still be handed out by a fresh block.
    pub fn high_water(&self) -> u64 {
        self.next_block.load(Ordering::Acquire)
    }

    pub fn allocate(&self) -> u64 {
        let me = self.id.load(Ordering::Acquire);
        BLOCKS.with(|blocks| {
            let entry = match blocks.iter().find(|e| e.get().0 == me) {
                Some(entry) => {
                    let (id, next, end) = entry.get();
                    if next < end {
                        entry.set((id, next + 1, end));
                        return next;
                    }
                    entry
                }
                // A new allocator takes a free entry, or the next one in turn (the ids left in that block are
                // never used).
                None => blocks.iter().find(|e| e.get().0 == 0).unwrap_or_else(|| {
                    let k = EVICT.with(|evict| {
                        let k = evict.get();
                        evict.set((k + 1) % THREAD_BLOCKS);
                        k
                    });
                    &blocks[k]
                }),
            };
            let start = self.next_block.fetch_add(ID_BLOCK, Ordering::AcqRel);
            entry.set((me, start + 1, start + ID_BLOCK));
            start
        })
    }

    /// Reserves `count` consecutive ids (bulk paths), bypassing the thread blocks.
    pub fn allocate_range(&self, count: u64) -> std::ops::Range<u64> {
        let rounded = count.div_ceil(ID_BLOCK) * ID_BLOCK;
        let start = self.next_block.fetch_add(rounded, Ordering::AcqRel);
        start..start + count
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;
    use std::sync::Arc;

    #[test]
    fn ids_are_unique_across_threads() {
        let alloc = Arc::new(IdAllocator::new(0));
        let handles: Vec<_> = (0..4)
            .map(|_| {
                let a = alloc.clone();
                std::thread::spawn(move || (0..1000).map(|_| a.allocate()).collect::<Vec<_>>())
            })
            .collect();
        let mut seen = HashSet::new();
        for h in handles {
            for id in h.join().unwrap() {
                assert!(seen.insert(id), "duplicate id {id}");
            }
        }
    }

    #[test]
    fn a_thread_drawing_from_many_allocators_keeps_each_unique() {
        let allocators: Vec<IdAllocator> = (0..3 * THREAD_BLOCKS).map(|_| IdAllocator::new(0)).collect();
        let mut seen: Vec<HashSet<u64>> = vec![HashSet::new(); allocators.len()];
        for round in 0..200 {
            for (k, a) in allocators.iter().enumerate().filter(|(k, _)| round % (k % 5 + 1) == 0) {
                assert!(seen[k].insert(a.allocate()), "allocator {k} repeated an id");
            }
        }
    }

    #[test]
    fn floor_is_respected() {
        let alloc = IdAllocator::new(10);
        assert!(alloc.allocate() >= 10);
        alloc.raise_floor(1000);
        // The rest of the block this thread drew is below the floor: not handed out.
        assert!(alloc.allocate() >= 1000);
        let r = alloc.allocate_range(5);
        assert!(r.start >= 1000);
        // A floor inside the block a thread holds retires it too.
        let fresh = IdAllocator::new(0);
        assert_eq!(fresh.allocate(), 0);
        fresh.raise_floor(50);
        assert!(fresh.allocate() >= 50);
    }
}
