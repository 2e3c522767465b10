//! `--h2`: counts, streams and connections apart, the server's concurrency
//! limit, resets, GOAWAY, bodies through flow control, open arrivals, and the
//! JSON fields, against the tiny HTTP/2 server of `h2_server`.

use std::time::Duration;

use servelab_load::{Arrival, LoadSpec, Protocol, Report, Segment, Target, Workload};

use crate::h2_server::{H2Behavior, H2Server};
use crate::support::closed;
use std::sync::atomic::Ordering::SeqCst;

fn h2(mut spec: LoadSpec, streams: u32) -> LoadSpec {
    spec.protocol = Protocol::H2 { streams };
    spec
}

#[test]
fn several_streams_per_connection_are_counted_exactly() {
    let server = H2Server::start(H2Behavior::ok(1024));
    let report = servelab_load::run(&h2(closed(&server.url(), 4, None, 2000), 8)).unwrap();
    let c = &report.counts;
    assert_eq!((c.completed, c.ok, c.errors), (2000, 2000, 0));
    assert_eq!(report.latency.count, 2000);
    assert_eq!(report.status["200"], 2000);
    assert_eq!(server.seen.requests.load(SeqCst), 2000);
    // 4 connections carry 32 users.
    assert_eq!(c.connections, 4);
    assert_eq!(server.seen.accepted.load(SeqCst), 4);
    assert_eq!(report.run.users, Some(32));
    assert_eq!(report.run.connections, Some(4));
    assert_eq!(report.run.streams, Some(8));
    let h = report.h2.expect("an h2 run reports its streams");
    assert_eq!(h.streams_opened, 2000);
    assert_eq!(h.streams_completed, 2000);
    assert_eq!((h.streams_reset, h.streams_refused), (0, 0));
    assert_eq!(h.server_max_streams, Some(100));
    // Several requests were in flight on one connection at once.
    assert!(server.seen.most_open.load(SeqCst) > 1);
    assert!(c.bytes_received > 2000 * 1024);
}

/// HTTP/2 polls before it sleeps by default; the counts are exact with the
/// poll off, at its default, and at its longest budget, and with a nap
/// before the poll (`--nap`) or instead of it.
#[test]
fn counts_are_exact_whether_the_loop_polls_or_naps_before_sleeping_or_not() {
    for (poll, nap) in [
        (Some(Duration::ZERO), Duration::ZERO),
        (None, Duration::ZERO),
        (Some(Duration::from_millis(1)), Duration::ZERO),
        (None, Duration::from_micros(10)),
        (Some(Duration::ZERO), Duration::from_millis(1)),
    ] {
        let server = H2Server::start(H2Behavior::ok(1024));
        let mut spec = h2(closed(&server.url(), 4, None, 2000), 8);
        spec.poll_before_sleep = poll;
        spec.nap = nap;
        let case = (poll, nap);
        let report = servelab_load::run(&spec).unwrap();
        let c = &report.counts;
        assert_eq!((c.completed, c.ok, c.errors), (2000, 2000, 0), "{case:?}");
        assert_eq!(report.latency.count, 2000, "{case:?}");
        assert_eq!(server.seen.requests.load(SeqCst), 2000, "{case:?}");
        assert_eq!(report.h2.unwrap().streams_completed, 2000, "{case:?}");
    }
}

#[test]
fn the_servers_stream_limit_caps_streams_and_nothing_is_refused() {
    let server = H2Server::start(H2Behavior {
        max_streams: 2,
        ..H2Behavior::ok(100)
    });
    let report = servelab_load::run(&h2(closed(&server.url(), 2, None, 600), 10)).unwrap();
    assert_eq!(report.counts.ok, 600);
    // Had the client opened more than 2 streams at once, the server would
    // have refused the rest (RFC 9113 5.1.2).
    assert_eq!(server.seen.refused.load(SeqCst), 0);
    assert!(server.seen.most_open.load(SeqCst) <= 2);
    let h = report.h2.unwrap();
    assert_eq!(h.server_max_streams, Some(2));
    assert_eq!(h.streams_refused, 0);
    assert!(h.waited_for_stream > 0, "{h:?}");
}

#[test]
fn a_stream_reset_by_the_server_is_an_error_of_class_reset() {
    let server = H2Server::start(H2Behavior {
        reset_every: Some(10),
        ..H2Behavior::ok(16)
    });
    let report = servelab_load::run(&h2(closed(&server.url(), 2, None, 300), 4)).unwrap();
    let c = &report.counts;
    assert_eq!(c.completed, 300);
    assert_eq!(report.errors.reset, 30);
    assert_eq!(c.ok, 270);
    assert_eq!(c.errors, 30);
    let h = report.h2.unwrap();
    assert_eq!(h.streams_reset, 30);
    assert_eq!(h.streams_completed, 270);
    // The connections went on.
    assert_eq!(c.connections, 2);
}

#[test]
fn goaway_moves_requests_to_a_new_connection_without_errors() {
    let server = H2Server::start(H2Behavior {
        goaway_after: Some(50),
        ..H2Behavior::ok(16)
    });
    let report = servelab_load::run(&h2(closed(&server.url(), 1, None, 300), 4)).unwrap();
    let c = &report.counts;
    assert_eq!((c.completed, c.ok, c.errors), (300, 300, 0));
    let h = report.h2.unwrap();
    assert!(h.goaways >= 5, "{h:?}");
    assert!(c.connections >= 6, "{}", c.connections);
    assert_eq!(server.seen.accepted.load(SeqCst), c.connections);
    // Each request was answered once, refused ones sent again.
    assert_eq!(server.seen.answered.load(SeqCst), 300);
    assert_eq!(h.streams_completed, 300);
}

/// Two responses of 40,000 octets in flight on one connection are past the
/// 65,535 octets a connection window starts with. The client opens its windows
/// wide (as h2load does), so the server never waits for its credit.
#[test]
fn responses_in_flight_never_wait_for_the_clients_window() {
    let server = H2Server::start(H2Behavior::ok(40_000));
    let report = servelab_load::run(&h2(closed(&server.url(), 1, None, 200), 4)).unwrap();
    assert_eq!(report.counts.ok, 200);
    assert!(server.seen.most_open.load(SeqCst) >= 2, "{:?}", server.seen);
    assert_eq!(server.seen.held_by_window.load(SeqCst), 0);
}

#[test]
fn large_bodies_flow_both_ways_through_flow_control() {
    // 1 MB responses, within the client's wide windows (the connection's
    // credit given back every 32 KiB read).
    let server = H2Server::start(H2Behavior::ok(1_000_000));
    let mut spec = h2(closed(&server.url(), 2, None, 20), 2);
    spec.method = servelab_load::Method::Post;
    // 300 kB request bodies: past the server's 65,535-octet window too.
    spec.body = Some(vec![b'a'; 300_000].into());
    let report = servelab_load::run(&spec).unwrap();
    assert_eq!(report.counts.ok, 20, "{:?}", report.errors);
    assert!(report.counts.bytes_received >= 20 * 1_000_000);
    assert_eq!(server.seen.body_bytes.load(SeqCst), 20 * 300_000);
}

#[test]
fn open_arrivals_take_free_streams_and_every_request_is_counted() {
    let server = H2Server::start(H2Behavior::ok(64));
    let mut spec = LoadSpec::new(vec![Target::new(server.url())]);
    spec.workload = Workload::Open {
        rate: 2000.0,
        arrival: Arrival::Uniform,
        connections: 2,
        session: None,
    };
    spec.requests = Some(400);
    spec.duration = Some(Duration::from_secs(60));
    spec.threads = 1;
    let report = servelab_load::run(&h2(spec, 4)).unwrap();
    let c = &report.counts;
    assert_eq!(c.completed, 400);
    assert_eq!(c.ok, 400);
    assert_eq!(c.scheduled, c.sent + c.never_sent);
    assert_eq!(c.sent, c.completed + c.in_flight);
    assert_eq!(c.connections, 2);
    assert_eq!(report.run.streams, Some(4));
}

#[test]
fn a_login_in_the_url_is_sent_as_an_authorization_field() {
    let server = H2Server::start(H2Behavior::ok(8));
    let url = format!("http://alice:s3cret@{}/f", server.addr);
    let report = servelab_load::run(&h2(closed(&url, 1, None, 10), 2)).unwrap();
    assert_eq!(report.counts.ok, 10);
    assert_eq!(server.seen.authorized.load(SeqCst), 10);
    assert_eq!(
        &server.seen.authorization.lock().unwrap()[..],
        b"Basic YWxpY2U6czNjcmV0"
    );
}

#[test]
fn the_json_report_has_the_protocol_and_the_streams_and_segments_merge() {
    let server = H2Server::start(H2Behavior::ok(32));
    let mut reports = Vec::new();
    for i in 1..=2 {
        let mut spec = h2(closed(&server.url(), 2, None, 100), 3);
        spec.segment = Segment { index: i, count: 2 };
        reports.push(servelab_load::run(&spec).unwrap());
    }
    let v: serde_json::Value = serde_json::from_str(&reports[0].to_json()).unwrap();
    assert_eq!(v["schema"], "servelab-load/6");
    assert_eq!(v["run"]["protocol"], "h2");
    assert_eq!(v["run"]["streams"], 3);
    assert_eq!(v["run"]["users"], 6);
    // The poll before blocking that the run used: HTTP/2's default, 3 us.
    assert_eq!(v["run"]["poll_before_sleep_us"], 3.0);
    // No nap unless asked for.
    assert_eq!(v["run"]["nap_us"], 0.0);
    assert_eq!(v["h2"]["streams_completed"], 50);
    for field in [
        "streams_opened",
        "streams_reset",
        "streams_refused",
        "streams_cancelled",
        "goaways",
        "waited_for_stream",
        "server_max_streams",
    ] {
        assert!(v["h2"].get(field).is_some(), "{field}");
    }
    let back = Report::from_json(&reports[0].to_json(), std::path::Path::new("a")).unwrap();
    assert_eq!(back.h2, reports[0].h2);
    let merged = Report::merge(&reports).unwrap();
    assert_eq!(merged.counts.ok, 100);
    assert_eq!(merged.h2.unwrap().streams_completed, 100);
    assert!(merged.summary().contains("h2 streams"));
}

#[test]
fn what_h2_does_not_support_yet_is_refused_in_one_line() {
    let mut spec = h2(closed("http://127.0.0.1:1/", 2, Some(5), 10), 2);
    let e = servelab_load::run(&spec).unwrap_err().to_string();
    assert!(e.contains("--session is not supported with --h2"), "{e}");
    spec.workload = Workload::Closed {
        users: 2,
        session: None,
        think: servelab_load::Dist::ZERO,
    };
    spec.protocol = Protocol::H2 { streams: 0 };
    let e = servelab_load::run(&spec).unwrap_err().to_string();
    assert!(e.contains("--streams must be"), "{e}");
}

#[test]
fn a_timeout_cancels_the_stream_and_the_retry_goes_out_on_the_same_connection() {
    let server = H2Server::start(H2Behavior {
        stall_every: Some(10),
        ..H2Behavior::ok(16)
    });
    let mut spec = h2(closed(&server.url(), 1, None, 50), 4);
    spec.timeout = Some("200ms".parse().unwrap());
    spec.retries = Some(1);
    let report = servelab_load::run(&spec).unwrap();
    let c = &report.counts;
    // Requests 10, 20, ... of the server are never answered; each retry is
    // a later request there, answered unless it too lands on a multiple of 10.
    assert_eq!(c.completed, 50);
    assert!(c.timeouts >= 4, "{c:?}");
    assert_eq!(c.retries, c.timeouts - report.errors.timeout);
    assert_eq!(c.ok + report.errors.timeout, 50);
    let h = report.h2.unwrap();
    assert_eq!(h.streams_cancelled, c.timeouts);
    // The stalled streams were cancelled, not their connection closed.
    assert_eq!(c.connections, 1);
    assert_eq!(server.seen.accepted.load(SeqCst), 1);
}

#[test]
fn closed_users_think_between_requests_on_their_streams() {
    let server = H2Server::start(H2Behavior::ok(16));
    let mut spec = h2(closed(&server.url(), 1, None, 100), 4);
    spec.workload = Workload::Closed {
        users: 1,
        session: None,
        think: "2ms".parse().unwrap(),
    };
    let report = servelab_load::run(&spec).unwrap();
    assert_eq!(report.counts.ok, 100);
    // 4 users of 25 requests: 24 thinks each end in a request; the first (a
    // residual) and the last (the quota is spent) are no draw of Z.
    let think = report.think.expect("a think time is reported");
    assert_eq!(think.count, 96);
}

#[test]
fn https_negotiates_h2_by_alpn() {
    let pki = crate::tls_server::Pki::new(&["localhost"]);
    let server = H2Server::start_tls(H2Behavior::ok(256), pki.server_config(false, b"h2"));
    let mut spec = h2(
        closed(
            &format!("https://localhost:{}/f", server.addr.port()),
            2,
            None,
            200,
        ),
        4,
    );
    spec.tls.cacert = Some(pki.ca_file());
    let report = servelab_load::run(&spec).unwrap();
    assert_eq!(
        report.counts.ok, 200,
        "{:?} {:?}",
        report.errors, report.connect_failure
    );
    assert_eq!(report.counts.tls_full + report.counts.tls_resumed, 2);
    assert_eq!(report.h2.unwrap().streams_completed, 200);
    assert_eq!(server.seen.answered.load(SeqCst), 200);
}

#[test]
fn a_server_without_h2_in_alpn_stops_the_run_in_one_line() {
    let pki = crate::tls_server::Pki::new(&["localhost"]);
    let server = crate::tls_server::TlsServer::start(&pki, false);
    let mut spec = h2(closed(&server.url("localhost"), 1, None, 5), 2);
    spec.tls.cacert = Some(pki.ca_file());
    spec.duration = Some(Duration::from_secs(10));
    let report = servelab_load::run(&spec).unwrap();
    assert_eq!(report.counts.completed, 0);
    let why = report
        .connect_failure
        .expect("no connection was usable")
        .to_string();
    assert!(why.contains("did not agree to HTTP/2"), "{why}");
}

#[test]
fn littles_law_closes_over_the_stream_slots() {
    // 2 connections x 4 streams = 8 users with exponential thinks of 5 ms;
    // `run.users` counts the 8, so N·T is theirs.
    let server = H2Server::start(H2Behavior::ok(64));
    let mut spec = h2(closed(&server.url(), 2, None, u64::MAX), 4);
    spec.requests = None;
    spec.duration = Some(Duration::from_millis(1200));
    spec.workload = Workload::Closed {
        users: 2,
        session: None,
        think: "exp:5ms".parse().unwrap(),
    };
    let r = servelab_load::run(&spec).unwrap();
    assert_eq!(r.run.users, Some(8));
    let (sum, n_t, terms) = crate::little::accounted(&r);
    assert!(r.counts.completed > 100, "{:?}", r.counts);
    assert!(
        (sum / n_t - 1.0).abs() < 0.01,
        "the users' time is not all accounted for: {terms}"
    );
}

#[test]
fn a_run_that_never_connects_stops_early_and_says_why() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("http://127.0.0.1:{port}/");
    let r = servelab_load::run(&h2(closed(&url, 2, None, 100), 3)).unwrap();
    assert!(r.unreachable);
    assert_eq!(r.counts.completed, 0);
    // Six users each held a request that no connection ever carried.
    assert_eq!((r.counts.sent, r.counts.never_sent), (0, 6));
    let f = r.connect_failure.expect("says why").to_string();
    assert_eq!(
        f,
        format!("connection refused to 127.0.0.1:{port}: is a server listening?")
    );
}
