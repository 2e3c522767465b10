//! Random durations: think times, timeouts and retry waits.
//!
//! The syntax is shared in spirit with `servelab serve --delay` and `servelab sim`, so
//! that one experiment file can describe the server, the simulator and the load with
//! the same words:
//!
//! - `1s`, `40ms`, `250us`, `2m`, or a plain number of seconds (`1.5`): a constant;
//! - `const:1s`: the same, spelled out;
//! - `exp:6s`: exponential with that mean (seed 002's think and service times);
//! - `uniform:4s..10s`: uniform between the two bounds, both included.
//!
//! Samples are drawn from a caller-owned generator so that each simulated user has
//! its own stream and a run is repeatable under `--seed`.

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use rand::Rng;
use rand_distr::{Distribution, Exp1};

use crate::error::LoadError;

/// A distribution of durations, parsed from the DIST syntax.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Dist {
    /// Always the same duration.
    Const(Duration),
    /// Exponential with the given mean.
    Exp(Duration),
    /// Uniform between the two bounds (inclusive), `low <= high`.
    Uniform(Duration, Duration),
}

impl Dist {
    /// The zero duration (no think time).
    pub const ZERO: Dist = Dist::Const(Duration::ZERO);

    /// Draws one duration.
    pub fn sample<R: Rng + ?Sized>(&self, rng: &mut R) -> Duration {
        match *self {
            Dist::Const(d) => d,
            Dist::Exp(mean) => {
                let x: f64 = Exp1.sample(rng);
                Duration::from_secs_f64(mean.as_secs_f64() * x)
            }
            Dist::Uniform(lo, hi) => {
                if lo == hi {
                    lo
                } else {
                    let lo_ns = lo.as_nanos() as u64;
                    let hi_ns = hi.as_nanos() as u64;
                    Duration::from_nanos(rng.random_range(lo_ns..=hi_ns))
                }
            }
        }
    }

    /// The mean of the distribution.
    pub fn mean(&self) -> Duration {
        match *self {
            Dist::Const(d) | Dist::Exp(d) => d,
            Dist::Uniform(lo, hi) => (lo + hi) / 2,
        }
    }

    /// Whether every sample is zero (lets the event loop skip the timer).
    pub fn is_zero(&self) -> bool {
        matches!(*self, Dist::Const(d) if d.is_zero())
    }

    /// The smallest value a sample can take.
    pub fn min(&self) -> Duration {
        match *self {
            Dist::Const(d) => d,
            Dist::Exp(_) => Duration::ZERO,
            Dist::Uniform(lo, _) => lo,
        }
    }
}

impl fmt::Display for Dist {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Dist::Const(d) => write!(f, "const:{}", fmt_duration(*d)),
            Dist::Exp(d) => write!(f, "exp:{}", fmt_duration(*d)),
            Dist::Uniform(lo, hi) => {
                write!(f, "uniform:{}..{}", fmt_duration(*lo), fmt_duration(*hi))
            }
        }
    }
}

impl FromStr for Dist {
    type Err = LoadError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let bad = |why: &str| LoadError::Dist {
            input: s.to_string(),
            why: why.to_string(),
        };
        let s = s.trim();
        let (kind, rest) = match s.split_once(':') {
            Some((k, r)) => (k, r),
            None => ("const", s),
        };
        match kind {
            "const" => Ok(Dist::Const(parse_duration(rest).map_err(|w| bad(&w))?)),
            "exp" => {
                let mean = parse_duration(rest).map_err(|w| bad(&w))?;
                Ok(Dist::Exp(mean))
            }
            "uniform" => {
                let (lo, hi) = rest
                    .split_once("..")
                    .ok_or_else(|| bad("expected uniform:LOW..HIGH, e.g. uniform:4s..10s"))?;
                let lo = parse_duration(lo).map_err(|w| bad(&w))?;
                let hi = parse_duration(hi).map_err(|w| bad(&w))?;
                if lo > hi {
                    return Err(bad("the low bound is above the high bound"));
                }
                Ok(Dist::Uniform(lo, hi))
            }
            other => Err(bad(&format!(
                "unknown distribution `{other}` (expected const, exp or uniform)"
            ))),
        }
    }
}

/// Parses one duration: `1s`, `40ms`, `250us`, `10ns`, `2m`, `1h` or plain seconds.
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    let s = s.trim();
    if s.is_empty() {
        return Err("empty duration".to_string());
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
        return Err("a duration must be a finite, non-negative number".to_string());
    }
    if secs > 1e9 {
        return Err("duration too large".to_string());
    }
    Ok(Duration::from_secs_f64(secs))
}

/// Formats a duration in the shortest exact unit that the parser reads back.
pub(crate) fn fmt_duration(d: Duration) -> String {
    let ns = d.as_nanos();
    if ns == 0 {
        "0s".to_string()
    } else if ns % 1_000_000_000 == 0 {
        format!("{}s", ns / 1_000_000_000)
    } else if ns % 1_000_000 == 0 {
        format!("{}ms", ns / 1_000_000)
    } else if ns % 1_000 == 0 {
        format!("{}us", ns / 1_000)
    } else {
        format!("{ns}ns")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand_pcg::Pcg64Mcg;

    #[test]
    fn parses_every_form() {
        assert_eq!(
            "1s".parse::<Dist>().unwrap(),
            Dist::Const(Duration::from_secs(1))
        );
        assert_eq!(
            "40ms".parse::<Dist>().unwrap(),
            Dist::Const(Duration::from_millis(40))
        );
        assert_eq!(
            "1.5".parse::<Dist>().unwrap(),
            Dist::Const(Duration::from_millis(1500))
        );
        assert_eq!(
            "const:1s".parse::<Dist>().unwrap(),
            Dist::Const(Duration::from_secs(1))
        );
        assert_eq!(
            "exp:6s".parse::<Dist>().unwrap(),
            Dist::Exp(Duration::from_secs(6))
        );
        assert_eq!(
            "uniform:4s..10s".parse::<Dist>().unwrap(),
            Dist::Uniform(Duration::from_secs(4), Duration::from_secs(10))
        );
        assert_eq!(parse_duration("2m").unwrap(), Duration::from_secs(120));
        assert_eq!(parse_duration("250us").unwrap(), Duration::from_micros(250));
    }

    #[test]
    fn rejects_bad_input_with_a_reason() {
        for bad in [
            "",
            "abc",
            "-1s",
            "5parsecs",
            "uniform:5s",
            "uniform:9s..1s",
            "gamma:1s",
        ] {
            let err = bad.parse::<Dist>().unwrap_err().to_string();
            assert!(err.contains(bad.trim()), "{err}");
        }
    }

    #[test]
    fn display_round_trips() {
        for s in [
            "const:1s",
            "exp:6s",
            "uniform:4s..10s",
            "const:40ms",
            "const:250us",
        ] {
            let d: Dist = s.parse().unwrap();
            assert_eq!(d.to_string(), s);
            assert_eq!(d.to_string().parse::<Dist>().unwrap(), d);
        }
    }

    #[test]
    fn samples_stay_in_bounds_and_exp_has_its_mean() {
        let mut rng = Pcg64Mcg::seed_from_u64(7);
        let u: Dist = "uniform:4s..10s".parse().unwrap();
        for _ in 0..1000 {
            let x = u.sample(&mut rng);
            assert!(x >= Duration::from_secs(4) && x <= Duration::from_secs(10));
        }
        let e: Dist = "exp:2s".parse().unwrap();
        let n = 20_000;
        let total: f64 = (0..n).map(|_| e.sample(&mut rng).as_secs_f64()).sum();
        let mean = total / n as f64;
        assert!((mean - 2.0).abs() < 0.1, "mean {mean}");
    }

    #[test]
    fn same_seed_same_samples() {
        let e: Dist = "exp:1s".parse().unwrap();
        let mut a = Pcg64Mcg::seed_from_u64(1);
        let mut b = Pcg64Mcg::seed_from_u64(1);
        for _ in 0..10 {
            assert_eq!(e.sample(&mut a), e.sample(&mut b));
        }
    }
}
