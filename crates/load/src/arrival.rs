//! The start times of an open workload: a Poisson process or an even beat.
//!
//! Each thread owns one schedule at its share of the rate, with its own random
//! stream. Times are computed from the previous *intended* time, never from the
//! clock, so a thread that falls behind catches up with a burst of requests whose
//! intended starts are in the past: that is what makes the latency of an open run
//! count from when requests should have started (coordinated omission corrected).

use std::time::{Duration, Instant};

use rand::Rng;
use rand_distr::{Distribution, Exp1};

use crate::spec::Arrival;

/// The next intended start times of one thread's open requests.
#[derive(Debug, Clone)]
pub(crate) struct Schedule {
    next: Instant,
    /// Mean gap between starts, in seconds.
    gap: f64,
    kind: Arrival,
}

impl Schedule {
    /// A schedule of `rate` starts per second from `start` (the first start is at
    /// `start` itself).
    pub(crate) fn new(start: Instant, rate: f64, kind: Arrival) -> Schedule {
        Schedule {
            next: start,
            gap: 1.0 / rate,
            kind,
        }
    }

    /// When the next request should start.
    #[inline]
    pub(crate) fn next(&self) -> Instant {
        self.next
    }

    /// Takes the next start time if it is due at `now`, and draws the one after.
    #[inline]
    pub(crate) fn take_due<R: Rng + ?Sized>(
        &mut self,
        now: Instant,
        rng: &mut R,
    ) -> Option<Instant> {
        if self.next > now {
            return None;
        }
        let due = self.next;
        let gap = match self.kind {
            Arrival::Uniform => self.gap,
            Arrival::Poisson => {
                let x: f64 = Exp1.sample(rng);
                x * self.gap
            }
        };
        self.next += Duration::from_secs_f64(gap);
        Some(due)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand_pcg::Pcg64Mcg;

    fn drain(s: &mut Schedule, until: Instant, rng: &mut Pcg64Mcg) -> Vec<Instant> {
        std::iter::from_fn(|| s.take_due(until, rng)).collect()
    }

    #[test]
    fn uniform_starts_are_evenly_spaced_from_the_start() {
        let t0 = Instant::now();
        let mut rng = Pcg64Mcg::seed_from_u64(1);
        let mut s = Schedule::new(t0, 100.0, Arrival::Uniform);
        let starts = drain(&mut s, t0 + Duration::from_millis(95), &mut rng);
        assert_eq!(starts.len(), 10); // 0, 10, ..., 90 ms
        for (i, t) in starts.iter().enumerate() {
            let ms = t.duration_since(t0).as_secs_f64() * 1e3;
            assert!((ms - 10.0 * i as f64).abs() < 1e-6, "{i}: {ms}");
        }
        assert!(s.next() > t0 + Duration::from_millis(95));
    }

    #[test]
    fn poisson_has_the_rate_on_average_and_repeats_under_a_seed() {
        let t0 = Instant::now();
        let end = t0 + Duration::from_secs(100);
        let count = |seed| {
            let mut rng = Pcg64Mcg::seed_from_u64(seed);
            drain(
                &mut Schedule::new(t0, 200.0, Arrival::Poisson),
                end,
                &mut rng,
            )
        };
        let a = count(5);
        // 20,000 expected; the standard deviation of a Poisson count is ~141.
        assert!((a.len() as f64 - 20_000.0).abs() < 1_000.0, "{}", a.len());
        assert_eq!(a, count(5));
        assert_ne!(a, count(6));
    }

    #[test]
    fn a_late_thread_catches_up_with_past_intended_times() {
        let t0 = Instant::now();
        let mut rng = Pcg64Mcg::seed_from_u64(1);
        let mut s = Schedule::new(t0, 1000.0, Arrival::Uniform);
        // Nothing taken for 50 ms: all 51 missed starts come at once, in order.
        let starts = drain(&mut s, t0 + Duration::from_millis(50), &mut rng);
        assert_eq!(starts.len(), 51);
        assert!(starts.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(starts[0], t0);
    }
}
