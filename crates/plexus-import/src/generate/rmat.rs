//! R-MAT / Kronecker edge generation per the Graph500 specification: the initiator, per-level noise, the seeded
//! relabelling of vertex ids, and the chunked edge source the presets reuse.
//!
//! Each edge picks one quadrant of the adjacency matrix per level with probabilities A, B, C, D (recursively,
//! `levels` times) giving a source and target in `0..2^levels`. Graph500 then relabels vertices by a random
//! permutation so the hubs (ids with few one-bits) are spread over the id space; here the permutation is a
//! seeded bijection of `0..2^levels` computed on the fly (invertible multiply / xor-shift / add rounds modulo
//! 2^levels) instead of a stored shuffle: no memory, and no cache miss per endpoint on the hot path.
//!
//! Noise: the Graph500 reference code has a "SPK noise" hook that is off by default; the noisy stochastic
//! Kronecker graph of Seshadhri, Pinar and Kolda (2013) perturbs the initiator once per level, which smooths the
//! oscillating degree distribution of plain Kronecker graphs. [`Rmat::noise`] is that parameter: per level a
//! `mu` uniform in `[-noise, noise]` gives `A - 2 mu A/(A+D)`, `B + mu`, `C + mu`, `D - 2 mu D/(A+D)`, drawn from
//! the seed once for the whole graph. The `kronecker` command-line kind defaults to noise 0.1, `rmat` to none.

use plexus::random::SplitMix;

use super::output::{push_edge, WEIGHT_STEPS};
use super::{chunk_rng, Error, Source, CHUNK_EDGES};

/// Quadrant probabilities: A top-left (low source, low target), B top-right, C bottom-left, D bottom-right.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Initiator {
    pub a: f64,
    pub b: f64,
    pub c: f64,
    pub d: f64,
}

impl Initiator {
    /// The Graph500 initiator.
    pub const GRAPH500: Initiator = Initiator { a: 0.57, b: 0.19, c: 0.19, d: 0.05 };

    fn validate(&self) -> Result<(), Error> {
        let ps = [self.a, self.b, self.c, self.d];
        if ps.iter().any(|p| !p.is_finite() || *p < 0.0 || *p > 1.0) {
            return Err(Error::Invalid(format!("initiator probabilities must lie in [0, 1], got {ps:?}")));
        }
        let sum: f64 = ps.iter().sum();
        if (sum - 1.0).abs() > 1e-6 {
            return Err(Error::Invalid(format!("initiator probabilities must sum to 1, got {sum}")));
        }
        Ok(())
    }
}

impl Default for Initiator {
    fn default() -> Self {
        Initiator::GRAPH500
    }
}

/// An R-MAT graph on `nodes` vertices with `edges` edges.
///
/// For Graph500 graphs `nodes` is `2^levels`. Presets ask for any `nodes`: edges are drawn at
/// `levels = ceil(log2(nodes))`, relabelled, and an edge with an endpoint `>= nodes` is redrawn, which keeps
/// the R-MAT distribution conditioned on both endpoints being in range. Duplicate edges are kept, as in the
/// Graph500 edge list (removing them needs the whole graph in memory or a sort).
#[derive(Clone, Debug)]
pub struct Rmat {
    pub nodes: u64,
    pub edges: u64,
    pub initiator: Initiator,
    /// Per-level initiator noise (see the module documentation); 0 for none.
    pub noise: f64,
    /// Redraw edges whose source and target are the same vertex.
    pub no_self_loops: bool,
}

/// Largest Graph500 scale accepted: ids must fit in 48 bits to keep edge counts in `u64` with any edge factor.
pub const MAX_SCALE: u32 = 40;

impl Rmat {
    /// The Graph500 graph of the given scale (`2^scale` vertices) and edge factor (`edge_factor * 2^scale` edges).
    pub fn graph500(scale: u32, edge_factor: u64) -> Result<Rmat, Error> {
        if scale == 0 || scale > MAX_SCALE {
            return Err(Error::Invalid(format!("R-MAT scale must be between 1 and {MAX_SCALE}, got {scale}")));
        }
        if edge_factor == 0 || edge_factor > 1 << 16 {
            return Err(Error::Invalid(format!("edge factor must be between 1 and 65536, got {edge_factor}")));
        }
        Ok(Rmat {
            nodes: 1 << scale,
            edges: edge_factor << scale,
            initiator: Initiator::GRAPH500,
            noise: 0.0,
            no_self_loops: false,
        })
    }

    pub(crate) fn source(&self, seed: u64, weights: bool) -> Result<RmatSource, Error> {
        self.initiator.validate()?;
        let Initiator { a, b, c, d } = self.initiator;
        if self.nodes < 2 || self.nodes > 1 << MAX_SCALE {
            return Err(Error::Invalid(format!("R-MAT needs between 2 and 2^{MAX_SCALE} nodes, got {}", self.nodes)));
        }
        if self.edges == 0 {
            return Err(Error::Invalid("R-MAT needs at least one edge".into()));
        }
        let max_noise = ((a + d) / 2.0).min(b).min(c);
        if !(0.0..=max_noise).contains(&self.noise) {
            return Err(Error::Invalid(format!(
                "noise must be between 0 and min((A+D)/2, B, C) = {max_noise}, got {}",
                self.noise
            )));
        }
        // Without off-diagonal mass every draw is a self-loop (and with A or D zero, rejection could starve too).
        if self.no_self_loops && b + c <= 0.0 {
            return Err(Error::Invalid("removing self-loops needs B + C > 0".into()));
        }
        if self.nodes & (self.nodes - 1) != 0 && a <= 0.0 {
            return Err(Error::Invalid("a vertex count that is not a power of two needs A > 0".into()));
        }
        let levels = 64 - (self.nodes - 1).leading_zeros();
        let mut noise_rng = SplitMix(seed ^ 0x6E6F_6973_6520_2020);
        let thresholds = (0..levels)
            .map(|_| {
                let mu = if self.noise > 0.0 { (2.0 * noise_rng.unit() - 1.0) * self.noise } else { 0.0 };
                let (a, b, c) = (a - 2.0 * mu * a / (a + d), b + mu, c + mu);
                let t = |p: f64| (p * 65_536.0).round().clamp(0.0, 65_536.0) as u64;
                [t(a), t(a + b), t(a + b + c)]
            })
            .collect();
        Ok(RmatSource {
            nodes: self.nodes,
            edges: self.edges,
            thresholds,
            relabel: Relabel::new(levels, seed),
            no_self_loops: self.no_self_loops,
            seed,
            weights,
        })
    }
}

/// A seeded bijection of `0..2^bits`: three rounds of multiply by an odd constant, xor with a right shift and
/// add, all modulo `2^bits`. Each step is invertible, so the whole map is a permutation.
#[derive(Clone, Debug)]
pub(crate) struct Relabel {
    mask: u64,
    shift: u32,
    mul: [u64; 3],
    add: [u64; 3],
}

impl Relabel {
    pub(crate) fn new(bits: u32, seed: u64) -> Relabel {
        let mut rng = SplitMix(seed ^ 0x7065_726D_7574_6521);
        let mask = if bits >= 64 { u64::MAX } else { (1u64 << bits) - 1 };
        let mut mul = [0; 3];
        let mut add = [0; 3];
        for r in 0..3 {
            mul[r] = rng.next_u64() | 1;
            add[r] = rng.next_u64();
        }
        Relabel { mask, shift: (bits / 2).max(1), mul, add }
    }

    #[inline]
    pub(crate) fn apply(&self, mut x: u64) -> u64 {
        for r in 0..3 {
            x = x.wrapping_mul(self.mul[r]) & self.mask;
            x ^= x >> self.shift;
            x = x.wrapping_add(self.add[r]) & self.mask;
        }
        x
    }
}

pub(crate) struct RmatSource {
    nodes: u64,
    edges: u64,
    /// Per level, the cumulative thresholds of A, A+B, A+B+C scaled to 2^16.
    thresholds: Vec<[u64; 3]>,
    relabel: Relabel,
    no_self_loops: bool,
    seed: u64,
    weights: bool,
}

impl RmatSource {
    /// One edge before relabelling. Each 64-bit random number serves four levels: 16 bits each resolve the
    /// initiator to 2^-16, finer than the Graph500 reference code's 10^-4, and the random numbers were half the
    /// generator's time at 32 bits per level. The quadrant is computed without branches because with A = 0.57 a
    /// branch on it mispredicts every other level: the number of thresholds at or below the draw is the quadrant
    /// (0 = A, 1 = B, 2 = C, 3 = D), whose high bit is the source's bit and low bit the target's. Quadrants are
    /// collected two bits per level, up to 32 levels per word, and the word is split into source and target bits
    /// at the end instead of shifting both ids at every level.
    #[inline]
    fn draw(&self, rng: &mut SplitMix) -> (u64, u64) {
        #[inline(always)]
        fn quadrant(x: u64, t: &[u64; 3]) -> u64 {
            u64::from(x >= t[0]) + u64::from(x >= t[1]) + u64::from(x >= t[2])
        }
        let (mut u, mut v) = (0u64, 0u64);
        for group in self.thresholds.chunks(32) {
            let mut w = 0u64;
            let quads = group.chunks_exact(4);
            let rest = quads.remainder();
            for t in quads {
                let r = rng.next_u64();
                for (i, t) in t.iter().enumerate() {
                    w = (w << 2) | quadrant((r >> (16 * i)) & 0xFFFF, t);
                }
            }
            if !rest.is_empty() {
                let r = rng.next_u64();
                for (i, t) in rest.iter().enumerate() {
                    w = (w << 2) | quadrant((r >> (16 * i)) & 0xFFFF, t);
                }
            }
            let bits = group.len() as u32;
            u = (u << bits) | even_bits(w >> 1);
            v = (v << bits) | even_bits(w);
        }
        (u, v)
    }

    /// One accepted edge after relabelling: in range and, if asked, not a self-loop.
    #[inline]
    pub(crate) fn edge(&self, rng: &mut SplitMix) -> (u64, u64) {
        loop {
            let (u, v) = self.draw(rng);
            let (u, v) = (self.relabel.apply(u), self.relabel.apply(v));
            if u < self.nodes && v < self.nodes && !(self.no_self_loops && u == v) {
                return (u, v);
            }
        }
    }
}

/// Bits 0, 2, 4, ... of `x` packed into the low half (a Morton decode).
#[inline(always)]
fn even_bits(x: u64) -> u64 {
    let mut x = x & 0x5555_5555_5555_5555;
    x = (x | (x >> 1)) & 0x3333_3333_3333_3333;
    x = (x | (x >> 2)) & 0x0F0F_0F0F_0F0F_0F0F;
    x = (x | (x >> 4)) & 0x00FF_00FF_00FF_00FF;
    x = (x | (x >> 8)) & 0x0000_FFFF_0000_FFFF;
    (x | (x >> 16)) & 0x0000_0000_FFFF_FFFF
}

impl Source for RmatSource {
    fn nodes(&self) -> u64 {
        self.nodes
    }

    fn edges(&self) -> u64 {
        self.edges
    }

    fn chunks(&self) -> u64 {
        self.edges.div_ceil(CHUNK_EDGES)
    }

    fn write_chunk(&self, chunk: u64, out: &mut Vec<u8>) -> u64 {
        let mut rng = chunk_rng(self.seed, 1, chunk);
        let first = chunk * CHUNK_EDGES;
        let n = CHUNK_EDGES.min(self.edges - first);
        out.reserve(n as usize * if self.weights { 24 } else { 16 });
        for _ in 0..n {
            let (u, v) = self.edge(&mut rng);
            let w = self.weights.then(|| rng.below(WEIGHT_STEPS));
            push_edge(out, u, v, w);
        }
        n
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relabel_is_a_permutation_for_every_small_width() {
        for bits in 1..=14 {
            let r = Relabel::new(bits, 99);
            let mut seen = vec![false; 1 << bits];
            for x in 0..1u64 << bits {
                let y = r.apply(x);
                assert!(!seen[y as usize], "bits {bits}: {y} hit twice");
                seen[y as usize] = true;
            }
        }
    }

    #[test]
    fn even_bits_unzips() {
        assert_eq!(even_bits(0b1110_0100), 0b1010);
        assert_eq!(even_bits(u64::MAX), u64::from(u32::MAX));
        assert_eq!(even_bits(0xAAAA_AAAA_AAAA_AAAA), 0);
    }

    #[test]
    fn draws_stay_below_two_to_the_levels_beyond_one_word() {
        // 40 levels take two 32-level groups; ids must still use exactly 40 bits.
        let rmat = Rmat::graph500(40, 1).unwrap();
        let src = rmat.source(3, false).unwrap();
        let mut rng = SplitMix(1);
        let mut high = (false, false);
        for _ in 0..10_000 {
            let (u, v) = src.draw(&mut rng);
            assert!(u < 1 << 40 && v < 1 << 40);
            high = (high.0 || u >= 1 << 39, high.1 || v >= 1 << 39);
        }
        assert_eq!(high, (true, true), "the top bit should be set sometimes");
    }

    #[test]
    fn relabel_spreads_the_hubs() {
        // R-MAT's heaviest vertices are the ids with the fewest one-bits; they must not stay near 0.
        let r = Relabel::new(20, 7);
        let hubs: Vec<u64> = (0..20).map(|i| r.apply(1 << i)).chain([r.apply(0)]).collect();
        let high = hubs.iter().filter(|&&h| h >= 1 << 19).count();
        assert!((5..=16).contains(&high), "hubs {hubs:?}");
    }

    #[test]
    fn quadrants_follow_the_initiator() {
        let rmat = Rmat { nodes: 2, edges: 1, initiator: Initiator::GRAPH500, noise: 0.0, no_self_loops: false };
        let src = rmat.source(3, false).unwrap();
        let mut rng = SplitMix(5);
        let mut counts = [0u32; 4];
        let n = 200_000;
        for _ in 0..n {
            let (u, v) = src.draw(&mut rng);
            counts[(u * 2 + v) as usize] += 1;
        }
        let expect = [0.57, 0.19, 0.19, 0.05];
        for q in 0..4 {
            let got = f64::from(counts[q]) / f64::from(n);
            assert!((got - expect[q]).abs() < 0.005, "quadrant {q}: {got}");
        }
    }

    #[test]
    fn noise_keeps_probabilities_valid_and_bounded() {
        let mut rmat = Rmat::graph500(16, 4).unwrap();
        rmat.noise = 0.1;
        let src = rmat.source(1, false).unwrap();
        for t in &src.thresholds {
            assert!(t[0] <= t[1] && t[1] <= t[2] && t[2] <= 1 << 16);
        }
        assert!(src.thresholds.windows(2).any(|w| w[0] != w[1]), "noise should vary per level");
        rmat.noise = 0.2;
        assert!(matches!(rmat.source(1, false), Err(Error::Invalid(_))), "noise above B must be refused");
    }
}
