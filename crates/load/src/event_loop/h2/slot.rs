//! A stream slot: one closed user, or one open request's place, on an HTTP/2
//! connection. A slot holds at most one request; the request holds at most
//! one stream at a time (a refused or timed-out attempt opens another).

use std::time::{Duration, Instant};

use rand_pcg::Pcg64Mcg;

use crate::client_conn::Request;
use crate::timer::ConnTimer;

/// Where a slot's request is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum SlotState {
    /// No request (open: free; closed: between requests, about to start).
    Idle,
    /// Closed user thinking; its timer ends the think.
    Thinking,
    /// Waiting at its connection for a stream (connecting, draining, or at
    /// the server's concurrency limit).
    Waiting,
    /// On a stream, sent or being sent, its answer awaited.
    Streaming,
    /// A timed-out attempt waits to be sent again.
    RetryWait,
    /// Closed user done (quota spent).
    Stopped,
}

#[derive(Debug)]
pub(super) struct Slot {
    /// The connection it sends on.
    pub link: usize,
    pub state: SlotState,
    /// The stream of the current attempt (while `Streaming`).
    pub stream: u32,
    pub req: Request,
    /// Request body octets taken by the connection so far.
    pub body_sent: usize,
    /// Response body octets received.
    pub got: u64,
    /// The response's `content-length`, when it gave one.
    pub length: Option<u64>,
    pub status: u16,
    /// Whether this attempt was counted in `waited_for_stream`.
    pub waited: bool,
    pub timer: ConnTimer,
    /// This slot's random stream (think times, timeouts, targets).
    pub rng: Pcg64Mcg,
    /// Requests this closed user may still start (`u64::MAX`: no limit).
    pub quota: u64,
    /// As [`crate::client_conn::ClientConn::think_from`].
    pub think_from: Option<(Instant, Option<Duration>)>,
}

impl Slot {
    pub(super) fn new(link: usize, rng: Pcg64Mcg, now: Instant) -> Slot {
        Slot {
            link,
            state: SlotState::Idle,
            stream: 0,
            req: Request::new(now, 0),
            body_sent: 0,
            got: 0,
            length: None,
            status: 0,
            waited: false,
            timer: ConnTimer::default(),
            rng,
            quota: u64::MAX,
            think_from: None,
        }
    }

    /// Whether a request is under way (sent or waiting to be).
    #[inline]
    pub(super) fn has_request(&self) -> bool {
        matches!(
            self.state,
            SlotState::Waiting | SlotState::Streaming | SlotState::RetryWait
        )
    }
}
