//! The life of one request on a client connection: connect, send, read the
//! response, and end ok, in an error, or in a timeout.
//!
//! Edge-triggered reading stops early on a short read: `recv` returning less than
//! the buffer means the socket was drained, and any later byte raises a new edge.
//! A connection whose request has ended hands over to its workload
//! ([`after`](ClientLoop::after)): a closed user thinks or goes on, an open pool
//! connection takes the next queued request.

use std::net::SocketAddr;
use std::os::fd::OwnedFd;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use rand::Rng;

use rustix::event::epoll;
use rustix::io::Errno;
use rustix::net::{
    AddressFamily, RecvFlags, SendAncillaryBuffer, SendFlags, SocketFlags, SocketType,
};
use std::io::IoSlice;

use super::ClientLoop;
use crate::client_conn::ConnState;
use crate::connect_failure::ConnectFailure;
use crate::metrics::ErrorClass;
use crate::response::Feed;

/// The first backoff after a failed connect.
const BACKOFF_FIRST: Duration = Duration::from_millis(10);
/// The longest backoff: a server that comes back is found within about a second.
const BACKOFF_CAP: Duration = Duration::from_secs(1);

/// The backoff after another failed connect: 10 ms, then doubling, at most 1 s.
/// A refused connect on loopback fails in microseconds; without a backoff a
/// connection would spin through a hundred thousand of them a second and
/// report them as if they were a benchmark result.
fn next_backoff(previous: Duration) -> Duration {
    if previous.is_zero() {
        BACKOFF_FIRST
    } else {
        (previous * 2).min(BACKOFF_CAP)
    }
}

/// Grows `backoff` after another failed connect and draws the wait before
/// the next: jittered, so that connections refused together do not all come
/// back together (a uniform draw in [backoff/2, backoff)).
pub(super) fn backoff_wait(backoff: &mut Duration, rng: &mut impl Rng) -> Duration {
    *backoff = next_backoff(*backoff);
    backoff.mul_f64(0.5 + 0.5 * rng.random::<f64>())
}

pub(super) fn connect_class(e: Errno) -> ErrorClass {
    if e == Errno::CONNREFUSED {
        ErrorClass::ConnectRefused
    } else {
        ErrorClass::ConnectOther
    }
}

/// The class of a failed write: a broken pipe on a reused connection is a
/// close that crossed the request (see [`ClientLoop::retry_on_close`]).
pub(super) fn write_class(reused: bool, e: Errno) -> ErrorClass {
    if reused && e == Errno::PIPE {
        ErrorClass::Closed
    } else {
        io_class(e)
    }
}

pub(super) fn io_class(e: Errno) -> ErrorClass {
    if e == Errno::CONNRESET || e == Errno::PIPE {
        ErrorClass::Reset
    } else {
        ErrorClass::IoOther
    }
}

/// Opens a non-blocking socket to `addr`, registers it in `epoll` under
/// `token` (edge-triggered, for input and output, once for its life) and
/// starts the connect: `Ok((sock, true))` connected at once, `Ok((sock,
/// false))` in progress (EPOLLOUT says how it ended), `Err` failed (the socket
/// is closed). Shared by the HTTP/1.1 and HTTP/2 loops.
pub(super) fn connect_socket(
    epoll: &OwnedFd,
    addr: SocketAddr,
    token: u64,
) -> Result<(OwnedFd, bool), Errno> {
    let family = if addr.is_ipv4() {
        AddressFamily::INET
    } else {
        AddressFamily::INET6
    };
    let sock = rustix::net::socket_with(
        family,
        SocketType::STREAM,
        SocketFlags::NONBLOCK | SocketFlags::CLOEXEC,
        None,
    )?;
    // Requests are small and answered at once: Nagle would only add delay.
    let _ = rustix::net::sockopt::set_tcp_nodelay(&sock, true);
    let flags = epoll::EventFlags::IN
        | epoll::EventFlags::OUT
        | epoll::EventFlags::RDHUP
        | epoll::EventFlags::ET;
    epoll::add(epoll, &sock, epoll::EventData::new_u64(token), flags)?;
    match rustix::net::connect(&sock, &addr) {
        Ok(()) => Ok((sock, true)),
        Err(Errno::INPROGRESS) | Err(Errno::INTR) => Ok((sock, false)),
        Err(e) => Err(e), // dropping the socket closes it
    }
}

impl ClientLoop {
    /// Starts an attempt of the connection's request: on its connection, or a
    /// new one.
    pub(super) fn attempt(&mut self, i: usize, now: Instant) {
        self.rec.counts.attempts += 1;
        self.conns[i].req.attempts += 1;
        self.begin(i, now);
    }

    /// Arms the attempt's timeout and sends on the open connection, or connects.
    /// A reconnect after a backoff begins here too: it is the same attempt, so it
    /// counts no new one, but it gets a timeout of its own.
    pub(super) fn begin(&mut self, i: usize, now: Instant) {
        let timeout = self.cfg.timeout;
        let s = &mut self.conns[i];
        s.req.first_byte = None;
        match timeout {
            Some(t) => {
                let d = t.sample_duration(&mut s.rng);
                s.timer.arm(now + d, i, &mut self.timers);
            }
            None => s.timer.disarm(),
        }
        // Targets may live on different servers: a connection only serves
        // requests for the server it was opened to.
        if s.sock.is_some()
            && self.cfg.targets[s.conn_target].server != self.cfg.targets[s.req.target].server
        {
            self.close_sock(i);
        }
        let s = &mut self.conns[i];
        if s.sock.is_some() {
            self.send(i, now);
        } else {
            self.conns[i].addr_tries = 0;
            self.connect_next(i, now, None);
        }
    }

    /// Connects to the next address of the target not tried in this round,
    /// starting from the one that last worked; when every address has failed,
    /// the connect failed with the last failure (`last`: the address and error).
    pub(super) fn connect_next(
        &mut self,
        i: usize,
        now: Instant,
        mut last: Option<(SocketAddr, Errno)>,
    ) {
        let target = self.conns[i].req.target;
        let n = self.cfg.targets[target].addrs.len();
        loop {
            let tries = self.conns[i].addr_tries;
            if tries >= n {
                return self.connect_failed(i, now, last);
            }
            let k = (self.preferred[target] + tries) % n;
            self.conns[i].addr_tries += 1;
            self.conns[i].addr_index = k;
            match self.open_socket(i, k, now) {
                Ok(true) => return self.on_connected(i, now),
                Ok(false) => return, // in progress: EPOLLOUT says how it ended
                Err(e) => last = Some((self.cfg.targets[target].addrs[k], e)),
            }
        }
    }

    /// Opens a socket to address `k` of the connection's target and starts the
    /// non-blocking connect: `Ok(true)` connected at once, `Ok(false)` in
    /// progress, `Err` failed (the socket is closed).
    fn open_socket(&mut self, i: usize, k: usize, now: Instant) -> Result<bool, Errno> {
        let addr = self.cfg.targets[self.conns[i].req.target].addrs[k];
        let s = &mut self.conns[i];
        s.generation = s.generation.wrapping_add(1);
        let (sock, done) = connect_socket(&self.epoll, addr, s.token(i))?;
        s.connect_start = now;
        s.conn_target = s.req.target;
        s.reused = false;
        s.session_left = self.cfg.session.unwrap_or(u32::MAX);
        s.state = ConnState::Connecting;
        s.sock = Some(sock);
        Ok(done)
    }

    /// The TCP connect succeeded: send the request, or, for an `https://`
    /// target, start the TLS handshake first.
    pub(super) fn on_connected(&mut self, i: usize, now: Instant) {
        let s = &mut self.conns[i];
        let took = now.saturating_duration_since(s.connect_start);
        self.preferred[s.req.target] = s.addr_index;
        self.rec.connected(took);
        if self.cfg.targets[s.conn_target].tls.is_some() {
            return self.start_handshake(i, now);
        }
        self.usable(i, now);
        self.send(i, now);
    }

    /// The connection can carry requests (for `https://`, its handshake is
    /// done): the target is reachable.
    pub(super) fn usable(&mut self, i: usize, now: Instant) {
        self.conns[i].backoff = Duration::ZERO;
        self.last_connected = now;
        if !self.connected {
            self.connected = true;
            self.control.connected.store(true, Ordering::Relaxed);
        }
    }

    /// No address of the target accepted the connection: one error, not a
    /// finished request. The connection keeps its request, waits out a growing
    /// backoff and connects again (see [`next_backoff`]).
    fn connect_failed(&mut self, i: usize, now: Instant, last: Option<(SocketAddr, Errno)>) {
        self.close_sock(i);
        let class = last.map_or(ErrorClass::ConnectOther, |(_, e)| connect_class(e));
        self.rec.connect_error(now, class);
        if let Some((addr, errno)) = last {
            self.note_connect_failure(ConnectFailure::new(addr, errno));
        }
        self.back_off(i, now);
    }

    /// Keeps the failure that a run that never connects reports, and tells
    /// the other threads that a connect has failed.
    pub(super) fn note_connect_failure(&mut self, f: ConnectFailure) {
        if self.last_connect_failure.is_none() {
            self.control.connect_failed.store(true, Ordering::Relaxed);
        }
        self.last_connect_failure = Some(f);
    }

    /// Waits out a growing backoff before connecting again for the same request.
    pub(super) fn back_off(&mut self, i: usize, now: Instant) {
        let s = &mut self.conns[i];
        let wait = backoff_wait(&mut s.backoff, &mut s.rng);
        s.state = ConnState::Backoff;
        s.timer.arm(now + wait, i, &mut self.timers);
        self.backing_off += 1;
    }

    /// A backoff ended: connect again for the same request.
    pub(super) fn reconnect(&mut self, i: usize, now: Instant) {
        self.backing_off -= 1;
        self.begin(i, now);
    }

    /// Writes the request from the start.
    pub(super) fn send(&mut self, i: usize, now: Instant) {
        let s = &mut self.conns[i];
        s.closing = s.session_left == 1;
        s.req.sent = now;
        s.req.written = true;
        s.written = 0;
        s.parser.reset();
        s.state = ConnState::Writing;
        self.write_more(i, now);
    }

    /// Writes what is left of the request: its head, then its body. Without a
    /// body (GET, HEAD) this is one `send` of the prebuilt head; with one, the
    /// head and the body go out together in one `sendmsg`, then whatever of
    /// the body is left.
    pub(super) fn write_more(&mut self, i: usize, now: Instant) {
        if self.conns[i].tls.is_some() {
            return self.tls_write_more(i, now);
        }
        let s = &mut self.conns[i];
        let p = &self.cfg.targets[s.req.target];
        let head = if s.closing { &p.close } else { &p.keep_alive };
        let body = &p.body[..];
        let Some(sock) = s.sock.as_ref() else {
            return;
        };
        while s.written < head.len() + body.len() {
            let sent = if body.is_empty() {
                rustix::net::send(sock, &head[s.written..], SendFlags::NOSIGNAL)
            } else if s.written < head.len() {
                let iov = [IoSlice::new(&head[s.written..]), IoSlice::new(body)];
                let mut control = SendAncillaryBuffer::default();
                rustix::net::sendmsg(sock, &iov, &mut control, SendFlags::NOSIGNAL)
            } else {
                let from = s.written - head.len();
                rustix::net::send(sock, &body[from..], SendFlags::NOSIGNAL)
            };
            match sent {
                Ok(n) => {
                    s.written += n;
                    self.rec.counts.bytes_sent += n as u64;
                }
                Err(Errno::AGAIN) => return, // an EPOLLOUT edge will call us again
                Err(Errno::INTR) => {}
                Err(e) => {
                    let class = write_class(s.reused, e);
                    return self.fail(i, now, class);
                }
            }
        }
        s.state = ConnState::Reading;
    }

    pub(super) fn on_event(&mut self, i: usize, flags: epoll::EventFlags, now: Instant) {
        use epoll::EventFlags as F;
        let s = &mut self.conns[i];
        match s.state {
            ConnState::Connecting => {
                if !flags.intersects(F::OUT | F::ERR | F::HUP) {
                    return;
                }
                let err = match s.sock.as_ref().map(rustix::net::sockopt::socket_error) {
                    Some(Ok(Ok(()))) => None,
                    Some(Ok(Err(e))) | Some(Err(e)) => Some(e),
                    None => return,
                };
                match err {
                    None => {
                        self.on_connected(i, now);
                        if self.conns[i].state == ConnState::Reading
                            && flags.intersects(F::IN | F::HUP | F::RDHUP)
                        {
                            self.on_readable(i, now, flags);
                        }
                    }
                    Some(e) => {
                        // This address refused: try the target's next one.
                        let addr = self.cfg.targets[s.req.target].addrs[s.addr_index];
                        self.close_sock(i);
                        self.connect_next(i, now, Some((addr, e)));
                    }
                }
            }
            ConnState::Handshaking => {
                if flags.intersects(F::IN | F::OUT | F::HUP | F::RDHUP | F::ERR) {
                    self.handshake(i, now);
                }
            }
            ConnState::Writing => {
                self.write_more(i, now);
                if self.conns[i].state == ConnState::Reading
                    && flags.intersects(F::IN | F::HUP | F::RDHUP | F::ERR)
                {
                    self.on_readable(i, now, flags);
                }
            }
            ConnState::Reading => {
                if flags.intersects(F::IN | F::HUP | F::RDHUP | F::ERR) {
                    self.on_readable(i, now, flags);
                }
            }
            ConnState::Idle | ConnState::Thinking => {
                if flags.intersects(F::IN | F::HUP | F::RDHUP | F::ERR) {
                    // TLS 1.3 session tickets may come after the handshake.
                    if s.tls.is_some() && self.tls_idle_read(i) {
                        return;
                    }
                    // The server closed an idle keep-alive connection (or sent bytes
                    // nobody asked for): drop it; the next request reconnects.
                    self.rec.counts.idle_closed += 1;
                    self.close_sock(i);
                    if self.open() {
                        if let Some(pos) = self.idle.iter().position(|&x| x == i) {
                            self.idle.swap_remove(pos);
                            self.free.push(i);
                        }
                    }
                }
            }
            ConnState::RetryWait | ConnState::Backoff | ConnState::Stopped | ConnState::Parked => {}
        }
    }

    /// Reads until the response is complete, the socket is drained, or EOF.
    ///
    /// A FIN that arrived with the data raises no edge of its own, so when the
    /// event says the peer hung up we read on to the EOF instead of stopping at a
    /// short read, and a response completed on such a connection closes it.
    pub(super) fn on_readable(&mut self, i: usize, now: Instant, flags: epoll::EventFlags) {
        use epoll::EventFlags as F;
        if self.conns[i].tls.is_some() {
            return self.tls_on_readable(i, now, flags);
        }
        let hup = flags.intersects(F::HUP | F::RDHUP | F::ERR);
        loop {
            let s = &mut self.conns[i];
            let Some(sock) = s.sock.as_ref() else {
                return;
            };
            match rustix::net::recv(sock, &mut self.buf[..], RecvFlags::empty()) {
                Ok((0, _)) => {
                    return self.on_eof(i, now);
                }
                Ok((n, _)) => {
                    if s.req.first_byte.is_none() {
                        s.req.first_byte = Some(now);
                    }
                    let head = self.cfg.targets[s.req.target].head;
                    let fed = s.parser.feed(&self.buf[..n], head);
                    self.rec.bytes(now, n);
                    match fed {
                        Ok(Feed::Complete { used }) if used == n => {
                            if hup {
                                s.sock = None;
                            }
                            return self.complete(i, now);
                        }
                        Ok(Feed::Complete { .. }) | Err(_) => {
                            return self.fail(i, now, ErrorClass::Malformed);
                        }
                        Ok(Feed::Incomplete) if n < self.buf.len() && !hup => return,
                        Ok(Feed::Incomplete) => {}
                    }
                }
                Err(Errno::AGAIN) => return,
                Err(Errno::INTR) => {}
                Err(e) => return self.fail(i, now, io_class(e)),
            }
        }
    }

    /// The server closed the connection while a response was read: it is
    /// complete (a body delimited by the close), cut short, or garbled.
    pub(super) fn on_eof(&mut self, i: usize, now: Instant) {
        match self.conns[i].parser.eof() {
            Ok(true) => {
                // A body delimited by the close: the connection is gone.
                self.close_sock(i);
                self.complete(i, now)
            }
            Ok(false) => self.fail(i, now, ErrorClass::Closed),
            Err(_) => self.fail(i, now, ErrorClass::Malformed),
        }
    }

    /// A complete, valid response arrived.
    pub(super) fn complete(&mut self, i: usize, now: Instant) {
        let s = &mut self.conns[i];
        let first = s.req.first_byte.unwrap_or(now);
        let status = s.parser.status();
        let ok = self.cfg.expect.contains(status);
        self.rec
            .response(now, s.req.intended, (s.req.sent, first), status, ok);
        s.timer.disarm();
        s.reused = true;
        s.session_left = s.session_left.saturating_sub(1);
        let keep = s.parser.keep_alive() && !s.closing && s.session_left > 0 && s.sock.is_some();
        if !keep {
            self.close_sock(i);
        }
        self.after(i, now);
    }

    /// The request ends in error `class`; the connection is closed. Unless the
    /// server closed a reused connection before answering: then the request
    /// goes out again ([`retry_on_close`](Self::retry_on_close)).
    pub(super) fn fail(&mut self, i: usize, now: Instant, class: ErrorClass) {
        if matches!(class, ErrorClass::Closed | ErrorClass::Reset) && self.may_retry_on_close(i) {
            return self.retry_on_close(i, now);
        }
        self.close_sock(i);
        self.conns[i].timer.disarm();
        self.rec.failure(now, self.conns[i].req.intended, class);
        self.after(i, now);
    }

    /// Whether the request on connection `i` may go out again after its
    /// connection closed: the connection had carried an answer before (a
    /// server may close an idle keep-alive connection at any moment, and the
    /// request may cross the close), not one byte of this answer arrived, the
    /// method is idempotent, and it was not sent again for this reason already.
    fn may_retry_on_close(&self, i: usize) -> bool {
        let s = &self.conns[i];
        self.cfg.retry_on_close && s.reused && s.req.first_byte.is_none() && !s.req.close_retried
    }

    /// Sends the request again on a new connection, once (RFC 9112, 9.3.1, as
    /// browsers and HTTP libraries do). It keeps its intended start, so its
    /// latency includes the lost attempt and the reconnect; the new attempt
    /// gets a timeout of its own. Counted in `close_retries`, not as an error.
    fn retry_on_close(&mut self, i: usize, now: Instant) {
        self.close_sock(i);
        self.rec.counts.close_retries += 1;
        self.rec.counts.attempts += 1;
        self.conns[i].req.close_retried = true;
        self.begin(i, now);
    }

    /// The attempt's timeout expired: abandon it, and retry or give up.
    pub(super) fn timed_out(&mut self, i: usize, now: Instant) {
        self.rec.timed_out(now);
        self.close_sock(i);
        let retry = self
            .cfg
            .retries
            .is_none_or(|r| self.conns[i].req.attempts <= r);
        if !retry {
            self.rec
                .failure(now, self.conns[i].req.intended, ErrorClass::Timeout);
            return self.after(i, now);
        }
        self.rec.counts.retries += 1;
        let open = self.open();
        let s = &mut self.conns[i];
        let wait = self.cfg.retry_wait.sample_duration(&mut s.rng);
        if !open {
            s.state = ConnState::RetryWait;
            s.timer.arm(now + wait, i, &mut self.timers);
            return;
        }
        // Open workload: the request leaves the connection and waits on its own.
        self.retry_later(i, now + wait);
    }

    /// What a connection does once its request has ended.
    ///
    /// The next request goes out at once when the connection is still open: the
    /// server starts on it while this thread handles the rest of the batch, which
    /// halves the times the thread finds nothing to do and sleeps (wrk does the
    /// same). A connection that must reconnect waits for the next loop turn
    /// instead, so that a run of immediate connect failures cannot recurse.
    pub(super) fn after(&mut self, i: usize, now: Instant) {
        if self.open() {
            self.after_open(i, now);
        } else {
            self.after_closed(i, now);
        }
    }

    pub(super) fn close_sock(&mut self, i: usize) {
        // Dropping the fd closes it, which also removes it from the epoll set.
        // A TLS session ends with it: no close_notify, which costs a write
        // and which a server may not wait for (RFC 8446, 6.1).
        self.conns[i].sock = None;
        self.conns[i].tls = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    pub(super) fn error_classes_of_errnos() {
        assert_eq!(
            connect_class(Errno::CONNREFUSED),
            ErrorClass::ConnectRefused
        );
        assert_eq!(connect_class(Errno::NETUNREACH), ErrorClass::ConnectOther);
        assert_eq!(io_class(Errno::CONNRESET), ErrorClass::Reset);
        assert_eq!(io_class(Errno::PIPE), ErrorClass::Reset);
        assert_eq!(io_class(Errno::IO), ErrorClass::IoOther);
    }
}
