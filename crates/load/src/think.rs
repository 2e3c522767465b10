//! The think times closed users actually took, beside the ones they drew.
//!
//! A think is drawn when an answer ends and is served by the loop's timer: it
//! ends when the loop wakes for it and the user starts its next request (sends
//! it on a kept-alive connection; connects first otherwise, a time counted
//! apart in `connect`). The loop's wake-ups are not exact, and a think that
//! runs long lowers the throughput of closed users as surely as a slower
//! server: 20 users with a 10 ms think lost 5–6% of their rate to an
//! `epoll_wait` that rounds its timeout up to the millisecond. So every think
//! that ends in a request is measured, from the end of the answer to the start
//! of the next request, and the report gives the measured mean beside the
//! asked one; Little's law for closed users (`N = X·(R + Z)`) holds with the
//! measured Z, not the asked one.
//!
//! Not counted as Z: the first think of each user (a residual, drawn so that
//! users start spread out), a think cut by the end of the run, one after which
//! the user stops (its quota is done) or waits for a ramp. Their time is the
//! users' all the same, and a window's Little's law needs it (N·T is every
//! second of every user: in requests, connecting, or thinking), so it is
//! added up apart (`uncounted_total_s`). Counting it as half a mean think per
//! user, as the lab once did, made every point with think time miss Little's
//! law the same way: 48 of the 49 such points of the reference runs by −0.2%
//! to −5.6%, where the first and the cut thinks of exponential thinks average
//! a whole mean each.

use std::time::Duration;

use serde::{Deserialize, Serialize};

/// One thread's running totals (added across threads and segments).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct ThinkTotals {
    /// Thinks that ended in a request.
    pub count: u64,
    /// Sum of their draws.
    pub drawn: Duration,
    /// Sum of their measured lengths.
    pub measured: Duration,
    /// Thinks that were no draw of Z (first, cut, or followed by no request).
    pub uncounted: u64,
    /// Their time within the run.
    pub uncounted_time: Duration,
}

impl ThinkTotals {
    /// A think drawn as `drawn` that lasted `measured`.
    #[inline]
    pub(crate) fn record(&mut self, drawn: Duration, measured: Duration) {
        self.count += 1;
        self.drawn += drawn;
        self.measured += measured;
    }

    /// A think that was no draw of Z, or was cut, which lasted `within_run`.
    #[inline]
    pub(crate) fn uncounted(&mut self, within_run: Duration) {
        self.uncounted += 1;
        self.uncounted_time += within_run;
    }

    /// A closed user's think (`from`, and its draw: `None` for a first,
    /// residual think) ends at `now`, in a request when `goes_on`, or not (the
    /// quota is spent, a ramp parks the user): only a drawn think that ends
    /// in a request is a draw of Z; any other is the users' time, uncounted.
    #[inline]
    pub(crate) fn end(
        &mut self,
        think: Option<(std::time::Instant, Option<Duration>)>,
        now: std::time::Instant,
        goes_on: bool,
    ) {
        match think {
            Some((from, Some(drawn))) if goes_on => {
                self.record(drawn, now.saturating_duration_since(from));
            }
            Some((from, _)) => self.uncounted(now.saturating_duration_since(from)),
            None => {}
        }
    }

    pub(crate) fn add(&mut self, o: &ThinkTotals) {
        self.count += o.count;
        self.drawn += o.drawn;
        self.measured += o.measured;
        self.uncounted += o.uncounted;
        self.uncounted_time += o.uncounted_time;
    }
}

/// The think times of a closed run, in the JSON report (`think`), us.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ThinkTimes {
    /// The mean of the think time DIST that was asked for.
    pub asked_mean_us: f64,
    /// Thinks measured (those that ended in a request).
    pub count: u64,
    /// The mean of their draws (the asked mean up to sampling error).
    pub drawn_mean_us: f64,
    /// Their measured mean, from the end of an answer to the start of the
    /// user's next request: the Z of Little's law.
    pub measured_mean_us: f64,
    /// Sum of the draws, s (for merging segments).
    pub drawn_total_s: f64,
    /// Sum of the measured thinks, s (for merging segments).
    pub measured_total_s: f64,
    /// Thinks that are not in `count`: each user's first (a residual), thinks
    /// cut by the end of the run, and thinks after which a user stopped or
    /// waited for a ramp (`0` in a report written before this field).
    #[serde(default)]
    pub uncounted: u64,
    /// Their time within the run, s: the users' time that no measured think
    /// holds (Little's law over a window needs it).
    #[serde(default)]
    pub uncounted_total_s: f64,
}

impl ThinkTimes {
    pub(crate) fn of(asked_mean_s: f64, t: &ThinkTotals) -> ThinkTimes {
        ThinkTimes::from_totals(
            asked_mean_s * 1e6,
            t.count,
            t.drawn.as_secs_f64(),
            t.measured.as_secs_f64(),
            (t.uncounted, t.uncounted_time.as_secs_f64()),
        )
    }

    fn from_totals(
        asked_mean_us: f64,
        count: u64,
        drawn_s: f64,
        measured_s: f64,
        (uncounted, uncounted_s): (u64, f64),
    ) -> ThinkTimes {
        let mean = |total_s: f64| {
            if count == 0 {
                0.0
            } else {
                total_s * 1e6 / count as f64
            }
        };
        ThinkTimes {
            asked_mean_us,
            count,
            drawn_mean_us: mean(drawn_s),
            measured_mean_us: mean(measured_s),
            drawn_total_s: drawn_s,
            measured_total_s: measured_s,
            uncounted,
            uncounted_total_s: uncounted_s,
        }
    }

    /// The thinks of two segments of one run.
    pub(crate) fn merged(&self, o: &ThinkTimes) -> ThinkTimes {
        ThinkTimes::from_totals(
            self.asked_mean_us,
            self.count + o.count,
            self.drawn_total_s + o.drawn_total_s,
            self.measured_total_s + o.measured_total_s,
            (
                self.uncounted + o.uncounted,
                self.uncounted_total_s + o.uncounted_total_s,
            ),
        )
    }

    /// How much longer the measured thinks were than their draws, on average, us.
    pub fn overshoot_us(&self) -> f64 {
        self.measured_mean_us - self.drawn_mean_us
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn means_come_from_totals_and_merge_exactly() {
        let mut a = ThinkTotals::default();
        a.record(Duration::from_millis(10), Duration::from_micros(10_006));
        a.record(Duration::from_millis(20), Duration::from_micros(20_010));
        let t = ThinkTimes::of(0.015, &a);
        assert_eq!(t.count, 2);
        assert!((t.asked_mean_us - 15_000.0).abs() < 1e-6);
        assert!((t.drawn_mean_us - 15_000.0).abs() < 1e-6);
        assert!((t.measured_mean_us - 15_008.0).abs() < 1e-6);
        assert!((t.overshoot_us() - 8.0).abs() < 1e-6);
        let mut b = ThinkTotals::default();
        b.record(Duration::from_millis(30), Duration::from_micros(30_020));
        b.uncounted(Duration::from_millis(7));
        let m = t.merged(&ThinkTimes::of(0.015, &b));
        assert_eq!(m.count, 3);
        assert_eq!(m.uncounted, 1);
        assert!((m.uncounted_total_s - 0.007).abs() < 1e-12);
        assert!((m.measured_mean_us - 20_012.0).abs() < 1e-6);
        let none = ThinkTimes::of(0.01, &ThinkTotals::default());
        assert_eq!((none.count, none.measured_mean_us), (0, 0.0));
    }
}
