//! Passwords verified lately, so that a driver opening a pool of connections, or reconnecting, does not pay
//! an argon2 check (tens of milliseconds of a core, two at a time) for every log-on of the same credentials.
//!
//! Only digests are kept: a keyed BLAKE2b of the user, the password and the stored hash it was checked against,
//! under a key drawn at start. A changed password or a re-created user has another stored hash, so its entries
//! stop matching at once; a wrong password never matches and takes the full check, so guessing gains nothing.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use blake2::digest::{FixedOutput, Mac};
use blake2::Blake2bMac;
use parking_lot::Mutex;

/// How long a verified password is trusted without checking it again.
const TTL: Duration = Duration::from_secs(60);
const CAPACITY: usize = 1024;

type Digest = [u8; 32];

pub struct PasswordCache {
    key: [u8; 32],
    verified: Mutex<HashMap<Digest, Instant>>,
}

impl Default for PasswordCache {
    fn default() -> Self {
        use rand::RngCore;
        let mut key = [0u8; 32];
        rand::rngs::OsRng.fill_bytes(&mut key);
        PasswordCache { key, verified: Mutex::default() }
    }
}

impl PasswordCache {
    fn digest(&self, user: &str, password: &str, stored_hash: &str) -> Digest {
        let mut mac =
            Blake2bMac::<blake2::digest::consts::U32>::new_from_slice(&self.key).expect("a 32-byte key suits BLAKE2b");
        // Lengths first, so that no two different triples feed the same bytes.
        for part in [user, password, stored_hash] {
            mac.update(&(part.len() as u64).to_le_bytes());
            mac.update(part.as_bytes());
        }
        mac.finalize_fixed().into()
    }

    /// Whether `password` was verified for `user` against `stored_hash` within the last [`TTL`].
    pub fn contains(&self, user: &str, password: &str, stored_hash: &str) -> bool {
        let digest = self.digest(user, password, stored_hash);
        self.verified.lock().get(&digest).is_some_and(|at| at.elapsed() < TTL)
    }

    /// Notes that `password` was just verified for `user` against `stored_hash`.
    pub fn insert(&self, user: &str, password: &str, stored_hash: &str) {
        let digest = self.digest(user, password, stored_hash);
        let mut verified = self.verified.lock();
        if verified.len() >= CAPACITY {
            verified.retain(|_, at| at.elapsed() < TTL);
            if verified.len() >= CAPACITY {
                verified.clear();
            }
        }
        verified.insert(digest, Instant::now());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_same_user_password_and_hash_match() {
        let cache = PasswordCache::default();
        cache.insert("neo4j", "secret", "$argon2id$a");
        assert!(cache.contains("neo4j", "secret", "$argon2id$a"));
        assert!(!cache.contains("neo4j", "Secret", "$argon2id$a"));
        assert!(!cache.contains("neo4j", "secret", "$argon2id$b"), "a changed password's hash");
        assert!(!cache.contains("neo4", "jsecret", "$argon2id$a"), "the split between the parts counts");
        // Another server's cache (another key) does not know it.
        let other = PasswordCache::default();
        assert_ne!(other.digest("neo4j", "secret", "h"), cache.digest("neo4j", "secret", "h"));
    }
}
