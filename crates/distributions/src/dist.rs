//! [`Dist`]: a random non-negative duration, its text form, and its sampling.
//!
//! A constant is kept as an exact [`Duration`] in [`Dist::Const`]: it is the common
//! case (a fixed `--delay`, a `duration = "2s"` field) and callers match on it. Every
//! other form is a [`Random`]: a constant shift plus a base shape, in `f64` seconds,
//! so that sampling is one `match` and one addition. The simulator samples hundreds
//! of millions of times, and a boxed tree would cost a pointer chase per sample.
//!
//! Sampling draws from a caller-owned generator, in a fixed order per form, so a
//! seeded run is repeatable: [`Dist::sample`] draws exactly what the simulator drew
//! before this crate existed (its tests pin those streams).

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use rand::Rng;
use rand_distr::{Distribution, Exp1, StandardNormal};
use serde::{Serialize, Serializer};

use crate::duration::parse_secs_f64;
use crate::error::DistError;

/// A distribution of non-negative durations, parsed from the DIST syntax.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Dist {
    /// Always the same duration.
    Const(Duration),
    /// A random duration: exponential, uniform or lognormal, maybe shifted.
    Random(Random),
}

/// A random (non-constant) distribution: a constant shift in seconds plus a base
/// shape. Built by [`Dist::exp`], [`Dist::uniform`], [`Dist::lognormal`] and
/// [`Dist::shifted`], or parsed.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Random {
    shift: f64,
    shape: Shape,
}

/// The base shape. Lognormal keeps its user-facing parameters (for display) and the
/// derived log-space ones (for sampling).
#[derive(Clone, Copy, Debug, PartialEq)]
enum Shape {
    Exp {
        mean: f64,
    },
    Uniform {
        lo: f64,
        hi: f64,
    },
    LogNormal {
        mean: f64,
        cv: f64,
        mu: f64,
        sigma: f64,
    },
}

impl Shape {
    fn mean(&self) -> f64 {
        match *self {
            Shape::Exp { mean } | Shape::LogNormal { mean, .. } => mean,
            Shape::Uniform { lo, hi } => (lo + hi) / 2.0,
        }
    }

    #[inline]
    fn sample<R: Rng + ?Sized>(&self, rng: &mut R) -> f64 {
        match *self {
            Shape::Exp { mean } => {
                let e: f64 = Exp1.sample(rng);
                e * mean
            }
            Shape::Uniform { lo, hi } => lo + (hi - lo) * rng.random::<f64>(),
            Shape::LogNormal { mu, sigma, .. } => {
                let z: f64 = StandardNormal.sample(rng);
                (mu + sigma * z).exp()
            }
        }
    }

    /// A length-biased sample: density `y f(y) / mean`.
    fn sample_length_biased<R: Rng + ?Sized>(&self, rng: &mut R) -> f64 {
        match *self {
            // Length-biased exponential: Gamma(2, mean).
            Shape::Exp { mean } => {
                let (a, b): (f64, f64) = (Exp1.sample(rng), Exp1.sample(rng));
                (a + b) * mean
            }
            // Density proportional to y on [lo, hi]: invert y^2.
            Shape::Uniform { lo, hi } => {
                (lo * lo + (hi * hi - lo * lo) * rng.random::<f64>()).sqrt()
            }
            // Length-biased lognormal: mu shifted by sigma^2.
            Shape::LogNormal { mu, sigma, .. } => {
                let z: f64 = StandardNormal.sample(rng);
                (mu + sigma * sigma + sigma * z).exp()
            }
        }
    }
}

/// Seconds to a [`Duration`], saturating: a lognormal tail can exceed what a
/// `Duration` holds, and a sample must never panic.
fn to_duration(secs: f64) -> Duration {
    Duration::try_from_secs_f64(secs).unwrap_or(if secs > 0.0 {
        Duration::MAX
    } else {
        Duration::ZERO
    })
}

impl Dist {
    /// The zero duration (no think time, no delay).
    pub const ZERO: Dist = Dist::Const(Duration::ZERO);

    /// A constant duration of `secs` seconds (rounded to the nanosecond; negative or
    /// NaN is zero).
    pub fn constant(secs: f64) -> Dist {
        Dist::Const(to_duration(secs))
    }

    /// An exponential duration with the given mean in seconds.
    pub fn exp(mean: f64) -> Dist {
        Dist::random(Shape::Exp { mean })
    }

    /// A uniform duration on `[lo, hi]` seconds.
    pub fn uniform(lo: f64, hi: f64) -> Dist {
        Dist::random(Shape::Uniform { lo, hi })
    }

    /// A lognormal duration with the given mean (seconds) and coefficient of variation.
    /// A zero `cv` is the constant `mean`.
    pub fn lognormal(mean: f64, cv: f64) -> Dist {
        if cv == 0.0 {
            return Dist::constant(mean);
        }
        // For X = exp(mu + sigma Z): E[X] = exp(mu + sigma^2/2), CV^2 = exp(sigma^2) - 1.
        let sigma2 = (1.0 + cv * cv).ln();
        Dist::random(Shape::LogNormal {
            mean,
            cv,
            mu: mean.ln() - sigma2 / 2.0,
            sigma: sigma2.sqrt(),
        })
    }

    fn random(shape: Shape) -> Dist {
        Dist::Random(Random { shift: 0.0, shape })
    }

    /// This distribution plus a constant `secs` seconds.
    pub fn shifted(self, secs: f64) -> Dist {
        match self {
            Dist::Const(d) => Dist::constant(d.as_secs_f64() + secs),
            Dist::Random(mut r) => {
                r.shift += secs;
                Dist::Random(r)
            }
        }
    }

    /// The constant shift in seconds and the random base shape, if any.
    fn parts(&self) -> (f64, Option<&Shape>) {
        match self {
            Dist::Const(d) => (d.as_secs_f64(), None),
            Dist::Random(r) => (r.shift, Some(&r.shape)),
        }
    }

    /// The mean in seconds.
    pub fn mean(&self) -> f64 {
        let (shift, shape) = self.parts();
        shift + shape.map_or(0.0, Shape::mean)
    }

    /// The mean as a [`Duration`].
    pub fn mean_duration(&self) -> Duration {
        to_duration(self.mean())
    }

    /// The smallest value the distribution can take (its infimum) in seconds.
    pub fn min(&self) -> f64 {
        let (shift, shape) = self.parts();
        shift
            + match shape {
                Some(Shape::Uniform { lo, .. }) => *lo,
                _ => 0.0,
            }
    }

    /// True for a pure (unshifted) exponential: the case the exact model needs for
    /// service times.
    pub fn is_exponential(&self) -> bool {
        matches!(self, Dist::Random(Random { shift, shape: Shape::Exp { .. } }) if *shift == 0.0)
    }

    /// True when every sample is exactly zero (lets a caller skip the timer).
    pub fn is_zero(&self) -> bool {
        matches!(self, Dist::Const(d) if d.is_zero())
    }

    /// Draws one sample in seconds.
    #[inline]
    pub fn sample<R: Rng + ?Sized>(&self, rng: &mut R) -> f64 {
        match self {
            Dist::Const(d) => d.as_secs_f64(),
            Dist::Random(r) => r.shift + r.shape.sample(rng),
        }
    }

    /// Draws one sample as a [`Duration`] (the same draw as [`Dist::sample`], rounded
    /// to the nanosecond; a constant comes back exactly).
    #[inline]
    pub fn sample_duration<R: Rng + ?Sized>(&self, rng: &mut R) -> Duration {
        match self {
            Dist::Const(d) => *d,
            Dist::Random(_) => to_duration(self.sample(rng)),
        }
    }

    /// Draws the time left of an interval of this distribution seen from a random
    /// instant: the stationary residual (forward-recurrence) time, with density
    /// `(1 - F(x)) / mean` and mean `E[X^2] / (2 E[X])`.
    ///
    /// The simulator starts each user at this point of its first think time, which is
    /// where a user found thinking in steady state would be: starting all users at
    /// the beginning of a think time (or at a uniformly scaled one) sends a burst of
    /// arrivals at the start, which overloads a small buffer and biases the drop rate
    /// of short runs (by 12% at 4,000 requests with B = 8). Drawn exactly as `U` times
    /// a length-biased sample (density `x f(x) / mean`).
    pub fn sample_residual<R: Rng + ?Sized>(&self, rng: &mut R) -> f64 {
        let mean = self.mean();
        if mean <= 0.0 {
            return 0.0;
        }
        let (shift, shape) = self.parts();
        // X = shift + Y, so x f(x) = shift f(x) + y f(x): with probability shift/mean the
        // length-biased X is shift + Y, otherwise shift + (length-biased Y). A constant
        // still draws the coin, so the stream is the same as before constants were
        // stored apart.
        let biased = if rng.random::<f64>() * mean < shift {
            shift + shape.map_or(0.0, |s| s.sample(rng))
        } else {
            shift + shape.map_or(0.0, |s| s.sample_length_biased(rng))
        };
        rng.random::<f64>() * biased
    }

    /// Rejects impossible parameters, naming `input` in the error.
    fn check(self, input: &str) -> Result<Dist, DistError> {
        let bad = |why: &str| DistError::BadDist {
            input: input.to_string(),
            why: why.to_string(),
        };
        if let Dist::Random(r) = self {
            match r.shape {
                Shape::Exp { mean } if mean <= 0.0 => {
                    return Err(bad("the exponential mean must be positive"));
                }
                Shape::Uniform { lo, hi } if lo > hi => {
                    return Err(bad("uniform:A..B needs A <= B"));
                }
                Shape::LogNormal { mean, cv, .. } if mean <= 0.0 || cv < 0.0 => {
                    return Err(bad("lognormal:MEAN,CV needs MEAN > 0 and CV >= 0"));
                }
                _ => {}
            }
        }
        Ok(self)
    }
}

impl FromStr for Dist {
    type Err = DistError;

    fn from_str(text: &str) -> Result<Dist, DistError> {
        let t = text.trim();
        let bad = |why: &str| DistError::BadDist {
            input: text.to_string(),
            why: why.to_string(),
        };
        if t.is_empty() {
            return Err(bad(
                "empty; expected e.g. 40ms, exp:0.2s, uniform:4s..10s or 50s+exp:5s",
            ));
        }
        // Shifted form "A+DIST". A '+' may also sit inside an exponent ("1e+3"), so try
        // every '+' whose left side is a plain duration.
        for (i, _) in t.match_indices('+') {
            if let Ok(shift) = parse_secs_f64(&t[..i]) {
                let rest: Dist = t[i + 1..].parse().map_err(|e: DistError| bad(e.why()))?;
                return Ok(rest.shifted(shift));
            }
        }
        // Report a bad number inside a form against the whole text, not the fragment.
        let secs =
            |part: &str| parse_secs_f64(part).map_err(|e| bad(&format!("`{part}`: {}", e.why())));
        let Some((kind, args)) = t.split_once(':') else {
            return parse_secs_f64(t).map(Dist::constant).map_err(|e| {
                if t.starts_with(|c: char| c.is_ascii_digit() || c == '.') {
                    bad(e.why())
                } else {
                    bad("expected a duration (1s) or KIND:ARGS with KIND const, exp, uniform or lognormal")
                }
            });
        };
        let dist = match kind.trim() {
            "const" => Dist::constant(secs(args)?),
            "exp" => Dist::exp(secs(args)?),
            "uniform" => {
                let (a, b) = args
                    .split_once("..")
                    .ok_or_else(|| bad("expected uniform:A..B, e.g. uniform:4s..10s"))?;
                Dist::uniform(secs(a)?, secs(b)?)
            }
            "lognormal" => {
                let (m, cv) = args
                    .split_once(',')
                    .ok_or_else(|| bad("expected lognormal:MEAN,CV, e.g. lognormal:1s,2"))?;
                let cv: f64 = cv
                    .trim()
                    .parse()
                    .map_err(|_| bad("the CV must be a number, like 2"))?;
                if !cv.is_finite() {
                    return Err(bad("the CV must be finite"));
                }
                Dist::lognormal(secs(m)?, cv)
            }
            other => {
                return Err(bad(&format!(
                    "unknown kind `{other}` (use const, exp, uniform or lognormal)"
                )));
            }
        };
        dist.check(text)
    }
}

impl fmt::Display for Dist {
    /// The canonical text, in seconds; it parses back to an equal `Dist`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let r = match self {
            Dist::Const(d) => return write!(f, "const:{}s", d.as_secs_f64()),
            Dist::Random(r) => r,
        };
        if r.shift != 0.0 {
            write!(f, "{}s+", r.shift)?;
        }
        match r.shape {
            Shape::Exp { mean } => write!(f, "exp:{mean}s"),
            Shape::Uniform { lo, hi } => write!(f, "uniform:{lo}s..{hi}s"),
            Shape::LogNormal { mean, cv, .. } => write!(f, "lognormal:{mean}s,{cv}"),
        }
    }
}

impl Serialize for Dist {
    /// Serialized as its text form, which is what a user would type.
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand_pcg::Pcg64Mcg;

    fn d(s: &str) -> Dist {
        s.parse().unwrap()
    }

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn every_form_parses_with_the_right_mean() {
        assert_eq!(d("const:1s").mean(), 1.0);
        assert_eq!(d("40ms").mean(), 0.04);
        assert_eq!(d("exp:6s").mean(), 6.0);
        assert_eq!(d("uniform:4s..10s").mean(), 7.0);
        assert_eq!(d("50s+exp:5s").mean(), 55.0);
        assert_eq!(d("1+2+exp:3").mean(), 6.0);
        assert!((d("lognormal:2s,3").mean() - 2.0).abs() < 1e-12);
        assert!(d("exp:0.2s").is_exponential());
        assert!(!d("1s+exp:0.2s").is_exponential());
        assert!(!d("1s").is_exponential());
        assert_eq!(d("50s+exp:5s").min(), 50.0);
        assert_eq!(d("uniform:4..10").min(), 4.0);
        assert_eq!(d("uniform:4..10").mean_duration(), Duration::from_secs(7));
    }

    #[test]
    fn constants_are_exact_durations() {
        assert_eq!(d("40ms"), Dist::Const(ms(40)));
        assert_eq!(d("const:5ms"), Dist::Const(ms(5)));
        assert_eq!(d("1.5"), Dist::Const(ms(1500)));
        assert_eq!(d("250us"), Dist::Const(Duration::from_micros(250)));
        assert_eq!(d("1s+500ms"), Dist::Const(ms(1500)));
        assert_eq!(d("lognormal:2s,0"), Dist::Const(ms(2000)));
        assert_eq!(Dist::constant(6.0).shifted(1.0), Dist::Const(ms(7000)));
        assert!(Dist::ZERO.is_zero() && d("0s").is_zero());
        assert!(!d("exp:1s").is_zero() && !d("1ns").is_zero());
        assert_eq!(Dist::constant(-1.0), Dist::ZERO);
    }

    #[test]
    fn display_round_trips() {
        for s in [
            "const:1s",
            "const:0.04s",
            "exp:0.2s",
            "uniform:4s..10s",
            "50s+exp:5s",
            "lognormal:1s,2",
        ] {
            let dist = d(s);
            assert_eq!(dist.to_string(), s);
            assert_eq!(d(&dist.to_string()), dist);
        }
    }

    #[test]
    fn bad_input_is_an_error_that_quotes_the_whole_dist() {
        for s in [
            "",
            "exp:",
            "exp:0",
            "exp:zz",
            "uniform:10..4",
            "uniform:4",
            "uniform:5ms",
            "uniform:9ms..1ms",
            "lognormal:1s",
            "lognormal:1s,-1",
            "lognormal:1s,inf",
            "weibull:1",
            "gamma:1s",
            "abc",
            "-1ms",
            "5parsecs",
            "+exp:1",
            "1s+",
            "1s+exp:zz",
            "exp:-2s",
        ] {
            let err = s.parse::<Dist>().unwrap_err();
            assert!(matches!(err, DistError::BadDist { .. }), "{s}: {err}");
            assert!(err.to_string().contains(&format!("`{s}`")), "{err}");
        }
        let why = |s: &str| s.parse::<Dist>().unwrap_err().why().to_string();
        assert!(why("5parsecs").contains("unknown unit"));
        assert!(why("exp:zz").contains("`zz`"));
        assert!(why("1s+exp:0").contains("positive"));
    }

    #[test]
    fn residual_means_are_second_moment_over_twice_the_mean() {
        // E[R] = E[X^2] / (2 E[X]).
        let mut rng = Pcg64Mcg::seed_from_u64(11);
        let cases = [
            ("exp:2s", 8.0 / 4.0),
            ("uniform:4..10", 52.0 / 14.0),
            ("const:7", 3.5),
            ("50s+exp:5s", 3050.0 / 110.0),
            ("lognormal:1s,1", 1.0),
            ("1s+uniform:0..2", (1.0 + 2.0 + 4.0 / 3.0) / 4.0),
        ];
        for (s, want) in cases {
            let dist = d(s);
            let n = 200_000;
            let mean = (0..n).map(|_| dist.sample_residual(&mut rng)).sum::<f64>() / n as f64;
            assert!((mean - want).abs() < 0.02 * want, "{s}: {mean} vs {want}");
        }
        assert_eq!(Dist::constant(0.0).sample_residual(&mut rng), 0.0);
    }

    #[test]
    fn sample_means_match() {
        let mut rng = Pcg64Mcg::seed_from_u64(7);
        for (s, tol) in [
            ("exp:2s", 0.05),
            ("uniform:4..10", 0.05),
            ("50s+exp:5s", 0.1),
            ("lognormal:1s,1", 0.03),
        ] {
            let dist = d(s);
            let n = 100_000;
            let mean = (0..n).map(|_| dist.sample(&mut rng)).sum::<f64>() / n as f64;
            assert!((mean - dist.mean()).abs() < tol, "{s}: {mean}");
            assert!((0..1000).all(|_| dist.sample(&mut rng) >= dist.min()));
        }
    }

    #[test]
    fn duration_samples_are_the_same_draws_in_bounds() {
        let u = d("uniform:10ms..30ms");
        let (mut a, mut b) = (Pcg64Mcg::seed_from_u64(3), Pcg64Mcg::seed_from_u64(3));
        for _ in 0..1000 {
            let x = u.sample_duration(&mut a);
            assert!(x >= ms(10) && x <= ms(30), "{x:?}");
            assert_eq!(x, Duration::from_secs_f64(u.sample(&mut b)));
        }
        assert_eq!(d("40ms").sample_duration(&mut a), ms(40));
        // A huge lognormal tail saturates instead of panicking.
        let wild = Dist::lognormal(1e8, 1e150);
        assert!((0..100).all(|_| wild.sample_duration(&mut a) <= Duration::MAX));
    }
}
