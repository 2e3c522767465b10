//! What a prediction is asked ([`PredictOptions`]) and what it found
//! ([`Outcome`], as `results.json` holds it).

use std::path::PathBuf;
use std::time::Duration;

use serde::Serialize;

use crate::architecture::Architecture;
use crate::cpu_source::CpuSource;
use crate::fit::Fit;
use crate::forecast::Forecast;
use crate::idle::IdleGap;
use crate::judge::Verdict;
use crate::past_workers::PastWorkers;
use crate::progress::ProgressMode;
use crate::slo::Slo;
use crate::staircase::{Load, Step};
use crate::validate::{Point, Row};

/// What `servelab predict` was asked.
#[derive(Debug, Clone)]
pub struct PredictOptions {
    /// The URL to measure (`http://host:port/path`).
    pub url: String,
    /// Where the server's CPU comes from.
    pub cpu: CpuSource,
    /// Measurement time of the fit's staircase.
    pub budget: Duration,
    /// Measurement time of the validation; `None` skips it.
    pub validate_budget: Option<Duration>,
    /// The loads to predict: users, with `think`, `timeout` and `retries`.
    pub users: Vec<u32>,
    /// Open rates to predict (requests per second, Poisson), with `load`'s
    /// timeouts and retries; the validation measures them too.
    pub rates: Vec<f64>,
    /// Their think time, timeouts and retries (`users` ignored).
    pub load: Load,
    /// The objective whose largest load is searched.
    pub slo: Option<Slo>,
    /// Results directory (default `results/predict-<timestamp>`); must not exist.
    pub out: Option<PathBuf>,
    /// The command line, recorded.
    pub command: String,
    /// How to report progress on stderr.
    pub progress: ProgressMode,
}

/// The validation: each point, and the error table.
#[derive(Debug, Clone, Serialize)]
pub struct Validation {
    /// Each checked load.
    pub points: Vec<Point>,
    /// Per metric: largest and mean error against its target.
    pub table: Vec<Row>,
    /// The window of each repeat, s: the length the predictions were
    /// simulated over (a window from an empty server and fresh connections,
    /// as `load` measures it).
    pub window_s: f64,
}

impl Validation {
    /// The rows whose target was missed: at some point past the limit by
    /// more than the error's interval.
    pub fn missed(&self) -> Vec<&Row> {
        self.rows(Verdict::Missed)
    }

    /// The rows that this measurement cannot decide (none missed, some past
    /// the limit within their interval).
    pub fn inconclusive(&self) -> Vec<&Row> {
        self.rows(Verdict::Inconclusive)
    }

    /// The validation in one line, first in the output and the report:
    /// every target met, or which were missed and which cannot be decided.
    pub fn headline(&self) -> String {
        let names = |rows: Vec<&Row>| {
            rows.iter()
                .map(|r| {
                    format!(
                        "{} (largest |error| {} against {}, at {} of {} points)",
                        r.target.label(),
                        r.max_abs_pct.map_or("-".into(), |e| format!("{e:.1}%")),
                        r.limit_pct.map_or("-".into(), |l| format!("{l:.0}%")),
                        r.missed_points.max(r.inconclusive_points),
                        r.points
                    )
                })
                .collect::<Vec<_>>()
                .join(", ")
        };
        let (missed, open) = (self.missed(), self.inconclusive());
        let judged = self.table.iter().filter(|r| r.verdict.is_some()).count();
        match (missed.is_empty(), open.is_empty()) {
            _ if judged == 0 => "validation: no target could be judged (no point measured)".into(),
            (true, true) => format!("validation: all {judged} targets met"),
            (false, true) => format!("validation: MISSED {}", names(missed)),
            (true, false) => format!(
                "validation: no target missed; inconclusive (past the target within the \
                 error's 95% interval): {}",
                names(open)
            ),
            (false, false) => format!(
                "validation: MISSED {}; inconclusive: {}",
                names(missed),
                names(open)
            ),
        }
    }

    fn rows(&self, v: Verdict) -> Vec<&Row> {
        self.table.iter().filter(|r| r.verdict == Some(v)).collect()
    }
}

/// Everything a prediction found, as `results.json` holds it.
#[derive(Debug, Clone, Serialize)]
pub struct Outcome {
    /// The URL.
    pub url: String,
    /// The command line.
    pub command: String,
    /// When it started (UTC).
    pub started_utc: String,
    /// Where the server's CPU came from.
    pub cpu: CpuSource,
    /// What a reader must know first: where the prediction is not to be
    /// trusted, and why.
    pub warnings: Vec<String>,
    /// What the probes found about connections and workers, and how.
    pub architecture: Architecture,
    /// The fit's staircase.
    pub staircase: Vec<Step>,
    /// With held workers: the calibration step past W, and what it says
    /// about W (not used by the fit of the demand and k).
    pub past_workers: Option<PastWorkers>,
    /// One user thinking, against the back-to-back steps: whether the server
    /// is slower after an idle gap (`None`: no time was left for the step).
    pub idle: Option<IdleGap>,
    /// The fitted model.
    pub fit: Fit,
    /// The fitted model as a `servelab sim` command at the asked loads.
    pub sim_command: String,
    /// The predictions at the asked loads.
    pub forecasts: Vec<Forecast>,
    /// The knee N* at the asked think time.
    pub knee_users: f64,
    /// The objective.
    pub slo: Option<Slo>,
    /// The largest load meeting it (`None` with an objective: not even one user).
    pub slo_users: Option<u32>,
    /// The validation, when run.
    pub validation: Option<Validation>,
    /// The directory written.
    pub dir: PathBuf,
}
