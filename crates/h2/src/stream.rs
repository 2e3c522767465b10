//! One stream's state (RFC 9113 §5.1) and flow-control windows (§5.2, §6.9), as a server
//! keeps them.
//!
//! Only streams that are open or half-closed are stored: idle streams have no entry (any id
//! above the highest the peer opened), and closed ones are forgotten (any id at or below it
//! with no entry), so memory is bounded by the concurrency limit, not by the connection's
//! age. A server never reserves streams (no push), so the reserved states do not occur.

/// Where a stream is in its life (§5.1), from the server's side.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StreamState {
    /// Both sides may send.
    Open,
    /// The peer ended its side (END_STREAM received); we still answer.
    HalfClosedRemote,
    /// We ended our side; the peer's body is still coming.
    HalfClosedLocal,
}

/// A live stream.
#[derive(Debug, Clone)]
pub struct Stream {
    /// Its state.
    pub state: StreamState,
    /// What we may still send on it (can go below zero when the peer lowers
    /// SETTINGS_INITIAL_WINDOW_SIZE, §6.9.2).
    pub send_window: i64,
    /// What the peer may still send on it.
    pub recv_window: i64,
    /// Octets received and delivered but not yet given back with WINDOW_UPDATE.
    pub recv_unacked: u32,
    /// The last `send_data` was cut short by flow control: tell the driver when the window
    /// opens.
    pub blocked: bool,
    /// The request's `content-length`, checked against the DATA received (§8.1.1).
    pub expect_len: Option<u64>,
    /// DATA octets received.
    pub received: u64,
    /// The head was received (a server's streams start with it; a client's wait for the
    /// response): DATA before it is malformed.
    pub got_head: bool,
}

impl Stream {
    /// A stream opened by a request's HEADERS.
    pub fn new(send_window: u32, recv_window: u32, end_stream: bool) -> Self {
        Stream {
            state: if end_stream {
                StreamState::HalfClosedRemote
            } else {
                StreamState::Open
            },
            send_window: i64::from(send_window),
            recv_window: i64::from(recv_window),
            recv_unacked: 0,
            blocked: false,
            expect_len: None,
            received: 0,
            got_head: true,
        }
    }

    /// True while the peer may still send DATA or trailers.
    pub fn remote_open(&self) -> bool {
        matches!(self.state, StreamState::Open | StreamState::HalfClosedLocal)
    }

    /// True while we may still send.
    pub fn local_open(&self) -> bool {
        matches!(
            self.state,
            StreamState::Open | StreamState::HalfClosedRemote
        )
    }

    /// False when the DATA received breaks the request's `content-length` (§8.1.1): more than
    /// announced, or, once the body has ended, a different amount.
    pub fn length_ok(&self, ended: bool) -> bool {
        self.expect_len
            .is_none_or(|n| self.received <= n && (!ended || self.received == n))
    }

    /// The peer ended its side. Returns true when the stream is now closed.
    pub fn close_remote(&mut self) -> bool {
        match self.state {
            StreamState::Open => {
                self.state = StreamState::HalfClosedRemote;
                false
            }
            _ => true,
        }
    }

    /// We ended our side. Returns true when the stream is now closed.
    pub fn close_local(&mut self) -> bool {
        match self.state {
            StreamState::Open => {
                self.state = StreamState::HalfClosedLocal;
                false
            }
            _ => true,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_sides_must_end_before_a_stream_closes() {
        let mut s = Stream::new(10, 10, false);
        assert!(s.remote_open() && s.local_open());
        assert!(!s.close_local());
        assert!(s.remote_open() && !s.local_open());
        assert!(s.close_remote());
        let mut s = Stream::new(10, 10, true);
        assert!(!s.remote_open() && s.local_open());
        assert!(s.close_local());
    }
}
