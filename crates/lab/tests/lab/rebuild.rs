//! Reports and indexes rebuilt from what a run wrote.

use servelab_lab::rundir::RUNS_MARKER;
use servelab_lab::{index, report};

use crate::run_seed002;

#[test]
fn a_report_is_rebuilt_from_results_json_alone() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("seed002");
    run_seed002(&out, false).unwrap();
    let first = std::fs::read_to_string(out.join("report.html")).unwrap();
    std::fs::remove_file(out.join("report.html")).unwrap();
    report::rebuild(&out).unwrap();
    let again = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert_eq!(again, first);
}

/// The regenerated results/index.html keeps its link to results/reference, a
/// directory of runs rather than a run.
#[test]
fn the_index_links_nested_directories_of_runs() {
    let tmp = tempfile::tempdir().unwrap();
    let results = tmp.path().join("results");
    let reference = results.join("reference");
    run_seed002(&reference.join("seed002"), false).unwrap();
    run_seed002(&results.join("seed002-new"), false).unwrap();
    assert!(reference.join(RUNS_MARKER).is_file());
    let html = std::fs::read_to_string(results.join("index.html")).unwrap();
    assert!(html.contains("href=\"reference/index.html\""), "{html}");
    assert!(html.contains("href=\"seed002-new/report.html\""), "{html}");
    assert_eq!(index::write(&results).unwrap(), index::Written::Yes);
    let inner = std::fs::read_to_string(reference.join("index.html")).unwrap();
    assert!(inner.contains("href=\"seed002/report.html\""), "{inner}");
}
