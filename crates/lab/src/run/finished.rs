//! A run that wrote its results, and the writing: `results.json`,
//! `results.csv` and `report.html`.

use std::path::PathBuf;

use crate::error::{LabError, Result};
use crate::experiment::Experiment;
use crate::store::results::{RunResults, Status};

/// A run that wrote its results.
#[derive(Debug, Clone)]
pub struct Finished {
    /// The results directory.
    pub dir: PathBuf,
    /// What was written to `results.json`.
    pub results: RunResults,
    /// The directory of runs whose `index.html` was refreshed, if any.
    pub index: Option<PathBuf>,
}

impl Finished {
    /// Each point that produced no figures, as "label: status: reason".
    pub fn problems(&self) -> Vec<String> {
        self.results
            .points
            .iter()
            .filter(|p| matches!(p.status, Status::Failed | Status::Unavailable))
            .map(|p| {
                format!(
                    "{}: {}: {}",
                    p.label(),
                    p.status.as_str(),
                    p.reason.as_deref().unwrap_or("no reason recorded")
                )
            })
            .collect()
    }

    /// An error when the run was interrupted or no point produced figures: a
    /// run that measured nothing must not look like a success.
    pub fn check(&self) -> Result<()> {
        if self.results.interrupted {
            return Err(LabError::Interrupted(self.dir.clone()));
        }
        if !self.results.points.iter().any(|p| p.status == Status::Ok) {
            return Err(LabError::NoFigures(self.dir.clone()));
        }
        Ok(())
    }
}

/// Writes a run's `results.json`, `results.csv` and `report.html` into `dir`.
pub(super) fn write_run(
    dir: &std::path::Path,
    results: &RunResults,
    exp: &Experiment,
) -> Result<()> {
    results.write_json(dir)?;
    results.write_csv(dir)?;
    crate::report::page::write(dir, results, exp)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiment::{Model, PlannedPoint, Work};
    use crate::store::machine::Machine;
    use crate::store::results::{PointRecord, SCHEMA};

    #[test]
    fn a_run_with_no_figures_or_an_interruption_is_an_error() {
        let mut rec = PointRecord::planned(&PlannedPoint {
            index: 0,
            vars: vec![],
            work: Work::Simulate(Box::new(Model {
                model: servelab_sim::Model::default(),
                run: servelab_sim::RunSpec {
                    reps: 2,
                    length: servelab_sim::Length::Requests(100),
                    warmup: servelab_sim::Warmup::Mser5,
                    seed: 1,
                },
            })),
        });
        rec.status = Status::Failed;
        rec.server = Some("pool".into());
        rec.reason = Some("repeat 1: no request succeeded (2 errors: status 2)".into());
        let mut finished = Finished {
            dir: "out".into(),
            results: RunResults {
                schema: SCHEMA.into(),
                experiment: "t".into(),
                source_file: "t".into(),
                source: String::new(),
                command: String::new(),
                quick: true,
                repeats: 1,
                protocol: None,
                started_utc: String::new(),
                duration_s: 0.0,
                machine: Machine::detect("0", None),
                placement: String::new(),
                interrupted: false,
                kernel: None,
                points: vec![rec],
            },
            index: None,
        };
        assert!(matches!(finished.check(), Err(LabError::NoFigures(_))));
        assert_eq!(
            finished.problems(),
            ["pool: failed: repeat 1: no request succeeded (2 errors: status 2)"]
        );
        finished.results.points[0].status = Status::Ok;
        assert!(finished.check().is_ok());
        finished.results.interrupted = true;
        assert!(matches!(finished.check(), Err(LabError::Interrupted(_))));
    }
}
