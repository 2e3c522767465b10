//! Probability distributions of think, service and timeout times, and their text syntax.
//!
//! The DIST syntax lives in `servelab-dist`, shared with `servelab serve` and
//! `servelab load` so that an experiment file uses one vocabulary everywhere
//! (`40ms`, `const:1s`, `exp:6s`, `uniform:4s..10s`, `lognormal:1s,2`, `50s+exp:5s`;
//! a plain number is seconds). This module re-exports it under the names the
//! simulator has always used: [`Dist`] samples `f64` seconds (the simulator's
//! clock), and [`parse_duration`] returns seconds. Seeded streams are the ones this
//! module drew before the move, so results under a seed are unchanged.

pub use servelab_dist::parse_secs as parse_duration;
pub use servelab_dist::{Dist, DistError};

use crate::error::SimError;

/// A DIST or duration that does not parse is the simulator's [`SimError::BadDist`],
/// so `text.parse::<Dist>()?` works in code that returns [`crate::Result`].
impl From<DistError> for SimError {
    fn from(e: DistError) -> SimError {
        let (DistError::BadDist { input, why } | DistError::BadDuration { input, why }) = e;
        SimError::BadDist { input, reason: why }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bad_dist_is_a_sim_error_naming_the_input() {
        let err: SimError = "exp:-2s".parse::<Dist>().unwrap_err().into();
        assert!(
            matches!(&err, SimError::BadDist { input, .. } if input == "exp:-2s"),
            "{err}"
        );
        let err: SimError = parse_duration("1parsec").unwrap_err().into();
        assert!(err.to_string().contains("unknown unit"), "{err}");
    }
}
