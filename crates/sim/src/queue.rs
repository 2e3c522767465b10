//! The future-event list: a binary min-heap keyed on (time, sequence number).
//!
//! Ties in time are common (a zero think time, a dispatch at the instant of a
//! completion); breaking them on the insertion sequence number makes the run a pure
//! function of the seed, as in SimPy and nexosim. Times are non-negative finite
//! floats, whose IEEE bit patterns order like the numbers themselves, so the key is
//! one `u128` (time bits, sequence) compared in a single instruction pair.
//!
//! Cancelled events are not removed; the engine marks them stale with generation
//! counters and skips them when they surface (lazy deletion), which keeps every
//! operation O(log n).

use std::cmp::Ordering;
use std::collections::BinaryHeap;

/// What happens at an event. Fields are user, core and generation indices.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Event {
    /// A user sends a request (end of think time, or a retry).
    Send { user: u32 },
    /// A user's timeout fires, if its token still matches.
    Timeout { user: u32, token: u32 },
    /// A core's current slice ends (completion or quantum expiry), if `epoch` matches.
    SliceEnd { core: u32, epoch: u32 },
    /// A core finishes a context switch and starts the thread it loaded.
    SwitchEnd { core: u32 },
    /// The fixed warm-up period ends: statistics restart here.
    WarmupEnd,
}

#[derive(Clone, Copy, Debug)]
struct Entry {
    key: u128,
    event: Event,
}

impl PartialEq for Entry {
    fn eq(&self, other: &Self) -> bool {
        self.key == other.key
    }
}
impl Eq for Entry {}
impl PartialOrd for Entry {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Entry {
    // Reversed: `BinaryHeap` is a max-heap and we want the earliest event first.
    fn cmp(&self, other: &Self) -> Ordering {
        other.key.cmp(&self.key)
    }
}

/// The pending events of one replication.
#[derive(Debug, Default)]
pub(crate) struct EventQueue {
    heap: BinaryHeap<Entry>,
    seq: u64,
}

impl EventQueue {
    /// An empty queue with room for `capacity` events.
    pub(crate) fn with_capacity(capacity: usize) -> EventQueue {
        EventQueue {
            heap: BinaryHeap::with_capacity(capacity),
            seq: 0,
        }
    }

    /// Schedules `event` at `time` (seconds, finite, non-negative).
    #[inline]
    pub(crate) fn push(&mut self, time: f64, event: Event) {
        debug_assert!(time >= 0.0 && time.is_finite(), "bad event time {time}");
        // +0.0 and -0.0 compare equal but differ in bits; normalise so -0.0 cannot sort last.
        let bits = (time + 0.0).to_bits();
        self.seq += 1;
        self.heap.push(Entry {
            key: (u128::from(bits) << 64) | u128::from(self.seq),
            event,
        });
    }

    /// Removes and returns the earliest event and its time.
    #[inline]
    pub(crate) fn pop(&mut self) -> Option<(f64, Event)> {
        self.heap
            .pop()
            .map(|e| (f64::from_bits((e.key >> 64) as u64), e.event))
    }

    /// Time of the earliest event without removing it.
    pub(crate) fn peek_time(&self) -> Option<f64> {
        self.heap
            .peek()
            .map(|e| f64::from_bits((e.key >> 64) as u64))
    }

    /// Number of pending events, stale ones included.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.heap.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pops_in_time_order_and_ties_in_insertion_order() {
        let mut q = EventQueue::with_capacity(4);
        q.push(2.0, Event::Send { user: 0 });
        q.push(1.0, Event::Send { user: 1 });
        q.push(1.0, Event::Send { user: 2 });
        q.push(0.5, Event::WarmupEnd);
        q.push(1.0, Event::SliceEnd { core: 3, epoch: 9 });
        assert_eq!(q.len(), 5);
        assert_eq!(q.peek_time(), Some(0.5));
        let order: Vec<Event> = std::iter::from_fn(|| q.pop().map(|(_, e)| e)).collect();
        assert_eq!(
            order,
            [
                Event::WarmupEnd,
                Event::Send { user: 1 },
                Event::Send { user: 2 },
                Event::SliceEnd { core: 3, epoch: 9 },
                Event::Send { user: 0 },
            ]
        );
    }

    #[test]
    fn times_order_like_numbers() {
        let mut q = EventQueue::with_capacity(8);
        let times = [1e-300, 0.0, 3.5, 1e10, 0.1, 2.0];
        for (i, &t) in times.iter().enumerate() {
            q.push(t, Event::Send { user: i as u32 });
        }
        let popped: Vec<f64> = std::iter::from_fn(|| q.pop().map(|(t, _)| t)).collect();
        assert_eq!(popped, [0.0, 1e-300, 0.1, 2.0, 3.5, 1e10]);
    }
}
