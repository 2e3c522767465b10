//! Persistence rules of RFC 9112 section 9.3.

use std::io::{Read, Write};
use std::time::Duration;

use crate::support::*;

/// Reads exactly one response from a kept-alive connection.
fn read_response(s: &mut std::net::TcpStream, head: bool) -> Resp {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 65536];
    loop {
        if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            let text = String::from_utf8_lossy(&buf[..end]).to_lowercase();
            let len: usize = text
                .lines()
                .find_map(|l| l.strip_prefix("content-length: "))
                .map_or(0, |v| v.trim().parse().unwrap());
            let need = end + 4 + if head { 0 } else { len };
            if buf.len() >= need {
                assert_eq!(buf.len(), need, "no extra bytes");
                return parse_one(&buf, head).0;
            }
        }
        let n = s.read(&mut chunk).unwrap();
        assert!(n > 0, "connection closed early");
        buf.extend_from_slice(&chunk[..n]);
    }
}

#[test]
fn http11_reuses_the_connection() {
    each_engine(|engine, addr, _| {
        let mut s = connect(addr);
        for _ in 0..5 {
            s.write_all(b"GET /hello.txt HTTP/1.1\r\nHost: t\r\n\r\n")
                .unwrap();
            let r = read_response(&mut s, false);
            assert_eq!(r.status, 200, "{engine}");
            assert_eq!(r.header("connection"), None);
        }
        s.write_all(b"GET /hello.txt HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
            .unwrap();
        let r = read_response(&mut s, false);
        assert_eq!(r.header("connection"), Some("close"));
        let mut rest = Vec::new();
        assert_eq!(
            s.read_to_end(&mut rest).unwrap(),
            0,
            "closed after Connection: close"
        );
    });
}

#[test]
fn http10_closes_unless_keep_alive() {
    each_engine(|engine, addr, _| {
        let raw = exchange(addr, b"GET /hello.txt HTTP/1.0\r\n\r\n");
        let (r, used) = parse_one(&raw, false);
        assert_eq!(used, raw.len());
        assert_eq!(r.status, 200, "{engine}");
        assert_eq!(r.header("connection"), Some("close"));

        let mut s = connect(addr);
        s.write_all(b"GET /hello.txt HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")
            .unwrap();
        let r = read_response(&mut s, false);
        assert_eq!(r.header("connection"), Some("keep-alive"));
        s.write_all(b"HEAD /hello.txt HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")
            .unwrap();
        assert_eq!(read_response(&mut s, true).status, 200);
    });
}

#[test]
fn max_requests_per_connection() {
    for engine in servelab_server::Engine::here() {
        let dir = fixture();
        let server = start(dir.path(), engine, |c| c.max_requests_per_conn = Some(2));
        let mut s = connect(server.local_addr());
        s.write_all(b"GET /hello.txt HTTP/1.1\r\nHost: t\r\n\r\n")
            .unwrap();
        assert_eq!(read_response(&mut s, false).header("connection"), None);
        s.write_all(b"GET /hello.txt HTTP/1.1\r\nHost: t\r\n\r\n")
            .unwrap();
        assert_eq!(
            read_response(&mut s, false).header("connection"),
            Some("close"),
            "{engine}"
        );
        server.shutdown().unwrap();
    }
}

#[test]
fn idle_keep_alive_connection_is_closed_after_timeout() {
    for engine in servelab_server::Engine::here() {
        let dir = fixture();
        let server = start(dir.path(), engine, |c| {
            c.keepalive_timeout = Duration::from_millis(200)
        });
        let mut s = connect(server.local_addr());
        s.write_all(b"GET /hello.txt HTTP/1.1\r\nHost: t\r\n\r\n")
            .unwrap();
        read_response(&mut s, false);
        let mut rest = Vec::new();
        assert_eq!(
            s.read_to_end(&mut rest).unwrap(),
            0,
            "{engine}: silent close"
        );
        server.shutdown().unwrap();
    }
}

#[test]
fn full_pool_queue_answers_503() {
    let dir = fixture();
    let server = start(dir.path(), servelab_server::Engine::Pool, |c| {
        c.workers = 1;
        c.queue = 1;
    });
    let addr = server.local_addr();
    // The only worker is held by a kept-alive connection...
    let mut held = connect(addr);
    held.write_all(b"GET /hello.txt HTTP/1.1\r\nHost: t\r\n\r\n")
        .unwrap();
    read_response(&mut held, false);
    // ...one connection waits in the queue...
    let _queued = connect(addr);
    std::thread::sleep(Duration::from_millis(100));
    // ...and the next one is refused, visibly.
    let raw = exchange(addr, b"GET /hello.txt HTTP/1.1\r\nHost: t\r\n\r\n");
    let (r, _) = parse_one(&raw, false);
    assert_eq!(r.status, 503);
    assert_eq!(r.header("retry-after"), Some("1"));
    assert_eq!(server.stats().snapshot().dropped, 1);
    drop(held);
    server.shutdown().unwrap();
}
