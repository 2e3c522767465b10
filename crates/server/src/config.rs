//! What a server is asked to do: every knob of `servelab serve` as plain data.
//!
//! The binary fills a [`Config`] from flags; tests build one with
//! [`Config::new`] and change the fields they care about. Nothing here touches
//! the system: validation that needs it (does the root exist, is the port free)
//! happens in [`crate::Server::bind`].

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use servelab_http::ExtraHeader;

use crate::engine::Engine;

/// Where access-log lines go.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LogTarget {
    /// No access log at all: no line is even formatted.
    Off,
    /// Standard output (`--log -`).
    Stdout,
    /// A file, opened for appending and reopened on SIGHUP.
    File(PathBuf),
}

/// How access-log lines reach their target.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LogMode {
    /// One shared log; every line is written with one `write(2)` under a lock as it
    /// happens. The classic design, kept so experiments can show its cost (seed 000).
    Sync,
    /// Each worker appends to a buffer of its own; a writer thread flushes them at
    /// least once a second and on shutdown, so no worker ever waits on the disk.
    #[default]
    Buffered,
}

impl std::str::FromStr for LogMode {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "sync" => Ok(LogMode::Sync),
            "buffered" => Ok(LogMode::Buffered),
            other => Err(format!(
                "unknown log mode `{other}` (expected sync or buffered)"
            )),
        }
    }
}

/// The format of access-log lines (`--log-format`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LogFormat {
    /// Apache's Combined Log Format with the service time in microseconds appended.
    #[default]
    Combined,
    /// One JSON object per line with the same fields (see `log/json.rs`).
    Json,
}

impl LogFormat {
    /// The flag's word for this format.
    pub fn name(self) -> &'static str {
        match self {
            LogFormat::Combined => "combined",
            LogFormat::Json => "json",
        }
    }
}

impl std::str::FromStr for LogFormat {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "combined" => Ok(LogFormat::Combined),
            "json" => Ok(LogFormat::Json),
            other => Err(format!(
                "unknown log format `{other}` (expected combined or json)"
            )),
        }
    }
}

/// What to do with dotfiles (`--dotfiles`; see `servelab_http::dotfile`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Dotfiles {
    /// Answer 404 for any path with a segment starting with `.`, except the
    /// top-level `/.well-known/` (RFC 8615); leave them out of listings.
    #[default]
    Hide,
    /// Serve and list them like any other file.
    Serve,
}

impl Dotfiles {
    /// The flag's word for this choice.
    pub fn name(self) -> &'static str {
        match self {
            Dotfiles::Hide => "hide",
            Dotfiles::Serve => "serve",
        }
    }
}

impl std::str::FromStr for Dotfiles {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "hide" => Ok(Dotfiles::Hide),
            "serve" => Ok(Dotfiles::Serve),
            other => Err(format!("unknown value `{other}` (expected hide or serve)")),
        }
    }
}

/// What happens to a request whose client has gone (closed its connection)
/// while the request is still in its `--delay` or `--work`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum OnAbandon {
    /// The service runs to its end, then the connection closes without the
    /// response: the worker's time is spent for nobody (seed 002's badput).
    Finish,
    /// The service stops as soon as the client is known to be gone and the
    /// worker is free at once, as a server with request cancellation does.
    #[default]
    Cancel,
}

impl std::str::FromStr for OnAbandon {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "finish" => Ok(OnAbandon::Finish),
            "cancel" => Ok(OnAbandon::Cancel),
            other => Err(format!(
                "unknown policy `{other}` (expected finish or cancel)"
            )),
        }
    }
}

impl std::fmt::Display for OnAbandon {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            OnAbandon::Finish => "finish",
            OnAbandon::Cancel => "cancel",
        })
    }
}

/// Everything a [`crate::Server`] needs to know.
#[derive(Debug, Clone)]
pub struct Config {
    /// The directory served; nothing outside it is ever served.
    pub root: PathBuf,
    /// Addresses to listen on (at least one), each served by every engine; port 0
    /// picks a free port (see [`crate::Server::local_addrs`]). An unspecified IPv6
    /// address (`[::]`) takes IPv4 connections too.
    pub addrs: Vec<SocketAddr>,
    /// The concurrency engine.
    pub engine: Engine,
    /// Worker threads (pool) or processes (prefork) or event loops (reactor).
    pub workers: usize,
    /// Accepted connections waiting for a pool worker; beyond it a connection gets 503.
    pub queue: usize,
    /// Connections served at once by the thread and fork engines.
    pub max_conns: usize,
    /// Access-log destination.
    pub log: LogTarget,
    /// Access-log write strategy.
    pub log_mode: LogMode,
    /// Access-log line format.
    pub log_format: LogFormat,
    /// Also log each connection's accept and close with its request count.
    pub log_connections: bool,
    /// A request head must arrive completely within this time of its first byte
    /// (or of the connection's start); otherwise 408 and close. Slowloris defence.
    pub read_timeout: Duration,
    /// Idle time allowed between requests on a kept-alive connection.
    pub keepalive_timeout: Duration,
    /// A response that makes no progress for this long is abandoned (a client that
    /// stopped reading must not hold a worker forever).
    pub write_timeout: Duration,
    /// Close a connection after this many requests; `None` is unlimited.
    pub max_requests_per_conn: Option<u64>,
    /// On shutdown, how long requests in flight may take to finish.
    pub grace: Duration,
    /// Limits on request heads and bodies.
    pub limits: servelab_http::Limits,
    /// `--status`: answer `GET /-/status` (JSON) and `GET /-/metrics` (Prometheus).
    pub status: bool,
    /// `--delay`: each response is held back this long without holding a CPU.
    pub delay: Option<servelab_dist::Dist>,
    /// `--work`: each request burns this much CPU in the handler.
    pub work: Option<servelab_dist::Dist>,
    /// `--seed`: the draws of `delay` and `work` repeat under the same seed.
    pub seed: u64,
    /// `--autoindex`: list a directory that has no `index.html` (else 404).
    pub autoindex: bool,
    /// `--spa`: answer a GET or HEAD of a missing route (no extension in its
    /// last segment) with the root's `index.html`; a missing asset stays 404.
    pub spa: bool,
    /// `--auth`: an htpasswd file of bcrypt hashes; every request must carry
    /// the Basic credentials of one of its users (else 401).
    pub auth: Option<PathBuf>,
    /// `--dotfiles`: hide (404) or serve names starting with `.`.
    pub dotfiles: Dotfiles,
    /// `--header`: fields added to every successful (2xx, 3xx) response.
    pub headers: Vec<ExtraHeader>,
    /// `--compress`: compress text responses on the fly by `Accept-Encoding`.
    pub compress: bool,
    /// `--on-abandon`: stop or finish the service of a request whose client left.
    pub on_abandon: OnAbandon,
    /// `--tls-cert`/`--tls-key` or `--tls-self-signed`: serve HTTPS on
    /// every address; `None` serves plain HTTP.
    pub tls: Option<crate::tls::TlsSource>,
    /// `--hsts`: with TLS, `Strict-Transport-Security: max-age=` this many
    /// seconds on every successful response (added to `headers` by
    /// [`crate::Server::bind`], which refuses it without TLS).
    pub hsts: Option<u64>,
    /// `--h2c`: take HTTP/2 with prior knowledge on plain connections (over
    /// TLS, ALPN offers `h2` whenever the engine carries HTTP/2).
    pub h2c: bool,
}

impl Config {
    /// A configuration serving `root` on `127.0.0.1:0` with the default engine and
    /// the documented defaults of `servelab serve`, except that the access log is off.
    pub fn new(root: impl Into<PathBuf>) -> Config {
        Config {
            root: root.into(),
            addrs: vec![SocketAddr::from(([127, 0, 0, 1], 0))],
            engine: Engine::default(),
            workers: default_workers(),
            queue: 1024,
            max_conns: 1024,
            log: LogTarget::Off,
            log_mode: LogMode::default(),
            log_format: LogFormat::default(),
            log_connections: false,
            read_timeout: Duration::from_secs(3),
            keepalive_timeout: Duration::from_secs(5),
            write_timeout: Duration::from_secs(10),
            max_requests_per_conn: None,
            grace: Duration::from_secs(10),
            limits: servelab_http::Limits::default(),
            status: false,
            delay: None,
            work: None,
            seed: 0,
            autoindex: false,
            spa: false,
            auth: None,
            dotfiles: Dotfiles::default(),
            headers: Vec::new(),
            compress: false,
            on_abandon: OnAbandon::default(),
            tls: None,
            hsts: None,
            h2c: false,
        }
    }
}

/// The number of CPUs this process may run on (at least 1).
pub fn default_workers() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}
