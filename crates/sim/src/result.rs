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
use crate::exact::Exact;
use crate::model::Model;
use crate::spec::{RunSpec, Warmup};
use crate::stats::Estimate;
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
    /// `servelab load` measures. Equal to R_attempt when nobody retries.
    pub user_response_time: Estimate,
    /// Median of R_attempt.
    pub attempt_p50: Estimate,
    /// 90th percentile of R_attempt.
    pub attempt_p90: Estimate,
    /// 99th percentile of R_attempt.
    pub attempt_p99: Estimate,
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
            attempt_p50: e(|r| r.p50),
            attempt_p90: e(|r| r.p90),
            attempt_p99: e(|r| r.p99),
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
        let sim = (!outs.is_empty())
            .then(|| Metrics::from_reps(&outs.iter().map(|o| o.metrics).collect::<Vec<_>>()));
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
            exact,
            not_exact_because: crate::exact::not_exact_because(model).map(str::to_string),
            bounds: crate::bounds::bounds(model),
            diff,
        }
    }
}
