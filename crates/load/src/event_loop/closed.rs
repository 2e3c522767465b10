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
        if self.conns[i].quota == 0 {
            self.close_sock(i);
            self.conns[i].state = ConnState::Stopped;
            self.conns[i].timer.disarm();
            self.active -= 1;
            return;
        }
        self.rec.counts.sent += 1;
        let s = &mut self.conns[i];
        s.quota = s.quota.saturating_sub(u64::from(s.quota != u64::MAX));
        let target = self.cfg.picker.pick(&mut s.rng);
        s.req = Request::new(now, target);
        self.attempt(i, now);
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
            s.timer.arm(now + d, i, &mut self.timers);
        }
    }
}
