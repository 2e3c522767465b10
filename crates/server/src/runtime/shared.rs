//! What every connection of a server shares ([`Shared`]), and what each thread
//! or process of it owns alone ([`Local`]).
//!
//! [`Shared`] is read-only after start (apart from atomics): configuration, the
//! root, the access log, the counters and the shutdown state. Engines hand an
//! `Arc<Shared>` to their threads or inherit it across `fork`; the request path
//! calls it `site`. [`Local`] is per thread (or per process), called `w` on the
//! request path: its log writer, its cached dates and scratch buffers, so the
//! request path needs no lock and no allocation.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use crate::config::Config;
use crate::content::cache::FileCache;
use crate::content::compress::Compressor;
use crate::content::files::Root;
use crate::error::ServerError;
use crate::log::{AccessLog, LogWriter};
use crate::runtime::clock::Clock;
use crate::runtime::service::Service;
use crate::runtime::shutdown::Shutdown;
use crate::runtime::stats::Stats;
use crate::runtime::stats::Tally;

/// The state a server's connections share.
#[derive(Debug)]
pub(crate) struct Shared {
    pub(crate) config: Config,
    pub(crate) root: Root,
    /// `--compress`'s bodies made from the root's files (see `compress.rs`):
    /// one per server, made with it before any engine starts or forks, and
    /// reached by every worker. Empty, and never locked, without the flag.
    /// Kept here rather than in `Root` so that `files` stays below the
    /// compressor, which reads through the file cache (issue 28: files ->
    /// compress -> cache -> files was a circle).
    pub(crate) compressed: Compressor,
    pub(crate) log: AccessLog,
    /// How its lines are written (`--log-format`), chosen once.
    pub(crate) log_format: &'static crate::log::Format,
    pub(crate) stats: Arc<Stats>,
    pub(crate) shutdown: Shutdown,
    /// `--auth`: the users, loaded and checked at start (see `auth.rs`).
    pub(crate) auth: Option<crate::content::auth::Auth>,
    /// The `--header` fields, encoded once (`Name: value\r\n` each).
    pub(crate) extra_headers: Vec<u8>,
    /// HTTPS: the TLS configuration every connection shares (made before any
    /// engine forks, so children share its session-ticket key).
    pub(crate) tls: Option<crate::tls::Tls>,
    /// A connection that opens with the HTTP/2 preface speaks HTTP/2: the
    /// engine carries it, and the server has TLS (ALPN offers `h2`) or
    /// `--h2c`. Otherwise the preface gets 505 (see `conn/h2.rs`).
    pub(crate) http2: bool,
    /// [`Local`]s created so far: each gets its own random stream.
    locals_made: AtomicU64,
}

impl Shared {
    pub(crate) fn new(config: Config) -> Result<Shared, ServerError> {
        if config.workers == 0 {
            return Err(ServerError::Config("--workers must be at least 1".into()));
        }
        if config.queue == 0 {
            return Err(ServerError::Config("--queue must be at least 1".into()));
        }
        if config.max_conns == 0 {
            return Err(ServerError::Config("--max-conns must be at least 1".into()));
        }
        let root = Root::open(&config.root)?;
        let log = AccessLog::open(&config.log, config.log_mode)?;
        let shutdown = Shutdown::new().map_err(ServerError::io("creating the wake-up pipe"))?;
        let mut extra_headers = Vec::new();
        for h in &config.headers {
            h.encode(&mut extra_headers);
        }
        let auth = match &config.auth {
            Some(path) => Some(crate::content::auth::Auth::load(path)?),
            None => None,
        };
        let carries = config.engine.carries_http2();
        if config.h2c && !carries {
            return Err(ServerError::Config(format!(
                "--h2c needs an engine that carries HTTP/2 (async, epoll, reactor or event), \
                 not {}",
                config.engine
            )));
        }
        let tls = match &config.tls {
            Some(source) => Some(crate::tls::Tls::new(source, carries)?),
            None => None,
        };
        Ok(Shared {
            http2: carries && (tls.is_some() || config.h2c),
            tls,
            auth,
            extra_headers,
            log_format: crate::log::format_of(config.log_format),
            config,
            root,
            compressed: Compressor::default(),
            log,
            stats: Arc::new(Stats::default()),
            shutdown,
            locals_made: AtomicU64::new(0),
        })
    }

    /// A fresh per-thread context.
    pub(crate) fn local(&self) -> Local {
        self.local_with(self.log.writer())
    }

    /// A fresh context for a forked child process, whose log writer shares no
    /// lock or buffer with the parent (see `AccessLog::process_writer`).
    pub(crate) fn process_local(&self) -> Local {
        // Its copy of the counter shards is read by no one (see `stats.rs`).
        self.make_local(self.log.process_writer(), self.stats.process_tally())
    }

    /// A fresh per-thread context that logs through `log` (a writer shared
    /// with other threads, [`LogWriter::share`]).
    pub(crate) fn local_with(&self, log: LogWriter) -> Local {
        self.make_local(log, self.stats.tally())
    }

    fn make_local(&self, log: LogWriter, tally: Tally) -> Local {
        Local {
            log,
            tally,
            clock: Clock::new(),
            path: String::with_capacity(256),
            line: Vec::with_capacity(512),
            files: FileCache::default(),
            service: Service::new(
                self.config.delay,
                self.config.work,
                self.config.seed,
                self.locals_made.fetch_add(1, Relaxed),
            ),
        }
    }
}

/// Per-thread (or per-process) state of the request path.
#[derive(Debug)]
pub(crate) struct Local {
    pub(crate) log: LogWriter,
    /// The per-request counters, in this thread's own shard (see `stats.rs`).
    pub(crate) tally: Tally,
    pub(crate) clock: Clock,
    /// Scratch for the decoded request path.
    pub(crate) path: String,
    /// Scratch for assembling one log line.
    pub(crate) line: Vec<u8>,
    /// Open files, metadata and small bodies (see `cache.rs`).
    pub(crate) files: FileCache,
    /// `--delay` and `--work` draws, from this thread's own generator.
    pub(crate) service: Service,
}
