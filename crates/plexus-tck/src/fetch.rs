//! Getting the TCK: the feature files and graph scripts ship inside the `org.opencypher:tck` jar on Maven Central.
//! They are downloaded once (with `curl`), checked against the SHA-1 published next to the jar, unpacked, and kept
//! in a cache outside the source tree: `$PLEXUS_TCK_DIR`, else `$CARGO_TARGET_DIR/tck`, else the workspace's
//! `target/tck`. Nothing is vendored into the repository.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The TCK release this runner targets.
pub const VERSION: &str = "1.0.0-M23";
/// Expanded scenarios in [`VERSION`] (outlines count once per example row).
pub const SCENARIO_COUNT: usize = 3897;

const MAVEN_DIR: &str = "https://repo1.maven.org/maven2/org/opencypher/tck";

/// The URL of the jar; its SHA-1 is at the same URL with `.sha1` appended.
pub fn jar_url() -> String {
    format!("{MAVEN_DIR}/{VERSION}/tck-{VERSION}.jar")
}

/// Why the TCK could not be made ready.
#[derive(Debug)]
pub enum FetchError {
    /// The download failed: no network, the registry unreachable, or `curl` missing.
    Download(String),
    /// Anything else: a checksum mismatch, a bad archive, a file system error.
    Other(String),
}

impl std::fmt::Display for FetchError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FetchError::Download(m) => write!(f, "downloading the TCK failed: {m}"),
            FetchError::Other(m) => write!(f, "preparing the TCK failed: {m}"),
        }
    }
}

impl std::error::Error for FetchError {}

fn other(context: &str) -> impl Fn(io::Error) -> FetchError + '_ {
    move |e| FetchError::Other(format!("{context}: {e}"))
}

/// An unpacked TCK.
#[derive(Clone, Debug)]
pub struct TckDir {
    pub root: PathBuf,
}

impl TckDir {
    pub fn features(&self) -> PathBuf {
        self.root.join("features")
    }

    pub fn graphs(&self) -> PathBuf {
        self.root.join("graphs")
    }
}

/// Where the TCK is cached when nothing says otherwise.
pub fn default_cache_root() -> PathBuf {
    if let Some(dir) = std::env::var_os("PLEXUS_TCK_DIR") {
        return PathBuf::from(dir);
    }
    if let Some(dir) = std::env::var_os("CARGO_TARGET_DIR") {
        return PathBuf::from(dir).join("tck");
    }
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/tck")
}

/// Returns the unpacked TCK under `cache_root`, downloading and unpacking it first if it is not there yet.
/// Concurrent callers each work in their own staging directory; the first to finish publishes it.
pub fn ensure(cache_root: &Path) -> Result<TckDir, FetchError> {
    let dir = TckDir { root: cache_root.join(VERSION) };
    if dir.root.join(".complete").exists() {
        return Ok(dir);
    }
    fs::create_dir_all(cache_root).map_err(other("creating the cache directory"))?;
    static CALLS: AtomicUsize = AtomicUsize::new(0);
    let call = CALLS.fetch_add(1, Ordering::Relaxed);
    let staging = cache_root.join(format!("{VERSION}.staging-{}-{call}", std::process::id()));
    let _ = fs::remove_dir_all(&staging);
    fs::create_dir_all(&staging).map_err(other("creating a staging directory"))?;
    let result = prepare(&staging).and_then(|()| {
        if dir.root.exists() && !dir.root.join(".complete").exists() {
            // A half-built directory left by an interrupted run.
            fs::remove_dir_all(&dir.root).map_err(other("removing an incomplete TCK directory"))?;
        }
        match fs::rename(&staging, &dir.root) {
            Ok(()) => Ok(()),
            Err(_) if dir.root.join(".complete").exists() => Ok(()),
            Err(e) => Err(FetchError::Other(format!("publishing {}: {e}", dir.root.display()))),
        }
    });
    let _ = fs::remove_dir_all(&staging);
    result.map(|()| dir)
}

fn prepare(staging: &Path) -> Result<(), FetchError> {
    let jar = staging.join(format!("tck-{VERSION}.jar"));
    let url = jar_url();
    curl(&url, &jar)?;
    let sha_file = staging.join("jar.sha1");
    curl(&format!("{url}.sha1"), &sha_file)?;
    let published = fs::read_to_string(&sha_file).map_err(other("reading the checksum"))?;
    let published = published.split_whitespace().next().unwrap_or("").to_ascii_lowercase();
    let bytes = fs::read(&jar).map_err(other("reading the jar"))?;
    let actual = sha1_smol::Sha1::from(&bytes).digest().to_string();
    if published != actual {
        return Err(FetchError::Other(format!("{url}: SHA-1 {actual}, but {published} is published")));
    }
    unpack(&bytes, staging)?;
    fs::write(staging.join(".complete"), format!("{url}\nsha1 {actual}\n")).map_err(other("marking complete"))
}

fn curl(url: &str, out: &Path) -> Result<(), FetchError> {
    let output = Command::new("curl")
        .args(["--fail", "--silent", "--show-error", "--location", "--retry", "3", "--connect-timeout", "20"])
        .args(["--max-time", "300", "--output"])
        .arg(out)
        .arg(url)
        .output()
        .map_err(|e| FetchError::Download(format!("running curl: {e}")))?;
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        return Err(FetchError::Download(format!("{url}: curl {}: {}", output.status, stderr.trim())));
    }
    Ok(())
}

/// Unpacks the jar's `features/` and `graphs/` trees into `dest`.
fn unpack(jar: &[u8], dest: &Path) -> Result<(), FetchError> {
    let bad = |e: zip::result::ZipError| FetchError::Other(format!("reading the jar: {e}"));
    let mut archive = zip::ZipArchive::new(io::Cursor::new(jar)).map_err(bad)?;
    let mut files = 0;
    for i in 0..archive.len() {
        let mut entry = archive.by_index(i).map_err(bad)?;
        let Some(name) = entry.enclosed_name() else { continue };
        if entry.is_dir() || !(name.starts_with("features") || name.starts_with("graphs")) {
            continue;
        }
        let path = dest.join(&name);
        if let Some(parent) = path.parent() {
            fs::create_dir_all(parent).map_err(other("creating a directory"))?;
        }
        let mut file = fs::File::create(&path).map_err(other("creating a file"))?;
        io::copy(&mut entry, &mut file).map_err(other("unpacking a file"))?;
        files += 1;
    }
    if files == 0 {
        return Err(FetchError::Other("the jar holds no features/ or graphs/ files".into()));
    }
    Ok(())
}
