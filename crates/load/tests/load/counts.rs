//! Exact counts and connection reuse against a tiny keep-alive server.

use crate::support::{Behavior, TinyServer, closed};
use std::sync::atomic::Ordering;

#[test]
fn a_run_of_1000_requests_reports_1000() {
    let server = TinyServer::start(Behavior::Ok(1024));
    let report = servelab_load::run(&closed(&server.url(), 8, None, 1000)).unwrap();
    assert_eq!(report.counts.completed, 1000);
    assert_eq!(report.counts.ok, 1000);
    assert_eq!(report.counts.errors, 0);
    assert_eq!(report.latency.count, 1000);
    assert_eq!(report.status["200"], 1000);
    assert_eq!(server.requests.load(Ordering::SeqCst), 1000);
    // Without --session every user keeps one connection for the whole run.
    assert_eq!(report.counts.connections, 8);
    assert_eq!(server.accepted.load(Ordering::SeqCst), 8);
    let head = "HTTP/1.1 200 OK\r\nContent-Length: 1024\r\n\r\n".len() as u64;
    assert_eq!(report.counts.bytes_received, 1000 * (head + 1024));
    let per_second: u64 = report.series.iter().map(|s| s.completed).sum();
    assert_eq!(per_second, 1000);
}

#[test]
fn connections_opened_equal_users_times_sessions() {
    let server = TinyServer::start(Behavior::Ok(100));
    // 4 users x 5 sessions x 5 requests.
    let report = servelab_load::run(&closed(&server.url(), 4, Some(5), 100)).unwrap();
    assert_eq!(report.counts.ok, 100);
    assert_eq!(report.counts.connections, 20);
    assert_eq!(server.accepted.load(Ordering::SeqCst), 20);
}

#[test]
fn session_of_one_is_a_connection_per_request_like_ab() {
    let server = TinyServer::start(Behavior::Ok(10));
    let report = servelab_load::run(&closed(&server.url(), 3, Some(1), 30)).unwrap();
    assert_eq!(report.counts.ok, 30);
    assert_eq!(report.counts.connections, 30);
    assert_eq!(report.connect.count, 30);
}

#[test]
fn chunked_responses_are_counted_whole() {
    let server = TinyServer::start(Behavior::Chunked);
    let report = servelab_load::run(&closed(&server.url(), 2, None, 50)).unwrap();
    assert_eq!(report.counts.ok, 50);
    assert_eq!(report.counts.connections, 2);
}

#[test]
fn many_users_on_many_threads_stay_exact() {
    let server = TinyServer::start(Behavior::Ok(10));
    let mut spec = closed(&server.url(), 300, None, 3001);
    spec.threads = 3;
    let report = servelab_load::run(&spec).unwrap();
    assert_eq!(report.counts.completed, 3001);
    assert_eq!(report.counts.ok, 3001);
    assert_eq!(server.requests.load(Ordering::SeqCst), 3001);
}

#[test]
fn nothing_listening_is_connect_refused_errors_not_completed_requests() {
    // Regression test: every refused connect used to finish a request, so a run
    // against a closed port reported 118k "completed" requests a second.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut spec = closed(&format!("http://127.0.0.1:{port}/"), 2, None, 20);
    spec.requests = None;
    spec.duration = Some(std::time::Duration::from_millis(500));
    let report = servelab_load::run(&spec).unwrap();
    assert_eq!(report.counts.completed, 0);
    assert_eq!(report.counts.ok, 0);
    assert!(report.errors.connect_refused > 0);
    assert_eq!(report.counts.errors, report.errors.connect_refused);
    // Each user holds its one request through the backoff; no byte of it was
    // ever written, so it is unfinished and never sent.
    assert_eq!(report.counts.sent, 0);
    assert_eq!(report.counts.never_sent, 2);
    assert_eq!(report.counts.in_flight, 0);
    assert_eq!(report.error_rate(), Some(1.0));
    // Backoff (10 ms doubling, jittered): 500 ms allows at most 7 connects a
    // user (the jittered waits are at least 5, 10, 20, 40, 80, 160 ms), where a
    // spinning client makes tens of thousands.
    assert!(
        report.errors.connect_refused <= 2 * 7,
        "{} connects refused",
        report.errors.connect_refused
    );
}

#[test]
fn targets_on_two_servers_each_get_their_own_requests() {
    // Regression test: a keep-alive connection must not carry a request for a
    // target on another server.
    let (a, b) = (
        TinyServer::start(Behavior::Ok(10)),
        TinyServer::start(Behavior::Ok(20)),
    );
    let mut spec = closed(&a.url(), 2, None, 200);
    spec.targets.push(servelab_load::Target::new(b.url()));
    let report = servelab_load::run(&spec).unwrap();
    assert_eq!(report.counts.ok, 200);
    let (na, nb) = (
        a.requests.load(Ordering::SeqCst),
        b.requests.load(Ordering::SeqCst),
    );
    assert_eq!(na + nb, 200);
    assert!(na > 50 && nb > 50, "{na} / {nb}");
}

#[test]
fn large_bodies_are_counted_to_the_byte() {
    let server = TinyServer::start(Behavior::Ok(1_000_000));
    let report = servelab_load::run(&closed(&server.url(), 2, None, 20)).unwrap();
    assert_eq!(report.counts.ok, 20);
    let head = "HTTP/1.1 200 OK\r\nContent-Length: 1000000\r\n\r\n".len() as u64;
    assert_eq!(report.counts.bytes_received, 20 * (head + 1_000_000));
}

/// `--poll-before-sleep` and `--nap`: a loop that polls before it blocks (the
/// longest budget, so most of its waits are polls), or naps on its own timer
/// first, still counts every request once, with sessions reconnecting under it.
#[test]
fn polling_or_napping_before_sleep_counts_exactly() {
    use std::time::Duration;
    for (poll, nap) in [
        (Some(Duration::from_millis(1)), Duration::ZERO),
        (None, Duration::from_micros(200)),
    ] {
        let server = TinyServer::start(Behavior::Ok(100));
        let mut spec = closed(&server.url(), 4, Some(10), 400);
        spec.poll_before_sleep = poll;
        spec.nap = nap;
        let report = servelab_load::run(&spec).unwrap();
        let c = &report.counts;
        let case = (poll, nap);
        assert_eq!(
            (c.completed, c.ok, c.errors, c.in_flight),
            (400, 400, 0, 0),
            "{case:?}"
        );
        assert_eq!(report.latency.count, 400, "{case:?}");
        assert_eq!(server.requests.load(Ordering::SeqCst), 400, "{case:?}");
        assert_eq!(c.connections, 40, "{case:?}");
        assert_eq!(report.run.nap_us, Some(nap.as_secs_f64() * 1e6), "{case:?}");
    }
}
