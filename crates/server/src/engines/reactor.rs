//! `reactor`: one epoll event loop per worker thread (`--workers`), all
//! watching the one listening socket with `EPOLLEXCLUSIVE`.
//!
//! Each loop owns its connections from accept to close (no hand-off, no lock,
//! no shared queue), so it scales with cores the way nginx's worker processes
//! do, in threads. With `--workers 1` it is the `epoll` engine on the calling
//! thread.
//!
//! Why a shared listener with `EPOLLEXCLUSIVE` rather than one `SO_REUSEPORT`
//! listener per loop: the exclusive wake-up already avoids the thundering herd
//! (one connection wakes one idle loop, not all of them), and a loop that is
//! busy is not woken, so new connections go to a loop that is free. With
//! `SO_REUSEPORT` the kernel hashes each connection to a fixed listener
//! regardless of how busy its loop is, and connections queued in the backlog
//! of a loop that exits are reset. This is a reasoned choice, not a measured
//! one: the benchmarks here give each server one CPU and one worker, where the
//! two designs are the same single loop; the machine has two cores, too few to
//! show the balance either way.
//!
//! The shared listener defers accepting (`TCP_DEFER_ACCEPT`, set when it is
//! bound; see [`crate::driver::evloop`]).

use std::net::TcpListener;
use std::sync::Arc;

use crate::driver::evloop::EventLoop;
use crate::engine::Engine;
use crate::error::ServerError;
use crate::runtime::shared::Shared;

pub(crate) fn run(listeners: &[TcpListener], site: &Arc<Shared>) -> Result<(), ServerError> {
    if site.config.workers == 1 {
        return EventLoop::new(site, listeners, false)?.run();
    }
    super::workers::on_workers(site, Engine::Reactor, |site| {
        EventLoop::new(site, listeners, true)?.run()
    })
}
