//! Persons: their attributes, places, studies, jobs and interests, and the KNOWS network.
//!
//! Each person is a function of (seed, person index) only, through separate random streams for the attributes,
//! the interests and the work history, so any part can be recomputed where it is needed instead of stored. Only a
//! small summary per person ([`Person`], 24 bytes) stays in memory.
//!
//! KNOWS is a Chung-Lu graph restricted to a window, like LDBC's generator, which links persons that are close in
//! a sort by location: persons are sorted by (country, city, a random key) into a ring, and each pair at most
//! `window` places apart is linked with probability `d(a) d(b) / S`, where `d` is each person's target degree
//! (drawn from a Pareto law, so degrees are heavy-tailed) and `S` the sum of targets in a window, which makes the
//! expected degree the target. Whether a pair is linked is a hash of the pair, so a person's friends are found
//! again by scanning their window, without storing the graph.

use plexus::random::SplitMix;

use super::rows::{row, Chunk, Ip};
use super::schema::F;
use super::static_data::World;
use super::text;
use super::{stream_rng, Stream};

/// The simulated period: 2010-01-01 to 2013-01-01 (UTC, epoch milliseconds), as in LDBC.
pub(crate) const START: i64 = 1_262_304_000_000;
pub(crate) const END: i64 = 1_356_998_400_000;
/// Persons join during the first 80% of the period.
pub(crate) const JOIN_END: i64 = START + (END - START) * 8 / 10;
pub(crate) const HOUR: i64 = 3_600_000;
pub(crate) const DAY: i64 = 24 * HOUR;

/// What the rest of the generator needs to know about a person.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Person {
    pub creation: i64,
    pub city: u32,
    pub ip: u32,
    pub country: u16,
    /// Target number of friends.
    pub degree: u16,
    pub browser: u8,
    /// Index into [`text::EXTRA_LANGUAGES`], or 255 for none.
    pub extra_language: u8,
    pub first_name: u8,
    pub last_name: u8,
}

/// The attributes only the person row needs.
struct Details {
    female: bool,
    birthday: i64,
    emails: u64,
}

/// The KNOWS degree: mean 7.4 at scale 0.003 (as in the LDBC tiny data set), growing as scale^0.27, which gives
/// about 36 at scale 1 (LDBC's SF1 has 36.5).
pub(crate) fn mean_degree(scale: f64) -> f64 {
    7.4 * (scale / 0.003).powf(0.27)
}

/// Share of persons without any friend (the tiny data set has 17%).
const LONERS: f64 = 0.15;
/// Pareto exponent of the target degrees.
const DEGREE_SHAPE: f64 = 2.3;

/// A person's id: like LDBC's, the person's number plus a block number (here the sixth of the joining period)
/// shifted left by 41 bits. Ids grow with the creation date.
pub(crate) fn person_id(index: u32, creation: i64) -> u64 {
    let block = ((creation - START) * 6 / (JOIN_END - START)).clamp(0, 5) as u64;
    (block << 41) | index as u64
}

/// The first two bytes of the IP addresses of a country.
pub(crate) fn country_ip(country: u32, rng: &mut SplitMix) -> u32 {
    let a = 1 + (country * 2) % 222;
    let b = (country * 37 + 11) % 256;
    (a << 24) | (b << 16) | rng.below(1 << 16) as u32
}

pub(crate) struct Network<'w> {
    pub world: &'w World,
    pub seed: u64,
    pub persons: Vec<Person>,
    /// The mean target degree.
    pub mean_degree: f64,
    /// Ring position → person, and person → ring position.
    order: Vec<u32>,
    position: Vec<u32>,
    window: u32,
    /// `1 / S`: the link probability is `d(a) d(b) / S`.
    inv_norm: f64,
}

impl<'w> Network<'w> {
    /// Draws every person's summary and sorts them into the KNOWS ring.
    pub(crate) fn new(world: &'w World, seed: u64, persons: u32, scale: f64) -> Network<'w> {
        let n = persons as usize;
        let mean = mean_degree(scale).min((n as f64 - 1.0) / 2.0).max(0.5);
        let window = ((n as u32).saturating_sub(1) / 2).min((10.0 * mean).max(1000.0) as u32);
        let cap = (n as u32 - 1).min(window.max(1)) as f64;
        // Pareto(m, a) has mean m a / (a - 1); the loners do not count towards the mean.
        let m = mean / (1.0 - LONERS) * (DEGREE_SHAPE - 1.0) / DEGREE_SHAPE;
        let mut all = Vec::with_capacity(n);
        let mut total = 0.0;
        for i in 0..persons {
            let (mut p, _) = draw(world, seed, i, persons);
            let mut rng = stream_rng(seed, Stream::Degree, i as u64);
            p.degree = if rng.unit() < LONERS {
                0
            } else {
                let u = 1.0 - rng.unit();
                (m / u.powf(1.0 / DEGREE_SHAPE)).round().min(cap) as u16
            };
            total += p.degree as f64;
            all.push(p);
        }
        let mut order: Vec<u32> = (0..persons).collect();
        let key = |i: u32| {
            let p = &all[i as usize];
            (p.country, p.city, stream_rng(seed, Stream::Ring, i as u64).next_u64())
        };
        order.sort_by_cached_key(|&i| key(i));
        let mut position = vec![0u32; n];
        for (at, &i) in order.iter().enumerate() {
            position[i as usize] = at as u32;
        }
        let norm = 2.0 * window as f64 * (total / n as f64).max(1e-9);
        Network { world, seed, persons: all, mean_degree: mean, order, position, window, inv_norm: 1.0 / norm }
    }

    pub(crate) fn id(&self, i: u32) -> u64 {
        person_id(i, self.persons[i as usize].creation)
    }

    /// Whether persons `a` and `b` know each other, and since when.
    #[inline]
    fn link(&self, a: u32, b: u32) -> Option<i64> {
        let (lo, hi) = (a.min(b), a.max(b));
        let (pa, pb) = (&self.persons[lo as usize], &self.persons[hi as usize]);
        let p = pa.degree as f64 * pb.degree as f64 * self.inv_norm;
        let mut h = SplitMix(self.seed ^ ((lo as u64) << 32 | hi as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15));
        if h.unit() >= p {
            return None;
        }
        // After both joined, earlier dates more likely.
        let base = pa.creation.max(pb.creation) + HOUR;
        let u = h.unit();
        Some(base + (u * u * (END - base) as f64) as i64)
    }

    /// Person `i`'s friends and the dates they met, in ring order.
    pub(crate) fn friends(&self, i: u32, out: &mut Vec<(u32, i64)>) {
        out.clear();
        let n = self.persons.len() as u32;
        let at = self.position[i as usize];
        for k in 1..=self.window {
            for q in [(at + k) % n, (at + n - k) % n] {
                let j = self.order[q as usize];
                if let Some(date) = self.link(i, j) {
                    out.push((j, date));
                }
            }
        }
    }

    /// Person `i`'s interests: distinct tags, popular ones more often, half of them favourites of the country.
    pub(crate) fn interests(&self, i: u32, out: &mut Vec<u32>) {
        out.clear();
        let mut rng = stream_rng(self.seed, Stream::Interests, i as u64);
        let n = 1 + (60.0 * rng.unit().powi(2)) as usize;
        let shift = self.persons[i as usize].country as u64 * 131;
        let tags = super::static_data::TAGS as f64;
        while out.len() < n {
            // Log-uniform ranks: about Zipf's law with exponent 1.
            let rank = tags.powf(rng.unit()) as u64 - 1;
            let tag = self.world.popular_tag(rank, if rng.below(2) == 0 { shift } else { 0 });
            if !out.contains(&tag) {
                out.push(tag);
            }
        }
    }

    /// Writes person `i`'s rows: the person, location, interests, studies, jobs and the KNOWS edges it owns (those
    /// to the persons up to `window` places further round the ring).
    pub(crate) fn write(&self, i: u32, c: &mut Chunk, interests: &mut Vec<u32>) {
        let (p, d) = draw(self.world, self.seed, i, self.persons.len() as u32);
        let p = Person { degree: self.persons[i as usize].degree, ..p };
        let id = self.id(i);
        let country = &self.world.countries[p.country as usize];
        let names = text::names_for(country.lang);
        let first = names.first[p.first_name as usize];
        let mut languages = String::from(country.lang);
        let extra = text::EXTRA_LANGUAGES.get(p.extra_language as usize).copied();
        if let Some(extra) = extra.filter(|&e| e != country.lang) {
            languages.push(';');
            languages.push_str(extra);
        }
        if country.lang != "en" {
            languages.push_str(";en");
        }
        let mut emails = String::new();
        let offset = id as usize;
        for k in 0..d.emails as usize {
            if k > 0 {
                emails.push(';');
            }
            let domain = text::EMAIL_DOMAINS[(offset + k) % text::EMAIL_DOMAINS.len()];
            emails.push_str(&format!("{first}{id}@{domain}"));
        }
        row!(c, F::Person; id, first, names.last[p.last_name as usize], if d.female { "female" } else { "male" },
            d.birthday, p.creation, Ip(p.ip), text::BROWSERS[p.browser as usize].0, languages, emails);
        row!(c, F::PersonIsLocatedInPlace; id, self.world.city_place(p.city));
        self.interests(i, interests);
        for &t in interests.iter() {
            row!(c, F::PersonHasInterestTag; id, t);
        }

        let mut rng = stream_rng(self.seed, Stream::Work, i as u64);
        let birth_year = 1970 + (d.birthday / (DAY * 36525 / 100)) as u64;
        let mut year = birth_year + 20 + rng.below(3);
        if rng.unit() < 0.8 {
            let unis = &self.world.universities_in[p.country as usize];
            let uni = unis[rng.below(unis.len() as u64) as usize];
            let class_year = birth_year + 18 + rng.below(6);
            row!(c, F::PersonStudyAtOrganisation; id, uni, class_year);
            year = class_year + rng.below(2);
        }
        let jobs = if rng.unit() < 0.15 { 0 } else { 1 + rng.below(4) };
        let mut taken = [u32::MAX; 4];
        for job in 0..jobs as usize {
            let company = if rng.unit() < 0.9 {
                let local = &self.world.companies_in[p.country as usize];
                local[rng.below(local.len() as u64) as usize]
            } else {
                rng.below(self.world.companies.len() as u64) as u32
            };
            if !taken.contains(&company) {
                taken[job] = company;
                row!(c, F::PersonWorkAtOrganisation; id, company, year.min(2012));
                year += 1 + rng.below(3);
            }
        }

        let n = self.persons.len() as u32;
        let at = self.position[i as usize];
        for k in 1..=self.window {
            let j = self.order[((at + k) % n) as usize];
            if let Some(date) = self.link(i, j) {
                let (a, b) = (id.min(self.id(j)), id.max(self.id(j)));
                row!(c, F::PersonKnowsPerson; a, b, date);
            }
        }
    }
}

/// Draws person `i` of `persons` from its attribute stream (the degree is drawn separately).
fn draw(world: &World, seed: u64, i: u32, persons: u32) -> (Person, Details) {
    let mut rng = stream_rng(seed, Stream::Person, i as u64);
    // Creation dates increase with the index, spread evenly over the joining period with some jitter.
    let slot = (JOIN_END - START) as f64 / persons as f64;
    let creation = START + ((i as f64 + rng.unit()) * slot) as i64;
    let country = world.random_country(&mut rng);
    let cities = &world.countries[country as usize].cities;
    let city = cities.start + rng.below(cities.len() as u64) as u32;
    let names = text::names_for(world.countries[country as usize].lang);
    let person = Person {
        creation,
        city,
        ip: country_ip(country, &mut rng),
        country: country as u16,
        degree: 0,
        browser: text::browser(&mut rng),
        extra_language: if rng.unit() < 0.3 { rng.below(text::EXTRA_LANGUAGES.len() as u64) as u8 } else { u8::MAX },
        first_name: rng.below(names.first.len() as u64) as u8,
        last_name: rng.below(names.last.len() as u64) as u8,
    };
    // Born 1980-01-01 to 1990-12-31 (day 3652 since 1970 is 1980-01-01).
    let birthday = (3652 + rng.below(4018) as i64) * DAY;
    let details = Details { female: rng.below(2) == 0, birthday, emails: 1 + rng.below(4) };
    (person, details)
}
