//! `--status`: the counters over HTTP, as JSON (`GET /-/status`) for people and
//! scripts, and in the Prometheus text exposition format (`GET /-/metrics`) for
//! scrapers.
//!
//! Both read one [`Snapshot`] of the shared counters (see `stats.rs`), so they
//! are exact for every engine, the process engines included. The status request
//! itself is in flight while the snapshot is taken: it shows in `in_flight` and
//! in `open`, and its own response is not yet counted in the status classes or
//! in `bytes_sent`. A test that sends a known sequence of requests and then asks
//! for `/-/status` therefore sees exactly that sequence.
//!
//! The paths live under `/-/`, a prefix no ordinary site uses; with `--status`
//! they take precedence over files of the same name, without it they are
//! ordinary paths (normally 404). Only GET and HEAD reach here, like every other
//! path. The responses carry no validators, so nothing caches them.

use std::fmt::Write as _;

use servelab_http::RequestHead;

mod document;

pub use document::{ByClass, Connections, Handshakes, Http2, Requests, StatusDocument};

use crate::runtime::shared::{Local, Shared};
use crate::runtime::stats::Snapshot;
use crate::site::response::{Out, Persist, Response, small_ok};

/// The JSON endpoint.
pub(crate) const STATUS_PATH: &str = "/-/status";
/// The Prometheus endpoint.
pub(crate) const METRICS_PATH: &str = "/-/metrics";

/// Which endpoint a request asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Endpoint {
    Json,
    Prometheus,
}

fn endpoint(target: &str) -> Option<Endpoint> {
    let path = target.split_once('?').map_or(target, |(p, _)| p);
    match path {
        STATUS_PATH => Some(Endpoint::Json),
        METRICS_PATH => Some(Endpoint::Prometheus),
        _ => None,
    }
}

/// Answers `/-/status` and `/-/metrics` when `--status` is on; `None` lets the
/// request go on to the static files. `req.method` is GET or HEAD here.
pub(crate) fn respond(
    req: &RequestHead<'_>,
    head_only: bool,
    site: &Shared,
    w: &mut Local,
    persist: Persist,
    out: &mut impl Out,
) -> Option<Response> {
    if !site.config.status {
        return None;
    }
    let which = endpoint(req.target)?;
    let snap = site.stats.snapshot();
    let engine = site.config.engine;
    let workers = if engine.uses_workers() {
        site.config.workers
    } else {
        1
    };
    let (body, content_type) = match which {
        Endpoint::Json => (json(&snap, engine.name(), workers), "application/json"),
        Endpoint::Prometheus => (
            prometheus(&snap, engine.name(), workers),
            "text/plain; version=0.0.4; charset=utf-8",
        ),
    };
    Some(small_ok(
        content_type,
        body.as_bytes(),
        w.clock.http(),
        persist,
        head_only,
        site,
        out,
    ))
}

/// The counters as one JSON object ([`StatusDocument`]).
pub(crate) fn json(s: &Snapshot, engine: &str, workers: usize) -> String {
    StatusDocument::new(s, engine, workers).to_json()
}

/// The counters in the Prometheus text format 0.0.4: `# HELP`, `# TYPE`, then
/// samples; counters end in `_total`, gauges do not.
pub(crate) fn prometheus(s: &Snapshot, engine: &str, workers: usize) -> String {
    let mut o = String::with_capacity(2048);
    let mut metric = |name: &str, kind: &str, help: &str, samples: &[(&str, u64)]| {
        let _ = writeln!(o, "# HELP servelab_{name} {help}");
        let _ = writeln!(o, "# TYPE servelab_{name} {kind}");
        for (labels, value) in samples {
            let _ = writeln!(o, "servelab_{name}{labels} {value}");
        }
    };
    metric(
        "info",
        "gauge",
        "The engine and its workers (value always 1).",
        &[(&format!("{{engine=\"{engine}\",workers=\"{workers}\"}}"), 1)],
    );
    let [c1, c2, c3, c4, c5] = s.responses;
    metric(
        "responses_total",
        "counter",
        "Responses completely written, by status class (abandoned ones apart).",
        &[
            ("{class=\"1xx\"}", c1),
            ("{class=\"2xx\"}", c2),
            ("{class=\"3xx\"}", c3),
            ("{class=\"4xx\"}", c4),
            ("{class=\"5xx\"}", c5),
        ],
    );
    metric(
        "bytes_sent_total",
        "counter",
        "Bytes written to clients, heads and bodies.",
        &[("", s.bytes_sent)],
    );
    metric(
        "connections_accepted_total",
        "counter",
        "Connections accepted.",
        &[("", s.accepted)],
    );
    metric(
        "connections_open",
        "gauge",
        "Connections open now.",
        &[("", s.open)],
    );
    metric(
        "connections_dropped_total",
        "counter",
        "Connections answered 503 because a queue or the connection cap was full.",
        &[("", s.dropped)],
    );
    metric(
        "requests_in_flight",
        "gauge",
        "Requests being answered now.",
        &[("", s.in_flight)],
    );
    metric(
        "requests_abandoned_total",
        "counter",
        "Responses whose client had gone before they were completely written.",
        &[("", s.abandoned)],
    );
    metric(
        "tls_handshakes_total",
        "counter",
        "TLS handshakes: done in full, resumed, or failed.",
        &[
            ("{kind=\"full\"}", s.tls.full),
            ("{kind=\"resumed\"}", s.tls.resumed),
            ("{kind=\"failed\"}", s.tls.failed),
        ],
    );
    metric(
        "http2_connections_total",
        "counter",
        "Connections that spoke HTTP/2 (also in connections_accepted_total).",
        &[("", s.h2.connections)],
    );
    metric(
        "http2_connections_open",
        "gauge",
        "HTTP/2 connections open now.",
        &[("", s.h2.open)],
    );
    metric(
        "http2_streams_total",
        "counter",
        "HTTP/2 streams that carried a request (each also a request).",
        &[("", s.h2.streams)],
    );
    metric(
        "http2_streams_open",
        "gauge",
        "HTTP/2 streams being served now.",
        &[("", s.h2.open_streams)],
    );
    let _ = writeln!(
        o,
        "# HELP servelab_uptime_seconds Seconds since the server started.\n\
         # TYPE servelab_uptime_seconds gauge\n\
         servelab_uptime_seconds {:.3}",
        s.uptime.as_secs_f64()
    );
    s.service.render(&mut o);
    s.tls.handshake.render_as(
        &mut o,
        "servelab_tls_handshake_seconds",
        "Time from accepting a TLS connection to its handshake done.",
    );
    o
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn snap() -> Snapshot {
        Snapshot {
            uptime_secs: 2,
            uptime: Duration::from_millis(2500),
            accepted: 7,
            open: 1,
            dropped: 2,
            in_flight: 1,
            abandoned: 3,
            bytes_sent: 12345,
            responses: [0, 5, 1, 2, 2],
            service: crate::runtime::service_time::ServiceTimes::default(),
            tls: crate::runtime::stats::TlsCounts {
                full: 4,
                resumed: 2,
                failed: 1,
                ..crate::runtime::stats::TlsCounts::default()
            },
            h2: crate::runtime::stats::H2Counts {
                connections: 3,
                open: 1,
                streams: 9,
                open_streams: 2,
            },
        }
    }

    #[test]
    fn endpoints_by_path() {
        assert_eq!(endpoint("/-/status"), Some(Endpoint::Json));
        assert_eq!(endpoint("/-/status?pretty"), Some(Endpoint::Json));
        assert_eq!(endpoint("/-/metrics"), Some(Endpoint::Prometheus));
        assert_eq!(endpoint("/-/status/"), None);
        assert_eq!(endpoint("/status"), None);
    }

    #[test]
    fn json_fields() {
        let j = json(&snap(), "fork", 4);
        assert!(j.starts_with("{\"engine\":\"fork\",\"workers\":4,\"uptime_seconds\":2.5,"));
        assert!(j.contains("\"connections\":{\"accepted\":7,\"open\":1,\"dropped\":2}"));
        assert!(j.contains("\"requests\":{\"total\":13,\"in_flight\":1,\"abandoned\":3,"));
        assert!(j.contains("\"by_class\":{\"1xx\":0,\"2xx\":5,\"3xx\":1,\"4xx\":2,\"5xx\":2}}"));
        assert!(j.ends_with(
            "\"bytes_sent\":12345,\"tls\":{\"full\":4,\"resumed\":2,\"failed\":1},\
             \"http2\":{\"connections\":3,\"open\":1,\"streams\":9,\"open_streams\":2}}\n"
        ));
        // What the server writes, a reader gets back whole.
        let back: StatusDocument = serde_json::from_str(&j).unwrap();
        assert_eq!(back, StatusDocument::new(&snap(), "fork", 4));
        assert_eq!(back.requests.by_class.c2xx, 5);
    }

    #[test]
    fn prometheus_format() {
        let p = prometheus(&snap(), "prefork", 2);
        let mut types = 0;
        for line in p.lines() {
            if let Some(rest) = line.strip_prefix("# TYPE ") {
                types += 1;
                let (name, kind) = rest.split_once(' ').unwrap();
                assert_eq!(name.ends_with("_total"), kind == "counter", "{line}");
                continue;
            }
            if line.starts_with("# HELP ") {
                continue;
            }
            let (name, value) = line.rsplit_once(' ').unwrap();
            assert!(name.starts_with("servelab_"), "{line}");
            assert!(value.parse::<f64>().is_ok(), "{line}");
        }
        assert_eq!(types, 16);
        assert!(p.contains("# TYPE servelab_service_seconds histogram\n"));
        assert!(p.contains("servelab_service_seconds_count 0\n"));
        assert!(p.contains("servelab_tls_handshakes_total{kind=\"resumed\"} 2\n"));
        assert!(p.contains("servelab_http2_streams_total 9\n"));
        assert!(p.contains("servelab_http2_connections_open 1\n"));
        assert!(p.contains("# TYPE servelab_tls_handshake_seconds histogram\n"));
        assert!(p.ends_with("servelab_tls_handshake_seconds_count 0\n"));
        assert!(p.contains("servelab_info{engine=\"prefork\",workers=\"2\"} 1\n"));
        assert!(p.contains("servelab_responses_total{class=\"4xx\"} 2\n"));
        assert!(p.contains("servelab_bytes_sent_total 12345\n"));
        assert!(p.contains("servelab_uptime_seconds 2.500\n"));
    }
}
