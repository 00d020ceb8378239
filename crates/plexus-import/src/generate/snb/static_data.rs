//! The static part of the network, the same at every scale and seed as in LDBC: continents, countries and cities
//! (the real ones of the LDBC data set, from `places.txt`), the 71 tag classes with their subclass hierarchy
//! (DBpedia's, as in LDBC), and 16,080 tags and 7,955 organisations with synthetic names in the LDBC proportions.

use plexus::random::SplitMix;

use super::rows::{row, Chunk};
use super::schema::F;
use super::text;

/// Places, organisations and tags, with the lookups the dynamic part needs.
pub(crate) struct World {
    pub countries: Vec<Country>,
    /// City `c` has place id `countries.len() + c`.
    pub cities: Vec<City>,
    /// Companies have organisation ids `0..companies.len()`.
    pub companies: Vec<Org>,
    /// Universities have organisation ids `companies.len()..`.
    pub universities: Vec<Org>,
    /// Organisation ids of the companies and universities of each country.
    pub companies_in: Vec<Vec<u32>>,
    pub universities_in: Vec<Vec<u32>>,
    pub tags: Vec<String>,
    pub tag_class: Vec<u32>,
    /// Cumulative city counts by country: persons are spread over countries in proportion to their cities.
    country_cdf: Vec<u32>,
}

pub(crate) struct Country {
    pub name: &'static str,
    /// Index into [`CONTINENTS`].
    pub continent: u32,
    /// The country's main language code.
    pub lang: &'static str,
    /// City indices (not place ids).
    pub cities: std::ops::Range<u32>,
}

pub(crate) struct City {
    pub name: &'static str,
    pub country: u32,
}

pub(crate) struct Org {
    pub name: String,
    /// A country index for a company, a city index for a university.
    pub place: u32,
}

/// Continents, in the id order of the LDBC data set (after the countries and cities).
pub(crate) const CONTINENTS: [&str; 6] = ["Asia", "Africa", "Europe", "South_America", "North_America", "Australia"];

const PLACES: &str = include_str!("places.txt");

/// Tag classes: (id, name, parent id, number of tags of the class in the LDBC data set). `Thing` is the root.
const ROOT: u32 = u32::MAX;
#[rustfmt::skip]
const TAG_CLASSES: [(u32, &str, u32, u32); 71] = [
    (349, "OfficeHolder", 211, 438),
    (211, "Person", 239, 1530),
    (239, "Agent", 0, 0),
    (0, "Thing", ROOT, 32),
    (98, "Monarch", 211, 36),
    (336, "BritishRoyalty", 155, 305),
    (155, "Royalty", 211, 0),
    (193, "Saint", 109, 40),
    (109, "Cleric", 211, 0),
    (82, "Philosopher", 211, 88),
    (88, "Writer", 250, 359),
    (250, "Artist", 211, 79),
    (57, "President", 95, 48),
    (95, "Politician", 211, 16),
    (94, "SoccerManager", 211, 45),
    (59, "TennisPlayer", 149, 394),
    (149, "Athlete", 211, 5),
    (74, "SoccerPlayer", 149, 48),
    (115, "MusicalArtist", 250, 899),
    (37, "FormulaOneRacer", 149, 29),
    (148, "PrimeMinister", 95, 32),
    (24, "Cricketer", 149, 23),
    (191, "GolfPlayer", 149, 14),
    (96, "Comedian", 250, 67),
    (319, "Cyclist", 149, 4),
    (279, "Scientist", 211, 125),
    (226, "Judge", 211, 11),
    (3, "MilitaryPerson", 211, 77),
    (230, "MartialArtist", 149, 2),
    (97, "ComicsCreator", 250, 34),
    (13, "IceHockeyPlayer", 149, 13),
    (212, "Architect", 211, 20),
    (330, "MemberOfParliament", 95, 6),
    (43, "Wrestler", 149, 4),
    (200, "Actor", 250, 8),
    (354, "BasketballPlayer", 149, 24),
    (141, "NascarDriver", 149, 40),
    (310, "BaseballPlayer", 149, 42),
    (332, "ChristianBishop", 109, 49),
    (355, "Chancellor", 95, 3),
    (219, "Senator", 95, 27),
    (61, "Band", 301, 2),
    (301, "Organisation", 239, 0),
    (72, "Boxer", 149, 11),
    (104, "AmericanFootballPlayer", 47, 32),
    (47, "GridironFootballPlayer", 149, 1),
    (152, "SnookerChamp", 112, 4),
    (112, "SnookerPlayer", 149, 3),
    (347, "Governor", 95, 13),
    (173, "Model", 211, 3),
    (295, "FictionalCharacter", 211, 7),
    (287, "Criminal", 211, 6),
    (167, "Congressman", 95, 9),
    (145, "Film", 188, 1),
    (188, "Work", 0, 0),
    (339, "Astronaut", 211, 2),
    (77, "CollegeCoach", 211, 3),
    (46, "AdultActor", 200, 1),
    (342, "Single", 123, 4311),
    (123, "MusicalWork", 188, 0),
    (182, "Album", 123, 5061),
    (180, "Song", 123, 529),
    (62, "Country", 318, 1000),
    (318, "PopulatedPlace", 303, 0),
    (303, "Place", 0, 0),
    (302, "ComicsCharacter", 295, 5),
    (233, "EurovisionSongContestEntry", 180, 56),
    (41, "Company", 301, 2),
    (243, "MilitaryUnit", 301, 1),
    (242, "SportsTeamMember", 67, 1),
    (67, "OrganisationMember", 211, 0),
];

pub(crate) const TAGS: u32 = 16_080;
const COMPANIES: u32 = 1_575;
const UNIVERSITIES: u32 = 6_380;
/// Static data does not depend on the seed.
const STATIC_SEED: u64 = 0x1D8C_5EED_0000_0001;

/// `k` and the number of tags are coprime, so these are bijections on `0..TAGS`.
const CLASS_STRIDE: u64 = 7_919;
const POPULAR_STRIDE: u64 = 4_111;

fn is_under(class: u32, ancestor: u32) -> bool {
    let mut c = class;
    loop {
        if c == ancestor {
            return true;
        }
        match TAG_CLASSES.iter().find(|t| t.0 == c) {
            Some(&(_, _, parent, _)) if parent != ROOT => c = parent,
            _ => return false,
        }
    }
}

impl World {
    pub(crate) fn new() -> World {
        let mut countries: Vec<Country> = Vec::new();
        let mut cities = Vec::new();
        for line in PLACES.lines().filter(|l| !l.starts_with('#') && !l.is_empty()) {
            if let Some(city) = line.strip_prefix(' ') {
                let country = countries.len() as u32 - 1;
                cities.push(City { name: city, country });
                countries[country as usize].cities.end += 1;
            } else {
                let mut f = line.split('|');
                let (name, continent, lang) =
                    (f.next().unwrap_or(""), f.next().unwrap_or(""), f.next().unwrap_or("en"));
                let continent = CONTINENTS.iter().position(|c| *c == continent).unwrap_or(0) as u32;
                let at = cities.len() as u32;
                countries.push(Country { name, continent, lang, cities: at..at });
            }
        }
        let mut country_cdf = Vec::with_capacity(countries.len());
        let mut total = 0;
        for c in &countries {
            total += c.cities.len() as u32;
            country_cdf.push(total);
        }

        let mut rng = SplitMix(STATIC_SEED);
        let n_cities = cities.len() as u32;
        let mut companies_in = vec![Vec::new(); countries.len()];
        let mut universities_in = vec![Vec::new(); countries.len()];
        const SUFFIXES: [&str; 10] =
            ["Airlines", "Group", "Bank", "Motors", "Telecom", "Media", "Energy", "Foods", "Systems", "Holdings"];
        let companies: Vec<Org> = (0..COMPANIES)
            .map(|k| {
                // Every city's country first, so each country has a company; then in proportion to cities.
                let city = if k < n_cities { k } else { (k as u64 * CLASS_STRIDE % n_cities as u64) as u32 };
                let country = cities[city as usize].country;
                let mut name = String::new();
                text::word(&mut rng, &mut name);
                name.push('_');
                name.push_str(SUFFIXES[rng.below(SUFFIXES.len() as u64) as usize]);
                companies_in[country as usize].push(k);
                Org { name, place: country }
            })
            .collect();
        let universities: Vec<Org> = (0..UNIVERSITIES)
            .map(|k| {
                let city = k % n_cities;
                let c = cities[city as usize].name;
                let name = match k / n_cities {
                    0 => format!("University_of_{c}"),
                    1 => format!("{c}_Institute_of_Technology"),
                    2 => format!("{c}_State_University"),
                    _ => {
                        let mut w = String::new();
                        text::word(&mut rng, &mut w);
                        format!("{w}_College_{c}")
                    }
                };
                universities_in[cities[city as usize].country as usize].push(COMPANIES + k);
                Org { name, place: city }
            })
            .collect();

        let mut tags = Vec::with_capacity(TAGS as usize);
        let mut tag_class = Vec::with_capacity(TAGS as usize);
        for t in 0..TAGS {
            // Classes take blocks of a permutation of the ids, so popular and unpopular tags mix classes.
            let mut q = (t as u64 * CLASS_STRIDE % TAGS as u64) as u32;
            let &(class, _, _, _) = TAG_CLASSES
                .iter()
                .find(|c| {
                    let hit = q < c.3;
                    q = q.saturating_sub(c.3);
                    hit
                })
                .unwrap_or(&TAG_CLASSES[0]);
            tags.push(tag_name(&mut rng, class));
            tag_class.push(class);
        }
        World {
            countries,
            cities,
            companies,
            universities,
            companies_in,
            universities_in,
            tags,
            tag_class,
            country_cdf,
        }
    }

    pub(crate) fn city_place(&self, city: u32) -> u64 {
        (self.countries.len() as u32 + city) as u64
    }

    fn continent_place(&self, continent: u32) -> u64 {
        (self.countries.len() + self.cities.len()) as u64 + continent as u64
    }

    /// A country drawn in proportion to its number of cities.
    pub(crate) fn random_country(&self, rng: &mut SplitMix) -> u32 {
        let r = rng.below(*self.country_cdf.last().unwrap_or(&1) as u64) as u32;
        self.country_cdf.partition_point(|&c| c <= r) as u32
    }

    /// The tag of popularity rank `rank` (0 is the most popular); `shift` rotates the ranking, so each country
    /// can have its own favourites.
    pub(crate) fn popular_tag(&self, rank: u64, shift: u64) -> u32 {
        ((rank + shift) % TAGS as u64 * POPULAR_STRIDE % TAGS as u64) as u32
    }

    /// Writes the eight static files.
    pub(crate) fn write(&self, c: &mut Chunk) {
        let dbpedia = "http://dbpedia.org/resource/";
        for (id, org) in self.companies.iter().enumerate() {
            let id = id as u64;
            row!(c, F::Organisation; id, "company", org.name, format!("{dbpedia}{}", org.name));
            row!(c, F::OrganisationIsLocatedInPlace; id, org.place as u64);
        }
        for (k, org) in self.universities.iter().enumerate() {
            let id = (self.companies.len() + k) as u64;
            row!(c, F::Organisation; id, "university", org.name, format!("{dbpedia}{}", org.name));
            row!(c, F::OrganisationIsLocatedInPlace; id, self.city_place(org.place));
        }
        for (k, country) in self.countries.iter().enumerate() {
            row!(c, F::Place; k as u64, country.name, format!("{dbpedia}{}", country.name), "country");
            row!(c, F::PlaceIsPartOfPlace; k as u64, self.continent_place(country.continent));
        }
        for (k, city) in self.cities.iter().enumerate() {
            let id = self.city_place(k as u32);
            row!(c, F::Place; id, city.name, format!("{dbpedia}{}", city.name), "city");
            row!(c, F::PlaceIsPartOfPlace; id, city.country as u64);
        }
        for (k, name) in CONTINENTS.iter().enumerate() {
            row!(c, F::Place; self.continent_place(k as u32), *name, format!("{dbpedia}{name}"), "continent");
        }
        for (t, name) in self.tags.iter().enumerate() {
            row!(c, F::Tag; t as u64, name, format!("{dbpedia}{name}"));
            row!(c, F::TagHasTypeTagClass; t as u64, self.tag_class[t]);
        }
        for &(id, name, parent, _) in &TAG_CLASSES {
            let url = if parent == ROOT {
                "http://www.w3.org/2002/07/owl#Thing".to_string()
            } else {
                format!("http://dbpedia.org/ontology/{name}")
            };
            row!(c, F::TagClass; id, name, url);
            if parent != ROOT {
                row!(c, F::TagClassIsSubclassOfTagClass; id, parent);
            }
        }
    }
}

/// A synthetic tag name shaped by its class: people get person names, works get titles, and so on.
fn tag_name(rng: &mut SplitMix, class: u32) -> String {
    let mut s = String::new();
    if is_under(class, 211) {
        let langs = ["en", "es", "de", "fr", "it", "ru", "pt", "ja", "zh", "ar", "hi", "xx"];
        let names = text::names_for(langs[rng.below(langs.len() as u64) as usize]);
        s.push_str(names.first[rng.below(names.first.len() as u64) as usize]);
        s.push('_');
        s.push_str(names.last[rng.below(names.last.len() as u64) as usize]);
    } else if is_under(class, 188) {
        if rng.below(2) == 0 {
            s.push_str("The_");
        }
        text::word(rng, &mut s);
        s.push('_');
        text::word(rng, &mut s);
    } else if is_under(class, 301) {
        s.push_str("The_");
        text::word(rng, &mut s);
        s.push('s');
    } else {
        text::word(rng, &mut s);
        s.push_str(["ia", "land", "stan", "_Islands"][rng.below(4) as usize]);
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn places_and_classes_have_the_ldbc_shape() {
        let w = World::new();
        assert_eq!((w.countries.len(), w.cities.len()), (111, 1343));
        assert_eq!(w.companies.len() + w.universities.len(), 7955);
        assert!(w.companies_in.iter().all(|c| !c.is_empty()), "every country has a company");
        assert_eq!(TAG_CLASSES.iter().map(|c| c.3).sum::<u32>(), TAGS);
        assert_eq!(TAG_CLASSES.iter().filter(|c| c.2 == ROOT).count(), 1);
        assert!(TAG_CLASSES.iter().all(|c| is_under(c.0, 0)), "every class descends from Thing");
        let mut seen = vec![false; TAGS as usize];
        for r in 0..TAGS as u64 {
            seen[w.popular_tag(r, 5) as usize] = true;
        }
        assert!(seen.iter().all(|&s| s), "popularity ranks are a permutation of the tags");
        assert!(w.tags.iter().all(|t| !t.contains('|') && !t.contains('\n') && !t.is_empty()));
    }
}
