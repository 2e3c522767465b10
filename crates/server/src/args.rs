//! The flags of `servelab serve` as a typed value, owned by the server crate so
//! that everything which starts a server reads the same words with the same
//! parser.
//!
//! The binary flattens [`ServeArgs`] into its `serve` subcommand and turns it
//! into a [`Config`] with [`ServeArgs::into_config`]. The lab checks an
//! experiment's server `args` with [`ServeArgs::try_parse_from`] before
//! anything runs, changes the typed fields it controls (root, port, engine), and
//! starts the child with [`ServeArgs::to_args`]: a command line rendered from
//! typed values, never pasted together as text. `to_args` writes only what
//! differs from the defaults, so a command line in a report stays short, and
//! parsing it back gives an equal value (tested below).

use std::ffi::OsString;
use std::path::PathBuf;
use std::time::Duration;

use clap::Parser;
use servelab_dist::parse_duration;
use servelab_http::ExtraHeader;

use crate::addr::ListenAddr;
use crate::config::{Config, Dotfiles, LogFormat, LogMode, LogTarget, OnAbandon};
use crate::engine::Engine;
use servelab_dist::Dist;

/// Flags of `servelab serve`.
#[derive(Debug, Clone, PartialEq, clap::Args)]
pub struct ServeArgs {
    /// Directory to serve (the same as --root) [default: the current directory].
    #[arg(value_name = "DIR", conflicts_with = "root")]
    pub dir: Option<PathBuf>,
    /// Directory to serve [default: the current directory].
    #[arg(long, value_name = "DIR")]
    pub root: Option<PathBuf>,
    /// Address to listen on: `HOST:PORT` (a name such as `localhost` binds
    /// every address it resolves to), `[IPV6]:PORT`, or `:PORT` for every
    /// interface. Repeat it to listen on several; every engine serves them all.
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:8080")]
    pub addr: Vec<ListenAddr>,
    /// Port to listen on (replaces the port of every --addr; 0 picks a free one).
    #[arg(long, short = 'p', value_name = "N")]
    pub port: Option<u16>,
    /// Concurrency engine (`servelab engines` lists them).
    #[arg(long, short = 'e', default_value_t = Engine::default())]
    pub engine: Engine,
    /// Worker threads or processes [default: the number of CPUs].
    #[arg(long, short = 'w', value_name = "N", value_parser = at_least_one)]
    pub workers: Option<usize>,
    /// Accepted connections waiting for a pool worker; beyond it, 503.
    #[arg(long, value_name = "N", default_value_t = 1024)]
    pub queue: usize,
    /// Connections served at once by the thread and fork engines; at the cap
    /// the server stops accepting until one ends (clients wait, not refused).
    #[arg(long, value_name = "N", default_value_t = 1024)]
    pub max_conns: usize,
    /// Serve the counters: GET /-/status (JSON) and GET /-/metrics (Prometheus).
    #[arg(long)]
    pub status: bool,
    /// Access log: a file, `-` for standard output, or `off` [default: -].
    #[arg(long, value_name = "PATH|-|off", value_parser = log_target)]
    pub log: Option<LogTarget>,
    /// Access-log writing: `sync` (one shared file under a lock) or `buffered`
    /// (per-worker buffers flushed at least once a second).
    #[arg(long, value_name = "MODE", default_value = "buffered")]
    pub log_mode: LogMode,
    /// Access-log lines: `combined` (Apache's format with the service time
    /// in microseconds appended) or `json` (one object per line, same fields).
    #[arg(long, value_name = "FORMAT", default_value = "combined")]
    pub log_format: LogFormat,
    /// Also log each connection's accept and close.
    #[arg(long)]
    pub log_connections: bool,
    /// A request head must arrive within this time (else 408).
    #[arg(long, value_name = "DURATION", default_value = "3s", value_parser = parse_duration)]
    pub read_timeout: Duration,
    /// Idle time allowed between requests on a kept-alive connection.
    #[arg(long, value_name = "DURATION", default_value = "5s", value_parser = parse_duration)]
    pub keepalive_timeout: Duration,
    /// A response that makes no progress for this long is abandoned.
    #[arg(long, value_name = "DURATION", default_value = "10s", value_parser = parse_duration)]
    pub write_timeout: Duration,
    /// Close a connection after this many requests [default: unlimited].
    #[arg(long, value_name = "N")]
    pub max_requests_per_conn: Option<u64>,
    /// On SIGINT/SIGTERM, how long requests in flight may take to finish.
    #[arg(long, value_name = "DURATION", default_value = "10s", value_parser = parse_duration)]
    pub grace: Duration,
    /// Hold each response back for DIST without holding a CPU (threads sleep,
    /// event loops park the connection on a timer): `40ms`, `const:5ms`,
    /// `exp:20ms`, `uniform:10ms..30ms`, `lognormal:20ms,2` (mean, CV) or shifted
    /// `5ms+exp:20ms`; plain numbers are seconds (the DIST of `servelab sim`).
    #[arg(long, value_name = "DIST")]
    pub delay: Option<Dist>,
    /// Burn DIST of CPU in the handler for each request (same syntax as --delay).
    #[arg(long, value_name = "DIST")]
    pub work: Option<Dist>,
    /// Seed of the --delay and --work draws (each worker has its own stream).
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub seed: u64,
    /// List directories that have no index.html (sorted, dotfiles left out).
    #[arg(long)]
    pub autoindex: bool,
    /// Single-page application: a GET or HEAD of a route with no file gets
    /// /index.html; a missing asset (a last segment with an extension, such
    /// as /app.js) stays 404.
    #[arg(long)]
    pub spa: bool,
    /// Require HTTP Basic credentials (401 otherwise), checked against FILE:
    /// `user:hash` lines of bcrypt hashes, as `htpasswd -B` writes them.
    /// Plaintext and weak hashes are refused at start. Without TLS the
    /// password crosses the network readable: use it on loopback or behind
    /// a TLS proxy.
    #[arg(long, value_name = "FILE")]
    pub auth: Option<PathBuf>,
    /// Files and directories whose name starts with `.`: `hide` (404, except
    /// /.well-known/) or `serve`.
    #[arg(long, value_name = "hide|serve", default_value = "hide")]
    pub dotfiles: Dotfiles,
    /// Add this field to every successful response (repeatable), e.g.
    /// 'Cache-Control: max-age=60'. Framing fields and those the server sets
    /// itself are refused.
    #[arg(long, value_name = "NAME: VALUE")]
    pub header: Vec<ExtraHeader>,
    /// Compress text responses on the fly (gzip, brotli or zstd, as the
    /// client's Accept-Encoding prefers), with `Vary: Accept-Encoding`.
    #[arg(long)]
    pub compress: bool,
    /// What a request whose client has closed does with the rest of its
    /// --delay or --work: `cancel` stops it and frees the worker; `finish`
    /// serves it to the end for nobody (seed 002's badput).
    #[arg(long, value_name = "POLICY", default_value_t = OnAbandon::default())]
    pub on_abandon: OnAbandon,
    /// Serve HTTPS (TLS 1.3 and 1.2; ALPN h2 then http/1.1 on an engine
    /// that carries HTTP/2, see `servelab engines`) with the certificate
    /// chain in this PEM file, leaf first (needs --tls-key).
    #[arg(
        long,
        value_name = "FILE",
        requires = "tls_key",
        conflicts_with = "tls_self_signed"
    )]
    pub tls_cert: Option<PathBuf>,
    /// The private key of --tls-cert, PEM (PKCS #8, PKCS #1 or SEC1).
    #[arg(long, value_name = "FILE", requires = "tls_cert")]
    pub tls_key: Option<PathBuf>,
    /// Serve HTTPS with a certificate for localhost, 127.0.0.1 and ::1 made
    /// at start (ECDSA P-256; its SHA-256 fingerprint is printed). For
    /// development: no client trusts it unless told to.
    #[arg(long)]
    pub tls_self_signed: bool,
    /// Serve HTTPS with a self-signed certificate (as --tls-self-signed) and
    /// write that certificate to FILE (PEM, no key), so that a client can
    /// trust it: `curl --cacert FILE https://localhost:PORT/`. A new
    /// certificate each start; an existing FILE is replaced only if servelab
    /// wrote it.
    #[arg(long, value_name = "FILE", conflicts_with = "tls_cert")]
    pub tls_self_signed_cert: Option<PathBuf>,
    /// Also take HTTP/2 in cleartext from a client with prior knowledge
    /// (`curl --http2-prior-knowledge`): a connection that opens with the
    /// HTTP/2 preface speaks HTTP/2, any other HTTP/1.1. Off, the preface
    /// gets `505 HTTP Version Not Supported`. (No `Upgrade: h2c`: RFC 9113
    /// deprecates it.) Needs an engine that carries HTTP/2.
    #[arg(long)]
    pub h2c: bool,
    /// With HTTPS, send `Strict-Transport-Security: max-age=SECONDS` on
    /// successful responses, so browsers use only HTTPS for this host for that
    /// long [default SECONDS: 31536000, one year; 0 tells them to forget].
    #[arg(
        long,
        value_name = "SECONDS",
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = "31536000"
    )]
    pub hsts: Option<u64>,
}

/// `servelab serve` alone, for parsing flags outside the binary.
#[derive(Debug, Parser)]
#[command(name = "servelab serve", no_binary_name = true)]
struct ServeCommand {
    #[command(flatten)]
    args: ServeArgs,
}

impl Default for ServeArgs {
    /// What `servelab serve` with no flags means.
    fn default() -> ServeArgs {
        ServeArgs::try_parse_from(std::iter::empty::<OsString>())
            .expect("the defaults of servelab serve parse")
    }
}

impl ServeArgs {
    /// Parses `servelab serve` flags (without the program and subcommand names)
    /// with the parser the binary uses. The error is clap's, which names the flag.
    pub fn try_parse_from<I, T>(words: I) -> Result<ServeArgs, clap::Error>
    where
        I: IntoIterator<Item = T>,
        T: Into<OsString> + Clone,
    {
        ServeCommand::try_parse_from(words).map(|c| c.args)
    }

    /// The configuration these flags ask for. `default_root` is called only when
    /// neither DIR nor `--root` was given (the binary serves its current
    /// directory then).
    pub fn into_config<E>(
        self,
        default_root: impl FnOnce() -> Result<PathBuf, E>,
    ) -> Result<Config, E> {
        let root = match self.root.or(self.dir) {
            Some(root) => root,
            None => default_root()?,
        };
        let mut config = Config::new(root);
        config.addrs = self.addr.iter().flat_map(|a| a.addrs()).copied().collect();
        if let Some(port) = self.port {
            for a in &mut config.addrs {
                a.set_port(port);
            }
            // `localhost:1` and `127.0.0.1:2` may now be the same address.
            let mut seen = Vec::with_capacity(config.addrs.len());
            config.addrs.retain(|a| {
                let new = !seen.contains(a);
                seen.push(*a);
                new
            });
        }
        config.engine = self.engine;
        if let Some(workers) = self.workers {
            config.workers = workers;
        }
        config.queue = self.queue;
        config.max_conns = self.max_conns;
        config.status = self.status;
        config.log = self.log.unwrap_or(LogTarget::Stdout);
        config.log_mode = self.log_mode;
        config.log_format = self.log_format;
        config.log_connections = self.log_connections;
        config.read_timeout = self.read_timeout;
        config.keepalive_timeout = self.keepalive_timeout;
        config.write_timeout = self.write_timeout;
        config.max_requests_per_conn = self.max_requests_per_conn;
        config.grace = self.grace;
        config.delay = self.delay;
        config.work = self.work;
        config.seed = self.seed;
        config.autoindex = self.autoindex;
        config.spa = self.spa;
        config.auth = self.auth;
        config.dotfiles = self.dotfiles;
        config.headers = self.header;
        config.compress = self.compress;
        config.on_abandon = self.on_abandon;
        config.tls = match (self.tls_cert, self.tls_key, self.tls_self_signed_cert) {
            (Some(cert), Some(key), _) => Some(crate::tls::TlsSource::Files { cert, key }),
            (_, _, Some(cert)) => Some(crate::tls::TlsSource::SelfSignedSaved { cert }),
            _ if self.tls_self_signed => Some(crate::tls::TlsSource::SelfSigned),
            _ => None,
        };
        config.hsts = self.hsts;
        config.h2c = self.h2c;
        Ok(config)
    }

    /// The flags that give this value back when parsed, in declaration order,
    /// each written only if it differs from the default.
    pub fn to_args(&self) -> Vec<OsString> {
        let d = ServeArgs::default();
        let mut out = Words::default();
        if let Some(root) = &self.root {
            out.flag("--root", root.as_os_str());
        }
        if self.addr != d.addr {
            for a in &self.addr {
                out.flag("--addr", a.to_string());
            }
        }
        if let Some(port) = self.port {
            out.flag("--port", port.to_string());
        }
        if self.engine != d.engine {
            out.flag("--engine", self.engine.name());
        }
        if let Some(workers) = self.workers {
            out.flag("--workers", workers.to_string());
        }
        if self.queue != d.queue {
            out.flag("--queue", self.queue.to_string());
        }
        if self.max_conns != d.max_conns {
            out.flag("--max-conns", self.max_conns.to_string());
        }
        if self.status {
            out.switch("--status");
        }
        if let Some(log) = &self.log {
            out.flag("--log", log_text(log));
        }
        if self.log_mode != d.log_mode {
            out.flag("--log-mode", log_mode_text(self.log_mode));
        }
        if self.log_format != d.log_format {
            out.flag("--log-format", self.log_format.name());
        }
        if self.log_connections {
            out.switch("--log-connections");
        }
        for (flag, value, default) in [
            ("--read-timeout", self.read_timeout, d.read_timeout),
            (
                "--keepalive-timeout",
                self.keepalive_timeout,
                d.keepalive_timeout,
            ),
            ("--write-timeout", self.write_timeout, d.write_timeout),
        ] {
            if value != default {
                out.flag(flag, duration_text(value));
            }
        }
        if let Some(n) = self.max_requests_per_conn {
            out.flag("--max-requests-per-conn", n.to_string());
        }
        if self.grace != d.grace {
            out.flag("--grace", duration_text(self.grace));
        }
        if let Some(delay) = &self.delay {
            out.flag("--delay", delay.to_string());
        }
        if let Some(work) = &self.work {
            out.flag("--work", work.to_string());
        }
        if self.seed != d.seed {
            out.flag("--seed", self.seed.to_string());
        }
        if self.autoindex {
            out.switch("--autoindex");
        }
        if self.spa {
            out.switch("--spa");
        }
        if let Some(auth) = &self.auth {
            out.flag("--auth", auth.as_os_str());
        }
        if self.dotfiles != d.dotfiles {
            out.flag("--dotfiles", self.dotfiles.name());
        }
        for h in &self.header {
            out.flag("--header", format!("{}: {}", h.name(), h.value()));
        }
        if self.compress {
            out.switch("--compress");
        }
        if self.on_abandon != d.on_abandon {
            out.flag("--on-abandon", self.on_abandon.to_string());
        }
        if let Some(cert) = &self.tls_cert {
            out.flag("--tls-cert", cert.as_os_str());
        }
        if let Some(key) = &self.tls_key {
            out.flag("--tls-key", key.as_os_str());
        }
        if self.tls_self_signed {
            out.switch("--tls-self-signed");
        }
        if let Some(cert) = &self.tls_self_signed_cert {
            out.flag("--tls-self-signed-cert", cert.as_os_str());
        }
        if self.h2c {
            out.switch("--h2c");
        }
        if let Some(age) = self.hsts {
            // `--hsts N` would read N as the directory: the value is glued on.
            out.switch(&format!("--hsts={age}"));
        }
        // Last, after `--`, so that a directory named like a flag stays a directory.
        if let Some(dir) = &self.dir {
            out.switch("--");
            out.switch_os(dir.as_os_str());
        }
        out.0
    }
}

/// A command line being written.
#[derive(Debug, Default)]
struct Words(Vec<OsString>);

impl Words {
    fn flag(&mut self, name: &str, value: impl Into<OsString>) {
        self.0.push(name.into());
        self.0.push(value.into());
    }

    fn switch(&mut self, name: &str) {
        self.0.push(name.into());
    }

    fn switch_os(&mut self, word: &std::ffi::OsStr) {
        self.0.push(word.to_owned());
    }
}

/// `--workers 0` would leave a pool with nobody to serve it.
fn at_least_one(text: &str) -> Result<usize, String> {
    match text.parse::<usize>() {
        Ok(0) => Err("must be at least 1".to_owned()),
        Ok(n) => Ok(n),
        Err(e) => Err(e.to_string()),
    }
}

/// `--log`: `off`, `-` or a path.
fn log_target(text: &str) -> Result<LogTarget, String> {
    Ok(match text {
        "" => return Err("empty; use a path, `-` or `off`".to_owned()),
        "off" => LogTarget::Off,
        "-" => LogTarget::Stdout,
        path => LogTarget::File(path.into()),
    })
}

/// The `--log` word for a target; a file named like a keyword gets `./` so
/// that it stays a file.
fn log_text(target: &LogTarget) -> OsString {
    match target {
        LogTarget::Off => "off".into(),
        LogTarget::Stdout => "-".into(),
        LogTarget::File(p) if p.as_os_str() == "off" || p.as_os_str() == "-" => {
            PathBuf::from(".").join(p).into_os_string()
        }
        LogTarget::File(p) => p.clone().into_os_string(),
    }
}

fn log_mode_text(mode: LogMode) -> &'static str {
    match mode {
        LogMode::Sync => "sync",
        LogMode::Buffered => "buffered",
    }
}

/// A duration in the largest unit that holds it exactly, so that it parses back
/// to the same nanosecond count.
fn duration_text(d: Duration) -> String {
    let ns = d.as_nanos();
    if ns % 1_000_000_000 == 0 {
        format!("{}s", ns / 1_000_000_000)
    } else if ns % 1_000_000 == 0 {
        format!("{}ms", ns / 1_000_000)
    } else if ns % 1_000 == 0 {
        format!("{}us", ns / 1_000)
    } else {
        format!("{ns}ns")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(line: &str) -> Result<ServeArgs, clap::Error> {
        ServeArgs::try_parse_from(line.split_whitespace())
    }

    fn round_trips(a: &ServeArgs) {
        let words = a.to_args();
        let back = ServeArgs::try_parse_from(&words)
            .unwrap_or_else(|e| panic!("{words:?} does not parse: {e}"));
        assert_eq!(&back, a, "through {words:?}");
    }

    #[test]
    fn the_defaults_render_as_nothing() {
        assert!(ServeArgs::default().to_args().is_empty());
        round_trips(&ServeArgs::default());
    }

    #[test]
    fn every_field_set_round_trips() {
        let a = ServeArgs {
            dir: None,
            root: Some("/srv/site dir".into()),
            addr: vec![
                "[::1]:9000".parse().unwrap(),
                "127.0.0.1:1".parse().unwrap(),
            ],
            port: Some(0),
            engine: Engine::Prefork,
            workers: Some(3),
            queue: 7,
            max_conns: 9,
            status: true,
            log: Some(LogTarget::File("/tmp/a b.log".into())),
            log_mode: LogMode::Sync,
            log_format: LogFormat::Json,
            log_connections: true,
            read_timeout: Duration::from_millis(1500),
            keepalive_timeout: Duration::from_micros(250),
            write_timeout: Duration::from_nanos(10),
            max_requests_per_conn: Some(100),
            grace: Duration::from_secs(120),
            delay: Some("5ms+exp:20ms".parse().unwrap()),
            work: Some("lognormal:1ms,2".parse().unwrap()),
            seed: 42,
            autoindex: true,
            spa: true,
            auth: Some("/etc/servelab users".into()),
            dotfiles: Dotfiles::Serve,
            header: vec![
                "Cache-Control: max-age=60".parse().unwrap(),
                "X-A: b: c".parse().unwrap(),
            ],
            compress: true,
            on_abandon: OnAbandon::Finish,
            tls_cert: Some("/etc/tls/chain.pem".into()),
            tls_key: Some("/etc/tls/key.pem".into()),
            tls_self_signed: false,
            tls_self_signed_cert: None,
            h2c: true,
            hsts: Some(600),
        };
        round_trips(&a);
        round_trips(&ServeArgs {
            tls_cert: None,
            tls_key: None,
            tls_self_signed_cert: Some("/tmp/dev cert.pem".into()),
            hsts: Some(0),
            ..a.clone()
        });
        round_trips(&ServeArgs {
            tls_cert: None,
            tls_key: None,
            tls_self_signed: true,
            ..a.clone()
        });
        round_trips(&ServeArgs {
            dir: Some("--odd dir".into()),
            root: None,
            ..a.clone()
        });
        for engine in Engine::ALL {
            round_trips(&ServeArgs {
                engine: *engine,
                ..a.clone()
            });
        }
        for log in [LogTarget::Off, LogTarget::Stdout] {
            round_trips(&ServeArgs {
                log: Some(log),
                ..a.clone()
            });
        }
        // A file named like a keyword is written `./off`: the same file, another path.
        let odd = ServeArgs {
            log: Some(LogTarget::File("off".into())),
            ..ServeArgs::default()
        };
        let back = ServeArgs::try_parse_from(odd.to_args()).unwrap();
        assert_eq!(back.log, Some(LogTarget::File("./off".into())));
        for dist in ["40ms", "const:0.003", "uniform:10ms..30ms", "exp:1e-3s"] {
            round_trips(&ServeArgs {
                delay: Some(dist.parse().unwrap()),
                ..ServeArgs::default()
            });
        }
    }

    #[test]
    fn tls_flags_pair_up_and_exclude_each_other() {
        assert!(parse("--tls-cert c.pem").is_err());
        assert!(parse("--tls-key k.pem").is_err());
        assert!(parse("--tls-cert c.pem --tls-key k.pem --tls-self-signed").is_err());
        let files = parse("--tls-cert c.pem --tls-key k.pem").unwrap();
        let config = files.into_config(|| Ok::<_, ()>("www".into())).unwrap();
        assert_eq!(
            config.tls,
            Some(crate::tls::TlsSource::Files {
                cert: "c.pem".into(),
                key: "k.pem".into()
            })
        );
        let own = parse("--tls-self-signed").unwrap();
        let config = own.into_config(|| Ok::<_, ()>("www".into())).unwrap();
        assert_eq!(config.tls, Some(crate::tls::TlsSource::SelfSigned));
    }

    #[test]
    fn the_self_signed_certificate_goes_where_asked() {
        assert!(parse("--tls-cert c.pem --tls-key k.pem --tls-self-signed-cert s.pem").is_err());
        for line in [
            "--tls-self-signed-cert s.pem",
            "--tls-self-signed --tls-self-signed-cert s.pem",
        ] {
            let a = parse(line).unwrap();
            round_trips(&a);
            let config = a.into_config(|| Ok::<_, ()>("www".into())).unwrap();
            assert_eq!(
                config.tls,
                Some(crate::tls::TlsSource::SelfSignedSaved {
                    cert: "s.pem".into()
                }),
                "{line}"
            );
        }
    }

    #[test]
    fn hsts_takes_an_optional_max_age_glued_on() {
        let hsts = |line: &str| parse(line).unwrap().hsts;
        assert_eq!(hsts("--tls-self-signed"), None);
        assert_eq!(hsts("--hsts"), Some(31_536_000));
        assert_eq!(hsts("--hsts=600"), Some(600));
        assert_eq!(hsts("--hsts=0"), Some(0));
        // `--hsts site` is the flag and a directory, not a max-age of "site".
        let a = parse("--hsts site").unwrap();
        assert_eq!((a.hsts, a.dir), (Some(31_536_000), Some("site".into())));
        assert!(parse("--hsts=soon").is_err());
        assert!(parse("--hsts=-1").is_err());
        let a = parse("--hsts --tls-self-signed").unwrap();
        assert_eq!(
            a.to_args(),
            ["--tls-self-signed", "--hsts=31536000"].map(OsString::from)
        );
        let config = a.into_config(|| Ok::<_, ()>("www".into())).unwrap();
        assert_eq!(config.hsts, Some(31_536_000));
    }

    #[test]
    fn only_what_differs_from_the_defaults_is_written() {
        let a = parse("--workers 4 --log off --delay 40ms").unwrap();
        assert_eq!(
            a.to_args(),
            ["--workers", "4", "--log", "off", "--delay", "const:0.04s"].map(OsString::from)
        );
    }

    #[test]
    fn directory_as_positional_argument() {
        let c = parse("site --autoindex")
            .unwrap()
            .into_config(|| -> Result<PathBuf, ()> { panic!("a directory was given") })
            .unwrap();
        assert_eq!(c.root, PathBuf::from("site"));
        assert!(c.autoindex);
        let err = parse("site --root other").unwrap_err();
        assert_eq!(err.kind(), clap::error::ErrorKind::ArgumentConflict);
        let err = err.to_string();
        assert!(err.contains("--root") && err.contains("[DIR]"), "{err}");
    }

    #[test]
    fn addresses_repeat_and_port_replaces_every_one() {
        let c = parse("--addr 127.0.0.1:1 --addr [::1]:2 --port 0")
            .unwrap()
            .into_config(|| Ok::<_, ()>("www".into()))
            .unwrap();
        assert_eq!(
            c.addrs,
            ["127.0.0.1:0".parse().unwrap(), "[::1]:0".parse().unwrap()]
        );
        let c = parse("--addr :8080")
            .unwrap()
            .into_config(|| Ok::<_, ()>("w".into()))
            .unwrap();
        assert_eq!(c.addrs, ["[::]:8080".parse().unwrap()]);
        let err = parse("--addr localhost").unwrap_err().to_string();
        assert!(err.contains("expected HOST:PORT"), "{err}");
    }

    #[test]
    fn headers_and_formats() {
        let a = parse(
            "--header X-A:1 --header Cache-Control:no-store --log-format json --dotfiles serve",
        )
        .unwrap();
        assert_eq!(a.header.len(), 2);
        assert_eq!(
            (a.log_format, a.dotfiles),
            (LogFormat::Json, Dotfiles::Serve)
        );
        let err = parse("--header Content-Length:5").unwrap_err();
        assert_eq!(err.kind(), clap::error::ErrorKind::ValueValidation);
        assert!(
            err.to_string()
                .contains("Content-Length frames the message"),
            "{err}"
        );
        assert!(parse("--log-format xml").is_err());
        assert!(parse("--dotfiles show").is_err());
    }

    #[test]
    fn bad_flags_are_named() {
        let err = parse("--delay exp:zz").unwrap_err().to_string();
        assert!(err.contains("exp:zz"), "{err}");
        let err = parse("--engine warp").unwrap_err().to_string();
        assert!(err.contains("warp"), "{err}");
        let err = parse("--workers 0").unwrap_err().to_string();
        assert!(err.contains("at least 1"), "{err}");
        let err = parse("--on-abandon maybe").unwrap_err().to_string();
        assert!(
            err.contains("maybe") && err.contains("finish or cancel"),
            "{err}"
        );
        let err = parse("--no-such-flag").unwrap_err().to_string();
        assert!(err.contains("--no-such-flag"), "{err}");
    }

    #[test]
    fn config_takes_the_flags_and_the_default_root_only_when_needed() {
        let c = parse("--root /srv --port 0 --engine pool --workers 2 --log off")
            .unwrap()
            .into_config(|| -> Result<PathBuf, ()> { panic!("root was given") })
            .unwrap();
        assert_eq!(c.root, PathBuf::from("/srv"));
        assert_eq!(c.addrs, ["127.0.0.1:0".parse().unwrap()]);
        assert_eq!(
            (c.engine, c.workers, c.log),
            (Engine::Pool, 2, LogTarget::Off)
        );
        let c = parse("")
            .unwrap()
            .into_config(|| Ok::<_, ()>("www".into()))
            .unwrap();
        assert_eq!(c.root, PathBuf::from("www"));
        assert_eq!(c.log, LogTarget::Stdout);
        assert_eq!(
            parse("").unwrap().into_config(|| Err("none")).unwrap_err(),
            "none"
        );
    }
}
