//! `plexus serve`: the database as a Bolt and HTTP/JSON server (settings from flags, a TOML file, or both).

use std::path::PathBuf;

use clap::Args;
use plexus_server::ServerConfig;

use crate::{usage, Failure};

#[derive(Args, Debug)]
pub struct ServeArgs {
    /// Data directory [default: plexus-data].
    #[arg(long)]
    data: Option<PathBuf>,
    /// Bolt listen address; port 0 picks a free port [default: 127.0.0.1:7687].
    #[arg(long)]
    bolt: Option<String>,
    /// HTTP listen address; port 0 picks a free port [default: 127.0.0.1:7474].
    #[arg(long)]
    http: Option<String>,
    /// Initial password of user 'neo4j' (first start only; generated and printed once if absent).
    #[arg(long, env = "PLEXUS_PASSWORD", hide_env_values = true)]
    password: Option<String>,
    /// Accept clients without authentication (only when every listener is on loopback).
    #[arg(long)]
    no_auth: bool,
    /// When commits reach the disk: sync (default), batch or off.
    #[arg(long)]
    durability: Option<String>,
    /// The directory LOAD CSV reads from: `file:///people.csv` is DIR/people.csv, nothing outside it is read
    /// [default: DATA/import].
    #[arg(long)]
    import_dir: Option<PathBuf>,
    /// The directory `CALL dbms.backup('name')` (admins only) writes backups into, as DIR/name
    /// [default: none, which refuses the call].
    #[arg(long)]
    backup_dir: Option<PathBuf>,
    /// Let web pages from this origin call the HTTP API and open Bolt WebSockets (repeatable; `*` for any, only
    /// with authentication on) [default: none].
    #[arg(long = "cors-origin", value_name = "ORIGIN")]
    cors_origins: Vec<String>,
    /// A TOML file with any of these settings plus thread counts, limits and TLS; flags override it.
    #[arg(long)]
    config: Option<PathBuf>,
    /// Per-query time limit in milliseconds (0: none) [default: 60000]; a driver's transaction timeout replaces
    /// it, longer or shorter (0 there: none).
    #[arg(long)]
    query_timeout_ms: Option<u64>,
    /// TLS certificate chain (PEM) for both listeners; needs --tls-key.
    #[arg(long, requires = "tls_key")]
    tls_cert: Option<PathBuf>,
    /// TLS private key (PEM).
    #[arg(long, requires = "tls_cert")]
    tls_key: Option<PathBuf>,
}

pub fn run(args: ServeArgs) -> Result<(), Failure> {
    let mut config = match &args.config {
        // A config file that cannot be read or used is the command line's fault, as a bad flag is (status 2).
        Some(path) => ServerConfig::from_file(path).map_err(usage)?,
        None => ServerConfig::default(),
    };
    if let Some(d) = args.data {
        config.data = d;
    }
    if let Some(b) = args.bolt {
        config.bolt = b;
    }
    if let Some(h) = args.http {
        config.http = h;
    }
    if args.password.is_some() {
        config.password = args.password;
    }
    if args.no_auth {
        config.auth = false;
    }
    if let Some(d) = args.durability {
        config.durability = d;
    }
    if args.import_dir.is_some() {
        config.import_dir = args.import_dir;
    }
    if args.backup_dir.is_some() {
        config.backup_dir = args.backup_dir;
    }
    if !args.cors_origins.is_empty() {
        config.cors_origins = args.cors_origins;
    }
    if let Some(t) = args.query_timeout_ms {
        config.query_timeout_ms = t;
    }
    if let (Some(cert), Some(key)) = (args.tls_cert, args.tls_key) {
        config.tls = Some(plexus_server::config::TlsConfig { cert, key });
    }
    // Settings that cannot work are the command line's fault (status 2); the server failing to start is not.
    config.validate().map_err(usage)?;
    Ok(plexus_server::run(config)?)
}
