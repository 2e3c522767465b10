//! The end of the grace period, for the loops that keep many connections on
//! one thread (the epoll loop, [`super::evloop`], and the ring,
//! [`super::ring`]): once shutdown begins, a loop serves what it has until
//! every connection is done or the grace period is over; then it forces the
//! shutdown, gives up what is left, and waits at most [`AFTER_FORCE`] more
//! for what it cannot take back at once (connections with `event`'s workers,
//! requests the kernel has still to report cancelled) before it stops.
//!
//! What runs outside a loop keeps the same rule through [`wait_out`]: the
//! pools' threads ([`super::policy::finish_threads`]) and `fork`'s and
//! `prefork`'s child processes wait out the grace period, are forced once,
//! and are waited for at most [`AFTER_FORCE`] more. Only tokio's tasks keep
//! their own ending (`engines::tokio_rt`), because it is an `.await`; it
//! keeps the same bound.

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

/// What a grace period outside a loop waits for: threads, child processes.
pub(crate) trait Outstanding {
    /// Waits until nothing is left or until `until`, whichever comes first
    /// (returning earlier is allowed); how many are left.
    fn wait_until(&mut self, until: Instant) -> usize;
    /// The grace period is over: cut what is left. Called once.
    fn force(&mut self);
}

/// Waits out a grace period of `grace` for `o` by the loops' rule
/// ([`Grace::at`]): until nothing is left or the period ends, then
/// [`Outstanding::force`] once and at most [`AFTER_FORCE`] more. How many
/// were still left when it gave up (0: all done).
pub(crate) fn wait_out(grace: Duration, o: &mut impl Outstanding) -> usize {
    let mut g = Grace::default();
    g.begin(grace);
    loop {
        let left = o.wait_until(g.next().unwrap_or_else(Instant::now));
        match g.at(Instant::now(), left) {
            Turn::Serve => {}
            Turn::Force => o.force(),
            Turn::Stop => return left,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Units that finish at given instants; forcing ends those listed as
    /// yielding to it.
    struct Units {
        ends: Vec<Instant>,
        yield_to_force: bool,
        forced: usize,
    }

    impl Outstanding for Units {
        fn wait_until(&mut self, until: Instant) -> usize {
            let left = |u: &Units| u.ends.iter().filter(|&&e| e > Instant::now()).count();
            while left(self) > 0 && Instant::now() < until {
                std::thread::sleep(Duration::from_millis(1));
            }
            left(self)
        }
        fn force(&mut self) {
            self.forced += 1;
            if self.yield_to_force {
                self.ends.clear();
            }
        }
    }

    #[test]
    fn what_finishes_within_the_grace_period_is_not_forced() {
        let now = Instant::now();
        let mut u = Units {
            ends: vec![now + Duration::from_millis(20), now],
            yield_to_force: true,
            forced: 0,
        };
        assert_eq!(wait_out(Duration::from_secs(5), &mut u), 0);
        assert_eq!(u.forced, 0);
    }

    #[test]
    fn what_outlives_it_is_forced_once_and_waited_for_at_most_after_force() {
        let start = Instant::now();
        let grace = Duration::from_millis(30);
        let mut stubborn = Units {
            ends: vec![start + Duration::from_secs(3600)],
            yield_to_force: false,
            forced: 0,
        };
        assert_eq!(wait_out(grace, &mut stubborn), 1, "given up on");
        assert_eq!(stubborn.forced, 1);
        assert!(start.elapsed() >= grace + AFTER_FORCE);
        let start = Instant::now();
        let mut yielding = Units {
            ends: vec![start + Duration::from_secs(3600)],
            yield_to_force: true,
            forced: 0,
        };
        assert_eq!(wait_out(grace, &mut yielding), 0);
        assert_eq!(yielding.forced, 1);
    }

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
