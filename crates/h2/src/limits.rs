//! Every bound a connection enforces, in one place, with why each default is what it
//! is.
//!
//! Sizes and counts are the connection's; time is the driver's. A count "per window" is
//! reset by [`crate::ServerConn::tick`], which the driver calls on its own timer (once a
//! second is the intended use); a driver that never ticks makes each window the whole
//! connection, which is stricter, never looser.

use crate::frame::{MAX_MAX_FRAME_SIZE, MIN_MAX_FRAME_SIZE};
use crate::settings::{DEFAULT_HEADER_TABLE_SIZE, DEFAULT_WINDOW};

/// The limits of one connection, server or client (a client meets the same floods from a
/// hostile server). [`Limits::default`] is what `serve` uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// SETTINGS_MAX_CONCURRENT_STREAMS: a HEADERS past it is refused with RST_STREAM
    /// REFUSED_STREAM (safe for the client to retry). 100 is the RFC's recommended minimum
    /// (§6.5.2) and nginx's default; each stream costs the driver a file and a buffer.
    pub max_concurrent_streams: u32,
    /// SETTINGS_INITIAL_WINDOW_SIZE for request bodies. Kept at the RFC's 65,535: a static
    /// server reads no bodies worth a larger window. Values below it are raised to it
    /// (a smaller window would shrink streams already open before the peer's ACK).
    pub initial_window_size: u32,
    /// SETTINGS_MAX_FRAME_SIZE: the largest payload we accept; a frame header announcing more
    /// is a FRAME_SIZE_ERROR before its payload is read. Also bounds the partial frame the
    /// connection buffers (this plus 9 octets).
    pub max_frame_size: u32,
    /// SETTINGS_HEADER_TABLE_SIZE: the HPACK dynamic table the peer may make us keep. 4,096
    /// is the RFC's initial value; larger costs memory per connection for little gain.
    pub header_table_size: u32,
    /// SETTINGS_MAX_HEADER_LIST_SIZE: a decoded header list beyond it (RFC 9113 §6.5.2's
    /// measure, 32 octets per field included) is answered 431 on its stream. 16 KiB, the same
    /// as HTTP/1.1's `max_head` in servelab-http, so a request fits in one protocol iff it
    /// fits in the other.
    pub max_header_list_size: u32,
    /// The encoded header block (HEADERS + CONTINUATIONs joined) we buffer before decoding
    /// it. Past it: GOAWAY ENHANCE_YOUR_CALM (the CONTINUATION flood of 2024). Twice the list
    /// size, because a Huffman-coded string of rare octets is longer than its decoding.
    pub max_header_block: usize,
    /// CONTINUATION frames in one header block. A client needs one or two for the largest
    /// list we accept at the smallest frame size; a thousand tiny ones are a flood whose
    /// per-frame cost the size bound alone does not stop.
    pub max_continuations: u32,
    /// RST_STREAM frames the peer may send on streams still open, per window: rapid reset
    /// (CVE-2023-44487) opens and cancels streams so that the server works while the
    /// concurrency limit never bites. Past it: GOAWAY ENHANCE_YOUR_CALM. Twice the
    /// concurrency: a browser that cancels every request it has in flight, twice a
    /// second, stays under it.
    pub max_peer_resets: u32,
    /// Streams we reset (stream errors, REFUSED_STREAM) per window: a peer that provokes
    /// resets makes us do work and queue output (CVE-2019-9514). Past it: ENHANCE_YOUR_CALM.
    pub max_local_resets: u32,
    /// SETTINGS frames (not ACKs) per window, each answered with an ACK (CVE-2019-9515).
    pub max_settings: u32,
    /// PING frames (not ACKs) per window, each answered with an ACK (CVE-2019-9512).
    pub max_pings: u32,
    /// Frames that carry nothing and end nothing (empty DATA without END_STREAM, empty
    /// CONTINUATION without END_HEADERS; PRIORITY and unknown frame types count too, since
    /// both are ignored), per window: each costs a wake-up and no progress (CVE-2019-9518).
    /// WINDOW_UPDATE does not count: clients send one per read of a large body.
    pub max_empty_frames: u32,
    /// Control frames (ACKs, RST_STREAM) we may have queued while the peer does not read our
    /// output: the floods above aim at this queue. Past it: ENHANCE_YOUR_CALM.
    pub max_control_backlog: u32,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_concurrent_streams: 100,
            initial_window_size: DEFAULT_WINDOW,
            max_frame_size: MIN_MAX_FRAME_SIZE,
            header_table_size: DEFAULT_HEADER_TABLE_SIZE,
            max_header_list_size: 16 << 10,
            max_header_block: 32 << 10,
            max_continuations: 16,
            max_peer_resets: 200,
            max_local_resets: 200,
            max_settings: 100,
            max_pings: 100,
            max_empty_frames: 1_000,
            max_control_backlog: 1_000,
        }
    }
}

impl Limits {
    /// The limits with each value brought inside what the protocol allows.
    pub(crate) fn normalized(mut self) -> Self {
        self.initial_window_size = self
            .initial_window_size
            .clamp(DEFAULT_WINDOW, crate::frame::MAX_WINDOW);
        self.max_frame_size = self
            .max_frame_size
            .clamp(MIN_MAX_FRAME_SIZE, MAX_MAX_FRAME_SIZE);
        self
    }
}
