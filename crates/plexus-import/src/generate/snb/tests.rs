//! Tests of the SNB generator: the file set and headers against the LDBC tiny data set, referential integrity,
//! date order, determinism and counts.

use std::collections::{HashMap, HashSet};
use std::path::Path;

use super::*;

type Table = Vec<Vec<String>>;

/// Every file of a generated (or LDBC) directory: name → (header, rows).
fn load(dir: &Path) -> HashMap<&'static str, (String, Table)> {
    FILES
        .iter()
        .map(|f| {
            let text = std::fs::read_to_string(dir.join(f.dir).join(f.name)).unwrap();
            let mut lines = text.lines();
            let header = lines.next().unwrap().to_string();
            let width = header.split('|').count();
            let rows: Table = lines
                .map(|l| {
                    let fields: Vec<String> = l.split('|').map(str::to_string).collect();
                    assert_eq!(fields.len(), width, "{}: {l:?}", f.name);
                    fields
                })
                .collect();
            (f.name, (header, rows))
        })
        .collect()
}

fn generate(scale: f64, seed: u64, threads: usize) -> (tempfile::TempDir, SnbSummary) {
    let dir = tempfile::tempdir().unwrap();
    let summary = Snb { scale }.generate(seed, threads, dir.path(), &mut |_| {}).unwrap();
    (dir, summary)
}

#[test]
fn file_set_and_headers_are_ldbcs() {
    let names: HashSet<_> = FILES.iter().map(|f| (f.dir, f.name)).collect();
    assert_eq!(names.len(), 31);
    assert_eq!(FILES.iter().filter(|f| f.dir == "static").count(), 8);
    // Against the real files when the tiny data set is at hand (its directory, or its `vanilla` directory).
    let Some(tiny) = std::env::var_os("PLEXUS_LDBC_TINY") else { return };
    let tiny = Path::new(&tiny);
    let tiny = if tiny.join("vanilla").is_dir() { tiny.join("vanilla") } else { tiny.to_path_buf() };
    let mut real = HashSet::new();
    for dir in ["static", "dynamic"] {
        for entry in std::fs::read_dir(tiny.join(dir)).unwrap() {
            let name = entry.unwrap().file_name().into_string().unwrap();
            if name.ends_with(".csv") {
                real.insert((dir, name));
            }
        }
    }
    let ours: HashSet<_> = FILES.iter().map(|f| (f.dir, f.name.to_string())).collect();
    assert_eq!(ours, real);
    for f in &FILES {
        let text = std::fs::read_to_string(tiny.join(f.dir).join(f.name)).unwrap();
        assert_eq!(text.lines().next(), Some(f.header), "{}", f.name);
    }
}

#[test]
fn persons_follow_ldbcs_counts() {
    assert_eq!(persons_for_scale(0.003), 222);
    assert_eq!(persons_for_scale(0.1), 1528);
    assert_eq!(persons_for_scale(1.0), 9892);
    let mut last = 0;
    for k in 0..60 {
        let p = persons_for_scale(0.0005 * 1.3f64.powi(k));
        assert!(p >= last, "monotone");
        last = p;
    }
    assert!(Snb { scale: 0.0 }.validate().is_err());
    assert!(Snb { scale: 1e-6 }.validate().is_err());
    assert!(Snb { scale: f64::NAN }.validate().is_err());
}

fn num(s: &str) -> i64 {
    s.parse().unwrap_or_else(|_| panic!("not a number: {s:?}"))
}

/// The node file of an edge header's end: `Comment.id` → `comment_0_0.csv`.
fn node_file(end: &str) -> String {
    format!("{}_0_0.csv", end.trim_end_matches(".id").to_lowercase())
}

#[test]
fn scale_0_003_is_consistent() {
    let (dir, summary) = generate(0.003, 42, 2);
    let data = load(dir.path());
    for (k, f) in FILES.iter().enumerate() {
        assert_eq!(data[f.name].0, f.header);
        assert_eq!(data[f.name].1.len() as u64, summary.rows[k], "{}", f.name);
    }
    // Ids are unique per kind, and posts and comments share the Message id space.
    let mut ids: HashMap<String, HashSet<i64>> = HashMap::new();
    for f in FILES.iter().filter(|f| f.header.starts_with("id|")) {
        let set: HashSet<i64> = data[f.name].1.iter().map(|r| num(&r[0])).collect();
        assert_eq!(set.len(), data[f.name].1.len(), "duplicate ids in {}", f.name);
        ids.insert(f.name.to_string(), set);
    }
    assert!(ids["post_0_0.csv"].is_disjoint(&ids["comment_0_0.csv"]));
    // Every edge end exists.
    for f in FILES.iter().filter(|f| !f.header.starts_with("id|")) {
        let ends: Vec<&str> = f.header.split('|').take(2).collect();
        for row in &data[f.name].1 {
            for (k, end) in ends.iter().enumerate() {
                let file = node_file(end);
                assert!(ids[&file].contains(&num(&row[k])), "{}: {} {} not in {file}", f.name, end, row[k]);
            }
        }
    }
    // One row per node in the to-one relationships.
    for (edge, node) in [
        ("person_isLocatedIn_place_0_0.csv", "person_0_0.csv"),
        ("post_hasCreator_person_0_0.csv", "post_0_0.csv"),
        ("post_isLocatedIn_place_0_0.csv", "post_0_0.csv"),
        ("forum_containerOf_post_0_0.csv", "post_0_0.csv"),
        ("comment_hasCreator_person_0_0.csv", "comment_0_0.csv"),
        ("comment_isLocatedIn_place_0_0.csv", "comment_0_0.csv"),
        ("forum_hasModerator_person_0_0.csv", "forum_0_0.csv"),
        ("organisation_isLocatedIn_place_0_0.csv", "organisation_0_0.csv"),
        ("tag_hasType_tagclass_0_0.csv", "tag_0_0.csv"),
    ] {
        let col = usize::from(edge.starts_with("forum_containerOf"));
        let heads: HashSet<i64> = data[edge].1.iter().map(|r| num(&r[col])).collect();
        assert_eq!(heads.len(), data[edge].1.len(), "{edge}: one row per node");
        assert_eq!(heads, ids[node], "{edge} covers {node}");
    }
    let replies = data["comment_replyOf_post_0_0.csv"].1.len() + data["comment_replyOf_comment_0_0.csv"].1.len();
    assert_eq!(replies, data["comment_0_0.csv"].1.len(), "every comment replies to exactly one message");

    // Place types: persons in cities, messages in countries, cities in countries in continents.
    let place_type: HashMap<i64, &str> = data["place_0_0.csv"].1.iter().map(|r| (num(&r[0]), r[3].as_str())).collect();
    let ty =
        |file: &str, col: usize| -> HashSet<&str> { data[file].1.iter().map(|r| place_type[&num(&r[col])]).collect() };
    assert_eq!(ty("person_isLocatedIn_place_0_0.csv", 1), HashSet::from(["city"]));
    assert_eq!(ty("post_isLocatedIn_place_0_0.csv", 1), HashSet::from(["country"]));
    assert_eq!(ty("comment_isLocatedIn_place_0_0.csv", 1), HashSet::from(["country"]));
    for r in &data["place_isPartOf_place_0_0.csv"].1 {
        let pair = (place_type[&num(&r[0])], place_type[&num(&r[1])]);
        assert!(pair == ("city", "country") || pair == ("country", "continent"), "{pair:?}");
    }
    let org_type: HashMap<i64, &str> =
        data["organisation_0_0.csv"].1.iter().map(|r| (num(&r[0]), r[1].as_str())).collect();
    for r in &data["organisation_isLocatedIn_place_0_0.csv"].1 {
        let want = if org_type[&num(&r[0])] == "company" { "country" } else { "city" };
        assert_eq!(place_type[&num(&r[1])], want);
    }
    for (file, want) in
        [("person_studyAt_organisation_0_0.csv", "university"), ("person_workAt_organisation_0_0.csv", "company")]
    {
        assert!(data[file].1.iter().all(|r| org_type[&num(&r[1])] == want), "{file}");
    }

    check_dates(&data);

    // About the counts of the LDBC tiny data set (222 persons, 825 KNOWS, 5,924 posts, 2,218 comments, 805 forums).
    let n = |f: &str| data[f].1.len() as f64;
    assert_eq!(n("person_0_0.csv"), 222.0);
    for (file, tiny) in [
        ("person_knows_person_0_0.csv", 825.0),
        ("post_0_0.csv", 5924.0),
        ("comment_0_0.csv", 2218.0),
        ("forum_0_0.csv", 805.0),
        ("forum_hasMember_person_0_0.csv", 3584.0),
        ("person_hasInterest_tag_0_0.csv", 4777.0),
    ] {
        assert!((0.6..1.6).contains(&(n(file) / tiny)), "{file}: {} rows, the tiny data set has {tiny}", n(file));
    }
    // KNOWS degrees are skewed: the largest is several times the mean.
    let mut degree: HashMap<i64, u32> = HashMap::new();
    for r in &data["person_knows_person_0_0.csv"].1 {
        assert!(num(&r[0]) < num(&r[1]), "each KNOWS once, smaller id first");
        *degree.entry(num(&r[0])).or_default() += 1;
        *degree.entry(num(&r[1])).or_default() += 1;
    }
    let max = *degree.values().max().unwrap() as f64;
    assert!(max > 3.0 * 2.0 * n("person_knows_person_0_0.csv") / 222.0, "largest degree {max}");
}

/// Dates: everything after its persons joined, members after the forum opened, posts after the forum and their
/// creator, comments after what they reply to, likes after the message, KNOWS after both persons.
fn check_dates(data: &HashMap<&'static str, (String, Table)>) {
    let dates = |file: &str, col: usize| -> HashMap<i64, i64> {
        data[file].1.iter().map(|r| (num(&r[0]), num(&r[col]))).collect()
    };
    let person = dates("person_0_0.csv", 5);
    let forum = dates("forum_0_0.csv", 2);
    let mut message = dates("post_0_0.csv", 2);
    let post_ids: HashSet<i64> = message.keys().copied().collect();
    message.extend(dates("comment_0_0.csv", 1));
    let edges = |file: &str| data[file].1.iter().map(|r| r.iter().map(|f| num(f)).collect::<Vec<i64>>());
    for r in edges("person_knows_person_0_0.csv") {
        assert!(r[2] > person[&r[0]] && r[2] > person[&r[1]], "knows {r:?}");
    }
    for r in edges("forum_hasModerator_person_0_0.csv") {
        assert!(forum[&r[0]] >= person[&r[1]], "moderator {r:?}");
    }
    let mut joined = HashMap::new();
    for r in edges("forum_hasMember_person_0_0.csv") {
        assert!(r[2] >= forum[&r[0]] && r[2] >= person[&r[1]], "member {r:?}");
        joined.insert((r[0], r[1]), r[2]);
    }
    let moderator: HashMap<i64, i64> = edges("forum_hasModerator_person_0_0.csv").map(|r| (r[0], r[1])).collect();
    let creator: HashMap<i64, i64> = edges("post_hasCreator_person_0_0.csv")
        .chain(edges("comment_hasCreator_person_0_0.csv"))
        .map(|r| (r[0], r[1]))
        .collect();
    let mut forum_of = HashMap::new();
    for r in edges("forum_containerOf_post_0_0.csv") {
        let (f, p) = (r[0], r[1]);
        forum_of.insert(p, f);
        let who = creator[&p];
        assert!(message[&p] > forum[&f] && message[&p] > person[&who], "post {p}");
        assert!(who == moderator[&f] || message[&p] >= joined[&(f, who)], "post {p} by a participant after joining");
    }
    let parent: HashMap<i64, i64> = edges("comment_replyOf_post_0_0.csv")
        .chain(edges("comment_replyOf_comment_0_0.csv"))
        .map(|r| (r[0], r[1]))
        .collect();
    for (&c, &p) in &parent {
        assert!(message[&c] > message[&p], "comment {c} after {p}");
        assert!(message[&c] > person[&creator[&c]]);
        let mut root = p;
        while !post_ids.contains(&root) {
            root = parent[&root];
        }
        let f = forum_of[&root];
        let who = creator[&c];
        assert!(who == moderator[&f] || message[&c] >= joined[&(f, who)], "comment {c} by a participant");
    }
    for r in edges("person_likes_post_0_0.csv").chain(edges("person_likes_comment_0_0.csv")) {
        assert!(r[2] > message[&r[1]] && r[2] > person[&r[0]], "like {r:?}");
        assert_ne!(creator[&r[1]], r[0], "nobody likes their own message");
    }
}

#[test]
fn same_seed_same_bytes_whatever_the_thread_count() {
    let read_all = |dir: &Path| -> Vec<Vec<u8>> {
        FILES.iter().map(|f| std::fs::read(dir.join(f.dir).join(f.name)).unwrap()).collect()
    };
    let (a, _) = generate(0.003, 7, 1);
    let (b, _) = generate(0.003, 7, 3);
    let (c, _) = generate(0.003, 8, 2);
    let (a, b, c) = (read_all(a.path()), read_all(b.path()), read_all(c.path()));
    for (k, f) in FILES.iter().enumerate() {
        assert!(a[k] == b[k], "{} differs with the thread count", f.name);
        if f.dir == "dynamic" {
            assert!(a[k] != c[k], "{}: another seed should give other data", f.name);
        } else {
            assert!(a[k] == c[k], "{}: static data does not depend on the seed", f.name);
        }
    }
}

#[test]
fn activity_grows_with_scale() {
    let (_dir, small) = generate(0.003, 1, 0);
    let (_dir, large) = generate(0.01, 1, 0);
    let k = |name: &str| FILES.iter().position(|f| f.name == name).unwrap();
    let per_person = |s: &SnbSummary, name: &str| s.rows[k(name)] as f64 / s.persons as f64;
    assert!(large.persons > small.persons);
    for name in ["person_knows_person_0_0.csv", "comment_0_0.csv"] {
        assert!(per_person(&large, name) > per_person(&small, name), "{name} per person grows");
    }
}
