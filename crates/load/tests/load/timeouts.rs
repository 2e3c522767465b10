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
    // A failed request's corrected latency runs to its error: three attempts of
    // 40 ms each and two waits of 5 ms at least.
    assert_eq!(report.latency.count, report.counts.completed);
    assert!(report.latency.min >= 130_000, "{}", report.latency.min);
    // Each abandoned attempt closed its connection; each attempt had its own.
    assert_eq!(server.accepted.load(Ordering::SeqCst), 12);
}

#[test]
fn a_retry_after_a_stall_succeeds() {
    let server = TinyServer::start(Behavior::StallOnce {
        nth: 1,
        pause: Duration::from_secs(3),
    });
    let mut spec = closed(&server.url(), 1, None, 5);
    // Generous, so that only the stalled attempt can time out on a loaded machine.
    spec.timeout = Some("500ms".parse().unwrap());
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
    assert!(report.latency.max >= 500_000, "{}", report.latency.max);
    assert!(report.latency_uncorrected.max < report.latency.max);
}

#[test]
fn open_arrivals_time_out_and_retry_on_fresh_connections() {
    let server = TinyServer::start(Behavior::Delay(Duration::from_millis(300)));
    let mut spec = servelab_load::LoadSpec::new(vec![servelab_load::Target::new(server.url())]);
    spec.workload = servelab_load::Workload::Open {
        rate: 200.0,
        arrival: servelab_load::Arrival::Uniform,
        connections: 4,
        session: None,
    };
    spec.requests = Some(10);
    spec.threads = 1;
    spec.duration = Some(Duration::from_secs(60));
    spec.timeout = Some("30ms".parse().unwrap());
    spec.retries = Some(1);
    spec.retry_wait = "10ms".parse().unwrap();
    let report = servelab_load::run(&spec).unwrap();
    assert_eq!(report.counts.completed, 10);
    assert_eq!(report.errors.timeout, 10);
    assert_eq!(report.counts.timeouts, 20);
    assert_eq!(report.counts.retries, 10);
    assert_eq!(report.counts.attempts, 20);
}
