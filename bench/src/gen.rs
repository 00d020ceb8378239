//! Deterministic data generators: a fast random number generator and the R-MAT edge list shaped like the patent
//! citation graph.

pub use plexus::random::SplitMix;

/// R-MAT quadrant probabilities (a, b, c; d is the rest) used for the patent-shaped graph.
pub const RMAT: (f64, f64, f64) = (0.57, 0.19, 0.19);

/// Nodes and edges of the patent citation graph the generated graph imitates.
pub const PATENT_NODES: u64 = 3_774_768;
pub const PATENT_EDGES: u64 = 16_518_948;

/// A directed simple graph (no self-loops, no duplicate edges) with R-MAT's heavy-tailed degrees on `nodes`
/// nodes. Vertex ids are drawn at scale `ceil(log2(nodes))`, relabelled by a random permutation (so hubs are
/// spread over the id space rather than packed at id 0, as in real data) and edges landing on a relabelled id
/// `>= nodes` are redrawn. Edges come back sorted by source, then target, like an edge file.
pub fn rmat_edges(nodes: u64, edges: u64, seed: u64) -> Vec<(u32, u32)> {
    assert!(nodes >= 2 && nodes <= u64::from(u32::MAX));
    assert!(edges <= nodes * (nodes - 1), "more edges than a simple graph on {nodes} nodes holds");
    let mut rng = SplitMix(seed);
    let levels = 64 - (nodes - 1).leading_zeros();
    let span = 1u64 << levels;
    let mut perm: Vec<u32> = (0..span as u32).collect();
    for i in (1..perm.len()).rev() {
        let j = rng.below(i as u64 + 1) as usize;
        perm.swap(i, j);
    }
    let scale = |p: f64| (p * 2f64.powi(64)) as u64;
    let (ta, tab, tabc) = (scale(RMAT.0), scale(RMAT.0 + RMAT.1), scale(RMAT.0 + RMAT.1 + RMAT.2));
    let mut keys: Vec<u64> = Vec::with_capacity(edges as usize + edges as usize / 16);
    while (keys.len() as u64) < edges {
        // Duplicates are rare at this density: draw the shortfall plus a little, then deduplicate.
        let want = (edges - keys.len() as u64) + (edges - keys.len() as u64) / 32 + 16;
        let mut drawn = 0;
        while drawn < want {
            let (mut u, mut v) = (0u64, 0u64);
            for _ in 0..levels {
                let r = rng.next_u64();
                let (du, dv) = if r < ta {
                    (0, 0)
                } else if r < tab {
                    (0, 1)
                } else if r < tabc {
                    (1, 0)
                } else {
                    (1, 1)
                };
                u = (u << 1) | du;
                v = (v << 1) | dv;
            }
            let (u, v) = (u64::from(perm[u as usize]), u64::from(perm[v as usize]));
            if u >= nodes || v >= nodes || u == v {
                continue;
            }
            keys.push((u << 32) | v);
            drawn += 1;
        }
        keys.sort_unstable();
        keys.dedup();
    }
    // Drop the surplus at random positions, keeping the order.
    let surplus = keys.len() - edges as usize;
    if surplus > 0 {
        let mut drop = vec![false; keys.len()];
        let mut dropped = 0;
        while dropped < surplus {
            let i = rng.below(keys.len() as u64) as usize;
            if !drop[i] {
                drop[i] = true;
                dropped += 1;
            }
        }
        let mut i = 0;
        keys.retain(|_| {
            i += 1;
            !drop[i - 1]
        });
    }
    keys.into_iter().map(|k| ((k >> 32) as u32, k as u32)).collect()
}

/// `k` distinct values out of `0..n`, uniformly: a partial Fisher-Yates shuffle over `pool`, which must hold a
/// permutation of `0..n` and stays one (so it can be reused across calls without resetting).
pub fn distinct<'a>(rng: &mut SplitMix, pool: &'a mut [u32], k: usize) -> &'a [u32] {
    let n = pool.len();
    for j in 0..k {
        let r = j + rng.below((n - j) as u64) as usize;
        pool.swap(j, r);
    }
    &pool[..k]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rmat_is_simple_sized_and_skewed() {
        let (n, m) = (5_000u64, 20_000u64);
        let edges = rmat_edges(n, m, 7);
        assert_eq!(edges.len() as u64, m);
        assert!(edges.windows(2).all(|w| w[0] < w[1]), "sorted and without duplicates");
        assert!(edges.iter().all(|&(u, v)| u != v && u64::from(u) < n && u64::from(v) < n));
        let mut degree = vec![0u32; n as usize];
        for &(u, _) in &edges {
            degree[u as usize] += 1;
        }
        let max = *degree.iter().max().unwrap();
        assert!(max as u64 > 10 * m / n, "heavy tail expected, max out-degree {max}");
        assert_eq!(edges, rmat_edges(n, m, 7), "deterministic");
    }

    #[test]
    fn distinct_picks_are_distinct() {
        let mut rng = SplitMix(1);
        let mut pool: Vec<u32> = (0..200).collect();
        for _ in 0..50 {
            let mut picked = distinct(&mut rng, &mut pool, 100).to_vec();
            picked.sort_unstable();
            picked.dedup();
            assert_eq!(picked.len(), 100);
        }
    }
}
