//! Sweeps over user counts, run in parallel with rayon.
//!
//! Every (point, replication) pair is one rayon task with its own random stream,
//! seeded from (`seed`, point index, replication index) only. The results are
//! collected in order, so a sweep's output is bit-for-bit the same whatever the number
//! of threads and whatever order rayon runs the tasks in. Flattening points and
//! replications (rather than parallelising points only) keeps both cores busy even
//! when one point, past saturation, is slower than the rest.
//!
//! ```
//! use servelab_sim::{Length, Model, RunSpec, Sweep, Warmup, parse_users, report};
//!
//! let sweep = Sweep { base: Model::default(), users: parse_users("10,144")? };
//! let spec = RunSpec { reps: 3, length: Length::Requests(1_000), warmup: Warmup::Mser5, seed: 7 };
//! let points = sweep.run(&spec)?;
//! assert_eq!(points.len(), 2);
//! assert!(points.iter().all(|p| p.exact.is_some() && p.sim.is_some()));
//! let json = report::to_json(&points, Some(&spec)); // what `--json` writes
//! assert!(json.contains("servelab-sim/4"));
//! print!("{}", report::table(&points, Some(&spec), report::Columns::Fit)); // what `servelab sim` prints
//! # Ok::<(), servelab_sim::SimError>(())
//! ```

use std::io::Write;

use rayon::prelude::*;

use crate::engine::run_replication;
use crate::error::{Result, SimError};
use crate::model::Model;
use crate::result::PointResult;
use crate::spec::RunSpec;
use crate::trace::{NoTrace, TextTrace};
use crate::warmup::close_point;

/// A base model and the user counts to run it at.
#[derive(Clone, Debug, PartialEq)]
pub struct Sweep {
    /// Every field but `users` is taken from here.
    pub base: Model,
    /// The populations, one sweep point each, in output order.
    pub users: Vec<u32>,
}

impl Sweep {
    /// The model of each point.
    pub fn models(&self) -> Vec<Model> {
        self.users
            .iter()
            .map(|&users| Model {
                users,
                ..self.base.clone()
            })
            .collect()
    }

    /// Simulates every point (and solves it exactly where possible).
    pub fn run(&self, spec: &RunSpec) -> Result<Vec<PointResult>> {
        run_models(&self.models(), spec)
    }

    /// Only the exact solutions and bounds, no simulation (instant).
    pub fn analytic(&self) -> Result<Vec<PointResult>> {
        let models = self.models();
        for m in &models {
            m.validate()?;
        }
        Ok(models
            .iter()
            .enumerate()
            .map(|(i, m)| PointResult::new(i, m, None, &[]))
            .collect())
    }
}

/// Simulates one model as point 0 of a sweep.
pub fn run_point(model: &Model, spec: &RunSpec) -> Result<PointResult> {
    Ok(run_models(std::slice::from_ref(model), spec)?.remove(0))
}

/// Simulates a list of models (any fields may differ), point `i` seeded by index `i`.
pub fn run_models(models: &[Model], spec: &RunSpec) -> Result<Vec<PointResult>> {
    spec.validate()?;
    for m in models {
        m.validate()?;
    }
    let reps = spec.reps as usize;
    if models.len().saturating_mul(reps) > 10_000_000 {
        return Err(SimError::InvalidRun(format!(
            "{} points x {reps} replications is more than 10 million runs",
            models.len()
        )));
    }
    // Points in parallel, and the replications of each point in parallel inside it: a
    // point is closed (its warm-up cut chosen over all its replications) as soon as
    // its replications are done, so only the points in progress hold their runs.
    models
        .par_iter()
        .enumerate()
        .map(|(p, m)| {
            let runs = (0..spec.reps)
                .into_par_iter()
                .map(|r| run_replication(m, spec, p, r, &mut NoTrace))
                .collect::<Result<Vec<_>>>()?;
            let outs = close_point(runs, spec.warmup)?;
            Ok(PointResult::new(p, m, Some(spec), &outs))
        })
        .collect()
}

/// [`run_models`] on a dedicated pool of `jobs` OS threads (0: one per CPU), so
/// a caller can measure scaling or leave cores free. Results do not depend on it.
///
/// (Jobs, not threads: a model's threads are the simulated server's, `threads_per_core`.)
pub fn run_models_on(models: &[Model], spec: &RunSpec, jobs: usize) -> Result<Vec<PointResult>> {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(jobs)
        .build()
        .map_err(|e| SimError::InvalidRun(format!("cannot start {jobs} simulation jobs: {e}")))?;
    pool.install(|| run_models(models, spec))
}

/// Runs replication 0 of `model` (as point 0) while writing its event trace to `out`.
/// Meant for small runs: every event is one line.
pub fn trace_replication<W: Write>(model: &Model, spec: &RunSpec, out: W) -> Result<()> {
    let mut tracer = TextTrace::new(out);
    run_replication(model, spec, 0, 0, &mut tracer)?;
    tracer.finish()?;
    Ok(())
}

/// Parses user counts: a list `1,50,144`, a range `1..800:25` (from 1 in steps of 25,
/// and always ending with 800, so `1..800:25` has 33 points), `1..5` (step 1), or a
/// mix `1,10..50:10,100`. Duplicates are kept in order.
pub fn parse_users(text: &str) -> Result<Vec<u32>> {
    let bad = |reason: &str| SimError::BadUsers {
        input: text.to_string(),
        reason: reason.to_string(),
    };
    let num = |s: &str| -> Result<u32> {
        let n: u32 = s
            .trim()
            .parse()
            .map_err(|_| bad(&format!("{s:?} is not a whole number")))?;
        if n == 0 {
            return Err(bad("a point needs at least one user"));
        }
        Ok(n)
    };
    let mut out = Vec::new();
    for part in text.split(',') {
        let part = part.trim();
        if part.is_empty() {
            return Err(bad("empty item; expected e.g. 1..800:25 or 1,50,144"));
        }
        match part.split_once("..") {
            None => out.push(num(part)?),
            Some((a, rest)) => {
                let (b, step) = match rest.split_once(':') {
                    Some((b, step)) => {
                        let step: u32 = step
                            .trim()
                            .parse()
                            .map_err(|_| bad(&format!("step {step:?} is not a whole number")))?;
                        if step == 0 {
                            return Err(bad("the step must be at least 1"));
                        }
                        (b, step)
                    }
                    None => (rest, 1),
                };
                let (a, b) = (num(a)?, num(b)?);
                if a > b {
                    return Err(bad("a range A..B needs A <= B"));
                }
                if (b - a) / step > 1_000_000 {
                    return Err(bad("more than a million points"));
                }
                let mut n = a;
                while n < b {
                    out.push(n);
                    n = n.saturating_add(step);
                }
                out.push(b);
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use servelab_dist::Dist;

    use super::*;
    use crate::estimate::Estimate;
    use crate::spec::{Length, Warmup};
    use crate::warmup::{cut, pooled_cut};
    use crate::window::Replication;

    #[test]
    fn user_lists_and_ranges() {
        let seed = parse_users("1..800:25").unwrap();
        assert_eq!(seed.len(), 33);
        assert_eq!((seed[0], seed[1], seed[31], seed[32]), (1, 26, 776, 800));
        assert_eq!(parse_users("1,50,144, 300").unwrap(), [1, 50, 144, 300]);
        assert_eq!(parse_users("1..4").unwrap(), [1, 2, 3, 4]);
        assert_eq!(
            parse_users("0..100:50")
                .map_err(|e| e.to_string())
                .unwrap_err(),
            "bad user list \"0..100:50\": a point needs at least one user"
        );
        assert_eq!(parse_users("5..5:3").unwrap(), [5]);
        assert!(parse_users("10..1").is_err());
        for bad in [
            "", "a", "1,,2", "1..", "1..10:0", "-3", "1..10:x", "1..10:-1",
        ] {
            assert!(parse_users(bad).is_err(), "{bad}");
        }
    }

    // Tests of a replication and its warm-up cut together: here, where the two
    // meet, so that neither `engine` nor `warmup` imports the other.

    /// Closing at a cut runs the replication again to it: the kept part then is
    /// what a run that opened its window at the cut would have kept.
    #[test]
    fn closing_at_a_cut_repeats_the_run_up_to_it() {
        let m = Model {
            users: 60,
            ..Model::default()
        };
        let spec = RunSpec {
            reps: 1,
            length: Length::Requests(2_000),
            warmup: Warmup::Mser5,
            seed: 9,
        };
        let r = run_replication(&m, &spec, 0, 0, &mut NoTrace).unwrap();
        let all = r.close(0).unwrap();
        let cut = r.close(200).unwrap();
        assert_eq!((cut.warmup_deleted, cut.kept), (200, 1_800));
        assert!(cut.warmup_time > all.warmup_time);
        assert!((cut.metrics.duration + cut.warmup_time - all.metrics.duration).abs() < 1e-9);
        // The first 200 completions and the last 1,800 add up to the whole window.
        let whole = all.metrics.throughput * all.metrics.duration;
        let parts = cut.metrics.throughput * cut.metrics.duration + 200.0;
        assert!((whole - parts).abs() < 1e-6, "{whole} against {parts}");
    }

    fn env(name: &str, default: u64) -> u64 {
        std::env::var(name)
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(default)
    }

    /// The measurement behind the choice of cut (see the module doc): at the knee of
    /// several product-form models, how often the 95% interval of R covers the exact
    /// value, with each cut applied to the same replications. Prints a table; asserts
    /// nothing. `SIM_COVERAGE_REPS`, `_REQUESTS`, `_EXPERIMENTS`, `_POINTS` change its size.
    #[test]
    #[ignore = "minutes in release: cargo test --release -p servelab-sim --lib coverage_grid -- --ignored --nocapture"]
    fn coverage_grid() {
        let reps = env("SIM_COVERAGE_REPS", 100) as u32;
        let requests = env("SIM_COVERAGE_REQUESTS", 20_000);
        let experiments = env("SIM_COVERAGE_EXPERIMENTS", 20);
        let points = env("SIM_COVERAGE_POINTS", 5) as usize;
        // (cores, S, Z): N* = c (S + Z) / S.
        let grid = [
            (8, 0.1, 7.0),
            (4, 0.2, 7.0),
            (1, 0.1, 7.0),
            (16, 0.1, 7.0),
            (4, 0.1, 1.0),
        ];
        println!("{reps} replications x {requests} requests, {experiments} experiments a point");
        println!("   c    S    Z     N  method       cover R  cover X   mean dR%  deleted%");
        for (cores, s, z) in grid.into_iter().take(points) {
            let users = (f64::from(cores) * (s + z) / s).round() as u32;
            let m = Model {
                users,
                cores,
                service: Dist::exp(s),
                think: Dist::exp(z),
                buffer: 100_000,
                ..Model::default()
            };
            let exact = crate::exact::solve(&m).unwrap();
            let names = ["each", "largest-each", "pooled"];
            let mut cover = [[0u32; 2]; 3];
            let mut err = [0.0; 3];
            let mut deleted = [0.0; 3];
            for e in 0..experiments {
                let spec = RunSpec {
                    reps,
                    length: Length::Requests(requests),
                    warmup: Warmup::Mser5,
                    seed: 1000 + e,
                };
                let runs: Vec<Replication> = (0..reps)
                    .into_par_iter()
                    .map(|r| run_replication(&m, &spec, 0, r, &mut NoTrace).unwrap())
                    .collect();
                let each: Vec<u64> = runs.iter().map(|r| cut(r.series())).collect();
                let largest = each.iter().copied().max().unwrap_or(0);
                let pooled = pooled_cut(&runs);
                for (i, outs) in [
                    runs.iter()
                        .zip(&each)
                        .map(|(r, &d)| r.close(d).unwrap())
                        .collect::<Vec<_>>(),
                    runs.iter().map(|r| r.close(largest).unwrap()).collect(),
                    runs.iter().map(|r| r.close(pooled).unwrap()).collect(),
                ]
                .iter()
                .enumerate()
                {
                    let rt = Estimate::from_samples(
                        &outs
                            .iter()
                            .map(|o| o.metrics.attempt_response_time)
                            .collect::<Vec<_>>(),
                    );
                    let x = Estimate::from_samples(
                        &outs
                            .iter()
                            .map(|o| o.metrics.throughput)
                            .collect::<Vec<_>>(),
                    );
                    cover[i][0] += u32::from(rt.covers(exact.response_time));
                    cover[i][1] += u32::from(x.covers(exact.throughput));
                    err[i] += (rt.mean / exact.response_time - 1.0) / experiments as f64;
                    deleted[i] += outs.iter().map(|o| o.warmup_deleted as f64).sum::<f64>()
                        / (f64::from(reps) * requests as f64 * experiments as f64);
                }
            }
            for i in 0..3 {
                println!(
                    "{cores:>4} {s:>4} {z:>4} {users:>5}  {:<12} {:>6.0}%  {:>6.0}%  {:>+8.2}  {:>8.1}",
                    names[i],
                    100.0 * f64::from(cover[i][0]) / experiments as f64,
                    100.0 * f64::from(cover[i][1]) / experiments as f64,
                    100.0 * err[i],
                    100.0 * deleted[i]
                );
            }
        }
    }
}
