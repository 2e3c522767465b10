//! Service-time distributions for `--delay` and `--work` (seeds 001 and 002).
//!
//! The DIST syntax is the one `servelab load` and `servelab sim` read, so that an
//! experiment describes the server, the load and the model with the same words:
//!
//! - `40ms`, `1.5` (seconds), `250us`: a constant; `const:5ms` spells it out;
//! - `exp:20ms`: exponential with that mean;
//! - `uniform:10ms..30ms`: uniform between the bounds, both included.
//!
//! Each worker draws from its own generator ([`Service`]), seeded from `--seed`
//! and the worker's index, so draws need no lock and a run is repeatable.

use std::fmt;
use std::str::FromStr;
use std::time::{Duration, Instant};

use rand::{Rng, SeedableRng};
use rand_distr::{Distribution, Exp1};
use rand_pcg::Pcg64Mcg;

/// A distribution of durations.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Dist {
    /// Always the same duration.
    Const(Duration),
    /// Exponential with the given mean.
    Exp(Duration),
    /// Uniform between the two bounds (inclusive), `low <= high`.
    Uniform(Duration, Duration),
}

/// A DIST that does not parse; the message says why and shows an example.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("bad distribution `{input}`: {why}")]
pub struct BadDist {
    /// What was given.
    pub input: String,
    /// What is wrong with it.
    pub why: String,
}

impl Dist {
    /// Draws one duration.
    pub fn sample<R: Rng + ?Sized>(&self, rng: &mut R) -> Duration {
        match *self {
            Dist::Const(d) => d,
            Dist::Exp(mean) => {
                let x: f64 = Exp1.sample(rng);
                Duration::from_secs_f64(mean.as_secs_f64() * x)
            }
            Dist::Uniform(lo, hi) if lo == hi => lo,
            Dist::Uniform(lo, hi) => {
                let lo = lo.as_nanos() as u64;
                let hi = hi.as_nanos() as u64;
                Duration::from_nanos(rng.random_range(lo..=hi))
            }
        }
    }

    /// Every draw is zero (so the server can skip the timer or the loop).
    pub fn is_zero(&self) -> bool {
        match *self {
            Dist::Const(d) | Dist::Exp(d) => d.is_zero(),
            Dist::Uniform(_, hi) => hi.is_zero(),
        }
    }
}

impl fmt::Display for Dist {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Dist::Const(d) => write!(f, "const:{d:?}"),
            Dist::Exp(d) => write!(f, "exp:{d:?}"),
            Dist::Uniform(lo, hi) => write!(f, "uniform:{lo:?}..{hi:?}"),
        }
    }
}

impl FromStr for Dist {
    type Err = BadDist;

    fn from_str(input: &str) -> Result<Dist, BadDist> {
        let bad = |why: String| BadDist {
            input: input.to_owned(),
            why,
        };
        let s = input.trim();
        let (kind, rest) = s.split_once(':').unwrap_or(("const", s));
        match kind {
            "const" => Ok(Dist::Const(parse_duration(rest).map_err(bad)?)),
            "exp" => Ok(Dist::Exp(parse_duration(rest).map_err(bad)?)),
            "uniform" => {
                let (lo, hi) = rest.split_once("..").ok_or_else(|| {
                    bad("expected uniform:LOW..HIGH, e.g. uniform:10ms..30ms".into())
                })?;
                let lo = parse_duration(lo).map_err(bad)?;
                let hi = parse_duration(hi).map_err(bad)?;
                if lo > hi {
                    return Err(bad("the low bound is above the high bound".into()));
                }
                Ok(Dist::Uniform(lo, hi))
            }
            other => Err(bad(format!(
                "unknown distribution `{other}` (expected const, exp or uniform, \
                 e.g. 40ms, exp:20ms, uniform:10ms..30ms)"
            ))),
        }
    }
}

/// One duration: `40ms`, `250us`, `10ns`, `2s`, `1m`, `1h` or plain seconds
/// (the same units as `servelab load`'s parser).
fn parse_duration(s: &str) -> Result<Duration, String> {
    let s = s.trim();
    if s.is_empty() {
        return Err("empty duration".into());
    }
    let split = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == 'e' || c == 'E' || c == '+'))
        .unwrap_or(s.len());
    let (num, unit) = s.split_at(split);
    let scale = match unit.trim() {
        "" | "s" => 1.0,
        "ms" => 1e-3,
        "us" | "µs" => 1e-6,
        "ns" => 1e-9,
        "m" | "min" => 60.0,
        "h" => 3600.0,
        other => {
            return Err(format!(
                "unknown unit `{other}` (use ns, us, ms, s, m or h)"
            ));
        }
    };
    let value: f64 = num
        .parse()
        .map_err(|_| format!("`{num}` is not a number"))?;
    let secs = value * scale;
    if !secs.is_finite() || secs < 0.0 {
        return Err("a duration must be a finite, non-negative number".into());
    }
    if secs > 1e9 {
        return Err("duration too large".into());
    }
    Ok(Duration::from_secs_f64(secs))
}

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
        Some(d.sample(&mut self.rng))
    }

    /// Burns a drawn amount of CPU on the calling thread (`--work`). The loop
    /// reads the clock (a vDSO call, no syscall) so it is CPU time spent, not a
    /// sleep, which is what a compute-bound handler looks like to the scheduler.
    pub(crate) fn work(&mut self) {
        let Some(d) = self.work else { return };
        let d = d.sample(&mut self.rng);
        let until = Instant::now() + d;
        let mut x = 0u64;
        while Instant::now() < until {
            for i in 0..64u64 {
                x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(i));
            }
        }
        std::hint::black_box(x);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn parses_every_form() {
        assert_eq!("40ms".parse::<Dist>().unwrap(), Dist::Const(ms(40)));
        assert_eq!("const:5ms".parse::<Dist>().unwrap(), Dist::Const(ms(5)));
        assert_eq!("1.5".parse::<Dist>().unwrap(), Dist::Const(ms(1500)));
        assert_eq!("exp:20ms".parse::<Dist>().unwrap(), Dist::Exp(ms(20)));
        assert_eq!(
            "uniform:10ms..30ms".parse::<Dist>().unwrap(),
            Dist::Uniform(ms(10), ms(30))
        );
    }

    #[test]
    fn bad_input_says_what_and_why() {
        for bad in [
            "",
            "abc",
            "-1ms",
            "5parsecs",
            "uniform:5ms",
            "uniform:9ms..1ms",
            "gamma:1s",
        ] {
            let err = bad.parse::<Dist>().unwrap_err().to_string();
            assert!(err.contains(&format!("`{bad}`")), "{err}");
        }
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
    fn zero_means_nothing_to_do() {
        let mut s = Service::new(Some(Dist::Const(Duration::ZERO)), None, 0, 0);
        assert_eq!(s.delay(), None);
        s.work();
    }
}
