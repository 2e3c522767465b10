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
    use super::*;

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
}
