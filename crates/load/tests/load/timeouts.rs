//! Timeouts abandon attempts, retries try again, and the counts say so.

use std::sync::atomic::Ordering;
use std::time::Duration;

use crate::support::{Behavior, TinyServer, closed};

#[test]
fn every_attempt_times_out_and_retries_run_out() {
    let server = TinyServer::start(Behavior::Delay(Duration::from_millis(400)));
    let mut spec = closed(&server.url(), 2, None, 4);
    spec.timeout = Some("40ms".parse().unwrap());
    spec.retries = Some(2);
    spec.retry_wait = "5ms".parse().unwrap();
    let report = servelab_load::run(&spec).unwrap();
    assert_eq!(report.counts.completed, 4);
    assert_eq!(report.counts.ok, 0);
    assert_eq!(report.errors.timeout, 4);
    assert_eq!(report.counts.timeouts, 12, "3 attempts per request");
    assert_eq!(report.counts.retries, 8);
    assert_eq!(report.counts.attempts, 12);
    // Each abandoned attempt closed its connection; each attempt had its own.
    assert_eq!(server.accepted.load(Ordering::SeqCst), 12);
}

#[test]
fn a_retry_after_a_stall_succeeds() {
    let server = TinyServer::start(Behavior::StallOnce {
        nth: 1,
        pause: Duration::from_millis(500),
    });
    let mut spec = closed(&server.url(), 1, None, 5);
    spec.timeout = Some("100ms".parse().unwrap());
    spec.retries = None; // inf
    let report = servelab_load::run(&spec).unwrap();
    assert_eq!(report.counts.completed, 5);
    assert_eq!(
        report.counts.ok, 5,
        "goodput: every request answered in time"
    );
    assert_eq!(report.counts.timeouts, 1);
    assert_eq!(report.counts.retries, 1);
    assert_eq!(report.errors.timeout, 0);
    // The retried request's latency counts from its first attempt.
    assert!(report.latency.max >= 100_000, "{}", report.latency.max);
    assert!(report.latency_uncorrected.max < report.latency.max);
}
