//! HTTP/2 frames (RFC 9113 §4, §6): the typed view of one frame, its decoder and encoder.
//!
//! A frame is a 9-octet header (24-bit length, type, flags, 31-bit stream id) and a payload.
//! The decoder checks every rule that can be checked on one frame alone (lengths, flags, the
//! stream id being zero or not, padding, setting values) and says which error each broken
//! rule is; rules that need the connection's state (stream states, windows, CONTINUATION
//! order) are [`crate::ServerConn`]'s. Payloads borrow from the input, so decoding a frame
//! never allocates.
//!
//! # Layout
//! - [`decode`]: bytes to [`Frame`], incrementally ([`Parse::Incomplete`] until a whole frame
//!   is there).
//! - [`encode`]: [`Frame`] to bytes, and a header block split into HEADERS + CONTINUATION.

pub mod decode;
pub mod encode;

use crate::error::ErrorCode;

pub use decode::decode_frame;
pub use encode::{encode_frame, encode_header_block};
pub use servelab_http::Parse;
// Where it always was for the crate's users; `stream_id.rs` owns it.
pub use crate::stream_id::StreamId;

/// The octets a client sends first (RFC 9113 §3.4), before its SETTINGS frame.
pub const PREFACE: &[u8; 24] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

/// What the first octets on a cleartext connection are, for a port that serves HTTP/1.1 and
/// HTTP/2 with prior knowledge (`--h2c`): the preface, or anything else (HTTP/1.1's request
/// line never starts with `PRI * HTTP/2.0`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sniff {
    /// The whole preface is there: hand the bytes to a [`crate::ServerConn`].
    Http2,
    /// Not the preface: HTTP/1.1 (or garbage, for its parser to refuse).
    Http1,
    /// A prefix of the preface so far: read more.
    NeedMore,
}

/// Decides [`Sniff`] from the first octets read. It decides as soon as one octet differs,
/// so an HTTP/1.1 client waits for nothing.
pub fn sniff(first: &[u8]) -> Sniff {
    let n = first.len().min(PREFACE.len());
    if first[..n] != PREFACE[..n] {
        Sniff::Http1
    } else if n == PREFACE.len() {
        Sniff::Http2
    } else {
        Sniff::NeedMore
    }
}

/// Length of the frame header.
pub const HEADER_LEN: usize = 9;

/// The smallest SETTINGS_MAX_FRAME_SIZE (and the initial one): 2^14 (RFC 9113 §4.2).
pub const MIN_MAX_FRAME_SIZE: u32 = 1 << 14;

/// The largest SETTINGS_MAX_FRAME_SIZE: 2^24-1.
pub const MAX_MAX_FRAME_SIZE: u32 = (1 << 24) - 1;

/// The largest flow-control window: 2^31-1 (RFC 9113 §6.9.1).
pub const MAX_WINDOW: u32 = (1 << 31) - 1;

/// Setting identifiers (RFC 9113 §6.5.2), as SETTINGS frames carry them.
#[allow(missing_docs)]
pub mod setting {
    pub const HEADER_TABLE_SIZE: u16 = 0x1;
    pub const ENABLE_PUSH: u16 = 0x2;
    pub const MAX_CONCURRENT_STREAMS: u16 = 0x3;
    pub const INITIAL_WINDOW_SIZE: u16 = 0x4;
    pub const MAX_FRAME_SIZE: u16 = 0x5;
    pub const MAX_HEADER_LIST_SIZE: u16 = 0x6;
}

/// Frame type codes (RFC 9113 §6).
#[allow(missing_docs)]
pub mod kind {
    pub const DATA: u8 = 0x0;
    pub const HEADERS: u8 = 0x1;
    pub const PRIORITY: u8 = 0x2;
    pub const RST_STREAM: u8 = 0x3;
    pub const SETTINGS: u8 = 0x4;
    pub const PUSH_PROMISE: u8 = 0x5;
    pub const PING: u8 = 0x6;
    pub const GOAWAY: u8 = 0x7;
    pub const WINDOW_UPDATE: u8 = 0x8;
    pub const CONTINUATION: u8 = 0x9;
}

/// Flag bits (RFC 9113 §6); which ones a frame type defines is in its section.
#[allow(missing_docs)]
pub mod flag {
    pub const END_STREAM: u8 = 0x1;
    pub const ACK: u8 = 0x1;
    pub const END_HEADERS: u8 = 0x4;
    pub const PADDED: u8 = 0x8;
    pub const PRIORITY: u8 = 0x20;
}

/// The deprecated priority signal of HEADERS and PRIORITY (RFC 9113 §5.3.2): parsed so that a
/// self-dependency is refused, otherwise ignored, as RFC 9113 allows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Priority {
    /// The stream this one depends on.
    pub dependency: StreamId,
    /// The E flag.
    pub exclusive: bool,
    /// Weight minus one, as on the wire.
    pub weight: u8,
}

/// The 9-octet frame header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FrameHeader {
    /// Payload length.
    pub len: u32,
    /// Type code ([`kind`]).
    pub kind: u8,
    /// Flag bits ([`flag`]).
    pub flags: u8,
    /// Stream id, reserved bit cleared.
    pub stream: StreamId,
}

/// The parameters of a SETTINGS frame, already checked (RFC 9113 §6.5.2); iterate with
/// [`SettingsPayload::iter`]. Unknown identifiers are kept by the iterator and must be
/// ignored by the receiver.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SettingsPayload<'a>(pub(crate) &'a [u8]);

impl<'a> SettingsPayload<'a> {
    /// Parameters to encode: whole 6-octet (identifier, value) pairs, as
    /// [`crate::settings::Settings::to_payload`] builds them. Values are not checked here
    /// (the receiver's decoder does); a trailing partial pair is dropped.
    pub fn new(params: &'a [u8]) -> Self {
        SettingsPayload(&params[..params.len() / 6 * 6])
    }

    /// Each (identifier, value) in order: a later value for the same identifier wins.
    pub fn iter(&self) -> impl Iterator<Item = (u16, u32)> + 'a {
        self.0.chunks_exact(6).map(|c| {
            (
                u16::from_be_bytes([c[0], c[1]]),
                u32::from_be_bytes([c[2], c[3], c[4], c[5]]),
            )
        })
    }

    /// How many parameters the frame carries.
    pub fn len(&self) -> usize {
        self.0.len() / 6
    }

    /// True when the frame carries none.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// One decoded frame. Byte slices borrow from the decoder's input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Frame<'a> {
    /// DATA (§6.1). `flow_len` is the whole payload, padding included: what flow control
    /// counts.
    Data {
        /// The stream.
        stream: StreamId,
        /// The data, padding removed.
        data: &'a [u8],
        /// END_STREAM.
        end_stream: bool,
        /// The payload length flow control counts.
        flow_len: u32,
    },
    /// HEADERS (§6.2): the first fragment of a header block.
    Headers {
        /// The stream.
        stream: StreamId,
        /// The field block fragment, padding and priority removed.
        block: &'a [u8],
        /// END_STREAM.
        end_stream: bool,
        /// END_HEADERS: no CONTINUATION follows.
        end_headers: bool,
        /// The deprecated priority fields, if the PRIORITY flag was set.
        priority: Option<Priority>,
    },
    /// PRIORITY (§6.3): parsed, then ignored.
    Priority {
        /// The stream.
        stream: StreamId,
        /// The signal.
        priority: Priority,
    },
    /// RST_STREAM (§6.4).
    RstStream {
        /// The stream.
        stream: StreamId,
        /// Why.
        code: ErrorCode,
    },
    /// SETTINGS (§6.5): either an ACK (no parameters) or parameters to apply and acknowledge.
    Settings {
        /// The ACK flag.
        ack: bool,
        /// The parameters (empty on an ACK).
        params: SettingsPayload<'a>,
    },
    /// PUSH_PROMISE (§6.6): only a server sends it; this crate's server never does and
    /// refuses one from a client (we advertise SETTINGS_ENABLE_PUSH 0 as a client too).
    PushPromise {
        /// The stream the promise is on.
        stream: StreamId,
        /// The promised stream.
        promised: StreamId,
        /// The field block fragment.
        block: &'a [u8],
        /// END_HEADERS.
        end_headers: bool,
    },
    /// PING (§6.7).
    Ping {
        /// The ACK flag.
        ack: bool,
        /// Opaque data, echoed in the ACK.
        data: [u8; 8],
    },
    /// GOAWAY (§6.8).
    GoAway {
        /// The last stream the sender may have processed.
        last_stream: StreamId,
        /// Why.
        code: ErrorCode,
        /// Opaque debug data.
        debug: &'a [u8],
    },
    /// WINDOW_UPDATE (§6.9); the increment is never zero (that is refused by the decoder).
    WindowUpdate {
        /// The stream, or 0 for the connection window.
        stream: StreamId,
        /// 1 to 2^31-1.
        increment: u32,
    },
    /// CONTINUATION (§6.10): a further fragment of a header block.
    Continuation {
        /// The stream.
        stream: StreamId,
        /// The fragment.
        block: &'a [u8],
        /// END_HEADERS.
        end_headers: bool,
    },
    /// A frame of a type this crate does not know: ignored (RFC 9113 §4.1, §5.5).
    Unknown {
        /// Its type code.
        kind: u8,
        /// Its stream.
        stream: StreamId,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sniff_decides_at_the_first_differing_octet() {
        assert_eq!(sniff(b""), Sniff::NeedMore);
        assert_eq!(sniff(b"PRI * HTTP/2"), Sniff::NeedMore);
        assert_eq!(sniff(PREFACE), Sniff::Http2);
        let mut more = PREFACE.to_vec();
        more.extend([0, 0, 0, 4]);
        assert_eq!(sniff(&more), Sniff::Http2);
        assert_eq!(sniff(b"G"), Sniff::Http1);
        assert_eq!(sniff(b"PRI * HTTP/1.1\r\n"), Sniff::Http1);
        assert_eq!(sniff(b"POST / HTTP/1.1"), Sniff::Http1);
    }
}
