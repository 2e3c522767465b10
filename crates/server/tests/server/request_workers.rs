//! What `event` promises over `pool`: a worker is taken by a request, not by a
//! connection. Idle keep-alive connections and heads still being sent cost the
//! selector a slot and no worker.
//!
//! Each scenario runs `pool` beside `event` with the same small bounds (two
//! workers or one, a queue of one), to show what it guards against: `pool`
//! gives each connection a worker for its whole life, so a few idle or half-sent
//! connections take every worker and fill the queue, and the next client is
//! refused with 503 at once. Assertions are on statuses, never on timings; the
//! server's timeouts are set far beyond the test so nothing expires meanwhile.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use servelab_server::Engine;

use crate::support::*;

/// Long enough that no held connection times out during a test.
const LONG: Duration = Duration::from_secs(60);

/// Opens `n` connections that each send half a request head and stop.
fn half_heads(addr: std::net::SocketAddr, n: usize) -> Vec<TcpStream> {
    (0..n)
        .map(|_| {
            let mut s = connect(addr);
            s.write_all(b"GET /hello.txt HTTP/1.1\r\nHost: t\r\n")
                .unwrap();
            s
        })
        .collect()
}

/// Asks for `path` on a new connection; `None` when the server closed (or
/// reset) it without a response, as `pool`'s acceptor may when it refuses a
/// connection whose request arrives after its 503 went out.
fn try_get(addr: std::net::SocketAddr, path: &str) -> Option<Resp> {
    let req = format!("GET {path} HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n");
    let out = exchange(addr, req.as_bytes());
    (!out.is_empty()).then(|| parse_one(&out, false).0)
}

/// Reads one Content-Length-framed response from a kept-alive connection.
fn read_one(s: &mut TcpStream) -> Resp {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        let n = s.read(&mut chunk).unwrap();
        assert!(n > 0, "closed before a whole response");
        buf.extend_from_slice(&chunk[..n]);
        if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            let (resp, _) = parse_one(&buf, false);
            if buf.len() >= end + 4 + resp.body.len() {
                return resp;
            }
        }
    }
}

#[test]
fn half_sent_heads_take_no_event_worker() {
    for engine in [Engine::Pool, Engine::Event] {
        let dir = fixture();
        let server = start(dir.path(), engine, |c| {
            c.workers = 2;
            c.queue = 1;
            c.read_timeout = LONG;
        });
        let addr = server.local_addr();
        let held = half_heads(addr, 300);
        let r = try_get(addr, "/hello.txt");
        match engine {
            // Two heads hold the two workers, one waits in the queue: refused.
            Engine::Pool => assert!(
                r.as_ref().is_none_or(|r| r.status == 503),
                "{engine}: {r:?}"
            ),
            _ => {
                let r = r.expect("an answer");
                assert_eq!(r.status, 200, "{engine}");
                assert_eq!(r.body, b"hello, world\n");
            }
        }
        drop(held);
        server.shutdown().unwrap();
    }
}

#[test]
fn idle_keep_alive_connections_take_no_event_worker() {
    for engine in [Engine::Pool, Engine::Event] {
        let dir = fixture();
        let server = start(dir.path(), engine, |c| {
            c.workers = 1;
            c.queue = 1;
            c.keepalive_timeout = LONG;
        });
        let addr = server.local_addr();
        // One request each, then idle. On pool the first holds the only worker
        // and the second waits in the queue for it, so it gets no answer.
        let mut idle: Vec<TcpStream> = (0..10).map(|_| connect(addr)).collect();
        for (i, s) in idle.iter_mut().enumerate() {
            s.write_all(b"GET /hello.txt HTTP/1.1\r\nHost: t\r\n\r\n")
                .unwrap();
            if engine == Engine::Event || i == 0 {
                assert_eq!(read_one(s).status, 200, "{engine}: connection {i}");
            }
        }
        let r = try_get(addr, "/1k.txt");
        match engine {
            Engine::Pool => assert!(
                r.as_ref().is_none_or(|r| r.status == 503),
                "{engine}: {r:?}"
            ),
            _ => assert_eq!(r.map(|r| r.status), Some(200), "{engine}"),
        }
        if engine == Engine::Event {
            // And each idle one is served again, by the one worker in turn.
            for s in &mut idle {
                s.write_all(b"GET /hello.txt HTTP/1.1\r\nHost: t\r\n\r\n")
                    .unwrap();
                assert_eq!(read_one(s).status, 200, "{engine}");
            }
        }
        drop(idle);
        server.shutdown().unwrap();
    }
}
