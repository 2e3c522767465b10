//! Segments of one run merge into the counts of the whole run.

use std::sync::atomic::Ordering;

use crate::support::{Behavior, TinyServer, closed};
use servelab_load::{Report, Segment};

#[test]
fn two_segments_merge_to_the_whole_run() {
    let server = TinyServer::start(Behavior::Ok(100));
    let dir = tempfile::tempdir().unwrap();
    let mut paths = Vec::new();
    for index in 1..=2 {
        let mut spec = closed(&server.url(), 5, Some(3), 301);
        spec.segment = Segment { index, count: 2 };
        let report = servelab_load::run(&spec).unwrap();
        let path = dir.path().join(format!("seg{index}.json"));
        report.write(&path).unwrap();
        paths.push(path);
    }
    let reports: Vec<Report> = paths.iter().map(|p| Report::read(p).unwrap()).collect();
    assert_eq!(reports[0].counts.completed, 151);
    assert_eq!(reports[1].counts.completed, 150);
    let merged = Report::merge(&reports).unwrap();
    assert_eq!(merged.counts.completed, 301);
    assert_eq!(merged.counts.ok, 301);
    assert_eq!(merged.latency.count, 301);
    assert_eq!(merged.segments, vec!["1/2", "2/2"]);
    assert_eq!(server.requests.load(Ordering::SeqCst), 301);
    // A whole run of the same command reports the same count.
    let whole = servelab_load::run(&closed(&server.url(), 5, Some(3), 301)).unwrap();
    assert_eq!(whole.counts.completed, merged.counts.completed);
    assert_eq!(whole.run, merged.run);
}
