//! Validating: loads that the fit never saw, measured under the same protocol
//! and set against the prediction, each error against the targets.
//!
//! Why these loads: the fit used closed users with no think time; the check
//! uses a think time (the user's, or ten demands) and 0.3 to 3 times its knee,
//! so it covers below, at and past the knee and into overload.

use serde::Serialize;
use servelab_dist::Dist;

use crate::fit::{Estimate, Fit};
use crate::forecast::Forecast;
use crate::staircase::{Load, Step};
use servelab_lab::check::Check;

/// Multiples of the knee measured by default.
pub const KNEE_FACTORS: [f64; 6] = [0.3, 0.7, 1.0, 1.5, 2.0, 3.0];
/// Think time of the default check, in demands: long enough that the knee is
/// a population of several users.
pub const THINK_DEMANDS: f64 = 10.0;

/// Predicted utilisation from which an open stream counts as past the knee.
const SATURATED_PCT: f64 = 99.0;

/// A metric with a target.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Target {
    /// Throughput (2xx answers per second with no timeouts), within 5%.
    Throughput,
    /// Mean response time up to N*, within 10%.
    MeanBelowKnee,
    /// Mean response time past N*, within 15%.
    MeanBeyondKnee,
    /// Goodput, within 10%.
    Goodput,
    /// p99: reported, no target.
    P99,
}

impl Target {
    /// Every metric, in table order.
    pub const ALL: [Target; 5] = [
        Target::Throughput,
        Target::MeanBelowKnee,
        Target::MeanBeyondKnee,
        Target::Goodput,
        Target::P99,
    ];

    /// The largest error allowed, percent (`None`: no target).
    pub fn limit_pct(self) -> Option<f64> {
        match self {
            Target::Throughput => Some(5.0),
            Target::MeanBelowKnee => Some(10.0),
            Target::MeanBeyondKnee => Some(15.0),
            Target::Goodput => Some(10.0),
            Target::P99 => None,
        }
    }

    /// In words, for tables.
    pub fn label(self) -> &'static str {
        match self {
            Target::Throughput => "throughput",
            Target::MeanBelowKnee => "mean R up to N*",
            Target::MeanBeyondKnee => "mean R beyond N*",
            Target::Goodput => "goodput",
            Target::P99 => "p99 R",
        }
    }
}

/// One checked load: measured, predicted, and the errors.
#[derive(Debug, Clone, Serialize)]
pub struct Point {
    /// The load.
    pub load: Load,
    /// Whether the load is past the knee.
    pub beyond_knee: bool,
    /// Measured goodput (2xx per second).
    pub goodput: Estimate,
    /// Measured mean response time, ms.
    pub mean_ms: Option<Estimate>,
    /// Measured p99, ms.
    pub p99_ms: Option<Estimate>,
    /// Measured requests unfinished at a window's end, mean over the
    /// repeats (users starved at held workers among them): in no mean.
    pub unfinished: Estimate,
    /// How long the server took, before each window, to answer a fresh
    /// connection once the previous run had closed its own, ms (mean over
    /// the repeats): the previous run's requests it finished for nobody.
    pub drain_ms: Option<Estimate>,
    /// The prediction, simulated as the step was measured: windows of the
    /// step's length from an empty server and fresh connections
    /// (`forecast::as_measured`). The errors are against it.
    pub predicted: Forecast,
    /// The steady-state prediction at the same load (as `--users` gets it),
    /// for comparison: where it differs from `predicted`, the windows were
    /// too short to reach the steady state (with held workers, shorter than a
    /// connection's life).
    pub steady: Forecast,
    /// Errors, percent, (predicted - measured) / measured, by metric.
    pub errors: Vec<(Target, f64)>,
    /// The measurement's validity checks.
    pub checks: Vec<Check>,
}

/// One metric over all points: the largest and mean absolute error.
#[derive(Debug, Clone, Serialize)]
pub struct Row {
    /// The metric.
    pub target: Target,
    /// Its limit, percent.
    pub limit_pct: Option<f64>,
    /// Points compared.
    pub points: usize,
    /// Largest |error|, percent.
    pub max_abs_pct: Option<f64>,
    /// Mean |error|, percent.
    pub mean_abs_pct: Option<f64>,
    /// Whether every point is within the limit (`None`: no target or no point).
    pub met: Option<bool>,
}

/// The checked loads: the user's think time (or [`THINK_DEMANDS`] demands) at
/// [`KNEE_FACTORS`] times the knee, rounded, each at least one user.
pub(crate) fn loads(fit: &Fit, base: &Load) -> Vec<Load> {
    let think = if base.think.is_zero() {
        Dist::exp(THINK_DEMANDS * fit.demand_s)
    } else {
        base.think
    };
    let at = Load {
        think,
        ..base.clone()
    };
    let knee = crate::forecast::knee(fit, &at);
    let mut users: Vec<u32> = KNEE_FACTORS
        .iter()
        .map(|f| ((f * knee).round() as u32).max(1))
        .collect();
    users.dedup();
    users
        .into_iter()
        .map(|users| Load {
            users,
            ..at.clone()
        })
        .collect()
}

/// Adds users at W and at 2W when the checked loads do not already
/// straddle the W workers that connections hold: a check that stays on one
/// side of W cannot see the limit.
pub(crate) fn straddle(loads: &mut Vec<Load>, workers: u32) {
    let Some(base) = loads.first().cloned() else {
        return;
    };
    let w = workers.max(1);
    let mut extra = Vec::new();
    if !loads.iter().any(|l| l.users <= w) {
        extra.push(w);
    }
    if !loads.iter().any(|l| l.users > w) {
        extra.push(2 * w);
    }
    loads.extend(extra.into_iter().map(|users| Load {
        users,
        ..base.clone()
    }));
    loads.sort_by_key(|l| l.users);
}

/// The open loads the user asked about, with the base's timeouts and retries.
pub(crate) fn open_loads(rates: &[f64], base: &Load) -> Vec<Load> {
    rates
        .iter()
        .map(|&r| Load {
            rate: Some(r),
            think: Dist::ZERO,
            ..base.clone()
        })
        .collect()
}

fn err(pred: f64, meas: f64) -> Option<f64> {
    (meas > 0.0 && pred.is_finite()).then(|| (pred - meas) / meas * 100.0)
}

/// Sets a measured step against its prediction as measured, with the
/// steady state beside it.
pub(crate) fn point(step: &Step, predicted: Forecast, steady: Forecast) -> Point {
    let goodput = step.sample(|r| Some(r.goodput)).map_or(
        Estimate {
            value: 0.0,
            half_width: None,
        },
        |s| Estimate {
            value: s.mean,
            half_width: s.half_width(),
        },
    );
    let e = |s: Option<servelab_lab::sample::Sample>| {
        s.map(|s| Estimate {
            value: s.mean,
            half_width: s.half_width(),
        })
    };
    let mean_ms = e(step.sample(|r| r.mean_ms));
    let p99_ms = e(step.sample(|r| r.p99_ms));
    let drain_ms = e(step.sample(|r| r.drain_ms));
    let unfinished = e(step.sample(|r| Some(r.unfinished as f64))).unwrap_or(Estimate {
        value: 0.0,
        half_width: None,
    });
    // An open stream is past the knee when the model's server is saturated.
    let beyond_knee = match step.load.rate {
        Some(_) => predicted.utilisation_pct.value >= SATURATED_PCT,
        None => f64::from(step.load.users) > predicted.knee_users,
    };
    let mut errors = Vec::new();
    // With timeouts, the server's throughput includes requests finished for
    // users who left, which the client cannot see: only goodput is compared.
    if step.load.timeout.is_none()
        && let Some(x) = err(predicted.throughput.value, goodput.value)
    {
        errors.push((Target::Throughput, x));
    }
    if let Some(x) = err(predicted.goodput.value, goodput.value) {
        errors.push((Target::Goodput, x));
    }
    if let (Some(m), Some(p)) = (&mean_ms, &predicted.mean_ms)
        && let Some(x) = err(p.value, m.value)
    {
        let t = if beyond_knee {
            Target::MeanBeyondKnee
        } else {
            Target::MeanBelowKnee
        };
        errors.push((t, x));
    }
    if let (Some(m), Some(p)) = (&p99_ms, &predicted.p99_ms)
        && let Some(x) = err(p.value, m.value)
    {
        errors.push((Target::P99, x));
    }
    Point {
        load: step.load.clone(),
        beyond_knee,
        goodput,
        mean_ms,
        p99_ms,
        unfinished,
        drain_ms,
        predicted,
        steady,
        errors,
        checks: step.checks.clone(),
    }
}

/// The error table over all points.
pub(crate) fn table(points: &[Point]) -> Vec<Row> {
    Target::ALL
        .iter()
        .map(|&target| {
            let v: Vec<f64> = points
                .iter()
                .flat_map(|p| p.errors.iter().filter(|(t, _)| *t == target))
                .map(|(_, e)| e.abs())
                .collect();
            let max = v.iter().copied().reduce(f64::max);
            let limit = target.limit_pct();
            Row {
                target,
                limit_pct: limit,
                points: v.len(),
                max_abs_pct: max,
                mean_abs_pct: (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64),
                met: limit.zip(max).map(|(l, m)| m <= l),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_takes_the_largest_error_and_judges_it_against_the_target() {
        let rows = table(&[]);
        assert!(rows.iter().all(|r| r.points == 0 && r.met.is_none()));
        assert_eq!(err(105.0, 100.0), Some(5.0));
        assert_eq!(err(1.0, 0.0), None);
    }

    #[test]
    fn the_checked_loads_straddle_the_held_workers() {
        let at = |users| Load {
            users,
            rate: None,
            think: Dist::exp(0.05),
            timeout: None,
            retries: None,
        };
        let users = |v: &[Load]| v.iter().map(|l| l.users).collect::<Vec<_>>();
        // All below W = 6 (prefork's six processes): 2W is added.
        let mut below = vec![at(1), at(2), at(4)];
        straddle(&mut below, 6);
        assert_eq!(users(&below), [1, 2, 4, 12]);
        // All above W = 4: W is added, in order.
        let mut above = vec![at(8), at(16)];
        straddle(&mut above, 4);
        assert_eq!(users(&above), [4, 8, 16]);
        // Already on both sides: unchanged.
        let mut both = vec![at(3), at(9)];
        straddle(&mut both, 4);
        assert_eq!(users(&both), [3, 9]);
    }

    #[test]
    fn open_loads_keep_the_timeouts_and_carry_their_rate() {
        let base = Load {
            users: 1,
            rate: None,
            think: Dist::exp(0.2),
            timeout: Some(Dist::constant(0.5)),
            retries: Some(2),
        };
        let open = open_loads(&[10.0, 40.0], &base);
        assert_eq!(open.len(), 2);
        assert_eq!(open[1].rate, Some(40.0));
        assert!(open[1].think.is_zero());
        assert_eq!(open[0].timeout, base.timeout);
        assert_eq!(open[0].retries, Some(2));
    }
}
