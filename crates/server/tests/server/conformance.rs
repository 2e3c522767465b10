//! RFC conformance cases that external parser corpora found, on every engine:
//! HEAD errors without content, `Expect: 100-continue`, invalid authorities,
//! `HTTP/1.2`, chunk sizes with leading zeros, and raw non-ASCII targets.
//!
//! Each case writes raw bytes and asserts on the bytes that come back,
//! including what must *not* come back: a body after a HEAD's error head, a
//! `100 Continue` before an earlier response or to an HTTP/1.0 client.

use std::io::{ErrorKind, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpStream};
use std::time::Duration;

use servelab_server::Engine;

use crate::support::*;

/// Reads until the server closes (a reset after its answer counts as a close);
/// fails the test if it does not close within the client's read timeout.
fn read_until_close(s: &mut TcpStream, what: &str) -> Vec<u8> {
    let mut out = Vec::new();
    let mut buf = [0u8; 8192];
    loop {
        match s.read(&mut buf) {
            Ok(0) => return out,
            Ok(n) => out.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) if e.kind() == ErrorKind::ConnectionReset => return out,
            Err(e) => panic!(
                "{what}: connection not closed: {e}; got {:?}",
                String::from_utf8_lossy(&out)
            ),
        }
    }
}

/// Sends `bytes` (the server may close before reading them all) and reads
/// until it closes.
fn send_until_close(addr: SocketAddr, bytes: &[u8]) -> Vec<u8> {
    let mut s = connect(addr);
    let _ = s.write_all(bytes);
    read_until_close(&mut s, &String::from_utf8_lossy(bytes))
}

/// Reads exactly one response head (through its blank line) and nothing more.
fn read_head(s: &mut TcpStream) -> Vec<u8> {
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        match s.read(&mut byte) {
            Ok(1) => head.push(byte[0]),
            other => panic!(
                "response head cut short ({other:?}): {:?}",
                String::from_utf8_lossy(&head)
            ),
        }
    }
    head
}

/// The request must get `status`, alone, with `Connection: close`, and the
/// server must close: the answer to every malformed request.
fn refused(engine: Engine, addr: SocketAddr, bad: &[u8], status: u16) {
    let what = String::from_utf8_lossy(bad).into_owned();
    let mut bytes = bad.to_vec();
    bytes.extend_from_slice(b"GET /hello.txt HTTP/1.1\r\nHost: t\r\n\r\n");
    let raw = send_until_close(addr, &bytes);
    assert!(!raw.is_empty(), "{engine}: no answer to {what:?}");
    let (resp, used) = parse_one(&raw, false);
    assert_eq!(resp.status, status, "{engine}: {what:?}");
    assert_eq!(
        resp.header("connection"),
        Some("close"),
        "{engine}: {what:?}"
    );
    assert_eq!(
        used,
        raw.len(),
        "{engine}: more after the answer to {what:?}"
    );
}

/// The request is served: `status` for it, then 200 for a pipelined follow-up
/// on the same connection.
fn served(engine: Engine, addr: SocketAddr, req: &[u8], status: u16) -> Resp {
    let what = String::from_utf8_lossy(req).into_owned();
    let mut bytes = req.to_vec();
    bytes.extend_from_slice(b"GET /hello.txt HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n");
    let raw = send_until_close(addr, &bytes);
    let (first, used) = parse_one(&raw, req.starts_with(b"HEAD "));
    assert_eq!(first.status, status, "{engine}: {what:?}");
    let (second, used2) = parse_one(&raw[used..], false);
    assert_eq!(second.status, 200, "{engine}: follow-up of {what:?}");
    assert_eq!(second.body, b"hello, world\n");
    assert_eq!(used + used2, raw.len(), "{engine}: {what:?}");
    first
}

/// The heads that are refused while being read, each once as GET and once as
/// HEAD. RFC 9110 9.3.2: the HEAD answer is the GET answer's head, no content.
fn head_error_cases() -> Vec<(String, u16)> {
    vec![
        ("{M} / HTTP/1.1\r\nHost: a b\r\n\r\n".into(), 400),
        (
            "{M} / HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n".into(),
            400,
        ),
        (
            "{M} / HTTP/1.1\r\nHost: t\r\nContent-Length: 2000000\r\n\r\n".into(),
            413,
        ),
        (
            format!("{{M}} /{} HTTP/1.1\r\nHost: t\r\n\r\n", "a".repeat(9000)),
            414,
        ),
        (
            format!(
                "{{M}} / HTTP/1.1\r\nHost: t\r\nX: {}\r\n\r\n",
                "a".repeat(17000)
            ),
            431,
        ),
        (
            "{M} / HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: gzip, chunked\r\n\r\n".into(),
            501,
        ),
        ("{M} / HTTP/2.0\r\nHost: t\r\n\r\n".into(), 505),
    ]
}

#[test]
fn errors_to_head_have_no_content() {
    each_engine(|engine, addr, _| {
        for (template, status) in head_error_cases() {
            let get = template.replace("{M}", "GET");
            let head = template.replace("{M}", "HEAD");
            let raw_get = send_until_close(addr, get.as_bytes());
            let (resp_get, _) = parse_one(&raw_get, false);
            assert_eq!(resp_get.status, status, "{engine}: GET {status}");
            assert!(
                !resp_get.body.is_empty(),
                "{engine}: GET {status} has a page"
            );

            let raw = send_until_close(addr, head.as_bytes());
            let (resp, used) = parse_one(&raw, true);
            assert_eq!(resp.status, status, "{engine}: HEAD {status}");
            assert_eq!(
                used,
                raw.len(),
                "{engine}: HEAD {status} carried content: {:?}",
                String::from_utf8_lossy(&raw[used..])
            );
            assert_eq!(resp.header("connection"), Some("close"), "{engine}");
            // Content-Length, if sent, is what the GET would get (RFC 9110 8.6).
            assert_eq!(
                resp.header("content-length"),
                resp_get.header("content-length"),
                "{engine}: HEAD {status}"
            );
        }
    });
}

#[test]
fn request_timeout_to_head_has_no_content() {
    for engine in Engine::here() {
        let dir = fixture();
        let server = start(dir.path(), engine, |c| {
            c.read_timeout = Duration::from_millis(200);
        });
        let addr = server.local_addr();
        for (method, is_head) in [("GET", false), ("HEAD", true)] {
            let partial = format!("{method} /hello.txt HTTP/1.1\r\nHost: t\r\n");
            let raw = send_until_close(addr, partial.as_bytes());
            let (resp, used) = parse_one(&raw, is_head);
            assert_eq!(resp.status, 408, "{engine}: {method}");
            assert_eq!(resp.body.is_empty(), is_head, "{engine}: {method}");
            assert_eq!(used, raw.len(), "{engine}: {method} 408 carried content");
        }
        server.shutdown().unwrap();
    }
}

const CONTINUE: &[u8] = b"HTTP/1.1 100 Continue\r\n\r\n";

#[test]
fn expect_100_continue_is_answered_before_the_body() {
    each_engine(|engine, addr, _| {
        for (head, body) in [
            (
                &b"GET /hello.txt HTTP/1.1\r\nHost: t\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n"[..],
                &b"hello"[..],
            ),
            (
                b"HEAD /hello.txt HTTP/1.1\r\nHost: t\r\nEXPECT: 100-Continue\r\nTransfer-Encoding: chunked\r\n\r\n",
                b"5\r\nhello\r\n0\r\n\r\n",
            ),
        ] {
            let what = String::from_utf8_lossy(head).into_owned();
            let mut s = connect(addr);
            s.write_all(head).unwrap();
            // The client waits: the server must speak first.
            assert_eq!(read_head(&mut s), CONTINUE, "{engine}: {what:?}");
            s.write_all(body).unwrap();
            s.write_all(b"GET /hello.txt HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
                .unwrap();
            let raw = read_until_close(&mut s, &what);
            let is_head = head.starts_with(b"HEAD ");
            let (first, used) = parse_one(&raw, is_head);
            assert_eq!(first.status, 200, "{engine}: {what:?}");
            assert_eq!(first.header("connection"), None, "{engine}: kept alive");
            let (second, used2) = parse_one(&raw[used..], false);
            assert_eq!(second.status, 200, "{engine}: {what:?}");
            assert_eq!(used + used2, raw.len(), "{engine}: {what:?}");
        }
    });
}

#[test]
fn expect_100_continue_gets_the_final_status_when_the_head_decides() {
    each_engine(|engine, addr, _| {
        for (head, status) in [
            (
                &b"POST /hello.txt HTTP/1.1\r\nHost: t\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n"[..],
                405,
            ),
            (
                b"BREW /hello.txt HTTP/1.1\r\nHost: t\r\nExpect: 100-continue\r\nTransfer-Encoding: chunked\r\n\r\n",
                501,
            ),
            (
                b"PUT /hello.txt HTTP/1.1\r\nHost: t\r\nExpect: 100-continue\r\nContent-Length: 2000000\r\n\r\n",
                413,
            ),
        ] {
            let what = String::from_utf8_lossy(head).into_owned();
            // The body is never sent: the answer must not wait for it.
            let mut s = connect(addr);
            s.write_all(head).unwrap();
            let raw = read_until_close(&mut s, &what);
            assert!(!raw.starts_with(b"HTTP/1.1 100"), "{engine}: {what:?}");
            let (resp, used) = parse_one(&raw, false);
            assert_eq!(resp.status, status, "{engine}: {what:?}");
            // Whether the body follows is unknown: the connection closes.
            assert_eq!(resp.header("connection"), Some("close"), "{engine}: {what:?}");
            assert_eq!(used, raw.len(), "{engine}: {what:?}");
            if status == 405 {
                assert_eq!(resp.header("allow"), Some("GET, HEAD"));
            }
        }
    });
}

#[test]
fn expect_100_continue_follows_earlier_pipelined_responses() {
    each_engine(|engine, addr, _| {
        let mut s = connect(addr);
        s.write_all(
            b"GET /hello.txt HTTP/1.1\r\nHost: t\r\n\r\n\
              GET /style.css HTTP/1.1\r\nHost: t\r\nExpect: 100-continue\r\nContent-Length: 3\r\nConnection: close\r\n\r\n",
        )
        .unwrap();
        // The first response comes whole, and only then the 100.
        let first = read_head(&mut s);
        let (resp, _) = parse_one(&first, true);
        assert_eq!(resp.status, 200, "{engine}");
        let mut body = vec![0; 13];
        s.read_exact(&mut body).unwrap();
        assert_eq!(body, b"hello, world\n", "{engine}");
        assert_eq!(read_head(&mut s), CONTINUE, "{engine}");
        s.write_all(b"abc").unwrap();
        let raw = read_until_close(&mut s, "style.css");
        let (resp, used) = parse_one(&raw, false);
        assert_eq!((resp.status, resp.body.as_slice()), (200, &b"body{}"[..]));
        assert_eq!(used, raw.len(), "{engine}");
    });
}

#[test]
fn no_100_continue_to_http10_or_to_a_body_already_sent() {
    // Half-closing after the head makes an unanswered request end in a silent
    // close, so any `100 Continue` the server sent shows up, without a timer.
    each_engine(|engine, addr, _| {
        for req in [
            &b"GET /hello.txt HTTP/1.0\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n"[..],
            b"GET /hello.txt HTTP/1.1\r\nHost: t\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\nhel",
        ] {
            let what = String::from_utf8_lossy(req).into_owned();
            let mut s = connect(addr);
            s.write_all(req).unwrap();
            s.shutdown(Shutdown::Write).unwrap();
            let raw = read_until_close(&mut s, &what);
            assert_eq!(
                String::from_utf8_lossy(&raw),
                "",
                "{engine}: nothing is owed to {what:?}"
            );
        }
        // With the body already there, the response comes without a 100.
        let r = served(
            engine,
            addr,
            b"GET /hello.txt HTTP/1.1\r\nHost: t\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\nhello",
            200,
        );
        assert_eq!(r.body, b"hello, world\n");
    });
}

#[test]
fn invalid_authorities_are_400() {
    each_engine(|engine, addr, _| {
        for bad in [
            &b"GET /hello.txt HTTP/1.1\r\nHost: localhost:abc\r\n\r\n"[..],
            b"GET /hello.txt HTTP/1.1\r\nHost: localhost:80:80\r\n\r\n",
            b"GET /hello.txt HTTP/1.1\r\nHost: [::1\r\n\r\n",
            b"GET /hello.txt HTTP/1.1\r\nHost: [::1]x\r\n\r\n",
            b"GET http://x:9x9/hello.txt HTTP/1.1\r\nHost: t\r\n\r\n",
            b"GET http://[::1/hello.txt HTTP/1.1\r\nHost: t\r\n\r\n",
            b"GET http://:80/hello.txt HTTP/1.1\r\nHost: t\r\n\r\n",
        ] {
            refused(engine, addr, bad, 400);
        }
        for good in [
            &b"GET /hello.txt HTTP/1.1\r\nHost: localhost:8080\r\n\r\n"[..],
            b"GET /hello.txt HTTP/1.1\r\nHost: [::1]:8080\r\n\r\n",
            b"GET /hello.txt HTTP/1.1\r\nHost: localhost:\r\n\r\n",
            b"GET http://[::1]:80/hello.txt HTTP/1.1\r\nHost: t\r\n\r\n",
        ] {
            let r = served(engine, addr, good, 200);
            assert_eq!(r.body, b"hello, world\n", "{engine}");
        }
    });
}

#[test]
fn http_1_2_is_served_as_http_1_1() {
    each_engine(|engine, addr, _| {
        let raw = {
            let mut s = connect(addr);
            s.write_all(b"GET /hello.txt HTTP/1.2\r\nHost: t\r\n\r\n")
                .unwrap();
            s.write_all(b"HEAD /hello.txt HTTP/1.2\r\nHost: t\r\nConnection: close\r\n\r\n")
                .unwrap();
            read_until_close(&mut s, "HTTP/1.2")
        };
        assert!(raw.starts_with(b"HTTP/1.1 200 OK\r\n"), "{engine}");
        let (first, used) = parse_one(&raw, false);
        assert_eq!(first.body, b"hello, world\n", "{engine}");
        assert_eq!(
            first.header("connection"),
            None,
            "{engine}: 1.1 persistence"
        );
        let (second, used2) = parse_one(&raw[used..], true);
        assert_eq!(second.status, 200, "{engine}");
        assert_eq!(used + used2, raw.len(), "{engine}");
        // Another major version is still 505.
        refused(
            engine,
            addr,
            b"GET /hello.txt HTTP/2.0\r\nHost: t\r\n\r\n",
            505,
        );
        refused(
            engine,
            addr,
            b"GET /hello.txt HTTP/0.9\r\nHost: t\r\n\r\n",
            505,
        );
    });
}

#[test]
fn chunk_sizes_with_leading_zeros_are_valid() {
    each_engine(|engine, addr, _| {
        let r = served(
            engine,
            addr,
            b"GET /hello.txt HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n\
              00000000000000005\r\nhello\r\n00000000000000000000\r\n\r\n",
            200,
        );
        assert_eq!(r.body, b"hello, world\n", "{engine}");
        // The value still may not overflow.
        refused(
            engine,
            addr,
            b"GET /hello.txt HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n\
              00010000000000000000\r\n",
            400,
        );
    });
}

#[test]
fn raw_bytes_above_0x7f_in_the_target_are_400() {
    each_engine(|engine, addr, _| {
        for bad in [
            &b"GET /caf\xc3\xa9 HTTP/1.1\r\nHost: t\r\n\r\n"[..],
            b"GET /\x80 HTTP/1.1\r\nHost: t\r\n\r\n",
            b"GET /hello.txt?\xff HTTP/1.1\r\nHost: t\r\n\r\n",
            b"GET http://t/caf\xc3\xa9 HTTP/1.1\r\nHost: t\r\n\r\n",
        ] {
            refused(engine, addr, bad, 400);
        }
        // Percent-encoded, the same path is an ordinary (missing) file.
        let r = served(
            engine,
            addr,
            b"GET /caf%C3%A9 HTTP/1.1\r\nHost: t\r\n\r\n",
            404,
        );
        assert!(!r.body.is_empty());
    });
}
