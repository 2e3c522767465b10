//! The end of the grace period, for the loops that keep many connections on
//! one thread (the epoll loop, [`super::evloop`], and the ring,
//! [`super::ring`]): once shutdown begins, a loop serves what it has until
//! every connection is done or the grace period is over; then it forces the
//! shutdown, gives up what is left, and waits at most [`AFTER_FORCE`] more
//! for what it cannot take back at once (connections with `event`'s workers,
//! requests the kernel has still to report cancelled) before it stops.
//!
//! The threads of the blocking engines wait theirs in
//! [`super::policy::finish_threads`], and tokio's tasks in
//! `engines::tokio_rt`: what they wait for is threads and tasks, not
//! connections of a loop.

use std::time::{Duration, Instant};

/// After the grace period, how long a loop still waits for what it cannot
/// take back at once: a connection still with a worker (a worker stuck in a
/// long `--work` draw, or gone, must not keep the server from stopping; its
/// socket closes when it lets go), or the kernel's report of a request the
/// ring cancelled (its memory is let go only then).
pub(crate) const AFTER_FORCE: Duration = Duration::from_secs(1);

/// A loop's shutdown: when its grace period ends, and whether it has.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct Grace {
    /// Shutdown has begun; the grace period ends then.
    until: Option<Instant>,
    /// The grace period is over and the loop has been told so.
    forced: bool,
}

/// What a loop does at the top of a turn ([`Grace::at`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Turn {
    /// Serve: wait for the next event.
    Serve,
    /// The grace period is over now: force the shutdown and give up every
    /// connection, then look again.
    Force,
    /// Stop the loop: nothing is left, or [`AFTER_FORCE`] is over too.
    Stop,
}

impl Grace {
    /// Shutdown begins now, with `grace` to finish; false if it had begun.
    pub(crate) fn begin(&mut self, grace: Duration) -> bool {
        if self.until.is_some() {
            return false;
        }
        self.until = Some(Instant::now() + grace);
        true
    }

    /// Has shutdown begun?
    pub(crate) fn begun(&self) -> bool {
        self.until.is_some()
    }

    /// Is the grace period over (and the loop told, [`Turn::Force`])?
    pub(crate) fn forced(&self) -> bool {
        self.forced
    }

    /// What the loop does at `now` with `open` connections left.
    pub(crate) fn at(&mut self, now: Instant, open: usize) -> Turn {
        let Some(until) = self.until else {
            return Turn::Serve;
        };
        if open == 0 {
            return Turn::Stop;
        }
        if now >= until && !self.forced {
            self.forced = true;
            return Turn::Force;
        }
        if now >= until + AFTER_FORCE {
            return Turn::Stop;
        }
        Turn::Serve
    }

    /// The longest a loop may wait before it looks at [`Grace::at`] again.
    pub(crate) fn next(&self) -> Option<Instant> {
        let until = self.until?;
        Some(if self.forced {
            until + AFTER_FORCE
        } else {
            until
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn before_shutdown_the_loop_serves_and_sets_no_deadline() {
        let mut g = Grace::default();
        assert_eq!(g.at(Instant::now(), 0), Turn::Serve);
        assert_eq!(g.next(), None);
        assert!(!g.begun());
    }

    #[test]
    fn a_loop_with_nothing_left_stops_at_once() {
        let mut g = Grace::default();
        assert!(g.begin(Duration::from_secs(10)));
        assert!(!g.begin(Duration::ZERO), "begun once");
        assert_eq!(g.at(Instant::now(), 0), Turn::Stop);
    }

    #[test]
    fn the_grace_period_forces_once_then_stops_after_force() {
        let mut g = Grace::default();
        g.begin(Duration::from_secs(10));
        let until = g.next().unwrap();
        assert_eq!(g.at(until - Duration::from_millis(1), 3), Turn::Serve);
        assert_eq!(g.at(until, 3), Turn::Force);
        assert!(g.forced());
        assert_eq!(g.next(), Some(until + AFTER_FORCE));
        // Told once; then it waits for what is still out.
        assert_eq!(g.at(until, 3), Turn::Serve);
        assert_eq!(g.at(until, 0), Turn::Stop);
        assert_eq!(g.at(until + AFTER_FORCE, 1), Turn::Stop);
    }
}
