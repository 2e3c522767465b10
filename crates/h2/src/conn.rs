//! An HTTP/2 connection, server or client: bytes in ([`Connection::feed`]), events out
//! ([`Connection::poll_event`]), answers or requests in ([`ServerConn::send_headers`],
//! [`ClientConn::send_request`], [`Connection::send_data`]), bytes out
//! ([`Connection::pending_output`]).
//!
//! It owns no socket and no clock. The driver reads whatever arrived and feeds it, handles
//! each event, answers when it can, writes the output, and closes when
//! [`Connection::state`] says [`State::Closed`] and the output is flushed. Every decision
//! about the protocol (which error, which frame in answer, when a stream ends, when the
//! connection is done) is made here, so every engine serves byte-identical HTTP/2.
//!
//! The two roles share everything but a few rules, chosen by the type parameter: who sends
//! the preface, which stream ids the peer may open, and whether a header block is a request
//! or a response. [`ServerConn`] and [`ClientConn`] name the two.
//!
//! What the driver times, because the connection has no clock: the window of the flood
//! counts ([`Connection::tick`]), a peer that never acknowledges our SETTINGS
//! ([`Connection::settings_ack_pending`]), a response stalled on a flow-control window the
//! peer keeps at zero ([`Connection::stalled`]), and idleness. For each it calls
//! [`Connection::goaway`] with the code the RFC names.
//!
//! # Layout
//! - `recv`: frames from the peer, by type, with the stream-state rules (§5.1).
//! - `send`: data, resets and GOAWAY, with flow control (§5.2); header blocks.
//! - `server`: request heads in, response heads out; `client`: the reverse.
//! - `guard`: the flood counts.

mod client;
mod guard;
mod recv;
mod send;
mod server;

use std::collections::{HashMap, VecDeque};
use std::hash::{BuildHasherDefault, Hasher};
use std::marker::PhantomData;

use crate::error::{ErrorCode, H2Error};
use crate::event::Event;
use crate::frame::{Frame, PREFACE, Parse, SettingsPayload, decode_frame, encode_frame};
use crate::hpack::{Decoder, Encoder};
use crate::limits::Limits;
use crate::settings::{DEFAULT_HEADER_TABLE_SIZE, DEFAULT_WINDOW, Settings};
use crate::stream::Stream;
use crate::stream_id::StreamId;

pub use client::RequestHead;
use guard::Guard;
pub use send::SendError;

/// Which side of the connection this is: [`Server`] or [`Client`].
pub trait Role: private::Sealed + std::fmt::Debug {
    /// True for the client.
    const CLIENT: bool;
}

/// The server role: takes requests on the streams the client opens.
#[derive(Debug)]
pub struct Server;

/// The client role: opens streams (odd ids) with requests, takes responses.
#[derive(Debug)]
pub struct Client;

impl Role for Server {
    const CLIENT: bool = false;
}

impl Role for Client {
    const CLIENT: bool = true;
}

mod private {
    pub trait Sealed {}
    impl Sealed for super::Server {}
    impl Sealed for super::Client {}
}

/// A server connection.
pub type ServerConn = Connection<Server>;

/// A client connection.
pub type ClientConn = Connection<Client>;

/// Where the connection is, as the driver needs to know it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum State {
    /// Waiting for the peer's preface (server) or first SETTINGS.
    Handshake,
    /// Serving.
    Open,
    /// GOAWAY sent or received: no new streams; the open ones finish.
    Draining,
    /// Done: flush [`Connection::pending_output`] (it may hold a GOAWAY), then close.
    Closed,
}

/// Internal phase; `Handshake` is split in two.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// This many octets of the preface matched so far.
    Preface(usize),
    /// The preface is in; the next frame must be SETTINGS.
    FirstSettings,
    Open,
    Draining,
    Closed,
}

/// A header block being collected from HEADERS and CONTINUATION frames.
#[derive(Debug)]
struct HeaderBlock {
    stream: StreamId,
    buf: Vec<u8>,
    end_stream: bool,
    continuations: u32,
    /// The HEADERS made the stream depend on itself: a stream error once the block is
    /// decoded.
    self_dependent: bool,
}

/// The hash of a stream id for the map of open streams: one multiplication
/// (Fibonacci hashing), not SipHash. SipHash's hashing of the id was about 6% of
/// the instructions of an HTTP/2 request to `serve` (`bench/callgrind.sh --h2`,
/// a few lookups per request). The ids come from the peer, but the map holds at
/// most [`Limits::max_concurrent_streams`] entries, so even ids chosen to collide
/// cost a probe over that many at worst, not a flood.
#[derive(Debug, Default, Clone, Copy)]
struct StreamIdHasher(u64);

impl Hasher for StreamIdHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        // Only `write_u32` is used (the key is a `u32`); this keeps any other key hashable.
        for &b in bytes {
            self.write_u32(u32::from(b) ^ (self.0 as u32));
        }
    }

    fn write_u32(&mut self, id: u32) {
        // The golden ratio's 64-bit multiplier spreads consecutive odd ids over the high
        // bits, which hashbrown's control bytes take.
        self.0 = u64::from(id).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
}

/// One connection in role `R`. See the module docs.
#[derive(Debug)]
pub struct Connection<R: Role> {
    limits: Limits,
    phase: Phase,
    /// Our settings, as advertised.
    ours: Settings,
    /// The peer's settings, as applied.
    peer: Settings,
    /// Our SETTINGS frames not yet acknowledged.
    unacked_settings: u32,
    decoder: Decoder,
    encoder: Encoder,
    streams: HashMap<u32, Stream, BuildHasherDefault<StreamIdHasher>>,
    /// The highest stream id the peer opened (server): ids above are idle, ids at or below
    /// without an entry are closed. Stays 0 for a client (servers open none).
    last_peer_stream: StreamId,
    /// The next stream id we open (client: odd, from 1). Ids from it on are idle.
    next_stream: u32,
    /// Streams we reset recently: frames the peer sent before it saw the reset are ignored
    /// (§5.1, closed). Bounded by the concurrency limit.
    recently_reset: VecDeque<StreamId>,
    /// The last stream id of the GOAWAY we sent: streams above it are not served.
    goaway_last: Option<StreamId>,
    block: Option<HeaderBlock>,
    conn_send_window: i64,
    conn_recv_window: i64,
    conn_recv_unacked: u32,
    guard: Guard,
    /// Control frames queued since the output was last empty.
    control_backlog: u32,
    /// A partial frame carried to the next `feed`.
    inbuf: Vec<u8>,
    /// The header block being encoded, kept between heads so that a response does not
    /// allocate one.
    head_buf: Vec<u8>,
    out: Vec<u8>,
    events: VecDeque<Event>,
    /// Requests the driver gave back ([`ServerConn::recycle`]), whose buffers the next
    /// requests reuse.
    spare_requests: Vec<crate::request::Request>,
    /// Responses and bodies the driver gave back ([`ClientConn::recycle`]).
    spare: client::Spare,
    role: PhantomData<R>,
}

impl Connection<Server> {
    /// A connection that has just been accepted (after ALPN chose `h2`, or for prior
    /// knowledge). Our SETTINGS are already in the output: the server preface may be sent
    /// before the client's arrives (RFC 9113 §3.4).
    pub fn new(limits: Limits) -> Self {
        Connection::start(limits, Phase::Preface(0), &[])
    }
}

impl Connection<Client> {
    /// A connection that has just been opened (after ALPN chose `h2`, or for prior
    /// knowledge). The preface and our SETTINGS are already in the output; requests may
    /// follow at once, before the server's SETTINGS arrive (RFC 9113 §3.4).
    pub fn new(limits: Limits) -> Self {
        Connection::start(limits, Phase::FirstSettings, PREFACE)
    }
}

impl<R: Role> Connection<R> {
    fn start(limits: Limits, phase: Phase, preface: &[u8]) -> Self {
        let limits = limits.normalized();
        let ours = Settings {
            header_table_size: limits.header_table_size,
            enable_push: false,
            max_concurrent_streams: Some(limits.max_concurrent_streams),
            initial_window_size: limits.initial_window_size,
            max_frame_size: limits.max_frame_size,
            max_header_list_size: Some(limits.max_header_list_size),
        };
        let mut c = Connection {
            limits,
            phase,
            ours,
            peer: Settings::default(),
            unacked_settings: 1,
            // Until the peer acknowledges our SETTINGS, its table may be the initial 4,096
            // octets whatever we advertised (§6.5.3); a larger table of ours is allowed at
            // once (it only loosens).
            decoder: Decoder::new(
                limits.header_table_size.max(DEFAULT_HEADER_TABLE_SIZE) as usize,
                limits.max_header_list_size as usize,
            ),
            encoder: Encoder::new(),
            streams: HashMap::default(),
            last_peer_stream: StreamId(0),
            next_stream: 1,
            recently_reset: VecDeque::new(),
            goaway_last: None,
            block: None,
            conn_send_window: i64::from(DEFAULT_WINDOW),
            conn_recv_window: i64::from(DEFAULT_WINDOW),
            conn_recv_unacked: 0,
            guard: Guard::default(),
            control_backlog: 0,
            inbuf: Vec::new(),
            head_buf: Vec::new(),
            out: Vec::new(),
            events: VecDeque::new(),
            spare_requests: Vec::new(),
            spare: client::Spare::default(),
            role: PhantomData,
        };
        c.out.extend_from_slice(preface);
        let payload = c.ours.to_payload();
        encode_frame(
            &mut c.out,
            &Frame::Settings {
                ack: false,
                params: SettingsPayload(&payload),
            },
        );
        c
    }

    /// Takes bytes read from the peer (any amount, split anywhere). Frames are handled as
    /// they complete; a partial frame is kept (at most 9 + SETTINGS_MAX_FRAME_SIZE octets).
    /// Returns the connection error that ended the connection, if one did in these bytes
    /// (the GOAWAY for it is already in the output); stream errors are handled inside (an
    /// [`Event::Reset`] tells the driver). Bytes fed after the end are ignored.
    pub fn feed(&mut self, input: &[u8]) -> Result<(), H2Error> {
        let mut input = input;
        if let Phase::Preface(matched) = self.phase {
            let want = &PREFACE[matched..];
            let n = want.len().min(input.len());
            if input[..n] != want[..n] {
                return Err(self.fail(H2Error::conn(ErrorCode::ProtocolError, "bad preface")));
            }
            input = &input[n..];
            self.phase = if matched + n == PREFACE.len() {
                Phase::FirstSettings
            } else {
                Phase::Preface(matched + n)
            };
        }
        let mut buf = std::mem::take(&mut self.inbuf);
        let result = if buf.is_empty() {
            let (taken, r) = self.frames(input);
            buf.extend_from_slice(&input[taken..]);
            r
        } else {
            buf.extend_from_slice(input);
            let (taken, r) = self.frames(&buf);
            buf.drain(..taken);
            r
        };
        if self.phase == Phase::Closed {
            buf = Vec::new();
        }
        self.inbuf = buf;
        result
    }

    /// Handles the whole frames at the start of `data`; returns the octets taken.
    fn frames(&mut self, data: &[u8]) -> (usize, Result<(), H2Error>) {
        let mut at = 0;
        while !matches!(self.phase, Phase::Closed | Phase::Preface(_)) {
            match decode_frame(&data[at..], self.limits.max_frame_size) {
                Ok(Parse::Incomplete) => break,
                Ok(Parse::Complete((frame, n))) => {
                    at += n;
                    if let Err(e) = self.on_frame(frame) {
                        if let Err(e) = self.error(e) {
                            return (at, Err(e));
                        }
                    }
                }
                Err(e) => {
                    // A stream error from the decoder comes with the whole frame in: skip
                    // it and go on. A connection error ends everything anyway.
                    if matches!(e, H2Error::Stream { .. })
                        && let Some(h) = crate::frame::decode::decode_header(&data[at..])
                    {
                        at = (at + crate::frame::HEADER_LEN + h.len as usize).min(data.len());
                    }
                    if let Err(e) = self.error(e) {
                        return (at, Err(e));
                    }
                }
            }
        }
        (at, Ok(()))
    }

    /// Carries out an error: a stream error resets the stream (and may escalate to a
    /// connection error when they come too often); a connection error ends the connection.
    fn error(&mut self, e: H2Error) -> Result<(), H2Error> {
        match e {
            // RST_STREAM is never sent for an idle stream (§6.4): a stream error there
            // (a bad PRIORITY or WINDOW_UPDATE on a stream never opened) ends the
            // connection instead.
            H2Error::Stream {
                stream,
                code,
                reason,
            } if self.is_idle(stream) => Err(self.fail(H2Error::conn(code, reason))),
            H2Error::Stream { stream, code, .. } => {
                if let Err(e) = self.local_reset(stream, code) {
                    return Err(self.fail(e));
                }
                Ok(())
            }
            H2Error::Connection { .. } => Err(self.fail(e)),
        }
    }

    /// Ends the connection with GOAWAY for a connection error; returns the error.
    fn fail(&mut self, e: H2Error) -> H2Error {
        if let H2Error::Connection { code, reason } = e {
            self.write_goaway(code, reason.as_bytes());
        }
        self.phase = Phase::Closed;
        self.streams.clear();
        self.block = None;
        e
    }

    /// The next event, oldest first. Poll until `None` after each [`Connection::feed`].
    pub fn poll_event(&mut self) -> Option<Event> {
        self.events.pop_front()
    }

    /// Where the connection is.
    pub fn state(&self) -> State {
        match self.phase {
            Phase::Preface(_) | Phase::FirstSettings => State::Handshake,
            Phase::Open => State::Open,
            Phase::Draining => State::Draining,
            Phase::Closed => State::Closed,
        }
    }

    /// Bytes to write to the peer. After writing some, call [`Connection::consume_output`].
    pub fn pending_output(&self) -> &[u8] {
        &self.out
    }

    /// `n` octets of [`Connection::pending_output`] were written.
    pub fn consume_output(&mut self, n: usize) {
        self.out.drain(..n.min(self.out.len()));
        if self.out.is_empty() {
            self.control_backlog = 0;
        }
    }

    /// All pending output, taken at once (for drivers that hand buffers to the kernel).
    pub fn take_output(&mut self) -> Vec<u8> {
        self.control_backlog = 0;
        std::mem::take(&mut self.out)
    }

    /// Ends a counting window (see [`Limits`]): the driver calls it on its timer.
    pub fn tick(&mut self) {
        self.guard.tick();
    }

    /// True while our SETTINGS are not acknowledged: a driver that sees this for too long
    /// (RFC 9113 §6.5.3 leaves how long to us) ends with `goaway(SettingsTimeout)`.
    pub fn settings_ack_pending(&self) -> bool {
        self.unacked_settings > 0
    }

    /// True when some response is held by a flow-control window the peer keeps at zero (or
    /// below): nothing moves until it sends WINDOW_UPDATE. A driver that sees this for too
    /// long (the flow-control slowloris) resets the streams or ends the connection; the
    /// connection itself buffers nothing for them, so the cost of waiting is the driver's
    /// open files.
    pub fn stalled(&self) -> bool {
        self.streams.values().any(|s| s.blocked)
    }

    /// Streams open now (for `/-/status` and the access log).
    pub fn active_streams(&self) -> usize {
        self.streams.len()
    }

    /// The peer's settings as applied (its frame size, window, limits).
    pub fn peer_settings(&self) -> &Settings {
        &self.peer
    }

    /// Queues a control frame sent in answer to the peer, bounded by
    /// [`Limits::max_control_backlog`].
    fn control(&mut self, f: &Frame<'_>) -> Result<(), H2Error> {
        self.control_backlog += 1;
        if self.control_backlog > self.limits.max_control_backlog {
            return Err(H2Error::conn(
                ErrorCode::EnhanceYourCalm,
                "control frames queued while the peer does not read",
            ));
        }
        encode_frame(&mut self.out, f);
        Ok(())
    }

    /// True for a stream id that names no stream yet: one the peer could still open
    /// (server), or one we have not opened (client). Frames other than HEADERS and PRIORITY
    /// on it are a PROTOCOL_ERROR (§5.1).
    fn is_idle(&self, s: StreamId) -> bool {
        if R::CLIENT {
            s.0 >= self.next_stream || !s.is_client_initiated()
        } else {
            s > self.last_peer_stream || !s.is_client_initiated()
        }
    }

    /// Draining ends in Closed when the last stream is gone.
    fn maybe_done(&mut self) {
        if self.phase == Phase::Draining && self.streams.is_empty() && self.block.is_none() {
            self.phase = Phase::Closed;
        }
    }
}

#[cfg(test)]
mod tests {
    use std::hash::BuildHasher;

    use super::*;

    /// Consecutive client stream ids (odd) land in distinct top bits, which
    /// hashbrown's probe groups read: no two of the first thousand collide there.
    #[test]
    fn stream_ids_spread_over_the_high_bits() {
        let h = BuildHasherDefault::<StreamIdHasher>::default();
        let mut tops: Vec<u64> = (0..1000u32).map(|i| h.hash_one(2 * i + 1) >> 48).collect();
        tops.sort_unstable();
        tops.dedup();
        assert_eq!(tops.len(), 1000);
    }
}
