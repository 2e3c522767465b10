//! One HTTP/1.1 connection as a state machine, with no I/O of its own.
//!
//! Every engine drives the same [`Conn`], in the way hyper's `dispatch` drives
//! its `conn`: the driver reads bytes into [`Conn::read_space`], writes what
//! [`Conn::next_write`] offers, and reports every outcome as an [`Event`] to
//! [`Conn::on`] (bytes read or the end of input, bytes written, a failed read or
//! write, a deadline reached, a hold over, the client gone, shutdown forced).
//! Each call returns the [`Interest`] the connection has next, and the driver
//! only carries it out with its own way of waiting (blocking syscalls, epoll
//! edges, futures). Every decision about what follows an outcome is made here:
//! abandoning responses to a client that is gone, the 408 of a slow head, the
//! silent close of an idle connection (at its keep-alive timeout, or at once
//! when shutdown has begun: [`Conn::deadline`]), the lingering close after an
//! error, the release or abandon after a `--delay` hold. So parsing,
//! pipelining, persistence, bodies, limits, logging, counting and these rules
//! are written once, and every engine serves identical HTTP.
//!
//! States ([`State`]): `Reading` a request head; `Continue`: writing
//! `100 Continue` (after any earlier responses) to a client that waits for it
//! before sending its body; `Draining` a request body (discarded: we serve no
//! method that uses one) while its response waits; `Writing` responses;
//! `Closed`. Pipelined requests that arrive together are answered in order,
//! several small responses batched into one write.
//!
//! A response counts (by status class) only once it is completely written. A
//! client that goes before that abandons it: it is counted as abandoned and
//! logged with status 499 and the body bytes that did go out. The drivers tell
//! the connection when they learn that the client closed ([`Event::PeerGone`]);
//! what that close means is decided here, once: see [`PeerEnd`].
//!
//! Layout:
//! - this file: the protocol state (reading, continuing, draining a body,
//!   writing, closed), the buffers, and the rules after each [`Event`];
//! - [`ledger`]: the responses owed, their log lines, 499s and counting;
//! - [`service_time`]: the `--work` and `--delay` owed before writing;
//! - [`h2`]: HTTP/2, which a connection becomes when it opens with the
//!   client preface ([`State::Http2`]); the driver surface stays the same.

use std::fs::File;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use servelab_http::{ChunkedDecoder, Method, Parse, Part, RequestHead, Status, Version};

use crate::config::OnAbandon;
mod h2;
mod ledger;
mod service_time;

use ledger::{Ledger, Produced};
use service_time::ServiceTime;

use crate::runtime::shared::{Local, Shared};
use crate::site::handler::{self, Authorization};
use crate::site::response::{Body, Persist, Response};

/// Read buffer to start with; grown up to the head limit when a head is larger.
const READ_BUF: usize = 8 * 1024;
/// Stop batching pipelined responses once this much output is waiting.
const OUT_BATCH: usize = 64 * 1024;

/// A read buffer and an output buffer, lent to a connection by an event loop.
#[derive(Debug)]
pub(crate) struct Buffers {
    read: Vec<u8>,
    out: Vec<u8>,
}

impl Buffers {
    /// A fresh pair.
    pub(crate) fn new() -> Buffers {
        Buffers {
            read: vec![0; READ_BUF],
            out: Vec::with_capacity(READ_BUF),
        }
    }
}

/// What the connection wants from its engine next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Interest {
    /// Read more bytes (a request head, more of a pipelined request, or a body),
    /// until [`Conn::deadline`]; then report [`Event::Deadline`].
    Read,
    /// Write what [`Conn::next_write`] offers; without progress until
    /// [`Conn::deadline`], report [`Event::Deadline`] (or [`Event::WriteFailed`]).
    Write,
    /// CPU is needed on a thread that may spend it: answer the request that
    /// waits (a connection that defers its answers, [`Conn::defer_answers`]) and
    /// burn `--work`; see [`crate::driver::policy::work`]. An engine with
    /// workers hands the connection to one for this.
    Work,
    /// Responses are ready but held back until [`Conn::held_until`]
    /// (`--delay`): wait without holding a CPU (a sleep, a `poll`, a timer),
    /// then report [`Event::Deadline`], or [`Event::PeerGone`] if the client
    /// closes first. (The instant is not carried here: an `Interest` of a
    /// byte goes back in a register, one holding an `Instant` through
    /// memory, on every event of every request.)
    Hold,
    /// Close the socket. `linger` asks for a lingering close: shut down the write
    /// side and drain briefly ([`crate::driver::policy::Linger`]), so that unread
    /// request bytes do not make the kernel reset the connection before the
    /// client has read our (error) response.
    Close { linger: bool },
}

/// An outcome the driver reports to [`Conn::on`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Event {
    /// `n` bytes were read into [`Conn::read_space`]; 0 is the end of input.
    Read(usize),
    /// Reading failed (a reset): the client is gone.
    ReadFailed,
    /// `n` bytes of the last [`Conn::next_write`] chunk were written. 0 for a
    /// file chunk means the file ended early (truncated while being sent).
    Wrote(usize),
    /// Writing failed: a reset, a broken pipe, or no progress within the
    /// driver's write timeout.
    WriteFailed,
    /// The driver's wait for [`Conn::deadline`] ended. Harmless when early: a
    /// deadline that has moved on (another request came) leaves the interest
    /// as it is, and the driver waits again.
    Deadline,
    /// The CPU of [`Interest::Work`] was spent ([`Conn::work`]).
    Worked,
    /// The driver learned that the client closed (a FIN or a reset: `RDHUP`,
    /// `HUP` or `ERR`, or the end of a receive), whatever the connection was
    /// doing; once is enough, later ones change nothing. What the driver
    /// reads after it came before it. `unread`: request bytes wait in the
    /// socket ahead of the close (a driver that holds what it received
    /// knows; one that would have to look, with a `MSG_PEEK`, looks only
    /// while [`Conn::watches_peer`], the one time the answer decides
    /// anything, and says `false` otherwise). What the close means is decided
    /// here: see [`PeerEnd`].
    PeerGone { unread: bool },
    /// The grace period of shutdown is over: give up on what is owed.
    Forced,
}

/// Something to write.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Chunk<'a> {
    /// Bytes from the output buffer.
    Bytes(&'a [u8]),
    /// `len` bytes of `file` from `offset` (for `sendfile`).
    File {
        file: &'a File,
        offset: u64,
        len: usize,
    },
}

#[derive(Debug)]
enum State {
    Reading,
    // Writing `100 Continue`, queued behind the responses owed before it, then
    // draining the body it invites.
    Continue(BodyReader),
    Draining(BodyReader),
    /// A complete request (its head at `start`, `head_len` long, its body
    /// drained) waits for [`Conn::work`].
    Ready,
    Writing,
    Closed {
        linger: bool,
    },
    /// HTTP/2, after the client preface: the state is in `Conn::h2`.
    Http2,
}

#[derive(Debug)]
enum BodyReader {
    Length(u64),
    Chunked(ChunkedDecoder),
}

/// What the client's end of the connection is known to be.
///
/// TCP does not tell a client that only shut its sending side (a half-close,
/// which RFC 9112 §9.6 leaves legal) from one that closed the socket and left:
/// both send a FIN, and the difference shows only once we write (a reset).
/// So the FIN ([`Event::PeerGone`]) is judged by when it came and what it
/// arrived with, here and nowhere else. While responses are owed and being
/// served (`--delay` or `--work`: [`Conn::watches_peer`]), behind request
/// bytes we have not yet taken (unread in the socket, or read but not yet
/// parsed) it ends a batch of requests the client still waits for: a
/// half-close, and they are all answered; with nothing left to take, the
/// client gave up waiting: they are abandoned. At any other time (reading,
/// or writing a response) it is behind whatever is still to be read, and
/// is taken as a half-close: the end of input then ends the connection,
/// and a client that really left shows as a failed write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum PeerEnd {
    /// Open, as far as we know.
    Open,
    /// The client has said all it will say and waits for the answers.
    HalfClosed,
    /// The client left while responses were owed: they are abandoned, after
    /// the rest of the hold with `--on-abandon finish`.
    Gone,
}

/// Bytes a body still to be sent after the output buffer adds to the wire.
#[inline]
fn body_wire_len(body: &Body) -> u64 {
    match body {
        Body::Empty => 0,
        Body::File { remaining, .. } => *remaining,
        Body::Parts { parts, current, .. } => {
            let parts: u64 = parts
                .iter()
                .map(|p| match p {
                    Part::Bytes(b) => b.len() as u64,
                    Part::File(r) => r.len(),
                })
                .sum();
            parts + current.map_or(0, |(_, left)| left)
        }
    }
}

/// Which timer applies while the connection waits to read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Wait {
    /// Between requests: the keep-alive timeout, then a silent close.
    Idle(Instant),
    /// In the middle of a request head or body: the read timeout, then 408.
    Request(Instant),
}

impl Wait {
    /// When the wait ends.
    fn deadline(self) -> Instant {
        match self {
            Wait::Idle(t) | Wait::Request(t) => t,
        }
    }
}

/// A connection.
#[derive(Debug)]
pub(crate) struct Conn {
    state: State,
    peer: SocketAddr,
    buf: Vec<u8>,
    start: usize,
    end: usize,
    out: Vec<u8>,
    out_pos: usize,
    body: Body,
    /// Length of the head waiting at `start` while its body drains.
    head_len: usize,
    /// Close once the owed responses are written.
    close_after: bool,
    /// That close follows an error: linger so the client can read the answer.
    linger_on_close: bool,
    requests: u64,
    /// Responses produced but not yet completely written.
    owed: Ledger,
    peer_end: PeerEnd,
    /// When the connection started waiting for the current request (or opened).
    waiting_since: Instant,
    /// When writing last made progress (or began): the write timeout counts
    /// from here.
    progress_at: Instant,
    /// `--work` and `--delay` still owed before writing.
    service: ServiceTime,
    opened: Instant,
    /// When the request answered during the current event started, if one
    /// was: [`Conn::on`] takes it as the instant writing begins.
    answered_at: Option<Instant>,
    /// Stop at each complete request instead of answering it ([`State::Ready`]).
    defer: bool,
    /// HTTP/2's state, once the preface came ([`State::Http2`]).
    h2: Option<Box<h2::H2>>,
    /// What TLS's ALPN chose, as the driver said before the first bytes
    /// ([`Conn::alpn_unknown`], [`Conn::set_alpn`]).
    alpn: Alpn,
}

/// What ALPN chose for a connection (RFC 7301), which decides its protocol
/// (RFC 9113 §3.3): `h2` makes it HTTP/2 whatever it sends, any other makes
/// it HTTP/1.1 even when it sends the HTTP/2 preface.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Alpn {
    /// The driver has not said yet.
    Unknown,
    /// Plaintext, or a TLS client that offered no ALPN: the first bytes
    /// decide (the preface, with `--h2c` or after TLS).
    None,
    /// `h2`.
    H2,
    /// `http/1.1`.
    Http1,
}

impl Conn {
    pub(crate) fn new(peer: SocketAddr) -> Conn {
        Conn::new_with(peer, vec![0; READ_BUF], Vec::with_capacity(READ_BUF))
    }

    fn new_with(peer: SocketAddr, buf: Vec<u8>, out: Vec<u8>) -> Conn {
        let now = Instant::now();
        Conn {
            state: State::Reading,
            peer,
            buf,
            start: 0,
            end: 0,
            out,
            out_pos: 0,
            body: Body::Empty,
            head_len: 0,
            close_after: false,
            linger_on_close: false,
            requests: 0,
            owed: Ledger::default(),
            peer_end: PeerEnd::Open,
            waiting_since: now,
            progress_at: now,
            service: ServiceTime::default(),
            opened: now,
            answered_at: None,
            defer: false,
            h2: None,
            alpn: Alpn::Unknown,
        }
    }

    /// Whether the driver has still to say what ALPN chose: once, before it
    /// hands over the first bytes (for TLS, after the handshake).
    #[inline(always)]
    pub(crate) fn alpn_unknown(&self) -> bool {
        self.alpn == Alpn::Unknown
    }

    /// What ALPN chose: `Some(true)` for `h2`, `Some(false)` for another
    /// protocol, `None` without ALPN.
    #[cold]
    pub(crate) fn set_alpn(&mut self, h2: Option<bool>) {
        self.alpn = match h2 {
            None => Alpn::None,
            Some(true) => Alpn::H2,
            Some(false) => Alpn::Http1,
        };
    }

    /// A connection without buffers: an event loop lends them with
    /// [`Conn::attach`] before reading and takes them back with
    /// [`Conn::detach`] while the connection is idle, so that 10,000 idle
    /// keep-alive connections cost a few hundred bytes each, not 16 KiB.
    pub(crate) fn bare(peer: SocketAddr) -> Conn {
        Conn::new_with(peer, Vec::new(), Vec::new())
    }

    /// The client connected `ago` before this connection was made: a driver
    /// that learns of connections late (an event loop whose kernel defers
    /// accepting, `crate::driver::policy`'s "Deadlines") says so before the
    /// first read, and the read timeout and the connection's age count from
    /// the connect.
    pub(crate) fn connected_earlier(&mut self, ago: Duration) {
        debug_assert!(self.requests == 0 && self.end == 0, "before any read");
        for t in [&mut self.opened, &mut self.waiting_since] {
            *t = t.checked_sub(ago).unwrap_or(*t);
        }
    }

    /// From now on, stop at each complete request ([`Interest::Work`]) instead
    /// of answering it at once, so that the handler (with `--work` and
    /// `--delay`) can run on another thread than the one that read the request:
    /// the `event` engine's selector reads, its workers call [`Conn::work`].
    pub(crate) fn defer_answers(&mut self) {
        self.defer = true;
    }

    /// Lends the connection a read buffer (`READ_BUF` bytes long) and an
    /// output buffer, if it has none.
    pub(crate) fn attach(&mut self, bufs: Buffers) {
        if self.buf.is_empty() {
            debug_assert_eq!(bufs.read.len(), READ_BUF);
            debug_assert!(bufs.out.is_empty());
            self.buf = bufs.read;
            self.out = bufs.out;
        }
    }

    /// Takes the buffers back while the connection is idle and they hold
    /// nothing; `None` when they are in use (or were grown for a big head, in
    /// which case they are simply kept until the connection closes).
    pub(crate) fn detach(&mut self) -> Option<Buffers> {
        if !self.is_idle() || self.buf.len() != READ_BUF || !self.out.is_empty() {
            return None;
        }
        self.start = 0;
        self.end = 0;
        Some(Buffers {
            read: std::mem::take(&mut self.buf),
            out: std::mem::take(&mut self.out),
        })
    }

    /// The buffers of a connection that is done with (closed, whatever its
    /// state), for the next one; `None` if they were grown for a big head.
    pub(crate) fn into_buffers(mut self) -> Option<Buffers> {
        if self.buf.len() != READ_BUF {
            return None;
        }
        self.out.clear();
        Some(Buffers {
            read: std::mem::take(&mut self.buf),
            out: std::mem::take(&mut self.out),
        })
    }

    /// Does a file body follow the bytes [`Conn::next_write`] offers? (The
    /// engine then sends the head with `MSG_MORE`, so head and the first body
    /// bytes share a segment.)
    ///
    /// Only a file range that really comes next counts: bytes sent with
    /// `MSG_MORE` and nothing after them sit in the kernel until its cork timer
    /// fires (up to 200 ms), which is what the closing boundary of a multipart
    /// body did before (a regression seen as 83 ms per multipart response).
    pub(crate) fn file_follows(&self) -> bool {
        match &self.body {
            Body::Empty => false,
            Body::File { .. }
            | Body::Parts {
                current: Some(_), ..
            } => true,
            Body::Parts {
                parts,
                current: None,
                ..
            } => {
                // With `out` drained, `next_write` first moves the next literal
                // part into it; what follows that part decides.
                let skip = usize::from(self.out_pos == self.out.len());
                matches!(parts.get(skip), Some(Part::File(_)))
            }
        }
    }

    /// Requests answered so far on this connection.
    pub(crate) fn requests(&self) -> u64 {
        self.requests
    }

    /// When the connection was opened.
    pub(crate) fn opened(&self) -> Instant {
        self.opened
    }

    /// The peer address.
    pub(crate) fn peer(&self) -> SocketAddr {
        self.peer
    }

    /// The interest now.
    pub(crate) fn interest(&self) -> Interest {
        match self.state {
            State::Closed { linger } => Interest::Close { linger },
            State::Draining(_) | State::Reading => Interest::Read,
            State::Ready => Interest::Work,
            State::Http2 => self.h2_interest(),
            State::Writing | State::Continue(_) if !self.service.work().is_zero() => Interest::Work,
            State::Writing | State::Continue(_) if self.service.hold().is_some() => Interest::Hold,
            State::Writing | State::Continue(_) => Interest::Write,
        }
    }

    /// True between requests: nothing buffered, nothing owed. Shutdown closes
    /// such connections at once.
    pub(crate) fn is_idle(&self) -> bool {
        match self.state {
            State::Reading => self.start == self.end && self.owed.is_empty(),
            State::Http2 => self.h2_is_idle(),
            _ => false,
        }
    }

    /// When the driver reports [`Event::Deadline`] if nothing happens first:
    /// the read timeout of a request (or of a new connection), the keep-alive
    /// timeout between requests (now, once shutdown has begun: an idle
    /// connection closes at once, after what has already arrived is read), the
    /// write timeout counted from the last progress, or the end of a hold.
    /// `None` while working or closing (the lingering close has its own bound).
    pub(crate) fn deadline(&self, site: &Shared) -> Option<Instant> {
        match self.interest() {
            Interest::Read if matches!(self.state, State::Http2) => self.h2_deadline(site),
            Interest::Read => Some(self.wait(site).deadline()),
            Interest::Write => Some(self.progress_at + site.config.write_timeout),
            Interest::Hold => Some(self.held_until()),
            Interest::Work | Interest::Close { .. } => None,
        }
    }

    /// When the hold of [`Interest::Hold`] ends (now, if there is none).
    pub(crate) fn held_until(&self) -> Instant {
        self.service.hold().unwrap_or_else(Instant::now)
    }

    /// Carries out an [`Event`] and says what the connection wants next.
    pub(crate) fn on(&mut self, event: Event, site: &Shared, w: &mut Local) -> Interest {
        if let State::Http2 = self.state {
            return self.h2_on(event, site, w);
        }
        let before = self.interest();
        // Only an answer produced by this event counts below (one from
        // `Conn::work`, before a burn of `--work`, is too old).
        self.answered_at = None;
        let next = match event {
            Event::Read(n) => self.filled(n, site, w),
            Event::ReadFailed | Event::WriteFailed | Event::Forced => {
                self.abandon(site, w);
                self.interest()
            }
            Event::Wrote(n) => self.wrote(n, site, w),
            Event::Deadline => self.deadline_reached(site, w),
            Event::Worked => self.worked(site, w),
            Event::PeerGone { unread } => self.peer_closed(unread, site, w),
        };
        // A response produced by this event was produced just now: its start
        // is the clock read that writing begins at (see `clock.rs` for what a
        // read costs).
        let answered = self.answered_at.take();
        if next == Interest::Write && before != Interest::Write {
            // Writing begins: the write timeout counts from now.
            self.progress_at = answered.unwrap_or_else(Instant::now);
        }
        next
    }

    /// What a deadline means depends on what the connection waits for; one
    /// that has not really passed changes nothing.
    fn deadline_reached(&mut self, site: &Shared, w: &mut Local) -> Interest {
        let now = Instant::now();
        match self.interest() {
            Interest::Read if now >= self.wait(site).deadline() => self.timed_out(site, w),
            Interest::Write if now >= self.progress_at + site.config.write_timeout => {
                // No progress for the write timeout: the client stopped reading.
                self.abandon(site, w);
                self.interest()
            }
            Interest::Hold if now >= self.held_until() => self.release(site, w),
            other => other,
        }
    }

    /// The timer that applies to the next read.
    fn wait(&self, site: &Shared) -> Wait {
        if self.is_idle() && site.shutdown.is_requested() {
            Wait::Idle(self.waiting_since.min(Instant::now()))
        } else if self.is_idle() && self.requests > 0 {
            Wait::Idle(self.waiting_since + site.config.keepalive_timeout)
        } else {
            // A new connection must send its first head within the read timeout,
            // like any request: an idle fresh connection is a slowloris too.
            Wait::Request(self.waiting_since + site.config.read_timeout)
        }
    }

    /// Space to read into. Grows the buffer (up to the head limit plus slack)
    /// only when a request head does not fit.
    pub(crate) fn read_space(&mut self) -> &mut [u8] {
        if self.buf.is_empty() {
            // A bare connection read without [`Conn::attach`]: allocate.
            self.buf.resize(READ_BUF, 0);
        }
        if self.end == self.buf.len() {
            if self.start > 0 {
                self.buf.copy_within(self.start..self.end, 0);
                self.end -= self.start;
                self.start = 0;
            } else {
                // The parser reports 431/414 before a head passes its limit, so
                // the buffer never needs to exceed that limit by much.
                let grown = (self.buf.len() * 2)
                    .min(64 * 1024)
                    .max(self.buf.len() + 1024);
                self.buf.resize(grown, 0);
            }
        }
        &mut self.buf[self.end..]
    }

    /// `n` bytes were read into [`Conn::read_space`]; `n == 0` is end of stream.
    fn filled(&mut self, n: usize, site: &Shared, w: &mut Local) -> Interest {
        if n == 0 {
            // The client closed its side. Whatever it had half-sent is dropped; if
            // responses are owed we still try to write them (a half-close is legal).
            self.state = if !self.owed.is_empty() {
                self.close_after = true;
                if self.peer_end == PeerEnd::Open {
                    self.peer_end = PeerEnd::HalfClosed;
                }
                State::Writing
            } else {
                State::Closed { linger: false }
            };
            return self.interest();
        }
        // The first bytes: the HTTP/2 preface makes this an HTTP/2 connection,
        // unless ALPN chose http/1.1; with ALPN h2 it is HTTP/2 whatever
        // they are (a client that then speaks HTTP/1.1 gets HTTP/2's GOAWAY
        // PROTOCOL_ERROR for a bad preface: RFC 9113 §3.3).
        if self.requests == 0
            && self.start == 0
            && site.http2
            && self.alpn != Alpn::Http1
            && let Some(next) = self.sniff_h2(n, self.alpn == Alpn::H2, site, w)
        {
            return next;
        }
        self.end += n;
        self.advance(site, w);
        match self.interest() {
            // A client trickling a byte faster than a driver's wait never lets
            // the deadline be reached, so it is also checked after every read
            // that left a request unfinished (slowloris; regression test in
            // tests/server/slow_clients.rs).
            Interest::Read if Instant::now() >= self.wait(site).deadline() => {
                self.timed_out(site, w)
            }
            next => next,
        }
    }

    /// The read deadline passed ([`Conn::deadline`]).
    fn timed_out(&mut self, site: &Shared, w: &mut Local) -> Interest {
        match self.wait(site) {
            Wait::Idle(_) => self.state = State::Closed { linger: false },
            Wait::Request(_) if self.requests == 0 && self.start == self.end => {
                // Opened and never said anything: close without a word (as nginx
                // does); a 408 to a silent port scan helps nobody.
                self.state = State::Closed { linger: false };
            }
            Wait::Request(_) => {
                let head = servelab_http::is_head_request(&self.buf[self.start..self.end]);
                self.fail(Status::REQUEST_TIMEOUT, head, site, w);
            }
        }
        self.interest()
    }

    /// The first half of [`Interest::Work`]: answers the requests that wait
    /// (a connection that defers its answers stops at each), and returns the
    /// CPU to burn (`--work`, zero without it) before [`Event::Worked`].
    pub(crate) fn work(&mut self, site: &Shared, w: &mut Local) -> Duration {
        if let State::Http2 = self.state {
            self.h2_work(site, w);
        }
        while matches!(self.state, State::Ready) {
            self.answer_ready(site, w);
            self.advance(site, w);
        }
        self.service.work()
    }

    /// Answers the waiting request with `503 Service Unavailable` (with
    /// `Retry-After`) instead, and closes: there is no room to serve it now.
    pub(crate) fn refuse(&mut self, site: &Shared, w: &mut Local) -> Interest {
        if let State::Http2 = self.state {
            return self.h2_refuse(site, w);
        }
        if matches!(self.state, State::Ready) {
            let head = servelab_http::is_head_request(&self.buf[self.start..self.end]);
            self.start = self.end;
            self.fail(Status::SERVICE_UNAVAILABLE, head, site, w);
            self.progress_at = Instant::now();
        }
        self.interest()
    }

    /// The hold of [`Interest::Hold`] is over: responses may be written, or,
    /// if the client left meanwhile (`--on-abandon finish`), abandoned.
    fn release(&mut self, site: &Shared, w: &mut Local) -> Interest {
        self.service.release();
        if self.peer_end == PeerEnd::Gone {
            self.abandon(site, w);
        }
        self.interest()
    }

    /// The work of [`Interest::Work`] is burnt: a `--delay` drawn meanwhile
    /// starts now (service time = work + delay). A client that left during
    /// the work (`--on-abandon finish`) has what is owed abandoned now,
    /// unless a hold follows (then at its end).
    fn worked(&mut self, site: &Shared, w: &mut Local) -> Interest {
        self.service.worked();
        if self.peer_end == PeerEnd::Gone && self.service.hold().is_none() {
            self.abandon(site, w);
        }
        self.interest()
    }

    /// The driver learned that the client closed ([`Event::PeerGone`]). See
    /// [`PeerEnd`] for what that means; a client that left has what is owed
    /// abandoned now with `--on-abandon cancel`, otherwise once the service
    /// time it waits for is over (`release`, `worked`).
    fn peer_closed(&mut self, unread: bool, site: &Shared, w: &mut Local) -> Interest {
        if self.peer_end != PeerEnd::Open {
            return self.interest();
        }
        if !self.watches_peer() || unread || self.start < self.end {
            self.peer_end = PeerEnd::HalfClosed;
            return self.interest();
        }
        self.peer_end = PeerEnd::Gone;
        let serving = self.service.hold().is_some() || !self.service.work().is_zero();
        if !serving || site.config.on_abandon == OnAbandon::Cancel {
            self.abandon(site, w);
        }
        self.interest()
    }

    /// Whether the client's close would be judged now ([`Event::PeerGone`],
    /// see [`PeerEnd`]): responses are owed and being served (a hold or
    /// work), and the client's end is not judged yet. A driver watches for
    /// the close meanwhile (a `poll` rather than a sleep), and looks for
    /// request bytes ahead of a close (its `MSG_PEEK`) only then: at any
    /// other time the answer changes nothing.
    pub(crate) fn watches_peer(&self) -> bool {
        !self.owed.is_empty()
            && self.peer_end == PeerEnd::Open
            && matches!(self.interest(), Interest::Hold | Interest::Work)
    }

    /// While `--work` burns for the responses owed, does a client that
    /// leaves stop it (`--on-abandon cancel`), so that the driver watches
    /// for the close as the CPU burns? With `finish` the work runs out for
    /// nobody, and one look at its end is enough. (`--on-abandon` is read
    /// here and in [`Event::PeerGone`]'s rule, nowhere else.)
    pub(crate) fn cancels_work_when_peer_goes(&self, site: &Shared) -> bool {
        self.watches_peer() && site.config.on_abandon == OnAbandon::Cancel
    }

    /// What to write next, if anything.
    pub(crate) fn next_write(&mut self) -> Option<Chunk<'_>> {
        if self.out_pos == self.out.len() {
            self.next_part();
        }
        if self.out_pos < self.out.len() {
            return Some(Chunk::Bytes(&self.out[self.out_pos..]));
        }
        let Some((file, offset, remaining)) = self.body.file_range() else {
            // An HTTP/2 connection's output is its frames (`conn/h2.rs`).
            return match self.body {
                Body::Empty => self.h2_next_write(),
                _ => None,
            };
        };
        Some(Chunk::File {
            file,
            offset,
            // sendfile moves at most 2 GiB - 4 KiB per call.
            len: remaining.min(1 << 30) as usize,
        })
    }

    /// In a multipart body with nothing in flight, takes the next part: literal
    /// bytes go to `out`, a file range becomes `current`.
    fn next_part(&mut self) {
        let Body::Parts { parts, current, .. } = &mut self.body else {
            return;
        };
        if current.is_some() {
            return;
        }
        match parts.pop_front() {
            None => self.body = Body::Empty,
            Some(Part::Bytes(bytes)) => {
                self.out.clear();
                self.out_pos = 0;
                self.out.extend_from_slice(&bytes);
            }
            Some(Part::File(range)) => *current = Some((range.start, range.len())),
        }
    }

    /// `n` bytes of the last [`Conn::next_write`] chunk were written. `n == 0`
    /// for a file chunk means the file ended early (truncated while being sent):
    /// the response cannot be completed, so the connection closes.
    fn wrote(&mut self, n: usize, site: &Shared, w: &mut Local) -> Interest {
        w.tally.sent(n as u64);
        self.owed.sent(n as u64);
        if self.out_pos < self.out.len() {
            self.out_pos += n;
            if self.out_pos == self.out.len() {
                self.out.clear();
                self.out_pos = 0;
            }
        } else {
            let n = n as u64;
            let progress = match &mut self.body {
                Body::File {
                    offset, remaining, ..
                }
                | Body::Parts {
                    current: Some((offset, remaining)),
                    ..
                } => {
                    *offset += n;
                    *remaining -= n.min(*remaining);
                    (n > 0, *remaining == 0)
                }
                _ => (true, false),
            };
            match (progress, &mut self.body) {
                ((false, _), _) => {
                    self.abandon(site, w);
                    return self.interest();
                }
                ((true, true), Body::Parts { current, .. }) => *current = None,
                ((true, true), body) => *body = Body::Empty,
                _ => {}
            }
        }
        if self.out.is_empty() && self.next_write_is_none() {
            // Progress to the end: `responses_done` reads the clock for it.
            self.responses_done(site, w);
        } else if n > 0 {
            self.progress_at = Instant::now();
        }
        self.interest()
    }

    fn next_write_is_none(&mut self) -> bool {
        self.next_write().is_none()
    }

    /// The peer is gone (closed while served, reset, broken pipe, write
    /// timeout) while responses were owed: count them as abandoned, not by
    /// their status; log them as 499 with the body bytes that did go out; close.
    fn abandon(&mut self, site: &Shared, w: &mut Local) {
        self.owed.abandon(site, w);
        self.service.clear();
        self.body = Body::Empty;
        self.state = State::Closed { linger: false };
    }

    /// Every owed response is out: count and log them, then go on with what is
    /// buffered.
    fn responses_done(&mut self, site: &Shared, w: &mut Local) {
        let now = self.owed.settle(site, w);
        self.progress_at = now;
        if self.close_after {
            self.state = State::Closed {
                linger: self.linger_on_close,
            };
            return;
        }
        self.state = match std::mem::replace(&mut self.state, State::Reading) {
            // The 100 is out: now the body may come.
            State::Continue(reader) => State::Draining(reader),
            _ => State::Reading,
        };
        self.waiting_since = now;
        self.advance(site, w);
    }

    /// Parses and answers what is buffered, as far as it can.
    ///
    /// A request with a body is answered only after its body has been read and
    /// discarded: its head stays at the front of the buffer meanwhile, body bytes
    /// behind it are consumed as they arrive, and then the head is parsed again
    /// (cheap, and it spares copying the head's fields). So a malformed chunked
    /// body is answered with 400 instead of a response that was already queued,
    /// and no body byte is ever parsed as the next request.
    fn advance(&mut self, site: &Shared, w: &mut Local) {
        loop {
            if let State::Draining(reader) = &mut self.state {
                let head_len = self.head_len;
                let body_at = self.start + head_len;
                let input = &self.buf[body_at..self.end];
                let (used, done) = match reader {
                    BodyReader::Length(left) => {
                        let used = (*left).min(input.len() as u64);
                        *left -= used;
                        (used as usize, *left == 0)
                    }
                    BodyReader::Chunked(dec) => match dec.feed(input) {
                        Ok(r) => r,
                        Err(e) => {
                            let head =
                                servelab_http::is_head_request(&self.buf[self.start..self.end]);
                            self.start = self.end;
                            self.fail(e.status(), head, site, w);
                            return;
                        }
                    },
                };
                self.buf.copy_within(body_at + used..self.end, body_at);
                self.end -= used;
                if !done {
                    return;
                }
                self.state = State::Ready;
                if self.defer {
                    return;
                }
                self.answer_ready(site, w);
                continue;
            }
            if !matches!(self.state, State::Reading) {
                return;
            }
            if self.start == self.end {
                self.compact_if_empty();
                if !self.owed.is_empty() {
                    self.state = State::Writing;
                }
                return;
            }
            if self.close_after || self.out.len() >= OUT_BATCH || !matches!(self.body, Body::Empty)
            {
                self.state = State::Writing;
                return;
            }
            let buf = std::mem::take(&mut self.buf);
            let step = self.parse_one(&buf, site, w);
            self.buf = buf;
            if !step {
                return;
            }
        }
    }

    /// Parses and answers the next request in `buf` (the connection's own buffer,
    /// lent out so the request can borrow it while `self` is mutated). Returns
    /// whether `advance` should go on.
    fn parse_one(&mut self, buf: &[u8], site: &Shared, w: &mut Local) -> bool {
        match servelab_http::parse_request(&buf[self.start..self.end], &site.config.limits) {
            Ok(Parse::Incomplete) => {
                if !self.owed.is_empty() {
                    // Send what is ready; the rest of this head can follow.
                    self.state = State::Writing;
                }
                false
            }
            Err(e) => {
                let head = servelab_http::is_head_request(&buf[self.start..self.end]);
                self.start = self.end;
                self.fail(e.status(), head, site, w);
                false
            }
            // By reference: the head is a few hundred bytes, and moving it out
            // of the result was a copy per request.
            Ok(Parse::Complete(ref req)) => {
                let head_len = req.head_len;
                let body = if req.chunked {
                    Some(BodyReader::Chunked(ChunkedDecoder::new(
                        site.config.limits.max_body,
                    )))
                } else {
                    req.content_length
                        .filter(|&n| n > 0)
                        .map(BodyReader::Length)
                };
                match body {
                    // RFC 9110 10.1.1: the client may wait for a 100 before
                    // sending the body, so never wait for the body first. A
                    // method we do not serve is decided by the head alone: its
                    // 405/501 goes now, and the connection closes, since we
                    // cannot know whether the body will follow it.
                    Some(_) if req.expect_continue && req.method == Method::Other => {
                        let req = RequestHead {
                            keep_alive: false,
                            ..*req
                        };
                        self.answer(&req, &buf[self.start..self.start + head_len], site, w);
                        self.linger_on_close = true;
                        self.start = self.end;
                    }
                    // A body already on its way needs no invitation.
                    Some(reader) if req.expect_continue && self.end == self.start + head_len => {
                        self.head_len = head_len;
                        self.out.extend_from_slice(servelab_http::CONTINUE);
                        self.state = State::Continue(reader);
                    }
                    Some(reader) => {
                        self.head_len = head_len;
                        self.state = State::Draining(reader);
                    }
                    None if self.defer => {
                        self.head_len = head_len;
                        self.state = State::Ready;
                    }
                    None => {
                        self.answer(req, &buf[self.start..self.start + head_len], site, w);
                        self.start += head_len;
                    }
                }
                true
            }
        }
    }

    /// Answers the request of [`State::Ready`], parsing its head again (cheap,
    /// and it spares copying the head's fields out of the buffer).
    fn answer_ready(&mut self, site: &Shared, w: &mut Local) {
        self.state = State::Reading;
        // The buffer is lent out while the request borrows from it, so that
        // `answer` may take `&mut self` (a Vec move, no copy).
        let buf = std::mem::take(&mut self.buf);
        let parsed = servelab_http::parse_request(&buf[self.start..self.end], &site.config.limits);
        if let Ok(Parse::Complete(ref req)) = parsed {
            let head = &buf[self.start..self.start + req.head_len];
            self.answer(req, head, site, w);
        } else {
            unreachable!("a head that parsed once parses again");
        }
        self.buf = buf;
        self.start += self.head_len;
    }

    /// Produces the response to one parsed request (`head`: its bytes) into `out`.
    fn answer(&mut self, req: &RequestHead<'_>, head: &[u8], site: &Shared, w: &mut Local) {
        let started = Instant::now();
        w.clock.tick_at(started);
        self.answered_at = Some(started);
        w.tally.request_started();
        self.service.draw(w);
        self.requests += 1;
        let keep_alive = req.keep_alive
            && !site.shutdown.is_requested()
            && site
                .config
                .max_requests_per_conn
                .is_none_or(|max| self.requests < max);
        if !keep_alive {
            self.close_after = true;
        }
        let persist = Persist {
            keep_alive,
            http10: req.version == Version::Http10,
        };
        // Split borrows: the request borrows `buf`, the response goes to `out`.
        let before = self.out.len();
        let Response {
            status,
            body_len,
            body,
        } = handler::respond(
            req,
            Authorization::Head(head),
            site,
            w,
            persist,
            &mut self.out,
        );
        let wire = (self.out.len() - before) as u64 + body_wire_len(&body);
        // `advance` answers only with no body in flight, so the old one is
        // `Empty`: assigning an `Empty` over it would only call its drop.
        debug_assert!(matches!(self.body, Body::Empty));
        if !matches!(body, Body::Empty) {
            self.body = body;
        }
        let produced = Produced {
            status,
            wire,
            body_len,
            started,
        };
        self.owed
            .owe(Some(req), false, self.peer.ip(), produced, site, w);
    }

    /// Answers a request that could not be parsed (or timed out) and closes.
    /// `head`: the request was a HEAD, so the answer has no content.
    fn fail(&mut self, status: Status, head: bool, site: &Shared, w: &mut Local) {
        let started = Instant::now();
        w.clock.tick_at(started);
        w.tally.request_started();
        self.close_after = true;
        self.linger_on_close = true;
        let persist = Persist {
            keep_alive: false,
            http10: false,
        };
        let before = self.out.len();
        let resp = handler::error(status, w, persist, head, &mut self.out);
        let wire = (self.out.len() - before) as u64 + body_wire_len(&resp.body);
        let produced = Produced {
            status,
            wire,
            body_len: resp.body_len,
            started,
        };
        self.owed
            .owe(None, false, self.peer.ip(), produced, site, w);
        self.state = State::Writing;
    }

    fn compact_if_empty(&mut self) {
        if self.start == self.end {
            self.start = 0;
            self.end = 0;
            if self.buf.len() > READ_BUF && self.is_idle() {
                // A big head once should not pin 64 KiB for the connection's life.
                self.buf.truncate(READ_BUF);
                self.buf.shrink_to_fit();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Feeds `req` to `conn` and writes everything it offers into a Vec.
    fn serve_one(conn: &mut Conn, req: &[u8], site: &Shared, w: &mut Local) -> Vec<u8> {
        let space = conn.read_space();
        space[..req.len()].copy_from_slice(req);
        let mut interest = conn.on(Event::Read(req.len()), site, w);
        let mut out = Vec::new();
        while interest == Interest::Write {
            let n = match conn.next_write() {
                Some(Chunk::Bytes(b)) => {
                    out.extend_from_slice(b);
                    b.len()
                }
                Some(Chunk::File { .. }) => panic!("small file expected inline"),
                None => 0,
            };
            interest = conn.on(Event::Wrote(n), site, w);
        }
        assert_eq!(interest, Interest::Read);
        out
    }

    #[test]
    fn idle_connection_lends_its_buffers_back_and_busy_one_keeps_them() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.txt"), "hello").unwrap();
        let site = Shared::new(crate::config::Config::new(dir.path())).unwrap();
        let mut w = site.local();
        let mut conn = Conn::bare("127.0.0.1:1".parse().unwrap());
        assert!(conn.detach().is_none(), "nothing to give back yet");
        conn.attach(Buffers::new());
        let out = serve_one(
            &mut conn,
            b"GET /a.txt HTTP/1.1\r\nHost: t\r\n\r\n",
            &site,
            &mut w,
        );
        assert!(out.starts_with(b"HTTP/1.1 200 OK\r\n") && out.ends_with(b"hello"));
        let bufs = conn.detach().expect("idle: buffers come back");
        // Half a request: not idle, the buffers stay.
        conn.attach(bufs);
        let space = conn.read_space();
        space[..4].copy_from_slice(b"GET ");
        assert_eq!(conn.on(Event::Read(4), &site, &mut w), Interest::Read);
        assert!(conn.detach().is_none(), "a half-read head keeps its buffer");
    }

    #[test]
    fn a_deferring_connection_stops_at_each_complete_request() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.txt"), "hello").unwrap();
        let site = Shared::new(crate::config::Config::new(dir.path())).unwrap();
        let mut w = site.local();
        let mut conn = Conn::new("127.0.0.1:1".parse().unwrap());
        conn.defer_answers();
        let two = b"GET /a.txt HTTP/1.1\r\nHost: t\r\n\r\nGET /a.txt HTTP/1.1\r\nHost: t\r\n\r\n";
        conn.read_space()[..two.len()].copy_from_slice(two);
        assert_eq!(
            conn.on(Event::Read(two.len()), &site, &mut w),
            Interest::Work
        );
        assert_eq!(site.stats.snapshot().in_flight, 0, "nothing answered yet");
        // The work answers both (the parser stops at the second, the work goes on
        // with it), and both go out together.
        assert_eq!(conn.work(&site, &mut w), Duration::ZERO);
        assert_eq!(conn.on(Event::Worked, &site, &mut w), Interest::Write);
        let Some(Chunk::Bytes(out)) = conn.next_write() else {
            panic!("two small responses in the buffer")
        };
        assert_eq!(out.windows(5).filter(|w| *w == b"hello").count(), 2);
        // A refused request gets 503 and the connection closes after it.
        let mut conn = Conn::new("127.0.0.1:1".parse().unwrap());
        conn.defer_answers();
        conn.read_space()[..two.len() / 2].copy_from_slice(&two[..two.len() / 2]);
        assert_eq!(
            conn.on(Event::Read(two.len() / 2), &site, &mut w),
            Interest::Work
        );
        assert_eq!(conn.refuse(&site, &mut w), Interest::Write);
        let Some(Chunk::Bytes(out)) = conn.next_write() else {
            panic!("a 503")
        };
        assert!(out.starts_with(b"HTTP/1.1 503 "));
        let n = out.len();
        assert_eq!(
            conn.on(Event::Wrote(n), &site, &mut w),
            Interest::Close { linger: true }
        );
    }

    #[test]
    fn a_close_behind_unread_requests_is_a_half_close_and_one_after_them_abandons() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.txt"), "hello").unwrap();
        let req = b"GET /a.txt HTTP/1.1\r\nHost: t\r\n\r\n";
        let held = |policy: OnAbandon| {
            let mut config = crate::config::Config::new(dir.path());
            config.delay = Some(servelab_dist::Dist::Const(Duration::from_secs(60)));
            config.on_abandon = policy;
            let site = Shared::new(config).unwrap();
            let mut conn = Conn::new("127.0.0.1:1".parse().unwrap());
            conn.read_space()[..req.len()].copy_from_slice(req);
            let mut w = site.local();
            assert!(matches!(
                conn.on(Event::Read(req.len()), &site, &mut w),
                Interest::Hold
            ));
            (site, w, conn)
        };
        // Request bytes still unread ahead of the close: a half-close.
        let (site, mut w, mut conn) = held(OnAbandon::Cancel);
        assert!(matches!(
            conn.on(Event::PeerGone { unread: true }, &site, &mut w),
            Interest::Hold
        ));
        assert!(!conn.watches_peer(), "judged once");
        assert_eq!(conn.release(&site, &mut w), Interest::Write);
        assert_eq!(site.stats.snapshot().abandoned, 0);
        // Nothing left to take: the client left; cancel abandons at once.
        let (site, mut w, mut conn) = held(OnAbandon::Cancel);
        let closed = Interest::Close { linger: false };
        assert_eq!(
            conn.on(Event::PeerGone { unread: false }, &site, &mut w),
            closed
        );
        let snap = site.stats.snapshot();
        assert_eq!(
            (snap.abandoned, snap.in_flight, snap.responses),
            (1, 0, [0; 5])
        );
        // Finish keeps the hold to its end, then abandons instead of writing.
        let (site, mut w, mut conn) = held(OnAbandon::Finish);
        assert!(matches!(
            conn.on(Event::PeerGone { unread: false }, &site, &mut w),
            Interest::Hold
        ));
        assert_eq!(site.stats.snapshot().abandoned, 0, "still being served");
        assert_eq!(conn.release(&site, &mut w), closed);
        assert_eq!(site.stats.snapshot().abandoned, 1);
    }

    #[test]
    fn a_close_while_reading_or_writing_is_a_half_close_and_one_during_work_abandons_after_it() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.txt"), "hello").unwrap();
        let req = b"GET /a.txt HTTP/1.1\r\nHost: t\r\n\r\n";
        let site_with = |delay: Option<Duration>, work: Option<Duration>, policy: OnAbandon| {
            let mut config = crate::config::Config::new(dir.path());
            config.delay = delay.map(servelab_dist::Dist::Const);
            config.work = work.map(servelab_dist::Dist::Const);
            config.on_abandon = policy;
            Shared::new(config).unwrap()
        };
        let read = |conn: &mut Conn, site: &Shared, w: &mut Local| {
            conn.read_space()[..req.len()].copy_from_slice(req);
            conn.on(Event::Read(req.len()), site, w)
        };
        let peer = "127.0.0.1:1".parse().unwrap();
        // Told before the bytes are read (an event loop's `RDHUP`): they came
        // before it, so the held response is not watched for, and goes out.
        let site = site_with(Some(Duration::from_secs(60)), None, OnAbandon::Cancel);
        let mut w = site.local();
        let mut conn = Conn::new(peer);
        let gone = Event::PeerGone { unread: false };
        assert_eq!(conn.on(gone, &site, &mut w), Interest::Read);
        assert_eq!(read(&mut conn, &site, &mut w), Interest::Hold);
        assert!(!conn.watches_peer(), "judged when it came");
        assert_eq!(conn.release(&site, &mut w), Interest::Write);
        // While a response is being written: not judged, it goes on.
        let site = site_with(None, None, OnAbandon::Cancel);
        let mut w = site.local();
        let mut conn = Conn::new(peer);
        assert_eq!(read(&mut conn, &site, &mut w), Interest::Write);
        assert!(!conn.watches_peer());
        assert_eq!(conn.on(gone, &site, &mut w), Interest::Write);
        assert_eq!(site.stats.snapshot().abandoned, 0);
        // During `--work` with `finish`: the work runs out, then what is owed
        // is abandoned; with `cancel`, at once.
        let work = Some(Duration::from_secs(1));
        let site = site_with(None, work, OnAbandon::Finish);
        let mut w = site.local();
        let mut conn = Conn::new(peer);
        assert_eq!(read(&mut conn, &site, &mut w), Interest::Work);
        assert_eq!(conn.work(&site, &mut w), Duration::from_secs(1));
        assert!(conn.watches_peer() && !conn.cancels_work_when_peer_goes(&site));
        assert_eq!(conn.on(gone, &site, &mut w), Interest::Work);
        assert_eq!(site.stats.snapshot().abandoned, 0, "still being served");
        let closed = Interest::Close { linger: false };
        assert_eq!(conn.on(Event::Worked, &site, &mut w), closed);
        assert_eq!(site.stats.snapshot().abandoned, 1);
        let site = site_with(None, work, OnAbandon::Cancel);
        let mut w = site.local();
        let mut conn = Conn::new(peer);
        assert_eq!(read(&mut conn, &site, &mut w), Interest::Work);
        conn.work(&site, &mut w);
        assert!(conn.cancels_work_when_peer_goes(&site));
        assert_eq!(conn.on(gone, &site, &mut w), closed);
        assert_eq!(site.stats.snapshot().abandoned, 1);
    }

    #[test]
    fn delay_holds_the_response_until_released() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.txt"), "hello").unwrap();
        let mut config = crate::config::Config::new(dir.path());
        config.delay = Some(servelab_dist::Dist::Const(Duration::from_secs(60)));
        let site = Shared::new(config).unwrap();
        let mut w = site.local();
        let mut conn = Conn::new("127.0.0.1:1".parse().unwrap());
        let req = b"GET /a.txt HTTP/1.1\r\nHost: t\r\n\r\n";
        conn.read_space()[..req.len()].copy_from_slice(req);
        let before = Instant::now();
        match conn.on(Event::Read(req.len()), &site, &mut w) {
            Interest::Hold => {
                assert!(conn.held_until() >= before + Duration::from_secs(60));
                assert_eq!(conn.deadline(&site), Some(conn.held_until()));
            }
            other => panic!("expected a hold, got {other:?}"),
        }
        assert_eq!(conn.release(&site, &mut w), Interest::Write);
        assert!(matches!(conn.next_write(), Some(Chunk::Bytes(b)) if b.ends_with(b"hello")));
    }
}
