//! The service time a connection still owes before it may write: the CPU of
//! `--work` to burn, and the `--delay` hold, drawn per request as the request
//! is answered ([`crate::runtime::service::Service`]).
//!
//! Service time = work + delay: a delay drawn alongside work starts only once
//! the work is burnt. Pipelined responses leave together, after the longest
//! hold of the batch.

use std::time::{Duration, Instant};

use crate::runtime::shared::Local;

/// What stands between produced responses and their first byte on the wire.
#[derive(Debug, Default)]
pub(super) struct ServiceTime {
    /// Owed responses may not be written before this (`--delay`).
    hold: Option<Instant>,
    /// CPU to burn before the owed responses (`--work`).
    work: Duration,
    /// The longest `--delay` drawn while work is owed; its hold starts once
    /// the work is done.
    delay_after_work: Option<Duration>,
}

impl ServiceTime {
    /// Draws the work and the delay of one request from this thread's
    /// generators.
    pub(super) fn draw(&mut self, w: &mut Local) {
        if let Some(d) = w.service.work() {
            self.work += d;
        }
        if let Some(d) = w.service.delay() {
            if self.work.is_zero() {
                self.hold_for(d);
            } else {
                self.delay_after_work = Some(self.delay_after_work.map_or(d, |h| h.max(d)));
            }
        }
    }

    /// CPU still to burn.
    pub(super) fn work(&self) -> Duration {
        self.work
    }

    /// The work is burnt: a delay drawn meanwhile starts now.
    pub(super) fn worked(&mut self) {
        self.work = Duration::ZERO;
        if let Some(d) = self.delay_after_work.take() {
            self.hold_for(d);
        }
    }

    /// Until when the responses are held, if they are.
    pub(super) fn hold(&self) -> Option<Instant> {
        self.hold
    }

    /// The hold is over.
    pub(super) fn release(&mut self) {
        self.hold = None;
    }

    /// Nothing is owed any more (the client is gone).
    pub(super) fn clear(&mut self) {
        *self = ServiceTime::default();
    }

    fn hold_for(&mut self, d: Duration) {
        let until = Instant::now() + d;
        self.hold = Some(self.hold.map_or(until, |h| h.max(until)));
    }
}
