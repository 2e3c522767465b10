//! Failed connects are errors, not finished requests: the client backs off and
//! reconnects for the same request. A run in which nothing ever connected stops
//! within about a second and says why; a run without a time limit whose target
//! went away gives up after 10 s without a connect.

use std::time::Duration;

use crate::support::closed;
use servelab_load::{Arrival, ConnectFailureKind, LoadSpec, Target, Workload};

/// A loopback port with nothing listening (bound, then released).
fn closed_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

#[test]
fn an_open_run_against_a_closed_port_sends_nothing_that_completes() {
    let url = format!("http://127.0.0.1:{}/", closed_port());
    let mut spec = LoadSpec::new(vec![Target::new(url)]);
    spec.workload = Workload::Open {
        rate: 200.0,
        arrival: Arrival::Uniform,
        connections: 3,
        session: None,
    };
    spec.threads = 1;
    spec.duration = Some(Duration::from_millis(500));
    let r = servelab_load::run(&spec).unwrap();
    assert_eq!(r.counts.completed, 0);
    assert_eq!(r.throughput.requests_per_s, 0.0);
    assert_eq!(r.throughput.cpu_us_per_request, None, "not a 0: unmeasured");
    // Each connection held one request through its backoffs, but no byte of
    // any request reached a socket: nothing was sent.
    assert_eq!(
        (r.counts.sent, r.counts.in_flight),
        (0, 0),
        "{:?}",
        r.counts
    );
    assert!(r.counts.never_sent > 80, "{:?}", r.counts);
    assert_eq!(r.counts.scheduled, r.counts.never_sent);
    let f = r.connect_failure.as_ref().expect("says why");
    assert_eq!(f.kind, ConnectFailureKind::Refused);
    assert_eq!(r.counts.errors, r.errors.connect_refused);
    assert!(r.errors.connect_refused <= 3 * 7, "{:?}", r.errors);
    assert!(r.summary().contains("none: no request completed"));
}

#[test]
fn a_server_that_comes_back_gets_the_requests_held_through_the_outage() {
    let port = closed_port();
    let url = format!("http://127.0.0.1:{port}/file");
    // The server starts listening 300 ms into the run, on the same port.
    let late = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(300));
        let listener = std::net::TcpListener::bind(("127.0.0.1", port)).unwrap();
        let (mut conn, _) = listener.accept().unwrap();
        use std::io::{Read, Write};
        let mut buf = [0u8; 4096];
        let mut head = Vec::new();
        for _ in 0..5 {
            while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                let n = conn.read(&mut buf).unwrap();
                assert!(n > 0, "client closed early");
                head.extend_from_slice(&buf[..n]);
            }
            head.clear();
            conn.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
                .unwrap();
        }
    });
    let mut spec = closed(&url, 1, None, 5);
    spec.duration = Some(Duration::from_secs(30)); // safety net only
    let r = servelab_load::run(&spec).unwrap();
    late.join().unwrap();
    assert_eq!(r.counts.ok, 5, "{:?} {:?}", r.counts, r.errors);
    assert_eq!(r.counts.completed, 5);
    assert!(r.errors.connect_refused >= 1, "{:?}", r.errors);
    assert_eq!(r.counts.failed, 0, "a refused connect finishes no request");
    // The first request was held from its intended start through the backoffs:
    // its corrected latency spans the outage, its send-to-answer time does not.
    assert!(r.latency.max > r.latency_uncorrected.max, "{:?}", r.latency);
}

/// Regression (issue 19): `load http://127.0.0.1:1/ -n 100` waited 10 s, and
/// with `-d 1s` reported "10 sent ... 10 in flight" and latencies of 1 s.
#[test]
fn a_run_that_never_connects_stops_early_sends_nothing_and_says_why() {
    let port = closed_port();
    let url = format!("http://127.0.0.1:{port}/");
    for duration in [None, Some(Duration::from_secs(60))] {
        let mut spec = closed(&url, 2, None, 100);
        spec.duration = duration;
        let r = servelab_load::run(&spec).unwrap();
        assert!(r.unreachable, "{duration:?}");
        // The run stops about a second in (NEVER_CONNECTED), far before its
        // 60 s limit; the bound only tells "stopped early" from "ran out".
        assert!(r.duration_s < 30.0, "{duration:?}: {}", r.duration_s);
        assert_eq!(r.counts.completed, 0);
        assert_eq!((r.counts.sent, r.counts.in_flight), (0, 0));
        assert_eq!(r.counts.never_sent, 2, "each user held one request");
        let f = r.connect_failure.as_ref().expect("says why");
        assert_eq!(
            f.to_string(),
            format!("connection refused to 127.0.0.1:{port}: is a server listening?")
        );
        let summary = r.summary();
        assert!(summary.contains("0 sent, 2 never sent"), "{summary}");
        assert!(summary.contains("none measured"), "{summary}");
        assert!(!summary.contains("p99"), "no latency figures: {summary}");
    }
}

#[test]
fn a_run_without_a_time_limit_gives_up_when_its_target_goes_away() {
    // The server answers one request and is gone; the client then waits
    // UNREACHABLE (10 s) without a connect: this test takes that long.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/file", listener.local_addr().unwrap());
    let server = std::thread::spawn(move || {
        use std::io::{Read, Write};
        let (mut conn, _) = listener.accept().unwrap();
        let mut head = Vec::new();
        let mut buf = [0u8; 4096];
        while !head.windows(4).any(|w| w == b"\r\n\r\n") {
            let n = conn.read(&mut buf).unwrap();
            assert!(n > 0, "client closed early");
            head.extend_from_slice(&buf[..n]);
        }
        // The port refuses from now on, before the client can try to reconnect.
        drop(listener);
        conn.write_all(b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nok")
            .unwrap();
    });
    let mut spec = closed(&url, 1, None, 100);
    spec.duration = None;
    let r = servelab_load::run(&spec).unwrap();
    server.join().unwrap();
    assert!(r.unreachable);
    assert_eq!(r.counts.ok, 1);
    // The second request was held through the refused connects, never written.
    assert_eq!(
        (r.counts.sent, r.counts.in_flight, r.counts.never_sent),
        (1, 0, 1),
        "{:?}",
        r.counts
    );
    assert_eq!(r.connect_failure, None, "it did connect once");
    assert!(r.summary().contains("unreachable"));
}
