//! Random durations: think times, timeouts and retry waits.
//!
//! The DIST syntax comes from `servelab-dist`, the one parser that `servelab serve
//! --delay` and `servelab sim` read too, so that one experiment file describes the
//! server, the simulator and the load with the same words:
//!
//! - `1s`, `40ms`, `250us`, `2m`, or a plain number of seconds (`1.5`): a constant;
//! - `const:1s`: the same, spelled out;
//! - `exp:6s`: exponential with that mean (seed 002's think and service times);
//! - `uniform:4s..10s`: uniform between the two bounds;
//! - `lognormal:1s,2`: lognormal with that mean and coefficient of variation;
//! - `50s+exp:5s`: shifted, a constant plus any of the above (seed 002's timeout).
//!
//! (Before the shared crate the load generator read only the first four forms.)
//!
//! Samples are drawn with [`Dist::sample_duration`] from a caller-owned generator, so
//! that each simulated user has its own stream and a run is repeatable under `--seed`.

pub use servelab_dist::{Dist, DistError, parse_duration};

use crate::error::LoadError;

/// A DIST or duration that does not parse is [`LoadError::Dist`]: the run does not
/// start.
impl From<DistError> for LoadError {
    fn from(e: DistError) -> LoadError {
        let (DistError::BadDist { input, why } | DistError::BadDuration { input, why }) = e;
        LoadError::Dist { input, why }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand_pcg::Pcg64Mcg;
    use std::time::Duration;

    #[test]
    fn parses_the_load_forms() {
        let d = |s: &str| s.parse::<Dist>().unwrap();
        assert_eq!(d("1s"), Dist::Const(Duration::from_secs(1)));
        assert_eq!(d("const:40ms"), Dist::Const(Duration::from_millis(40)));
        assert_eq!(d("exp:6s").mean_duration(), Duration::from_secs(6));
        assert_eq!(d("uniform:4s..10s").mean_duration(), Duration::from_secs(7));
        assert_eq!(d("50s+exp:5s").mean_duration(), Duration::from_secs(55));
        assert_eq!(parse_duration("2m").unwrap(), Duration::from_secs(120));
    }

    #[test]
    fn a_bad_dist_is_a_load_error_naming_the_input() {
        let err: LoadError = "uniform:9s..1s".parse::<Dist>().unwrap_err().into();
        assert!(err.to_string().contains("`uniform:9s..1s`"), "{err}");
        assert!(matches!(err, LoadError::Dist { .. }));
    }

    #[test]
    fn same_seed_same_think_times() {
        let think: Dist = "1s+exp:1s".parse().unwrap();
        let mut a = Pcg64Mcg::seed_from_u64(1);
        let mut b = Pcg64Mcg::seed_from_u64(1);
        for _ in 0..100 {
            let x = think.sample_duration(&mut a);
            assert!(x >= Duration::from_secs(1));
            assert_eq!(x, think.sample_duration(&mut b));
        }
    }
}
