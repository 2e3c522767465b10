//! Server counters: what happened, exactly, for `--status` and for experiments.
//!
//! Plain relaxed atomics: every counter is an independent tally, read without a
//! snapshot guarantee across counters (a reader may see a request counted before
//! its bytes). Each sits on its own cache line so that workers on different cores
//! do not fight over one line for unrelated counters.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::time::Instant;

/// One counter on its own cache line.
#[derive(Debug, Default)]
#[repr(align(64))]
struct Counter(AtomicU64);

impl Counter {
    fn add(&self, n: u64) {
        self.0.fetch_add(n, Relaxed);
    }
    fn sub(&self, n: u64) {
        self.0.fetch_sub(n, Relaxed);
    }
    fn get(&self) -> u64 {
        self.0.load(Relaxed)
    }
}

/// The live counters of one server.
#[derive(Debug)]
pub struct Stats {
    started: Instant,
    accepted: Counter,
    open: Counter,
    dropped: Counter,
    in_flight: Counter,
    abandoned: Counter,
    bytes_sent: Counter,
    /// Responses by status class: index 1..=5 for 1xx..5xx, 0 unused.
    by_class: [Counter; 6],
}

/// A copy of the counters at one moment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Snapshot {
    /// Seconds since the server started.
    pub uptime_secs: u64,
    /// Connections accepted.
    pub accepted: u64,
    /// Connections open now.
    pub open: u64,
    /// Connections refused with 503 because the queue or the connection cap was full.
    pub dropped: u64,
    /// Requests being answered now.
    pub in_flight: u64,
    /// Responses whose client had gone before they were completely written.
    pub abandoned: u64,
    /// Bytes written to clients (heads and bodies).
    pub bytes_sent: u64,
    /// Responses by status class: `[1xx, 2xx, 3xx, 4xx, 5xx]`.
    pub responses: [u64; 5],
}

impl Default for Stats {
    fn default() -> Self {
        Stats {
            started: Instant::now(),
            accepted: Counter::default(),
            open: Counter::default(),
            dropped: Counter::default(),
            in_flight: Counter::default(),
            abandoned: Counter::default(),
            bytes_sent: Counter::default(),
            by_class: Default::default(),
        }
    }
}

impl Stats {
    pub(crate) fn conn_opened(&self) {
        self.accepted.add(1);
        self.open.add(1);
    }
    pub(crate) fn conn_closed(&self) {
        self.open.sub(1);
    }
    pub(crate) fn dropped(&self) {
        self.dropped.add(1);
    }
    pub(crate) fn request_started(&self) {
        self.in_flight.add(1);
    }
    pub(crate) fn request_finished(&self, abandoned: bool) {
        self.in_flight.sub(1);
        if abandoned {
            self.abandoned.add(1);
        }
    }
    pub(crate) fn response(&self, status: u16) {
        let class = usize::from(status / 100).min(5);
        self.by_class[class].add(1);
    }
    pub(crate) fn sent(&self, bytes: u64) {
        self.bytes_sent.add(bytes);
    }

    /// The counters now.
    pub fn snapshot(&self) -> Snapshot {
        Snapshot {
            uptime_secs: self.started.elapsed().as_secs(),
            accepted: self.accepted.get(),
            open: self.open.get(),
            dropped: self.dropped.get(),
            in_flight: self.in_flight.get(),
            abandoned: self.abandoned.get(),
            bytes_sent: self.bytes_sent.get(),
            responses: [1, 2, 3, 4, 5].map(|c| self.by_class[c].get()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes_and_gauges() {
        let s = Stats::default();
        s.conn_opened();
        s.conn_opened();
        s.conn_closed();
        s.response(200);
        s.response(404);
        s.response(503);
        s.response(299);
        s.request_started();
        s.request_finished(true);
        let snap = s.snapshot();
        assert_eq!(snap.accepted, 2);
        assert_eq!(snap.open, 1);
        assert_eq!(snap.responses, [0, 2, 0, 1, 1]);
        assert_eq!(snap.in_flight, 0);
        assert_eq!(snap.abandoned, 1);
    }
}
