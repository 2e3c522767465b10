//! The engines: how connections are accepted and given CPU time, and nothing
//! more.
//!
//! Every engine has the same entry point, `run(listener, site)`, called by
//! [`run`]; it runs until shutdown is asked for, then finishes
//! in-flight work within the grace period and returns. How a connection is
//! driven once accepted (read, write, linger, close) is the business of
//! [`crate::driver`]; no engine uses another engine's code. One file per
//! engine, and `workers.rs`: the thread per worker that `reactor` and
//! `uring` both start (one loop on each).

use std::net::TcpListener;
use std::sync::Arc;

use crate::engine::Engine;
use crate::error::ServerError;
use crate::runtime::shared::Shared;

pub(crate) mod epoll;
pub(crate) mod event;
pub(crate) mod fork;
pub(crate) mod pool;
pub(crate) mod prefork;
pub(crate) mod reactor;
pub(crate) mod serial;
pub(crate) mod thread;
pub(crate) mod tokio_rt;
pub(crate) mod uring;
mod workers;

/// Runs `engine` until shutdown; returns once in-flight work is done.
///
/// The one fact about an engine that its catalogue entry (`Engine::entry`)
/// does not hold: `Config` names an engine, so the catalogue sits below the
/// configuration, while running an engine needs the whole server above it
/// (issue 28: `config -> engine -> engines -> ... -> config` was a circle).
/// The match is exhaustive, so a new engine still does not compile until it
/// has its line here, beside its `mod` line.
pub(crate) fn run(
    engine: Engine,
    listeners: &[TcpListener],
    site: &Arc<Shared>,
) -> Result<(), ServerError> {
    match engine {
        Engine::Serial => serial::run(listeners, site),
        Engine::Thread => thread::run(listeners, site),
        Engine::Pool => pool::run(listeners, site),
        Engine::Fork => fork::run(listeners, site),
        Engine::Prefork => prefork::run(listeners, site),
        Engine::Async => tokio_rt::run(listeners, site),
        Engine::Epoll => epoll::run(listeners, site),
        Engine::Reactor => reactor::run(listeners, site),
        Engine::Event => event::run(listeners, site),
        Engine::Uring => uring::run(listeners, site),
    }
}
