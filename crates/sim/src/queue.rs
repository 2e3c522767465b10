//! The future-event list: user events in a binary min-heap, core events in a
//! tournament tree, both keyed on (time, sequence number).
//!
//! Ties in time are common (a zero think time, a dispatch at the instant of a
//! completion); breaking them on one global insertion sequence number makes the run a
//! pure function of the seed, as in SimPy and nexosim. Times are non-negative finite
//! floats, whose IEEE bit patterns order like the numbers themselves, so a key is a
//! pair of integers.
//!
//! Why two structures: a core has at most one pending event at a time (its slice end
//! or switch end), so its next event can be *moved* (a round-robin slice cut short
//! when a thread becomes ready) by overwriting its leaf in O(log c), instead of
//! leaving a stale heap entry behind and tagging the core with a generation counter.
//! It also halves the heap traffic (every request is one user event and one core
//! event); on the N = 50 benchmark the wall time came out the same as the single
//! heap, so the reason to keep it is the simpler cancellation. User timeouts still use
//! lazy deletion: a stale one is recognised by its token when it surfaces.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

/// What happens at an event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Event {
    /// A user sends a request (end of think time, or a retry).
    Send { user: u32 },
    /// A user's timeout fires, if its token still matches.
    Timeout { user: u32, token: u32 },
    /// The keep-alive timeout of a user's idle connection (held workers), if its
    /// token still matches (a request since cancels it).
    Idle { user: u32, token: u32 },
    /// A core's pending event: its slice ends or its context switch ends (the core's
    /// state says which).
    Core { core: u32 },
    /// The fixed warm-up period ends: statistics restart here.
    WarmupEnd,
}

/// (time bits, sequence number): compares like (time, insertion order).
type Key = (u64, u64);
const NEVER: Key = (u64::MAX, u64::MAX);

#[derive(Clone, Copy, Debug)]
struct Entry {
    key: Key,
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
    #[inline]
    fn cmp(&self, other: &Self) -> Ordering {
        other.key.cmp(&self.key)
    }
}

/// The pending events of one replication.
#[derive(Debug)]
pub(crate) struct EventQueue {
    heap: BinaryHeap<Entry>,
    /// Tournament tree over cores, 1-based: node i has children 2i and 2i+1, leaf of
    /// core j at `leaves + j`; each node holds the smallest (key, core) below it.
    tree: Vec<(Key, u32)>,
    leaves: usize,
    seq: u64,
}

#[inline]
fn key(time: f64, seq: u64) -> Key {
    debug_assert!(time >= 0.0 && time.is_finite(), "bad event time {time}");
    // +0.0 and -0.0 compare equal but differ in bits; normalise so -0.0 cannot sort last.
    ((time + 0.0).to_bits(), seq)
}

impl EventQueue {
    /// An empty queue for `cores` cores with room for `capacity` user events.
    pub(crate) fn new(cores: usize, capacity: usize) -> EventQueue {
        let leaves = cores.next_power_of_two();
        let mut tree = vec![(NEVER, 0); 2 * leaves];
        for (j, leaf) in tree[leaves..].iter_mut().enumerate() {
            leaf.1 = j as u32;
        }
        for i in (1..leaves).rev() {
            tree[i] = tree[2 * i].min(tree[2 * i + 1]);
        }
        EventQueue {
            heap: BinaryHeap::with_capacity(capacity),
            tree,
            leaves,
            seq: 0,
        }
    }

    /// Schedules a user or warm-up event at `time` (seconds, finite, non-negative).
    #[inline]
    pub(crate) fn push(&mut self, time: f64, event: Event) {
        debug_assert!(
            !matches!(event, Event::Core { .. }),
            "core events go through set_core"
        );
        self.seq += 1;
        self.heap.push(Entry {
            key: key(time, self.seq),
            event,
        });
    }

    /// Sets core `core`'s one pending event to `time`, replacing any earlier setting.
    #[inline]
    pub(crate) fn set_core(&mut self, core: u32, time: f64) {
        self.seq += 1;
        self.set_leaf(core, key(time, self.seq));
    }

    /// Removes core `core`'s pending event, if any (the core goes idle).
    pub(crate) fn clear_core(&mut self, core: u32) {
        self.set_leaf(core, NEVER);
    }

    #[inline]
    fn set_leaf(&mut self, core: u32, k: Key) {
        let mut i = self.leaves + core as usize;
        let mut best = (k, core);
        self.tree[i] = best;
        // Carry the path's minimum in registers and read only the siblings: re-reading
        // the node just written stalls on store forwarding (it cost 15% of the run).
        while i > 1 {
            best = best.min(self.tree[i ^ 1]);
            i /= 2;
            self.tree[i] = best;
        }
    }

    /// Removes and returns the earliest event and its time, unless the queue is empty
    /// or that event comes after `limit` (then it stays).
    #[inline]
    pub(crate) fn pop_until(&mut self, limit: f64) -> Option<(f64, Event)> {
        let limit = (limit + 0.0).to_bits();
        let (core_key, core) = self.tree[1];
        match self.heap.peek() {
            Some(top) if top.key < core_key => {
                if top.key.0 > limit {
                    return None;
                }
                let e = self.heap.pop().expect("peeked");
                Some((f64::from_bits(e.key.0), e.event))
            }
            _ if core_key != NEVER && core_key.0 <= limit => {
                self.set_leaf(core, NEVER);
                Some((f64::from_bits(core_key.0), Event::Core { core }))
            }
            _ => None,
        }
    }

    /// Removes and returns the earliest event and its time.
    #[cfg(test)]
    pub(crate) fn pop(&mut self) -> Option<(f64, Event)> {
        self.pop_until(f64::INFINITY)
    }

    /// Time of the earliest event without removing it.
    #[cfg(test)]
    pub(crate) fn peek_time(&self) -> Option<f64> {
        let core_key = self.tree[1].0;
        let k = self
            .heap
            .peek()
            .map_or(core_key, |top| top.key.min(core_key));
        (k != NEVER).then(|| f64::from_bits(k.0))
    }

    /// Number of pending events, stale ones included.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.heap.len()
            + self.tree[self.leaves..]
                .iter()
                .filter(|l| l.0 != NEVER)
                .count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pops_in_time_order_and_ties_in_insertion_order() {
        let mut q = EventQueue::new(4, 4);
        q.push(2.0, Event::Send { user: 0 });
        q.push(1.0, Event::Send { user: 1 });
        q.set_core(3, 1.0);
        q.push(1.0, Event::Send { user: 2 });
        q.push(0.5, Event::WarmupEnd);
        q.set_core(1, 0.7);
        q.set_core(1, 3.0); // moved: the 0.7 setting is gone
        assert_eq!(q.len(), 6);
        assert_eq!(q.peek_time(), Some(0.5));
        let order: Vec<(f64, Event)> = std::iter::from_fn(|| q.pop()).collect();
        assert_eq!(
            order,
            [
                (0.5, Event::WarmupEnd),
                (1.0, Event::Send { user: 1 }),
                (1.0, Event::Core { core: 3 }),
                (1.0, Event::Send { user: 2 }),
                (2.0, Event::Send { user: 0 }),
                (3.0, Event::Core { core: 1 }),
            ]
        );
        assert_eq!(q.peek_time(), None);
    }

    #[test]
    fn heap_pops_like_a_sorted_list() {
        // Pseudo-random pushes interleaved with pops, checked against a sorted Vec.
        let mut q = EventQueue::new(1, 0);
        let mut reference: Vec<(u64, u32)> = Vec::new();
        let mut x: u64 = 12345;
        for step in 0..5000u32 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            if x >> 62 != 0 || reference.is_empty() {
                let t = (x >> 40) % 1000; // many ties
                q.push(t as f64, Event::Send { user: step });
                reference.push((t, step));
            } else {
                reference.sort();
                let (t, user) = reference.remove(0);
                assert_eq!(q.pop(), Some((t as f64, Event::Send { user })));
            }
        }
        reference.sort();
        for (t, user) in reference {
            assert_eq!(q.pop(), Some((t as f64, Event::Send { user })));
        }
        assert_eq!(q.pop(), None);
    }

    #[test]
    fn pop_until_leaves_later_events() {
        let mut q = EventQueue::new(2, 4);
        q.push(2.0, Event::Send { user: 0 });
        q.set_core(1, 3.0);
        assert_eq!(q.pop_until(1.5), None);
        assert_eq!(q.pop_until(2.0), Some((2.0, Event::Send { user: 0 })));
        assert_eq!(q.pop_until(2.5), None);
        assert_eq!(
            q.pop_until(f64::INFINITY),
            Some((3.0, Event::Core { core: 1 }))
        );
        assert_eq!(q.pop_until(f64::INFINITY), None);
    }

    #[test]
    fn times_order_like_numbers_across_both_structures() {
        for cores in [1, 3, 5] {
            let mut q = EventQueue::new(cores, 8);
            let times = [1e-300, 0.0, 3.5, 1e10, 0.1, 2.0];
            for (i, &t) in times.iter().enumerate() {
                if i < cores {
                    q.set_core(i as u32, t);
                } else {
                    q.push(t, Event::Send { user: i as u32 });
                }
            }
            let popped: Vec<f64> = std::iter::from_fn(|| q.pop().map(|(t, _)| t)).collect();
            assert_eq!(popped, [0.0, 1e-300, 0.1, 2.0, 3.5, 1e10], "{cores} cores");
        }
    }
}
