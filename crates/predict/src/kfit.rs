//! The fit of the threads per core k as data: every candidate (k, policy)
//! with its residuals at the staircase's steps, the best, and the ones the
//! data cannot tell from it.
//!
//! Why apart from `threads`, which fits it: the fitted model ([`Fit`]) holds
//! this record, and `threads` needs the model to simulate each candidate; with
//! the record here, `fit` and `threads` each import it and neither imports the
//! other back.
//!
//! [`Fit`]: crate::Fit

use serde::Serialize;
use servelab_sim::Policy;

/// One candidate (k, policy) and its residuals at the staircase's steps.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Candidate {
    /// Threads per core.
    pub threads_per_core: u32,
    /// Scheduling on a core.
    pub policy: Policy,
    /// Predicted mean response time per step, ms (`None`: not simulated).
    pub predicted_ms: Vec<Option<f64>>,
    /// (predicted − measured) / measured per step, percent.
    pub errors_pct: Vec<Option<f64>>,
    /// Root mean square of the errors, percent.
    pub rms_pct: f64,
}

/// The fit of k: every candidate, the one with the smallest error, and the
/// ones the data cannot tell from it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ThreadsFit {
    /// The steps compared, in words.
    pub steps: Vec<String>,
    /// The measured mean response time of each step, ms.
    pub measured_ms: Vec<Option<f64>>,
    /// Every candidate, by k.
    pub candidates: Vec<Candidate>,
    /// The k with the smallest RMS error.
    pub best: u32,
    /// The k whose predictions the data cannot tell from the best's (the best
    /// included).
    pub not_told_apart: Vec<u32>,
    /// The k the model uses: the smallest of `not_told_apart`.
    pub chosen: u32,
}

impl ThreadsFit {
    /// Whether the data singled out one k.
    pub fn identified(&self) -> bool {
        self.not_told_apart.len() == 1
    }
}
