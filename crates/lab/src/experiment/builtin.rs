//! The built-in experiments: the TOML files of `experiments/`, compiled in so that
//! `servelab lab run NAME` works from any directory.

use super::schema::Experiment;
use crate::error::{LabError, Result};

/// (name, text) of every built-in experiment, in the order `lab list` shows them.
pub const BUILTIN: &[(&str, &str)] = &[
    (
        "filesize",
        include_str!("../../../../experiments/filesize.toml"),
    ),
    (
        "session",
        include_str!("../../../../experiments/session.toml"),
    ),
    (
        "connections",
        include_str!("../../../../experiments/connections.toml"),
    ),
    (
        "handlers",
        include_str!("../../../../experiments/handlers.toml"),
    ),
    (
        "fork-thread-pool",
        include_str!("../../../../experiments/fork-thread-pool.toml"),
    ),
    ("model", include_str!("../../../../experiments/model.toml")),
    (
        "model-cpu",
        include_str!("../../../../experiments/model-cpu.toml"),
    ),
    (
        "seed002",
        include_str!("../../../../experiments/seed002.toml"),
    ),
    (
        "engines",
        include_str!("../../../../experiments/engines.toml"),
    ),
    (
        "overload",
        include_str!("../../../../experiments/overload.toml"),
    ),
    (
        "overload-cpu",
        include_str!("../../../../experiments/overload-cpu.toml"),
    ),
    (
        "timeslice",
        include_str!("../../../../experiments/timeslice.toml"),
    ),
    (
        "apache",
        include_str!("../../../../experiments/apache.toml"),
    ),
    ("tls", include_str!("../../../../experiments/tls.toml")),
    ("h2", include_str!("../../../../experiments/h2.toml")),
];

/// Finds an experiment: a built-in name, or a path to a `.toml` file.
pub fn load(name_or_path: &str) -> Result<Experiment> {
    if let Some((name, text)) = BUILTIN.iter().find(|(n, _)| *n == name_or_path) {
        return Experiment::parse(text, &format!("experiments/{name}.toml"));
    }
    let path = std::path::Path::new(name_or_path);
    if path.extension().is_some_and(|e| e == "toml") || path.is_file() {
        let text = std::fs::read_to_string(path).map_err(|e| LabError::io(path, e))?;
        return Experiment::parse(&text, name_or_path);
    }
    Err(LabError::UnknownExperiment {
        name: name_or_path.to_string(),
        suggestion: closest(name_or_path),
    })
}

/// The built-in name a mistyped one most likely meant: the nearest by
/// Damerau-Levenshtein distance (a swap of two letters is one edit, so `modle`
/// is one from `model`), if it is at most a third of the name's length away
/// (at least one edit). Ties go to the earlier name in `lab list` order.
fn closest(asked: &str) -> Option<&'static str> {
    let asked = asked.to_ascii_lowercase();
    let limit = (asked.chars().count() / 3).max(1);
    BUILTIN
        .iter()
        .map(|(name, _)| (strsim::damerau_levenshtein(&asked, name), *name))
        .filter(|(d, _)| *d <= limit)
        .min_by_key(|(d, _)| *d)
        .map(|(_, name)| name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_mistyped_name_gets_the_nearest_builtin_and_a_stranger_gets_none() {
        assert_eq!(closest("modle"), Some("model"));
        assert_eq!(closest("MODEL-CPU"), Some("model-cpu"));
        assert_eq!(closest("overlaod-cpu"), Some("overload-cpu"));
        assert_eq!(closest("tsl"), Some("tls"));
        assert_eq!(closest("engine"), Some("engines"));
        assert_eq!(closest("nope"), None);
        assert_eq!(closest("x"), None);
        let e = load("modle").unwrap_err().to_string();
        assert!(
            e.contains("no experiment named `modle`: did you mean `model`?"),
            "{e}"
        );
        let e = load("nope").unwrap_err().to_string();
        assert!(!e.contains("did you mean"), "{e}");
    }

    #[test]
    fn every_builtin_plans_both_sweeps_and_is_named_after_its_file() {
        let tmp = std::path::Path::new("/tmp/servelab-lab-test");
        for (name, _) in BUILTIN {
            let exp = load(name).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(exp.name(), *name, "{}", exp.source.file);
            let quick = exp
                .plan(&super::super::plan::PlanOptions::sweep(true), tmp)
                .unwrap_or_else(|e| panic!("{e}"));
            let full = exp
                .plan(&super::super::plan::PlanOptions::sweep(false), tmp)
                .unwrap_or_else(|e| panic!("{e}"));
            assert!(!quick.points.is_empty());
            assert!(quick.points.len() <= full.points.len());
            assert!(!exp.plots.is_empty(), "{name} has no plot");
            assert!(exp.conclusion.is_some(), "{name} has no conclusion");
        }
    }

    #[test]
    fn an_unknown_name_is_a_clear_error() {
        let e = load("nope").unwrap_err().to_string();
        assert!(e.contains("no experiment named `nope`"), "{e}");
    }
}
