//! servelab-server: an HTTP/1.1 static-file server with interchangeable
//! concurrency engines.
//!
//! Every engine drives the same sans-I/O connection state machine, so they all
//! serve byte-identical HTTP and differ only in how connections get CPU time.
//! The protocol rules themselves (parsing, paths, ranges, validators) live in
//! `servelab-http`.
//!
//! Layout:
//! - [`Config`], [`LogTarget`], [`LogMode`]: what to serve and how (`config.rs`)
//! - [`Engine`]: the architectures and their names (`engine.rs`, `engines/*.rs`)
//! - [`Server`], [`Running`]: bind, run, spawn, stop (`server.rs`)
//! - `conn.rs`: one connection as a state machine (`Reading`, `Draining`,
//!   `Writing`, `Closed`); `handler.rs`: request to response; `files.rs`: opening
//!   beneath the root with `openat2(RESOLVE_BENEATH)`
//! - `blocking.rs`: the accept loop and the blocking connection driver
//! - `log.rs`: the access log (sync and buffered); `shutdown.rs`: graceful stop;
//!   [`Stats`]: counters, in memory shared with child processes; `status.rs`:
//!   the `/-/status` and `/-/metrics` endpoints of `--status`
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

mod args;
mod blocking;
mod cache;
mod clock;
mod config;
mod conn;
mod dist;
mod engine;
mod engines;
mod error;
mod evloop;
mod files;
mod handler;
mod log;
mod server;
mod shutdown;
mod site;
mod stats;
mod status;

pub use args::ServeArgs;
pub use config::{Config, LogMode, LogTarget, default_workers};
pub use dist::{BadDist, Dist};
pub use engine::{Engine, UnknownEngine};
pub use error::ServerError;
pub use server::{Running, Server};
pub use stats::{Snapshot, Stats};
