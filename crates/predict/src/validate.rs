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
use crate::idle::IdleGap;
use crate::judge::{PointError, Target, Verdict};
use crate::staircase::{Load, Step};
use servelab_lab::check::Check;

/// Multiples of the knee measured by default.
pub const KNEE_FACTORS: [f64; 6] = [0.3, 0.7, 1.0, 1.5, 2.0, 3.0];
/// Think time of the default check, in demands: long enough that the knee is
/// a population of several users.
pub const THINK_DEMANDS: f64 = 10.0;

/// Predicted utilisation from which an open stream counts as past the knee.
const SATURATED_PCT: f64 = 99.0;

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
    /// The server's measured CPU per request, ms (D = U/X over the repeats):
    /// set against the model's one demand when a target is missed.
    pub cpu_ms: Option<Estimate>,
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
    /// Errors by metric, (predicted − measured) / measured, each with its
    /// interval and verdict.
    pub errors: Vec<PointError>,
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
    /// Whether every point's error is within the limit (`None`: no target
    /// or no point). The point errors alone: [`Row::verdict`] weighs them
    /// against their intervals.
    pub met: Option<bool>,
    /// Met, missed (some point past the limit by more than its interval) or
    /// inconclusive (`None`: no target or no point).
    pub verdict: Option<Verdict>,
    /// Points where the target was missed.
    pub missed_points: usize,
    /// Points where the measurement could not decide.
    pub inconclusive_points: usize,
    /// What the measurement says about why the target was not met (empty
    /// when met).
    pub why: Vec<String>,
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
    let mean_target = if beyond_knee {
        Target::MeanBeyondKnee
    } else {
        Target::MeanBelowKnee
    };
    // With timeouts, the server's throughput includes requests finished for
    // users who left, which the client cannot see: only goodput is compared.
    let throughput = step
        .load
        .timeout
        .is_none()
        .then(|| PointError::of(Target::Throughput, predicted.throughput, goodput))
        .flatten();
    let errors = [
        throughput,
        PointError::of(Target::Goodput, predicted.goodput, goodput),
        mean_ms
            .zip(predicted.mean_ms)
            .and_then(|(m, p)| PointError::of(mean_target, p, m)),
        p99_ms
            .zip(predicted.p99_ms)
            .and_then(|(m, p)| PointError::of(Target::P99, p, m)),
    ]
    .into_iter()
    .flatten()
    .collect();
    Point {
        load: step.load.clone(),
        beyond_knee,
        goodput,
        mean_ms,
        p99_ms,
        cpu_ms: e(step.sample(|r| r.cpu_ms)),
        unfinished,
        drain_ms,
        predicted,
        steady,
        errors,
        checks: step.checks.clone(),
    }
}

/// The error table over all points, each target judged and, where not
/// met, what the measurement says about why (`window_s`: the windows'
/// length).
pub(crate) fn table(
    points: &[Point],
    fit: &Fit,
    window_s: f64,
    idle: Option<&IdleGap>,
) -> Vec<Row> {
    Target::ALL
        .iter()
        .map(|&target| {
            let errs: Vec<&PointError> = points
                .iter()
                .flat_map(|p| p.errors.iter().filter(|e| e.target == target))
                .collect();
            let abs: Vec<f64> = errs.iter().map(|e| e.pct.abs()).collect();
            let max = abs.iter().copied().reduce(f64::max);
            let limit = target.limit_pct();
            let verdicts: Vec<Verdict> = errs.iter().filter_map(|e| e.verdict).collect();
            let verdict = Verdict::of_all(verdicts.iter().copied());
            let count = |v: Verdict| verdicts.iter().filter(|&&x| x == v).count();
            Row {
                target,
                limit_pct: limit,
                points: abs.len(),
                max_abs_pct: max,
                mean_abs_pct: (!abs.is_empty()).then(|| abs.iter().sum::<f64>() / abs.len() as f64),
                met: limit.zip(max).map(|(l, m)| m <= l),
                verdict,
                missed_points: count(Verdict::Missed),
                inconclusive_points: count(Verdict::Inconclusive),
                why: match verdict {
                    Some(v @ (Verdict::Missed | Verdict::Inconclusive)) => {
                        why(target, v, points, fit, window_s, idle)
                    }
                    _ => Vec::new(),
                },
            }
        })
        .collect()
}

/// What the measurement says about a target that was not met, at the point
/// where its error was largest among those not met.
///
/// Why a diagnosis: a miss reported without a cause sends the reader to the
/// raw data. The causes named here are the ones the measurement itself can
/// show: the server's CPU per request at the missed load against the model's
/// one demand, the step's failed validity checks, and users starved at held
/// workers within a window. Where none shows, the note says so: the error is
/// the model's.
pub(crate) fn why(
    target: Target,
    verdict: Verdict,
    points: &[Point],
    fit: &Fit,
    window_s: f64,
    idle: Option<&IdleGap>,
) -> Vec<String> {
    let worst = points
        .iter()
        .filter_map(|p| {
            let e = p.errors.iter().find(|e| e.target == target)?;
            (e.verdict == Some(verdict)).then_some((p, e))
        })
        .max_by(|a, b| a.1.pct.abs().total_cmp(&b.1.pct.abs()));
    let Some((p, e)) = worst else {
        return Vec::new();
    };
    let at = p.load.describe();
    let mut why = Vec::new();
    if verdict == Verdict::Inconclusive {
        why.push(format!(
            "at {at} the error {:+.1}% is past the {:.0}% target but its 95% interval is {}: \
             the measurement cannot decide; windows longer than {window_s:.1} s (a larger \
             --validate-budget) or more repeats would",
            e.pct,
            target.limit_pct().unwrap_or(f64::NAN),
            e.half_width_pct
                .map_or("unknown (one repeat)".into(), |h| format!("±{h:.1} points")),
        ));
        return why;
    }
    why.push(format!("worst at {at}: {:+.1}%", e.pct));
    // The model's demand with the interval of what it was taken from.
    let from = match fit.demand_from {
        crate::fit::DemandFrom::Cpu => fit.cpu_demand_s,
        crate::fit::DemandFrom::Plateau => fit.plateau_demand_s,
        crate::fit::DemandFrom::ResponseTime => Some(fit.low_load_response_s),
    };
    let demand = Estimate {
        value: fit.demand_s,
        half_width: from.and_then(|d| d.half_width),
    };
    if let Some(c) = p.cpu_ms {
        let d_ms = demand.value * 1e3;
        let apart = (c.value - d_ms).abs()
            > c.half_width.unwrap_or(0.0) + demand.half_width.unwrap_or(0.0) * 1e3;
        if apart && c.half_width.is_some() {
            let source = match fit.demand_from {
                crate::fit::DemandFrom::Cpu => "the staircase's CPU per request",
                crate::fit::DemandFrom::Plateau => {
                    "the plateau c/X_max: the server did not get whole cores in the staircase"
                }
                crate::fit::DemandFrom::ResponseTime => "the response time at one user",
            };
            why.push(format!(
                "the server spent {:.3} ± {:.3} ms of CPU per request there against the \
                 model's one demand D = {d_ms:.3} ms ({:+.0}%; from {source}): the demand \
                 there is not the one the model was given",
                c.value,
                c.half_width.unwrap_or(0.0),
                (c.value - d_ms) / d_ms * 100.0
            ));
        }
    }
    let failed: Vec<&str> = p
        .checks
        .iter()
        .filter(|c| !c.passed)
        .map(|c| c.kind.label())
        .collect();
    if !failed.is_empty() {
        why.push(format!(
            "the measurement there failed its checks ({}): see the point's row",
            failed.join(", ")
        ));
    }
    if let Some(g) = idle.filter(|g| g.costs_more && !p.beyond_knee) {
        why.push(format!(
            "{at} is below the knee, where the server idles between requests, and it is \
             slower after an idle gap than back to back ({}){}",
            g.extra_cpu_ms.filter(|e| e.value > 0.0).map_or_else(
                || "longer response times".to_string(),
                |e| format!("{:+.3} ms of CPU per request", e.value)
            ),
            if fit.idle_demand.is_zero() {
                ": the model has the busy server's demand only"
            } else {
                ": the model takes in the extra CPU after a gap; what is left of the difference is not in the model"
            }
        ));
    }
    if p.predicted.past_held_workers {
        why.push(format!(
            "{at} is past the W workers that connections hold: which users are starved at \
             the accept queue within a {window_s:.1} s window is chance, and R is over the \
             lucky users' answers (measured unfinished: {:.1}, predicted {:.1})",
            p.unfinished.value, p.predicted.users_waiting_at_end.value
        ));
    }
    if why.len() == 1 {
        why.push(
            "the measurement shows no other cause (CPU per request within the model's \
             demand, checks passed): the error is the model's"
                .into(),
        );
    }
    why
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_takes_the_largest_error_and_judges_it_against_the_target() {
        let rows = table(&[], &crate::held::one_core(), 10.0, None);
        assert!(
            rows.iter()
                .all(|r| r.points == 0 && r.met.is_none() && r.verdict.is_none())
        );
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

    /// A measured point at 4 users: goodput 100/s and R 20 ms (±2% over
    /// three repeats), the server's CPU per request `cpu_ms`, against a
    /// prediction of `predicted`/s.
    fn measured(cpu_ms: f64, predicted: f64) -> Point {
        use crate::staircase::{Load, Repeat, closed_step};
        let repeats = [0.98, 1.0, 1.02]
            .iter()
            .map(|j| Repeat {
                completed_per_s: 100.0 * j,
                goodput: 100.0 * j,
                mean_ms: Some(20.0 / j),
                cpu_ms: Some(cpu_ms * j),
                ..Default::default()
            })
            .collect();
        let step = closed_step(4, repeats);
        let f = crate::forecast::fixture(Load::closed(4), predicted, 20.0);
        point(&step, f.clone(), f)
    }

    #[test]
    fn a_miss_names_the_cpu_per_request_that_moved_or_says_the_model_erred() {
        // The fit's one demand is 5 ms.
        let fit = crate::held::one_core();
        // The server spent 4 ms per request here: 25% more throughput than
        // the model's 100/s... measured 100/s against 130/s predicted.
        let moved = [measured(4.0, 130.0)];
        let rows = table(&moved, &fit, 10.0, None);
        let x = rows
            .iter()
            .find(|r| r.target == Target::Throughput)
            .unwrap();
        assert_eq!(x.verdict, Some(Verdict::Missed), "{x:?}");
        assert_eq!((x.missed_points, x.points), (1, 1));
        let why = x.why.join("; ");
        assert!(why.contains("CPU per request"), "{why}");
        assert!(why.contains("4 users"), "{why}");
        // The same miss with the CPU per request at the model's demand:
        // nothing in the measurement explains it.
        let steady = [measured(5.0, 130.0)];
        let rows = table(&steady, &fit, 10.0, None);
        let x = rows
            .iter()
            .find(|r| r.target == Target::Throughput)
            .unwrap();
        let why = x.why.join("; ");
        assert!(!why.contains("CPU per request there"), "{why}");
        assert!(why.contains("the error is the model's"), "{why}");
        // The mean R was predicted right: met, no why.
        let r = rows
            .iter()
            .find(|r| r.target == Target::MeanBelowKnee)
            .unwrap();
        assert_eq!(r.verdict, Some(Verdict::Met), "{r:?}");
        assert!(r.why.is_empty());
    }
}
