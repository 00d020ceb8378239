//! A social network in the schema and CSV layout of the LDBC Social Network Benchmark (Interactive, the
//! "CsvComposite" files of the LDBC tiny data set): `plexus generate snb --out DIR --scale SF`.
//!
//! Writes `DIR/static/` (places, organisations, tags, tag classes: fixed, as in LDBC) and `DIR/dynamic/`
//! (persons, forums, posts, comments and their relationships) with exactly the file names and header rows of the
//! LDBC data ([`schema::FILES`]), so a loader of LDBC data loads the output unchanged.
//!
//! The shape follows LDBC's generator, simplified: see [`persons`] (persons, KNOWS), [`forums`] (walls, albums,
//! groups) and [`messages`] (posts, comment trees, likes). Counts at scale 0.003 are about those of the LDBC tiny
//! data set; the number of persons follows LDBC's at each scale ([`persons_for_scale`]) and the KNOWS degree, hence
//! activity, grows slowly with it.
//!
//! Everything is a function of (seed, scale): each person's attributes, friends and activity come from random
//! streams seeded by (seed, stream, person), so the output is byte-for-byte the same for any number of threads.
//! Memory holds the static data and a 24-byte summary plus two id offsets per person; rows stream to the files
//! through chunks of 64 persons (see [`rows::run`]).

mod forums;
mod messages;
mod persons;
pub(crate) mod rows;
mod schema;
mod static_data;
mod text;

#[cfg(test)]
mod tests;

use std::path::Path;
use std::time::Instant;

pub use schema::{FileSpec, FILES};

use super::Error;
use rows::{Chunk, Outputs};

/// The random stream of one part of one person.
#[derive(Clone, Copy)]
pub(crate) enum Stream {
    Person = 100,
    Degree,
    Ring,
    Interests,
    Work,
    Plan,
    Forums,
    Messages,
}

pub(crate) fn stream_rng(seed: u64, stream: Stream, index: u64) -> plexus::random::SplitMix {
    super::chunk_rng(seed, stream as u64, index)
}

/// An LDBC-SNB-shaped social network at a scale factor.
#[derive(Clone, Debug)]
pub struct Snb {
    pub scale: f64,
}

/// What a run wrote.
#[derive(Clone, Debug)]
pub struct SnbSummary {
    pub persons: u64,
    /// Rows (without the header) and bytes (with it) of each file of [`FILES`], in that order.
    pub rows: Vec<u64>,
    pub bytes: Vec<u64>,
    pub seconds: f64,
}

impl SnbSummary {
    pub fn total_rows(&self) -> u64 {
        self.rows.iter().sum()
    }

    pub fn total_bytes(&self) -> u64 {
        self.bytes.iter().sum()
    }
}

/// Progress: persons whose rows are written.
#[derive(Clone, Copy, Debug)]
pub struct SnbProgress {
    pub persons_done: u64,
    pub persons_total: u64,
}

/// Persons of the LDBC SNB Interactive data sets at some scale factors (the tiny one at 0.003).
const PERSON_ANCHORS: [(f64, f64); 10] = [
    (0.003, 222.0),
    (0.1, 1_528.0),
    (0.3, 3_500.0),
    (1.0, 9_892.0),
    (3.0, 24_328.0),
    (10.0, 65_645.0),
    (30.0, 165_430.0),
    (100.0, 448_626.0),
    (300.0, 1_128_069.0),
    (1000.0, 3_399_000.0),
];

/// The number of persons at `scale`: LDBC's counts ([`PERSON_ANCHORS`]), interpolated linearly in log-log space
/// between them and extrapolated along the end segments (about scale^0.55 below 0.1, scale^0.97 above 300).
pub fn persons_for_scale(scale: f64) -> u64 {
    let a = &PERSON_ANCHORS;
    let k = a.iter().position(|&(s, _)| s >= scale).unwrap_or(a.len() - 1).clamp(1, a.len() - 1);
    let ((s0, p0), (s1, p1)) = (a[k - 1], a[k]);
    let slope = (p1 / p0).ln() / (s1 / s0).ln();
    (p0 * (scale / s0).powf(slope)).round() as u64
}

const PERSONS_PER_CHUNK: u64 = 64;
const MIN_PERSONS: u64 = 10;

impl Snb {
    pub fn validate(&self) -> Result<u64, Error> {
        let scale = self.scale;
        if !scale.is_finite() || scale <= 0.0 || scale > 1000.0 {
            return Err(Error::Invalid(format!("--scale must be greater than 0 and at most 1000, got {scale}")));
        }
        let persons = persons_for_scale(scale);
        if persons < MIN_PERSONS {
            return Err(Error::Invalid(format!(
                "--scale {scale} gives {persons} persons: at least {MIN_PERSONS} are needed"
            )));
        }
        Ok(persons)
    }

    /// Writes the data set into `dir/static` and `dir/dynamic` (created if needed; existing files are replaced).
    /// `threads` 0 means one per core; the output does not depend on it.
    pub fn generate(
        &self,
        seed: u64,
        threads: usize,
        dir: &Path,
        progress: &mut dyn FnMut(SnbProgress),
    ) -> Result<SnbSummary, Error> {
        let persons = self.validate()?;
        let start = Instant::now();
        let io = |(path, source): rows::PathError| Error::Io { path, source };
        let world = static_data::World::new();
        let net = persons::Network::new(&world, seed, persons as u32, self.scale);
        // Running numbers of each person's first forum and message.
        let (mut forum_base, mut message_base) = (Vec::with_capacity(persons as usize), Vec::new());
        message_base.reserve(persons as usize);
        let (mut forums, mut messages) = (0u64, 0u64);
        let mut plans = Vec::new();
        for i in 0..persons as u32 {
            forum_base.push(forums);
            message_base.push(messages);
            forums::plan(&net, i, &mut plans);
            let (f, m) = forums::count(&plans);
            forums += f;
            messages += m;
        }

        let mut out = Outputs::create(dir).map_err(io)?;
        let mut first = Chunk::new();
        world.write(&mut first);
        out.write(&first).map_err(io)?;
        drop(first);

        let make = |chunk: u64, c: &mut Chunk| {
            let mut scratch = forums::Scratch::default();
            let mut interests = Vec::new();
            let from = chunk * PERSONS_PER_CHUNK;
            for i in from..(from + PERSONS_PER_CHUNK).min(persons) {
                let i = i as u32;
                net.write(i, c, &mut interests);
                let rng = stream_rng(seed, Stream::Messages, i as u64);
                let mut w = messages::Writer::new(&net, c, rng);
                forums::write(&mut w, i, forum_base[i as usize], message_base[i as usize], &mut scratch);
                debug_assert_eq!(w.next_message, message_base.get(i as usize + 1).copied().unwrap_or(messages));
            }
        };
        let threads = match threads {
            0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
            n => n,
        };
        let chunks = persons.div_ceil(PERSONS_PER_CHUNK);
        rows::run(chunks, threads, &make, &mut out, &mut |done| {
            progress(SnbProgress { persons_done: (done * PERSONS_PER_CHUNK).min(persons), persons_total: persons })
        })
        .map_err(io)?;
        let (rows, bytes) = (out.rows.clone(), out.bytes.clone());
        out.finish().map_err(io)?;
        Ok(SnbSummary { persons, rows, bytes, seconds: start.elapsed().as_secs_f64() })
    }
}
