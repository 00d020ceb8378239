//! Numbering of integer vertex ids in order of value, over every core.

use plexus_storage::fxhash::FxHashMap;

use super::{ChunkOut, VertexIds};

/// A chunk's parsed edges and the slices of the source and target columns its numbers go to.
type NumberingWork<'o, 'a> = (&'o ChunkOut<'a>, &'o mut [u32], &'o mut [u32]);

/// Integer ids are numbered in order of value. When they are dense enough, through a bitmap of the ids present
/// and a running count per 64-bit word (a rank table): both stay in the cache for millions of vertices, so the
/// marking and numbering passes run at memory speed, and both spread over the cores by chunk.
pub(super) fn number_integer_ids(outs: &[ChunkOut], edges: usize) -> (Vec<u32>, Vec<u32>, VertexIds) {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get()).clamp(1, outs.len().max(1));
    // Chunk `i` goes to thread `i % threads`.
    let per_thread = |t: usize| outs.iter().skip(t).step_by(threads);
    let (min, max) = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|t| {
                scope.spawn(move || {
                    per_thread(t)
                        .flat_map(|o| o.ints.iter())
                        .fold((i64::MAX, i64::MIN), |(lo, hi), &(s, d)| (lo.min(s.min(d)), hi.max(s.max(d))))
                })
            })
            .collect();
        workers
            .into_iter()
            .map(|w| w.join().expect("numbering thread"))
            .fold((i64::MAX, i64::MIN), |(lo, hi), (a, b)| (lo.min(a), hi.max(b)))
    });
    if edges == 0 {
        return (Vec::new(), Vec::new(), VertexIds::Integer(Vec::new()));
    }
    let span = (max as i128 - min as i128 + 1) as u128;
    if span > (16 * edges as u128).max(1 << 20) {
        let ints = || outs.iter().flat_map(|o| o.ints.iter().copied());
        let mut ids: Vec<i64> = ints().flat_map(|(s, d)| [s, d]).collect();
        ids.sort_unstable();
        ids.dedup();
        let number: FxHashMap<i64, u32> = ids.iter().enumerate().map(|(i, &id)| (id, i as u32)).collect();
        let (src, dst) = ints().map(|(s, d)| (number[&s], number[&d])).unzip();
        return (src, dst, VertexIds::Integer(ids));
    }
    let words = (span as usize).div_ceil(64);
    let bits = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|t| {
                scope.spawn(move || {
                    let mut bits = vec![0u64; words];
                    for &(s, d) in per_thread(t).flat_map(|o| o.ints.iter()) {
                        for v in [(s - min) as usize, (d - min) as usize] {
                            bits[v >> 6] |= 1 << (v & 63);
                        }
                    }
                    bits
                })
            })
            .collect();
        let mut all = workers.into_iter().map(|w| w.join().expect("numbering thread"));
        let mut bits = all.next().expect("one thread at least");
        for other in all {
            bits.iter_mut().zip(other).for_each(|(a, b)| *a |= b);
        }
        bits
    });
    let mut rank = Vec::with_capacity(words);
    let mut ids = Vec::new();
    for (w, &word) in bits.iter().enumerate() {
        rank.push(ids.len() as u32);
        let mut rest = word;
        while rest != 0 {
            ids.push(min + (w * 64) as i64 + rest.trailing_zeros() as i64);
            rest &= rest - 1;
        }
    }
    let number = |v: i64| {
        let o = (v - min) as usize;
        rank[o >> 6] + (bits[o >> 6] & ((1u64 << (o & 63)) - 1)).count_ones()
    };
    let mut src = vec![0u32; edges];
    let mut dst = vec![0u32; edges];
    // Each chunk numbers into its own slices of the output columns.
    let mut slices: Vec<Vec<NumberingWork>> = (0..threads).map(|_| Vec::new()).collect();
    let (mut src_rest, mut dst_rest) = (&mut src[..], &mut dst[..]);
    for (i, o) in outs.iter().enumerate() {
        let (s, s_rest) = std::mem::take(&mut src_rest).split_at_mut(o.ints.len());
        let (d, d_rest) = std::mem::take(&mut dst_rest).split_at_mut(o.ints.len());
        (src_rest, dst_rest) = (s_rest, d_rest);
        slices[i % threads].push((o, s, d));
    }
    std::thread::scope(|scope| {
        for work in slices {
            scope.spawn(move || {
                for (o, s, d) in work {
                    for (i, &(a, b)) in o.ints.iter().enumerate() {
                        s[i] = number(a);
                        d[i] = number(b);
                    }
                }
            });
        }
    });
    (src, dst, VertexIds::Integer(ids))
}
