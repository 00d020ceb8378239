//! Batch calls of the graph view split over threads: the helpers that run a per-query function over a NumPy
//! array of ids and assemble the answers as flat arrays (one value per query, or CSR offsets and values).

use std::ops::Range;

use crate::bufpool;

/// Batches at least this long are split over threads.
pub const PARALLEL_MIN: usize = 1 << 15;

/// Runs `f` over `0..n` in chunks, on several threads when `n` is large; results in chunk order.
pub fn chunks<T: Send>(n: usize, f: impl Fn(Range<usize>) -> T + Sync) -> Vec<T> {
    let cores = std::thread::available_parallelism().map_or(1, |c| c.get());
    let threads = cores.min(n / PARALLEL_MIN).max(1);
    if threads == 1 {
        return vec![f(0..n)];
    }
    let per = n.div_ceil(threads);
    std::thread::scope(|s| {
        let handles: Vec<_> =
            (0..threads).map(|t| (t * per)..((t + 1) * per).min(n)).map(|r| s.spawn(|| f(r))).collect();
        handles.into_iter().map(|h| h.join().expect("a graph worker panicked")).collect()
    })
}

/// Lists of varying length per query, as CSR arrays.
pub fn csr(n: usize, f: impl Fn(usize, &mut Vec<i64>, &mut Vec<f64>) + Sync) -> (Vec<i64>, Vec<i64>, Vec<f64>) {
    let parts = chunks(n, |r| {
        // Room for one value per query: growing from empty faulted in fresh pages at every doubling.
        let (mut vals, mut ws): (Vec<i64>, Vec<f64>) = (Vec::with_capacity(r.len()), Vec::new());
        let mut lens = Vec::with_capacity(r.len());
        for i in r {
            let before = vals.len();
            f(i, &mut vals, &mut ws);
            lens.push((vals.len() - before) as i64);
        }
        (lens, vals, ws)
    });
    let mut offsets: Vec<i64> = bufpool::take(n + 1);
    offsets[0] = 0;
    let total: usize = parts.iter().map(|p| p.1.len()).sum();
    let total_w: usize = parts.iter().map(|p| p.2.len()).sum();
    let (mut vals, mut ws): (Vec<i64>, Vec<f64>) = (bufpool::take(total), bufpool::take(total_w));
    let (mut i, mut at, mut at_w) = (0, 0, 0);
    for (lens, v, w) in parts {
        for l in lens {
            offsets[i + 1] = offsets[i] + l;
            i += 1;
        }
        vals[at..at + v.len()].copy_from_slice(&v);
        ws[at_w..at_w + w.len()].copy_from_slice(&w);
        (at, at_w) = (at + v.len(), at_w + w.len());
    }
    (offsets, vals, ws)
}

/// Edge lists per query as CSR arrays, sized exactly from the degrees first, so each thread writes its queries'
/// edges straight into the final arrays: no per-thread vectors to grow and no copy into the result.
pub fn exact_csr(
    counts: &[i64],
    fill: impl Fn(usize, &mut [i64], &mut [f64]) -> usize + Sync,
) -> (Vec<i64>, Vec<i64>, Vec<f64>) {
    let (offsets, vals, ws, exact) = bounded_csr(counts, true, fill);
    assert!(exact, "a snapshot's degrees and adjacency disagree");
    (offsets, vals, ws)
}

/// Lists per query as CSR arrays, given a bound on each list's length (`fill` writes at most that many values
/// and returns how many): each thread writes its queries' lists straight into the final arrays, which are then
/// closed up where lists came out shorter. Also returns whether every list met its bound. `ws` is left empty
/// unless `weights`.
pub fn bounded_csr(
    bounds: &[i64],
    weights: bool,
    fill: impl Fn(usize, &mut [i64], &mut [f64]) -> usize + Sync,
) -> (Vec<i64>, Vec<i64>, Vec<f64>, bool) {
    let n = bounds.len();
    let mut offsets: Vec<i64> = bufpool::take(n + 1);
    offsets[0] = 0;
    for (i, &c) in bounds.iter().enumerate() {
        offsets[i + 1] = offsets[i] + c;
    }
    let total = offsets[n] as usize;
    // Taken here, before the workers start (fresh memory is mapped lazily: the workers fault in the pages they
    // write). Recycled memory keeps its old values: every value a list keeps is written by `fill`.
    let mut vals: Vec<i64> = bufpool::take(total);
    let mut ws: Vec<f64> = bufpool::take(if weights { total } else { 0 });
    let cores = std::thread::available_parallelism().map_or(1, |c| c.get());
    // Split by values, not queries: one query of a hub can be most of the work.
    let threads = cores.min(total / PARALLEL_MIN).max(1);
    let mut cuts = vec![0usize];
    for t in 1..threads {
        let target = (total * t / threads) as i64;
        cuts.push(offsets.partition_point(|&o| o < target).clamp(cuts[t - 1], n));
    }
    cuts.push(n);
    // Per query, the length its list came out at.
    let mut lens: Vec<i64> = bufpool::take(n);
    // Each thread writes its lists one after the other from the start of its part: a list shorter than its
    // bound leaves no gap inside the part (the write position never passes the list's own bound), so closing up
    // afterwards moves whole parts, not every list.
    let fill_range = |r: Range<usize>, vals: &mut [i64], ws: &mut [f64], lens: &mut [i64]| {
        let mut at = 0;
        for (k, i) in r.enumerate() {
            let bound = bounds[i] as usize;
            let w = if weights { &mut ws[at..at + bound] } else { &mut [][..] };
            let len = fill(i, &mut vals[at..at + bound], w);
            lens[k] = len as i64;
            at += len;
        }
    };
    std::thread::scope(|s| {
        let (mut rest_v, mut rest_w) = (&mut vals[..], &mut ws[..]);
        let mut rest_l = &mut lens[..];
        let mut handles = Vec::new();
        for w in cuts.windows(2) {
            let len = (offsets[w[1]] - offsets[w[0]]) as usize;
            let (v, rv) = std::mem::take(&mut rest_v).split_at_mut(len);
            let (x, rw) = std::mem::take(&mut rest_w).split_at_mut(if weights { len } else { 0 });
            let (l, rl) = std::mem::take(&mut rest_l).split_at_mut(w[1] - w[0]);
            (rest_v, rest_w, rest_l) = (rv, rw, rl);
            let r = w[0]..w[1];
            let fill_range = &fill_range;
            if cuts.len() == 2 {
                fill_range(r, v, x, l);
            } else {
                handles.push(s.spawn(move || fill_range(r, v, x, l)));
            }
        }
        for h in handles {
            h.join().expect("a graph worker panicked");
        }
    });
    let exact = lens.iter().zip(bounds).all(|(l, b)| l == b);
    if exact {
        bufpool::give(lens);
        return (offsets, vals, ws, true);
    }
    // Close up the gaps between the parts, front to back: a part only ever moves towards the front.
    let mut packed: Vec<i64> = bufpool::take(n + 1);
    packed[0] = 0;
    for (i, &len) in lens.iter().enumerate() {
        packed[i + 1] = packed[i] + len;
    }
    bufpool::give(lens);
    for w in cuts.windows(2).skip(1) {
        let (from, to) = (offsets[w[0]] as usize, packed[w[0]] as usize);
        let len = (packed[w[1]] - packed[w[0]]) as usize;
        vals.copy_within(from..from + len, to);
        if weights {
            ws.copy_within(from..from + len, to);
        }
    }
    bufpool::give(offsets);
    let kept = packed[n] as usize;
    vals.truncate(kept);
    ws.truncate(if weights { kept } else { 0 });
    (packed, vals, ws, false)
}

pub fn flat<T: Send>(n: usize, f: impl Fn(usize) -> T + Sync) -> Vec<T> {
    chunks(n, |r| r.map(&f).collect::<Vec<T>>()).into_iter().flatten().collect()
}
