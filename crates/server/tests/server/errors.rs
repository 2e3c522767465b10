//! Every error status of the foundation issue, and the server keeps serving.

use crate::support::*;

fn status_of(addr: std::net::SocketAddr, req: &[u8]) -> u16 {
    let raw = exchange(addr, req);
    parse_one(&raw, false).0.status
}

#[test]
fn error_statuses() {
    each_engine(|engine, addr, _| {
        let cases: Vec<(Vec<u8>, u16)> = vec![
            (b"POST / HTTP/1.1\r\nHost: t\r\nContent-Length: 0\r\n\r\n".to_vec(), 405),
            (b"DELETE / HTTP/1.1\r\nHost: t\r\n\r\n".to_vec(), 405),
            (b"BREW / HTTP/1.1\r\nHost: t\r\n\r\n".to_vec(), 501),
            (b"GET / HTTP/1.1 extra\r\nHost: t\r\n\r\n".to_vec(), 400),
            (b"GET\r\n\r\n".to_vec(), 400),
            (b"GET / HTTP/2.0\r\nHost: t\r\n\r\n".to_vec(), 505),
            (b"GET / HTTP/1.1\r\n\r\n".to_vec(), 400),
            (b"GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n".to_vec(), 400),
            (b"GET / HTTP/1.1\r\nHost: t\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n".to_vec(), 400),
            (b"GET / HTTP/1.1\r\nHost: t\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n".to_vec(), 400),
            (b"GET / HTTP/1.1\r\nHost: t\r\nContent-Length: 2000000\r\n\r\n".to_vec(), 413),
            (b"GET / HTTP/1.1\r\nHost : t\r\n\r\n".to_vec(), 400),
            (b"GET / HTTP/1.1\r\nHost: t\r\nX: a\r\n b\r\n\r\n".to_vec(), 400),
            (format!("GET /{} HTTP/1.1\r\nHost: t\r\n\r\n", "a".repeat(9000)).into_bytes(), 414),
            (format!("GET / HTTP/1.1\r\nHost: t\r\nX: {}\r\n\r\n", "a".repeat(17000)).into_bytes(), 431),
            (
                format!(
                    "GET / HTTP/1.1\r\nHost: t\r\n{}\r\n",
                    (0..120).map(|i| format!("X-{i}: v\r\n")).collect::<String>()
                )
                .into_bytes(),
                431,
            ),
        ];
        for (req, want) in cases {
            let got = status_of(addr, &req);
            assert_eq!(
                got,
                want,
                "{engine}: {:?}",
                String::from_utf8_lossy(&req[..req.len().min(60)])
            );
        }
        // Still serving after all that.
        assert_eq!(simple(addr, "/hello.txt").status, 200);
    });
}

#[test]
fn oversize_head_sent_slowly_is_refused_before_it_ends() {
    // The limit holds while the head is still incomplete: the server answers
    // 431 without waiting for a blank line that never comes.
    each_engine(|engine, addr, _| {
        use std::io::{Read, Write};
        let mut s = connect(addr);
        s.write_all(b"GET / HTTP/1.1\r\nHost: t\r\n").unwrap();
        let chunk = format!("X-Pad: {}\r\n", "p".repeat(1000));
        let mut refused = false;
        for _ in 0..40 {
            if s.write_all(chunk.as_bytes()).is_err() {
                refused = true;
                break;
            }
        }
        let mut out = Vec::new();
        let _ = s.read_to_end(&mut out);
        if !out.is_empty() {
            assert_eq!(parse_one(&out, false).0.status, 431, "{engine}");
        } else {
            assert!(refused, "{engine}: neither an answer nor a close");
        }
    });
}

#[test]
fn slow_head_times_out_with_408() {
    for engine in servelab_server::Engine::here() {
        let dir = fixture();
        let server = start(dir.path(), engine, |c| {
            c.read_timeout = std::time::Duration::from_millis(300)
        });
        let raw = exchange(
            server.local_addr(),
            b"GET /hello.txt HTTP/1.1\r\nHost: t\r\n",
        );
        assert_eq!(parse_one(&raw, false).0.status, 408, "{engine}");
        server.shutdown().unwrap();
    }
}
