//! The rules every driver and engine follows, each written once: what a
//! connection's open and close count and log ([`opened`], [`closed`]), how
//! long and how much a lingering close drains (carried out by
//! [`super::closing`]), how accepting backs off when descriptors run out,
//! which errors mean "out of resources", how a [`Chunk`] goes to a socket,
//! the deadlines, and how a pool of threads is given its grace period.
//!
//! The drivers ([`super::blocking`], [`super::evloop`], [`super::tokio_task`])
//! differ in how they wait (a blocking syscall, an epoll edge, a future), not in
//! what they decide; the decisions live here, so changing the lingering close
//! or the back-off is one edit.
//!
//! ## Deadlines
//!
//! One policy on every engine: a connection waits until
//! [`Conn::deadline`] (its read, keep-alive, write-progress or hold
//! deadline), counted from when the client connected, and each wait for it
//! ends within a few milliseconds of that instant, never early by more than
//! a retry. Two things broke it before, each an overshoot of its own:
//!
//! - *Late news of a connection.* An event loop's listener defers accepting
//!   until the client's first bytes arrive (`TCP_DEFER_ACCEPT`, see
//!   [`super::evloop`]); one that sends nothing is handed over only when the
//!   kernel gives up, [`super::evloop::DEFER`] after the connect, and its read
//!   timeout counted from then: 4.0 s for `--read-timeout 3s`. A connection
//!   whose first read finds nothing is therefore dated back by that much
//!   ([`Conn::connected_earlier`]). (One whose first bytes came during the
//!   deferral is dated from those bytes: the kernel does not say when it
//!   connected, so such a client may have up to a second more.)
//! - *Coarse socket timeouts.* `SO_RCVTIMEO` and `SO_SNDTIMEO` end a wait in
//!   the kernel's timer wheel, which rounds a timeout up by as much as an
//!   eighth of it plus a tick (a 3 s `SO_RCVTIMEO` measured 3.106 s). So the
//!   blocking drivers' socket timeouts are set short ([`socket_timeout`]):
//!   they end a long wait early, harmlessly ([`Event::Deadline`] before the
//!   deadline changes nothing), and the last part of a wait is a `poll`
//!   ([`ready_by`]), whose timer, like `epoll_wait`'s and tokio's, keeps to
//!   the millisecond.
//!
//! Test: `tests/server/deadlines.rs` measures the close of a silent
//! connection, a head left unfinished and an idle keep-alive connection on
//! every engine.

use std::os::fd::AsFd;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use rustix::io::Errno;
use rustix::net::{RecvFlags, SendFlags};

use rustix::event::{PollFd, PollFlags};

use super::grace;
use crate::conn::{Chunk, Conn, Event, Interest};
use crate::runtime::service;
use crate::runtime::shared::{Local, Shared};

/// How long a lingering close waits for the client to stop sending.
pub(crate) const LINGER: Duration = Duration::from_secs(1);
/// How much a lingering close reads and drops at most.
const LINGER_BYTES: usize = 256 * 1024;

/// A lingering close in progress (nginx's `lingering_close`): after our last
/// response the write side is shut, and what the client still sends is read and
/// dropped, bounded in time and bytes, so that unread request bytes do not make
/// the kernel reset the connection before the client has read our answer.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Linger {
    until: Instant,
    drained: usize,
}

impl Linger {
    /// Starts now (the caller has just shut the write side).
    pub(crate) fn start() -> Linger {
        Linger {
            until: Instant::now() + LINGER,
            drained: 0,
        }
    }

    /// When the lingering close gives up waiting.
    pub(crate) fn until(&self) -> Instant {
        self.until
    }

    /// Counts `n` bytes read and dropped.
    pub(crate) fn drained(&mut self, n: usize) {
        self.drained += n;
    }

    /// Enough: the time is up or the byte bound is reached.
    pub(crate) fn is_over(&self) -> bool {
        self.drained >= LINGER_BYTES || Instant::now() >= self.until
    }
}

/// The pause of an accept loop that met a resource error: 10 ms, doubling up
/// to 500 ms while the error persists, back to nothing after a success. A
/// listener stays readable while descriptors are exhausted, so without a pause
/// the loop would spin at full CPU instead of serving what it has. Used through
/// [`super::accept::Accepting`].
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct Backoff(Duration);

impl Backoff {
    const FIRST: Duration = Duration::from_millis(10);
    const MOST: Duration = Duration::from_millis(500);

    /// The next pause (after another resource error).
    pub(crate) fn next(&mut self) -> Duration {
        self.0 = (self.0 * 2).clamp(Self::FIRST, Self::MOST);
        self.0
    }

    /// An accept succeeded.
    pub(crate) fn reset(&mut self) {
        self.0 = Duration::ZERO;
    }
}

/// Is this accept error the system running out of something (descriptors,
/// buffers, memory) rather than one client's trouble? Then back off.
pub(crate) fn is_resource_error(e: Errno) -> bool {
    matches!(
        e,
        Errno::MFILE | Errno::NFILE | Errno::NOBUFS | Errno::NOMEM
    )
}

/// Sends `chunk` with one syscall: `send` for bytes (with `MSG_MORE` when a
/// file body follows, so the head and the first body bytes share a segment),
/// `sendfile` for a file range. `MSG_NOSIGNAL`: a peer that has gone is an
/// `EPIPE` to handle, never a signal. Returns the bytes taken.
#[inline]
pub(crate) fn send_chunk(
    sock: impl AsFd,
    chunk: Chunk<'_>,
    file_follows: bool,
) -> rustix::io::Result<usize> {
    match chunk {
        Chunk::Bytes(bytes) => {
            let mut flags = SendFlags::NOSIGNAL;
            if file_follows {
                flags |= SendFlags::MORE;
            }
            rustix::net::send(sock, bytes, flags)
        }
        Chunk::File { file, offset, len } => {
            let mut off = offset;
            rustix::fs::sendfile(sock, file, Some(&mut off), len)
        }
    }
}

/// After the client's close was signalled (`RDHUP`, `HUP`, `ERR`): are
/// request bytes still waiting in the socket ahead of it (see
/// [`Event::PeerGone`])? One `recv(MSG_PEEK)` of one byte, made only when
/// `Conn` weighs the answer ([`peer_gone`]), so at most once per connection
/// and never on the way of an ordinary request. A reset reads as an error:
/// nothing waits, the client is gone.
fn unread_before_close(sock: impl AsFd) -> bool {
    let mut byte = [0u8; 1];
    let flags = RecvFlags::PEEK | RecvFlags::DONTWAIT;
    matches!(rustix::net::recv(sock, &mut byte, flags), Ok((n, _)) if n > 0)
}

/// Has the client closed (or reset) the connection? A `poll` that does not
/// wait; made only while `--work` burns, never on an ordinary request.
pub(crate) fn closed_now(sock: impl AsFd) -> bool {
    let mut fds = [PollFd::new(&sock, PollFlags::RDHUP)];
    matches!(rustix::event::poll(&mut fds, Some(&timespec(Duration::ZERO))), Ok(n) if n > 0)
}

/// Runs an [`Interest::Work`] on the calling thread: answers what waits
/// ([`Conn::work`]), burns the `--work` drawn for it, then reports
/// [`Event::Worked`] (a drawn `--delay` starts then). The client is watched
/// while CPU burns, with a `poll` that does not wait: about every millisecond
/// with `--on-abandon cancel` (a client that leaves stops the work, and the
/// connection closes at once), once at the end with `finish` (the work runs
/// out for nobody, and the response is not written). Without `--work` this is
/// the handler call alone: no clock read, no `poll`.
pub(crate) fn work(sock: impl AsFd, conn: &mut Conn, site: &Shared, w: &mut Local) -> Interest {
    let d = conn.work(site, w);
    if d.is_zero() {
        return conn.on(Event::Worked, site, w);
    }
    let until = service::thread_cpu_time() + d;
    let watch = conn.cancels_work_when_peer_goes(site);
    if watch && service::burn(until, || closed_now(&sock)) {
        let next = conn.on(peer_gone(&sock, conn), site, w);
        if matches!(next, Interest::Close { .. }) {
            return next;
        }
        // A half-close: the client waits for the answer; finish the work.
        service::burn(until, || false);
    } else if !watch {
        service::burn(until, || false);
    }
    // The one look of `finish` (and the last of `cancel`), told while the
    // work is still `Conn`'s interest: it decides what follows the work.
    if conn.watches_peer() && closed_now(&sock) {
        let next = conn.on(peer_gone(&sock, conn), site, w);
        if matches!(next, Interest::Close { .. }) {
            return next;
        }
    }
    conn.on(Event::Worked, site, w)
}

/// The client's close was signalled: [`Event::PeerGone`] for `conn`, with
/// one peek for request bytes waiting ahead of it while `conn` weighs them
/// ([`Conn::watches_peer`]: a response held or worked for); none otherwise.
pub(crate) fn peer_gone(sock: impl AsFd, conn: &Conn) -> Event {
    Event::PeerGone {
        unread: conn.watches_peer() && unread_before_close(sock),
    }
}

/// The longest a blocking wait (a hold, a worker's wait for room to write)
/// lasts without looking at whether shutdown was forced.
pub(crate) const FORCE_CHECK: Duration = Duration::from_millis(50);

/// Waits out an [`Interest::Hold`] on a thread that has nothing else to do
/// (blocking drivers, and `event`'s workers), and says how it ended: the time
/// is up ([`Event::Deadline`]), the client closed first
/// ([`Event::PeerGone`], watched only while [`Conn::watches_peer`]), or
/// shutdown was forced ([`Event::Forced`]). The wait is a
/// `poll(POLLRDHUP)`, not a sleep: the same one syscall per slice, and only
/// the close wakes it (a reset is `POLLHUP`/`POLLERR`, always reported), so
/// pipelined requests arriving meanwhile stay unread, and a close behind them
/// is judged a half-close by the peek that follows.
pub(crate) fn hold(sock: impl AsFd, until: Instant, conn: &Conn, site: &Shared) -> Event {
    let watch = conn.watches_peer();
    loop {
        if site.shutdown.is_forced() {
            return Event::Forced;
        }
        let left = until.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Event::Deadline;
        }
        let slice = left.min(FORCE_CHECK);
        if !watch {
            std::thread::sleep(slice);
            continue;
        }
        let mut fds = [PollFd::new(&sock, PollFlags::RDHUP)];
        match rustix::event::poll(&mut fds, Some(&timespec(slice))) {
            Ok(0) | Err(Errno::INTR) => {}
            Ok(_) => return peer_gone(&sock, conn),
            Err(_) => std::thread::sleep(slice),
        }
    }
}

/// A connection begins, on every driver: counted open and, with
/// `--log-connections`, logged. False when shutdown was forced already: it is
/// counted closed again and is to be closed unserved.
pub(crate) fn opened(site: &Shared, w: &mut Local, conn: &Conn) -> bool {
    site.stats.conn_opened();
    if site.shutdown.is_forced() {
        site.stats.conn_closed();
        return false;
    }
    log_connection(site, w, conn, None, false);
    true
}

/// A connection ends, on the drivers that own its end (a tokio task may be
/// aborted, so it counts the close in a guard): logged with what its wire
/// says of TLS (`tls`: [`super::wire::Wire::resumed`]), and counted closed
/// before the socket closes, so that a client that reads to the end and then
/// asks `/-/status` finds it closed.
pub(crate) fn closed(site: &Shared, w: &mut Local, conn: &Conn, tls: Option<bool>) {
    log_connection(site, w, conn, tls, true);
    site.stats.conn_closed();
}

/// Writes a `--log-connections` line, in the log's format, as a connection
/// opens (`closed == false`) or closes; nothing without that flag or without a
/// log. `tls`: `Some(resumed)` for a TLS connection whose handshake was done
/// (said on the close line).
pub(crate) fn log_connection(
    site: &Shared,
    w: &mut Local,
    conn: &Conn,
    tls: Option<bool>,
    closed: bool,
) {
    if !site.config.log_connections || !w.log.enabled() {
        return;
    }
    w.clock.tick();
    let closed = closed.then(|| (conn.requests(), conn.opened().elapsed().as_micros()));
    site.log_format
        .connection(&mut w.line, conn.peer(), w.clock.clf(), closed, tls);
    w.log.line(&w.line);
}

/// The socket timeout (`SO_RCVTIMEO`, `SO_SNDTIMEO`) that stands for a
/// deadline `d` away on a blocking socket: three quarters of it, so that
/// even rounded up by the timer wheel (an eighth, plus a tick) it ends the
/// wait before the deadline (see "Deadlines" above). At least a millisecond:
/// zero means "never" to the kernel.
pub(crate) fn socket_timeout(d: Duration) -> Duration {
    (d * 3 / 4).max(Duration::from_millis(1))
}

/// The socket timeouts of a blocking driver's connections, set once on each
/// listener (accepted sockets inherit them): [`socket_timeout`] of the
/// shortest deadline each stands for.
#[derive(Debug, Clone, Copy)]
pub(crate) struct SocketTimeouts {
    /// `SO_RCVTIMEO`: for the read and the keep-alive timeouts.
    pub(crate) read: Duration,
    /// `SO_SNDTIMEO`: for the write timeout.
    pub(crate) write: Duration,
}

impl SocketTimeouts {
    pub(crate) fn of(config: &crate::config::Config) -> SocketTimeouts {
        SocketTimeouts {
            read: socket_timeout(config.read_timeout.min(config.keepalive_timeout)),
            write: socket_timeout(config.write_timeout),
        }
    }
}

/// Can a wait bounded by the socket timeout `timeout` (see
/// [`socket_timeout`]) start now and still end by `until`, however the timer
/// wheel rounds it? If not, the wait's end is waited in `poll` ([`ready_by`]).
pub(crate) fn socket_wait_fits(timeout: Duration, until: Instant) -> bool {
    /// The most the timer wheel adds besides its eighth: one tick at the
    /// slowest `HZ` (100).
    const TICK: Duration = Duration::from_millis(10);
    Instant::now() + timeout + timeout / 8 + TICK <= until
}

/// Waits until `sock` is ready for `flags` (`IN` to read, `OUT` to write)
/// or `until` comes, whichever is first; false when the time ran out. An
/// error or a close counts as ready: the read or write that follows meets it.
pub(crate) fn ready_by(sock: impl AsFd, flags: PollFlags, until: Instant) -> bool {
    loop {
        let left = until.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return false;
        }
        // No `RDHUP`: a client's end is readable anyway (`IN`), and while
        // waiting for room a half-closed client would wake every `poll`.
        let mut fds = [PollFd::new(&sock, flags)];
        match rustix::event::poll(&mut fds, Some(&timespec(left))) {
            Ok(0) | Err(Errno::INTR) => {}
            Ok(_) | Err(_) => return true,
        }
    }
}

/// A [`Duration`] as the `Timespec` of `poll` and `epoll_wait`.
pub(crate) fn timespec(d: Duration) -> rustix::time::Timespec {
    rustix::time::Timespec {
        tv_sec: d.as_secs() as _,
        tv_nsec: d.subsec_nanos() as _,
    }
}

/// Waits for `threads` within the grace period, then cuts what is left
/// ([`crate::runtime::shutdown::Shutdown::force`]) and waits at most
/// [`grace::AFTER_FORCE`] more ([`grace::wait_out`], the loops' rule). A
/// thread that still has not ended then (one asleep in a long `--work`
/// draw) is left to end with the process rather than joined.
pub(crate) fn finish_threads(threads: Vec<JoinHandle<()>>, site: &Shared) {
    struct Threads<'a> {
        handles: Vec<JoinHandle<()>>,
        site: &'a Shared,
    }
    impl grace::Outstanding for Threads<'_> {
        fn wait_until(&mut self, until: Instant) -> usize {
            loop {
                let left = self.handles.iter().filter(|t| !t.is_finished()).count();
                let now = Instant::now();
                if left == 0 || now >= until {
                    return left;
                }
                std::thread::sleep((until - now).min(Duration::from_millis(5)));
            }
        }
        fn force(&mut self) {
            self.site.shutdown.force();
        }
    }
    let mut t = Threads {
        handles: threads,
        site,
    };
    grace::wait_out(site.config.grace, &mut t);
    for h in t.handles.into_iter().filter(|h| h.is_finished()) {
        let _ = h.join();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_within_bounds_and_resets() {
        let mut b = Backoff::default();
        let ms = Duration::from_millis;
        let got: Vec<Duration> = (0..8).map(|_| b.next()).collect();
        assert_eq!(
            got,
            [
                ms(10),
                ms(20),
                ms(40),
                ms(80),
                ms(160),
                ms(320),
                ms(500),
                ms(500)
            ]
        );
        b.reset();
        assert_eq!(b.next(), ms(10));
    }

    #[test]
    fn linger_ends_at_its_byte_bound() {
        let mut l = Linger::start();
        assert!(!l.is_over());
        l.drained(LINGER_BYTES - 1);
        assert!(!l.is_over());
        l.drained(1);
        assert!(l.is_over());
    }

    #[test]
    fn resource_errors_are_the_four() {
        for e in [Errno::MFILE, Errno::NFILE, Errno::NOBUFS, Errno::NOMEM] {
            assert!(is_resource_error(e));
        }
        assert!(!is_resource_error(Errno::CONNABORTED));
    }
}
