//! The engines: how connections are accepted and given CPU time, and nothing
//! more.
//!
//! Every engine has the same entry point, `run(listener, site)`, called by
//! [`run`]; it runs until shutdown is asked for, then finishes
//! in-flight work within the grace period and returns. How a connection is
//! driven once accepted (read, write, linger, close) is the business of
//! [`crate::driver`]; no engine uses another engine's code.

use std::net::TcpListener;
use std::sync::Arc;

use crate::engine::Engine;
use crate::error::ServerError;
use crate::shared::Shared;

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

/// Runs `serve` on `--workers` threads, the calling thread one of them,
/// until each returns (`reactor`'s and `uring`'s loop per thread). A loop
/// that fails asks the others to stop; the first error is returned.
pub(crate) fn on_workers(
    site: &Arc<Shared>,
    engine: Engine,
    serve: impl Fn(&Shared) -> Result<(), ServerError> + Sync,
) -> Result<(), ServerError> {
    let workers = site.config.workers;
    let serve = &serve;
    std::thread::scope(|scope| {
        let mut handles = Vec::with_capacity(workers.saturating_sub(1));
        for i in 1..workers {
            let site: &Shared = site;
            let handle = std::thread::Builder::new()
                .name(format!("servelab-{engine}-{i}"))
                .spawn_scoped(scope, move || serve(site))
                .map_err(ServerError::io("starting a worker thread"));
            match handle {
                Ok(h) => handles.push(h),
                Err(e) => {
                    site.shutdown.trigger();
                    return Err(e);
                }
            }
        }
        let mine = serve(site);
        if mine.is_err() {
            site.shutdown.trigger();
        }
        let mut result = mine;
        for h in handles {
            let r = h.join().unwrap_or_else(|_| {
                Err(ServerError::Config(format!("a {engine} thread panicked")))
            });
            if result.is_ok() {
                result = r;
            }
        }
        result
    })
}

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
