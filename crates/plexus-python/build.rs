//! Empty: present so that Cargo resolves this crate's `[build-dependencies]` (feature alignment, see Cargo.toml).
fn main() {}
