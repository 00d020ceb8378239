//! A fast, non-cryptographic hasher for in-memory tables keyed by ids, and by names and byte keys (the id
//! spaces of imported files, grouping keys) — the Firefox/rustc "Fx" mixing step, with byte strings folded so
//! every byte reaches the bucket. Keys come from the user's own data, not from a remote party, so flooding
//! resistance buys little and SipHash would cost several times more per lookup on the commit path.

use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hasher};

const SEED: u64 = 0x51_7c_c1_b7_27_22_0a_95;

#[derive(Default, Clone, Copy)]
pub struct FxHasher(u64);

impl FxHasher {
    #[inline]
    fn add(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(SEED);
    }
}

impl Hasher for FxHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for chunk in &mut chunks {
            self.add(u64::from_le_bytes(chunk.try_into().expect("8 bytes")));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut word = [0u8; 8];
            word[..rest.len()].copy_from_slice(rest);
            self.add(u64::from_le_bytes(word));
        }
        // The multiply mixes only upwards, so the low bits (where hashbrown takes the bucket from) depended on
        // the first bytes alone: ids with a common prefix (`u1`, `u2`, ... `u123456`) fell into a few dozen
        // buckets' worth of probe sequences, and importing relationships keyed so took 17 times as long.
        // Folding the high half down gives the low bits every byte (integers, written as words, keep their
        // exact spread).
        self.0 ^= self.0 >> 32;
    }
    #[inline]
    fn write_u8(&mut self, i: u8) {
        self.add(i as u64);
    }
    #[inline]
    fn write_u32(&mut self, i: u32) {
        self.add(i as u64);
    }
    #[inline]
    fn write_u64(&mut self, i: u64) {
        self.add(i);
    }
    #[inline]
    fn write_usize(&mut self, i: usize) {
        self.add(i as u64);
    }
    #[inline]
    fn write_isize(&mut self, i: isize) {
        self.add(i as u64);
    }
    #[inline]
    fn finish(&self) -> u64 {
        self.0
    }
}

pub type FxBuildHasher = BuildHasherDefault<FxHasher>;
pub type FxHashMap<K, V> = HashMap<K, V, FxBuildHasher>;
pub type FxHashSet<K> = HashSet<K, FxBuildHasher>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_with_a_common_prefix_fill_buckets() {
        let mut low = std::collections::HashSet::new();
        for i in 0..16_384u64 {
            let mut h = FxHasher::default();
            std::hash::Hash::hash(format!("u{i}").as_str(), &mut h);
            low.insert(h.finish() & 0x3fff);
        }
        // About 1 - 1/e of 16,384 buckets for a random hash; before the fold, 64.
        assert!(low.len() > 9_000, "{} buckets", low.len());
    }

    #[test]
    fn sequential_ids_fill_buckets_and_tags() {
        // hashbrown picks the bucket from the low bits and a 7-bit tag from the top bits.
        let mut low = std::collections::HashSet::new();
        let mut top = std::collections::HashSet::new();
        for i in 0..16_384u64 {
            let mut h = FxHasher::default();
            h.write_u64(i);
            low.insert(h.finish() & 0x3fff);
            top.insert(h.finish() >> 57);
        }
        assert_eq!(low.len(), 16_384, "low bits collide");
        assert!(top.len() > 120, "top bits cover only {} tags", top.len());
    }
}
