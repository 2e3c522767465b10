//! Where a run writes, and the rule that the lab never overwrites what it did
//! not write.
//!
//! Every run goes into a new directory, marked as a lab run by a
//! [`RUN_MARKER`] file the moment it is made (so an interrupted run is marked
//! too). An existing `--out` is refused; with `--force` it is replaced only when
//! it holds that marker. A directory of runs (such as `results/`) gets an
//! `index.html` only when the lab owns it: it holds a [`RUNS_MARKER`], which the
//! lab writes when it creates the directory, or when it claims a directory whose
//! `index.html` an earlier version of the lab wrote (its title says so), or the
//! default `results/` while it has no `index.html` at all.

use std::io::ErrorKind;
use std::path::{Path, PathBuf};

use crate::error::{LabError, Result};

/// Marks a directory that holds one lab run.
pub const RUN_MARKER: &str = ".servelab-lab-run";

/// Marks a directory of runs whose `index.html` the lab writes.
pub const RUNS_MARKER: &str = ".servelab-lab-runs";

/// Where runs go when no `--out` is given.
pub const DEFAULT_RUNS: &str = "results";

/// A new, marked directory for one run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunDir {
    /// The run's directory.
    pub path: PathBuf,
    /// The directory of runs around it, when the lab owns it (its index is
    /// refreshed after the run).
    pub runs: Option<PathBuf>,
}

/// Checks that `path` is a run's `results.json` or a directory holding one,
/// before `lab report` or `lab compare` reads it: the usual mistake (a
/// directory of runs, a typo) then gets a sentence that says what to give,
/// not the system's "No such file or directory" about a file the user never named.
pub fn check_results(path: &Path) -> Result<()> {
    let file = if path.is_dir() {
        path.join("results.json")
    } else {
        path.to_path_buf()
    };
    if file.is_file() {
        Ok(())
    } else {
        Err(LabError::NoResults(path.to_path_buf()))
    }
}

/// Whether `dir` holds a lab run.
pub fn is_run(dir: &Path) -> bool {
    dir.join(RUN_MARKER).is_file()
}

/// Whether `dir` is a directory of runs the lab owns.
pub fn is_runs(dir: &Path) -> bool {
    dir.join(RUNS_MARKER).is_file()
}

/// Makes the directory of a run: `out` (refused if it exists, unless `force` and
/// it holds a lab run), or `results/NAME-STAMP` (with `-2`, `-3`... if a run of
/// the same second exists).
pub fn create(out: Option<&Path>, name: &str, stamp: &str, force: bool) -> Result<RunDir> {
    match out {
        Some(out) => {
            if out.symlink_metadata().is_ok() {
                if !force {
                    return Err(LabError::OutExists(out.to_path_buf()));
                }
                if !(out.is_dir() && is_run(out)) {
                    return Err(LabError::NotARun(out.to_path_buf()));
                }
                std::fs::remove_dir_all(out).map_err(|e| LabError::io(out, e))?;
            }
            let parent = parent_of(out);
            let made = make_parent(&parent)?;
            if !made && !is_runs(&parent) && index_by_an_earlier_lab(&parent) {
                mark(&parent, RUNS_MARKER)?;
            }
            make_run(out)?;
            Ok(RunDir {
                path: out.to_path_buf(),
                runs: (made || is_runs(&parent)).then_some(parent),
            })
        }
        None => {
            let runs = PathBuf::from(DEFAULT_RUNS);
            let made = make_parent(&runs)?;
            let index = runs.join("index.html");
            if !made && !is_runs(&runs) && (!index.exists() || index_by_an_earlier_lab(&runs)) {
                mark(&runs, RUNS_MARKER)?;
            }
            let mut n = 1;
            loop {
                let leaf = if n == 1 {
                    format!("{name}-{stamp}")
                } else {
                    format!("{name}-{stamp}-{n}")
                };
                let path = runs.join(leaf);
                match make_run(&path) {
                    Ok(()) => {
                        return Ok(RunDir {
                            path,
                            runs: is_runs(&runs).then_some(runs),
                        });
                    }
                    Err(LabError::Io { source, .. })
                        if source.kind() == ErrorKind::AlreadyExists && n < 100 =>
                    {
                        n += 1;
                    }
                    Err(e) => return Err(e),
                }
            }
        }
    }
}

/// The title of the index the lab writes; versions before the markers wrote
/// it too.
pub(crate) const INDEX_TITLE: &str = "<title>servelab lab runs</title>";

/// Whether `dir/index.html` is one the lab wrote before directories were marked.
fn index_by_an_earlier_lab(dir: &Path) -> bool {
    std::fs::read_to_string(dir.join("index.html")).is_ok_and(|t| t.contains(INDEX_TITLE))
}

/// The directory that holds `path` (`.` for a bare name).
pub fn parent_of(path: &Path) -> PathBuf {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// Marks `dir` as a directory of runs too, so that it gets an `index.html` of
/// the runs inside it and the directory around it links to it: the directory
/// of a `lab ab` pair, which is itself a lab run (`--force` may replace it)
/// holding two runs.
pub fn mark_runs(dir: &Path) -> Result<()> {
    mark(dir, RUNS_MARKER)
}

/// Creates `dir` if it is missing, and marks it and every directory made on
/// the way as the lab's (`results/reference/` made for a run makes `results/`
/// a directory of runs too); returns whether `dir` was made.
fn make_parent(dir: &Path) -> Result<bool> {
    if dir.is_dir() {
        return Ok(false);
    }
    let missing: Vec<&Path> = dir
        .ancestors()
        .take_while(|a| !a.as_os_str().is_empty() && !a.exists())
        .collect();
    std::fs::create_dir_all(dir).map_err(|e| LabError::io(dir, e))?;
    for made in missing {
        mark(made, RUNS_MARKER)?;
    }
    Ok(true)
}

/// Creates the run's directory (never an existing one) and marks it.
fn make_run(path: &Path) -> Result<()> {
    std::fs::create_dir(path).map_err(|e| LabError::io(path, e))?;
    mark(path, RUN_MARKER)
}

fn mark(dir: &Path, marker: &str) -> Result<()> {
    let path = dir.join(marker);
    let text = if marker == RUN_MARKER {
        "A servelab lab run: `servelab lab run --out THIS --force` may replace this directory.\n"
    } else {
        "A directory of servelab lab runs: the lab rewrites index.html here after each run.\n"
    };
    std::fs::write(&path, text).map_err(|e| LabError::io(path, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_existing_out_is_refused_and_forced_only_over_a_lab_run() {
        let tmp = tempfile::tempdir().unwrap();
        let foreign = tmp.path().join("mine");
        std::fs::create_dir(&foreign).unwrap();
        std::fs::write(foreign.join("thesis.tex"), "keep").unwrap();
        let e = create(Some(&foreign), "x", "s", false).unwrap_err();
        assert!(matches!(e, LabError::OutExists(_)), "{e}");
        let e = create(Some(&foreign), "x", "s", true).unwrap_err();
        assert!(matches!(e, LabError::NotARun(_)), "{e}");
        assert!(e.to_string().contains(RUN_MARKER), "{e}");
        assert!(foreign.join("thesis.tex").is_file());

        let run = tmp.path().join("runs").join("one");
        let made = create(Some(&run), "x", "s", false).unwrap();
        assert!(is_run(&run));
        assert_eq!(made.runs.as_deref(), Some(run.parent().unwrap()));
        std::fs::write(run.join("old.csv"), "old").unwrap();
        create(Some(&run), "x", "s", true).unwrap();
        assert!(is_run(&run) && !run.join("old.csv").exists());
    }

    #[test]
    fn an_index_an_earlier_lab_wrote_is_claimed() {
        let tmp = tempfile::tempdir().unwrap();
        let old = format!("<!doctype html><html><head>{INDEX_TITLE}</head></html>");
        std::fs::write(tmp.path().join("index.html"), old).unwrap();
        let made = create(Some(&tmp.path().join("run")), "x", "s", false).unwrap();
        assert_eq!(made.runs.as_deref(), Some(tmp.path()));
    }

    #[test]
    fn a_parent_the_lab_did_not_make_gets_no_index() {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::write(tmp.path().join("index.html"), "theirs").unwrap();
        let made = create(Some(&tmp.path().join("run")), "x", "s", false).unwrap();
        assert_eq!(made.runs, None);
        assert!(!is_runs(tmp.path()));
    }
}
