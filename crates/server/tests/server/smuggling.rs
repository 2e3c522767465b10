//! Request smuggling and ambiguity (RFC 9112), on every engine, in raw bytes.
//!
//! Each hostile request is followed on the same connection by an innocent
//! `GET /hello.txt`. Whenever two parsers could disagree about where the hostile
//! request ends, the only safe answer is one error response with
//! `Connection: close`, then the end of the connection: answering the follow-up
//! would mean we guessed a framing, and a front end may have guessed another.
//! So each case checks the status, that exactly one response came back, that
//! it says `close`, and that the server really closed (EOF, not a timeout).
//!
//! Decisions documented in SECURITY.md: absolute-form targets are served from
//! the root (RFC 9112 3.2.2: a server must accept them; the authority replaces
//! `Host`); `OPTIONS *` and `CONNECT` are registered methods a static server
//! does not serve, so both get 405 with `Allow: GET, HEAD` on a connection that
//! stays usable (they are well framed; nothing is ambiguous).

use std::io::{ErrorKind, Read, Write};
use std::net::SocketAddr;

use crate::support::*;

/// The request smuggled behind each hostile one.
const FOLLOW: &[u8] = b"GET /hello.txt HTTP/1.1\r\nHost: t\r\n\r\n";

/// Sends `bytes`, then reads until the server closes; fails if it does not
/// close within the client's read timeout.
fn send_until_close(addr: SocketAddr, bytes: &[u8]) -> Vec<u8> {
    let mut s = connect(addr);
    // The server may close before reading everything (a reset on our write is
    // fine: we still read what it sent).
    let _ = s.write_all(bytes);
    let mut out = Vec::new();
    let mut buf = [0u8; 8192];
    loop {
        match s.read(&mut buf) {
            Ok(0) => return out,
            Ok(n) => out.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            // A reset after the answer still ends the connection.
            Err(e) if e.kind() == ErrorKind::ConnectionReset => return out,
            Err(e) => panic!(
                "connection not closed after {:?}: {e}; got {:?}",
                String::from_utf8_lossy(bytes),
                String::from_utf8_lossy(&out)
            ),
        }
    }
}

/// The hostile request must get `status`, alone, and a closed connection.
fn refused(engine: servelab_server::Engine, addr: SocketAddr, bad: &[u8], status: u16) {
    let what = String::from_utf8_lossy(bad).into_owned();
    let mut bytes = bad.to_vec();
    bytes.extend_from_slice(FOLLOW);
    let raw = send_until_close(addr, &bytes);
    assert!(!raw.is_empty(), "{engine}: no answer to {what:?}");
    let (resp, used) = parse_one(&raw, false);
    assert_eq!(resp.status, status, "{engine}: {what:?}");
    assert_eq!(
        resp.header("connection"),
        Some("close"),
        "{engine}: {what:?} must close"
    );
    assert_eq!(
        used,
        raw.len(),
        "{engine}: something after the answer to {what:?}: {:?}",
        String::from_utf8_lossy(&raw[used..])
    );
}

/// A well-framed request: answered with `status`, and the follow-up with 200.
fn answered(engine: servelab_server::Engine, addr: SocketAddr, req: &[u8], status: u16) -> Resp {
    let what = String::from_utf8_lossy(req).into_owned();
    let mut bytes = req.to_vec();
    bytes.extend_from_slice(b"GET /hello.txt HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n");
    let raw = send_until_close(addr, &bytes);
    let (first, used) = parse_one(&raw, false);
    assert_eq!(first.status, status, "{engine}: {what:?}");
    let (second, used2) = parse_one(&raw[used..], false);
    assert_eq!(second.status, 200, "{engine}: follow-up of {what:?}");
    assert_eq!(second.body, b"hello, world\n");
    assert_eq!(
        used + used2,
        raw.len(),
        "{engine}: extra bytes after {what:?}"
    );
    first
}

#[test]
fn ambiguous_framing_is_refused_and_closed() {
    let cases: &[(&[u8], u16)] = &[
        // Two lengths: which one ends the body?
        (b"POST / HTTP/1.1\r\nHost: t\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello!", 400),
        (b"POST / HTTP/1.1\r\nHost: t\r\nContent-Length: 5, 6\r\n\r\nhello!", 400),
        // CL.TE and TE.CL, in both orders.
        (b"POST / HTTP/1.1\r\nHost: t\r\nContent-Length: 6\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\nG", 400),
        (b"POST / HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\nContent-Length: 4\r\n\r\n5c\r\n", 400),
        // Transfer-Encoding whose last coding is not chunked: length unknown.
        (b"POST / HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked, identity\r\n\r\n0\r\n\r\n", 400),
        (b"POST / HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: gzip\r\n\r\n0\r\n\r\n", 400),
        (b"POST / HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: identity\r\n\r\n", 400),
        (b"POST / HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked, chunked\r\n\r\n0\r\n\r\n", 400),
        (b"POST / HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked;q=1\r\n\r\n0\r\n\r\n", 400),
        (b"POST / HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: \"chunked\"\r\n\r\n0\r\n\r\n", 400),
        // A coding we do not implement, properly framed: 501 (RFC 9112 6.1).
        (b"POST / HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n", 501),
        // Transfer-Encoding in HTTP/1.0 (RFC 9112 6.1: treat as faulty framing).
        (b"POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 400),
        // Content-Length that is not plain digits.
        (b"POST / HTTP/1.1\r\nHost: t\r\nContent-Length: +5\r\n\r\nhello", 400),
        (b"POST / HTTP/1.1\r\nHost: t\r\nContent-Length: -1\r\n\r\n", 400),
        (b"POST / HTTP/1.1\r\nHost: t\r\nContent-Length: 0x5\r\n\r\nhello", 400),
        (b"POST / HTTP/1.1\r\nHost: t\r\nContent-Length: 5 5\r\n\r\nhello", 400),
        (b"POST / HTTP/1.1\r\nHost: t\r\nContent-Length: 99999999999999999999999\r\n\r\n", 400),
        (b"POST / HTTP/1.1\r\nHost: t\r\nContent-Length:\r\n\r\n", 400),
        // obs-fold, in a plain field and in a framing field (RFC 9112 5.2).
        (b"GET / HTTP/1.1\r\nHost: t\r\nX-A: a\r\n b\r\n\r\n", 400),
        (b"POST / HTTP/1.1\r\nHost: t\r\nTransfer-Encoding:\r\n chunked\r\n\r\n0\r\n\r\n", 400),
        // Whitespace before the colon (RFC 9112 5.1: MUST 400).
        (b"POST / HTTP/1.1\r\nHost: t\r\nTransfer-Encoding : chunked\r\n\r\n0\r\n\r\n", 400),
        (b"POST / HTTP/1.1\r\nHost: t\r\nContent-Length\t: 5\r\n\r\nhello", 400),
        // Whitespace before the first field line (RFC 9112 2.2).
        (b"GET / HTTP/1.1\r\n Host: t\r\n\r\n", 400),
        // Bare CR (RFC 9112 2.2: MUST be refused or replaced; we refuse).
        (b"GET / HTTP/1.1\r\nHost: t\r\nX-A: a\rb\r\n\r\n", 400),
        (b"GET / HTTP/1.1\rHost: t\r\n\r\n", 400),
        (b"GET / HTTP/1.1\r\nHost: t\r\nX-A: a\r\r\n\r\n", 400),
        // Bare LF (RFC 9112 2.2 allows reading it as a line end; a front end that does not
        // would see one field and no body). Regression: this was read as two fields.
        (b"POST / HTTP/1.1\r\nHost: t\r\nDummy: x\nContent-Length: 23\r\n\r\n", 400),
        (b"GET /hello.txt HTTP/1.1\nHost: t\n\n", 400),
        (b"GET / HTTP/1.1\r\nHost: t\r\nX-A: a\n\r\n", 400),
        // NUL and other control bytes in the target and in fields.
        (b"GET /hello\0.txt HTTP/1.1\r\nHost: t\r\n\r\n", 400),
        (b"GET /hello\x01.txt HTTP/1.1\r\nHost: t\r\n\r\n", 400),
        (b"GET /hello\x7f.txt HTTP/1.1\r\nHost: t\r\n\r\n", 400),
        (b"GET /hello\t.txt HTTP/1.1\r\nHost: t\r\n\r\n", 400),
        (b"GET / HTTP/1.1\r\nHost: t\r\nX-A: a\0b\r\n\r\n", 400),
        (b"GET / HTTP/1.1\r\nHost: t\r\nX-A: a\x0bb\r\n\r\n", 400),
        (b"GET / HTTP/1.1\r\nHost: t\r\nX\0A: a\r\n\r\n", 400),
        (b"GET / HTTP/1.1\r\nHost: t\0evil\r\n\r\n", 400),
        // Space inside the target, and garbage in field names.
        (b"GET /hello .txt HTTP/1.1\r\nHost: t\r\n\r\n", 400),
        (b"GET / HTTP/1.1\r\nHost: t\r\nX(A): a\r\n\r\n", 400),
        (b"GET / HTTP/1.1\r\nHost: t\r\n: a\r\n\r\n", 400),
        // Two Hosts, or a Host that is not a host.
        (b"GET / HTTP/1.1\r\nHost: t\r\nhost: u\r\n\r\n", 400),
        (b"GET / HTTP/1.1\r\nHost: a b\r\n\r\n", 400),
        (b"GET / HTTP/1.1\r\nHost: a/b\r\n\r\n", 400),
        // A broken chunked body: where it ends is unknowable.
        (b"POST / HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\nfffffffffffffffff\r\n", 400),
        (b"POST / HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n5\nhello\n0\n\n", 400),
        (b"POST / HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n-5\r\nhello\r\n0\r\n\r\n", 400),
        (b"POST / HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n0x5\r\nhello\r\n0\r\n\r\n", 400),
        (b"POST / HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nhello\r\n0\r\n\r\n", 400),
        (b"POST / HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n5;a\0\r\nhello\r\n0\r\n\r\n", 400),
        (b"POST / HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n folded: trailer\r\n\r\n", 400),
        // An absolute-form target with an authority that is not a host.
        (b"GET http://a b/ HTTP/1.1\r\nHost: t\r\n\r\n", 400),
        // asterisk-form is only for OPTIONS; authority-form only for CONNECT.
        (b"GET * HTTP/1.1\r\nHost: t\r\n\r\n", 400),
        (b"GET t:80 HTTP/1.1\r\nHost: t\r\n\r\n", 400),
    ];
    each_engine(|engine, addr, _| {
        for &(bad, status) in cases {
            refused(engine, addr, bad, status);
        }
        // Refusing all that did not hurt the server.
        assert_eq!(simple(addr, "/hello.txt").status, 200, "{engine}");
    });
}

#[test]
fn well_framed_edge_cases_are_answered_and_keep_the_connection() {
    each_engine(|engine, addr, _| {
        // Absolute-form: served from the root; the authority wins over Host.
        let r = answered(
            engine,
            addr,
            b"GET http://elsewhere.example:8080/hello.txt HTTP/1.1\r\nHost: t\r\n\r\n",
            200,
        );
        assert_eq!(r.body, b"hello, world\n", "{engine}");
        answered(
            engine,
            addr,
            b"GET http://t HTTP/1.1\r\nHost: t\r\n\r\n",
            200,
        );
        // OPTIONS * and CONNECT: 405 with Allow.
        for req in [
            &b"OPTIONS * HTTP/1.1\r\nHost: t\r\n\r\n"[..],
            b"OPTIONS /hello.txt HTTP/1.1\r\nHost: t\r\n\r\n",
            b"CONNECT t:443 HTTP/1.1\r\nHost: t:443\r\n\r\n",
        ] {
            let r = answered(engine, addr, req, 405);
            assert_eq!(r.header("allow"), Some("GET, HEAD"), "{engine}");
        }
        // Identical duplicate lengths fold (RFC 9110 8.6), and the body is skipped
        // exactly: the follow-up is parsed where the body ends.
        answered(
            engine,
            addr,
            b"POST / HTTP/1.1\r\nHost: t\r\nContent-Length: 5\r\nContent-Length: 5\r\n\r\nhello",
            405,
        );
        // A chunked body with an extension and a trailer, skipped exactly.
        answered(
            engine,
            addr,
            b"POST / HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n5;x=y\r\nGET /\r\n0\r\nT: 1\r\n\r\n",
            405,
        );
        // A body that looks like a request is not one.
        let inner = b"GET /index.html HTTP/1.1\r\nHost: t\r\n\r\n";
        let mut req = format!(
            "POST / HTTP/1.1\r\nHost: t\r\nContent-Length: {}\r\n\r\n",
            inner.len()
        )
        .into_bytes();
        req.extend_from_slice(inner);
        answered(engine, addr, &req, 405);
        // Empty lines before the request line are skipped (RFC 9112 2.2), bare LF too: they
        // hold no field, so no parser can read them differently.
        answered(
            engine,
            addr,
            b"\n\r\nGET /hello.txt HTTP/1.1\r\nHost: t\r\n\r\n",
            200,
        );
    });
}
