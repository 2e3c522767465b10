//! `https://` targets: keep-alive over TLS, resumption on and off as the
//! server counts it, verification failures said in one line, `--cacert`,
//! `--insecure`, mutual TLS, a plain-HTTP server on an https URL, the
//! handshake histogram in the JSON, and segments that still merge exactly.

use std::sync::atomic::Ordering;

use crate::support::closed;
use crate::tls_server::{Pki, TlsServer};
use servelab_load::{
    ConnectFailureKind, HandshakeFailureKind, LoadSpec, Report, Segment, TlsOptions,
};

/// A spec against `url` that trusts only the test CA.
fn trusting(pki: &Pki, url: &str, users: u32, session: Option<u32>, requests: u64) -> LoadSpec {
    let mut spec = closed(url, users, session, requests);
    spec.tls = TlsOptions {
        cacert: Some(pki.ca_file()),
        ..TlsOptions::default()
    };
    spec
}

/// The kind of the one-line failure of a run that never got through TLS.
fn failure_kind(r: &Report) -> Option<HandshakeFailureKind> {
    let f = r.connect_failure.as_ref()?;
    assert_eq!(f.kind, ConnectFailureKind::Tls, "{f}");
    f.tls
}

#[test]
fn get_over_tls_with_keep_alive_and_a_handshake_histogram() {
    let pki = Pki::new(&["localhost"]);
    let server = TlsServer::start(&pki, false);
    let spec = trusting(&pki, &server.url("localhost"), 4, None, 200);
    let r = servelab_load::run(&spec).unwrap();
    assert_eq!(r.counts.completed, 200);
    assert_eq!(r.counts.ok, 200, "{}", r.summary());
    assert_eq!(r.errors.total(), 0);
    // Keep-alive: one connection, one handshake per user.
    assert_eq!(server.handshakes.load(Ordering::SeqCst), 4);
    assert_eq!(server.requests.load(Ordering::SeqCst), 200);
    assert!(server.alpn_ok.load(Ordering::SeqCst), "ALPN http/1.1");
    assert_eq!(r.counts.tls_full + r.counts.tls_resumed, 4);
    assert!(r.connect_failure.is_none());
    // The JSON carries the handshake beside connect and first byte.
    let v: serde_json::Value = serde_json::from_str(&r.to_json()).unwrap();
    assert_eq!(v["schema"], "servelab-load/6");
    assert_eq!(v["tls_handshake"]["count"], 4);
    assert_eq!(v["connect"]["count"], 4);
    // Regression: a handshake done within one step took its event's time,
    // and was recorded as 0 us.
    assert!(
        v["tls_handshake"]["min"].as_u64().unwrap() > 0,
        "{}",
        v["tls_handshake"]
    );
    let cpu = v["throughput"]["cpu_us_per_handshake"].as_f64().unwrap();
    assert!(cpu > 0.0, "measured, not zero");
    assert!(r.summary().contains("handshake"), "{}", r.summary());
    // Plain HTTP has no handshakes and says nothing of them.
    assert!(r.tls_failures.total() == 0);
}

#[test]
fn resumption_on_resumes_and_off_does_full_handshakes() {
    let pki = Pki::new(&["localhost", "127.0.0.1"]);
    // Sessions of 2 requests: 30 requests are 15 connections.
    for resume in [true, false] {
        let server = TlsServer::start(&pki, false);
        let mut spec = trusting(&pki, &server.url("127.0.0.1"), 3, Some(2), 30);
        spec.tls.resume = resume;
        let r = servelab_load::run(&spec).unwrap();
        assert_eq!(r.counts.ok, 30, "{}", r.summary());
        let resumed = server.resumed.load(Ordering::SeqCst);
        assert_eq!(server.handshakes.load(Ordering::SeqCst), 15);
        assert_eq!(r.counts.tls_resumed, resumed, "client and server agree");
        assert_eq!(r.counts.tls_full + r.counts.tls_resumed, 15);
        if resume {
            // Each user's first connection is a full handshake; its next
            // ones find the ticket it got with its first answer.
            assert!(resumed >= 12, "resumed {resumed} of 15");
        } else {
            assert_eq!(resumed, 0);
            assert_eq!(r.counts.tls_full, 15);
        }
    }
}

/// Regression: rustls's own session cache keeps 8 tickets per server, and a
/// ticket is single-use, so with more users than that reconnecting at once
/// (`--session 1`) many found none and did a full handshake (against
/// lighttpd, 884 resumed and 1,103 full in one second of `-c 50`).
#[test]
fn every_connection_after_a_users_first_resumes_with_many_users() {
    let pki = Pki::new(&["localhost", "127.0.0.1"]);
    let server = TlsServer::start(&pki, false);
    let users = 24;
    // A connection per request: 240 connections.
    let spec = trusting(&pki, &server.url("127.0.0.1"), users, Some(1), 240);
    let r = servelab_load::run(&spec).unwrap();
    assert_eq!(r.counts.ok, 240, "{}", r.summary());
    assert_eq!(r.counts.tls_full + r.counts.tls_resumed, 240);
    assert_eq!(r.counts.tls_resumed, server.resumed.load(Ordering::SeqCst));
    // At most each user's first connection is full (fewer when a user starts
    // after others have left tickets); every connection leaves at least one
    // ticket before its answer, so a user's later ones always find one.
    assert!(r.counts.tls_full <= u64::from(users), "{}", r.summary());
}

#[test]
fn an_untrusted_certificate_stops_the_run_with_one_line_naming_the_fixes() {
    let pki = Pki::new(&["localhost"]);
    let server = TlsServer::start(&pki, false);
    // The system store does not know the test CA.
    let spec = closed(&server.url("localhost"), 2, None, 10);
    let r = servelab_load::run(&spec).unwrap();
    assert_eq!(failure_kind(&r), Some(HandshakeFailureKind::UnknownIssuer));
    let line = r.connect_failure.as_ref().unwrap().to_string();
    assert!(line.starts_with("TLS handshake with 127.0.0.1:"), "{line}");
    assert!(
        line.contains("--cacert") && line.contains("--insecure"),
        "{line}"
    );
    assert!(!line.contains('\n'));
    assert_eq!(r.counts.ok, 0);
    assert!(r.errors.tls_handshake > 0);
    assert_eq!(r.tls_failures.unknown_issuer, r.errors.tls_handshake);
    assert!(r.unreachable, "stopped early, as a refused connect does");
    // --insecure gets through.
    let mut spec = closed(&server.url("localhost"), 2, None, 10);
    spec.tls.insecure = true;
    let r = servelab_load::run(&spec).unwrap();
    assert_eq!(r.counts.ok, 10, "{}", r.summary());
}

#[test]
fn a_name_mismatch_is_said() {
    let pki = Pki::new(&["localhost"]);
    let server = TlsServer::start(&pki, false);
    // Trusted CA, but the certificate does not name 127.0.0.1.
    let spec = trusting(&pki, &server.url("127.0.0.1"), 1, None, 5);
    let r = servelab_load::run(&spec).unwrap();
    assert_eq!(failure_kind(&r), Some(HandshakeFailureKind::NameMismatch));
    let line = r.connect_failure.as_ref().unwrap().to_string();
    assert!(
        line.contains("name mismatch") && line.contains("127.0.0.1"),
        "{line}"
    );
}

#[test]
fn mutual_tls_needs_the_client_certificate() {
    let pki = Pki::new(&["localhost"]);
    let server = TlsServer::start(&pki, true);
    let (cert, key) = pki.client_files();
    let mut spec = trusting(&pki, &server.url("localhost"), 2, Some(5), 20);
    spec.tls.client_cert = Some((cert, key));
    let r = servelab_load::run(&spec).unwrap();
    assert_eq!(r.counts.ok, 20, "{}", r.summary());
    assert_eq!(server.handshakes.load(Ordering::SeqCst), 4);
    // Without it the server refuses every connection: one clear line.
    let spec = trusting(&pki, &server.url("localhost"), 2, Some(5), 20);
    let r = servelab_load::run(&spec).unwrap();
    assert_eq!(r.counts.ok, 0);
    assert_eq!(failure_kind(&r), Some(HandshakeFailureKind::Alert));
    let line = r.connect_failure.as_ref().unwrap().to_string();
    assert!(line.contains("--cert"), "{line}");
}

#[test]
fn a_plain_http_server_on_an_https_url_is_said() {
    // servelab's own server, plain HTTP: it answers the ClientHello with a 400.
    let dir = tempfile::tempdir().unwrap();
    let running = servelab_server::Server::bind(servelab_server::Config::new(dir.path()))
        .unwrap()
        .spawn();
    let url = format!("https://{}/file", running.local_addr());
    let mut spec = closed(&url, 1, None, 5);
    spec.tls.insecure = true;
    let r = servelab_load::run(&spec).unwrap();
    let kind = failure_kind(&r).expect("a TLS failure");
    assert!(
        matches!(
            kind,
            HandshakeFailureKind::NotTls | HandshakeFailureKind::Closed
        ),
        "{kind:?}"
    );
    let line = r.connect_failure.as_ref().unwrap().to_string();
    assert!(
        line.contains("http://") || line.contains("plain-HTTP"),
        "{line}"
    );
    let _ = running.shutdown();
}

#[test]
fn a_cacert_that_is_not_a_certificate_is_one_clear_error() {
    let pki = Pki::new(&["localhost"]);
    let bogus = pki.dir.path().join("bogus.pem");
    std::fs::write(&bogus, "hello\n").unwrap();
    for (path, says) in [
        (bogus, "no PEM certificate"),
        (pki.dir.path().join("missing.pem"), "cannot read it"),
    ] {
        let mut spec = closed("https://localhost:1/", 1, None, 1);
        spec.tls.cacert = Some(path);
        let e = servelab_load::run(&spec).unwrap_err().to_string();
        assert!(e.starts_with("--cacert ") && e.contains(says), "{e}");
        assert!(!e.contains('\n'));
    }
}

#[test]
fn tls_segments_merge_exactly() {
    let pki = Pki::new(&["localhost"]);
    let server = TlsServer::start(&pki, false);
    let mut reports = Vec::new();
    for index in 1..=2 {
        let mut spec = trusting(&pki, &server.url("localhost"), 4, Some(5), 101);
        spec.segment = Segment { index, count: 2 };
        let r = servelab_load::run(&spec).unwrap();
        reports.push(Report::from_json(&r.to_json(), std::path::Path::new("-")).unwrap());
    }
    let merged = Report::merge(&reports).unwrap();
    assert_eq!(merged.counts.ok, 101);
    let handshakes = merged.counts.tls_full + merged.counts.tls_resumed;
    assert_eq!(merged.tls_handshake.count, handshakes);
    assert_eq!(
        handshakes,
        reports[0].tls_handshake.count + reports[1].tls_handshake.count
    );
    assert_eq!(handshakes, server.handshakes.load(Ordering::SeqCst));
    assert!((merged.tls_cpu_s - reports[0].tls_cpu_s - reports[1].tls_cpu_s).abs() < 1e-12);
}
