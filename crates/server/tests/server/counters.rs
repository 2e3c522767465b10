//! `--status`: the counters are exact for every engine, the process engines
//! included, after a known sequence of requests; `/-/metrics` says the same in
//! the Prometheus format; without `--status` the paths are ordinary (404).

use std::io::{Read, Write};
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use servelab_server::Engine;

use crate::support::*;

/// The number after `"key":` in a flat JSON text (keys are unique in ours).
fn field(json: &str, key: &str) -> u64 {
    let pat = format!("\"{key}\":");
    let at = json
        .find(&pat)
        .unwrap_or_else(|| panic!("no {key} in {json}"));
    let rest = &json[at + pat.len()..];
    let end = rest
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(rest.len());
    rest[..end]
        .parse()
        .unwrap_or_else(|_| panic!("{key} in {json}"))
}

/// A sample of `/-/metrics` by its exact name and labels.
fn sample(text: &str, name: &str) -> u64 {
    text.lines()
        .find_map(|l| l.strip_prefix(name)?.strip_prefix(' '))
        .unwrap_or_else(|| panic!("no {name} in {text}"))
        .parse()
        .unwrap()
}

/// Fetches `/-/status` on a fresh connection: (JSON, bytes on the wire).
fn status(addr: SocketAddr) -> (String, usize) {
    let raw = exchange(
        addr,
        b"GET /-/status HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n",
    );
    let (r, _) = parse_one(&raw, false);
    assert_eq!(r.status, 200);
    assert_eq!(r.header("content-type"), Some("application/json"));
    (String::from_utf8(r.body).unwrap(), raw.len())
}

#[test]
fn counters_exact_after_known_requests() {
    for engine in Engine::here() {
        let dir = fixture();
        let server = start(dir.path(), engine, |c| c.status = true);
        let addr = server.local_addr();
        let mut wire = 0usize;
        // Five connections with one request each: 3 x 200, a 404, a 301.
        for path in ["/hello.txt", "/1k.txt", "/big.bin", "/missing", "/sub"] {
            let raw = exchange(
                addr,
                format!("GET {path} HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n").as_bytes(),
            );
            parse_one(&raw, false);
            wire += raw.len();
        }
        // One keep-alive connection with three pipelined requests: 200, 404, 405.
        let raw = exchange(
            addr,
            b"GET /hello.txt HTTP/1.1\r\nHost: t\r\n\r\n\
              GET /nope HTTP/1.1\r\nHost: t\r\n\r\n\
              DELETE / HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n",
        );
        let (a, n1) = parse_one(&raw, false);
        let (b, n2) = parse_one(&raw[n1..], false);
        let (c, n3) = parse_one(&raw[n1 + n2..], false);
        assert_eq!((a.status, b.status, c.status), (200, 404, 405), "{engine}");
        assert_eq!(n1 + n2 + n3, raw.len());
        wire += raw.len();

        let (json, status_len) = status(addr);
        let e = engine.name();
        assert!(json.contains(&format!("\"engine\":\"{e}\"")), "{e}: {json}");
        assert_eq!(field(&json, "accepted"), 7, "{e}: {json}");
        // The status request's own connection and request.
        assert_eq!(field(&json, "open"), 1, "{e}: {json}");
        assert_eq!(field(&json, "in_flight"), 1, "{e}: {json}");
        assert_eq!(field(&json, "dropped"), 0, "{e}: {json}");
        assert_eq!(field(&json, "abandoned"), 0, "{e}: {json}");
        assert_eq!(field(&json, "2xx"), 4, "{e}: {json}");
        assert_eq!(field(&json, "3xx"), 1, "{e}: {json}");
        assert_eq!(field(&json, "4xx"), 3, "{e}: {json}");
        assert_eq!(field(&json, "5xx"), 0, "{e}: {json}");
        assert_eq!(field(&json, "total"), 8, "{e}: {json}");
        assert_eq!(field(&json, "bytes_sent"), wire as u64, "{e}: {json}");
        let workers = if engine.uses_workers() { 2 } else { 1 };
        assert_eq!(field(&json, "workers"), workers, "{e}: {json}");

        // The metrics endpoint now also counts the status response.
        let m = get(
            addr,
            "GET /-/metrics HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n",
        );
        assert_eq!(m.status, 200);
        assert!(
            m.header("content-type")
                .unwrap()
                .starts_with("text/plain; version=0.0.4")
        );
        let text = String::from_utf8(m.body).unwrap();
        assert_eq!(
            sample(&text, "servelab_responses_total{class=\"2xx\"}"),
            5,
            "{e}"
        );
        assert_eq!(
            sample(&text, "servelab_bytes_sent_total"),
            (wire + status_len) as u64,
            "{e}"
        );
        assert_eq!(sample(&text, "servelab_connections_accepted_total"), 8);
        assert_eq!(sample(&text, "servelab_connections_open"), 1);
        assert_eq!(sample(&text, "servelab_requests_in_flight"), 1);
        assert_eq!(
            sample(
                &text,
                &format!("servelab_info{{engine=\"{e}\",workers=\"{workers}\"}}")
            ),
            1
        );
        server.shutdown().unwrap();
    }
}

#[test]
fn status_paths_are_plain_without_the_flag() {
    each_engine(|engine, addr, _| {
        assert_eq!(simple(addr, "/-/status").status, 404, "{engine}");
        assert_eq!(simple(addr, "/-/metrics").status, 404, "{engine}");
    });
}

/// A client that resets the connection in the middle of a large body makes
/// that response abandoned (the badput of seed 002), in every engine.
#[test]
fn reset_mid_body_counts_abandoned() {
    for engine in Engine::here() {
        let dir = fixture();
        // Larger than both socket buffers, so the server is still writing.
        let body = vec![b'z'; 16 * 1024 * 1024];
        std::fs::write(dir.path().join("huge.bin"), &body).unwrap();
        let server = start(dir.path(), engine, |c| c.status = true);
        let addr = server.local_addr();
        {
            let mut s = connect(addr);
            s.write_all(b"GET /huge.bin HTTP/1.1\r\nHost: t\r\n\r\n")
                .unwrap();
            let mut first = [0u8; 1024];
            s.read_exact(&mut first).unwrap();
            // Close with unread data: the kernel sends a reset.
            socket2::SockRef::from(&s)
                .set_linger(Some(Duration::ZERO))
                .unwrap();
        }
        // The server notices on its next write; give it a bounded while. The
        // abandon and the close may be counted by different threads (event:
        // a worker abandons, the selector closes), so wait for both.
        let until = Instant::now() + Duration::from_secs(20);
        let json = loop {
            let (json, _) = status(addr);
            let settled = field(&json, "abandoned") == 1 && field(&json, "open") == 1;
            if settled || Instant::now() > until {
                break json;
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        assert_eq!(field(&json, "abandoned"), 1, "{engine}: {json}");
        assert_eq!(field(&json, "in_flight"), 1, "{engine}: {json}");
        assert_eq!(field(&json, "open"), 1, "{engine}: {json}");
        server.shutdown().unwrap();
    }
}
