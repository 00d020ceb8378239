//! Deterministic random numbers for generators, demos and benchmarks: the same seed always yields the same graph.

/// SplitMix64: tiny, fast and seedable.
#[derive(Clone, Debug)]
pub struct SplitMix(pub u64);

impl SplitMix {
    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (multiply-shift: no division; bias below 2^-32 for n below 2^32).
    #[inline]
    pub fn below(&mut self, n: u64) -> u64 {
        ((u128::from(self.next_u64()) * u128::from(n)) >> 64) as u64
    }

    /// Uniform in [0, 1).
    #[inline]
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
}

#[cfg(test)]
mod tests {
    use super::SplitMix;

    #[test]
    fn is_deterministic_and_in_range() {
        let (mut a, mut b) = (SplitMix(7), SplitMix(7));
        for _ in 0..1000 {
            assert_eq!(a.next_u64(), b.next_u64());
        }
        let mut seen = [false; 10];
        for _ in 0..1000 {
            seen[a.below(10) as usize] = true;
            assert!((0.0..1.0).contains(&a.unit()));
        }
        assert!(seen.iter().all(|&s| s), "every value below 10 should appear in 1000 draws");
    }
}
