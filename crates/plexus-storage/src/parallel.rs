//! Work spread over threads that each take the next piece as they finish one: encoding and compressing an
//! image's parts, checking a graph's node runs. Pieces differ in cost (a hub's leaf, a sparse range), so
//! pulling them beats handing each thread a fixed share.

use std::sync::atomic::{AtomicUsize, Ordering};

/// Runs `work(state, i)` for every `i` in `0..count` on up to `threads` threads, each with its own state from
/// `init` and taking the next index as it finishes one; returns the threads' states.
pub(crate) fn for_each_pulled<S: Send>(
    count: usize,
    threads: usize,
    init: impl Fn() -> S + Sync,
    work: impl Fn(&mut S, usize) + Sync,
) -> Vec<S> {
    let threads = threads.clamp(1, count.max(1));
    if threads == 1 {
        let mut state = init();
        (0..count).for_each(|i| work(&mut state, i));
        return vec![state];
    }
    let next = AtomicUsize::new(0);
    std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                scope.spawn(|| {
                    let mut state = init();
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        if i >= count {
                            break;
                        }
                        work(&mut state, i);
                    }
                    state
                })
            })
            .collect();
        workers.into_iter().map(|w| w.join().expect("worker thread")).collect()
    })
}

/// Maps `items` through `f` on up to `threads` threads (see [`for_each_pulled`]); the results keep the items'
/// order.
pub(crate) fn parallel_map<T: Sync, R: Send>(items: &[T], threads: usize, f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let per_thread =
        for_each_pulled(items.len(), threads, Vec::new, |out: &mut Vec<(usize, R)>, i| out.push((i, f(&items[i]))));
    let mut done: Vec<(usize, R)> = per_thread.into_iter().flatten().collect();
    done.sort_unstable_by_key(|(i, _)| *i);
    done.into_iter().map(|(_, r)| r).collect()
}
