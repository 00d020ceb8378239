//! Messages: posts, the comment trees under them and their likes.
//!
//! A post's comments reply to the post or to an earlier comment of the same tree, half and half; a comment comes
//! after what it replies to and after its creator joined the forum, a like after the message and after the liker
//! joined. Creators and likers are the forum's participants (its moderator and members). Messages are located in
//! the creator's country with the creator's IP address, or, one time in ten, somewhere else (travelling).

use plexus::random::SplitMix;

use super::forums::{dated_id, poisson};
use super::persons::{country_ip, Network, DAY};
use super::rows::{row, Chunk, Ip};
use super::schema::F;
use super::text;

/// Likes per message, times the square root of the forum's member count: more members, more likes, but a
/// crowded forum's messages are each seen by fewer of them. About the tiny data set's rates (0.1 per photo, 0.74
/// per text post, 0.28 per comment).
const PHOTO_LIKES: f64 = 0.06;
const POST_LIKES: f64 = 0.27;
const COMMENT_LIKES: f64 = 0.1;
/// Share of comments that are more than a word or two (and tagged).
const LONG_COMMENTS: f64 = 0.6;

pub(crate) enum Message {
    Photo,
    Text { tags: Vec<u32> },
}

/// Writes messages into a chunk, numbering them from `next_message`.
pub(crate) struct Writer<'a> {
    pub net: &'a Network<'a>,
    pub c: &'a mut Chunk,
    pub rng: SplitMix,
    pub next_message: u64,
    tree: Vec<(u64, i64, u32)>,
    likers: Vec<u32>,
    text: String,
}

/// A delay between `min` and `max` milliseconds, log-uniform: most are short.
fn delay(rng: &mut SplitMix, min: i64, max: i64) -> i64 {
    (min as f64 * (max as f64 / min as f64).powf(rng.unit())) as i64
}

impl<'a> Writer<'a> {
    pub(crate) fn new(net: &'a Network<'a>, c: &'a mut Chunk, rng: SplitMix) -> Writer<'a> {
        Writer { net, c, rng, next_message: 0, tree: Vec::new(), likers: Vec::new(), text: String::new() }
    }

    fn message_id(&mut self, date: i64) -> u64 {
        self.next_message += 1;
        dated_id(self.next_message - 1, date)
    }

    /// Where person `p` writes from: (country place id, IP address).
    fn whereabouts(&mut self, p: u32) -> (u64, u32) {
        let person = &self.net.persons[p as usize];
        if self.rng.unit() < 0.9 {
            (person.country as u64, person.ip)
        } else {
            let country = self.net.world.random_country(&mut self.rng);
            (country as u64, country_ip(country, &mut self.rng))
        }
    }

    /// Writes a post by `participants[creator]` in `forum` at `date`, its likes and `comments` comments.
    pub(crate) fn thread(
        &mut self,
        forum: u64,
        participants: &[(u32, i64)],
        creator: usize,
        date: i64,
        message: Message,
        comments: u32,
    ) {
        let net = self.net;
        let (author, _) = participants[creator];
        let person = net.persons[author as usize];
        let post = self.message_id(date);
        let (place, ip) = self.whereabouts(author);
        let browser = text::BROWSERS[person.browser as usize].0;
        let members = (participants.len() as f64 - 1.0).sqrt();
        let tags = match message {
            Message::Photo => {
                row!(self.c, F::Post; post, format!("photo{post}.jpg"), date, Ip(ip), browser, "", "", 0u64);
                self.likes(F::PersonLikesPost, post, date, author, participants, PHOTO_LIKES * members);
                Vec::new()
            }
            Message::Text { tags } => {
                let country = &net.world.countries[person.country as usize];
                let language = match self.rng.below(10) {
                    0..=6 => country.lang,
                    7 if person.extra_language != u8::MAX => text::EXTRA_LANGUAGES[person.extra_language as usize],
                    _ => "en",
                };
                self.text.clear();
                let len = 40 + self.rng.below(200) as usize;
                text::about(&mut self.rng, &net.world.tags[tags[0] as usize], len, &mut self.text);
                let length = self.text.len() as u64;
                row!(self.c, F::Post; post, "", date, Ip(ip), browser, language, self.text, length);
                for &t in &tags {
                    row!(self.c, F::PostHasTagTag; post, t);
                }
                self.likes(F::PersonLikesPost, post, date, author, participants, POST_LIKES * members);
                tags
            }
        };
        let author_id = net.id(author);
        row!(self.c, F::ForumContainerOfPost; forum, post);
        row!(self.c, F::PostHasCreatorPerson; post, author_id);
        row!(self.c, F::PostIsLocatedInPlace; post, place);

        self.tree.clear();
        for _ in 0..comments {
            let (who, joined) = participants[self.rng.below(participants.len() as u64) as usize];
            // (id, date) of the message replied to: the post, or an earlier comment.
            let parent = if self.tree.is_empty() || self.rng.below(2) == 0 {
                None
            } else {
                Some(self.tree[self.rng.below(self.tree.len() as u64) as usize])
            };
            let after = parent.map_or(date, |p| p.1).max(joined);
            let created = after + delay(&mut self.rng, 1000, DAY);
            let comment = self.message_id(created);
            let (place, ip) = self.whereabouts(who);
            let browser = text::BROWSERS[net.persons[who as usize].browser as usize].0;
            self.text.clear();
            let topic = if tags.is_empty() || self.rng.unit() >= LONG_COMMENTS {
                self.text.push_str(text::SHORT_COMMENTS[self.rng.below(text::SHORT_COMMENTS.len() as u64) as usize]);
                None
            } else {
                let topic = tags[self.rng.below(tags.len() as u64) as usize];
                let len = 20 + self.rng.below(120) as usize;
                text::about(&mut self.rng, &net.world.tags[topic as usize], len, &mut self.text);
                Some(topic)
            };
            let length = self.text.len() as u64;
            row!(self.c, F::Comment; comment, created, Ip(ip), browser, self.text, length);
            row!(self.c, F::CommentHasCreatorPerson; comment, net.id(who));
            row!(self.c, F::CommentIsLocatedInPlace; comment, place);
            match parent {
                None => row!(self.c, F::CommentReplyOfPost; comment, post),
                Some((parent, _, _)) => row!(self.c, F::CommentReplyOfComment; comment, parent),
            }
            if let Some(topic) = topic {
                row!(self.c, F::CommentHasTagTag; comment, topic);
                if self.rng.unit() < 0.6 {
                    let rank = (super::static_data::TAGS as f64).powf(self.rng.unit()) as u64 - 1;
                    let other = net.world.popular_tag(rank, 0);
                    if other != topic {
                        row!(self.c, F::CommentHasTagTag; comment, other);
                    }
                }
            }
            self.likes(F::PersonLikesComment, comment, created, who, participants, COMMENT_LIKES * members);
            self.tree.push((comment, created, who));
        }
    }

    /// Likes of message `id` (created at `date` by `author`) by distinct participants other than the author.
    fn likes(&mut self, file: F, id: u64, date: i64, author: u32, participants: &[(u32, i64)], rate: f64) {
        let n = poisson(&mut self.rng, rate);
        self.likers.clear();
        for _ in 0..n {
            let (p, joined) = participants[self.rng.below(participants.len() as u64) as usize];
            if p == author || self.likers.contains(&p) {
                continue;
            }
            self.likers.push(p);
            let at = date.max(joined) + delay(&mut self.rng, 60_000, 7 * DAY);
            row!(self.c, file; self.net.id(p), id, at);
        }
    }
}
