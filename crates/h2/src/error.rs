//! HTTP/2 error codes (RFC 9113 §7) and the two kinds of error (§5.4): one that ends a stream
//! and one that ends the connection.
//!
//! Every rule the decoders and the connection check maps to exactly one of the two, with the
//! code the RFC names for it, so that the answer a hostile peer gets is decided in one place
//! (where the rule is checked) and carried out in another ([`crate::ServerConn`]): a stream
//! error becomes RST_STREAM and the connection goes on; a connection error becomes GOAWAY
//! and the connection ends once the driver has written it.

use crate::stream_id::StreamId;

/// An error code as carried by RST_STREAM and GOAWAY (RFC 9113 §7). Codes this crate does not
/// know are kept as [`ErrorCode::Unknown`]: the RFC forbids giving them special behaviour, so
/// they are only reported.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorCode {
    /// 0x0: graceful shutdown, or a stream no longer needed.
    NoError,
    /// 0x1: the peer broke the protocol.
    ProtocolError,
    /// 0x2: we failed on our side.
    InternalError,
    /// 0x3: the peer broke flow control (a window beyond 2^31-1, data beyond the window).
    FlowControlError,
    /// 0x4: SETTINGS were not acknowledged in time.
    SettingsTimeout,
    /// 0x5: a frame on a stream that is half-closed (remote) or closed.
    StreamClosed,
    /// 0x6: a frame of the wrong size.
    FrameSizeError,
    /// 0x7: the stream was refused before any processing (safe to retry).
    RefusedStream,
    /// 0x8: the stream is no longer needed.
    Cancel,
    /// 0x9: the HPACK state can no longer be kept in step.
    CompressionError,
    /// 0xa: a CONNECT tunnel failed.
    ConnectError,
    /// 0xb: the peer generates excessive load (floods, rapid reset).
    EnhanceYourCalm,
    /// 0xc: the transport does not meet minimum security requirements.
    InadequateSecurity,
    /// 0xd: use HTTP/1.1 instead.
    Http11Required,
    /// Any other value: reported, never acted upon (RFC 9113 §7).
    Unknown(u32),
}

impl ErrorCode {
    /// The code from its wire value.
    pub fn from_u32(v: u32) -> Self {
        use ErrorCode::*;
        match v {
            0x0 => NoError,
            0x1 => ProtocolError,
            0x2 => InternalError,
            0x3 => FlowControlError,
            0x4 => SettingsTimeout,
            0x5 => StreamClosed,
            0x6 => FrameSizeError,
            0x7 => RefusedStream,
            0x8 => Cancel,
            0x9 => CompressionError,
            0xa => ConnectError,
            0xb => EnhanceYourCalm,
            0xc => InadequateSecurity,
            0xd => Http11Required,
            v => Unknown(v),
        }
    }

    /// The wire value.
    pub fn to_u32(self) -> u32 {
        use ErrorCode::*;
        match self {
            NoError => 0x0,
            ProtocolError => 0x1,
            InternalError => 0x2,
            FlowControlError => 0x3,
            SettingsTimeout => 0x4,
            StreamClosed => 0x5,
            FrameSizeError => 0x6,
            RefusedStream => 0x7,
            Cancel => 0x8,
            CompressionError => 0x9,
            ConnectError => 0xa,
            EnhanceYourCalm => 0xb,
            InadequateSecurity => 0xc,
            Http11Required => 0xd,
            Unknown(v) => v,
        }
    }
}

/// A broken rule, with what happens next. `reason` is a fixed phrase for logs and for the
/// GOAWAY debug data; building an error never allocates.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum H2Error {
    /// The whole connection is unusable: GOAWAY with `code` and the last stream id we
    /// processed is written, no new frame is read, and the driver closes once the output is
    /// flushed (RFC 9113 §5.4.1).
    #[error("connection error {code:?}: {reason}")]
    Connection {
        /// The GOAWAY code.
        code: ErrorCode,
        /// Why, in a few words.
        reason: &'static str,
    },
    /// One stream is unusable: RST_STREAM with `code` is written for it, and the connection
    /// goes on (RFC 9113 §5.4.2).
    #[error("stream {stream} error {code:?}: {reason}")]
    Stream {
        /// The stream to reset.
        stream: StreamId,
        /// The RST_STREAM code.
        code: ErrorCode,
        /// Why, in a few words.
        reason: &'static str,
    },
}

impl H2Error {
    /// A connection error.
    pub(crate) fn conn(code: ErrorCode, reason: &'static str) -> Self {
        H2Error::Connection { code, reason }
    }

    /// A stream error.
    pub(crate) fn stream(stream: StreamId, code: ErrorCode, reason: &'static str) -> Self {
        H2Error::Stream {
            stream,
            code,
            reason,
        }
    }

    /// The code the peer will see.
    pub fn code(&self) -> ErrorCode {
        match *self {
            H2Error::Connection { code, .. } | H2Error::Stream { code, .. } => code,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_code_round_trips_and_unknown_is_kept() {
        for v in 0..=0x20 {
            assert_eq!(ErrorCode::from_u32(v).to_u32(), v);
        }
        assert_eq!(ErrorCode::from_u32(0xdead), ErrorCode::Unknown(0xdead));
        assert_eq!(ErrorCode::from_u32(0xb), ErrorCode::EnhanceYourCalm);
    }
}
