//! One client connection of an event loop: a closed user, or one connection of an
//! open pool, with the request it is working on.
//!
//! A [`ClientConn`] owns at most one socket at a time and at most one request. Its state is an
//! explicit enum, so that the loop's handlers read as a table: what an event or a
//! timer means depends on the state alone. In the closed workload it is a user
//! and lives for the whole run; in the open workload it is a connection that
//! requests are assigned to from the client-side queue.

use std::os::fd::OwnedFd;
use std::time::{Duration, Instant};

use rand_pcg::Pcg64Mcg;

use crate::response::ResponseParser;
use crate::timer::ConnTimer;

/// Where a client connection is in its cycle.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ConnState {
    /// No request (open pool: waiting for work; the socket may be open and idle).
    Idle,
    /// Non-blocking connect in progress; the request waits for it.
    Connecting,
    /// `https://`: connected, the TLS handshake in progress; the request waits
    /// for it.
    Handshaking,
    /// The request is partly written; waiting for room in the send buffer.
    Writing,
    /// The request is written; reading the response.
    Reading,
    /// Closed user thinking before the next request (socket may be open, idle).
    Thinking,
    /// Closed user waiting before retrying a timed-out attempt (socket closed).
    RetryWait,
    /// Every address refused the connect (or could not be reached): waiting out
    /// the backoff before connecting again for the same request.
    Backoff,
    /// The user is done for this run (no more requests allowed).
    Stopped,
    /// A closed user above the stages' current level, waiting for the ramp
    /// to reach it (socket closed).
    Parked,
}

/// The request a client connection is working on.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Request {
    /// When the request should have started: think end (closed) or arrival (open).
    pub intended: Instant,
    /// When the current attempt's bytes were first written.
    pub sent: Instant,
    /// When the first response byte of the current attempt arrived.
    pub first_byte: Option<Instant>,
    /// Attempts made so far (1 for the first).
    pub attempts: u32,
    /// Index of the target.
    pub target: usize,
    /// Whether an attempt of it was ever written to a socket: a request held
    /// at the end by a connection that never opened was never sent.
    pub written: bool,
    /// Whether it was already sent again after a reused connection closed
    /// without answering (at most once: RFC 9112, 9.3.1).
    pub close_retried: bool,
}

impl Request {
    pub(crate) fn new(intended: Instant, target: usize) -> Request {
        Request {
            intended,
            sent: intended,
            first_byte: None,
            attempts: 0,
            target,
            written: false,
            close_retried: false,
        }
    }
}

/// A user or a pooled connection.
#[derive(Debug)]
pub(crate) struct ClientConn {
    /// The connection, if open.
    pub sock: Option<OwnedFd>,
    /// `https://`: the TLS session over `sock` (boxed: rustls's state is a
    /// few KiB, and plain-HTTP connections should not carry it).
    pub tls: Option<Box<rustls::ClientConnection>>,
    /// Thread CPU spent on this connection's TLS handshake so far.
    pub tls_cpu: Duration,
    /// Bumped for every new socket; travels in epoll's data so that an event for
    /// a socket closed earlier in the same batch is recognised and dropped.
    pub generation: u32,
    pub state: ConnState,
    pub timer: ConnTimer,
    /// This user's random stream (think times, timeouts, targets).
    pub rng: Pcg64Mcg,
    pub parser: ResponseParser,
    pub req: Request,
    /// Bytes of the request written so far.
    pub written: usize,
    /// Whether the request in flight is the close variant (last of a session).
    pub closing: bool,
    /// Requests left on the current connection (`u32::MAX`: unlimited).
    pub session_left: u32,
    /// When the current connect started.
    pub connect_start: Instant,
    /// When the current TLS handshake started (the TCP connect's end).
    pub handshake_start: Instant,
    /// The address (index into the target's) being connected to or connected.
    pub addr_index: usize,
    /// Addresses tried in the current connect round.
    pub addr_tries: usize,
    /// The backoff after the last failed connect (zero once a connect succeeds).
    pub backoff: Duration,
    /// Whether the connection already carried a complete response.
    pub reused: bool,
    /// The target the connection was opened for (its address is the connection's).
    pub conn_target: usize,
    /// Requests this closed user may still start (`u64::MAX`: no limit).
    pub quota: u64,
    /// Closed user thinking: when the think began and its draw, so that the
    /// think's real length is measured when the next request starts. The draw
    /// is `None` for a user's first think, a residual drawn so that users
    /// start spread out: its time is the users' but it is no draw of Z.
    pub think_from: Option<(Instant, Option<Duration>)>,
}

impl ClientConn {
    pub(crate) fn new(rng: Pcg64Mcg, now: Instant) -> ClientConn {
        ClientConn {
            sock: None,
            tls: None,
            tls_cpu: Duration::ZERO,
            generation: 0,
            state: ConnState::Idle,
            timer: ConnTimer::default(),
            rng,
            parser: ResponseParser::default(),
            req: Request::new(now, 0),
            written: 0,
            closing: false,
            session_left: u32::MAX,
            connect_start: now,
            handshake_start: now,
            addr_index: 0,
            addr_tries: 0,
            backoff: Duration::ZERO,
            reused: false,
            conn_target: 0,
            quota: u64::MAX,
            think_from: None,
        }
    }

    /// Whether a request is under way: sent or being sent, waiting for its
    /// answer, a retry (closed users) or a reconnect.
    #[inline]
    pub(crate) fn has_request(&self) -> bool {
        matches!(
            self.state,
            ConnState::Connecting
                | ConnState::Handshaking
                | ConnState::Writing
                | ConnState::Reading
                | ConnState::RetryWait
                | ConnState::Backoff
        )
    }

    /// The epoll data word for this connection's current socket.
    #[inline]
    pub(crate) fn token(&self, index: usize) -> u64 {
        token(index, self.generation)
    }

    /// Splits an epoll data word into (connection index, generation).
    #[inline]
    pub(crate) fn untoken(token: u64) -> (usize, u32) {
        ((token & 0xffff_ffff) as usize, (token >> 32) as u32)
    }
}

/// The epoll data word of connection `index` in its `generation`: both
/// loops (HTTP/1.1's connections, HTTP/2's links) tag their sockets so, and
/// [`ClientConn::untoken`] splits it.
#[inline]
pub(crate) fn token(index: usize, generation: u32) -> u64 {
    (u64::from(generation) << 32) | index as u64
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn token_round_trips() {
        let mut s = ClientConn::new(Pcg64Mcg::seed_from_u64(0), Instant::now());
        s.generation = 0xdead_beef;
        assert_eq!(ClientConn::untoken(s.token(12_345)), (12_345, 0xdead_beef));
    }
}
