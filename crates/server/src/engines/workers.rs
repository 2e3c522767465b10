//! The thread-per-core engines' workers (`reactor`, `uring`): one loop per
//! `--workers` thread, the calling thread one of them, and what happens when
//! one of them fails.

use std::sync::Arc;

use crate::engine::Engine;
use crate::error::ServerError;
use crate::runtime::shared::Shared;

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
