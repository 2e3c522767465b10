//! The server side of an HTTP/2 connection: bytes in ([`ServerConn::feed`]), events out
//! ([`ServerConn::poll_event`]), answers in ([`ServerConn::send_headers`],
//! [`ServerConn::send_data`]), bytes out ([`ServerConn::pending_output`]).
//!
//! It owns no socket and no clock. The driver reads whatever arrived and feeds it, handles
//! each event, answers when it can, writes the output, and closes when [`ServerConn::state`]
//! says [`State::Closed`] and the output is flushed. Every decision about the protocol
//! (which error, which frame in answer, when a stream ends, when the connection is done) is
//! made here, so every engine serves byte-identical HTTP/2.
//!
//! What the driver times, because the connection has no clock: the window of the flood
//! counts ([`ServerConn::tick`]), a peer that never acknowledges our SETTINGS
//! ([`ServerConn::settings_ack_pending`]), a response stalled on a flow-control window the
//! peer keeps at zero ([`ServerConn::stalled`]), and idleness. For each it calls
//! [`ServerConn::goaway`] with the code the RFC names.
//!
//! # Layout
//! - `recv`: frames from the peer, by type, with the stream-state rules (§5.1).
//! - `send`: responses, resets and GOAWAY, with flow control (§5.2).
//! - `guard`: the flood counts.

mod guard;
mod recv;
mod send;

use std::collections::{HashMap, VecDeque};

use crate::error::{ErrorCode, H2Error};
use crate::event::Event;
use crate::frame::{Frame, PREFACE, Parse, SettingsPayload, StreamId, decode_frame, encode_frame};
use crate::hpack::{Decoder, Encoder};
use crate::limits::Limits;
use crate::settings::{DEFAULT_HEADER_TABLE_SIZE, DEFAULT_WINDOW, Settings};
use crate::stream::Stream;

use guard::Guard;
pub use send::SendError;

/// Where the connection is, as the driver needs to know it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum State {
    /// Waiting for the client's preface and first SETTINGS.
    Handshake,
    /// Serving.
    Open,
    /// GOAWAY sent or received: no new streams; the open ones finish.
    Draining,
    /// Done: flush [`ServerConn::pending_output`] (it may hold a GOAWAY), then close.
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

/// One server connection. See the module docs.
#[derive(Debug)]
pub struct ServerConn {
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
    streams: HashMap<u32, Stream>,
    /// The highest stream id the peer opened: ids above are idle, ids at or below without an
    /// entry are closed.
    last_peer_stream: StreamId,
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
    out: Vec<u8>,
    events: VecDeque<Event>,
}

impl ServerConn {
    /// A connection that has just been accepted (after ALPN chose `h2`, or for prior
    /// knowledge). Our SETTINGS are already in the output: the server preface may be sent
    /// before the client's arrives (RFC 9113 §3.4).
    pub fn new(limits: Limits) -> Self {
        let limits = limits.normalized();
        let ours = Settings {
            header_table_size: limits.header_table_size,
            enable_push: false,
            max_concurrent_streams: Some(limits.max_concurrent_streams),
            initial_window_size: limits.initial_window_size,
            max_frame_size: limits.max_frame_size,
            max_header_list_size: Some(limits.max_header_list_size),
        };
        let mut c = ServerConn {
            limits,
            phase: Phase::Preface(0),
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
            streams: HashMap::new(),
            last_peer_stream: StreamId(0),
            recently_reset: VecDeque::new(),
            goaway_last: None,
            block: None,
            conn_send_window: i64::from(DEFAULT_WINDOW),
            conn_recv_window: i64::from(DEFAULT_WINDOW),
            conn_recv_unacked: 0,
            guard: Guard::default(),
            control_backlog: 0,
            inbuf: Vec::new(),
            out: Vec::new(),
            events: VecDeque::new(),
        };
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
            } if stream > self.last_peer_stream => Err(self.fail(H2Error::conn(code, reason))),
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

    /// The next event, oldest first. Poll until `None` after each [`ServerConn::feed`].
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

    /// Bytes to write to the peer. After writing some, call [`ServerConn::consume_output`].
    pub fn pending_output(&self) -> &[u8] {
        &self.out
    }

    /// `n` octets of [`ServerConn::pending_output`] were written.
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

    /// Draining ends in Closed when the last stream is gone.
    fn maybe_done(&mut self) {
        if self.phase == Phase::Draining && self.streams.is_empty() && self.block.is_none() {
            self.phase = Phase::Closed;
        }
    }
}
