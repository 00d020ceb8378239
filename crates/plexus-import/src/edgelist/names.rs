//! Numbering of string vertex ids by first appearance: the one step of an edge-list parse that cannot run in
//! parallel as it is, since a name's number depends on every line before it. The table is also the id map of
//! node files keyed by strings (`nodes_rels::ids`), which relationship ends look up.
//!
//! Why a table of our own: a general hash map keyed by slices of the input hashed each name again on this
//! serial path and compared it with its first occurrence somewhere in the whole file, a cache miss into hundreds
//! of megabytes for every edge end (with 4 M edges over 400,000 names, over a third of the parse in `memcmp`
//! and two fifths in probing). Here the parse threads hash the names, the serial loop requests each name's slot
//! some ends ahead and the record of the name in it a few ends later, a slot holds part of the hash beside the
//! record's place so that nearly every mismatch is settled without reading a name, and known names are kept in
//! one compact arena instead of the input.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::sync::atomic::{AtomicU32, Ordering};

/// A name's hash, computed where the name is parsed (on the parse threads). Eight bytes at a time through a
/// folded multiply, so every byte reaches both halves of the hash (slots are chosen by the low bits, checked by
/// the high ones).
#[inline]
pub(crate) fn hash_name(bytes: &[u8]) -> u64 {
    const K: u64 = 0x9e37_79b9_7f4a_7c15;
    const L: u64 = 0xd6e8_feb8_6659_fd93;
    let mut h = (bytes.len() as u64).wrapping_mul(K) ^ L;
    let mut words = bytes.chunks_exact(8);
    for word in &mut words {
        h = fold(h ^ u64::from_le_bytes(word.try_into().expect("8 bytes")), K);
    }
    let rest = words.remainder();
    if !rest.is_empty() {
        let mut last = [0u8; 8];
        last[..rest.len()].copy_from_slice(rest);
        h = fold(h ^ u64::from_le_bytes(last), L);
    }
    fold(h, K)
}

#[inline]
fn fold(a: u64, b: u64) -> u64 {
    let p = u128::from(a) * u128::from(b);
    (p as u64) ^ ((p >> 64) as u64)
}

/// Names numbered in order of first appearance.
pub(crate) struct NameNumbers {
    /// Open addressing, linear probing: the high [`TAG_BITS`] bits of a name's hash above its record's offset in
    /// `arena` plus one (0: empty). A slot leads straight to the record, so the record's line can be requested
    /// as soon as the slot's has arrived ([`NameNumbers::prefetch_record`]).
    slots: Vec<u64>,
    /// Every name's hash and record offset, by number: what moving to a larger table reads.
    names: Vec<(u64, u64)>,
    /// Records, one per name: its number (4 bytes, little-endian), its length (4 bytes), its bytes.
    arena: Vec<u8>,
}

const TAG_BITS: u32 = 24;
const OFFSET_BITS: u32 = 64 - TAG_BITS;
const OFFSET_MASK: u64 = (1 << OFFSET_BITS) - 1;
const RECORD_HEADER: usize = 8;

impl NameNumbers {
    /// Room for about `expected` names before the table grows.
    pub(crate) fn with_capacity(expected: usize) -> NameNumbers {
        let slots = (expected.max(8) * 2).next_power_of_two();
        NameNumbers { slots: vec![0; slots], names: Vec::new(), arena: Vec::new() }
    }

    #[inline]
    fn home(&self, hash: u64) -> usize {
        hash as usize & (self.slots.len() - 1)
    }

    /// Requests the line of the slot a name of `hash` is looked up in first, without waiting for it.
    #[inline]
    pub(crate) fn prefetch_slot(&self, hash: u64) {
        plexus_storage::prefetch::prefetch(&self.slots[self.home(hash)]);
    }

    /// Once [`NameNumbers::prefetch_slot`]'s line has arrived: requests the record of the name in that slot,
    /// which is the name looked up when it has been seen before and nothing collided.
    #[inline]
    pub(crate) fn prefetch_record(&self, hash: u64) {
        let slot = self.slots[self.home(hash)];
        if slot != 0 {
            if let Some(record) = self.arena.get(((slot & OFFSET_MASK) - 1) as usize) {
                plexus_storage::prefetch::prefetch(record);
            }
        }
    }

    /// The number of `name` (whose hash is `hash`): its own if seen before, else the next one.
    #[inline]
    pub(crate) fn number(&mut self, name: &[u8], hash: u64) -> u32 {
        let i = match self.probe(name, hash) {
            Ok(number) => return number,
            Err(empty) => empty,
        };
        let tag = hash >> OFFSET_BITS;
        let n = self.names.len();
        // Edges are at most `u32::MAX` (checked before numbering), names at most twice that, and names' bytes
        // under 2^40: past either, the names alone would take many times this machine's memory.
        assert!(n < u32::MAX as usize, "more than 4 billion distinct vertex names");
        let at = self.arena.len() as u64;
        assert!(at + 1 < OFFSET_MASK && name.len() <= u32::MAX as usize, "vertex names too long in all");
        self.arena.extend_from_slice(&(n as u32).to_le_bytes());
        self.arena.extend_from_slice(&(name.len() as u32).to_le_bytes());
        self.arena.extend_from_slice(name);
        self.slots[i] = tag << OFFSET_BITS | (at + 1);
        self.names.push((hash, at));
        // At most half full: probes stay short.
        if self.names.len() * 2 > self.slots.len() {
            self.grow();
        }
        n as u32
    }

    fn grow(&mut self) {
        let mut slots = vec![0u64; self.slots.len() * 2];
        let mask = slots.len() - 1;
        for &(hash, at) in &self.names {
            let mut i = hash as usize & mask;
            while slots[i] != 0 {
                i = (i + 1) & mask;
            }
            slots[i] = (hash >> OFFSET_BITS) << OFFSET_BITS | (at + 1);
        }
        self.slots = slots;
    }

    /// The number of `name` (whose hash is `hash`), if it has one; adds nothing.
    #[inline]
    pub(crate) fn find(&self, name: &[u8], hash: u64) -> Option<u32> {
        self.probe(name, hash).ok()
    }

    /// `Ok` with the number of `name`, or `Err` with the empty slot where it would go.
    #[inline]
    fn probe(&self, name: &[u8], hash: u64) -> Result<u32, usize> {
        let tag = hash >> OFFSET_BITS;
        let mask = self.slots.len() - 1;
        let mut i = self.home(hash);
        loop {
            let slot = self.slots[i];
            if slot == 0 {
                return Err(i);
            }
            if slot >> OFFSET_BITS == tag {
                if let Some(number) = self.record_of(slot, name) {
                    return Ok(number);
                }
            }
            i = (i + 1) & mask;
        }
    }

    /// The number in the record `slot` leads to, if that record is `name`.
    #[inline]
    fn record_of(&self, slot: u64, name: &[u8]) -> Option<u32> {
        let at = ((slot & OFFSET_MASK) - 1) as usize;
        let header = &self.arena[at..at + RECORD_HEADER];
        let len = u32::from_le_bytes(header[4..].try_into().expect("4 bytes")) as usize;
        (len == name.len() && &self.arena[at + RECORD_HEADER..at + RECORD_HEADER + len] == name)
            .then(|| u32::from_le_bytes(header[..4].try_into().expect("4 bytes")))
    }

    /// Every name, in order of number.
    pub(crate) fn names(&self) -> impl Iterator<Item = &[u8]> + '_ {
        self.names.iter().map(|&(_, at)| {
            let at = at as usize;
            let len = u32::from_le_bytes(self.arena[at + 4..at + 8].try_into().expect("4 bytes")) as usize;
            &self.arena[at + RECORD_HEADER..at + RECORD_HEADER + len]
        })
    }

    pub(crate) fn len(&self) -> usize {
        self.names.len()
    }

    /// The names in order of number (bytes that are not UTF-8 replaced, as names are shown).
    pub(crate) fn into_names(self) -> Vec<Box<str>> {
        self.names().map(|name| String::from_utf8_lossy(name).into()).collect()
    }
}

/// One parse chunk's edges with string ids and their names' hashes.
pub(super) type NamedEdges<'c, 'a> = (&'c [(&'a [u8], &'a [u8])], &'c [[u64; 2]]);

/// How many edges ahead a name's slot, then the record the slot leads to, are requested: each line arrives
/// while the edges between are numbered.
const SLOT_AHEAD: usize = 16;
const RECORD_AHEAD: usize = 8;

/// Numbers the names of `chunks`' edges by first appearance, each edge's source before its target: the
/// sources' numbers, the targets' numbers, and the names in order of number.
///
/// On several threads when there are enough edges: names are split into shards by their hash, each thread
/// numbers its shard's names in order of appearance (scanning every edge, looking up only its own), and the
/// shards' first appearances, each list already in order, are merged into the global numbering. The lookups,
/// a cache miss each on large inputs, are what the threads share out.
pub(super) fn number_names(
    chunks: &[NamedEdges<'_, '_>],
    edges: usize,
    threads: usize,
) -> (Vec<u32>, Vec<u32>, Vec<Box<str>>) {
    let ends = 2 * edges as u64;
    if threads < 2 || ends < SHARDED_MIN {
        return number_names_serially(chunks, edges);
    }
    number_names_in_shards(chunks, edges, threads.min(MAX_SHARDS))
}

/// [`number_names`] with the names split into `shards` by hash, each numbered on a thread of its own.
fn number_names_in_shards(
    chunks: &[NamedEdges<'_, '_>],
    edges: usize,
    shards: usize,
) -> (Vec<u32>, Vec<u32>, Vec<Box<str>>) {
    let ends = 2 * edges as u64;
    // Ends are counted in 32 bits.
    if ends >= u64::from(u32::MAX) {
        return number_names_serially(chunks, edges);
    }
    // Per edge end (2 × edge + 0 for the source, + 1 for the target): its shard's local number of the name (below
    // the number of ends, so in 32 bits; the shard is found again from the name's hash).
    let local: Vec<AtomicU32> = (0..ends).map(|_| AtomicU32::new(0)).collect();
    let numbered: Vec<(NameNumbers, Vec<u32>)> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..shards)
            .map(|shard| {
                let local = &local;
                scope.spawn(move || number_shard(chunks, shard, shards, local))
            })
            .collect();
        workers.into_iter().map(|w| w.join().expect("a numbering thread panicked")).collect()
    });
    // Each shard's first appearances ascend: merged, a name's place among them all is its number.
    let mut global: Vec<Vec<u32>> = numbered.iter().map(|(_, firsts)| vec![0; firsts.len()]).collect();
    let total: usize = numbered.iter().map(|(_, firsts)| firsts.len()).sum();
    let mut heads = vec![0usize; shards];
    let mut next: BinaryHeap<Reverse<(u32, usize)>> =
        (0..shards).filter_map(|s| numbered[s].1.first().map(|&end| Reverse((end, s)))).collect();
    for number in 0..total {
        let Reverse((_, shard)) = next.pop().expect("a name is left");
        global[shard][heads[shard]] = number as u32;
        heads[shard] += 1;
        if let Some(&end) = numbered[shard].1.get(heads[shard]) {
            next.push(Reverse((end, shard)));
        }
    }
    let mut names: Vec<Box<str>> = vec![Box::from(""); total];
    for ((numbers, _), numbers_of) in numbered.into_iter().zip(&global) {
        for (name, &number) in numbers.into_names().into_iter().zip(numbers_of) {
            names[number as usize] = name;
        }
    }
    let (mut src, mut dst) = (vec![0u32; edges], vec![0u32; edges]);
    // Where each parse chunk's edges start, to find an edge's hashes.
    let mut starts = Vec::with_capacity(chunks.len() + 1);
    starts.push(0usize);
    for (strs, _) in chunks {
        starts.push(starts.last().copied().unwrap_or(0) + strs.len());
    }
    let per = edges.div_ceil(shards).max(1);
    std::thread::scope(|scope| {
        for (part, (src, dst)) in src.chunks_mut(per).zip(dst.chunks_mut(per)).enumerate() {
            let (local, global, starts) = (&local, &global, &starts);
            scope.spawn(move || {
                let first = part * per;
                // The chunk holding the part's first edge (the last chunk starting at or before it).
                let mut chunk = starts.partition_point(|&s| s <= first) - 1;
                for (i, (s, d)) in src.iter_mut().zip(dst.iter_mut()).enumerate() {
                    let edge = first + i;
                    while edge >= starts[chunk + 1] {
                        chunk += 1;
                    }
                    let hashes = chunks[chunk].1[edge - starts[chunk]];
                    let number = |side: usize| {
                        let k = local[2 * edge + side].load(Ordering::Relaxed) as usize;
                        global[shard_of(hashes[side], shards)][k]
                    };
                    *s = number(0);
                    *d = number(1);
                }
            });
        }
    });
    (src, dst, names)
}

/// Below this many edge ends the threads cost more than they save.
const SHARDED_MIN: u64 = 1 << 20;
/// More shards than this would each hold too few names to be worth a thread.
const MAX_SHARDS: usize = 64;

fn shard_of(hash: u64, shards: usize) -> usize {
    // Bits the slots use neither for their place (the low ones) nor for their tag (the high ones).
    (((hash >> 32) & 0xff) as usize * shards) >> 8
}

/// Numbers, in order of appearance, the names of `chunks`' edge ends whose hash `mine` accepts, each edge's
/// source before its target, requesting each name's slot and then its record some edges ahead; tells
/// `numbered(end, number, first)` each end's number (`end` is 2 × edge + 0 for the source, + 1 for the target;
/// `first` when the name appears there first).
fn number_ends(
    chunks: &[NamedEdges<'_, '_>],
    numbers: &mut NameNumbers,
    mine: impl Fn(u64) -> bool,
    mut numbered: impl FnMut(usize, u32, bool),
) {
    let mut end = 0usize;
    for &(strs, hashes) in chunks {
        for (i, (&(s, d), &pair)) in strs.iter().zip(hashes).enumerate() {
            if let Some(ahead) = hashes.get(i + SLOT_AHEAD) {
                ahead.iter().filter(|&&h| mine(h)).for_each(|&h| numbers.prefetch_slot(h));
            }
            if let Some(ahead) = hashes.get(i + RECORD_AHEAD) {
                ahead.iter().filter(|&&h| mine(h)).for_each(|&h| numbers.prefetch_record(h));
            }
            for (name, hash) in [(s, pair[0]), (d, pair[1])] {
                if mine(hash) {
                    let seen = numbers.len();
                    let k = numbers.number(name, hash);
                    numbered(end, k, k as usize == seen);
                }
                end += 1;
            }
        }
    }
}

/// Numbers, in order of appearance, the names of `chunks` that fall in `shard`, storing each end's local number
/// in `local`; returns the numbers and, by local number, the end of each name's first appearance.
fn number_shard(
    chunks: &[NamedEdges<'_, '_>],
    shard: usize,
    shards: usize,
    local: &[AtomicU32],
) -> (NameNumbers, Vec<u32>) {
    let mut numbers = NameNumbers::with_capacity(1024);
    let mut firsts = Vec::new();
    number_ends(
        chunks,
        &mut numbers,
        |h| shard_of(h, shards) == shard,
        |end, k, first| {
            if first {
                firsts.push(end as u32);
            }
            local[end].store(k, Ordering::Relaxed);
        },
    );
    (numbers, firsts)
}

/// [`number_names`] on one thread.
fn number_names_serially(chunks: &[NamedEdges<'_, '_>], edges: usize) -> (Vec<u32>, Vec<u32>, Vec<Box<str>>) {
    let mut numbers = NameNumbers::with_capacity(1024);
    let (mut src, mut dst) = (Vec::with_capacity(edges), Vec::with_capacity(edges));
    number_ends(chunks, &mut numbers, |_| true, |end, k, _| if end % 2 == 0 { src.push(k) } else { dst.push(k) });
    (src, dst, numbers.into_names())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::HashMap;

    proptest! {
        /// Numbers by first appearance, as a map from each name to the count of distinct names before it.
        #[test]
        fn numbers_names_by_first_appearance(
            names in proptest::collection::vec(proptest::collection::vec(0u8..4, 0..12), 0..400),
        ) {
            let mut numbers = NameNumbers::with_capacity(1);
            let mut model: HashMap<Vec<u8>, u32> = HashMap::new();
            for name in &names {
                let next = model.len() as u32;
                let want = *model.entry(name.clone()).or_insert(next);
                prop_assert_eq!(numbers.number(name, hash_name(name)), want);
            }
            prop_assert_eq!(numbers.len(), model.len());
            let mut by_number: Vec<(u32, Vec<u8>)> = model.into_iter().map(|(k, v)| (v, k)).collect();
            by_number.sort();
            let want: Vec<Box<str>> =
                by_number.into_iter().map(|(_, k)| String::from_utf8_lossy(&k).into()).collect();
            prop_assert_eq!(numbers.into_names(), want);
        }
    }

    proptest! {
        /// Split into shards on several threads, names get the numbers one thread gives them.
        #[test]
        fn shards_number_names_as_one_thread_does(
            chunks in proptest::collection::vec(
                proptest::collection::vec((0u8..40, 0u8..40), 0..60), 1..5),
            shards in 2usize..5,
        ) {
            let names: Vec<Vec<(Vec<u8>, Vec<u8>)>> = chunks
                .iter()
                .map(|c| c.iter().map(|&(a, b)| (format!("v{a}").into_bytes(), format!("v{b}").into_bytes())).collect())
                .collect();
            let strs: Vec<Vec<(&[u8], &[u8])>> =
                names.iter().map(|c| c.iter().map(|(a, b)| (&a[..], &b[..])).collect()).collect();
            let hashes: Vec<Vec<[u64; 2]>> =
                strs.iter().map(|c| c.iter().map(|(a, b)| [hash_name(a), hash_name(b)]).collect()).collect();
            let input: Vec<NamedEdges<'_, '_>> = strs.iter().zip(&hashes).map(|(s, h)| (&s[..], &h[..])).collect();
            let edges = strs.iter().map(Vec::len).sum();
            let one = number_names_serially(&input, edges);
            let many = number_names_in_shards(&input, edges, shards);
            prop_assert_eq!(one, many);
        }
    }

    #[test]
    fn names_whose_hashes_share_a_slot_or_a_tag_stay_apart() {
        // A hash forced equal for every name: every lookup probes past the others and compares bytes.
        let mut numbers = NameNumbers::with_capacity(4);
        let names: Vec<String> = (0..100).map(|i| format!("n{i}")).collect();
        for (i, name) in names.iter().enumerate() {
            assert_eq!(numbers.number(name.as_bytes(), 7), i as u32);
        }
        for (i, name) in names.iter().enumerate().rev() {
            assert_eq!(numbers.number(name.as_bytes(), 7), i as u32);
        }
        assert_eq!(numbers.number(b"", 7), 100);
        assert_eq!(numbers.number(b"", 7), 100);
    }

    #[test]
    fn the_hash_reaches_every_byte_and_the_length() {
        let base = b"user123456@example.org".to_vec();
        let h = hash_name(&base);
        for i in 0..base.len() {
            let mut other = base.clone();
            other[i] ^= 1;
            assert_ne!(hash_name(&other), h, "byte {i}");
        }
        assert_ne!(hash_name(b"ab"), hash_name(b"ab\0"));
        assert_ne!(hash_name(b""), hash_name(b"\0"));
    }
}
