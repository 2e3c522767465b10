//! The per-thread timer queue: think times, attempt timeouts and retry waits.
//!
//! A binary heap ordered on (deadline, sequence number), so ties fire in the order
//! they were set and a run is deterministic. Timers are never removed: most attempt
//! timeouts never fire (the answer comes first), and removing from a heap costs a
//! search. Instead each client connection keeps *one* live entry, the earliest it needs
//! ([`ConnTimer`]): re-arming one to a later time pushes nothing; when the entry
//! fires early, the loop re-pushes it for its real deadline. With a 30 s
//! timeout and 100 k requests/s this keeps the heap near one entry per connection
//! instead of three million.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::time::Instant;

/// What a timer entry is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Kind {
    /// A client connection's own deadline (think, timeout, retry wait or backoff; its state says which).
    /// In the HTTP/2 loop, a stream slot's (think, timeout or retry wait).
    Conn(usize),
    /// HTTP/2: a connection's backoff after a failed connect.
    Link(usize),
    /// An open-workload request waiting to be retried; no client connection holds it meanwhile.
    Retry {
        /// Index into the event loop's table of waiting retries.
        id: usize,
    },
}

/// A min-heap of (deadline, sequence, kind).
#[derive(Debug, Default)]
pub(crate) struct Timers {
    heap: BinaryHeap<Reverse<(Instant, u64, Kind)>>,
    seq: u64,
}

impl Timers {
    /// Adds an entry.
    pub(crate) fn push(&mut self, at: Instant, kind: Kind) {
        self.seq += 1;
        self.heap.push(Reverse((at, self.seq, kind)));
    }

    /// The earliest deadline, if any.
    pub(crate) fn next_deadline(&self) -> Option<Instant> {
        self.heap.peek().map(|Reverse((at, _, _))| *at)
    }

    /// Removes and returns the earliest entry if it is due at `now`.
    pub(crate) fn pop_due(&mut self, now: Instant) -> Option<(Instant, Kind)> {
        match self.heap.peek() {
            Some(Reverse((at, _, _))) if *at <= now => {
                self.heap.pop().map(|Reverse((at, _, kind))| (at, kind))
            }
            _ => None,
        }
    }

    /// Number of entries (live and stale).
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.heap.len()
    }
}

/// The one deadline of a [`ClientConn`](crate::client_conn::ClientConn) and the heap entry standing for it.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct ConnTimer {
    /// When the connection wants to be woken, if at all.
    pub at: Option<Instant>,
    /// The deadline of its live heap entry, if any (always `<= at`).
    pub queued: Option<Instant>,
}

impl ConnTimer {
    /// Arms the deadline; pushes an entry only when it is earlier than the live one.
    #[inline]
    pub(crate) fn arm(&mut self, at: Instant, conn: usize, timers: &mut Timers) {
        self.arm_as(at, Kind::Conn(conn), timers);
    }

    /// [`ConnTimer::arm`] for a timer whose heap entries are `kind`.
    #[inline]
    pub(crate) fn arm_as(&mut self, at: Instant, kind: Kind, timers: &mut Timers) {
        self.at = Some(at);
        if self.queued.is_none_or(|q| at < q) {
            self.queued = Some(at);
            timers.push(at, kind);
        }
    }

    /// Disarms (the heap entry stays and is ignored when it fires).
    #[inline]
    pub(crate) fn disarm(&mut self) {
        self.at = None;
    }

    /// Handles a popped entry of deadline `entry`: returns true when the
    /// deadline is due now, re-pushing the entry when the deadline moved later.
    pub(crate) fn fire(
        &mut self,
        entry: Instant,
        now: Instant,
        conn: usize,
        timers: &mut Timers,
    ) -> bool {
        self.fire_as(entry, now, Kind::Conn(conn), timers)
    }

    /// [`ConnTimer::fire`] for a timer whose heap entries are `kind`.
    pub(crate) fn fire_as(
        &mut self,
        entry: Instant,
        now: Instant,
        kind: Kind,
        timers: &mut Timers,
    ) -> bool {
        if self.queued != Some(entry) {
            return false; // stale: a newer, earlier entry stands for it
        }
        self.queued = None;
        match self.at {
            None => false,
            Some(at) if at > now => {
                self.queued = Some(at);
                timers.push(at, kind);
                false
            }
            Some(_) => {
                self.at = None;
                true
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn ms(t0: Instant, n: u64) -> Instant {
        t0 + Duration::from_millis(n)
    }

    #[test]
    fn ties_fire_in_insertion_order() {
        let t0 = Instant::now();
        let mut t = Timers::default();
        t.push(ms(t0, 5), Kind::Conn(9));
        t.push(ms(t0, 5), Kind::Conn(1));
        t.push(ms(t0, 1), Kind::Conn(4));
        assert_eq!(t.pop_due(ms(t0, 10)).unwrap().1, Kind::Conn(4));
        assert_eq!(t.pop_due(ms(t0, 10)).unwrap().1, Kind::Conn(9));
        assert_eq!(t.pop_due(ms(t0, 10)).unwrap().1, Kind::Conn(1));
        assert!(t.pop_due(ms(t0, 10)).is_none());
    }

    /// Drives a connection timer and returns the instants (ms) at which it fired.
    fn run(t0: Instant, timers: &mut Timers, st: &mut ConnTimer, until: u64) -> Vec<u64> {
        let mut fired = Vec::new();
        for now_ms in 0..=until {
            let now = ms(t0, now_ms);
            while let Some((at, Kind::Conn(s))) = timers.pop_due(now) {
                if st.fire(at, now, s, timers) {
                    fired.push(now_ms);
                }
            }
        }
        fired
    }

    #[test]
    fn rearming_later_pushes_nothing_and_fires_at_the_latest_deadline() {
        let t0 = Instant::now();
        let mut timers = Timers::default();
        let mut st = ConnTimer::default();
        for i in 0..100 {
            st.arm(ms(t0, 10 + i), 0, &mut timers);
        }
        assert_eq!(timers.len(), 1);
        assert_eq!(run(t0, &mut timers, &mut st, 200), vec![109]);
    }

    #[test]
    fn rearming_earlier_fires_early_once_and_disarm_cancels() {
        let t0 = Instant::now();
        let mut timers = Timers::default();
        let mut st = ConnTimer::default();
        st.arm(ms(t0, 50), 0, &mut timers);
        st.arm(ms(t0, 20), 0, &mut timers);
        assert_eq!(run(t0, &mut timers, &mut st, 100), vec![20]);
        let mut st = ConnTimer::default();
        st.arm(ms(t0, 5), 0, &mut timers);
        st.disarm();
        assert!(run(t0, &mut timers, &mut st, 100).is_empty());
    }
}
