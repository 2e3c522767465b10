//! The simulator's side of a run: the points of a simulated experiment, the
//! predictions of a measured one, and measured throughput against the exact
//! model.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};

use indicatif::ProgressBar;

use crate::experiment::{Model, Plan, Work};
use crate::metric::Metric;
use crate::store::results::{PointRecord, Stat, Status};

/// Simulates every point of a simulated experiment.
pub(super) fn simulate_all(
    plan: &Plan,
    records: &mut [PointRecord],
    stop: &AtomicBool,
    bar: &ProgressBar,
) {
    for (p, rec) in plan.points.iter().zip(records) {
        let Work::Simulate(model) = &p.work else {
            continue;
        };
        if stop.load(Ordering::Relaxed) {
            rec.status = Status::Skipped;
            rec.reason = Some("interrupted before this point".into());
            continue;
        }
        bar.set_message(rec.label());
        simulate_point(model, rec);
        bar.inc(1);
    }
}

/// The simulator's figures of a point (mean and 95% interval) and the exact
/// model's values and bounds.
fn sim_metrics(r: &servelab_sim::PointResult) -> (BTreeMap<Metric, Stat>, BTreeMap<Metric, f64>) {
    let mut pred = BTreeMap::new();
    let reps = r.reps;
    if let Some(s) = &r.sim {
        // A metric no replication could measure (a response time when no
        // user got an answer) has no mean: it is left out, not written as NaN.
        let mut put = |k: Metric, e: &servelab_sim::Estimate, scale: f64| {
            if !e.mean.is_finite() {
                return;
            }
            let half = if e.half_width.is_finite() {
                e.half_width
            } else {
                0.0
            };
            pred.insert(k, Stat::interval(e.mean * scale, half * scale, reps));
        };
        put(Metric::Throughput, &s.throughput, 1.0);
        put(Metric::Goodput, &s.goodput, 1.0);
        // The user's response time is what `load` measures (from the end of
        // the think time, timeouts and retries included); with no retries it
        // equals the attempt's, which is what the exact model predicts.
        put(Metric::MeanMs, &s.user_response_time, 1000.0);
        put(Metric::AttemptMs, &s.attempt_response_time, 1000.0);
        put(Metric::Badput, &s.badput, 1.0);
        // `load`'s percentiles are of the user's response time (timeouts and
        // retries included), and so are these: the simulator keeps a histogram
        // of each. The attempt's percentiles (what the server sees) would
        // predict a different quantity wherever users retry.
        put(Metric::P50Ms, &s.user_p50, 1000.0);
        put(Metric::P99Ms, &s.user_p99, 1000.0);
        put(Metric::Utilisation, &s.utilisation, 100.0);
        put(Metric::DropRate, &s.drop_rate, 1.0);
        put(Metric::TimeoutRate, &s.timeout_rate, 1.0);
        put(Metric::SwitchPct, &s.switch_fraction, 100.0);
        // The server's abandoned counter: what it finished for nobody and what
        // it cancelled (one of the two is zero under either policy, so the
        // half widths add).
        let (b, c) = (&s.badput, &s.cancel_rate);
        let finite = |h: f64| if h.is_finite() { h } else { 0.0 };
        let half = finite(b.half_width) + finite(c.half_width);
        if (b.mean + c.mean).is_finite() {
            pred.insert(
                Metric::Abandoned,
                Stat::interval(b.mean + c.mean, half, reps),
            );
        }
    }
    let mut exact = BTreeMap::new();
    if let Some(x) = &r.exact {
        exact.insert(Metric::Throughput, x.throughput);
        exact.insert(Metric::MeanMs, x.response_time * 1000.0);
        exact.insert(Metric::Utilisation, x.utilisation * 100.0);
        exact.insert(Metric::DropRate, x.drop_rate);
    }
    exact.insert(Metric::SaturationUsers, r.bounds.saturation_users);
    exact.insert(Metric::ThroughputMax, r.bounds.throughput_max);
    (pred, exact)
}

/// Runs the simulator at one point of a simulated experiment.
fn simulate_point(m: &Model, rec: &mut PointRecord) {
    match servelab_sim::run_point(&m.model, &m.run) {
        Ok(r) => {
            let (pred, exact) = sim_metrics(&r);
            rec.repeats
                .push(pred.iter().map(|(k, s)| (*k, s.mean)).collect());
            rec.summary = pred;
            rec.exact = exact;
            if let Some(why) = &r.not_exact_because {
                rec.notes.push(format!("no exact solution: {why}"));
            }
            rec.command = Some(format!("{} replications of {:?}", m.run.reps, m.run.length));
        }
        Err(e) => {
            rec.status = Status::Failed;
            rec.reason = Some(format!("simulation: {e}"));
        }
    }
}

/// Simulates the model of every measured point (one simulation per distinct model).
pub(super) fn predict(plan: &Plan, records: &mut [PointRecord]) {
    let mut models: Vec<servelab_sim::Model> = Vec::new();
    let mut which = Vec::new();
    let mut run = None;
    for p in &plan.points {
        let Work::Measure(m) = &p.work else {
            which.push(None);
            continue;
        };
        let Some(model) = &m.predict else {
            which.push(None);
            continue;
        };
        let i = models
            .iter()
            .position(|x| *x == model.model)
            .unwrap_or_else(|| {
                models.push(model.model.clone());
                models.len() - 1
            });
        which.push(Some(i));
        run = Some(model.run);
    }
    let Some(run) = run else { return };
    match servelab_sim::run_models(&models, &run) {
        Ok(results) => {
            for (rec, w) in records.iter_mut().zip(which) {
                if let Some(i) = w {
                    let (pred, exact) = sim_metrics(&results[i]);
                    rec.predicted = pred;
                    rec.exact = exact;
                    if let Some(why) = &results[i].not_exact_because {
                        rec.notes.push(format!("no exact solution: {why}"));
                    }
                }
            }
        }
        Err(e) => {
            for rec in records.iter_mut() {
                rec.notes.push(format!("prediction failed: {e}"));
            }
        }
    }
}

/// The exact model's prediction error on throughput, in percent of the
/// measured: (exact − measured) / measured, per repeat, the convention of
/// `servelab predict` and the accuracy table.
pub(super) fn add_model_error(records: &mut [PointRecord]) {
    for rec in records {
        rec.set_model_error();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::results::Figures;
    use servelab_sim::{Dist, Length, RunSpec, Warmup};

    /// Regression: where users timed out and retried, a simulated point had no
    /// predicted p50/p99 (the simulator had only the attempt's percentiles), so
    /// the overload experiments measured their percentiles beside nothing.
    #[test]
    fn predicted_percentiles_are_the_users_also_where_users_retry() {
        let model = servelab_sim::Model {
            users: 300,
            service: Dist::exp(0.25),
            think: Dist::uniform(4.0, 10.0),
            timeout: Some(Dist::exp(5.0).shifted(5.0)),
            ..servelab_sim::Model::default()
        };
        let run = RunSpec {
            reps: 3,
            length: Length::Requests(3000),
            warmup: Warmup::Mser5,
            seed: 17,
        };
        let r = servelab_sim::run_point(&model, &run).unwrap();
        let s = r.sim.unwrap();
        let (pred, _) = sim_metrics(&r);
        let p99 = pred[&Metric::P99Ms];
        assert_eq!(p99.mean, s.user_p99.mean * 1000.0);
        assert_eq!(pred[&Metric::P50Ms].mean, s.user_p50.mean * 1000.0);
        // Retries fired: the user's tail is not the attempt's.
        assert!(
            p99.mean > s.attempt_p99.mean * 1000.0 * 1.1,
            "{p99:?} against attempt {:?}",
            s.attempt_p99
        );
    }

    #[test]
    fn the_exact_models_error_is_in_percent_of_the_measured_throughput() {
        let mut rec = PointRecord {
            index: 0,
            server: Some("pool".into()),
            vars: vec![],
            status: Status::Ok,
            reason: None,
            command: None,
            repeats: [1.0, 5.0, 2.0]
                .iter()
                .map(|v| Figures::from([(Metric::Throughput, *v)]))
                .collect(),
            windows: vec![],
            stopped: None,
            checks: vec![],
            summary: BTreeMap::new(),
            unmeasurable: BTreeMap::new(),
            predicted: BTreeMap::new(),
            exact: BTreeMap::from([(Metric::Throughput, 2.0)]),
            notes: vec![],
        };
        rec.summarise();
        let mut recs = [rec];
        add_model_error(&mut recs);
        // Exact 2 against 1, 5 and 2 measured: +100%, -60%, 0%.
        let e = &recs[0].summary[&Metric::ErrorPct];
        assert_eq!(
            (e.median, e.min, e.max),
            (Some(0.0), Some(-60.0), Some(100.0))
        );
    }
}
