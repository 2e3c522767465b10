//! `async`: tokio's multi-threaded runtime, one task per connection.
//!
//! The Rust ecosystem's everyday choice: this file accepts and spawns a task
//! per connection; the task ([`crate::driver::tokio_task::serve`]) drives the
//! same sans-I/O connection as every other engine. tokio's work-stealing
//! scheduler spreads the tasks over `--workers` threads.
//!
//! Shutdown: the wake pipe is watched through an [`AsyncFd`]; the acceptor
//! stops, a `watch` channel tells every task, idle connections close at once,
//! busy ones finish their response (with `Connection: close`, decided by
//! `Conn`). After the grace period the remaining tasks are aborted, which
//! closes their sockets, and waited for at most `AFTER_FORCE` more: the
//! loops' rule ([`crate::driver::grace`]), written as an `.await`.
#![allow(unsafe_code)] // registering the wake pipe with tokio; see the SAFETY note.

use std::net::TcpListener;
use std::sync::Arc;
use std::time::Duration;

use tokio::io::unix::AsyncFd;
use tokio::sync::watch;
use tokio::task::JoinSet;

use crate::driver::accept::{Accepting, Step};
use crate::driver::grace;
use crate::driver::tokio_task::{adopt_local, serve};
use crate::error::ServerError;
use crate::runtime::shared::Shared;

pub(crate) fn run(listeners: &[TcpListener], site: &Arc<Shared>) -> Result<(), ServerError> {
    // One log buffer for every runtime thread: a task that moves between
    // threads then still logs its connection's lines in order.
    let log = site.log.writer();
    let for_threads = site.clone();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(site.config.workers)
        .thread_name("sl-async")
        .on_thread_start(move || adopt_local(&for_threads, log.share()))
        .enable_io()
        .enable_time()
        .build()
        .map_err(ServerError::io("starting the tokio runtime"))?;
    // The runtime takes its own descriptors of the listeners; the server keeps
    // (and closes) the originals.
    let std_listeners = listeners
        .iter()
        .map(TcpListener::try_clone)
        .collect::<Result<Vec<_>, _>>()
        .map_err(ServerError::io("duplicating the listener"))?;
    let wake = site
        .shutdown
        .wake_fd()
        .try_clone_to_owned()
        .map_err(ServerError::io("duplicating the wake-up pipe"))?;
    let result = rt.block_on(serve_all(std_listeners, wake, site.clone()));
    // Every task has ended or been aborted; nothing is left to wait for.
    rt.shutdown_timeout(Duration::from_secs(1));
    result
}

/// The next connection from any of `listeners`, starting the search at a
/// rotating index so that a flood on one listener cannot starve the others.
async fn accept_any(
    listeners: &[tokio::net::TcpListener],
    next: &mut usize,
) -> std::io::Result<(tokio::net::TcpStream, std::net::SocketAddr)> {
    std::future::poll_fn(|cx| {
        let n = listeners.len();
        for k in 0..n {
            let i = (*next + k) % n;
            if let std::task::Poll::Ready(r) = listeners[i].poll_accept(cx) {
                *next = (i + 1) % n;
                return std::task::Poll::Ready(r);
            }
        }
        std::task::Poll::Pending
    })
    .await
}

async fn serve_all(
    listeners: Vec<TcpListener>,
    wake: std::os::fd::OwnedFd,
    site: Arc<Shared>,
) -> Result<(), ServerError> {
    let listeners = listeners
        .into_iter()
        .map(tokio::net::TcpListener::from_std)
        .collect::<Result<Vec<_>, _>>()
        .map_err(ServerError::io("registering the listener"))?;
    let mut next = 0;
    // SAFETY: `wake` is an OwnedFd moved into the AsyncFd, so the descriptor
    // stays open and names the same pipe until the AsyncFd is dropped, and
    // OwnedFd::as_raw_fd always returns that descriptor.
    let wake = unsafe { AsyncFd::register_with_interest(wake, tokio::io::Interest::READABLE) }
        .map_err(|e| ServerError::io("registering the wake-up pipe")(e.into()))?;
    let (stop_tx, stop_rx) = watch::channel(false);
    let mut tasks = JoinSet::new();
    let mut accepting = Accepting::default();
    loop {
        tokio::select! {
            // The pipe is never drained, so readiness means shutdown for good.
            _ = wake.readable() => break,
            Some(_) = tasks.join_next(), if !tasks.is_empty() => {}
            accepted = accept_any(&listeners, &mut next) => match accepted {
                Ok((stream, peer)) => {
                    accepting.took();
                    tasks.spawn(serve(stream, peer, site.clone(), stop_rx.clone()));
                }
                // Retry and Wait are the same here: the next poll of the
                // accept future tries again and waits if nothing is ready.
                Err(e) => if let Step::Pause(d) = accepting.failed_io(&e) {
                    tokio::select! {
                        _ = wake.readable() => break,
                        _ = tokio::time::sleep(d) => {}
                    }
                },
            },
        }
    }
    site.shutdown.trigger();
    drop(listeners);
    let _ = stop_tx.send(true);
    let drained = tokio::time::timeout(site.config.grace, async {
        while tasks.join_next().await.is_some() {}
    })
    .await;
    if drained.is_err() {
        site.shutdown.force();
        tasks.abort_all();
        // An aborted task ends at its next `.await`; one inside a blocking
        // draw does not, and gets what the loops give: `AFTER_FORCE`.
        let _ = tokio::time::timeout(grace::AFTER_FORCE, async {
            while tasks.join_next().await.is_some() {}
        })
        .await;
    }
    Ok(())
}
