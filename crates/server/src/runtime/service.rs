//! The service time a worker adds to each request: `--work` (CPU burnt in the
//! handler) and `--delay` (a hold that takes no CPU), drawn from the
//! [`servelab_dist::Dist`]s of the configuration, as in seeds 001 and 002.
//!
//! The drivers burn the work ([`burn`]), so that they can watch the client
//! while it runs and stop it for a client that has gone.
//!
//! Each worker draws from its own generator ([`Service`]), seeded from `--seed`
//! and the worker's index, so draws need no lock and a run is repeatable.

use std::time::Duration;

use rand::SeedableRng;
use rand_pcg::Pcg64Mcg;

use servelab_dist::Dist;

/// A worker's service-time model: what `--delay` and `--work` draw, from the
/// worker's own generator.
#[derive(Debug)]
pub(crate) struct Service {
    delay: Option<Dist>,
    work: Option<Dist>,
    rng: Pcg64Mcg,
}

impl Service {
    /// The model of worker number `index` (workers get distinct streams).
    pub(crate) fn new(delay: Option<Dist>, work: Option<Dist>, seed: u64, index: u64) -> Service {
        // Pcg64Mcg::seed_from_u64 scrambles the seed, so neighbouring indices
        // still give unrelated streams.
        let stream = seed ^ index.wrapping_mul(0x9e37_79b9_7f4a_7c15);
        Service {
            delay: delay.filter(|d| !d.is_zero()),
            work: work.filter(|d| !d.is_zero()),
            rng: Pcg64Mcg::seed_from_u64(stream),
        }
    }

    /// How long to hold the next response back, if at all.
    pub(crate) fn delay(&mut self) -> Option<Duration> {
        let d = self.delay?;
        Some(d.sample_duration(&mut self.rng))
    }

    /// How much CPU to burn for the next request (`--work`), if any; the
    /// driver burns it with [`burn`], watching the client meanwhile.
    pub(crate) fn work(&mut self) -> Option<Duration> {
        let d = self.work?;
        Some(d.sample_duration(&mut self.rng))
    }
}

/// How often [`burn`] asks whether to stop, in CPU time.
const CHECK_EVERY: Duration = Duration::from_millis(1);

/// Burns CPU on the calling thread until its CPU clock reads `until`
/// (`--work`; see [`thread_cpu_time`]), asking `stop` about every
/// millisecond of it whether to give up; true if it did. The deadline is CPU
/// time, not wall time: a handler that needs 10 ms of CPU takes 10 ms alone
/// but 80 ms among 8 threads on one CPU. A wall-clock deadline would end it
/// after 10 ms whatever the sharing, and k threads on one CPU would seem to
/// serve k times as fast.
pub(crate) fn burn(until: Duration, mut stop: impl FnMut() -> bool) -> bool {
    let mut x = 0u64;
    let mut check = thread_cpu_time() + CHECK_EVERY;
    loop {
        let now = thread_cpu_time();
        if now >= until {
            break;
        }
        if now >= check {
            if stop() {
                return true;
            }
            check = now + CHECK_EVERY;
        }
        // The thread clock is a system call (no vDSO), so it is read every
        // 4096 multiplications (a few microseconds), not every 64.
        for i in 0..4096u64 {
            x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(i));
        }
    }
    std::hint::black_box(x);
    false
}

/// CPU time the calling thread has used: the clock [`burn`]'s deadline is on.
pub(crate) fn thread_cpu_time() -> Duration {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
    Duration::new(t.tv_sec as u64, t.tv_nsec as u32)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn draws_are_bounded_repeatable_and_have_the_mean() {
        let u: Dist = "uniform:10ms..30ms".parse().unwrap();
        let mut a = Service::new(Some(u), None, 7, 0);
        let mut b = Service::new(Some(u), None, 7, 0);
        for _ in 0..1000 {
            let x = a.delay().unwrap();
            assert!(x >= ms(10) && x <= ms(30));
            assert_eq!(Some(x), b.delay());
        }
        let mut other = Service::new(Some(u), None, 7, 1);
        let mut a = Service::new(Some(u), None, 7, 0);
        assert!((0..10).any(|_| a.delay() != other.delay()));

        let mut e = Service::new(Some("exp:2ms".parse().unwrap()), None, 1, 0);
        let n = 20_000;
        let mean = (0..n)
            .map(|_| e.delay().unwrap().as_secs_f64())
            .sum::<f64>()
            / f64::from(n);
        // Standard error of the mean is 2ms / sqrt(n) = 14us; allow 5 of them.
        assert!(
            (mean - 0.002).abs() < 5.0 * 0.002 / f64::from(n).sqrt(),
            "{mean}"
        );
    }

    #[test]
    fn shifted_delays_never_fall_below_the_shift() {
        let mut s = Service::new(Some("5ms+exp:1ms".parse().unwrap()), None, 3, 0);
        assert!((0..1000).all(|_| s.delay().unwrap() >= ms(5)));
    }

    #[test]
    fn zero_means_nothing_to_do() {
        let mut s = Service::new(Some(Dist::Const(Duration::ZERO)), None, 0, 0);
        assert_eq!(s.delay(), None);
        assert_eq!(s.work(), None);
    }

    /// Regression: `--work` ended on a wall-clock deadline, so a thread that
    /// was preempted finished with less CPU than it drew, and k threads on one
    /// CPU served k times as fast as one.
    #[test]
    fn burn_runs_out_on_the_threads_cpu_clock_or_stops_when_asked() {
        let until = thread_cpu_time() + ms(5);
        assert!(!burn(until, || false));
        assert!(thread_cpu_time() >= until);
        let mut asked = 0;
        assert!(burn(thread_cpu_time() + Duration::from_secs(60), || {
            asked += 1;
            asked == 3
        }));
        assert_eq!(asked, 3);
    }
}
