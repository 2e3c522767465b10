//! Stages: a load that ramps, `--stages 30s:100,2m:100,30s:0`.
//!
//! Each stage is `DURATION:TARGET`; the load (closed users, or the open rate)
//! moves linearly from the previous stage's target to this one's over the
//! stage's duration, as k6's `stages` do. The first stage starts from 0: k6's
//! `ramping-arrival-rate` starts from `startRate` 0, and its `ramping-vus` from
//! `startVUs`, 1 by default, 0 in its own examples; servelab starts both from 0,
//! so that `10s:100` is a ramp from nothing. A stage of duration 0 jumps.
//!
//! The run lasts the stages' total. Closed users: the run allocates as many users
//! as the highest target; at time `t` the first `floor(level(t))` of them (in an
//! order that takes them from each thread in turn) may start requests; a user
//! above the level finishes its request and its think time and then waits.
//! Open rate: arrivals form a Poisson process (or an even beat) whose rate is
//! `level(t)`, made by time-rescaling: the k-th arrival is at the time when the
//! integral of the rate reaches k (plus exponential gaps for Poisson).

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use crate::error::LoadError;

/// Most stages in one run: a ramp written by hand has a handful.
pub const MAX_STAGES: usize = 1000;

/// One stage: reach `target` linearly over `duration`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Stage {
    /// How long the stage lasts.
    pub duration: Duration,
    /// The load at its end: users, or requests per second.
    pub target: f64,
}

/// A run's stages, in order.
#[derive(Debug, Clone, PartialEq)]
pub struct Stages {
    stages: Vec<Stage>,
}

impl Stages {
    /// The stages, in order.
    pub fn stages(&self) -> &[Stage] {
        &self.stages
    }

    /// The length of the run: every stage's duration, added.
    pub fn total(&self) -> Duration {
        self.stages.iter().map(|s| s.duration).sum()
    }

    /// The highest target.
    pub fn max(&self) -> f64 {
        self.stages.iter().map(|s| s.target).fold(0.0, f64::max)
    }

    /// The stage under way at `t` (0-based; the last one past the end). A
    /// stage covers `[its start, its end)`.
    pub fn index_at(&self, t: Duration) -> usize {
        let mut end = Duration::ZERO;
        for (i, s) in self.stages.iter().enumerate() {
            end += s.duration;
            if t < end {
                return i;
            }
        }
        self.stages.len() - 1
    }

    /// The load at `t`: linear within each stage, from 0 at the start; the
    /// last target past the end.
    pub fn level(&self, t: Duration) -> f64 {
        let t = t.as_secs_f64();
        let (mut from, mut start) = (0.0, 0.0);
        for s in &self.stages {
            let d = s.duration.as_secs_f64();
            if t < start + d {
                return from + (s.target - from) * (t - start) / d;
            }
            from = s.target;
            start += d;
        }
        from
    }

    /// The time at which the integral of the level from 0 reaches `area`
    /// (a number of requests, for a rate), or `None` when it never does
    /// within the stages.
    pub fn time_of_area(&self, area: f64) -> Option<Duration> {
        let (mut from, mut start, mut acc) = (0.0_f64, 0.0_f64, 0.0_f64);
        for s in &self.stages {
            let d = s.duration.as_secs_f64();
            let whole = (from + s.target) / 2.0 * d;
            if acc + whole >= area && d > 0.0 {
                // Solve from*x + slope/2*x^2 = area - acc for x in [0, d].
                let need = area - acc;
                let slope = (s.target - from) / d;
                // The root of slope/2 x^2 + from x - need = 0 that lies in
                // [0, d], in the form that stays exact for a flat stage.
                let disc = (from * from + 2.0 * slope * need).max(0.0);
                let x = if need <= 0.0 {
                    0.0
                } else {
                    2.0 * need / (from + disc.sqrt())
                };
                return Some(Duration::from_secs_f64(start + x.clamp(0.0, d)));
            }
            acc += whole;
            from = s.target;
            start += d;
        }
        None
    }

    /// The integral of the level from 0 to `t`.
    pub fn area(&self, t: Duration) -> f64 {
        let t = t.as_secs_f64();
        let (mut from, mut start, mut acc) = (0.0, 0.0, 0.0);
        for s in &self.stages {
            let d = s.duration.as_secs_f64();
            if t < start + d {
                let x = t - start;
                return acc + from * x + (s.target - from) / d * x * x / 2.0;
            }
            acc += (from + s.target) / 2.0 * d;
            from = s.target;
            start += d;
        }
        acc
    }
}

impl FromStr for Stages {
    type Err = LoadError;
    fn from_str(s: &str) -> Result<Stages, LoadError> {
        let bad = |why: String| LoadError::Spec(format!("--stages `{s}`: {why}"));
        let mut stages = Vec::new();
        for item in s.split(',') {
            let item = item.trim();
            let (d, t) = item
                .split_once(':')
                .ok_or_else(|| bad(format!("`{item}` is not DURATION:TARGET, e.g. 30s:100")))?;
            let duration = servelab_dist::parse_duration(d.trim())
                .map_err(|e| bad(format!("`{item}`: {e}")))?;
            let target = match t.trim().parse::<f64>() {
                Ok(x) if x.is_finite() && x >= 0.0 => x,
                _ => {
                    return Err(bad(format!(
                        "`{item}`: the target `{}` is not a number of users or requests/s",
                        t.trim()
                    )));
                }
            };
            stages.push(Stage { duration, target });
        }
        if stages.len() > MAX_STAGES {
            return Err(bad(format!("more than {MAX_STAGES} stages")));
        }
        let st = Stages { stages };
        if st.total().is_zero() {
            return Err(bad("the stages last no time".to_string()));
        }
        if st.max() <= 0.0 {
            return Err(bad("every target is 0: nothing would run".to_string()));
        }
        Ok(st)
    }
}

/// The canonical form, `30s:100,2m:100,30s:0`, with durations in seconds.
impl fmt::Display for Stages {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, s) in self.stages.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            write!(f, "{}s:{}", s.duration.as_secs_f64(), s.target)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn st(s: &str) -> Stages {
        s.parse().unwrap()
    }

    fn secs(x: f64) -> Duration {
        Duration::from_secs_f64(x)
    }

    #[test]
    fn parses_the_k6_shape_and_prints_canonically() {
        let s = st("30s:100, 2m:100,30s:0");
        assert_eq!(s.stages().len(), 3);
        assert_eq!(s.total(), Duration::from_secs(180));
        assert_eq!(s.max(), 100.0);
        assert_eq!(s.to_string(), "30s:100,120s:100,30s:0");
        assert_eq!(st(&s.to_string()), s);
    }

    #[test]
    fn bad_stages_name_the_flag_and_the_item() {
        for (bad, says) in [
            ("30s", "not DURATION:TARGET"),
            ("soon:10", "`soon:10`"),
            ("10s:-1", "not a number"),
            ("10s:lots", "not a number"),
            ("0s:10", "last no time"),
            ("10s:0", "every target is 0"),
        ] {
            let e = bad.parse::<Stages>().unwrap_err().to_string();
            assert!(e.contains("--stages") && e.contains(says), "{bad}: {e}");
        }
    }

    #[test]
    fn the_level_ramps_linearly_from_zero() {
        let s = st("10s:100,10s:100,5s:0");
        assert_eq!(s.level(secs(0.0)), 0.0);
        assert!((s.level(secs(2.5)) - 25.0).abs() < 1e-9);
        assert!((s.level(secs(15.0)) - 100.0).abs() < 1e-9);
        assert!((s.level(secs(22.5)) - 50.0).abs() < 1e-9);
        assert_eq!(s.level(secs(99.0)), 0.0);
        assert_eq!(
            (
                s.index_at(secs(0.0)),
                s.index_at(secs(10.0)),
                s.index_at(secs(24.9))
            ),
            (0, 1, 2)
        );
        // A zero-length stage jumps.
        let j = st("0s:50,10s:50");
        assert_eq!(j.level(secs(0.0)), 50.0);
    }

    #[test]
    fn area_and_its_inverse_agree() {
        let s = st("10s:100,10s:100,10s:0");
        // 0..10 s: 500; 10..20 s: 1000; 20..30 s: 500.
        assert!((s.area(secs(10.0)) - 500.0).abs() < 1e-6);
        assert!((s.area(secs(30.0)) - 2000.0).abs() < 1e-6);
        for a in [0.5, 1.0, 125.0, 500.0, 700.0, 1600.0, 1999.0] {
            let t = s.time_of_area(a).unwrap();
            assert!((s.area(t) - a).abs() < 1e-6, "{a}: {t:?} {}", s.area(t));
        }
        assert_eq!(s.time_of_area(2000.5), None);
    }
}
