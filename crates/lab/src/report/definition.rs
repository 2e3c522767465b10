//! Which definition of an experiment a rebuilt report renders.
//!
//! A run stores its experiment's text in `results.json`, and a report rebuilt
//! from that text alone kept every title, question and caption the run was
//! made with, so a fix to an experiment's wording never reached a rebuilt
//! report (issue 31: Figure 5 of the reference `overload-cpu` still said
//! "attempt" after its definition said "user"). The prose and the numbers have
//! different owners: the numbers belong to the run, the words to the
//! experiment's current definition, as long as that definition measures what
//! the run measured.
//!
//! So `servelab lab report DIR` plans both definitions the same way (the run's
//! sweep, the run's kernel figures, one temporary directory) and compares
//! their points and served files ([`Plan`]): when they are equal, the report
//! takes its words (titles, question, plots, claims, conclusion) from the
//! current definition and says so; when they differ, it keeps the run's own
//! definition and says that the current one plans other points. Either way the
//! numbers are the run's, and the page ends with the file the run was made
//! from. The current definition is the built-in experiment when the run was
//! made from one (`experiments/NAME.toml`), else the file at the run's
//! `source_file` when it still exists.

use std::path::Path;

use crate::error::Result;
use crate::experiment::builtin;
use crate::experiment::{Experiment, Plan, PlanOptions};
use crate::process::sched::KernelSched;
use crate::store::results::RunResults;

/// The definition a report renders, and what the report says about it.
#[derive(Debug)]
pub struct Definition {
    /// The experiment whose words the report uses.
    pub exp: Experiment,
    /// One sentence for the report when `exp` is not simply the run's own
    /// definition, unchanged.
    pub note: Option<String>,
}

impl Definition {
    /// The definition to rebuild `results`' report with: the current one when
    /// it measures what the run measured, else the run's own.
    pub fn for_rebuild(results: &RunResults) -> Result<Definition> {
        let run = Experiment::parse(&results.source, &results.source_file)?;
        Ok(Definition::choose(results, run, current(results)))
    }

    /// [`Definition::for_rebuild`] with the current definition given (`None`:
    /// there is none to read; `Err`: it could not be read).
    pub fn choose(
        results: &RunResults,
        run: Experiment,
        current: Option<Result<Experiment>>,
    ) -> Definition {
        let file = &results.source_file;
        let current = match current {
            None => {
                return Definition {
                    exp: run,
                    note: None,
                };
            }
            Some(Err(e)) => {
                return Definition {
                    note: Some(format!(
                        "The experiment's current definition ({file}) cannot be read ({e}); \
                         this report keeps the words of the definition the run was made with."
                    )),
                    exp: run,
                };
            }
            Some(Ok(c)) => c,
        };
        if current.source.text == run.source.text {
            return Definition {
                exp: run,
                note: None,
            };
        }
        match (plan_of(&run, results), plan_of(&current, results)) {
            (Some(a), Some(b)) if same_measurement(&a, &b) => Definition {
                exp: current,
                note: Some(format!(
                    "Titles, question, captions, claims and conclusion are from the experiment's \
                     current definition ({file}), which plans the same points as this run; the \
                     numbers are the run's, and the file it was made with is at the end of this \
                     page."
                )),
            },
            _ => Definition {
                exp: run,
                note: Some(format!(
                    "The experiment's current definition ({file}) plans other points than this \
                     run did, so this report keeps the words of the definition the run was made \
                     with (at the end of this page); rerun the experiment for the current one."
                )),
            },
        }
    }
}

/// Whether two plans measure the same thing: the same points (axis values,
/// servers, loads, predictions) and the same served files. The repeats and
/// the precision are the run's own, recorded in its protocol.
fn same_measurement(a: &Plan, b: &Plan) -> bool {
    a.points == b.points && a.files == b.files
}

/// `exp` planned as the run was: its sweep, its kernel figures, and one
/// temporary directory for both definitions compared; `None` when the
/// definition no longer plans.
fn plan_of(exp: &Experiment, results: &RunResults) -> Option<Plan> {
    let kernel = results
        .kernel
        .clone()
        .unwrap_or_else(KernelSched::unmeasured);
    exp.plan_with(
        &PlanOptions::sweep(results.quick),
        Path::new("/tmp/servelab-lab-definition"),
        &kernel,
    )
    .ok()
}

/// The experiment's current definition: the built-in one when the run was made
/// from `experiments/NAME.toml`, else the run's `source_file` if it exists.
fn current(results: &RunResults) -> Option<Result<Experiment>> {
    let file = &results.source_file;
    if let Some((name, text)) = builtin::BUILTIN
        .iter()
        .find(|(name, _)| *file == format!("experiments/{name}.toml"))
    {
        return Some(Experiment::parse(text, &format!("experiments/{name}.toml")));
    }
    let path = Path::new(file);
    path.is_file().then(|| {
        std::fs::read_to_string(path)
            .map_err(|e| crate::error::LabError::io(path, e))
            .and_then(|text| Experiment::parse(&text, file))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::plot::figure::tests::{EXP, quick_run};

    fn run_of(text: &str) -> (RunResults, Experiment) {
        let exp = Experiment::parse(text, "t.toml").unwrap();
        let mut r = quick_run(&exp);
        r.source = text.into();
        r.source_file = "t.toml".into();
        (r, exp)
    }

    #[test]
    fn new_words_over_the_same_points_are_taken_and_said() {
        let (r, run) = run_of(EXP);
        let text = EXP.replacen("title = \"", "title = \"Renamed: ", 1);
        assert_ne!(text, EXP, "the fixture must have a title");
        let current = Experiment::parse(&text, "t.toml").unwrap();
        let d = Definition::choose(&r, run, Some(Ok(current)));
        assert!(d.exp.title.starts_with("Renamed: "), "{}", d.exp.title);
        assert!(d.note.unwrap().contains("plans the same points"));
    }

    #[test]
    fn other_points_keep_the_runs_words_and_say_why() {
        let (r, run) = run_of(EXP);
        let title = run.title.clone();
        // Another worker count in the quick sweep: a point the run did not measure.
        let text = EXP.replacen("quick = [1, 4]", "quick = [1, 2]", 1);
        assert_ne!(text, EXP, "the fixture must have an axis");
        let current = Experiment::parse(&text, "t.toml").unwrap();
        let d = Definition::choose(&r, run, Some(Ok(current)));
        assert_eq!(d.exp.title, title);
        assert!(d.note.unwrap().contains("plans other points"));
    }

    #[test]
    fn an_unchanged_or_missing_definition_says_nothing_and_an_unreadable_one_is_said() {
        let (r, run) = run_of(EXP);
        let same = Experiment::parse(EXP, "t.toml").unwrap();
        assert!(
            Definition::choose(&r, run.clone(), Some(Ok(same)))
                .note
                .is_none()
        );
        assert!(Definition::choose(&r, run.clone(), None).note.is_none());
        let bad = Experiment::parse("name = ", "t.toml").map(|_| unreachable!());
        let d = Definition::choose(&r, run, Some(bad));
        assert!(d.note.unwrap().contains("cannot be read"));
    }
}
