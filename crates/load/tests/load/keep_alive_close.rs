//! A reused keep-alive connection that the server closes before answering
//! (Apache's event MPM under load) costs the request a reconnect, not an
//! error: it goes out again, once, on a new connection (RFC 9112, 9.3.1),
//! unless the run asks to count it as an error.

use std::sync::atomic::Ordering;

use crate::support::{Behavior, TinyServer, closed};

#[test]
fn a_request_crossing_a_keep_alive_close_is_sent_again_once() {
    // Every connection answers its first request and closes on its second:
    // request 1 is answered on connection 1; request 2 is lost there and sent
    // again as the first on connection 2; and so on.
    let server = TinyServer::start(Behavior::CloseReused);
    let r = servelab_load::run(&closed(&server.url(), 1, None, 10)).unwrap();
    assert_eq!((r.counts.ok, r.counts.errors), (10, 0), "{:?}", r.errors);
    assert_eq!(r.counts.close_retries, 9);
    assert_eq!(r.counts.attempts, 19, "each retry is an attempt");
    assert_eq!(r.counts.connections, 10);
    assert_eq!(server.requests.load(Ordering::SeqCst), 19);
    assert!(r.run.retry_on_close);
    assert!(
        r.summary().contains("close retry  9 requests sent again"),
        "{}",
        r.summary()
    );
}

#[test]
fn with_retry_on_close_off_the_lost_requests_are_errors() {
    let server = TinyServer::start(Behavior::CloseReused);
    let mut spec = closed(&server.url(), 1, None, 10);
    spec.retry_on_close = false;
    let r = servelab_load::run(&spec).unwrap();
    // Odd requests open a connection and are answered; even ones are lost.
    assert_eq!(r.counts.ok, 5);
    assert_eq!(r.errors.closed + r.errors.reset, 5, "{:?}", r.errors);
    assert_eq!(r.counts.close_retries, 0);
    assert!(!r.run.retry_on_close);
}

#[test]
fn an_open_workload_sends_the_lost_request_again_too() {
    let server = TinyServer::start(Behavior::CloseReused);
    let mut spec = closed(&server.url(), 1, None, 40);
    spec.workload = servelab_load::Workload::Open {
        rate: 400.0,
        arrival: servelab_load::Arrival::Uniform,
        connections: 2,
        session: None,
    };
    let r = servelab_load::run(&spec).unwrap();
    assert_eq!((r.counts.ok, r.counts.errors), (40, 0), "{:?}", r.errors);
    assert!(r.counts.close_retries > 0, "{:?}", r.counts);
    assert_eq!(
        server.requests.load(Ordering::SeqCst),
        40 + r.counts.close_retries
    );
}
