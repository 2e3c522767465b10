//! `event`: half-sync/half-async. One selector thread holds every connection
//! while it is idle or while its head arrives; `--workers` threads take
//! complete requests, not connections.
//!
//! The design of Apache's event MPM and of Tomcat's NIO connector, and seed
//! 002's server model exactly: a thread per request, a shared bounded request
//! buffer, drops when the buffer is full. The selector is an ordinary event
//! loop ([`crate::driver::evloop`]) that, when a connection has a complete
//! request, puts the connection on a bounded queue (`--queue`) instead of
//! answering. A worker takes it, runs the handler (with `--work` and
//! `--delay`), writes the response, file included, and hands the connection
//! back to the selector ([`crate::driver::handoff`]). When the queue is full
//! the selector answers `503 Service Unavailable` with `Retry-After` itself and
//! counts the request dropped, as `pool` does with a connection.
//!
//! What it buys over `pool`: a `pool` worker belongs to one connection for the
//! whole of its keep-alive life, and to a slow client for as long as its head
//! takes, so a few idle or trickling connections can take every worker. Here
//! they cost the selector a slot each and no worker, so with two workers a
//! thousand trickling connections do not stop a normal request. What it costs:
//! two thread hand-offs per request (the queue, and the way back; a
//! keep-alive connection goes back without waking the selector, whose next
//! wake-up is the client's next request anyway), and the head is parsed
//! twice, once to find its end and once by the worker. Under load the
//! selector does not wake for each client's next request while requests are
//! queued: it waits for the queue to drain and then reads every request that
//! came meanwhile at once (see "Pace" in [`crate::driver::handoff`]).
//!
//! Shutdown: the selector stops accepting and closes idle connections;
//! requests queued or being served finish (with `Connection: close`). After
//! the grace period workers give up on what they hold and the selector closes
//! the rest; then the queue closes and the workers end.

use std::net::TcpListener;
use std::sync::Arc;

use crate::driver::evloop::EventLoop;
use crate::driver::handoff;
use crate::driver::policy;
use crate::error::ServerError;
use crate::runtime::shared::Shared;

pub(crate) fn run(listeners: &[TcpListener], site: &Arc<Shared>) -> Result<(), ServerError> {
    let (selector_end, workers_end) = handoff::channel(site.config.queue, site.config.workers)
        .map_err(ServerError::io("creating the eventfd"))?;
    // One log buffer for the selector and the workers: a connection's close
    // line (the selector's) then always follows its request lines (a worker's).
    let log = site.log.writer();
    let mut workers = Vec::with_capacity(site.config.workers);
    for i in 0..site.config.workers {
        let end = workers_end.clone();
        let site = site.clone();
        let log = log.share();
        let handle = std::thread::Builder::new()
            .name(format!("servelab-event-{i}"))
            .spawn(move || end.run(&site, &mut site.local_with(log)))
            .map_err(ServerError::io("starting an event worker"));
        match handle {
            Ok(h) => workers.push(h),
            // Dropping the selector's end ends the workers already started.
            Err(e) => return Err(e),
        }
    }
    drop(workers_end);
    let result = EventLoop::new(site, listeners, false)
        .and_then(|l| l.with_handoff(selector_end, log))
        .and_then(|l| l.run());
    if result.is_err() {
        site.shutdown.trigger();
    }
    // The loop has dropped the queue: the workers end once it is empty.
    policy::finish_threads(workers, site);
    result
}
