//! The stream identifier every frame, event and error names (RFC 9113 §5.1.1),
//! in a file of its own so that the frame codec and the error codes, which
//! both name it, need not name each other.

use std::fmt;

/// A stream identifier (31 bits; the reserved bit is cleared on decode). Zero is the
/// connection itself; clients open odd ids, servers even ones.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct StreamId(pub u32);

impl StreamId {
    /// Stream 0: frames that concern the whole connection.
    pub const CONNECTION: StreamId = StreamId(0);

    /// True for stream 0.
    pub fn is_connection(self) -> bool {
        self.0 == 0
    }

    /// True for ids a client opens (odd).
    pub fn is_client_initiated(self) -> bool {
        self.0 % 2 == 1
    }
}

impl fmt::Display for StreamId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}
