//! GuancialeDB's recommendation graph: people who each like a fixed number of distinct random items.
//!
//! Ids share one integer space, since the edge-list format has integer ids only: people are `0..people` and
//! items `people..people + items`, so a person and an item never collide and every edge goes from a person to
//! an item. Each person's items are distinct (Floyd's sampling, no pool to keep) and written in ascending order.

use std::collections::HashSet;

use super::output::{push_edge, WEIGHT_STEPS};
use super::{chunk_rng, Error, Source, CHUNK_EDGES};

/// `people` people each liking `likes` distinct items out of `items`.
#[derive(Clone, Debug)]
pub struct Likes {
    pub items: u64,
    pub people: u64,
    pub likes: u64,
}

impl Default for Likes {
    /// The sizes of `plexus demo`.
    fn default() -> Self {
        Likes { items: 2000, people: 1000, likes: 10 }
    }
}

/// Ids stay below 2^48 so counts never overflow and every id prints in at most 15 digits.
const MAX_IDS: u64 = 1 << 48;

impl Likes {
    pub(crate) fn source(&self, seed: u64, weights: bool) -> Result<LikesSource, Error> {
        if self.items == 0 || self.people == 0 {
            return Err(Error::Invalid(format!(
                "likes needs at least one item and one person, got {} items and {} people",
                self.items, self.people
            )));
        }
        if self.likes == 0 || self.likes > self.items {
            return Err(Error::Invalid(format!(
                "likes per person must be between 1 and the number of items ({}), got {}",
                self.items, self.likes
            )));
        }
        if self.items.saturating_add(self.people) > MAX_IDS || self.people.saturating_mul(self.likes) > MAX_IDS {
            return Err(Error::Invalid("likes graph too large: ids and edges must stay below 2^48".into()));
        }
        Ok(LikesSource { likes: self.clone(), people_per_chunk: (CHUNK_EDGES / self.likes).max(1), seed, weights })
    }
}

pub(crate) struct LikesSource {
    likes: Likes,
    people_per_chunk: u64,
    seed: u64,
    weights: bool,
}

/// Below this many picks a linear scan of the picks beats hashing.
const LINEAR_PICKS: usize = 48;

/// `k` distinct values of `0..n` by Floyd's algorithm, sorted, into `picks`.
fn sample_distinct(rng: &mut plexus::random::SplitMix, n: u64, k: u64, picks: &mut Vec<u64>, seen: &mut HashSet<u64>) {
    picks.clear();
    seen.clear();
    let linear = k as usize <= LINEAR_PICKS;
    for j in n - k..n {
        let t = rng.below(j + 1);
        let taken = if linear { picks.contains(&t) } else { !seen.insert(t) };
        // Floyd: if t is taken, j is not (only values below j could be), and taking j keeps the sample uniform.
        let pick = if taken { j } else { t };
        if taken && !linear {
            seen.insert(j);
        }
        picks.push(pick);
    }
    picks.sort_unstable();
}

impl Source for LikesSource {
    fn nodes(&self) -> u64 {
        self.likes.people + self.likes.items
    }

    fn edges(&self) -> u64 {
        self.likes.people * self.likes.likes
    }

    fn chunks(&self) -> u64 {
        self.likes.people.div_ceil(self.people_per_chunk)
    }

    fn write_chunk(&self, chunk: u64, out: &mut Vec<u8>) -> u64 {
        let Likes { items, people, likes } = self.likes;
        let mut rng = chunk_rng(self.seed, 2, chunk);
        let first = chunk * self.people_per_chunk;
        let last = (first + self.people_per_chunk).min(people);
        let (mut picks, mut seen) = (Vec::with_capacity(likes as usize), HashSet::new());
        out.reserve(((last - first) * likes) as usize * if self.weights { 24 } else { 16 });
        for person in first..last {
            sample_distinct(&mut rng, items, likes, &mut picks, &mut seen);
            for &item in &picks {
                let w = self.weights.then(|| rng.below(WEIGHT_STEPS));
                push_edge(out, person, people + item, w);
            }
        }
        (last - first) * likes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn samples_are_distinct_in_range_and_cover_everything() {
        let mut rng = plexus::random::SplitMix(3);
        let (mut picks, mut seen) = (Vec::new(), HashSet::new());
        for (n, k) in [(10, 10), (100, 3), (1000, 200), (5, 1)] {
            let mut hit = vec![false; n as usize];
            for _ in 0..1000 {
                sample_distinct(&mut rng, n, k, &mut picks, &mut seen);
                assert_eq!(picks.len() as u64, k);
                assert!(picks.windows(2).all(|w| w[0] < w[1]), "sorted and distinct: {picks:?}");
                assert!(picks.iter().all(|&p| p < n));
                for &p in &picks {
                    hit[p as usize] = true;
                }
            }
            assert!(hit.iter().all(|&h| h), "n {n} k {k}: every item should be picked sometime");
        }
    }
}
