//! Forums: every person's wall, photo albums and groups, with their members and tags, and the plan of how many
//! posts and comments each gets.
//!
//! Rates are those of the LDBC tiny data set (scale 0.003), where they are per person or per friend, so activity
//! grows with the KNOWS degree as scale grows:
//!
//! * Wall: one per person, moderated by them, tagged with all their interests, members are their friends (joined
//!   when they met). The owner writes text posts, 0.105 per friend; each gets comments, 1.2 per member.
//! * Albums: 2.55 per person, one of their interests as tag, each friend a member with probability 0.35; 1 to 19
//!   photos (posts with an image file and no text) by the owner, a second apart, not commented.
//! * Groups: 0.077 per person, about a tag of the moderator's, 3.8 times the mean degree members (half the
//!   moderator's friends at most, the rest anyone); 3.4 text posts by members, 0.4 comments per member each.

use plexus::random::SplitMix;

use super::messages::{Message, Writer};
use super::persons::{person_id, Network, DAY, END, HOUR};
use super::rows::row;
use super::schema::F;
use super::text;
use super::{stream_rng, Stream};

const WALL_POSTS_PER_FRIEND: f64 = 0.105;
const WALL_COMMENTS_PER_MEMBER: f64 = 1.2;
const ALBUMS: f64 = 2.55;
const ALBUM_MEMBER_SHARE: f64 = 0.35;
const GROUPS: f64 = 0.077;
const GROUP_MEMBERS_PER_DEGREE: f64 = 3.8;
const GROUP_POSTS: f64 = 3.4;
const GROUP_COMMENTS_PER_MEMBER: f64 = 0.4;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    Wall,
    Album,
    Group,
}

/// How many posts (and comments under each text post) a forum gets: a function of (seed, person) only, drawn
/// once to count ids and again to write.
#[derive(Clone, Debug)]
pub(crate) struct ForumPlan {
    pub kind: Kind,
    pub members: u32,
    pub posts: u32,
    /// Comments under each post (empty for albums).
    pub comments: Vec<u32>,
}

/// A Poisson draw (normal approximation above 30).
pub(crate) fn poisson(rng: &mut SplitMix, lambda: f64) -> u32 {
    if lambda <= 0.0 {
        return 0;
    }
    if lambda < 30.0 {
        let limit = (-lambda).exp();
        let (mut k, mut p) = (0, rng.unit());
        while p > limit {
            k += 1;
            p *= rng.unit();
        }
        return k;
    }
    let (u, v) = (1.0 - rng.unit(), rng.unit());
    let z = (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos();
    (lambda + lambda.sqrt() * z).round().max(0.0) as u32
}

/// Person `i`'s forums.
pub(crate) fn plan(net: &Network, i: u32, out: &mut Vec<ForumPlan>) {
    out.clear();
    let mut rng = stream_rng(net.seed, Stream::Plan, i as u64);
    let degree = net.persons[i as usize].degree as f64;
    let posts = poisson(&mut rng, WALL_POSTS_PER_FRIEND * degree);
    let comments = (0..posts).map(|_| poisson(&mut rng, WALL_COMMENTS_PER_MEMBER * degree)).collect();
    out.push(ForumPlan { kind: Kind::Wall, members: degree as u32, posts, comments });
    for _ in 0..poisson(&mut rng, ALBUMS) {
        out.push(ForumPlan { kind: Kind::Album, members: 0, posts: 1 + rng.below(19) as u32, comments: Vec::new() });
    }
    for _ in 0..poisson(&mut rng, GROUPS) {
        let members = poisson(&mut rng, GROUP_MEMBERS_PER_DEGREE * net.mean_degree).min(net.persons.len() as u32 - 1);
        let posts = poisson(&mut rng, GROUP_POSTS);
        let comments = (0..posts).map(|_| poisson(&mut rng, GROUP_COMMENTS_PER_MEMBER * members as f64)).collect();
        out.push(ForumPlan { kind: Kind::Group, members, posts, comments });
    }
}

/// Forums and messages in a plan.
pub(crate) fn count(plans: &[ForumPlan]) -> (u64, u64) {
    let messages = plans.iter().map(|p| p.posts as u64 + p.comments.iter().map(|&c| c as u64).sum::<u64>()).sum();
    (plans.len() as u64, messages)
}

/// A forum's id: a running number plus a block number (the sixth of the period) shifted left by 36 bits, as the
/// ids of LDBC's forums and messages look.
pub(crate) fn dated_id(seq: u64, date: i64) -> u64 {
    let block = ((date - super::persons::START) * 6 / (END - super::persons::START)).clamp(0, 5) as u64;
    (block << 36) | seq
}

/// Reused buffers for one worker.
#[derive(Default)]
pub(crate) struct Scratch {
    plans: Vec<ForumPlan>,
    friends: Vec<(u32, i64)>,
    interests: Vec<u32>,
    /// (person, join date); the moderator first, with the forum's creation date, not written as a member.
    participants: Vec<(u32, i64)>,
    tags: Vec<u32>,
}

/// Writes person `i`'s forums, their members and tags, and everything posted in them. `forum_seq` and
/// `message_seq` are the first running numbers of this person's forums and messages.
pub(crate) fn write(w: &mut Writer, i: u32, forum_seq: u64, message_seq: u64, s: &mut Scratch) {
    let net = w.net;
    let world = net.world;
    let me = net.persons[i as usize];
    let my_id = person_id(i, me.creation);
    plan(net, i, &mut s.plans);
    net.friends(i, &mut s.friends);
    net.interests(i, &mut s.interests);
    w.next_message = message_seq;
    let mut rng = stream_rng(net.seed, Stream::Forums, i as u64);
    let names = text::names_for(world.countries[me.country as usize].lang);
    let name = format!("{} {}", names.first[me.first_name as usize], names.last[me.last_name as usize]);
    let mut albums = 0;
    let plans = std::mem::take(&mut s.plans);
    for (k, plan) in plans.iter().enumerate() {
        let created = match plan.kind {
            Kind::Wall => me.creation + 10_000,
            _ => me.creation + 10_000 + (rng.unit() * (END - me.creation) as f64 / 2.0) as i64,
        };
        let forum = dated_id(forum_seq + k as u64, created);
        s.participants.clear();
        s.participants.push((i, created));
        s.tags.clear();
        let title = match plan.kind {
            Kind::Wall => {
                s.tags.extend_from_slice(&s.interests);
                s.participants.extend_from_slice(&s.friends);
                format!("Wall of {name}")
            }
            Kind::Album => {
                s.tags.push(s.interests[rng.below(s.interests.len() as u64) as usize]);
                for &(f, met) in &s.friends {
                    if rng.unit() < ALBUM_MEMBER_SHARE {
                        s.participants.push((f, met.max(created) + rng.below(DAY as u64) as i64));
                    }
                }
                albums += 1;
                format!("Album {} of {name}", albums - 1)
            }
            Kind::Group => {
                let topic = s.interests[rng.below(s.interests.len() as u64) as usize];
                s.tags.push(topic);
                group_members(net, i, plan.members, created, &s.friends, &mut rng, &mut s.participants);
                format!("Group for {} in {}", world.tags[topic as usize], world.cities[me.city as usize].name)
            }
        };
        let c = &mut *w.c;
        row!(c, F::Forum; forum, title, created);
        row!(c, F::ForumHasModeratorPerson; forum, my_id);
        for &t in &s.tags {
            row!(c, F::ForumHasTagTag; forum, t);
        }
        for &(p, joined) in &s.participants[1..] {
            row!(c, F::ForumHasMemberPerson; forum, net.id(p), joined);
        }

        for post in 0..plan.posts as usize {
            let (creator, date, message) = match plan.kind {
                Kind::Wall => {
                    let date = created + HOUR + (rng.unit() * (END - created - HOUR) as f64) as i64;
                    let tags = post_tags(&mut rng, &s.interests, None);
                    (0, date, Message::Text { tags })
                }
                Kind::Album => (0, created + 1000 * (post as i64 + 1), Message::Photo),
                Kind::Group => {
                    let who = if s.participants.len() > 1 { 1 + rng.below(s.participants.len() as u64 - 1) } else { 0 };
                    let from = s.participants[who as usize].1 + HOUR;
                    let date = from + (rng.unit() * (END - from).max(HOUR) as f64) as i64;
                    let tags = post_tags(&mut rng, &[], Some((net, s.tags[0])));
                    (who as usize, date, Message::Text { tags })
                }
            };
            let comments = plan.comments.get(post).copied().unwrap_or(0);
            w.thread(forum, &s.participants, creator, date, message, comments);
        }
    }
    s.plans = plans;
}

/// One to five of the owner's interests for a wall post, or a group's topic and up to two popular tags.
fn post_tags(rng: &mut SplitMix, interests: &[u32], group: Option<(&Network, u32)>) -> Vec<u32> {
    let mut tags = Vec::with_capacity(3);
    match group {
        None => {
            for _ in 0..1 + rng.below(5) {
                let t = interests[rng.below(interests.len() as u64) as usize];
                if !tags.contains(&t) {
                    tags.push(t);
                }
            }
        }
        Some((net, topic)) => {
            tags.push(topic);
            for _ in 0..rng.below(3) {
                let rank = (super::static_data::TAGS as f64).powf(rng.unit()) as u64 - 1;
                let t = net.world.popular_tag(rank, 0);
                if !tags.contains(&t) {
                    tags.push(t);
                }
            }
        }
    }
    tags
}

/// Fills a group with `target` members: up to half of them the moderator's friends, the rest random persons,
/// each joining after the group was created and after joining the network.
fn group_members(
    net: &Network,
    moderator: u32,
    target: u32,
    created: i64,
    friends: &[(u32, i64)],
    rng: &mut SplitMix,
    out: &mut Vec<(u32, i64)>,
) {
    let join = |p: u32, rng: &mut SplitMix| {
        created.max(net.persons[p as usize].creation + HOUR) + rng.below(30 * DAY as u64) as i64
    };
    for &(f, _) in friends {
        if out.len() as u32 > target / 2 {
            break;
        }
        if rng.below(2) == 0 {
            out.push((f, join(f, rng)));
        }
    }
    let n = net.persons.len() as u64;
    let mut attempts = 0;
    while (out.len() as u32) <= target && attempts < 4 * target as u64 {
        attempts += 1;
        let p = rng.below(n) as u32;
        if p != moderator && !out.iter().any(|&(q, _)| q == p) {
            out.push((p, join(p, rng)));
        }
    }
}
