//! The open workload counts every request it was asked to make: a saturated
//! target's backlog is scheduled, never sent, and in the corrected latency.

use std::time::Duration;

use crate::support::{Behavior, TinyServer};
use servelab_load::{Arrival, LoadSpec, Report, Target, Workload};

fn open(url: &str, rate: f64, connections: u32) -> LoadSpec {
    let mut spec = LoadSpec::new(vec![Target::new(url)]);
    spec.workload = Workload::Open {
        rate,
        arrival: Arrival::Uniform,
        connections,
        session: None,
    };
    spec.threads = 1;
    spec
}

/// The invariants of schema 2 that tie the counts together.
fn assert_every_request_counted(r: &Report) {
    let c = &r.counts;
    assert_eq!(c.scheduled, c.sent + c.never_sent, "{c:?}");
    assert_eq!(c.sent, c.completed + c.in_flight, "{c:?}");
    assert_eq!(c.completed, c.ok + c.failed, "{c:?}");
    assert_eq!(c.errors, r.errors.total(), "{c:?}");
    assert_eq!(
        r.latency.count, c.completed,
        "the corrected latency covers the finished requests"
    );
    assert_eq!(
        r.unfinished_age.count,
        c.in_flight + c.never_sent,
        "every unfinished request has its age"
    );
}

#[test]
fn a_saturated_target_shows_its_backlog() {
    // Regression test: 2 connections to a server that answers in 50 ms carry at
    // most 40 requests/s; the other arrivals of 400/s used to appear nowhere.
    let server = TinyServer::start(Behavior::Delay(Duration::from_millis(50)));
    let mut spec = open(&server.url(), 400.0, 2);
    spec.duration = Some(Duration::from_secs(1));
    let r = servelab_load::run(&spec).unwrap();
    assert_every_request_counted(&r);
    // Evenly spaced arrivals from t = 0 to the 1 s limit, both ends included.
    assert!(
        (400..=401).contains(&r.counts.scheduled),
        "{}",
        r.counts.scheduled
    );
    assert!(r.counts.never_sent > 200, "{:?}", r.counts);
    assert!(
        r.counts.sent <= 2 * 21 + 2,
        "at most ~40/s got a connection"
    );
    // Arrivals are taken in order, so the first never-sent one is arrival number
    // `sent` (at most ~44, due by 110 ms): at the end of the 1 s run it is at
    // least 890 ms old, however fast the server answered the others. Its age
    // is kept apart from the finished requests' latencies, whose mean it would
    // pull (schema 5).
    assert!(r.unfinished_age.max >= 800_000, "{}", r.unfinished_age.max);
    assert!(r.latency.max < r.unfinished_age.max);
    let (offered, achieved) = r.saturation().expect("saturated");
    assert!(achieved < 0.2 * offered, "{achieved} of {offered}");
    let summary = r.summary();
    assert!(summary.contains("never sent"), "{summary}");
    assert!(summary.contains("the target is saturated"), "{summary}");
    assert!(
        summary.contains("lower bounds of their latency"),
        "{summary}"
    );
}

#[test]
fn a_target_that_keeps_up_is_not_saturated() {
    let server = TinyServer::start(Behavior::Ok(64));
    let mut spec = open(&server.url(), 200.0, 4);
    spec.requests = Some(100);
    spec.duration = Some(Duration::from_secs(60)); // safety net only
    let r = servelab_load::run(&spec).unwrap();
    assert_every_request_counted(&r);
    assert_eq!(
        (r.counts.scheduled, r.counts.completed, r.counts.never_sent),
        (100, 100, 0)
    );
    assert_eq!(r.counts.in_flight, 0);
    assert!(r.saturation().is_none(), "{:?}", r.throughput);
    assert!(!r.summary().contains("warning"));
}

#[test]
fn the_backlog_merges_exactly() {
    let server = TinyServer::start(Behavior::Delay(Duration::from_millis(50)));
    let mut reports = Vec::new();
    for index in 1..=2 {
        let mut spec = open(&server.url(), 200.0, 2);
        spec.duration = Some(Duration::from_millis(500));
        spec.segment = servelab_load::Segment { index, count: 2 };
        let r = servelab_load::run(&spec).unwrap();
        let back = Report::from_json(&r.to_json(), std::path::Path::new("x")).unwrap();
        reports.push(back);
    }
    let m = Report::merge(&reports).unwrap();
    assert_every_request_counted(&m);
    let sum = |f: fn(&Report) -> u64| reports.iter().map(f).sum::<u64>();
    assert_eq!(m.counts.scheduled, sum(|r| r.counts.scheduled));
    assert_eq!(m.counts.never_sent, sum(|r| r.counts.never_sent));
    assert_eq!(m.counts.in_flight, sum(|r| r.counts.in_flight));
    assert_eq!(m.latency.count, sum(|r| r.latency.count));
}
