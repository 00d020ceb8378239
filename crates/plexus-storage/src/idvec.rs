//! Immutable id arrays stored 32 bits wide when every id fits, 64 bits otherwise.
//!
//! Adjacency is most of a graph's memory. Most graphs have fewer than four billion nodes and relationships, so
//! each CSR block picks the narrow form when it can: half the bytes, and twice the neighbours per cache line.
//! A block of a bulk-loaded graph holds its ids as a run of one array shared with the graph's flat adjacency
//! ([`crate::flat`]), so that the flat copy costs no second copy of the ids.

use std::ops::ControlFlow;
use std::sync::Arc;

/// An immutable array of ids.
#[derive(Debug, Clone)]
pub enum IdVec {
    Narrow(Box<[u32]>),
    Wide(Box<[u64]>),
    Shared(SharedIds),
}

/// An array of narrow ids that many blocks hold runs of.
pub type SharedArray = Arc<Box<[u32]>>;

/// Ids `start..start + len` of an array shared by many blocks; narrow.
#[derive(Debug, Clone)]
pub struct SharedIds {
    ids: SharedArray,
    start: u32,
    len: u32,
}

impl SharedIds {
    pub fn new(ids: SharedArray, range: std::ops::Range<usize>) -> SharedIds {
        assert!(range.end <= ids.len(), "a run inside the shared array");
        assert!(range.start <= u32::MAX as usize && range.len() <= u32::MAX as usize, "32-bit start and length");
        SharedIds { ids, start: range.start as u32, len: range.len() as u32 }
    }

    /// The whole shared array.
    pub fn array(&self) -> &SharedArray {
        &self.ids
    }

    /// Where the run starts in the array.
    pub fn start(&self) -> usize {
        self.start as usize
    }

    #[inline]
    fn ids(&self) -> &[u32] {
        let start = self.start as usize;
        &self.ids[start..start + self.len as usize]
    }
}

impl Default for IdVec {
    fn default() -> Self {
        IdVec::Narrow(Box::new([]))
    }
}

impl IdVec {
    pub fn from_vec(ids: Vec<u64>) -> IdVec {
        if ids.iter().all(|&id| id <= u32::MAX as u64) {
            IdVec::Narrow(ids.into_iter().map(|id| id as u32).collect())
        } else {
            IdVec::Wide(ids.into_boxed_slice())
        }
    }

    #[inline]
    pub fn len(&self) -> usize {
        match self {
            IdVec::Narrow(v) => v.len(),
            IdVec::Wide(v) => v.len(),
            IdVec::Shared(v) => v.len as usize,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    #[inline]
    pub fn get(&self, i: usize) -> u64 {
        match self {
            IdVec::Narrow(v) => v[i] as u64,
            IdVec::Wide(v) => v[i],
            IdVec::Shared(v) => v.ids()[i] as u64,
        }
    }

    /// Requests the line holding id `i` without waiting for it (nothing when `i` is past the end).
    #[inline]
    pub fn prefetch(&self, i: usize) {
        match self {
            IdVec::Narrow(v) => v.get(i).map(|p| crate::prefetch::prefetch(p)),
            IdVec::Wide(v) => v.get(i).map(|p| crate::prefetch::prefetch(p)),
            IdVec::Shared(v) => v.ids().get(i).map(|p| crate::prefetch::prefetch(p)),
        };
    }

    #[inline]
    pub fn slice(&self, range: std::ops::Range<usize>) -> IdSlice<'_> {
        match self {
            IdVec::Narrow(v) => IdSlice::Narrow(&v[range]),
            IdVec::Wide(v) => IdSlice::Wide(&v[range]),
            IdVec::Shared(v) => IdSlice::Narrow(&v.ids()[range]),
        }
    }

    /// Bytes of heap this array holds (a shared run counts its own ids).
    pub fn heap_bytes(&self) -> usize {
        match self {
            IdVec::Narrow(v) => v.len() * 4,
            IdVec::Wide(v) => v.len() * 8,
            IdVec::Shared(v) => v.len as usize * 4,
        }
    }

    /// The ids as a narrow array of their own, when they are narrow (a shared run is copied out).
    pub fn take_narrow(&mut self) -> Option<Box<[u32]>> {
        match std::mem::take(self) {
            IdVec::Narrow(v) => Some(v),
            IdVec::Shared(v) => Some(v.ids().into()),
            wide @ IdVec::Wide(_) => {
                *self = wide;
                None
            }
        }
    }

    /// Whether this is a run of a shared array.
    pub fn is_shared(&self) -> bool {
        matches!(self, IdVec::Shared(_))
    }
}

/// Calls `f` with parallel runs of neighbour and relationship ids, leaving out the entries whose neighbour is
/// `skip` (a self-loop seen from its other side): the runs as they are when none is, else one entry at a time.
#[inline]
pub fn without_neighbour<B>(
    nbrs: IdSlice,
    rels: IdSlice,
    skip: u64,
    mut f: impl FnMut(IdSlice, IdSlice) -> ControlFlow<B>,
) -> ControlFlow<B> {
    if !nbrs.contains(skip) {
        return f(nbrs, rels);
    }
    for i in 0..nbrs.len() {
        let (n, r) = (nbrs.get(i), rels.get(i));
        if n != skip {
            f(IdSlice::one(&n), IdSlice::one(&r))?;
        }
    }
    ControlFlow::Continue(())
}

/// A borrowed run of ids, narrow or wide.
#[derive(Debug, Clone, Copy)]
pub enum IdSlice<'a> {
    Narrow(&'a [u32]),
    Wide(&'a [u64]),
}

impl<'a> IdSlice<'a> {
    pub fn one(id: &'a u64) -> IdSlice<'a> {
        IdSlice::Wide(std::slice::from_ref(id))
    }

    #[inline]
    pub fn len(&self) -> usize {
        match self {
            IdSlice::Narrow(v) => v.len(),
            IdSlice::Wide(v) => v.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    #[inline]
    pub fn get(&self, i: usize) -> u64 {
        match self {
            IdSlice::Narrow(v) => v[i] as u64,
            IdSlice::Wide(v) => v[i],
        }
    }

    /// Calls `f` for every id; the width is matched once, so the loop is over plain memory.
    #[inline]
    pub fn for_each(&self, mut f: impl FnMut(u64)) {
        match self {
            IdSlice::Narrow(v) => v.iter().for_each(|&id| f(id as u64)),
            IdSlice::Wide(v) => v.iter().for_each(|&id| f(id)),
        }
    }

    /// Index of the first id not less than `id` (the slice must be sorted).
    #[inline]
    pub fn lower_bound(&self, id: u64) -> usize {
        match self {
            IdSlice::Narrow(v) => {
                if id > u32::MAX as u64 {
                    v.len()
                } else {
                    v.partition_point(|&x| (x as u64) < id)
                }
            }
            IdSlice::Wide(v) => v.partition_point(|&x| x < id),
        }
    }

    pub fn contains(&self, id: u64) -> bool {
        match self {
            IdSlice::Narrow(v) => id <= u32::MAX as u64 && v.contains(&(id as u32)),
            IdSlice::Wide(v) => v.contains(&id),
        }
    }

    pub fn iter(self) -> impl Iterator<Item = u64> + 'a {
        let (narrow, wide): (&[u32], &[u64]) = match self {
            IdSlice::Narrow(v) => (v, &[]),
            IdSlice::Wide(v) => (&[], v),
        };
        narrow.iter().map(|&x| x as u64).chain(wide.iter().copied())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn narrow_and_wide_agree(mut ids in proptest::collection::vec(prop_oneof![0u64..1000, any::<u64>()], 0..50), probe in any::<u64>()) {
            ids.sort();
            let v = IdVec::from_vec(ids.clone());
            prop_assert_eq!(matches!(v, IdVec::Narrow(_)), ids.iter().all(|&x| x <= u32::MAX as u64));
            let s = v.slice(0..ids.len());
            prop_assert_eq!(s.iter().collect::<Vec<_>>(), ids.clone());
            let mut seen = Vec::new();
            s.for_each(|x| seen.push(x));
            prop_assert_eq!(&seen, &ids);
            prop_assert_eq!(s.lower_bound(probe), ids.partition_point(|&x| x < probe));
            prop_assert_eq!(s.contains(probe), ids.contains(&probe));
        }
    }
}
