//! servelab-server: an HTTP/1.1 static-file server with interchangeable
//! concurrency engines.
//!
//! Every engine drives the same sans-I/O connection state machine, so they all
//! serve byte-identical HTTP and differ only in how connections get CPU time.
//! The protocol rules themselves (parsing, paths, ranges, validators) live in
//! `servelab-http`.
//!
//! Layout, by what you want to change:
//! - what to serve and how: [`Config`], [`LogTarget`], [`LogMode`] (`config.rs`);
//!   starting and stopping: [`Server`], [`Running`] (`server.rs`); errors that
//!   stop a server: [`ServerError`] (`error.rs`), and the same as a value for
//!   the program that started it: [`StartFailure`] (`start_failure.rs`)
//! - how connections are accepted and given CPU: [`Engine`] (`engine.rs`) and
//!   one file per engine in `engines/`
//! - how a connection is driven (read, write, linger, close): `driver/`, one
//!   file per way of waiting (`blocking.rs`, `evloop.rs`, `tokio_task.rs`) and
//!   `policy.rs` for what they share (lingering close, accept back-off, the
//!   send path, the grace period)
//! - HTTP on one connection (pipelining, bodies, timeouts, persistence):
//!   `conn.rs`, a state machine with no I/O; the protocol rules themselves are
//!   in `servelab-http`
//! - what a request gets (`site/`): `handler.rs` (static
//!   files: dotfiles, precompressed siblings, preconditions, ranges,
//!   `--header`), `autoindex.rs` (`--autoindex` listings), `spa.rs` (`--spa`
//!   routes), `status.rs` (`/-/status`, `/-/metrics`), all producing
//!   `response.rs`
//! - what the server reads from disk and keeps, beneath the site (`content/`):
//!   `files.rs` opens beneath the root with `openat2(RESOLVE_BENEATH)`,
//!   `cache.rs` keeps open files and their precompressed siblings,
//!   `compress.rs` (`--compress`: on-the-fly gzip, brotli and zstd, with its
//!   bounded store of compressed bodies), `auth.rs` (`--auth`, HTTP Basic
//!   against bcrypt hashes)
//! - the access log: `log.rs` (writers, sync and buffered), `log/line.rs` and
//!   `log/json.rs` (what a line says, combined or JSON)
//! - the flags: [`ServeArgs`] (`args.rs`), with [`ListenAddr`] (`addr.rs`) for
//!   the forms of `--addr`
//! - HTTPS: `tls.rs` and `tls/` (the configuration from `--tls-cert`/`--tls-key`
//!   or `--tls-self-signed`, and [`TlsSource`]; each connection's transport
//!   beneath `Conn`, which the drivers call instead of `recv`/`send`)
//! - what runs the process, below HTTP (`runtime/`): shared and per-thread
//!   state (`shared.rs`); `--delay`/`--work` (`service.rs`); counters:
//!   [`Stats`] (`stats.rs`; a request's counters go to its worker thread's own
//!   shard) with the service-time histogram ([`ServiceTimes`],
//!   `service_time.rs`); the `Date` clock (`clock.rs`); graceful stop
//!   (`shutdown.rs`); forked children (`child.rs`). The warning when an
//!   engine's workers have run out: `saturation.rs`
//!
//! The groups import one way (`content` below `runtime` below `site`, below the
//! connection, its drivers and the engines); `layout.rs` tests that no import
//! makes a circle.
//!
//! ```no_run
//! use servelab_server::{Config, Engine, Server};
//!
//! let mut config = Config::new("www");
//! config.engine = Engine::Pool;
//! let running = Server::bind(config)?.spawn();
//! println!("serving on http://{}", running.local_addr());
//! running.shutdown()?;
//! # Ok::<(), servelab_server::ServerError>(())
//! ```
#![deny(missing_docs)]

mod addr;
mod args;
mod config;
mod conn;
mod content;
mod driver;
mod engine;
mod engines;
mod error;
mod log;
mod runtime;
mod saturation;
mod server;
mod site;
mod start_failure;
mod tls;

pub use addr::{AddrError, ListenAddr};
pub use args::ServeArgs;
pub use config::{Config, Dotfiles, LogFormat, LogMode, LogTarget, OnAbandon, default_workers};
pub use engine::{Capacity, Engine, Unavailable, UnknownEngine, Waits};
pub use error::ServerError;
pub use runtime::service_time::ServiceTimes;
pub use runtime::stats::{H2Counts, Snapshot, Stats, TlsCounts};
/// The service-time distribution of [`Config::delay`] and [`Config::work`]
/// (from `servelab-dist`, re-exported because it is part of [`Config`]).
pub use servelab_dist::Dist;
pub use server::{Running, Server};
pub use site::status::{ByClass, Connections, Handshakes, Http2, Requests, StatusDocument};
pub use start_failure::{REPORT_ENV, StartFailure, StartFailureKind};
pub use tls::TlsSource;

#[cfg(test)]
mod layout;
