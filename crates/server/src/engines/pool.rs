//! `pool`: a fixed set of worker threads fed by a bounded queue of connections.
//!
//! The acceptor thread puts each accepted connection on a bounded channel
//! (`--queue`); `--workers` threads take them and serve each to its end. When the
//! queue is full the acceptor answers `503 Service Unavailable` with
//! `Retry-After` itself and counts the connection as dropped: overload is visible
//! to the client and in the counters, never a silent loss or an unbounded queue.
//!
//! On shutdown the acceptor stops and closes the channel; workers still serve the
//! connections already queued (their requests were accepted before the signal),
//! then exit.

use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::Arc;

use crossbeam_channel::TrySendError;

use crate::driver::blocking::{self, Next};
use crate::driver::policy;
use crate::error::ServerError;
use crate::runtime::shared::Shared;

pub(crate) fn run(listeners: &[TcpListener], site: &Arc<Shared>) -> Result<(), ServerError> {
    let (tx, rx) = crossbeam_channel::bounded::<(TcpStream, SocketAddr)>(site.config.queue);
    let mut workers = Vec::with_capacity(site.config.workers);
    for i in 0..site.config.workers {
        let rx = rx.clone();
        let site = site.clone();
        let handle = std::thread::Builder::new()
            .name(format!("servelab-pool-{i}"))
            .spawn(move || {
                let mut worker = site.local();
                for (stream, peer) in rx {
                    blocking::serve(stream, peer, &site, &mut worker);
                }
            })
            .map_err(ServerError::io("starting a pool worker"))?;
        workers.push(handle);
    }
    let queued = rx.clone();
    let _watch = crate::saturation::watch(listeners, site, Some(Box::new(move || queued.len())));
    drop(rx);
    blocking::accept_loop(listeners, site, |stream, peer| {
        match tx.try_send((stream, peer)) {
            Ok(()) => {}
            Err(TrySendError::Full((stream, _))) => blocking::refuse(stream, site),
            Err(TrySendError::Disconnected(_)) => return Next::Stop,
        }
        Next::Continue
    });
    drop(tx);
    policy::finish_threads(workers, site);
    Ok(())
}
