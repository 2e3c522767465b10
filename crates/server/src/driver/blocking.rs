//! Driving a [`Conn`] with blocking syscalls, for every engine that dedicates a
//! thread or a process to a connection (serial, pool, thread, fork, prefork):
//! [`serve`] runs one connection to its end, [`accept_loop`] hands accepted
//! connections to an engine, [`refuse`] answers 503 to one it cannot take.
//!
//! Timeouts are socket timeouts. `SO_RCVTIMEO` and `SO_SNDTIMEO` are set once on
//! the listening socket and Linux copies them into every accepted socket, so the
//! common case costs no `setsockopt` per connection or per request; a read that
//! times out early is simply retried against the connection's real deadline
//! ([`Conn::wait`]), and the timeout is lowered only when the deadline is nearer
//! than the current one (a slow request head).
//!
//! A `--delay` hold waits in `poll` for the client's close (`POLLRDHUP`)
//! instead of sleeping: the same one syscall, and a client that leaves is seen
//! at once ([`Conn::peer_closed`]).

use std::io::{self, Read, Write};
use std::net::{Shutdown as Side, SocketAddr, TcpListener, TcpStream};
use std::time::{Duration, Instant};

use rustix::event::{PollFd, PollFlags};
use rustix::io::Errno;

use super::policy::{self, Backoff, LINGER, Linger, log_connection};
use crate::conn::{Conn, Interest, Wait};
use crate::shared::{Local, Shared};

/// How far past its deadline a read may wait before the timeout fires.
const SLACK: Duration = Duration::from_millis(100);

/// Serves one connection to the end on the calling thread.
pub(crate) fn serve(mut stream: TcpStream, peer: SocketAddr, site: &Shared, w: &mut Local) {
    site.stats.conn_opened();
    if site.shutdown.is_forced() {
        site.stats.conn_closed();
        return;
    }
    let reg = site.shutdown.registry.register(&stream);
    let mut conn = Conn::new(peer);
    log_connection(site, w, &conn, false);
    // What SO_RCVTIMEO is now: inherited from the listener (see Server::bind).
    let mut timeout = site.config.read_timeout;
    let mut interest = Interest::Read;
    loop {
        match interest {
            Interest::Read => {
                let idle = conn.is_idle();
                if reg.set_idle(idle, &site.shutdown) && idle {
                    // Shutting down: answer only what has already arrived.
                    interest = match read_now(&stream, conn.read_space()) {
                        Some(n) if n > 0 => conn.filled(n, site, w),
                        _ => Interest::Close { linger: false },
                    };
                    continue;
                }
                let wait = conn.wait(site);
                let left = Conn::remaining(wait.deadline());
                // Lower the socket timeout only when the deadline is clearly
                // nearer than it (a slow head); a read that returns early is
                // simply retried, and a read may overshoot by at most SLACK.
                if left + SLACK < timeout {
                    timeout = left;
                    let _ = stream.set_read_timeout(Some(timeout));
                } else if matches!(wait, Wait::Idle(_))
                    && timeout + SLACK < site.config.read_timeout.min(left)
                {
                    // Back to the usual value after a slow head lowered it.
                    timeout = site.config.read_timeout.min(left);
                    let _ = stream.set_read_timeout(Some(timeout));
                }
                interest = match stream.read(conn.read_space()) {
                    Ok(n) => {
                        if n > 0 {
                            reg.set_idle(false, &site.shutdown);
                        }
                        match conn.filled(n, site, w) {
                            // A client trickling a byte faster than the socket
                            // timeout never makes the read time out, so the
                            // deadline is also checked after every read that
                            // left a request unfinished (slowloris; regression
                            // test in tests/server/slow_clients.rs).
                            Interest::Read
                                if n > 0 && Instant::now() >= conn.wait(site).deadline() =>
                            {
                                conn.timed_out(site, w)
                            }
                            next => next,
                        }
                    }
                    Err(e) if is_timeout(&e) => {
                        if Instant::now() >= wait.deadline() {
                            conn.timed_out(site, w)
                        } else {
                            continue;
                        }
                    }
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                    Err(_) => {
                        conn.abandon(site, w);
                        Interest::Close { linger: false }
                    }
                };
            }
            Interest::Write => {
                let more = conn.file_follows();
                let result = match conn.next_write() {
                    Some(chunk) => policy::send_chunk(&stream, chunk, more),
                    None => Ok(0),
                };
                interest = match result {
                    Ok(n) => conn.wrote(n, site, w),
                    Err(Errno::INTR) => continue,
                    Err(_) => {
                        // Reset, broken pipe, or no progress within the write timeout.
                        conn.abandon(site, w);
                        Interest::Close { linger: false }
                    }
                };
            }
            Interest::Dispatch => interest = conn.serve(site, w),
            Interest::Work(d) => interest = policy::work(&stream, &mut conn, d, site, w),
            Interest::Hold(until) => {
                // --delay: this thread has nothing else to do meanwhile but
                // watch for the client leaving.
                interest = if conn.watches_peer() {
                    if hold(&stream, until) {
                        let unread = policy::unread_before_close(&stream);
                        conn.peer_closed(unread, site, w)
                    } else {
                        conn.release(site, w)
                    }
                } else {
                    std::thread::sleep(until.saturating_duration_since(Instant::now()));
                    conn.release(site, w)
                };
            }
            Interest::Close { linger } => {
                if linger {
                    linger_close(&mut stream);
                }
                break;
            }
        }
    }
    drop(reg);
    log_connection(site, w, &conn, true);
    site.stats.conn_closed();
}

/// Waits until `until` unless the client closes first (true). Only the close
/// wakes it (`POLLRDHUP`; a reset is `POLLHUP`/`POLLERR`, always reported):
/// pipelined requests arriving meanwhile stay unread, so a close behind them
/// is recognised as a half-close by the peek that follows.
fn hold(stream: &TcpStream, until: Instant) -> bool {
    loop {
        let left = until.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return false;
        }
        let mut fds = [PollFd::new(stream, PollFlags::RDHUP)];
        match rustix::event::poll(&mut fds, Some(&policy::timespec(left))) {
            Ok(0) | Err(Errno::INTR) => continue,
            Ok(_) => return true,
            Err(_) => return false,
        }
    }
}

/// A read that does not wait: `Some(n)` if bytes (or EOF) were there.
fn read_now(stream: &TcpStream, buf: &mut [u8]) -> Option<usize> {
    rustix::net::recv(stream, buf, rustix::net::RecvFlags::DONTWAIT)
        .ok()
        .map(|(n, _)| n)
}

fn is_timeout(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
    )
}

/// Shuts our side, then reads and drops what the client still sends (see
/// [`Linger`]), so our last response is not destroyed by a reset caused by
/// unread bytes.
fn linger_close(stream: &mut TcpStream) {
    let _ = stream.shutdown(Side::Write);
    let _ = stream.set_read_timeout(Some(LINGER / 4));
    let mut linger = Linger::start();
    let mut sink = [0u8; 4096];
    while !linger.is_over() {
        match stream.read(&mut sink) {
            Ok(0) | Err(_) => break,
            Ok(n) => linger.drained(n),
        }
    }
}

/// What the accept loop should do after a connection was handed over.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Next {
    Continue,
    Stop,
}

/// Accepts until shutdown is asked for, handing each connection to `handle`.
///
/// The listeners (every `--addr`) are non-blocking and polled together with
/// the shutdown pipe, so a signal wakes the loop at once. On `EMFILE`/`ENFILE`/`ENOBUFS`/`ENOMEM` the
/// loop backs off (10 ms, doubling to 500 ms) instead of spinning on a listener
/// that stays readable; it recovers by itself when descriptors are free again.
pub(crate) fn accept_loop(
    listeners: &[TcpListener],
    site: &Shared,
    mut handle: impl FnMut(TcpStream, SocketAddr) -> Next,
) {
    let mut backoff = Backoff::default();
    // Made once; refilled for each poll (the revents are per call).
    let mut fds: Vec<PollFd<'_>> = Vec::with_capacity(listeners.len() + 1);
    loop {
        fds.clear();
        fds.extend(listeners.iter().map(|l| PollFd::new(l, PollFlags::IN)));
        fds.push(PollFd::from_borrowed_fd(
            site.shutdown.wake_fd(),
            PollFlags::IN,
        ));
        match rustix::event::poll(&mut fds, None) {
            Ok(_) => {}
            Err(rustix::io::Errno::INTR) => continue,
            Err(e) => {
                eprintln!("servelab: poll on the listener failed: {e}; stopping");
                site.shutdown.trigger();
                return;
            }
        }
        if !fds[listeners.len()].revents().is_empty() || site.shutdown.is_requested() {
            site.shutdown.trigger();
            return;
        }
        // Take every connection that is ready on each ready listener, then poll again.
        for (listener, fd) in listeners.iter().zip(&fds) {
            if fd.revents().is_empty() {
                continue;
            }
            loop {
                match listener.accept() {
                    Ok((stream, peer)) => {
                        backoff.reset();
                        if handle(stream, peer) == Next::Stop {
                            return;
                        }
                        if site.shutdown.is_requested() {
                            return;
                        }
                    }
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                    Err(e) if policy::is_resource_io_error(&e) => {
                        wait_or_shutdown(site, backoff.next());
                        break;
                    }
                    // ECONNABORTED and friends: that one client is gone; go on.
                    Err(_) => break,
                }
            }
        }
    }
}

/// Sleeps for `d` unless shutdown is asked for first.
pub(crate) fn wait_or_shutdown(site: &Shared, d: Duration) {
    let mut fds = [PollFd::from_borrowed_fd(
        site.shutdown.wake_fd(),
        PollFlags::IN,
    )];
    let _ = rustix::event::poll(&mut fds, Some(&policy::timespec(d)));
}

/// Best effort "503 Service Unavailable" to a connection we cannot take, from
/// the accepting thread: the socket is fresh, so the small write does not block
/// (and `SO_SNDTIMEO` bounds it anyway); then a short non-blocking drain of what
/// the client already sent, so the close is less likely to become a reset.
pub(crate) fn refuse(mut stream: TcpStream, site: &Shared) {
    site.stats.conn_opened();
    site.stats.dropped();
    site.stats.response(503);
    let mut out = Vec::with_capacity(512);
    let mut clock = crate::clock::Clock::new();
    clock.tick();
    let persist = crate::response::Persist {
        keep_alive: false,
        http10: false,
    };
    crate::handler::error_at(
        servelab_http::Status::SERVICE_UNAVAILABLE,
        clock.http(),
        persist,
        false,
        &mut out,
    );
    if stream.write_all(&out).is_ok() {
        site.stats.sent(out.len() as u64);
    }
    let _ = stream.shutdown(Side::Write);
    let mut sink = [0u8; 4096];
    while let Some(n) = read_now(&stream, &mut sink) {
        if n == 0 {
            break;
        }
    }
    site.stats.conn_closed();
}
