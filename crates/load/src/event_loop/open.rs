//! The open workload: arrivals on a schedule, given to a pool of connections.

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
    pub(super) fn arrivals(&mut self, now: Instant) {
        while !self.arrivals_done {
            if self.schedule.next() > now {
                break;
            }
            if !self.control.take_ticket() {
                self.arrivals_done = true;
                break;
            }
            let Some(intended) = self.schedule.take_due(now, &mut self.arrival_rng) else {
                break;
            };
            let target = self.cfg.picker.pick(&mut self.arrival_rng);
            self.pending.push_back(Pending {
                intended,
                attempts: 0,
                target,
            });
        }
    }

    /// Open workload: gives queued requests to idle connections, then to free conns.
    pub(super) fn dispatch(&mut self, now: Instant) {
        while let Some(&p) = self.pending.front() {
            let i = if let Some(i) = self.idle.pop() {
                i
            } else if let Some(i) = self.free.pop() {
                i
            } else {
                break;
            };
            self.pending.pop_front();
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
            if !self.pending.is_empty() {
                self.dispatch(now);
            }
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
}
