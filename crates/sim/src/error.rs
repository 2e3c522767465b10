//! The error type of the simulator library.
//!
//! Every fallible entry point (parsing a distribution or a user list, validating a
//! model, running a replication, writing a trace) returns [`SimError`]. None of them
//! panics on bad input: a command-line front end prints the message and exits.

use servelab_dist::DistError;
use thiserror::Error;

/// Everything that can go wrong while describing or running a simulation.
#[derive(Debug, Error)]
pub enum SimError {
    /// A distribution or duration string did not parse; nothing was run.
    #[error("bad distribution {input:?}: {reason}")]
    BadDist {
        /// The text as given.
        input: String,
        /// What is wrong with it, and what is expected instead.
        reason: String,
    },
    /// A name (policy, affinity, on-full or on-abandon choice) is not one of the
    /// known ones; nothing was run.
    #[error("unknown {what} {input:?} (use {expected})")]
    UnknownName {
        /// What was being named.
        what: &'static str,
        /// The text as given.
        input: String,
        /// The names accepted.
        expected: &'static str,
    },
    /// A user-count list or range (`1..800:25`, `1,50,144`) did not parse; nothing was run.
    #[error("bad user list {input:?}: {reason}")]
    BadUsers {
        /// The text as given.
        input: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The model is inconsistent (zero cores, negative quantum, a run that could never
    /// advance simulated time); nothing was run.
    #[error("invalid model: {0}")]
    InvalidModel(String),
    /// The run specification is inconsistent (zero replications, zero requests); nothing
    /// was run.
    #[error("invalid run: {0}")]
    InvalidRun(String),
    /// A replication hit its event budget without finishing: the model keeps producing
    /// events without completing requests (for example every request is dropped and
    /// retried forever). The run stops.
    #[error(
        "replication {rep} of point {point} made no progress after {events} events \
         ({completions} completions); check think time, timeout and buffer"
    )]
    NoProgress {
        /// Sweep point index.
        point: usize,
        /// Replication index.
        rep: u32,
        /// Events processed before giving up.
        events: u64,
        /// Requests completed by then.
        completions: u64,
    },
    /// Writing the event trace failed; the run stops. The cause is the source, not
    /// part of the message, so that `{:#}` says it once.
    #[error("cannot write the event trace")]
    Trace(#[from] std::io::Error),
}

/// Shorthand used throughout the crate.
pub type Result<T> = std::result::Result<T, SimError>;

/// A DIST or duration that does not parse is the simulator's [`SimError::BadDist`],
/// so `text.parse::<Dist>()?` works in code that returns [`Result`].
impl From<DistError> for SimError {
    fn from(e: DistError) -> SimError {
        let (DistError::BadDist { input, why } | DistError::BadDuration { input, why }) = e;
        SimError::BadDist { input, reason: why }
    }
}

#[cfg(test)]
mod tests {
    use servelab_dist::{Dist, parse_secs_f64};

    use super::*;

    #[test]
    fn a_bad_dist_is_a_sim_error_naming_the_input() {
        let err: SimError = "exp:-2s".parse::<Dist>().unwrap_err().into();
        assert!(
            matches!(&err, SimError::BadDist { input, .. } if input == "exp:-2s"),
            "{err}"
        );
        let err: SimError = parse_secs_f64("1parsec").unwrap_err().into();
        assert!(err.to_string().contains("unknown unit"), "{err}");
    }

    /// Regression: "cannot write trace: No space left on device (os error 28)" came
    /// with the same io::Error as its source, so a chain printed the cause twice.
    #[test]
    fn a_trace_error_says_its_cause_once() {
        use std::error::Error as _;
        let err = SimError::from(std::io::Error::other("disk full"));
        let mut chain = vec![err.to_string()];
        let mut source = err.source();
        while let Some(s) = source {
            chain.push(s.to_string());
            source = s.source();
        }
        assert_eq!(
            chain.join(": ").matches("disk full").count(),
            1,
            "{chain:?}"
        );
    }
}
