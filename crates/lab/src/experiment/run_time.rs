//! How long a run of a plan takes, from the plan alone: per measured point a
//! server start, the warm-up, and between the fewest and the most repeats of
//! its window. `servelab lab list` prints it so that a set of full runs can be
//! sized to a quiet block of machine time before it is started.
//!
//! The overheads are measured on this machine (2 CPUs): starting `servelab
//! serve` and waiting for its port, then stopping it, takes about half a
//! second; each repeat adds the wait for its counter reader and a drain.
//! Simulated points and the simulator's predictions are not counted: they run
//! on every CPU in seconds for the whole run.

use std::fmt;

use super::plan::{Plan, Work};

/// Start and stop of a point's server, seconds.
pub const SERVER_START_S: f64 = 0.5;
/// What a repeat costs beyond its window (counter reader, drain), seconds.
pub const REPEAT_OVERHEAD_S: f64 = 0.2;

/// The estimated wall time of a run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RunTime {
    /// Points measured (servers started).
    pub measured: usize,
    /// Seconds if every point stops at the fewest repeats.
    pub min_s: f64,
    /// Seconds if every point runs to the cap.
    pub cap_s: f64,
}

impl RunTime {
    /// The run time of a planned run, estimated.
    pub fn of(plan: &Plan) -> RunTime {
        let mut e = RunTime {
            measured: 0,
            min_s: 0.0,
            cap_s: 0.0,
        };
        for p in &plan.points {
            let Work::Measure(m) = &p.work else {
                continue;
            };
            e.measured += 1;
            let fixed = SERVER_START_S + m.load.warmup.as_secs_f64();
            let repeat = m.load.duration.as_secs_f64() + REPEAT_OVERHEAD_S;
            e.min_s += fixed + f64::from(plan.repeats) * repeat;
            e.cap_s += fixed + f64::from(plan.max_repeats.max(plan.repeats)) * repeat;
        }
        e
    }

    /// The sum of several estimates.
    pub fn total<'a>(all: impl IntoIterator<Item = &'a RunTime>) -> RunTime {
        all.into_iter().fold(
            RunTime {
                measured: 0,
                min_s: 0.0,
                cap_s: 0.0,
            },
            |a, b| RunTime {
                measured: a.measured + b.measured,
                min_s: a.min_s + b.min_s,
                cap_s: a.cap_s + b.cap_s,
            },
        )
    }
}

impl fmt::Display for RunTime {
    /// "12.5..20.1 min", or "simulated" for a run that measures nothing.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.measured == 0 {
            return write!(f, "simulated");
        }
        write!(f, "{:.1}..{:.1} min", self.min_s / 60.0, self.cap_s / 60.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_plan_costs_start_warmup_and_its_repeats_per_measured_point() {
        let tmp = std::path::Path::new("/tmp/servelab-lab-test");
        let exp = super::super::builtin::load("model-cpu").unwrap();
        let plan = exp
            .plan(&super::super::plan::PlanOptions::sweep(false), tmp)
            .unwrap();
        let e = RunTime::of(&plan);
        let measured = plan
            .points
            .iter()
            .filter(|p| matches!(p.work, Work::Measure(_)))
            .count();
        assert!(measured > 0);
        assert_eq!(e.measured, measured);
        // Each point: start, warm-up of 2 s, 3..5 windows of 10 s (+ overhead).
        let per = |n: f64| SERVER_START_S + 2.0 + n * (10.0 + REPEAT_OVERHEAD_S);
        assert!((e.min_s - measured as f64 * per(3.0)).abs() < 1e-6, "{e:?}");
        assert!((e.cap_s - measured as f64 * per(5.0)).abs() < 1e-6, "{e:?}");
        assert!(e.to_string().ends_with(" min"));
        // A simulated experiment measures nothing.
        let sim = super::super::builtin::load("seed002").unwrap();
        let e = RunTime::of(
            &sim.plan(&super::super::plan::PlanOptions::sweep(false), tmp)
                .unwrap(),
        );
        assert_eq!((e.measured, e.to_string().as_str()), (0, "simulated"));
        let t = RunTime::total(&[e, RunTime::of(&plan)]);
        assert_eq!(t.measured, measured);
    }
}
