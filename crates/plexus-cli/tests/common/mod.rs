//! What the command-line tests share: running the built binary and reading what it printed.

use std::path::Path;
use std::process::{Command, Output};

/// Runs `plexus` with `args` and waits for it.
pub fn plexus(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_plexus")).args(args).output().expect("run plexus")
}

pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// `dir/name` as an argument.
pub fn path(dir: &Path, name: &str) -> String {
    dir.join(name).to_str().unwrap().to_string()
}
