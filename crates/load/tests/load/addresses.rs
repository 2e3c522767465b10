//! Host names resolve to every address, tried in turn until one connects.

use std::io::{Read, Write};
use std::net::TcpListener;

use crate::support::closed;

/// Answers `n` requests on one keep-alive connection accepted from `listener`.
fn answer(listener: TcpListener, n: usize) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        let (mut conn, _) = listener.accept().unwrap();
        let mut buf = [0u8; 4096];
        let mut head = Vec::new();
        for _ in 0..n {
            while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                let k = conn.read(&mut buf).unwrap();
                assert!(k > 0, "client closed early");
                head.extend_from_slice(&buf[..k]);
            }
            head.clear();
            conn.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
                .unwrap();
        }
    })
}

#[test]
fn localhost_reaches_a_server_on_ipv6_loopback_only() {
    // Regression test: only 127.0.0.1 was tried, so every request failed.
    let listener = TcpListener::bind("[::1]:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let server = answer(listener, 20);
    let mut spec = closed(&format!("http://localhost:{port}/"), 1, None, 20);
    spec.threads = 1;
    let r = servelab_load::run(&spec).unwrap();
    server.join().unwrap();
    assert_eq!(r.counts.ok, 20, "{:?}", r.errors);
    // 127.0.0.1 refused first, then ::1 answered: one connect, and no error.
    assert_eq!(r.counts.connections, 1);
    assert_eq!(r.counts.errors, 0);
}

#[test]
fn localhost_reaches_a_server_on_ipv4_loopback() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let server = answer(listener, 20);
    let mut spec = closed(&format!("http://localhost:{port}/"), 1, None, 20);
    spec.threads = 1;
    let r = servelab_load::run(&spec).unwrap();
    server.join().unwrap();
    assert_eq!((r.counts.ok, r.counts.errors), (20, 0));
}
