//! The start times of an open workload: a Poisson process or an even beat.
//!
//! Each thread owns one schedule at its share of the rate, with its own random
//! stream. Times are computed from the previous *intended* time, never from the
//! clock, so a thread that falls behind catches up with a burst of requests whose
//! intended starts are in the past: that is what makes the latency of an open run
//! count from when requests should have started (coordinated omission corrected).
//!
//! With stages the rate changes over time: the schedule then walks the
//! integral of the rate (its "area", a count of requests), one unit (even
//! beat) or one exponential draw (Poisson) per arrival, and maps it back to a
//! time, so that the arrivals by `t` number `area(t)` on average (exactly its
//! floor for the even beat).

use std::sync::Arc;
use std::time::{Duration, Instant};

use rand::Rng;
use rand_distr::{Distribution, Exp1};

use crate::spec::Arrival;
use crate::stages::Stages;

/// Where a staged schedule stands: the area walked so far, scaled to this
/// thread's share of the rate.
#[derive(Debug, Clone)]
struct Profile {
    start: Instant,
    stages: Arc<Stages>,
    /// This thread's share of the rate the stages set.
    scale: f64,
    /// The area (requests at the full rate) of the next arrival.
    pos: f64,
}

/// The next intended start times of one thread's open requests.
#[derive(Debug, Clone)]
pub(crate) struct Schedule {
    next: Instant,
    /// Mean gap between starts, in seconds.
    gap: f64,
    kind: Arrival,
    profile: Option<Profile>,
}

impl Schedule {
    /// A schedule of `rate` starts per second from `start` (the first start is at
    /// `start` itself).
    pub(crate) fn new(start: Instant, rate: f64, kind: Arrival) -> Schedule {
        Schedule {
            next: start,
            gap: 1.0 / rate,
            kind,
            profile: None,
        }
    }

    /// A schedule whose rate follows `stages` times `scale` (this thread's
    /// share); the first arrival comes when one request's worth of area has
    /// passed (one draw, for Poisson).
    pub(crate) fn staged<R: Rng + ?Sized>(
        start: Instant,
        stages: Arc<Stages>,
        scale: f64,
        kind: Arrival,
        rng: &mut R,
    ) -> Schedule {
        let mut s = Schedule {
            next: start,
            gap: 1.0,
            kind,
            profile: Some(Profile {
                start,
                stages,
                scale,
                pos: 0.0,
            }),
        };
        s.advance(rng);
        s
    }

    /// Draws the gap to the next arrival (in time, or in area for a staged
    /// schedule) and moves `next` on.
    fn advance<R: Rng + ?Sized>(&mut self, rng: &mut R) {
        let unit = match self.kind {
            Arrival::Uniform => 1.0,
            Arrival::Poisson => Exp1.sample(rng),
        };
        match &mut self.profile {
            None => self.next += Duration::from_secs_f64(unit * self.gap),
            Some(p) => {
                p.pos += unit;
                self.next = match p.stages.time_of_area(p.pos / p.scale) {
                    Some(t) => p.start + t,
                    // Past the last stage: no more arrivals (the run ends first).
                    None => p.start + p.stages.total() + Duration::from_secs(365 * 86_400),
                };
            }
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
        self.advance(rng);
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
    fn a_staged_even_beat_has_the_area_of_the_ramp() {
        // 0 to 100/s over 10 s, then 100/s for 10 s: 500 + 1000 requests; half
        // of them for a thread with half the rate.
        let t0 = Instant::now();
        let stages: Arc<Stages> = Arc::new("10s:100,10s:100".parse().unwrap());
        let mut rng = Pcg64Mcg::seed_from_u64(1);
        let mut s = Schedule::staged(t0, Arc::clone(&stages), 0.5, Arrival::Uniform, &mut rng);
        let first = drain(&mut s, t0 + Duration::from_millis(10_001), &mut rng);
        assert_eq!(first.len(), 250);
        // The ramp starts slowly: the first arrival is at sqrt(2 * 2 / 100 * 10) s.
        let t1 = first[0].duration_since(t0).as_secs_f64();
        assert!((t1 - 0.632_455).abs() < 1e-3, "{t1}");
        let all = drain(&mut s, t0 + Duration::from_secs(30), &mut rng);
        assert_eq!(first.len() + all.len(), 750);
        assert!(
            s.next() > t0 + Duration::from_secs(1000),
            "none past the end"
        );
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
