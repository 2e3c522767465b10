//! Driving a [`Conn`] from a tokio task, for the `async` engine: [`serve`]
//! runs the loop of every driver ([`carry`]) with the reads and writes of
//! [`step`] inside tokio's `try_io` ([`Task`]), and where that loop stops
//! (nothing to read, no room, a hold, the close) awaits what it waits for;
//! tokio's scheduler spreads the tasks over the runtime's threads.
//!
//! File bodies go by `sendfile(2)` under tokio's readiness: `try_io` calls
//! `sendfile` on the non-blocking socket and, when it returns `EAGAIN`, the
//! task awaits the socket's becoming writable and calls it again. No file byte
//! is copied through user space and no blocking thread pool is involved
//! (page-cache reads do not block in practice; a cold disk would stall one
//! runtime thread, as it does in nginx without `aio`).
//!
//! Memory: between requests a connection gives its read and output buffers
//! back ([`Conn::detach`]) to a small per-thread pool and waits for readiness
//! (`readable()`), not in a `read` that needs a buffer; the buffers come back
//! ([`Conn::attach`]) when bytes arrive. So an idle keep-alive connection costs
//! its task and its tokio registration (a few hundred bytes), not 16 KiB, which
//! is what lets 10,000 of them fit in a small RSS.
//!
//! The per-thread [`Local`] (log writer, cached date, scratch) lives in a
//! thread local of each runtime thread and is borrowed only for the synchronous
//! calls into `Conn`, never across an `.await`, so a task that migrates to
//! another thread simply uses that thread's [`Local`].
//!
//! Timeouts are `tokio::time` timers around the awaits: the read deadline of
//! [`Conn::deadline`], and `--write-timeout` for each write that makes no progress.
//! `--delay` ([`Interest::Hold`]) is a timer too: the thread serves others.
//! The hold also awaits the socket's read readiness, so a client that leaves
//! meanwhile is seen at once ([`Event::PeerGone`]); since tokio's readiness
//! may be left over from the read that brought the request, a `MSG_PEEK`
//! confirms it (one per held request; none without `--delay`).
//! Shutdown reaches a task through a `watch` channel: an idle connection closes
//! at once, a busy one finishes its response (with `Connection: close`, decided
//! by `Conn`).

use std::cell::RefCell;
use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Instant;

use tokio::net::TcpStream;
use tokio::sync::watch;

use super::closing::{Close, Closing, Ready};
use super::dispatch::{Carry, carry};
use super::policy::{self, log_connection};
use super::spares::Spares;
use super::step::{self, Moved};
use super::wire::Wire;
use crate::conn::{Buffers, Conn, Event, Interest};
use crate::log::LogWriter;
use crate::runtime::shared::{Local, Shared};

thread_local! {
    /// This runtime thread's [`Local`]; made on first use. A runtime belongs to one
    /// server, so the `Local` of a thread always belongs to the right server.
    static LOCAL: RefCell<Option<Local>> = const { RefCell::new(None) };
}

/// Spare connection buffers kept per runtime thread (beyond it they are freed).
const SPARE_BUFFERS: usize = 64;

thread_local! {
    /// Buffers given back by idle connections, lent again to the next reader.
    static SPARE: RefCell<Spares> = const { RefCell::new(Spares::new(SPARE_BUFFERS)) };
}

fn take_buffers() -> Buffers {
    SPARE.with(|s| s.borrow_mut().lend())
}

fn put_buffers(b: Buffers) {
    SPARE.with(|s| s.borrow_mut().keep(b));
}

/// Makes this runtime thread's [`Local`] one that logs through `log` (shared by
/// every runtime thread, so a task that migrates keeps its lines in order).
pub(crate) fn adopt_local(site: &Shared, log: LogWriter) {
    LOCAL.with(|cell| *cell.borrow_mut() = Some(site.local_with(log)));
}

/// Runs `f` with this thread's [`Local`].
fn with_local<R>(site: &Shared, f: impl FnOnce(&mut Local) -> R) -> R {
    LOCAL.with(|cell| {
        let mut slot = cell.borrow_mut();
        let w = slot.get_or_insert_with(|| site.local());
        f(w)
    })
}

/// Counts the connection open for as long as the task lives, even when the
/// task is aborted at the end of the grace period.
struct OpenGuard<'a>(&'a Shared);

impl Drop for OpenGuard<'_> {
    fn drop(&mut self) {
        self.0.stats.conn_closed();
    }
}

/// Serves one connection to its end; `stop` turns true when shutdown begins.
pub(crate) async fn serve(
    stream: TcpStream,
    peer: SocketAddr,
    site: Arc<Shared>,
    mut stop: watch::Receiver<bool>,
) {
    let mut conn = Conn::bare(peer);
    if !with_local(&site, |w| policy::opened(&site, w, &conn)) {
        return;
    }
    // From here the close is counted by the guard (at the task's end, or
    // when the task is aborted after the grace period).
    let open = OpenGuard(&site);
    let mut wire = Wire::new(&site);
    // Whether `conn` holds buffers now (it starts without).
    let mut has_buffers = false;
    let mut interest = Interest::Read;
    loop {
        // The loop of every driver, its reads and writes inside `try_io`;
        // it stops where this task has to wait, and the wait is the match
        // below.
        interest = with_local(&site, |w| {
            let mut task = Task {
                stream: &stream,
                conn: &mut conn,
                wire: &mut wire,
                has_buffers: &mut has_buffers,
                site: &site,
                w,
            };
            carry(&mut task, interest)
        });
        match interest {
            Interest::Read => {
                let idle = conn.is_idle();
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
                // Once shutdown has begun, an idle connection's deadline is now.
                let deadline = conn.deadline(&site).unwrap_or_else(Instant::now);
                let event = tokio::select! {
                    r = stream.readable() => match r {
                        // Read again (`Task::read`).
                        Ok(()) => continue,
                        Err(_) => Event::ReadFailed,
                    },
                    _ = tokio::time::sleep_until(deadline.into()) => Event::Deadline,
                    // Shutdown begun: look at the deadline again (`Conn` closes
                    // an idle connection; a request being received is answered).
                    _ = stop.changed(), if idle => continue,
                };
                interest = with_local(&site, |w| conn.on(event, &site, w));
            }
            Interest::Write => {
                // No room: wait for it, for at most the write timeout.
                match tokio::time::timeout(site.config.write_timeout, stream.writable()).await {
                    Ok(Ok(())) => {}
                    // A reset, or no progress within the write timeout.
                    Ok(Err(_)) | Err(_) => {
                        interest = with_local(&site, |w| conn.on(Event::WriteFailed, &site, w));
                    }
                }
            }
            Interest::Hold => {
                // --delay: a timer; the runtime thread serves others meanwhile.
                let until = conn.held_until();
                let event = if conn.watches_peer() {
                    hold(&stream, until).await
                } else {
                    tokio::time::sleep_until(until.into()).await;
                    Event::Deadline
                };
                interest = with_local(&site, |w| conn.on(event, &site, w));
            }
            Interest::Close { linger } => {
                close(&stream, &mut wire, &site, linger).await;
                break;
            }
            // `Task::work` never stops: --work burns this runtime thread's
            // CPU, as a handler would.
            Interest::Work => {}
        }
    }
    // Counted closed (and logged) before the client can see the end: a
    // client that reads to the end and then asks `/-/status` finds it closed.
    with_local(&site, |w| {
        log_connection(&site, w, &conn, wire.resumed(), true)
    });
    drop(open);
    drop(stream);
}

/// How a task carries out each [`Interest`] ([`carry`]): the reads and
/// writes of [`step`] inside tokio's `try_io`, which clears tokio's
/// readiness when the step meets `EAGAIN` (and skips the syscall while none
/// is known); then the task awaits readiness, a timer or shutdown
/// ([`serve`]'s match), as it does for a hold and the close.
struct Task<'a> {
    stream: &'a TcpStream,
    conn: &'a mut Conn,
    wire: &'a mut Wire,
    /// Whether `conn` holds buffers now: they are taken only for a read that
    /// may find bytes.
    has_buffers: &'a mut bool,
    site: &'a Shared,
    w: &'a mut Local,
}

impl Carry for Task<'_> {
    fn read(&mut self) -> Option<Interest> {
        let Task {
            stream,
            conn,
            wire,
            has_buffers,
            site,
            w,
        } = self;
        try_step(
            stream,
            tokio::io::Interest::READABLE,
            Interest::Read,
            || {
                if !**has_buffers {
                    conn.attach(take_buffers());
                    **has_buffers = true;
                }
                step::read(*stream, conn, wire, site, w)
            },
        )
    }

    fn write(&mut self) -> Option<Interest> {
        let Task {
            stream,
            conn,
            wire,
            site,
            w,
            ..
        } = self;
        try_step(
            stream,
            tokio::io::Interest::WRITABLE,
            Interest::Write,
            || step::write(*stream, conn, wire, site, w),
        )
    }

    fn work(&mut self) -> Option<Interest> {
        Some(policy::work(self.stream, self.conn, self.site, self.w))
    }

    /// Awaited in [`serve`] ([`close`]).
    fn close(&mut self, _linger: bool) {}
}

/// One read or write `step` inside tokio's `try_io`, which skips it while
/// tokio knows of no readiness and clears the readiness when it meets
/// `EAGAIN`: what `Conn` wants next, `again` after `EINTR`, or `None` to
/// await readiness.
fn try_step(
    stream: &TcpStream,
    ready: tokio::io::Interest,
    again: Interest,
    step: impl FnOnce() -> Moved,
) -> Option<Interest> {
    let moved = stream.try_io(ready, || match step() {
        Moved::Again => Err(io::ErrorKind::WouldBlock.into()),
        moved => Ok(moved),
    });
    match moved {
        Ok(Moved::Told { next, .. }) => Some(next),
        Ok(Moved::Again | Moved::Retry) => Some(again),
        Err(_) => None,
    }
}

/// Waits until `until` ([`Event::Deadline`]) unless the client closes first
/// ([`Event::PeerGone`], saying whether request bytes are still waiting ahead
/// of the close).
///
/// Read readiness also means "pipelined bytes arrived", and tokio has no wait
/// for the close alone; so once bytes are seen waiting, the close is looked
/// for in tokio's recorded readiness every 10 ms (no syscall), and a close
/// seen then is behind those bytes: a half-close.
async fn hold(stream: &TcpStream, until: Instant) -> Event {
    const LOOK: std::time::Duration = std::time::Duration::from_millis(10);
    let sleep = tokio::time::sleep_until(until.into());
    tokio::pin!(sleep);
    loop {
        tokio::select! {
            _ = &mut sleep => return Event::Deadline,
            ready = stream.ready(tokio::io::Interest::READABLE) => {
                if ready.is_err() {
                    return Event::PeerGone { unread: false };
                }
                let mut byte = [0u8; 1];
                // try_io clears a stale readiness when the peek would block.
                let peek = stream.try_io(tokio::io::Interest::READABLE, || {
                    let flags = rustix::net::RecvFlags::PEEK | rustix::net::RecvFlags::DONTWAIT;
                    rustix::net::recv(stream, &mut byte, flags)
                        .map(|(n, _)| n)
                        .map_err(io::Error::from)
                });
                match peek {
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => continue,
                    Ok(0) | Err(_) => return Event::PeerGone { unread: false },
                    Ok(_) => break,
                }
            }
        }
    }
    // Bytes wait unread: look for a close behind them until the time is up.
    loop {
        tokio::select! {
            _ = &mut sleep => return Event::Deadline,
            _ = tokio::time::sleep(LOOK) => {
                let now = tokio::time::timeout(
                    std::time::Duration::ZERO,
                    stream.ready(tokio::io::Interest::READABLE),
                )
                .await;
                match now {
                    Ok(Ok(r)) if r.is_read_closed() => return Event::PeerGone { unread: true },
                    Ok(Err(_)) => return Event::PeerGone { unread: false },
                    _ => {}
                }
            }
        }
    }
}

/// Carries out the close (see `closing.rs`), waiting for tokio's readiness
/// between steps. Each step after a wait runs inside `async_io`, which clears
/// tokio's readiness only when the step met `EAGAIN`: an edge that came
/// meanwhile is never lost, and a stale one never spins.
async fn close(stream: &TcpStream, wire: &mut Wire, site: &Shared, linger: bool) {
    let mut closing = Closing::new(linger);
    let mut next = closing.step(stream, wire, site);
    while let Close::Wait { ready, until } = next {
        let interest = match ready {
            Ready::Read => tokio::io::Interest::READABLE,
            Ready::Write => tokio::io::Interest::WRITABLE,
        };
        let waited = tokio::time::timeout_at(
            until.into(),
            stream.async_io(interest, || match closing.step(stream, wire, site) {
                Close::Wait { ready: r, .. } if r == ready => Err(io::ErrorKind::WouldBlock.into()),
                other => Ok(other),
            }),
        )
        .await;
        next = match waited {
            Ok(Ok(other)) => other,
            Ok(Err(_)) => Close::Done,
            // Time is up: the step ends the close.
            Err(_) => closing.step(stream, wire, site),
        };
    }
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
