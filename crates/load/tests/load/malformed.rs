//! A server that answers garbage or stops short produces errors, not successes.

use crate::support::{Behavior, TinyServer, closed};

#[test]
fn garbled_responses_are_malformed_errors() {
    let server = TinyServer::start(Behavior::Garbled);
    let report = servelab_load::run(&closed(&server.url(), 2, None, 20)).unwrap();
    assert_eq!(report.counts.completed, 20);
    assert_eq!(report.counts.ok, 0);
    assert_eq!(report.errors.malformed, 20);
    // Each failed request has a corrected latency (to its error), but no
    // response time: nothing valid was answered.
    assert_eq!(report.latency.count, 20);
    assert_eq!(report.latency_uncorrected.count, 0);
}

#[test]
fn a_short_body_is_an_error() {
    let server = TinyServer::start(Behavior::Short);
    let report = servelab_load::run(&closed(&server.url(), 2, None, 10)).unwrap();
    assert_eq!(report.counts.completed, 10);
    assert_eq!(report.counts.ok, 0);
    assert_eq!(report.errors.malformed, 10);
    assert_eq!(report.counts.errors, report.errors.total());
}
