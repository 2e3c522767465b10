//! HTTP/2 behind the connection contract: a [`Conn`] becomes HTTP/2 when its
//! first bytes are the client preface (`PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n`),
//! which every HTTP/2 client sends first, after ALPN chose `h2` as with prior
//! knowledge (`--h2c`). From then on the same driver surface carries it
//! ([`Conn::read_space`], which lends the whole buffer since `ServerConn`
//! keeps a partial frame itself, [`Conn::on`], [`Conn::next_write`], [`Conn::interest`],
//! [`Conn::deadline`]): the drivers move bytes and know nothing of frames.
//!
//! The protocol is `servelab-h2`'s [`ServerConn`]; this file maps it onto the
//! server: each request's decoded fields fill the same typed request head the
//! HTTP/1.1 parser fills (`servelab_http::request_from_fields`, by the same
//! rules and with the same errors), and the one handler HTTP/1.1 uses answers
//! it (`handler::respond`, so every static rule, `--auth`, `/-/status`,
//! `--compress`, the precompressed siblings, ranges and preconditions are the
//! same code). The handler writes its typed response head into an [`Answer`]
//! (`conn/h2/answer.rs`) rather than as HTTP/1.1 bytes: its fields are
//! HPACK-encoded into HEADERS as they are, and its body goes out as DATA within
//! both flow-control windows. Writing each request out as an HTTP/1.1 head,
//! parsing it again and reading the response head back was about a quarter of
//! the instructions of a request (`bench/callgrind.sh --h2`). The request is
//! given back to `ServerConn` once answered, whose next request reuses its
//! buffers. A file body is read (`pread`) only as far as the
//! windows allow, one frame ([`FRAME`]) per stream in turn, and only while
//! the output holds less than [`OUT_HIGH`]: memory per connection stays
//! bounded whatever the files' sizes and however many streams are open.
//!
//! Each stream keeps its own [`Ledger`] (one owed response), so a response is
//! counted and logged (as `HTTP/2.0`) when its last byte is written, and one
//! the client reset is logged as 499 with the body bytes that went out.
//!
//! What the connection times (it has a clock through [`Conn::deadline`]; the
//! protocol layer has none): a window held at zero past `--write-timeout`
//! resets the stalled streams (CANCEL); no progress in writing past
//! `--write-timeout` abandons the connection; no request and no response
//! completed for `--keepalive-timeout` (PINGs and SETTINGS do not count) ends
//! it with GOAWAY NO_ERROR; our SETTINGS unacknowledged past `--read-timeout`
//! end it with GOAWAY SETTINGS_TIMEOUT; shutdown sends GOAWAY
//! NO_ERROR at once, the streams already opened are answered, then it closes;
//! the flood counts' window is one second ([`Connection::tick`]).
//!
//! `--work` and `--delay` are drawn per stream as for a request; a hold
//! holds the whole connection's output, as pipelined HTTP/1.1 responses leave
//! together after the longest hold of their batch.
//!
//! Without HTTP/2 for this connection (a plain port without `--h2c`, or an
//! engine that does not carry it) the preface stays HTTP/1.1's to answer:
//! its request line `PRI * HTTP/2.0` gets `505 HTTP Version Not Supported`.
//!
//! [`Connection::tick`]: servelab_h2::Connection::tick

use std::collections::VecDeque;
use std::os::unix::fs::FileExt;
use std::sync::Arc;
use std::time::{Duration, Instant};

use servelab_h2::frame::{PREFACE, Sniff, sniff};
use servelab_h2::{ErrorCode, Event as H2Event, Limits, Request, ServerConn, StreamId};
use servelab_http::{Part, Status, request_from_fields};

use super::ledger::{Ledger, Produced};
use super::{Chunk, Conn, Event, Interest, State};
use crate::runtime::shared::{Local, Shared};
use crate::runtime::stats::Stats;
use crate::site::handler::{self, Authorization};
use crate::site::response::{Body, Persist, Response};

mod answer;

use answer::Answer;

/// Stop producing DATA once this much output waits to be written: with the
/// windows, it bounds a connection's memory (a client may open 100 streams
/// and raise its windows to 2 GiB; it still gets 64 KiB at a time).
const OUT_HIGH: usize = 64 * 1024;
/// At most this much DATA per stream per turn: one default-sized frame, so
/// that streams share the connection in turn rather than one file at a time.
const FRAME: usize = 16 * 1024;
/// Answer no further request while the bodies made in memory and not yet
/// sent (small cached files, listings, `--compress`ed bodies) pass this: a
/// client that opens 100 streams for a large listing and opens no window
/// holds one listing at a time, not 100. (HTTP/1.1's pipelining stops at
/// 64 KiB of output the same way.)
const HELD_MAX: usize = 256 * 1024;
/// The preface's first line, `PRI * HTTP/2.0\r\n`.
const PRI_LINE: usize = 16;
/// The window of the flood counts (`Limits::max_pings` and the rest).
const TICK: Duration = Duration::from_secs(1);

/// The HTTP/2 state of a connection that saw the preface.
#[derive(Debug)]
pub(super) struct H2 {
    conn: ServerConn,
    /// Responses with body left to send, served in turn.
    sending: Vec<Sending>,
    /// Requests not answered yet: waiting for [`Conn::work`] (a connection
    /// that defers its answers to a worker), or for the bodies made in
    /// memory to drain below [`HELD_MAX`].
    waiting: VecDeque<Request>,
    /// Responses whose last byte is in the output, with the output offset
    /// (counted from the connection's start) it ends at.
    done: VecDeque<(u64, Ledger)>,
    /// Cleared ledgers to reuse (their log buffers keep their capacity).
    spare: Vec<Ledger>,
    /// Output bytes written so far.
    written: u64,
    /// Scratch: the handler's answer, a file chunk.
    answer: Answer,
    chunk: Vec<u8>,
    next_tick: Instant,
    /// When a request last came or a response was last completed: the idle
    /// timer counts from here, not from the last byte read, so that a client
    /// that trickles PINGs or SETTINGS still meets `--keepalive-timeout`.
    active: Instant,
    /// The earliest `blocked_since` of the responses being sent.
    stalled_since: Option<Instant>,
    /// GOAWAY NO_ERROR sent for shutdown.
    said_goaway: bool,
    /// The counters, for the open-connection gauge when this ends.
    stats: Arc<Stats>,
}

impl Drop for H2 {
    fn drop(&mut self) {
        self.stats.h2_conn(false);
    }
}

/// A response whose body is still going out.
#[derive(Debug)]
struct Sending {
    stream: StreamId,
    /// Body bytes the handler wrote behind the head (a small file, a page),
    /// from `at` on still to send.
    inline: Vec<u8>,
    at: usize,
    body: Body,
    ledger: Ledger,
    /// Since when its windows have let nothing through (the client keeps
    /// them at zero, or other streams took the connection's window).
    blocked_since: Option<Instant>,
}

impl H2 {
    /// Bytes of bodies made in memory still to send.
    fn held(&self) -> usize {
        self.sending.iter().map(|s| s.inline.len() - s.at).sum()
    }

    /// A request waits and may be answered now.
    fn can_answer(&self) -> bool {
        !self.waiting.is_empty() && self.held() < HELD_MAX
    }
}

// The entry points from `conn.rs` are `inline(never)`: each has one caller
// there, so LLVM would inline it into HTTP/1.1's hot functions (`on`,
// `interest`, `deadline`), whose frames and register use then grow for every
// HTTP/1.1 request. HTTP/2 pays a call instead.
impl Conn {
    /// The first bytes of a connection (`n` more just read behind `end`):
    /// the HTTP/2 preface makes it an HTTP/2 connection (when `site.http2`
    /// allows), and so does `alpn_h2` (ALPN chose `h2`) whatever they are.
    /// `None`: HTTP/1.1 goes on as before; `Some`: the interest now (more
    /// bytes, when what came is a prefix of the preface).
    #[inline(never)]
    pub(super) fn sniff_h2(
        &mut self,
        n: usize,
        alpn_h2: bool,
        site: &Shared,
        w: &mut Local,
    ) -> Option<Interest> {
        let seen = self.end + n;
        // Past `PRI * HTTP/2.0\r\n` this is an HTTP/2 client (no HTTP/1.1
        // request names that version): a preface broken after that point is
        // HTTP/2's to refuse (GOAWAY PROTOCOL_ERROR), not a 505.
        let started = seen >= PRI_LINE && self.buf[..PRI_LINE] == PREFACE[..PRI_LINE];
        match sniff(&self.buf[..seen]) {
            Sniff::Http1 if !started && !alpn_h2 => None,
            Sniff::NeedMore => {
                self.end = seen;
                Some(Interest::Read)
            }
            Sniff::Http1 | Sniff::Http2 => {
                let now = Instant::now();
                let mut h = Box::new(H2 {
                    conn: ServerConn::new(Limits::default()),
                    sending: Vec::new(),
                    waiting: VecDeque::new(),
                    done: VecDeque::new(),
                    spare: Vec::new(),
                    written: 0,
                    answer: Answer::default(),
                    chunk: Vec::new(),
                    next_tick: now + TICK,
                    active: now,
                    stalled_since: None,
                    said_goaway: false,
                    stats: Arc::clone(&site.stats),
                });
                site.stats.h2_conn(true);
                let _ = h.conn.feed(&self.buf[..seen]);
                self.start = 0;
                self.end = 0;
                self.state = State::Http2;
                self.progress_at = now;
                self.run(&mut h, site, w);
                self.h2 = Some(h);
                Some(self.h2_interest())
            }
        }
    }

    /// [`Conn::on`] for an HTTP/2 connection.
    #[inline(never)]
    pub(super) fn h2_on(&mut self, event: Event, site: &Shared, w: &mut Local) -> Interest {
        let Some(mut h) = self.h2.take() else {
            return self.interest();
        };
        let before = self.h2_interest_of(&h);
        let now = Instant::now();
        match event {
            Event::Read(0) | Event::ReadFailed | Event::WriteFailed | Event::Forced => {
                self.h2_close(&mut h, site, w);
            }
            Event::Read(n) => {
                // A connection error queues its GOAWAY: the state says Closed.
                let _ = h.conn.feed(&self.buf[..n]);
            }
            Event::Wrote(n) => {
                w.tally.sent(n as u64);
                h.conn.consume_output(n);
                h.written += n as u64;
                if n > 0 {
                    self.progress_at = now;
                }
                self.settle(&mut h, site, w);
            }
            Event::Deadline => self.h2_deadline_reached(&mut h, now, site, w),
            Event::Worked => self.service.worked(),
            // Not watched (`watches_peer` is false): the next read says it.
            Event::PeerGone { .. } => {}
        }
        if !matches!(self.state, State::Closed { .. }) {
            self.run(&mut h, site, w);
        }
        let next = self.h2_interest_of(&h);
        if next == Interest::Write && before != Interest::Write {
            self.progress_at = now;
        }
        self.h2 = Some(h);
        next
    }

    /// What to write: the frames `ServerConn` queued.
    #[inline(never)]
    pub(super) fn h2_next_write(&self) -> Option<Chunk<'_>> {
        let out = self.h2.as_ref()?.conn.pending_output();
        (!out.is_empty()).then_some(Chunk::Bytes(out))
    }

    /// [`Conn::interest`] for an HTTP/2 connection.
    #[inline(never)]
    pub(super) fn h2_interest(&self) -> Interest {
        match &self.h2 {
            Some(h) => self.h2_interest_of(h),
            None => Interest::Close { linger: false },
        }
    }

    fn h2_interest_of(&self, h: &H2) -> Interest {
        if let State::Closed { linger } = self.state {
            return Interest::Close { linger };
        }
        if !self.service.work().is_zero() || h.can_answer() {
            Interest::Work
        } else if self.service.hold().is_some() {
            Interest::Hold
        } else if !h.conn.pending_output().is_empty() {
            Interest::Write
        } else if h.conn.state() == servelab_h2::State::Closed {
            Interest::Close { linger: false }
        } else {
            Interest::Read
        }
    }

    /// True when nothing is in flight: no stream served, nothing to write.
    /// (Shutdown then looks at [`Conn::deadline`] at once.) Never inlined,
    /// so that [`Conn::is_idle`] stays small enough to be inlined into
    /// HTTP/1.1's path (`detach`, `wait`).
    #[inline(never)]
    pub(super) fn h2_is_idle(&self) -> bool {
        self.h2.as_ref().is_some_and(|h| {
            h.sending.is_empty()
                && h.waiting.is_empty()
                && h.done.is_empty()
                && h.conn.pending_output().is_empty()
                && h.conn.active_streams() == 0
        })
    }

    /// [`Conn::deadline`] for an HTTP/2 connection.
    #[inline(never)]
    pub(super) fn h2_deadline(&self, site: &Shared) -> Option<Instant> {
        let h = self.h2.as_ref()?;
        match self.h2_interest_of(h) {
            Interest::Read => Some(self.h2_read_deadline(h, site)),
            Interest::Write => Some(self.progress_at + site.config.write_timeout),
            Interest::Hold => Some(self.held_until()),
            Interest::Work | Interest::Close { .. } => None,
        }
    }

    fn h2_read_deadline(&self, h: &H2, site: &Shared) -> Instant {
        if site.shutdown.is_requested() && !h.said_goaway {
            return Instant::now();
        }
        if let Some(since) = h.stalled_since {
            return since + site.config.write_timeout;
        }
        if h.conn.settings_ack_pending() || h.conn.state() == servelab_h2::State::Handshake {
            return h.active + site.config.read_timeout;
        }
        h.active + site.config.keepalive_timeout
    }

    fn h2_deadline_reached(&mut self, h: &mut H2, now: Instant, site: &Shared, w: &mut Local) {
        match self.h2_interest_of(h) {
            Interest::Read if now >= self.h2_read_deadline(h, site) => {
                if site.shutdown.is_requested() && !h.said_goaway {
                    // `run` sends the GOAWAY.
                } else if h.stalled_since.is_some() {
                    // A window held at zero (flow-control slowloris): give
                    // up the streams that moved nothing for the write
                    // timeout, keep the connection.
                    let limit = now.checked_sub(site.config.write_timeout);
                    let mut i = 0;
                    while i < h.sending.len() {
                        let since = h.sending[i].blocked_since;
                        if since.is_some_and(|t| limit.is_some_and(|l| t <= l)) {
                            let s = h.sending.swap_remove(i);
                            h.conn.reset(s.stream, ErrorCode::Cancel);
                            retire(h, s.ledger, true, site, w);
                        } else {
                            i += 1;
                        }
                    }
                    h.stalled_since = h.sending.iter().filter_map(|s| s.blocked_since).min();
                    // The idle timer counts from the streams' end, not from
                    // their requests.
                    h.active = now;
                } else if h.conn.settings_ack_pending() {
                    h.conn.goaway(ErrorCode::SettingsTimeout);
                } else {
                    // Idle past the keep-alive timeout (or silent after the
                    // preface past the read timeout).
                    h.conn.goaway(ErrorCode::NoError);
                }
            }
            Interest::Write if now >= self.progress_at + site.config.write_timeout => {
                // The client stopped reading.
                self.h2_close(h, site, w);
            }
            Interest::Hold if now >= self.held_until() => self.service.release(),
            _ => {}
        }
    }

    /// The client is gone (or the connection must end now): what is owed is
    /// abandoned (499), and the socket closes.
    fn h2_close(&mut self, h: &mut H2, site: &Shared, w: &mut Local) {
        self.settle(h, site, w);
        for s in std::mem::take(&mut h.sending) {
            retire(h, s.ledger, true, site, w);
        }
        while let Some((_, ledger)) = h.done.pop_front() {
            retire(h, ledger, true, site, w);
        }
        h.waiting.clear();
        self.service.clear();
        self.state = State::Closed { linger: false };
    }

    /// [`Conn::work`] for an HTTP/2 connection: answers the requests that
    /// wait for it.
    #[inline(never)]
    pub(super) fn h2_work(&mut self, site: &Shared, w: &mut Local) {
        let Some(mut h) = self.h2.take() else {
            return;
        };
        self.answer_waiting(&mut h, site, w);
        self.h2 = Some(h);
    }

    /// Answers the requests that wait, in order, while the bodies held in
    /// memory stay below [`HELD_MAX`], and sends what the windows allow.
    fn answer_waiting(&mut self, h: &mut H2, site: &Shared, w: &mut Local) {
        loop {
            self.pump(h, site, w);
            if !h.can_answer() {
                return;
            }
            let Some(req) = h.waiting.pop_front() else {
                return;
            };
            self.answer_stream(h, req, None, site, w);
        }
    }

    /// [`Conn::refuse`] for an HTTP/2 connection: the waiting requests get
    /// 503 (with `Retry-After`); the connection goes on.
    #[inline(never)]
    pub(super) fn h2_refuse(&mut self, site: &Shared, w: &mut Local) -> Interest {
        if let Some(mut h) = self.h2.take() {
            while let Some(req) = h.waiting.pop_front() {
                let status = Some(Status::SERVICE_UNAVAILABLE);
                self.answer_stream(&mut h, req, status, site, w);
            }
            self.pump(&mut h, site, w);
            self.h2 = Some(h);
        }
        self.progress_at = Instant::now();
        self.h2_interest()
    }

    /// After every event: the protocol's events, shutdown, the flood window,
    /// and as much DATA as the windows and [`OUT_HIGH`] allow.
    fn run(&mut self, h: &mut H2, site: &Shared, w: &mut Local) {
        let now = Instant::now();
        if now >= h.next_tick {
            h.conn.tick();
            h.next_tick = now + TICK;
        }
        while let Some(event) = h.conn.poll_event() {
            match event {
                H2Event::Request(req) => h.waiting.push_back(req),
                H2Event::Reset { stream, .. } => {
                    h.waiting.retain(|r| r.stream != stream);
                    if let Some(i) = h.sending.iter().position(|s| s.stream == stream) {
                        let s = h.sending.swap_remove(i);
                        retire(h, s.ledger, true, site, w);
                    }
                }
                // Request bodies are dropped (no method we serve takes one);
                // `ServerConn` gives their credit back. Window updates and a
                // client's GOAWAY need nothing here: `pump` looks at the
                // windows, and the streams already opened are answered.
                H2Event::Data { .. }
                | H2Event::WindowOpened { .. }
                | H2Event::GoAway { .. }
                | H2Event::Response(_) => {}
            }
        }
        if site.shutdown.is_requested() && !h.said_goaway {
            h.said_goaway = true;
            h.conn.shutdown();
        }
        if self.defer {
            self.pump(h, site, w);
        } else {
            self.answer_waiting(h, site, w);
        }
        if h.conn.state() == servelab_h2::State::Closed {
            // A connection error (or the end of a drain): what is still
            // being sent never completes.
            for s in std::mem::take(&mut h.sending) {
                retire(h, s.ledger, true, site, w);
            }
            h.waiting.clear();
        }
    }

    /// Answers one request on its stream: its typed head for the handler (or
    /// `status` when given: a refusal).
    fn answer_stream(
        &mut self,
        h: &mut H2,
        req: Request,
        status: Option<Status>,
        site: &Shared,
        w: &mut Local,
    ) {
        if site
            .config
            .max_requests_per_conn
            .is_some_and(|max| self.requests >= max)
        {
            // Came in the same read as the last one allowed: refused, which
            // tells the client it was not processed (safe to retry).
            h.conn.reset(req.stream, ErrorCode::RefusedStream);
            return;
        }
        let started = Instant::now();
        h.active = started;
        w.clock.tick_at(started);
        w.tally.request_started();
        site.stats.h2_stream(true);
        self.service.draw(w);
        self.requests += 1;
        if site
            .config
            .max_requests_per_conn
            .is_some_and(|max| self.requests >= max)
        {
            // HTTP/1.1's `Connection: close` on the last request: GOAWAY
            // with this stream as the last, the open ones answered.
            h.said_goaway = true;
            h.conn.shutdown();
        }
        let persist = Persist {
            keep_alive: true,
            http10: false,
        };
        let mut ledger = h.spare.pop().unwrap_or_default();
        let ip = self.peer.ip();
        let stream = req.stream;
        // The credentials are looked for only when `--auth` reads them.
        let authorization = match &site.auth {
            Some(_) => Authorization::Value(one_value(&req, "authorization")),
            None => Authorization::Value(None),
        };
        let parsed = request_from_fields(
            req.method(),
            // CONNECT has no :path; an empty target is the parser's 400.
            req.path().unwrap_or(""),
            req.authority(),
            req.headers(),
            req.control_in_values(),
            &site.config.limits,
        );
        h.answer.clear();
        let Response { status, body, .. } = match (&parsed, status) {
            (Ok(r), None) => {
                let resp = handler::respond(r, authorization, site, w, persist, &mut h.answer);
                ledger.owe(Some(r), true, ip, produced(&resp, started), site, w);
                resp
            }
            (parsed, refusal) => {
                let status = refusal.unwrap_or_else(|| match parsed {
                    Err(e) => e.status(),
                    Ok(_) => Status::BAD_REQUEST,
                });
                let head_only = req.method() == "HEAD";
                let resp = handler::error(status, w, persist, head_only, &mut h.answer);
                let r = parsed.as_ref().ok();
                ledger.owe(r, true, ip, produced(&resp, started), site, w);
                resp
            }
        };
        h.conn.recycle(req);
        debug_assert_eq!(h.answer.status, status.code());
        let end = h.answer.body.is_empty() && matches!(body, Body::Empty);
        let fields = h.answer.fields();
        if h.conn
            .send_head(stream, h.answer.status, fields, end)
            .is_err()
        {
            // Reset meanwhile: nobody waits for it.
            retire(h, ledger, true, site, w);
            return;
        }
        let mut s = Sending {
            stream,
            inline: Vec::new(),
            at: 0,
            body,
            ledger,
            blocked_since: None,
        };
        if end {
            finish(h, s.ledger);
            return;
        }
        // The small body behind the head goes out at once when the windows
        // and the output allow; only what does not is kept.
        let mut taken = 0;
        if h.conn.pending_output().len() < OUT_HIGH {
            let last = matches!(s.body, Body::Empty);
            let inline = &h.answer.body;
            taken = h.conn.send_data(s.stream, inline, last).unwrap_or(0);
            s.ledger.sent(taken as u64);
            if last && taken == inline.len() {
                finish(h, s.ledger);
                return;
            }
        }
        s.inline.extend_from_slice(&h.answer.body[taken..]);
        h.sending.push(s);
    }

    /// Sends DATA from the responses in turn, a frame each, while the
    /// windows allow and the output is below [`OUT_HIGH`].
    fn pump(&mut self, h: &mut H2, site: &Shared, w: &mut Local) {
        let mut now = None;
        loop {
            let mut moved = false;
            let mut i = 0;
            while i < h.sending.len() && h.conn.pending_output().len() < OUT_HIGH {
                let cap = h.conn.send_capacity(h.sending[i].stream).min(FRAME);
                if cap == 0 {
                    let t = *now.get_or_insert_with(Instant::now);
                    h.sending[i].blocked_since.get_or_insert(t);
                    i += 1;
                    continue;
                }
                h.sending[i].blocked_since = None;
                match send_some(h, i, cap) {
                    Step::Sent => {
                        moved = true;
                        i += 1;
                    }
                    Step::Done => {
                        moved = true;
                        let s = h.sending.swap_remove(i);
                        finish(h, s.ledger);
                    }
                    Step::Failed => {
                        let s = h.sending.swap_remove(i);
                        h.conn.reset(s.stream, ErrorCode::InternalError);
                        retire(h, s.ledger, true, site, w);
                    }
                }
            }
            if !moved || h.conn.pending_output().len() >= OUT_HIGH {
                break;
            }
        }
        h.stalled_since = h.sending.iter().filter_map(|s| s.blocked_since).min();
    }

    /// Counts and logs the responses whose last byte is now written. The
    /// clock is read once for all of them (they were written by one call).
    fn settle(&mut self, h: &mut H2, site: &Shared, w: &mut Local) {
        let mut settled = false;
        while h.done.front().is_some_and(|(end, _)| *end <= h.written) {
            let (_, ledger) = h.done.pop_front().expect("just looked");
            retire(h, ledger, false, site, w);
            settled = true;
        }
        if settled {
            h.active = Instant::now();
        }
    }
}

/// What one turn of a stream did.
enum Step {
    Sent,
    Done,
    /// The file ended early (truncated while being sent) or could not be read.
    Failed,
}

/// Sends up to `cap` bytes of the response at `i`.
fn send_some(h: &mut H2, i: usize, cap: usize) -> Step {
    let s = &mut h.sending[i];
    if s.at == s.inline.len() {
        next_part(s);
    }
    let (bytes, from_file): (&[u8], bool) = if s.at < s.inline.len() {
        let n = cap.min(s.inline.len() - s.at);
        (&s.inline[s.at..s.at + n], false)
    } else {
        let Some((file, offset, remaining)) = s.body.file_range() else {
            // Nothing left: end the stream with an empty DATA.
            return match h.conn.send_data(s.stream, &[], true) {
                Ok(_) => Step::Done,
                Err(_) => Step::Failed,
            };
        };
        let n = (remaining.min(cap as u64)) as usize;
        h.chunk.resize(n, 0);
        match file.read_at(&mut h.chunk[..n], offset) {
            Ok(got) if got > 0 => (&h.chunk[..got], true),
            _ => return Step::Failed,
        }
    };
    let len = bytes.len();
    let last = !more_after(s, len, from_file);
    let Ok(taken) = h.conn.send_data(s.stream, bytes, last) else {
        return Step::Failed;
    };
    s.ledger.sent(taken as u64);
    if from_file {
        advance_file(&mut s.body, taken as u64);
    } else {
        s.at += taken;
    }
    if last && taken == len {
        Step::Done
    } else {
        Step::Sent
    }
}

/// Is there body left after `len` more bytes from the current source?
fn more_after(s: &Sending, len: usize, from_file: bool) -> bool {
    if !from_file {
        return s.at + len < s.inline.len() || !matches!(s.body, Body::Empty);
    }
    match &s.body {
        Body::File { remaining, .. } => *remaining > len as u64,
        Body::Parts {
            parts,
            current: Some((_, remaining)),
            ..
        } => *remaining > len as u64 || !parts.is_empty(),
        _ => false,
    }
}

/// `n` bytes of the current file range went out.
fn advance_file(body: &mut Body, n: u64) {
    match body {
        Body::File {
            offset, remaining, ..
        } => {
            *offset += n;
            *remaining -= n.min(*remaining);
            if *remaining == 0 {
                *body = Body::Empty;
            }
        }
        Body::Parts { current, .. } => {
            if let Some((offset, remaining)) = current {
                *offset += n;
                *remaining -= n.min(*remaining);
                if *remaining == 0 {
                    *current = None;
                }
            }
        }
        Body::Empty => {}
    }
}

/// In a multipart body with nothing in flight, takes the next part: literal
/// bytes become the inline bytes, a file range the current one.
fn next_part(s: &mut Sending) {
    let Body::Parts { parts, current, .. } = &mut s.body else {
        return;
    };
    if current.is_some() {
        return;
    }
    match parts.pop_front() {
        None => s.body = Body::Empty,
        Some(Part::Bytes(bytes)) => {
            s.inline = bytes;
            s.at = 0;
        }
        Some(Part::File(range)) => *current = Some((range.start, range.len())),
    }
    if let Body::Parts { parts, current, .. } = &s.body
        && parts.is_empty()
        && current.is_none()
    {
        s.body = Body::Empty;
    }
}

/// The response's last byte is queued: it settles once written.
fn finish(h: &mut H2, ledger: Ledger) {
    let end = h.written + h.conn.pending_output().len() as u64;
    h.done.push_back((end, ledger));
}

/// Counts and logs one stream's response (as abandoned, 499, when
/// `abandoned`), and keeps its ledger for the next stream.
fn retire(h: &mut H2, mut ledger: Ledger, abandoned: bool, site: &Shared, w: &mut Local) {
    if ledger.is_empty() {
        h.spare.push(ledger);
        return;
    }
    if abandoned {
        ledger.abandon(site, w);
    } else {
        ledger.settle(site, w);
    }
    site.stats.h2_stream(false);
    h.spare.push(ledger);
}

fn produced(resp: &Response, started: Instant) -> Produced {
    Produced {
        status: resp.status,
        // Only DATA is counted as sent on a stream (`Ledger::sent`), so the
        // response's wire size is its body.
        wire: resp.body_len,
        body_len: resp.body_len,
        started,
    }
}

/// The one value of field `name` in `req`: `None` when it is missing or
/// repeated (as HTTP/1.1's `--auth` has it).
fn one_value<'r>(req: &'r Request, name: &str) -> Option<&'r [u8]> {
    let mut values = req.headers().filter(|(n, _)| *n == name);
    match (values.next(), values.next()) {
        (Some((_, v)), None) => Some(v),
        _ => None,
    }
}
