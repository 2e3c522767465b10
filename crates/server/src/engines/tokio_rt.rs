//! `async`: tokio's multi-threaded runtime, one task per connection.
//!
//! The Rust ecosystem's everyday choice, driving the same sans-I/O [`Conn`] as
//! every other engine: a task reads into [`Conn::read_space`], writes what
//! [`Conn::next_write`] offers, and follows the returned [`Interest`]. tokio's
//! work-stealing scheduler spreads the tasks over `--workers` threads.
//!
//! File bodies go by `sendfile(2)` under tokio's readiness: `async_io` calls
//! `sendfile` on the non-blocking socket and, when it returns `EAGAIN`, waits
//! for the socket to become writable and calls it again. No file byte is copied
//! through user space and no blocking thread pool is involved (page-cache reads
//! do not block in practice; a cold disk would stall one runtime thread, as it
//! does in nginx without `aio`).
//!
//! Memory: between requests a connection gives its read and output buffers
//! back ([`Conn::detach`]) to a small per-thread pool and waits for readiness
//! (`readable()`), not in a `read` that needs a buffer; the buffers come back
//! ([`Conn::attach`]) when bytes arrive. So an idle keep-alive connection costs
//! its task and its tokio registration (a few hundred bytes), not 16 KiB, which
//! is what lets 10,000 of them fit in a small RSS.
//!
//! The per-thread [`Worker`] (log writer, cached date, scratch) lives in a
//! thread local of each runtime thread and is borrowed only for the synchronous
//! calls into `Conn`, never across an `.await`, so a task that migrates to
//! another thread simply uses that thread's worker.
//!
//! Timeouts are `tokio::time` timers around the awaits: the read deadline of
//! [`Conn::wait`], and `--write-timeout` for each write that makes no progress.
//! `--delay` ([`Interest::Hold`]) is a timer too: the thread serves others.
//!
//! Shutdown: the wake pipe is watched through an [`AsyncFd`]; the acceptor
//! stops, a `watch` channel tells every task, idle connections close at once,
//! busy ones finish their response (with `Connection: close`, decided by
//! `Conn`). After the grace period the remaining tasks are aborted, which
//! closes their sockets.
#![allow(unsafe_code)] // registering the wake pipe with tokio; see the SAFETY note.

use std::cell::RefCell;
use std::io;
use std::net::{SocketAddr, TcpListener};
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::io::unix::AsyncFd;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::watch;
use tokio::task::JoinSet;

use crate::ServerError;
use crate::conn::{Buffers, Chunk, Conn, Interest};
use crate::site::{Site, Worker};

/// How long a lingering close waits for the client to finish sending.
const LINGER: Duration = Duration::from_secs(1);

thread_local! {
    /// This runtime thread's worker; made on first use. A runtime belongs to one
    /// server, so the worker of a thread always belongs to the right site.
    static WORKER: RefCell<Option<Worker>> = const { RefCell::new(None) };
}

/// Spare connection buffers kept per runtime thread (beyond it they are freed).
const SPARE_BUFFERS: usize = 64;

thread_local! {
    /// Buffers given back by idle connections, lent again to the next reader.
    static SPARE: RefCell<Vec<Buffers>> = const { RefCell::new(Vec::new()) };
}

fn take_buffers() -> Buffers {
    SPARE
        .with(|s| s.borrow_mut().pop())
        .unwrap_or_else(Buffers::new)
}

fn put_buffers(b: Buffers) {
    SPARE.with(|s| {
        let mut s = s.borrow_mut();
        if s.len() < SPARE_BUFFERS {
            s.push(b);
        }
    });
}

/// Runs `f` with this thread's worker.
fn with_worker<R>(site: &Site, f: impl FnOnce(&mut Worker) -> R) -> R {
    WORKER.with(|cell| {
        let mut slot = cell.borrow_mut();
        let w = slot.get_or_insert_with(|| site.worker());
        f(w)
    })
}

pub(crate) fn run(listener: &TcpListener, site: &Arc<Site>) -> Result<(), ServerError> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(site.config.workers)
        .thread_name("sl-async")
        .enable_io()
        .enable_time()
        .build()
        .map_err(ServerError::io("starting the tokio runtime"))?;
    // The runtime takes its own descriptor of the listener; the server keeps
    // (and closes) the original.
    let std_listener = listener
        .try_clone()
        .map_err(ServerError::io("duplicating the listener"))?;
    let wake = site
        .shutdown
        .wake_fd()
        .try_clone_to_owned()
        .map_err(ServerError::io("duplicating the wake-up pipe"))?;
    let result = rt.block_on(serve_all(std_listener, wake, site.clone()));
    // Every task has ended or been aborted; nothing is left to wait for.
    rt.shutdown_timeout(Duration::from_secs(1));
    result
}

async fn serve_all(
    listener: TcpListener,
    wake: std::os::fd::OwnedFd,
    site: Arc<Site>,
) -> Result<(), ServerError> {
    let listener = tokio::net::TcpListener::from_std(listener)
        .map_err(ServerError::io("registering the listener"))?;
    // SAFETY: `wake` is an OwnedFd moved into the AsyncFd, so the descriptor
    // stays open and names the same pipe until the AsyncFd is dropped, and
    // OwnedFd::as_raw_fd always returns that descriptor.
    let wake = unsafe { AsyncFd::register_with_interest(wake, tokio::io::Interest::READABLE) }
        .map_err(|e| ServerError::io("registering the wake-up pipe")(e.into()))?;
    let (stop_tx, stop_rx) = watch::channel(false);
    let mut tasks = JoinSet::new();
    let mut backoff = Duration::ZERO;
    loop {
        tokio::select! {
            // The pipe is never drained, so readiness means shutdown for good.
            _ = wake.readable() => break,
            Some(_) = tasks.join_next(), if !tasks.is_empty() => {}
            accepted = listener.accept() => match accepted {
                Ok((stream, peer)) => {
                    backoff = Duration::ZERO;
                    tasks.spawn(serve(stream, peer, site.clone(), stop_rx.clone()));
                }
                Err(e) if is_resource_error(&e) => {
                    // EMFILE and friends: back off instead of spinning.
                    backoff = (backoff * 2)
                        .clamp(Duration::from_millis(10), Duration::from_millis(500));
                    tokio::select! {
                        _ = wake.readable() => break,
                        _ = tokio::time::sleep(backoff) => {}
                    }
                }
                // ECONNABORTED and friends: that one client is gone.
                Err(_) => {}
            },
        }
    }
    site.shutdown.trigger();
    drop(listener);
    let _ = stop_tx.send(true);
    let drained = tokio::time::timeout(site.config.grace, async {
        while tasks.join_next().await.is_some() {}
    })
    .await;
    if drained.is_err() {
        site.shutdown.force();
        tasks.abort_all();
        while tasks.join_next().await.is_some() {}
    }
    Ok(())
}

fn is_resource_error(e: &io::Error) -> bool {
    matches!(
        e.raw_os_error(),
        Some(libc::EMFILE | libc::ENFILE | libc::ENOBUFS | libc::ENOMEM)
    )
}

/// Counts the connection open for as long as the task lives, even when the
/// task is aborted at the end of the grace period.
struct OpenGuard<'a>(&'a Site);

impl Drop for OpenGuard<'_> {
    fn drop(&mut self) {
        self.0.stats.conn_closed();
    }
}

/// Serves one connection to its end.
async fn serve(
    mut stream: TcpStream,
    peer: SocketAddr,
    site: Arc<Site>,
    mut stop: watch::Receiver<bool>,
) {
    site.stats.conn_opened();
    let _open = OpenGuard(&site);
    if site.shutdown.is_forced() {
        return;
    }
    let mut conn = Conn::bare(peer);
    // Whether `conn` holds buffers now (it starts without).
    let mut has_buffers = false;
    let mut interest = Interest::Read;
    loop {
        match interest {
            Interest::Read => {
                let idle = conn.is_idle();
                if idle && *stop.borrow() {
                    // Shutting down between requests: close.
                    break;
                }
                if idle
                    && has_buffers
                    && let Some(bufs) = conn.detach()
                {
                    // Between requests the connection gives its 16 KiB of
                    // buffers back, so idle keep-alive connections cost only
                    // their task (see the module docs).
                    put_buffers(bufs);
                    has_buffers = false;
                }
                let deadline = conn.wait(&site).deadline();
                let sleep = tokio::time::sleep_until(deadline.into());
                // Readiness first, then a non-blocking read into buffers taken
                // only now: a connection that waits holds no buffer.
                let ready = tokio::select! {
                    r = stream.readable() => Some(r),
                    _ = sleep => None,
                    // Only an idle connection is cut by shutdown; a request
                    // being received is answered.
                    _ = stop.changed(), if idle => continue,
                };
                let read = match ready {
                    Some(Ok(())) => {
                        if !has_buffers {
                            conn.attach(take_buffers());
                            has_buffers = true;
                        }
                        match stream.try_read(conn.read_space()) {
                            Err(e) if e.kind() == io::ErrorKind::WouldBlock => continue,
                            r => Some(r),
                        }
                    }
                    Some(Err(e)) => Some(Err(e)),
                    None => None,
                };
                interest = match read {
                    Some(Ok(n)) => with_worker(&site, |w| conn.filled(n, &site, w)),
                    Some(Err(e)) if e.kind() == io::ErrorKind::Interrupted => continue,
                    Some(Err(_)) => {
                        conn.abandon(&site);
                        Interest::Close { linger: false }
                    }
                    None if Instant::now() >= deadline => {
                        with_worker(&site, |w| conn.timed_out(&site, w))
                    }
                    None => continue,
                };
            }
            Interest::Write => {
                let wrote = tokio::time::timeout(site.config.write_timeout, async {
                    match conn.next_write() {
                        Some(Chunk::Bytes(bytes)) => stream.write(bytes).await,
                        Some(Chunk::File { file, offset, len }) => {
                            stream
                                .async_io(tokio::io::Interest::WRITABLE, || {
                                    let mut off = offset;
                                    rustix::fs::sendfile(&stream, file, Some(&mut off), len)
                                        .map_err(io::Error::from)
                                })
                                .await
                        }
                        None => Ok(0),
                    }
                })
                .await;
                interest = match wrote {
                    Ok(Ok(n)) => with_worker(&site, |w| conn.wrote(n, &site, w)),
                    Ok(Err(e)) if e.kind() == io::ErrorKind::Interrupted => continue,
                    // Reset, broken pipe, or no progress within the write timeout.
                    Ok(Err(_)) | Err(_) => {
                        conn.abandon(&site);
                        Interest::Close { linger: false }
                    }
                };
            }
            Interest::Hold(until) => {
                // --delay: a timer; the runtime thread serves others meanwhile.
                tokio::time::sleep_until(until.into()).await;
                interest = conn.release();
            }
            Interest::Close { linger } => {
                if linger {
                    linger_close(&mut stream).await;
                }
                break;
            }
        }
    }
}

/// Shuts our side, then reads and drops what the client still sends (bounded
/// in bytes and time), so an error response is not destroyed by a reset caused
/// by unread request bytes (see `blocking::linger_close`).
async fn linger_close(stream: &mut TcpStream) {
    // shutdown(SHUT_WR) for a TcpStream.
    let _ = stream.shutdown().await;
    let _ = tokio::time::timeout(LINGER, async {
        // On the heap: an array here would live in every connection's
        // future (4 KiB each, idle or not), since futures are sized for their
        // largest state.
        let mut sink = vec![0u8; 4096];
        let mut total = 0usize;
        while total < 256 * 1024 {
            match stream.read(&mut sink).await {
                Ok(0) | Err(_) => break,
                Ok(n) => total += n,
            }
        }
    })
    .await;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spare_buffers_are_bounded() {
        for _ in 0..SPARE_BUFFERS + 10 {
            put_buffers(Buffers::new());
        }
        assert_eq!(SPARE.with(|s| s.borrow().len()), SPARE_BUFFERS);
        let _b = take_buffers();
        assert_eq!(SPARE.with(|s| s.borrow().len()), SPARE_BUFFERS - 1);
    }
}
