//! The deadlines of a loop's connections, one heap for the two loops that
//! keep many connections on one thread: epoll's ([`super::evloop`]) and the
//! ring's ([`super::ring`]). Each wakes when the earliest entry comes due
//! ([`Timers::next`]) and hands the entries that did to its connections
//! ([`Timers::due`]).
//!
//! Lazy deletion: a connection keeps the earliest instant it has in the heap
//! (its `armed`), and a deadline that moves later (the usual case: the next
//! request's keep-alive) pushes nothing. When the stale entry comes due, the
//! connection is told [`crate::conn::Event::Deadline`], which changes nothing
//! for a deadline that has moved on, and the loop arms the real one then. So
//! there is about one push per connection per keep-alive period, not per
//! request.
//!
//! An entry names a connection by its place and that place's generation, so
//! that one left behind by a closed connection never reaches the next
//! connection in the same place.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::time::Instant;

/// The heap of a loop's deadlines.
#[derive(Debug, Default)]
pub(crate) struct Timers {
    /// (when, place, generation), earliest first.
    heap: BinaryHeap<Reverse<(Instant, u32, u32)>>,
}

/// An entry that came due, for a place whose generation is still the one it
/// was armed for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Due {
    /// When it was armed for.
    pub(crate) at: Instant,
    /// The connection's place in the loop.
    pub(crate) index: usize,
}

impl Due {
    /// Is this the connection's earliest entry (`armed`)? Then it is
    /// disarmed, and the connection's deadline is to be judged. False for an
    /// entry superseded by an earlier one that already fired.
    #[inline]
    pub(crate) fn fires(&self, armed: &mut Option<Instant>) -> bool {
        if *armed != Some(self.at) {
            return false;
        }
        *armed = None;
        true
    }
}

impl Timers {
    /// Arms the timer of the connection at `index` (generation `gen_`) for
    /// `deadline`; `armed` is that connection's earliest entry. Pushes only
    /// when `deadline` is earlier than it (see "Lazy deletion" above).
    #[inline]
    pub(crate) fn arm(
        &mut self,
        armed: &mut Option<Instant>,
        deadline: Instant,
        index: usize,
        gen_: u32,
    ) {
        if armed.is_none_or(|a| deadline < a) {
            *armed = Some(deadline);
            self.heap.push(Reverse((deadline, index as u32, gen_)));
        }
    }

    /// The earliest entry, stale or not: the loop waits at most until then.
    pub(crate) fn next(&self) -> Option<Instant> {
        self.heap.peek().map(|Reverse((t, _, _))| *t)
    }

    /// Takes the next entry due by `now` whose place is still of the
    /// generation it was armed for (`gens`, by place); entries of closed
    /// connections are dropped on the way.
    pub(crate) fn due(&mut self, now: Instant, gens: &[u32]) -> Option<Due> {
        while let Some(&Reverse((at, index, gen_))) = self.heap.peek() {
            if at > now {
                return None;
            }
            self.heap.pop();
            let index = index as usize;
            if gens.get(index) == Some(&gen_) {
                return Some(Due { at, index });
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn a_later_deadline_pushes_nothing_and_an_earlier_one_supersedes() {
        let t0 = Instant::now();
        let s = Duration::from_secs;
        let mut timers = Timers::default();
        let mut armed = None;
        timers.arm(&mut armed, t0 + s(5), 0, 0);
        // Later: the entry at 5 s stands (lazy deletion).
        timers.arm(&mut armed, t0 + s(9), 0, 0);
        assert_eq!(armed, Some(t0 + s(5)));
        assert_eq!(timers.heap.len(), 1);
        // Earlier: pushed, and it is now the one that fires.
        timers.arm(&mut armed, t0 + s(2), 0, 0);
        assert_eq!(timers.next(), Some(t0 + s(2)));
        let gens = [0];
        let first = timers.due(t0 + s(6), &gens).unwrap();
        assert_eq!(
            first,
            Due {
                at: t0 + s(2),
                index: 0
            }
        );
        assert!(first.fires(&mut armed));
        assert_eq!(armed, None);
        // The entry at 5 s was superseded: it comes due but does not fire.
        let stale = timers.due(t0 + s(6), &gens).unwrap();
        assert!(!stale.fires(&mut armed));
        assert_eq!(timers.due(t0 + s(6), &gens), None);
    }

    #[test]
    fn entries_of_a_closed_connection_never_reach_the_next_in_its_place() {
        let t0 = Instant::now();
        let mut timers = Timers::default();
        let (mut a, mut b) = (None, None);
        timers.arm(&mut a, t0, 3, 7);
        timers.arm(&mut b, t0 + Duration::from_millis(1), 3, 8);
        let mut gens = [0u32; 4];
        gens[3] = 8;
        let due = timers.due(t0 + Duration::from_secs(1), &gens).unwrap();
        assert_eq!(due.index, 3);
        assert_eq!(due.at, t0 + Duration::from_millis(1));
        assert_eq!(timers.due(t0 + Duration::from_secs(1), &gens), None);
    }

    #[test]
    fn nothing_is_due_before_its_time() {
        let t0 = Instant::now();
        let mut timers = Timers::default();
        let mut armed = None;
        timers.arm(&mut armed, t0 + Duration::from_secs(1), 0, 0);
        assert_eq!(timers.due(t0, &[0]), None);
        assert_eq!(timers.next(), Some(t0 + Duration::from_secs(1)));
    }
}
