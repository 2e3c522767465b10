//! How to run an experiment: the options of `lab run` and `lab ab`.

use std::path::PathBuf;

use crate::experiment::PlanOptions;

/// How to run an experiment.
#[derive(Debug, Clone)]
pub struct RunOptions {
    /// Shrink every sweep (`--quick`).
    pub quick: bool,
    /// A fixed number of repeats per point instead of the experiment's
    /// fewest-to-cap (`--repeats`).
    pub repeats: Option<u32>,
    /// Target relative half-width of the headline metric's 95% interval
    /// instead of the experiment's (`--precision`, as a fraction: 0.02 is 2%).
    pub precision: Option<f64>,
    /// Results directory (default `results/<name>-<timestamp>`); it must not exist.
    pub out: Option<PathBuf>,
    /// Replace `out` if it holds a previous lab run (`--force`).
    pub force: bool,
    /// The `servelab` binary that serves (`servelab serve`).
    pub exe: PathBuf,
    /// servelab version, for the machine record.
    pub version: String,
    /// The command line that reruns this, for the report.
    pub command: String,
    /// Show a progress bar on a terminal.
    pub progress: bool,
}

impl RunOptions {
    /// The options that shape the plan (with the experiment's text, all a
    /// plan is built from).
    pub fn plan_options(&self) -> PlanOptions {
        PlanOptions {
            quick: self.quick,
            repeats: self.repeats,
            precision: self.precision,
        }
    }
}
