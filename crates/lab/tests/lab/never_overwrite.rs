//! The lab never overwrites what it did not write: a run goes into a new
//! directory, `--force` replaces only a previous lab run, and the index of runs
//! is written only into a directory of runs the lab owns.

use servelab_lab::LabError;
use servelab_lab::rundir::{RUN_MARKER, RUNS_MARKER};

use crate::run_seed002;

#[test]
fn a_run_goes_into_a_new_marked_directory() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("runs").join("seed002");
    let done = run_seed002(&out, false).unwrap();
    assert!(done.check().is_ok());
    for f in [RUN_MARKER, "results.json", "results.csv", "report.html"] {
        assert!(out.join(f).is_file(), "{f}");
    }
    // The lab made runs/, so it owns it and lists the run there.
    let runs = tmp.path().join("runs");
    assert_eq!(done.index.as_deref(), Some(runs.as_path()));
    assert!(runs.join(RUNS_MARKER).is_file());
    let index = std::fs::read_to_string(runs.join("index.html")).unwrap();
    assert!(index.contains("href=\"seed002/report.html\""), "{index}");
}

#[test]
fn an_existing_out_is_refused_and_force_replaces_only_a_lab_run() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("seed002");
    run_seed002(&out, false).unwrap();
    let e = run_seed002(&out, false).unwrap_err();
    assert!(matches!(e, LabError::OutExists(_)), "{e}");
    std::fs::write(out.join("stale.txt"), "from the first run").unwrap();
    run_seed002(&out, true).unwrap();
    assert!(!out.join("stale.txt").exists(), "the old run was replaced");

    let theirs = tmp.path().join("thesis");
    std::fs::create_dir(&theirs).unwrap();
    std::fs::write(theirs.join("chapter1.tex"), "keep me").unwrap();
    let e = run_seed002(&theirs, true).unwrap_err();
    assert!(matches!(e, LabError::NotARun(_)), "{e}");
    assert_eq!(
        std::fs::read_to_string(theirs.join("chapter1.tex")).unwrap(),
        "keep me"
    );
}

/// Regression: `lab run seed002 --quick --out DIR/run` replaced DIR/index.html,
/// which the lab had not written.
#[test]
fn an_index_the_lab_did_not_write_is_left_alone() {
    let tmp = tempfile::tempdir().unwrap();
    let theirs = tmp.path().join("index.html");
    std::fs::write(&theirs, "<p>my site</p>").unwrap();
    let done = run_seed002(&tmp.path().join("run"), false).unwrap();
    assert_eq!(done.index, None);
    assert_eq!(std::fs::read_to_string(&theirs).unwrap(), "<p>my site</p>");
    assert!(!tmp.path().join(RUNS_MARKER).exists());
}
