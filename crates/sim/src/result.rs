//! The result of one sweep point: simulated metrics with intervals, the exact
//! solution when there is one, the bounds, and their differences.
//!
//! These structs are the JSON schema (`servelab sim --json`, read by the lab); see
//! [`crate::report`] for the file layout. Every rate is per second, every time in
//! seconds; a metric a replication could not measure (no good completion, hence no
//! response time) is left out of its interval, and an interval from fewer than two
//! values has a `null` half width.

use serde::Serialize;

use crate::bounds::Bounds;
use crate::estimate::Estimate;
use crate::exact::Exact;
use crate::model::Model;
use crate::spec::{RunSpec, Warmup};
use crate::window::{RepMetrics, RepOutput};

/// Simulated metrics of one point, each a mean over replications with its 95%
/// interval.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Metrics {
    /// Completions per second (goodput + badput).
    pub throughput: Estimate,
    /// Completions whose user was still waiting, per second.
    pub goodput: Estimate,
    /// Completions of abandoned (timed-out) requests, per second: wasted work. Zero
    /// with `OnAbandon::Cancel`, which stops them instead (see `cancel_rate`).
    pub badput: Estimate,
    /// R_attempt: mean response time of an attempt that got its answer, from its send
    /// to the answer. What the server sees; what the exact model predicts.
    pub attempt_response_time: Estimate,
    /// R_user: mean response time of a user, from the end of its think time to the
    /// answer, with the timeouts, rejections, retry waits and retries before it. What
    /// `servelab load` measures. Over the answers in the kept window, as
    /// `attempt_response_time` is: so without timeouts or retries it equals R_attempt,
    /// answer for answer. The users still waiting at the end are left out and reported
    /// apart (`users_waiting_at_end`, `users_wait_at_end`); counting them with their
    /// wait so far, as schema 3 did, biased R_user low by about N times their mean
    /// wait over the completions (1.4% at N = 348 in 500 s runs). When many users wait
    /// longer than the run (a collapse), the answers are the short waits only and this
    /// mean is too low: [`LittleCheck`] fails and says so.
    pub user_response_time: Estimate,
    /// User cycles per second: response periods that ended (answered, given up after
    /// the last retry, or blocked by a full buffer with no timeout, which thinks
    /// again). The X of Little's law N = X (R + Z); equal to goodput when every
    /// period ends with an answer.
    pub user_cycle_rate: Estimate,
    /// Mean length of a user's response period, seconds: R_user over every period of
    /// `user_cycle_rate`, given-up and blocked ones included, over the periods that
    /// ended in the window. The R of Little's law.
    pub user_cycle_time: Estimate,
    /// Users in a response period at the end of the run (per replication), left out
    /// of the means above.
    pub users_waiting_at_end: Estimate,
    /// Their mean wait so far at the end of the run, seconds (replications where
    /// nobody waits are left out). Far above `user_cycle_time`, with many waiting:
    /// the run is shorter than their response time.
    pub users_wait_at_end: Estimate,
    /// Median of R_attempt. Percentiles come from an HDR histogram with 3
    /// significant digits: the middle of the bucket that holds the nearest-rank
    /// value, within 0.05% of it (schema 2 gave the exact order statistic, which
    /// needed every completion in memory).
    pub attempt_p50: Estimate,
    /// 90th percentile of R_attempt.
    pub attempt_p90: Estimate,
    /// 99th percentile of R_attempt.
    pub attempt_p99: Estimate,
    /// Median of R_user over the same good completions as `user_response_time`'s
    /// sum: what `servelab load`'s p50 measures. From a second histogram, cut at the
    /// same warm-up as the attempt one. Equal to `attempt_p50`, bucket for bucket,
    /// when nobody retries. Unlike the mean, it leaves out the users still waiting at
    /// the end of the run (a histogram holds answers only).
    pub user_p50: Estimate,
    /// 90th percentile of R_user.
    pub user_p90: Estimate,
    /// 99th percentile of R_user: what `servelab load`'s p99 measures.
    pub user_p99: Estimate,
    /// Fraction of core time doing service (context switches excluded).
    pub utilisation: Estimate,
    /// Fraction of core time spent switching context (busy but useless).
    pub switch_fraction: Estimate,
    /// Attempts that found the buffer full, per second: rejected at once
    /// (`OnFull::Reject`, the real pool's 503s) or dropped silently.
    pub drop_rate: Estimate,
    /// Fraction of attempts sent that were dropped.
    pub drop_fraction: Estimate,
    /// Timeouts per second.
    pub timeout_rate: Estimate,
    /// Users giving up after their last retry, per second.
    pub give_up_rate: Estimate,
    /// Abandoned requests stopped by the server (`OnAbandon::Cancel`), per second:
    /// neither goodput nor badput.
    pub cancel_rate: Estimate,
    /// Time-average number of requests in the buffer.
    pub mean_buffer: Estimate,
    /// Time-average number of requests on the server.
    pub mean_in_system: Estimate,
}

impl Metrics {
    fn from_reps(reps: &[RepMetrics]) -> Metrics {
        let e = |f: fn(&RepMetrics) -> f64| {
            Estimate::from_samples(&reps.iter().map(f).collect::<Vec<_>>())
        };
        Metrics {
            throughput: e(|r| r.throughput),
            goodput: e(|r| r.goodput),
            badput: e(|r| r.badput),
            attempt_response_time: e(|r| r.attempt_response_time),
            user_response_time: e(|r| r.user_response_time),
            user_cycle_rate: e(|r| r.cycle_rate),
            user_cycle_time: e(|r| r.cycle_time),
            users_waiting_at_end: e(|r| r.waiting_at_end),
            users_wait_at_end: e(|r| r.wait_at_end),
            attempt_p50: e(|r| r.p50),
            attempt_p90: e(|r| r.p90),
            attempt_p99: e(|r| r.p99),
            user_p50: e(|r| r.user_p50),
            user_p90: e(|r| r.user_p90),
            user_p99: e(|r| r.user_p99),
            utilisation: e(|r| r.utilisation),
            switch_fraction: e(|r| r.switch_fraction),
            drop_rate: e(|r| r.drop_rate),
            drop_fraction: e(|r| r.drop_fraction),
            timeout_rate: e(|r| r.timeout_rate),
            give_up_rate: e(|r| r.give_up_rate),
            cancel_rate: e(|r| r.cancel_rate),
            mean_buffer: e(|r| r.mean_buffer),
            mean_in_system: e(|r| r.mean_in_system),
        }
    }
}

/// What the warm-up deletion did, averaged over replications.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct WarmupUsed {
    /// The method.
    pub method: Warmup,
    /// Mean number of completions deleted per replication.
    pub mean_deleted: f64,
    /// Mean simulated time at which the kept window starts.
    pub mean_start: f64,
    /// Mean number of completions kept per replication.
    pub mean_kept: f64,
    /// Mean kept window length, seconds of simulated time.
    pub mean_window: f64,
}

/// Little's law on the users' loop, checked at every simulated point: N = X (R + Z),
/// with X the user cycle rate, R the mean response period (`user_cycle_time`) and Z
/// the mean think time of the model.
///
/// Every user is always either thinking or in a response period, so the law holds
/// in a long enough steady-state run: the periods that ended in the window stand for
/// those still open at its end. A point fails it when the run is too short for the
/// response time (users waiting longer than the run never end a period, so X (R + Z)
/// falls short of N by about the users stuck: the collapse warning), when the
/// warm-up cut left a transient, or when there is a bug.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct LittleCheck {
    /// N, the users of the point.
    pub users: f64,
    /// X (R + Z) per replication, its mean and 95% interval over replications.
    pub predicted: Estimate,
    /// predicted / N - 1.
    pub rel_error: f64,
    /// False when the law fails: `rel_error` beyond [`LittleCheck::TOLERANCE`] and
    /// N outside the interval of `predicted` (a larger error that noise explains is
    /// not a failure).
    pub holds: bool,
}

impl LittleCheck {
    /// Relative error up to which the law is taken to hold, whatever the interval:
    /// the "few percent" of METHOD.md. Larger than the end-of-window effects of a
    /// stationary run of thousands of completions, far smaller than the 78% and 85%
    /// that cut-off users caused at the collapse (issue 17).
    pub const TOLERANCE: f64 = 0.05;

    fn new(model: &Model, reps: &[RepMetrics]) -> LittleCheck {
        let z = model.think.mean();
        let predicted = Estimate::from_samples(
            &reps
                .iter()
                .map(|r| r.cycle_rate * (r.cycle_time + z))
                .collect::<Vec<_>>(),
        );
        let users = f64::from(model.users);
        let rel_error = predicted.mean / users - 1.0;
        LittleCheck {
            users,
            predicted,
            rel_error,
            holds: rel_error.abs() <= Self::TOLERANCE || predicted.covers(users),
        }
    }
}

/// Simulation minus exact, where both exist.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Diff {
    /// (X_sim - X_exact) / X_exact.
    pub throughput_rel: f64,
    /// (R_attempt_sim - R_exact) / R_exact (the exact model has no retries: its R is
    /// per attempt).
    pub response_time_rel: f64,
    /// U_sim - U_exact.
    pub utilisation_abs: f64,
    /// Whether the 95% intervals of X and R both cover the exact values.
    pub covered: bool,
}

/// Everything known about one sweep point.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PointResult {
    /// Position in the sweep (also part of the random stream seed).
    pub index: usize,
    /// Number of users N.
    pub users: u32,
    /// The full model of this point.
    pub model: Model,
    /// Replications run (0 for an analytic-only point).
    pub reps: u32,
    /// The warm-up deletion actually applied; `None` for an analytic-only point.
    pub warmup: Option<WarmupUsed>,
    /// Events processed over all replications (stale ones included).
    pub events: u64,
    /// Simulated metrics; `None` for an analytic-only point.
    pub sim: Option<Metrics>,
    /// Little's law on the users' loop; `None` for an analytic-only point.
    pub little: Option<LittleCheck>,
    /// The exact solution, when the model is product-form.
    pub exact: Option<Exact>,
    /// Why there is no exact solution, when there is none.
    pub not_exact_because: Option<String>,
    /// The asymptotic bounds (always).
    pub bounds: Bounds,
    /// Simulation minus exact, when both exist.
    pub diff: Option<Diff>,
}

impl PointResult {
    pub(crate) fn new(
        index: usize,
        model: &Model,
        spec: Option<&RunSpec>,
        outs: &[RepOutput],
    ) -> PointResult {
        let exact = crate::exact::solve(model);
        let reps: Vec<RepMetrics> = outs.iter().map(|o| o.metrics).collect();
        let sim = (!outs.is_empty()).then(|| Metrics::from_reps(&reps));
        let little = (!outs.is_empty()).then(|| LittleCheck::new(model, &reps));
        let warmup = spec.filter(|_| !outs.is_empty()).map(|s| {
            let mean =
                |f: fn(&RepOutput) -> f64| outs.iter().map(f).sum::<f64>() / outs.len() as f64;
            WarmupUsed {
                method: s.warmup,
                mean_deleted: mean(|o| o.warmup_deleted as f64),
                mean_start: mean(|o| o.warmup_time),
                mean_kept: mean(|o| o.kept as f64),
                mean_window: mean(|o| o.metrics.duration),
            }
        });
        let diff = match (&sim, &exact) {
            (Some(s), Some(e)) => Some(Diff {
                throughput_rel: (s.throughput.mean - e.throughput) / e.throughput,
                response_time_rel: (s.attempt_response_time.mean - e.response_time)
                    / e.response_time,
                utilisation_abs: s.utilisation.mean - e.utilisation,
                covered: s.throughput.covers(e.throughput)
                    && s.attempt_response_time.covers(e.response_time),
            }),
            _ => None,
        };
        PointResult {
            index,
            users: model.users,
            model: model.clone(),
            reps: outs.len() as u32,
            warmup,
            events: outs.iter().map(|o| o.events).sum(),
            sim,
            little,
            exact,
            not_exact_because: crate::exact::not_exact_because(model).map(str::to_string),
            bounds: crate::bounds::bounds(model),
            diff,
        }
    }
}
