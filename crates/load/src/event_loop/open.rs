//! The open workload: arrivals on a schedule, given to a pool of connections.
//!
//! A request counts as sent when a connection takes it. Until then it is only a
//! start time the schedule has not handed out yet: the backlog of a saturated
//! target is the distance between the schedule and the clock, and costs no
//! memory. Only requests that were sent and timed out wait in memory (the retry
//! table, then `pending`), at most one per connection per timeout.

use std::time::Instant;

use super::ClientLoop;
use crate::client_conn::{ConnState, Request};
use crate::timer::Kind;

/// An open-workload request waiting for a connection or a retry.
#[derive(Debug, Clone, Copy)]
pub(super) struct Pending {
    pub(super) intended: Instant,
    pub(super) attempts: u32,
    pub(super) target: usize,
}

impl ClientLoop {
    /// Whether a connection could take an arrival now (so the loop must wake
    /// for the next one).
    pub(super) fn arrival_can_start(&self) -> bool {
        self.open() && !self.arrivals_done && !(self.idle.is_empty() && self.free.is_empty())
    }

    /// Gives waiting retries, then arrivals that are due, to idle connections
    /// first, then to connections without a socket.
    ///
    /// An arrival is taken from the schedule only when a connection takes it:
    /// until then it is a time in the past that the schedule has not passed
    /// yet, and its latency already runs from it.
    pub(super) fn dispatch(&mut self, now: Instant) {
        while !(self.idle.is_empty() && self.free.is_empty()) {
            let p = if let Some(p) = self.pending.pop_front() {
                p
            } else if self.arrivals_done || self.schedule.next() > now {
                return;
            } else if !self.control.take_ticket() {
                self.arrivals_done = true;
                return;
            } else if let Some(intended) = self.schedule.take_due(now, &mut self.arrival_rng) {
                self.rec.counts.sent += 1;
                Pending {
                    intended,
                    attempts: 0,
                    target: self.cfg.picker.pick(&mut self.arrival_rng),
                }
            } else {
                return; // not due after all (checked above)
            };
            let Some(i) = self.idle.pop().or_else(|| self.free.pop()) else {
                return; // not reached: the loop condition holds one
            };
            self.in_flight += 1;
            let s = &mut self.conns[i];
            s.req = Request::new(p.intended, p.target);
            s.req.attempts = p.attempts;
            self.attempt(i, now);
        }
    }

    /// An open request's connection is free again: it takes the next queued
    /// request, or joins the idle (or, without a socket, the free) list.
    pub(super) fn after_open(&mut self, i: usize, now: Instant) {
        let s = &mut self.conns[i];
        s.state = ConnState::Idle;
        self.in_flight -= 1;
        if s.sock.is_some() {
            self.idle.push(i);
            // A backlog (retries, or arrivals already due) goes out at once.
            self.dispatch(now);
        } else {
            self.free.push(i);
        }
    }

    /// A timed-out request leaves connection `i` and waits until `at` on its own.
    pub(super) fn retry_later(&mut self, i: usize, at: Instant) {
        let s = &mut self.conns[i];
        let p = Pending {
            intended: s.req.intended,
            attempts: s.req.attempts,
            target: s.req.target,
        };
        s.state = ConnState::Idle;
        s.timer.disarm();
        self.in_flight -= 1;
        self.free.push(i);
        let id = self.retry_ids.pop().unwrap_or_else(|| {
            self.retrying.push(None);
            self.retrying.len() - 1
        });
        self.retrying[id] = Some(p);
        self.waiting_retries += 1;
        self.timers.push(at, Kind::Retry { id });
    }

    /// Open workload: the arrivals due before the end that no connection took.
    pub(super) fn count_never_sent(&mut self, end: Instant) {
        let until = self.cfg.deadline.map_or(end, |d| d.min(end));
        let mut arrivals = Arrivals {
            schedule: &mut self.schedule,
            rng: &mut self.arrival_rng,
            control: &self.control,
            done: self.arrivals_done,
        };
        arrivals.count_never_sent(&mut self.rec, until, end);
    }
}

/// An open loop's arrivals, borrowed: what the loops of both protocols share
/// for the end of a run.
pub(super) struct Arrivals<'a> {
    pub(super) schedule: &'a mut crate::arrival::Schedule,
    pub(super) rng: &'a mut rand_pcg::Pcg64Mcg,
    pub(super) control: &'a crate::control::RunControl,
    /// No more arrivals (the request limit was reached).
    pub(super) done: bool,
}

impl Arrivals<'_> {
    /// Counts the arrivals due up to `until` (the end of the run, but none
    /// past its time limit) that no connection took, with their ages at `end`.
    pub(super) fn count_never_sent(
        &mut self,
        rec: &mut crate::metrics::Recorder,
        until: Instant,
        end: Instant,
    ) {
        while !self.done && self.schedule.next() <= until {
            if !self.control.take_ticket() {
                break;
            }
            if let Some(intended) = self.schedule.take_due(until, &mut *self.rng) {
                rec.unfinished(end, intended, false);
            }
        }
    }
}
