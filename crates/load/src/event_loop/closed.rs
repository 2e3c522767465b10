//! Closed users: each sends a request, waits for its answer, thinks, and sends
//! the next, up to its share of the request limit.
//!
//! A user whose connection is open sends its next request from the handler of
//! the previous answer; one that must reconnect waits in the ready queue, drained
//! once per loop turn, so a user whose connects fail at once cannot recurse or
//! starve the loop.

use std::time::Instant;

use super::{ClientLoop, ThreadShare};
use crate::client_conn::{ConnState, Request};

impl ClientLoop {
    /// Closed user: begins its next request, if the run allows one more.
    pub(super) fn start_request(&mut self, i: usize, now: Instant) {
        // A think ends here, in a request or (quota done, ramp) not.
        let think = self.conns[i].think_from.take();
        let goes_on = self.conns[i].quota != 0 && i < self.users_at(now);
        self.rec.thinks.end(think, now, goes_on);
        if self.conns[i].quota == 0 {
            self.close_sock(i);
            self.conns[i].state = ConnState::Stopped;
            self.conns[i].timer.disarm();
            self.active -= 1;
            return;
        }
        if i >= self.users_at(now) {
            return self.park(i);
        }
        self.rec.counts.sent += 1;
        let s = &mut self.conns[i];
        s.quota = s.quota.saturating_sub(u64::from(s.quota != u64::MAX));
        let target = self.cfg.picker.pick(&mut s.rng);
        s.req = Request::new(now, target);
        self.attempt(i, now);
    }

    /// How many of this thread's users the stages allow at `now` (all of them
    /// without stages). Users join in turn across threads: user `i` of thread
    /// `t` of `T` is the `i * T + t`-th of the run.
    pub(super) fn users_at(&self, now: Instant) -> usize {
        let Some((stages, scale)) = &self.cfg.stages else {
            return usize::MAX;
        };
        let level = stages.level(now.saturating_duration_since(self.cfg.start)) * scale;
        thread_users(level, self.cfg.index, self.cfg.threads)
    }

    /// A user above the stages' level waits for the ramp to reach it.
    fn park(&mut self, i: usize) {
        self.close_sock(i);
        let s = &mut self.conns[i];
        s.state = ConnState::Parked;
        s.timer.disarm();
        self.parked.insert(i);
    }

    /// Starts the parked users that the stages' level has reached.
    pub(super) fn unpark(&mut self, now: Instant) {
        if self.parked.is_empty() {
            return;
        }
        let allowed = self.users_at(now);
        while let Some(&i) = self.parked.first() {
            if i >= allowed {
                break;
            }
            self.parked.pop_first();
            self.conns[i].state = ConnState::Idle;
            self.ready.push_back(i);
        }
    }

    /// A closed user's request has ended: think, then go on.
    pub(super) fn after_closed(&mut self, i: usize, now: Instant) {
        let ThreadShare::Closed { think, .. } = self.cfg.share else {
            return;
        };
        let s = &mut self.conns[i];
        s.state = ConnState::Thinking;
        if think.is_zero() {
            if s.sock.is_some() {
                self.start_request(i, now);
            } else {
                self.ready.push_back(i);
            }
        } else {
            let d = think.sample_duration(&mut s.rng);
            s.think_from = Some((now, Some(d)));
            s.timer.arm(now + d, i, &mut self.timers);
        }
    }
}

/// Of a run-wide `level` of users, how many thread `t` of `threads` runs: the
/// run's users are `i * threads + t` for the thread's user `i`, so the first
/// `floor(level)` of the run are spread over the threads in turn.
fn thread_users(level: f64, t: usize, threads: usize) -> usize {
    let n = (level + 1e-9).floor() as usize;
    n.saturating_sub(t).div_ceil(threads.max(1))
}

#[cfg(test)]
mod tests {
    use super::thread_users;

    #[test]
    fn users_join_across_threads_in_turn_and_add_up_to_the_level() {
        for threads in 1..5 {
            for tenths in 0..100 {
                let level = f64::from(tenths) / 10.0;
                let sum: usize = (0..threads).map(|t| thread_users(level, t, threads)).sum();
                assert_eq!(sum, level.floor() as usize, "{level} on {threads}");
            }
        }
        // Three users on two threads: thread 0 runs users 0 and 2, thread 1 user 1.
        assert_eq!((thread_users(1.0, 0, 2), thread_users(1.0, 1, 2)), (1, 0));
        assert_eq!((thread_users(2.0, 0, 2), thread_users(2.0, 1, 2)), (1, 1));
        assert_eq!((thread_users(3.0, 0, 2), thread_users(3.0, 1, 2)), (2, 1));
    }
}
