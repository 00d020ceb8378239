//! Server settings: defaults, a TOML file, and command-line overrides (applied by the caller on top).

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;

use crate::bolt::ConnectionLimits;
use crate::http::HttpLimits;
use crate::service::Limits;

/// Everything `plexus serve` can be told. Field names are the TOML keys.
#[derive(Clone, Debug, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ServerConfig {
    /// Data directory.
    pub data: PathBuf,
    /// Bolt listen address; empty to disable.
    pub bolt: String,
    /// HTTP listen address; empty to disable.
    pub http: String,
    /// Whether clients must authenticate.
    pub auth: bool,
    /// The initial password of user `neo4j`, used only when the data directory has no users yet.
    pub password: Option<String>,
    /// `sync`, `batch` or `off`.
    pub durability: String,
    /// HTTP event loops, each a thread serving its share of the connections (default: one per core).
    pub worker_threads: Option<usize>,
    /// Threads running HTTP queries that block (beyond the inline budget), shared out between the event loops.
    pub query_threads: usize,
    pub max_connections: usize,
    /// Per-query time limit in milliseconds (0: none), unless the client gives its own timeout.
    pub query_timeout_ms: u64,
    /// Largest result a query may build in memory, in bytes (0: no limit): what a sort, a DISTINCT, a collect or
    /// an aggregation holds, and a result the server materialises whole. Rows streamed to the client as they are
    /// made (a plain `UNWIND ... RETURN`) hold a batch at a time and are not counted against it.
    pub max_result_bytes: usize,
    /// Idle authenticated connections are closed after this many seconds (default two hours).
    pub idle_timeout_secs: u64,
    /// A connection that has not authenticated is closed after this many seconds (default 30): a Bolt client
    /// must have logged on within it of connecting, an HTTP client must send its request's headers within it,
    /// and an HTTP connection none of whose requests carried valid credentials may idle between requests for
    /// only this long.
    pub auth_timeout_secs: u64,
    /// Failed log-ons in a row after which a user is locked for `auth_lock_time_secs` (0: never), as Neo4j's
    /// `dbms.security.auth_max_failed_attempts`.
    pub auth_max_failed_attempts: u32,
    /// How long a user stays locked after its last failed log-on, as Neo4j's `dbms.security.auth_lock_time`.
    pub auth_lock_time_secs: u64,
    /// Largest Bolt message or HTTP body accepted, in bytes.
    pub max_request_bytes: usize,
    /// An explicit HTTP (Query API) transaction with no request for this many milliseconds is rolled back.
    pub http_transaction_timeout_ms: u64,
    /// Checkpoint when the server stops.
    pub checkpoint_on_shutdown: bool,
    /// Checkpoint automatically once this many bytes of log accumulate (0: only at shutdown).
    pub checkpoint_after_bytes: u64,
    pub tls: Option<TlsConfig>,
    /// The only directory `LOAD CSV` reads from (`file:///a.csv` names `import_dir/a.csv`); default
    /// `data/import`.
    pub import_dir: Option<PathBuf>,
    /// The directory `CALL dbms.backup('name')` writes backups into (as `backup_dir/name`); none by default,
    /// which refuses the call: a backup is as large as the database, and where it goes is the operator's choice.
    pub backup_dir: Option<PathBuf>,
    /// Origins whose web pages may call the HTTP API and open Bolt WebSockets, e.g. `["http://localhost:3000"]`;
    /// `"*"` for any (only with authentication on). None by default.
    pub cors_origins: Vec<String>,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TlsConfig {
    pub cert: PathBuf,
    pub key: PathBuf,
}

impl Default for ServerConfig {
    fn default() -> Self {
        ServerConfig {
            data: PathBuf::from("plexus-data"),
            bolt: "127.0.0.1:7687".into(),
            http: "127.0.0.1:7474".into(),
            auth: true,
            password: None,
            durability: "sync".into(),
            worker_threads: None,
            query_threads: 64,
            max_connections: 4096,
            query_timeout_ms: 60_000,
            max_result_bytes: 1 << 30,
            // Longer than the hour after which the official drivers retire a pooled connection themselves: a
            // driver (Go's, for one) that reused a connection the server had closed would fail the next query.
            idle_timeout_secs: 2 * 3600,
            auth_timeout_secs: 30,
            auth_max_failed_attempts: 3,
            auth_lock_time_secs: 5,
            max_request_bytes: 64 << 20,
            http_transaction_timeout_ms: 30_000,
            checkpoint_on_shutdown: true,
            checkpoint_after_bytes: plexus::Options::default().checkpoint_after_bytes,
            tls: None,
            import_dir: None,
            backup_dir: None,
            cors_origins: Vec::new(),
        }
    }
}

impl ServerConfig {
    /// Reads a TOML file; unknown keys are errors so a typo does not pass silently.
    pub fn from_file(path: &Path) -> Result<ServerConfig, String> {
        let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        toml::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))
    }

    pub fn durability(&self) -> Result<plexus::Durability, String> {
        match self.durability.as_str() {
            "sync" => Ok(plexus::Durability::Sync),
            "batch" => Ok(plexus::Durability::Batch),
            "off" => Ok(plexus::Durability::Off),
            other => Err(format!("unknown durability '{other}': use sync, batch or off")),
        }
    }

    /// The directory `LOAD CSV` reads from.
    pub fn import_dir(&self) -> PathBuf {
        self.import_dir.clone().unwrap_or_else(|| self.data.join("import"))
    }

    pub fn limits(&self) -> Limits {
        Limits {
            query_timeout: (self.query_timeout_ms > 0).then(|| Duration::from_millis(self.query_timeout_ms)),
            max_result_bytes: (self.max_result_bytes > 0).then_some(self.max_result_bytes),
        }
    }

    /// How failed log-ons lock a user.
    pub fn lockout(&self) -> crate::auth::Lockout {
        crate::auth::Lockout {
            max_failed_attempts: self.auth_max_failed_attempts,
            lock_time: Duration::from_secs(self.auth_lock_time_secs),
        }
    }

    pub fn connection_limits(&self) -> ConnectionLimits {
        ConnectionLimits {
            idle_timeout: Duration::from_secs(self.idle_timeout_secs.max(1)),
            auth_timeout: Duration::from_secs(self.auth_timeout_secs.max(1)),
            max_message_bytes: self.max_request_bytes,
            web_origins: crate::http::cors::Cors::new(&self.cors_origins),
            ..ConnectionLimits::default()
        }
    }

    pub fn http_limits(&self) -> HttpLimits {
        HttpLimits {
            max_body_bytes: self.max_request_bytes,
            idle_timeout: Duration::from_secs(self.idle_timeout_secs.max(1)),
            auth_timeout: Duration::from_secs(self.auth_timeout_secs.max(1)),
            transaction_timeout: Duration::from_millis(self.http_transaction_timeout_ms.max(1)),
            max_connections: self.max_connections,
            cors_origins: self.cors_origins.clone(),
            ..HttpLimits::default()
        }
    }

    /// The listen addresses, parsed (`None` for a disabled listener).
    pub fn addresses(&self) -> Result<(Option<SocketAddr>, Option<SocketAddr>), String> {
        let parse = |what: &str, s: &str| -> Result<Option<SocketAddr>, String> {
            if s.is_empty() {
                return Ok(None);
            }
            // `localhost` alone, or as the host of `localhost:PORT`, is loopback; other names are not resolved.
            let host_port = match s.strip_prefix("localhost") {
                Some("") => "127.0.0.1".to_string(),
                Some(rest) if rest.starts_with(':') => format!("127.0.0.1{rest}"),
                _ => s.to_string(),
            };
            host_port.parse().map(Some).map_err(|_| {
                format!("bad {what} address '{s}': expected IP:PORT (or localhost:PORT), e.g. 127.0.0.1:7687")
            })
        };
        Ok((parse("Bolt", &self.bolt)?, parse("HTTP", &self.http)?))
    }

    /// Refuses settings that would expose an open server: without authentication every listener must be on
    /// loopback.
    pub fn validate(&self) -> Result<(), String> {
        // LOAD CSV may read anything under the import directory: never the database's own files (users.json
        // holds the password hashes).
        let absolute = |p: &Path| std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf());
        let (import, data) = (absolute(&self.import_dir()), absolute(&self.data));
        if data.starts_with(&import) {
            return Err(format!(
                "the import directory {} contains the data directory {}: LOAD CSV could read the database's files; \
                 choose another --import-dir",
                import.display(),
                data.display()
            ));
        }
        if let Some(backups) = self.backup_dir.as_deref().map(absolute) {
            if backups.starts_with(&data) {
                return Err(format!(
                    "the backup directory {} is inside the data directory {}: a backup's name could be one of the \
                     database's files; choose another --backup-dir",
                    backups.display(),
                    data.display()
                ));
            }
        }
        // Zero would leave a server that starts but serves nothing (no connection, no body, no thread, no
        // time): a mistake to report, not a setting.
        let at_least_one = [
            ("max_connections", self.max_connections as u64, "no connection could be accepted"),
            ("max_request_bytes", self.max_request_bytes as u64, "every request would be refused"),
            ("http_transaction_timeout_ms", self.http_transaction_timeout_ms, "transactions would expire at once"),
            ("query_threads", self.query_threads as u64, "no query could run"),
            ("worker_threads", self.worker_threads.unwrap_or(1) as u64, "the network could not be served"),
            ("auth_timeout_secs", self.auth_timeout_secs, "no client would have time to log on"),
            ("idle_timeout_secs", self.idle_timeout_secs, "every connection would be closed between requests"),
        ];
        for (key, value, why) in at_least_one {
            if value == 0 {
                return Err(format!("{key} = 0 is not allowed ({why}): give a value of at least 1"));
            }
        }
        let (bolt, http) = self.addresses()?;
        if bolt.is_none() && http.is_none() {
            return Err("both listeners are disabled: give --bolt or --http an address".into());
        }
        if !self.auth {
            for addr in [bolt, http].into_iter().flatten() {
                if !addr.ip().is_loopback() {
                    return Err(format!(
                        "--no-auth is only allowed when every listener is on loopback, but {addr} is not; \
                         keep authentication on or listen on 127.0.0.1"
                    ));
                }
            }
        }
        for origin in &self.cors_origins {
            crate::http::cors::check_origin(origin)?;
            if origin == "*" && !self.auth {
                return Err("cors_origins = [\"*\"] with authentication off would let any web page the user visits \
                            read and change the database: name the origins, or keep authentication on"
                    .into());
            }
        }
        self.durability()?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_listen_on_loopback_with_auth() {
        let c = ServerConfig::default();
        assert!(c.auth);
        let (bolt, http) = c.addresses().unwrap();
        assert_eq!(bolt.unwrap().to_string(), "127.0.0.1:7687");
        assert_eq!(http.unwrap().to_string(), "127.0.0.1:7474");
        c.validate().unwrap();
    }

    #[test]
    fn addresses_are_read_as_written() {
        let c = ServerConfig { bolt: "localhost:7000".into(), http: "[::1]:7001".into(), ..ServerConfig::default() };
        let (bolt, http) = c.addresses().unwrap();
        assert_eq!(
            (bolt.unwrap().to_string(), http.unwrap().to_string()),
            ("127.0.0.1:7000".into(), "[::1]:7001".into())
        );
        for (given, shown) in
            [("localhost", "'localhost'"), ("notlocalhost.example:28000", "'notlocalhost.example:28000'")]
        {
            let c = ServerConfig { http: given.into(), ..ServerConfig::default() };
            let e = c.addresses().unwrap_err();
            assert!(e.contains(shown), "{e}");
        }
    }

    #[test]
    fn no_auth_is_refused_off_loopback() {
        let c = ServerConfig { auth: false, bolt: "0.0.0.0:7687".into(), ..ServerConfig::default() };
        assert!(c.validate().unwrap_err().contains("loopback"));
        let c = ServerConfig { auth: false, ..ServerConfig::default() };
        c.validate().unwrap();
    }

    #[test]
    fn settings_that_would_disable_the_server_are_refused() {
        type Zero = fn(&mut ServerConfig);
        let zeroed: [(&str, Zero); 7] = [
            ("max_connections", |c| c.max_connections = 0),
            ("max_request_bytes", |c| c.max_request_bytes = 0),
            ("http_transaction_timeout_ms", |c| c.http_transaction_timeout_ms = 0),
            ("query_threads", |c| c.query_threads = 0),
            ("worker_threads", |c| c.worker_threads = Some(0)),
            ("auth_timeout_secs", |c| c.auth_timeout_secs = 0),
            ("idle_timeout_secs", |c| c.idle_timeout_secs = 0),
        ];
        for (key, zero) in zeroed {
            let mut c = ServerConfig::default();
            zero(&mut c);
            let error = c.validate().unwrap_err();
            assert!(error.starts_with(&format!("{key} = 0 ")), "{error}");
        }
        ServerConfig { worker_threads: Some(1), query_threads: 1, ..ServerConfig::default() }.validate().unwrap();
    }

    #[test]
    fn toml_files_are_read_strictly() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("plexus.toml");
        std::fs::write(
            &path,
            "bolt = \"127.0.0.1:0\"\nquery_timeout_ms = 5\n[tls]\ncert = \"c.pem\"\nkey = \"k.pem\"\n",
        )
        .unwrap();
        let c = ServerConfig::from_file(&path).unwrap();
        assert_eq!(c.bolt, "127.0.0.1:0");
        assert_eq!(c.limits().query_timeout, Some(Duration::from_millis(5)));
        assert!(c.tls.is_some());
        std::fs::write(&path, "bolt_port = 1\n").unwrap();
        assert!(ServerConfig::from_file(&path).unwrap_err().contains("bolt_port"));
    }
}
