//! `thread`: a new thread for every connection, at most `--max-conns` at once.
//!
//! The classic design of seed 003: the acceptor spawns a thread, the thread
//! serves its connection to the end with blocking syscalls and exits. Nothing
//! is shared between connections but the [`Shared`].
//!
//! The cap is a bound on threads, not a queue: at `--max-conns` live threads the
//! acceptor stops accepting and waits for one to finish, so further clients wait
//! in the kernel's listen backlog (and their connections are not refused). A
//! thread that cannot be created (`EAGAIN` at the system's thread limit) is
//! logged on stderr and its connection answered with 503 and counted as dropped.
//!
//! Every finished thread is joined: each one sends its id on a channel as its
//! last act, and the acceptor joins the threads named there before each accept
//! and while it waits at the cap. So the number of threads (and of their stacks)
//! never exceeds `--max-conns` plus the acceptor, and none is left unjoined.
//!
//! Threads are named `sl-conn-<port>` (15 bytes at most, the kernel's limit), so
//! `/proc/<pid>/task/*/comm` shows which server they belong to.

use std::collections::HashMap;
use std::net::TcpListener;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use crossbeam_channel::{Receiver, RecvTimeoutError};

use crate::driver::accept;
use crate::driver::blocking::{self, Next};
use crate::driver::policy;
use crate::error::ServerError;
use crate::runtime::shared::Shared;

/// Stack of a connection thread. The request path keeps its buffers on the
/// heap (in `Conn` and `Local`), so a small stack suffices and 1024 threads
/// reserve 256 MiB of address space instead of 8 GiB.
const STACK: usize = 256 * 1024;

/// How often a wait at the cap looks at the shutdown flag.
const CAP_POLL: Duration = Duration::from_millis(50);

/// The live connection threads, by id.
struct Threads {
    live: HashMap<u64, JoinHandle<()>>,
    done: Receiver<u64>,
}

impl Threads {
    /// Joins every thread that has said it is done; with `block`, waits for at
    /// least one (or for shutdown) first.
    fn reap(&mut self, block: bool, site: &Shared) {
        if block {
            loop {
                match self.done.recv_timeout(CAP_POLL) {
                    Ok(id) => {
                        self.join(id);
                        break;
                    }
                    Err(RecvTimeoutError::Timeout) if site.shutdown.is_requested() => return,
                    Err(RecvTimeoutError::Timeout) => {}
                    // Unreachable while we hold a sender; nothing to wait for.
                    Err(RecvTimeoutError::Disconnected) => return,
                }
            }
        }
        while let Ok(id) = self.done.try_recv() {
            self.join(id);
        }
    }

    fn join(&mut self, id: u64) {
        if let Some(h) = self.live.remove(&id) {
            // The thread has sent its last message; join returns at once.
            let _ = h.join();
        }
    }
}

pub(crate) fn run(listeners: &[TcpListener], site: &Arc<Shared>) -> Result<(), ServerError> {
    let port = listeners
        .first()
        .and_then(|l| l.local_addr().ok())
        .map_or(0, |a| a.port());
    let name = format!("sl-conn-{port}");
    let (done_tx, done_rx) = crossbeam_channel::unbounded::<u64>();
    let mut threads = Threads {
        live: HashMap::with_capacity(site.config.max_conns.min(4096)),
        done: done_rx,
    };
    let mut next_id = 0u64;
    let _watch = crate::saturation::watch(listeners, site, None);
    blocking::accept_loop(listeners, site, |stream, peer| {
        threads.reap(false, site);
        let id = next_id;
        next_id += 1;
        let site2 = site.clone();
        let done = done_tx.clone();
        // The stream travels in a cell so that, if the thread cannot be made,
        // the acceptor still has it to answer 503 (a failed spawn drops its
        // closure). Costs one small allocation next to a thread creation.
        let cell = Arc::new(Mutex::new(Some(stream)));
        let theirs = cell.clone();
        let spawned = std::thread::Builder::new()
            .name(name.clone())
            .stack_size(STACK)
            .spawn(move || {
                let stream = theirs.lock().unwrap_or_else(|e| e.into_inner()).take();
                drop(theirs);
                if let Some(stream) = stream {
                    // A fresh worker per thread: its scratch is per connection
                    // anyway, and its log buffer is flushed after it ends.
                    let mut worker = site2.local();
                    blocking::serve(stream, peer, &site2, &mut worker);
                }
                let _ = done.send(id);
            });
        match spawned {
            Ok(h) => {
                threads.live.insert(id, h);
            }
            Err(e) => {
                eprintln!("servelab: cannot start a connection thread: {e}; answering 503");
                let stream = cell.lock().unwrap_or_else(|e| e.into_inner()).take();
                if let Some(stream) = stream {
                    blocking::refuse(stream, site);
                }
            }
        }
        // At the cap, wait for a slot before accepting again.
        while !accept::has_room(threads.live.len(), site) && !site.shutdown.is_requested() {
            threads.reap(true, site);
        }
        Next::Continue
    });
    drop(done_tx);
    // Shutdown: idle connections were closed by the trigger; busy ones finish
    // within the grace period, then are cut.
    let handles: Vec<JoinHandle<()>> = threads.live.drain().map(|(_, h)| h).collect();
    policy::finish_threads(handles, site);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reap_joins_finished_threads_only() {
        let (tx, rx) = crossbeam_channel::unbounded();
        let (go_tx, go_rx) = crossbeam_channel::bounded::<()>(0);
        let mut t = Threads {
            live: HashMap::new(),
            done: rx,
        };
        for id in 0..3u64 {
            let tx = tx.clone();
            let go = go_rx.clone();
            t.live.insert(
                id,
                std::thread::spawn(move || {
                    if id == 2 {
                        // Held until the test lets it go.
                        let _ = go.recv();
                    }
                    let _ = tx.send(id);
                }),
            );
        }
        let site = crate::runtime::shared::Shared::new(crate::config::Config::new(env!(
            "CARGO_MANIFEST_DIR"
        )))
        .unwrap();
        while t.live.len() > 1 {
            t.reap(true, &site);
        }
        assert!(t.live.contains_key(&2), "the running thread is not joined");
        go_tx.send(()).unwrap();
        t.reap(true, &site);
        assert!(t.live.is_empty());
    }
}
