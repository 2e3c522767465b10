//! Behaviour of the simulator against theory: one integration binary, one file per
//! behaviour. Every run is seeded (deterministic) and small enough for a debug build.
//!
//! About coverage checks: a correct simulator misses a 95% interval one time in
//! twenty, so a test that checks m intervals at 95% each fails by chance far more
//! often than that (one try with 16 checks: up to 56%). Each test therefore checks its
//! m intervals at the Bonferroni level 1 - 0.05/m, which keeps the chance of any
//! false alarm in the test below 5% whatever the seed, and the failure message also
//! says whether the plain 95% interval covers. Seeds were fixed once, not hunted for.

mod bounds_hold;
mod determinism;
mod exact_agreement;
mod scheduling;
mod timeouts;

use servelab_sim::{Dist, Estimate, Length, Model, RunSpec, Warmup};

/// Seed 002's server with exponential think time: c = 4, S = 0.2 s, Z = 7 s.
pub fn seed_model(users: u32) -> Model {
    Model {
        users,
        service: Dist::exp(0.2),
        think: Dist::exp(7.0),
        ..Model::default()
    }
}

/// `reps` replications of `requests` requests, MSER-5, seed `seed`.
pub fn spec(reps: u32, requests: u64, seed: u64) -> RunSpec {
    RunSpec {
        reps,
        length: Length::Requests(requests),
        warmup: Warmup::Mser5,
        seed,
    }
}

/// Coverage checks of one test: `m` intervals at a family-wise 95% level.
#[derive(Debug)]
pub struct Family {
    level: f64,
}

impl Family {
    /// A family of `m` checks.
    pub fn of(m: u32) -> Family {
        Family {
            level: 1.0 - 0.05 / f64::from(m),
        }
    }

    /// Asserts that the simulated interval at this family's level covers `exact`. A
    /// relative slack of 1e-9 absorbs rounding where the interval is degenerate (a
    /// saturated server has utilisation exactly 1 in every replication, the chain
    /// 1 - 1e-15).
    pub fn covers(&self, what: &str, e: &Estimate, exact: f64) {
        let hw = e.half_width_at(self.level);
        assert!(
            (e.mean - exact).abs() <= hw + 1e-9 * exact.abs(),
            "{what}: sim {:.5} ± {hw:.5} ({:.2}% level; 95%: ± {:.5}) misses exact {exact:.5}",
            e.mean,
            100.0 * self.level,
            e.half_width
        );
    }
}
