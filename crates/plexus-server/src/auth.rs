//! Users, roles and password checks. Users live in `users.json` in the data directory, each with an argon2id
//! password hash (PHC string) and a role; the file is rewritten atomically and readable only by its owner.

use std::collections::{BTreeMap, HashMap};
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use argon2::password_hash::{PasswordHash, PasswordHasher, PasswordVerifier, SaltString};
use argon2::Argon2;
use parking_lot::RwLock;
use serde::{Deserialize, Serialize};

use crate::file_watch::{FileWatch, Seen};
use crate::password_cache::PasswordCache;

/// The user created on first start, named as in Neo4j so that tools' defaults work.
pub const INITIAL_USER: &str = "neo4j";

pub const USERS_FILE: &str = "users.json";

/// The users file of the data directory `data`, whole, for a backup to carry (`None` where there is none: a
/// database that never served, or served without authentication).
pub fn users_file_contents(data: &Path) -> std::io::Result<Option<Vec<u8>>> {
    match fs::read(data.join(USERS_FILE)) {
        Ok(bytes) => Ok(Some(bytes)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

/// What a user may do.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// Runs read-only queries.
    Reader,
    /// Reads and changes data.
    Writer,
    /// Everything, including schema changes (indexes, constraints).
    Admin,
}

impl Role {
    /// The role's name, as `parse` and the command line take it.
    pub fn name(self) -> &'static str {
        match self {
            Role::Reader => "reader",
            Role::Writer => "writer",
            Role::Admin => "admin",
        }
    }

    pub fn parse(s: &str) -> Option<Role> {
        match s.to_ascii_lowercase().as_str() {
            "reader" => Some(Role::Reader),
            "writer" => Some(Role::Writer),
            "admin" => Some(Role::Admin),
            _ => None,
        }
    }
}

#[derive(Clone, Debug, Serialize, Deserialize)]
struct StoredUser {
    role: Role,
    /// argon2id PHC string.
    password_hash: String,
}

#[derive(Debug, thiserror::Error)]
pub enum AuthError {
    #[error("the client is unauthorized due to authentication failure")]
    BadCredentials,
    #[error("unsupported authentication scheme '{0}': use 'basic' with a user name and password")]
    UnsupportedScheme(String),
    #[error("cannot read or write the user file {path}: {message}")]
    Io { path: String, message: String },
    #[error("user '{0}' already exists")]
    UserExists(String),
    #[error("user '{0}' does not exist")]
    NoSuchUser(String),
    #[error("a password must not be empty or only white space")]
    EmptyPassword,
    #[error("a user name must not be empty, nor hold spaces, ':' or control characters: {0:?}")]
    InvalidName(String),
    #[error("'{0}' is the last admin: add another admin first, or nobody could manage users and schema")]
    LastAdmin(String),
    /// The user failed to log on too many times in a row and is locked for a while: no password is checked.
    #[error("The client has provided incorrect authentication details too many times in a row.")]
    TooManyAttempts { lock_time: Duration },
}

/// How failed log-ons lock a user, as Neo4j's `dbms.security.auth_max_failed_attempts` and
/// `dbms.security.auth_lock_time` do: after `max_failed_attempts` failures in a row, every attempt within
/// `lock_time` of the last failure is refused at once, without checking the password (so guessing costs the
/// server no password hashing), even with the right password. A success resets the count.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Lockout {
    /// 0: never lock.
    pub max_failed_attempts: u32,
    pub lock_time: Duration,
}

impl Default for Lockout {
    fn default() -> Self {
        Lockout { max_failed_attempts: 3, lock_time: Duration::from_secs(5) }
    }
}

/// A user's failed log-ons in a row.
struct Failures {
    count: u32,
    last: Instant,
}

/// A running password check, counted in [`Auth::hashing`] while it lives.
struct HashingSlot<'a>(&'a Auth);

impl Drop for HashingSlot<'_> {
    fn drop(&mut self) {
        *self.0.hashing.lock() -= 1;
        self.0.hashing_done.notify_one();
    }
}

/// The users of one server. With authentication off every client is an admin.
pub struct Auth {
    enabled: bool,
    file: Option<PathBuf>,
    users: RwLock<BTreeMap<String, StoredUser>>,
    /// When the file was last read, so changes made by `plexus user` while the server runs take effect.
    loaded: parking_lot::Mutex<Option<FileStamp>>,
    /// Says when the file may have changed, so that most checks cost no `stat`; `None` where the kernel offers
    /// no watch (the stamp is then compared at every check).
    watch: Option<parking_lot::Mutex<FileWatch>>,
    /// Bumped whenever the users may have changed, so whoever caches a decision knows to make it again.
    generation: AtomicU64,
    lockout: Lockout,
    /// Failed log-ons of existing users (an unknown user costs no hashing and is not tracked).
    failures: parking_lot::Mutex<HashMap<String, Failures>>,
    /// Password checks running now, bounded by [`HASHING_SLOTS`].
    hashing: parking_lot::Mutex<usize>,
    hashing_done: parking_lot::Condvar,
    /// Passwords checked lately: a pool of connections logging on with them pays one argon2 check, not one each.
    verified: PasswordCache,
}

/// Password checks that run at once; more wait. A check costs tens of milliseconds of a core (argon2), so
/// parallel guesses could take every core, and a burst of them would all be checked before the first failures
/// lock the user: waiting, they find the lock (a log-on of many connections at once still goes through, a few
/// at a time).
const HASHING_SLOTS: usize = 2;

impl Auth {
    /// No authentication: every client is an admin.
    pub fn disabled() -> Auth {
        Auth {
            enabled: false,
            file: None,
            users: RwLock::default(),
            loaded: Default::default(),
            watch: None,
            generation: AtomicU64::new(0),
            lockout: Lockout::default(),
            failures: Default::default(),
            hashing: Default::default(),
            hashing_done: Default::default(),
            verified: Default::default(),
        }
    }

    /// Loads the users of `dir`, creating the initial admin user `neo4j` on first start with `initial_password`,
    /// or a generated password that is returned so the caller prints it once.
    pub fn open(dir: &Path, initial_password: Option<&str>) -> Result<(Auth, Option<String>), AuthError> {
        let file = dir.join(USERS_FILE);
        let io = |e: std::io::Error| AuthError::Io { path: file.display().to_string(), message: e.to_string() };
        let mut generated = None;
        let users = read_users(&file).map_err(io)?;
        let auth = Auth {
            enabled: true,
            file: Some(file.clone()),
            users: RwLock::new(users),
            // Watching before the first stamp is taken: a change between the two is then seen.
            watch: FileWatch::new(&file).map(parking_lot::Mutex::new),
            loaded: parking_lot::Mutex::new(modified(&file)),
            generation: AtomicU64::new(0),
            lockout: Lockout::default(),
            failures: Default::default(),
            hashing: Default::default(),
            hashing_done: Default::default(),
            verified: Default::default(),
        };
        if auth.users.read().is_empty() {
            let password = match initial_password {
                Some(p) => p.to_string(),
                None => {
                    let p = generate_password();
                    generated = Some(p.clone());
                    p
                }
            };
            auth.add_user(INITIAL_USER, &password, Role::Admin)?;
        }
        Ok((auth, generated))
    }

    /// Sets how failed log-ons lock a user.
    pub fn with_lockout(mut self, lockout: Lockout) -> Auth {
        self.lockout = lockout;
        self
    }

    pub fn enabled(&self) -> bool {
        self.enabled
    }

    /// Checks credentials; returns the user's role.
    pub fn authenticate(&self, scheme: &str, user: &str, password: &str) -> Result<Role, AuthError> {
        match self.authenticate_without_hashing(scheme, user, password) {
            Some(answer) => answer,
            None => self.check_password(user, password),
        }
    }

    /// The answer to a log-on when it takes no password hash (authentication off, an unknown user, a locked one,
    /// a password verified lately), or `None` when the password must be checked: [`Auth::authenticate`] then
    /// costs tens of milliseconds, which an event loop should not spend.
    pub fn authenticate_without_hashing(
        &self,
        scheme: &str,
        user: &str,
        password: &str,
    ) -> Option<Result<Role, AuthError>> {
        if !self.enabled {
            return Some(Ok(Role::Admin));
        }
        if scheme != "basic" {
            return Some(Err(AuthError::UnsupportedScheme(scheme.to_string())));
        }
        self.reload_if_changed();
        let Some(stored) = self.users.read().get(user).cloned() else { return Some(Err(AuthError::BadCredentials)) };
        if self.is_locked(user) {
            return Some(Err(AuthError::TooManyAttempts { lock_time: self.lockout.lock_time }));
        }
        if self.verified.contains(user, password, &stored.password_hash) {
            self.succeeded(user);
            return Some(Ok(stored.role));
        }
        None
    }

    /// Checks `password` against `user`'s hash, one of [`HASHING_SLOTS`] at a time.
    fn check_password(&self, user: &str, password: &str) -> Result<Role, AuthError> {
        let stored = self.users.read().get(user).cloned().ok_or(AuthError::BadCredentials)?;
        let verified = {
            let _slot = self.hashing_slot();
            // Failures checked while this one waited may have locked the user.
            if self.is_locked(user) {
                return Err(AuthError::TooManyAttempts { lock_time: self.lockout.lock_time });
            }
            let verified = PasswordHash::new(&stored.password_hash)
                .is_ok_and(|hash| Argon2::default().verify_password(password.as_bytes(), &hash).is_ok());
            // Counted before the slot is given back, so that the guess waiting for it sees this failure.
            if !verified {
                self.failed(user);
            }
            verified
        };
        if !verified {
            return Err(AuthError::BadCredentials);
        }
        self.succeeded(user);
        self.verified.insert(user, password, &stored.password_hash);
        Ok(stored.role)
    }

    /// A success ends a run of failures, checked or remembered.
    fn succeeded(&self, user: &str) {
        if self.lockout.max_failed_attempts > 0 {
            self.failures.lock().remove(user);
        }
    }

    /// Waits for one of the [`HASHING_SLOTS`]; it is given back when the guard drops.
    fn hashing_slot(&self) -> impl Drop + '_ {
        let mut running = self.hashing.lock();
        while *running >= HASHING_SLOTS {
            self.hashing_done.wait(&mut running);
        }
        *running += 1;
        HashingSlot(self)
    }

    /// Whether `user` failed too often in a row, the last time too recently.
    fn is_locked(&self, user: &str) -> bool {
        let Lockout { max_failed_attempts, lock_time } = self.lockout;
        max_failed_attempts > 0
            && self
                .failures
                .lock()
                .get(user)
                .is_some_and(|f| f.count >= max_failed_attempts && f.last.elapsed() < lock_time)
    }

    fn failed(&self, user: &str) {
        if self.lockout.max_failed_attempts == 0 {
            return;
        }
        // Whoever remembers a decision about this user makes it again: it may now be locked out.
        self.generation.fetch_add(1, Ordering::Release);
        let mut failures = self.failures.lock();
        let entry = failures.entry(user.to_string()).or_insert(Failures { count: 0, last: Instant::now() });
        entry.count = entry.count.saturating_add(1);
        entry.last = Instant::now();
    }

    pub fn add_user(&self, name: &str, password: &str, role: Role) -> Result<(), AuthError> {
        // Basic authentication joins name and password with ':', and a blank or invisible name cannot be told
        // apart from another.
        if name.trim().is_empty() || name.chars().any(|c| c == ':' || c.is_whitespace() || c.is_control()) {
            return Err(AuthError::InvalidName(name.to_string()));
        }
        let password_hash = hash_password(password)?;
        self.change(|users| {
            if users.contains_key(name) {
                return Err(AuthError::UserExists(name.to_string()));
            }
            users.insert(name.to_string(), StoredUser { role, password_hash });
            Ok(())
        })
    }

    pub fn set_password(&self, name: &str, password: &str) -> Result<(), AuthError> {
        let password_hash = hash_password(password)?;
        self.change(|users| {
            let user = users.get_mut(name).ok_or_else(|| AuthError::NoSuchUser(name.to_string()))?;
            user.password_hash = password_hash;
            Ok(())
        })
    }

    /// Gives a user another role, unless that takes the last admin's away (see [`Auth::remove_user`]).
    pub fn set_role(&self, name: &str, role: Role) -> Result<(), AuthError> {
        self.change(|users| {
            let admins = users.values().filter(|u| u.role == Role::Admin).count();
            let user = users.get_mut(name).ok_or_else(|| AuthError::NoSuchUser(name.to_string()))?;
            if user.role == Role::Admin && role != Role::Admin && admins == 1 {
                return Err(AuthError::LastAdmin(name.to_string()));
            }
            user.role = role;
            Ok(())
        })
    }

    /// The role of a user, if there is one of that name.
    pub fn role_of(&self, name: &str) -> Option<Role> {
        self.reload_if_changed();
        self.users.read().get(name).map(|u| u.role)
    }

    /// Removes a user, unless it is the last admin: with none left, nobody could manage users or schema (and
    /// with no user at all, the next start would create the initial one with a password nobody was shown).
    pub fn remove_user(&self, name: &str) -> Result<(), AuthError> {
        self.change(|users| {
            let user = users.get(name).ok_or_else(|| AuthError::NoSuchUser(name.to_string()))?;
            if user.role == Role::Admin && users.values().filter(|u| u.role == Role::Admin).count() == 1 {
                return Err(AuthError::LastAdmin(name.to_string()));
            }
            users.remove(name);
            Ok(())
        })
    }

    /// User names and roles.
    pub fn users(&self) -> Vec<(String, Role)> {
        self.reload_if_changed();
        self.users.read().iter().map(|(n, u)| (n.clone(), u.role)).collect()
    }

    /// Applies `edit` to the users as the file holds them now, and writes them back, all under a lock on the
    /// file that every process changing users takes (`plexus user` and servers on the same directory): two
    /// changes at once both land, and a change reported done stays done. Nothing is written when `edit` fails,
    /// nor over a file that cannot be read.
    fn change(
        &self,
        edit: impl FnOnce(&mut BTreeMap<String, StoredUser>) -> Result<(), AuthError>,
    ) -> Result<(), AuthError> {
        let Some(file) = &self.file else { return edit(&mut self.users.write()) };
        let io = |e: std::io::Error| AuthError::Io { path: file.display().to_string(), message: e.to_string() };
        let lock_path = file.with_extension("json.lock");
        let lock = fs::OpenOptions::new().create(true).truncate(false).write(true).open(&lock_path).map_err(io)?;
        lock.lock().map_err(io)?;
        let mut users = self.users.write();
        *users = read_users(file).map_err(io)?;
        *self.loaded.lock() = modified(file);
        // What was read may differ from what was cached: decisions cached on the old users are made again.
        self.generation.fetch_add(1, Ordering::Release);
        edit(&mut users)?;
        self.save(&users)
        // The file lock goes with `lock`, after the new file is in place.
    }

    fn save(&self, users: &BTreeMap<String, StoredUser>) -> Result<(), AuthError> {
        let Some(file) = &self.file else { return Ok(()) };
        let io = |e: std::io::Error| AuthError::Io { path: file.display().to_string(), message: e.to_string() };
        let tmp = file.with_extension(format!("json.tmp-{}", std::process::id()));
        let text = serde_json::to_vec_pretty(users).expect("users serialise");
        let written = (|| {
            use std::io::Write;
            let mut options = fs::OpenOptions::new();
            options.write(true).create(true).truncate(true);
            #[cfg(unix)]
            std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
            let mut f = options.open(&tmp)?;
            f.write_all(&text)?;
            f.sync_all()?;
            fs::rename(&tmp, file)
        })();
        if let Err(e) = written {
            // A full disk must not leave a temporary copy of the password hashes behind.
            let _ = fs::remove_file(&tmp);
            return Err(io(e));
        }
        *self.loaded.lock() = modified(file);
        self.generation.fetch_add(1, Ordering::Release);
        Ok(())
    }
}

impl Auth {
    /// A number that changes whenever a user is added, removed or given a new password or role, here or by
    /// another process through the users file. Costs one non-blocking `read` of a file watch when nothing changed
    /// (a `stat` of the file where there is no watch). It also moves with every failed log-on of a known user,
    /// which may lock that user out. HTTP connections remember the credentials they proved at a generation.
    pub fn generation(&self) -> u64 {
        self.reload_if_changed();
        self.generation.load(Ordering::Acquire)
    }

    fn reload_if_changed(&self) {
        let Some(file) = &self.file else { return };
        // The watch stays locked until the file is read: a check that finds the event already taken by another
        // then waits for that one to finish reloading, instead of going on with the users from before the change.
        // (Taken before the users' and the stamp's locks, and never while holding them.)
        let mut watch = self.watch.as_ref().map(|w| w.lock());
        let seen = watch.as_mut().map_or(Seen::Unknown, |w| w.seen());
        let now = match seen {
            Seen::Nothing => return,
            // A change seen is read whatever the stamp says: a copy that keeps the time and size has the same.
            Seen::Change => modified(file),
            // No watch (or one that can no longer see every change): the stamp tells.
            Seen::Unknown => {
                let now = modified(file);
                if now == *self.loaded.lock() {
                    return;
                }
                now
            }
        };
        let read = read_users(file).unwrap_or_else(|e| {
            // Nobody is let in on a file that cannot be read (a removal saved with a typo must not leave the user
            // its rights), until it is put right.
            say_err!(
                "plexus: cannot read the users file {}, so every log-on and request is refused until it is put \
                 right: {e}",
                file.display()
            );
            BTreeMap::new()
        });
        if let Some(w) = &mut watch {
            w.settled();
        }
        // The users' lock before the stamp's, in the order `save` takes them (it runs under the users' lock).
        let mut users = self.users.write();
        let mut loaded = self.loaded.lock();
        *users = read;
        *loaded = now;
        self.generation.fetch_add(1, Ordering::Release);
    }
}

/// What identifies one version of the users file: every save writes a new file and renames it into place, so the
/// inode changes even when the clock's granularity leaves the modification time unchanged (the size as well, for
/// the rare save that gets back an inode freed by the one before).
type FileStamp = (std::time::SystemTime, u64, u64);

fn modified(file: &Path) -> Option<FileStamp> {
    let m = fs::metadata(file).ok()?;
    #[cfg(unix)]
    let inode = std::os::unix::fs::MetadataExt::ino(&m);
    #[cfg(not(unix))]
    let inode = 0;
    Some((m.modified().ok()?, inode, m.len()))
}

fn read_users(file: &Path) -> std::io::Result<BTreeMap<String, StoredUser>> {
    match fs::read(file) {
        Ok(bytes) => {
            serde_json::from_slice(&bytes).map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e))
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(BTreeMap::new()),
        Err(e) => Err(e),
    }
}

fn hash_password(password: &str) -> Result<String, AuthError> {
    // A password of spaces alone is as good as none, and is most likely a mistake in a script.
    if password.trim().is_empty() {
        return Err(AuthError::EmptyPassword);
    }
    let mut salt = [0u8; 16];
    rand::Rng::fill(&mut rand::rngs::OsRng, &mut salt);
    let salt = SaltString::encode_b64(&salt).expect("16 bytes is a valid salt");
    Ok(Argon2::default().hash_password(password.as_bytes(), &salt).expect("argon2 hashes any password").to_string())
}

/// A random password of 20 letters and digits.
fn generate_password() -> String {
    use rand::Rng;
    const ALPHABET: &[u8] = b"abcdefghijkmnopqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789";
    let mut rng = rand::rngs::OsRng;
    (0..20).map(|_| ALPHABET[rng.gen_range(0..ALPHABET.len())] as char).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_start_creates_the_initial_admin_and_checks_passwords() {
        let dir = tempfile::tempdir().unwrap();
        let (auth, generated) = Auth::open(dir.path(), Some("s3cret")).unwrap();
        assert!(generated.is_none());
        assert_eq!(auth.authenticate("basic", "neo4j", "s3cret").unwrap(), Role::Admin);
        assert!(matches!(auth.authenticate("basic", "neo4j", "wrong"), Err(AuthError::BadCredentials)));
        assert!(matches!(auth.authenticate("basic", "nobody", "s3cret"), Err(AuthError::BadCredentials)));
        assert!(matches!(auth.authenticate("kerberos", "neo4j", "s3cret"), Err(AuthError::UnsupportedScheme(_))));
        auth.add_user("ann", "pw", Role::Reader).unwrap();
        drop(auth);

        // Reopening keeps the users and ignores a new initial password.
        let (auth, _) = Auth::open(dir.path(), Some("other")).unwrap();
        assert_eq!(auth.authenticate("basic", "ann", "pw").unwrap(), Role::Reader);
        assert!(auth.authenticate("basic", "neo4j", "other").is_err());
        let text = fs::read_to_string(dir.path().join(USERS_FILE)).unwrap();
        assert!(!text.contains("s3cret"), "passwords are stored only as hashes");
    }

    #[test]
    fn users_added_by_another_process_are_seen_at_the_next_log_on() {
        let dir = tempfile::tempdir().unwrap();
        let (server, _) = Auth::open(dir.path(), Some("pw")).unwrap();
        let (cli, _) = Auth::open(dir.path(), None).unwrap();
        cli.add_user("bob", "bobpw", Role::Writer).unwrap();
        assert_eq!(server.authenticate("basic", "bob", "bobpw").unwrap(), Role::Writer);
        cli.remove_user("bob").unwrap();
        assert!(server.authenticate("basic", "bob", "bobpw").is_err());
    }

    /// Changes made by hand: a file that does not parse lets nobody in until it is put right, and a change that
    /// keeps the file's time and size is read all the same.
    #[test]
    fn users_files_edited_by_hand_are_read_as_they_are() {
        use std::io::Write;
        let dir = tempfile::tempdir().unwrap();
        let (server, _) = Auth::open(dir.path(), Some("pw")).unwrap();
        let (cli, _) = Auth::open(dir.path(), None).unwrap();
        cli.add_user("bob", "bobpw", Role::Writer).unwrap();
        assert_eq!(server.role_of("bob"), Some(Role::Writer));
        let file = dir.path().join(USERS_FILE);
        let good = fs::read_to_string(&file).unwrap();
        // Bob removed, saved with a stray comma.
        let start = good.find("\"bob\"").unwrap();
        let end = good.find("\"neo4j\"").unwrap();
        fs::write(&file, format!("{}{}", &good[..start], &good[end..]).replacen('}', "},", 1)).unwrap();
        assert_eq!((server.role_of("bob"), server.role_of("neo4j")), (None, None), "a broken file admits nobody");
        fs::write(&file, &good).unwrap();
        assert_eq!(server.role_of("bob"), Some(Role::Writer));
        // Demoted in place, the time put back: the same size, time and inode.
        let stamp = fs::metadata(&file).unwrap().modified().unwrap();
        let mut f = fs::OpenOptions::new().write(true).open(&file).unwrap();
        f.write_all(good.replacen("\"writer\"", "\"reader\"", 1).as_bytes()).unwrap();
        f.set_modified(stamp).unwrap();
        drop(f);
        assert_eq!(server.role_of("bob"), Some(Role::Reader));
    }

    /// A users file that is a symbolic link is read through it, also once what it points at is replaced.
    #[cfg(unix)]
    #[test]
    fn a_users_file_that_is_a_symbolic_link_is_followed() {
        let (data, elsewhere) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let (tool, _) = Auth::open(elsewhere.path(), Some("pw")).unwrap();
        tool.add_user("bob", "bobpw", Role::Writer).unwrap();
        std::os::unix::fs::symlink(elsewhere.path().join(USERS_FILE), data.path().join(USERS_FILE)).unwrap();
        let (server, _) = Auth::open(data.path(), None).unwrap();
        assert_eq!(server.role_of("bob"), Some(Role::Writer));
        tool.set_role("bob", Role::Reader).unwrap();
        assert_eq!(server.role_of("bob"), Some(Role::Reader));
        tool.remove_user("bob").unwrap();
        assert_eq!(server.role_of("bob"), None);
    }

    /// A users file that becomes a symbolic link while the server runs ends its watch; from then on the file is
    /// read again when its stamp changes, not at every request.
    #[cfg(unix)]
    #[test]
    fn a_users_file_linked_later_is_read_again_only_when_it_changes() {
        let (data, elsewhere) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let (server, _) = Auth::open(data.path(), Some("pw")).unwrap();
        let target = elsewhere.path().join(USERS_FILE);
        fs::copy(data.path().join(USERS_FILE), &target).unwrap();
        fs::remove_file(data.path().join(USERS_FILE)).unwrap();
        std::os::unix::fs::symlink(&target, data.path().join(USERS_FILE)).unwrap();
        assert_eq!(server.role_of("neo4j"), Some(Role::Admin));
        let read = server.generation();
        for _ in 0..5 {
            assert_eq!(server.role_of("neo4j"), Some(Role::Admin));
        }
        assert_eq!(server.generation(), read, "read again with nothing changed");
        let (tool, _) = Auth::open(elsewhere.path(), None).unwrap();
        tool.add_user("bob", "bobpw", Role::Reader).unwrap();
        assert_eq!(server.role_of("bob"), Some(Role::Reader));
    }

    #[test]
    fn a_remembered_log_on_follows_changes_to_the_user() {
        let dir = tempfile::tempdir().unwrap();
        let (server, _) = Auth::open(dir.path(), Some("pw")).unwrap();
        let (cli, _) = Auth::open(dir.path(), None).unwrap();
        cli.add_user("bob", "bobpw", Role::Writer).unwrap();
        for _ in 0..3 {
            assert_eq!(server.authenticate("basic", "bob", "bobpw").unwrap(), Role::Writer);
        }
        assert!(server.authenticate("basic", "bob", "bobpw2").is_err());
        cli.set_role("bob", Role::Reader).unwrap();
        assert_eq!(server.authenticate("basic", "bob", "bobpw").unwrap(), Role::Reader);
        cli.set_password("bob", "new").unwrap();
        assert!(server.authenticate("basic", "bob", "bobpw").is_err(), "the old password, verified before");
        assert_eq!(server.authenticate("basic", "bob", "new").unwrap(), Role::Reader);
        // Set back to the first password: a fresh hash, checked again, and accepted.
        cli.set_password("bob", "bobpw").unwrap();
        assert_eq!(server.authenticate("basic", "bob", "bobpw").unwrap(), Role::Reader);
        cli.remove_user("bob").unwrap();
        assert!(server.authenticate("basic", "bob", "bobpw").is_err());
    }

    #[test]
    fn changes_made_at_once_by_many_processes_all_land() {
        let dir = tempfile::tempdir().unwrap();
        Auth::open(dir.path(), Some("pw")).unwrap();
        // Each `Auth` stands for a process of its own (`plexus user add`, a server): its own cache, its own file
        // lock.
        std::thread::scope(|scope| {
            for i in 0..6 {
                let dir = dir.path();
                scope.spawn(move || {
                    let (auth, _) = Auth::open(dir, None).unwrap();
                    auth.add_user(&format!("u{i}"), "secret", Role::Reader).unwrap();
                });
            }
        });
        let (auth, _) = Auth::open(dir.path(), None).unwrap();
        let names: Vec<String> = auth.users().into_iter().map(|(n, _)| n).collect();
        assert_eq!(names, ["neo4j", "u0", "u1", "u2", "u3", "u4", "u5"]);
        // An unreadable file is not written over.
        fs::write(dir.path().join(USERS_FILE), "{ damaged").unwrap();
        assert!(matches!(auth.add_user("late", "pw", Role::Reader), Err(AuthError::Io { .. })));
        assert_eq!(fs::read_to_string(dir.path().join(USERS_FILE)).unwrap(), "{ damaged");
    }

    #[test]
    fn the_generation_moves_with_every_change_to_the_users() {
        let dir = tempfile::tempdir().unwrap();
        let (server, _) = Auth::open(dir.path(), Some("pw")).unwrap();
        let (cli, _) = Auth::open(dir.path(), None).unwrap();
        let start = server.generation();
        assert_eq!(server.generation(), start, "nothing changed");
        cli.add_user("bob", "bobpw", Role::Writer).unwrap();
        let added = server.generation();
        assert_ne!(added, start);
        cli.set_password("bob", "other").unwrap();
        let changed = server.generation();
        assert_ne!(changed, added);
        server.remove_user("bob").unwrap();
        assert_ne!(server.generation(), changed);
    }

    #[test]
    fn the_last_admin_stays_and_names_must_be_visible() {
        let dir = tempfile::tempdir().unwrap();
        let (auth, _) = Auth::open(dir.path(), Some("pw")).unwrap();
        assert!(matches!(auth.remove_user(INITIAL_USER), Err(AuthError::LastAdmin(_))));
        auth.add_user("root", "rootpw", Role::Admin).unwrap();
        auth.remove_user(INITIAL_USER).unwrap();
        assert!(matches!(auth.remove_user("root"), Err(AuthError::LastAdmin(_))));
        auth.add_user("bob", "bobpw", Role::Reader).unwrap();
        auth.remove_user("bob").unwrap();
        for name in ["", " ", "a b", "a:b", "tab\t"] {
            assert!(matches!(auth.add_user(name, "pw", Role::Reader), Err(AuthError::InvalidName(_))), "{name:?}");
        }
        for password in ["", "   ", "\t\n"] {
            assert!(matches!(auth.add_user("carol", password, Role::Reader), Err(AuthError::EmptyPassword)));
            assert!(matches!(auth.set_password("root", password), Err(AuthError::EmptyPassword)));
        }
        auth.add_user("carol", " spaced pw ", Role::Reader).unwrap();
        assert!(matches!(auth.authenticate("basic", "carol", " spaced pw "), Ok(Role::Reader)));
        auth.remove_user("carol").unwrap();
        assert_eq!(auth.users(), vec![("root".to_string(), Role::Admin)]);
    }

    #[test]
    fn repeated_failures_lock_the_user_for_a_while() {
        let dir = tempfile::tempdir().unwrap();
        let lockout = Lockout { max_failed_attempts: 3, lock_time: Duration::from_millis(300) };
        let (auth, _) = Auth::open(dir.path(), Some("pw")).unwrap();
        let auth = auth.with_lockout(lockout);
        auth.add_user("bob", "bobpw", Role::Reader).unwrap();
        // Two failures, then a success: the count starts again.
        for _ in 0..2 {
            assert!(matches!(auth.authenticate("basic", "neo4j", "wrong"), Err(AuthError::BadCredentials)));
        }
        assert!(auth.authenticate("basic", "neo4j", "pw").is_ok());
        // A remembered success (no password check this time) starts the count again too.
        for _ in 0..2 {
            for _ in 0..2 {
                assert!(matches!(auth.authenticate("basic", "neo4j", "wrong"), Err(AuthError::BadCredentials)));
            }
            assert!(auth.authenticate("basic", "neo4j", "pw").is_ok());
        }
        for _ in 0..3 {
            assert!(matches!(auth.authenticate("basic", "neo4j", "wrong"), Err(AuthError::BadCredentials)));
        }
        // Locked: even the right password is refused, without being checked.
        for password in ["wrong", "pw"] {
            assert!(matches!(auth.authenticate("basic", "neo4j", password), Err(AuthError::TooManyAttempts { .. })));
        }
        // Other users are not affected, and unknown users are not tracked.
        assert!(auth.authenticate("basic", "bob", "bobpw").is_ok());
        for _ in 0..5 {
            assert!(matches!(auth.authenticate("basic", "nobody", "x"), Err(AuthError::BadCredentials)));
        }
        assert!(auth.failures.lock().get("nobody").is_none());
        // Once the lock time has passed since the last failure, the password is checked again.
        std::thread::sleep(Duration::from_millis(400));
        assert!(auth.authenticate("basic", "neo4j", "pw").is_ok());
        assert!(matches!(auth.authenticate("basic", "neo4j", "wrong"), Err(AuthError::BadCredentials)));

        // Guesses sent in parallel wait for a slot and then find the lock: few are checked.
        std::thread::sleep(Duration::from_millis(400));
        let auth = std::sync::Arc::new(auth);
        let checked: usize = (0..24)
            .map(|_| {
                let auth = auth.clone();
                std::thread::spawn(move || {
                    matches!(auth.authenticate("basic", "bob", "x"), Err(AuthError::BadCredentials))
                })
            })
            .collect::<Vec<_>>()
            .into_iter()
            .map(|t| usize::from(t.join().unwrap()))
            .sum();
        // The three failures that lock the user, and at most one guess per other slot hashing meanwhile.
        assert!(checked < 3 + HASHING_SLOTS, "{checked} of 24 parallel guesses were checked");
        let auth = std::sync::Arc::into_inner(auth).unwrap();

        // No lockout when the maximum is 0.
        let auth = auth.with_lockout(Lockout { max_failed_attempts: 0, lock_time: Duration::from_secs(60) });
        for _ in 0..5 {
            assert!(matches!(auth.authenticate("basic", "bob", "wrong"), Err(AuthError::BadCredentials)));
        }
        assert!(auth.authenticate("basic", "bob", "bobpw").is_ok());
    }

    #[test]
    fn a_generated_password_is_returned_once() {
        let dir = tempfile::tempdir().unwrap();
        let (auth, generated) = Auth::open(dir.path(), None).unwrap();
        let password = generated.unwrap();
        assert_eq!(password.len(), 20);
        assert!(auth.authenticate("basic", INITIAL_USER, &password).is_ok());
        let (_, again) = Auth::open(dir.path(), None).unwrap();
        assert!(again.is_none());
    }
}
