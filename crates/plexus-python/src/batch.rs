//! Batch calls of the graph view split over threads: the helpers that run a per-query function over a NumPy
//! array of ids and assemble the answers as flat arrays (one value per query, or CSR offsets and values).

use std::ops::Range;

use plexus_storage::prefetch::{filled_on_huge_pages, with_capacity_on_huge_pages};

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
        let (mut lens, mut vals, mut ws) = (Vec::with_capacity(r.len()), Vec::new(), Vec::new());
        for i in r {
            let before = vals.len();
            f(i, &mut vals, &mut ws);
            lens.push((vals.len() - before) as i64);
        }
        (lens, vals, ws)
    });
    let mut offsets = Vec::with_capacity(n + 1);
    offsets.push(0i64);
    let total: usize = parts.iter().map(|p| p.1.len()).sum();
    let (mut vals, mut ws) = (with_capacity_on_huge_pages(total), with_capacity_on_huge_pages(total));
    for (lens, v, w) in parts {
        for l in lens {
            offsets.push(offsets.last().copied().unwrap_or(0) + l);
        }
        vals.extend(v);
        ws.extend(w);
    }
    (offsets, vals, ws)
}

/// Edge lists per query as CSR arrays, sized exactly from the degrees first, so each thread writes its queries'
/// edges straight into the final arrays: no per-thread vectors to grow and no copy into the result.
pub fn exact_csr(
    counts: &[i64],
    fill: impl Fn(usize, &mut [i64], &mut [f64]) -> usize + Sync,
) -> (Vec<i64>, Vec<i64>, Vec<f64>) {
    let n = counts.len();
    let mut offsets = Vec::with_capacity(n + 1);
    offsets.push(0i64);
    for &c in counts {
        offsets.push(offsets[offsets.len() - 1] + c);
    }
    let total = offsets[n] as usize;
    let (mut vals, mut ws) = (filled_on_huge_pages(0i64, total), filled_on_huge_pages(0f64, total));
    let cores = std::thread::available_parallelism().map_or(1, |c| c.get());
    // Split by edges, not queries: one query of a hub can be most of the work.
    let threads = cores.min(total / PARALLEL_MIN).max(1);
    let fill_range = |r: Range<usize>, vals: &mut [i64], ws: &mut [f64]| {
        let base = offsets[r.start] as usize;
        let mut written = 0;
        for i in r {
            let (from, to) = (offsets[i] as usize - base, offsets[i + 1] as usize - base);
            written += fill(i, &mut vals[from..to], &mut ws[from..to]);
        }
        written
    };
    let written = if threads == 1 {
        fill_range(0..n, &mut vals, &mut ws)
    } else {
        let mut cuts = vec![0usize];
        for t in 1..threads {
            let target = (total * t / threads) as i64;
            cuts.push(offsets.partition_point(|&o| o < target).clamp(cuts[t - 1], n));
        }
        cuts.push(n);
        std::thread::scope(|s| {
            let (mut rest_v, mut rest_w) = (&mut vals[..], &mut ws[..]);
            let mut handles = Vec::new();
            for w in cuts.windows(2) {
                let len = (offsets[w[1]] - offsets[w[0]]) as usize;
                let (v, rv) = std::mem::take(&mut rest_v).split_at_mut(len);
                let (x, rw) = std::mem::take(&mut rest_w).split_at_mut(len);
                (rest_v, rest_w) = (rv, rw);
                let r = w[0]..w[1];
                let fill_range = &fill_range;
                handles.push(s.spawn(move || fill_range(r, v, x)));
            }
            handles.into_iter().map(|h| h.join().expect("a graph worker panicked")).sum()
        })
    };
    assert_eq!(written, total, "a snapshot's degrees and adjacency disagree");
    (offsets, vals, ws)
}

pub fn flat<T: Send>(n: usize, f: impl Fn(usize) -> T + Sync) -> Vec<T> {
    chunks(n, |r| r.map(&f).collect::<Vec<T>>()).into_iter().flatten().collect()
}
