//! One HTTP/2 connection of the loop ([`Link`]): its socket, its TLS
//! session, its `servelab_h2::ClientConn`, and the streams it carries; and
//! the loop's side of its I/O: connect, handshake, read, write, close.
//!
//! Output is written once per loop turn ([`H2Loop::flush`]): every request
//! started, WINDOW_UPDATE and SETTINGS ACK queued while the turn's events
//! were handled goes out in one `send` (one TLS write) per connection.

use std::collections::VecDeque;
use std::io::{self, Read as _, Write as _};
use std::net::SocketAddr;
use std::os::fd::OwnedFd;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use rand_pcg::Pcg64Mcg;
use rustix::event::epoll;
use rustix::io::Errno;
use rustix::net::{RecvFlags, SendFlags};
use servelab_h2::{ClientConn, Limits, State};

use super::H2Loop;
use crate::connect_failure::ConnectFailure;
use crate::event_loop::exchange::{backoff_wait, connect_class, connect_socket, io_class};
use crate::event_loop::thread_cpu;
use crate::event_loop::tls_io::{Step, errno_of, handshake_step};
use crate::handshake_failure::HandshakeFailureKind;
use crate::metrics::ErrorClass;
use crate::timer::{ConnTimer, Kind};
use crate::tls::Wire;

/// Where a connection is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum LinkState {
    /// No socket.
    Down,
    Connecting,
    Handshaking,
    /// The HTTP/2 connection runs (its own state says whether the server's
    /// SETTINGS came, or a GOAWAY).
    Up,
    /// Waiting out a backoff after a failed connect.
    Backoff,
}

#[derive(Debug)]
pub(super) struct Link {
    pub sock: Option<OwnedFd>,
    pub tls: Option<Box<rustls::ClientConnection>>,
    pub h2: Option<Box<ClientConn>>,
    pub generation: u32,
    pub state: LinkState,
    /// Open streams and the slot on each (at most `--streams` entries: a
    /// linear search is cheaper than a map).
    pub open: Vec<(u32, usize)>,
    /// Slots waiting for a stream on this connection, oldest first.
    pub waiting: VecDeque<usize>,
    /// The backoff timer.
    pub timer: ConnTimer,
    pub connect_start: Instant,
    pub handshake_start: Instant,
    pub tls_cpu: Duration,
    pub addr_index: usize,
    pub addr_tries: usize,
    pub backoff: Duration,
    /// The server's SETTINGS came: the connection is known to work.
    pub settled: bool,
    /// Output is queued for this turn's flush.
    pub dirty: bool,
    /// Backoff jitter.
    pub rng: Pcg64Mcg,
}

impl Link {
    pub(super) fn new(rng: Pcg64Mcg, now: Instant) -> Link {
        Link {
            sock: None,
            tls: None,
            h2: None,
            generation: 0,
            state: LinkState::Down,
            open: Vec::new(),
            waiting: VecDeque::new(),
            timer: ConnTimer::default(),
            connect_start: now,
            handshake_start: now,
            tls_cpu: Duration::ZERO,
            addr_index: 0,
            addr_tries: 0,
            backoff: Duration::ZERO,
            settled: false,
            dirty: false,
            rng,
        }
    }

    #[inline]
    pub(super) fn token(&self, index: usize) -> u64 {
        crate::client_conn::token(index, self.generation)
    }
}

/// Why an `https://` server cannot be measured with `--h2`.
const NO_H2: &str = "the server did not agree to HTTP/2 in ALPN (it may speak HTTP/1.1 only: \
                     drop --h2)";

/// The receive windows the client opens, per stream
/// (SETTINGS_INITIAL_WINDOW_SIZE) and for the connection (a WINDOW_UPDATE
/// after the preface): 2^30-1 octets, as h2load (`-w 30 -W 30`). The client
/// reads every body octet as it comes and keeps none, so a wide window costs
/// no memory, and a server is never held back by the client's flow control.
/// With the RFC's initial 65,535 octets, 10 connections × 100 streams of 1 KiB
/// against nginx (100 KiB of bodies in flight per connection) had nginx wait
/// for the client's WINDOW_UPDATE in every round: it spent 20.0 µs of CPU per
/// request instead of 13.7, and load got 0.80x h2load's rate over h2c
/// (`bench/h2-load-vs-h2load.sh`; docs/load.md, Speed).
const WINDOW: u32 = (1 << 30) - 1;

/// The client's HTTP/2 limits: the defaults of `servelab-h2` (16 KiB header
/// lists, 4 KiB HPACK table, the flood counts), with [`WINDOW`] per stream.
/// Credit goes back every half stream window and every 32 KiB of the
/// connection's, so a body of any size flows.
fn client_limits() -> Limits {
    Limits {
        initial_window_size: WINDOW,
        ..Limits::default()
    }
}

impl H2Loop {
    /// Starts connecting link `l` (when it has no socket).
    pub(super) fn connect(&mut self, l: usize, now: Instant) {
        if self.links[l].state != LinkState::Down {
            return;
        }
        self.links[l].addr_tries = 0;
        self.connect_next(l, now, None);
    }

    fn connect_next(&mut self, l: usize, now: Instant, mut last: Option<(SocketAddr, Errno)>) {
        let addrs = &self.cfg.targets[0].addrs;
        let n = addrs.len();
        loop {
            let link = &mut self.links[l];
            if link.addr_tries >= n {
                return self.connect_failed(l, now, last);
            }
            let k = (self.preferred + link.addr_tries) % n;
            link.addr_tries += 1;
            link.addr_index = k;
            link.generation = link.generation.wrapping_add(1);
            match connect_socket(&self.epoll, addrs[k], link.token(l)) {
                Ok((sock, done)) => {
                    link.sock = Some(sock);
                    link.connect_start = now;
                    link.state = LinkState::Connecting;
                    if done {
                        self.on_connected(l, now);
                    }
                    return;
                }
                Err(e) => last = Some((addrs[k], e)),
            }
        }
    }

    fn on_connected(&mut self, l: usize, now: Instant) {
        let link = &mut self.links[l];
        self.preferred = link.addr_index;
        self.rec
            .connected(now.saturating_duration_since(link.connect_start));
        if let Some(t) = &self.cfg.targets[0].tls {
            let cpu = thread_cpu();
            let made = t.connect();
            link.handshake_start = now;
            link.state = LinkState::Handshaking;
            link.tls_cpu = thread_cpu().saturating_sub(cpu);
            match made {
                Ok(c) => {
                    link.tls = Some(Box::new(c));
                    self.handshake(l, now);
                }
                Err(e) => self.handshake_failed(l, now, HandshakeFailureKind::Other, e.to_string()),
            }
            return;
        }
        self.link_up(l);
    }

    /// The connection can carry HTTP/2: queue the preface and our SETTINGS.
    /// Streams open once the server's SETTINGS arrive (so that its
    /// SETTINGS_MAX_CONCURRENT_STREAMS is known before we use it).
    fn link_up(&mut self, l: usize) {
        let link = &mut self.links[l];
        link.state = LinkState::Up;
        link.settled = false;
        let mut h2 = Box::new(ClientConn::new(client_limits()));
        h2.set_connection_window(WINDOW);
        link.h2 = Some(h2);
        self.mark_dirty(l);
    }

    fn handshake(&mut self, l: usize, now: Instant) {
        let cpu = thread_cpu();
        let link = &mut self.links[l];
        let (Some(sock), Some(tls)) = (link.sock.as_ref(), link.tls.as_deref_mut()) else {
            return;
        };
        let step = handshake_step(sock, tls, &mut self.rec.counts);
        link.tls_cpu += thread_cpu().saturating_sub(cpu);
        match step {
            Step::Wait => {}
            Step::Done => {
                if tls.alpn_protocol() != Some(b"h2") {
                    let detail = NO_H2.to_string();
                    return self.handshake_failed(l, now, HandshakeFailureKind::Other, detail);
                }
                let resumed = tls.handshake_kind() == Some(rustls::HandshakeKind::Resumed);
                let done = Instant::now();
                let took = done.saturating_duration_since(link.handshake_start);
                let cpu = link.tls_cpu;
                self.rec.handshake(took, resumed, cpu);
                self.link_up(l);
            }
            // A server with ALPN but without h2 in it (rustls's servers)
            // refuses the handshake with this alert; one without ALPN
            // completes it and is caught above.
            Step::Failed(HandshakeFailureKind::Alert, detail)
                if detail.contains("NoApplicationProtocol") =>
            {
                let detail = format!("{NO_H2} ({detail})");
                self.handshake_failed(l, now, HandshakeFailureKind::Other, detail)
            }
            Step::Failed(kind, detail) => self.handshake_failed(l, now, kind, detail),
        }
    }

    fn handshake_failed(
        &mut self,
        l: usize,
        now: Instant,
        kind: HandshakeFailureKind,
        detail: String,
    ) {
        let target = &self.cfg.targets[0];
        let addr = target.addrs[self.links[l].addr_index];
        let detail = match &target.tls {
            Some(t) => format!("{detail}; server name {}", t.name.to_str()),
            None => detail,
        };
        self.drop_socket(l);
        self.links[l].tls_cpu = Duration::ZERO;
        self.rec.handshake_failed(now, kind);
        self.note_connect_failure(ConnectFailure::tls(addr, kind, detail));
        self.back_off(l, now);
    }

    fn connect_failed(&mut self, l: usize, now: Instant, last: Option<(SocketAddr, Errno)>) {
        self.drop_socket(l);
        let class = last.map_or(ErrorClass::ConnectOther, |(_, e)| connect_class(e));
        self.rec.connect_error(now, class);
        if let Some((addr, errno)) = last {
            self.note_connect_failure(ConnectFailure::new(addr, errno));
        }
        self.back_off(l, now);
    }

    fn note_connect_failure(&mut self, f: ConnectFailure) {
        if self.last_connect_failure.is_none() {
            self.control.connect_failed.store(true, Ordering::Relaxed);
        }
        self.last_connect_failure = Some(f);
    }

    /// As the HTTP/1.1 loop's backoff: 10 ms doubling to 1 s, jittered.
    fn back_off(&mut self, l: usize, now: Instant) {
        let link = &mut self.links[l];
        let wait = backoff_wait(&mut link.backoff, &mut link.rng);
        link.state = LinkState::Backoff;
        link.timer
            .arm_as(now + wait, Kind::Link(l), &mut self.timers);
        self.backing_off += 1;
    }

    /// The backoff of link `l` ended: connect again for its waiting slots.
    pub(super) fn on_link_timer(&mut self, l: usize, now: Instant) {
        if self.links[l].state != LinkState::Backoff {
            return;
        }
        self.backing_off -= 1;
        self.links[l].state = LinkState::Down;
        if !self.links[l].waiting.is_empty() {
            self.connect(l, now);
        }
    }

    /// The server's SETTINGS came: the target is reachable.
    pub(super) fn usable(&mut self, l: usize, now: Instant) {
        let link = &mut self.links[l];
        link.settled = true;
        link.backoff = Duration::ZERO;
        self.last_connected = now;
        if !self.connected {
            self.connected = true;
            self.control.connected.store(true, Ordering::Relaxed);
        }
    }

    pub(super) fn mark_dirty(&mut self, l: usize) {
        if !self.links[l].dirty {
            self.links[l].dirty = true;
            self.dirty.push(l);
        }
    }

    /// An epoll event for link `l`.
    pub(super) fn on_event(&mut self, l: usize, flags: epoll::EventFlags, now: Instant) {
        use epoll::EventFlags as F;
        match self.links[l].state {
            LinkState::Connecting => {
                if !flags.intersects(F::OUT | F::ERR | F::HUP) {
                    return;
                }
                let err = match self.links[l]
                    .sock
                    .as_ref()
                    .map(rustix::net::sockopt::socket_error)
                {
                    Some(Ok(Ok(()))) => None,
                    Some(Ok(Err(e))) | Some(Err(e)) => Some(e),
                    None => return,
                };
                match err {
                    None => self.on_connected(l, now),
                    Some(e) => {
                        let addr = self.cfg.targets[0].addrs[self.links[l].addr_index];
                        self.drop_socket(l);
                        self.links[l].state = LinkState::Connecting;
                        self.connect_next(l, now, Some((addr, e)));
                    }
                }
            }
            LinkState::Handshaking => self.handshake(l, now),
            LinkState::Up => {
                if flags.contains(F::OUT) {
                    self.mark_dirty(l);
                }
                if flags.intersects(F::IN | F::HUP | F::RDHUP | F::ERR) {
                    self.on_readable(l, now);
                }
            }
            LinkState::Down | LinkState::Backoff => {}
        }
    }

    /// Reads until the socket is drained, feeding the HTTP/2 connection and
    /// handling what it reports after each read.
    fn on_readable(&mut self, l: usize, now: Instant) {
        loop {
            let link = &mut self.links[l];
            let (Some(sock), Some(h2)) = (link.sock.as_ref(), link.h2.as_deref_mut()) else {
                return;
            };
            let mut eof = false;
            let mut drained = false;
            let mut fed = Ok(());
            if let Some(tls) = link.tls.as_deref_mut() {
                match tls.read_tls(&mut Wire(sock)) {
                    Ok(0) => eof = true,
                    Ok(n) => self.rec.bytes(now, n),
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => drained = true,
                    Err(e) => return self.link_failed(l, now, io_class(errno_of(&e))),
                }
                if tls.process_new_packets().is_err() {
                    let _ = tls.write_tls(&mut Wire(sock));
                    return self.link_failed(l, now, ErrorClass::Malformed);
                }
                loop {
                    match tls.reader().read(&mut self.buf) {
                        Ok(0) => {
                            eof = true;
                            break;
                        }
                        Ok(n) => {
                            fed = h2.feed(&self.buf[..n]);
                            if fed.is_err() {
                                break;
                            }
                        }
                        Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                        Err(_) => {
                            eof = true;
                            break;
                        }
                    }
                }
            } else {
                match rustix::net::recv(sock, &mut self.buf[..], RecvFlags::empty()) {
                    Ok((0, _)) => eof = true,
                    Ok((n, _)) => {
                        self.rec.bytes(now, n);
                        fed = h2.feed(&self.buf[..n]);
                        drained = n < self.buf.len();
                    }
                    Err(Errno::AGAIN) => drained = true,
                    Err(Errno::INTR) => {}
                    Err(e) => return self.link_failed(l, now, io_class(e)),
                }
            }
            self.mark_dirty(l);
            self.handle_events(l, now);
            if fed.is_err() {
                // A connection error: the GOAWAY is queued; its streams are gone.
                return self.link_failed(l, now, ErrorClass::Malformed);
            }
            if eof {
                return self.link_failed(l, now, ErrorClass::Closed);
            }
            if self.links[l]
                .h2
                .as_ref()
                .is_some_and(|h| h.state() == State::Closed)
            {
                return self.link_failed(l, now, ErrorClass::Closed);
            }
            if drained {
                return;
            }
        }
    }

    /// Writes each dirty link's output: one write per connection per turn.
    pub(super) fn flush(&mut self) {
        while let Some(l) = self.dirty.pop() {
            self.links[l].dirty = false;
            if let Err(class) = self.write_out(l) {
                self.link_failed(l, Instant::now(), class);
            }
        }
    }

    fn write_out(&mut self, l: usize) -> Result<(), ErrorClass> {
        let link = &mut self.links[l];
        let (Some(sock), Some(h2)) = (link.sock.as_ref(), link.h2.as_deref_mut()) else {
            return Ok(());
        };
        if let Some(tls) = link.tls.as_deref_mut() {
            loop {
                let out = h2.pending_output();
                if !out.is_empty() {
                    let n = tls.writer().write(out).unwrap_or(0);
                    h2.consume_output(n);
                }
                if !tls.wants_write() {
                    return Ok(());
                }
                match tls.write_tls(&mut Wire(sock)) {
                    Ok(n) => self.rec.counts.bytes_sent += n as u64,
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(()),
                    Err(e) => return Err(io_class(errno_of(&e))),
                }
            }
        }
        loop {
            let out = h2.pending_output();
            if out.is_empty() {
                return Ok(());
            }
            match rustix::net::send(sock, out, SendFlags::NOSIGNAL) {
                Ok(n) => {
                    self.rec.counts.bytes_sent += n as u64;
                    h2.consume_output(n);
                }
                Err(Errno::AGAIN) => return Ok(()), // EPOLLOUT marks it dirty again
                Err(Errno::INTR) => {}
                Err(e) => return Err(io_class(e)),
            }
        }
    }

    /// The connection ended (closed, reset, a protocol error, or done after
    /// a GOAWAY): its unanswered streams fail with `class` (or go out again,
    /// see [`H2Loop::stream_lost`]), and a new connection is made for the
    /// slots still waiting.
    pub(super) fn link_failed(&mut self, l: usize, now: Instant, class: ErrorClass) {
        // A GOAWAY or the last frames still queued: try once, without waiting.
        let _ = self.write_out(l);
        self.drop_socket(l);
        let lost = std::mem::take(&mut self.links[l].open);
        for &(_, k) in &lost {
            self.stream_lost(k, now, class);
        }
        // Keep the table's allocation (nothing opened meanwhile: a new
        // connection opens streams only after the server's SETTINGS).
        if self.links[l].open.is_empty() {
            let mut open = lost;
            open.clear();
            self.links[l].open = open;
        }
        if !self.links[l].waiting.is_empty() {
            self.connect(l, now);
        }
    }

    fn drop_socket(&mut self, l: usize) {
        let link = &mut self.links[l];
        // Dropping the fd closes it and takes it out of the epoll set.
        link.sock = None;
        link.tls = None;
        link.h2 = None;
        link.state = LinkState::Down;
    }
}
