//! Incremental parsing: requests split anywhere, pipelined, with bodies.

use std::io::{Read, Write};
use std::time::Duration;

use crate::support::*;

#[test]
fn byte_by_byte() {
    each_engine(|engine, addr, _| {
        let mut s = connect(addr);
        s.set_nodelay(true).unwrap();
        for b in b"GET /hello.txt HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n" {
            s.write_all(&[*b]).unwrap();
            std::thread::sleep(Duration::from_micros(200));
        }
        let mut out = Vec::new();
        s.read_to_end(&mut out).unwrap();
        let (r, _) = parse_one(&out, false);
        assert_eq!(r.status, 200, "{engine}");
        assert_eq!(r.body, b"hello, world\n");
    });
}

#[test]
fn pipelined_requests_answered_in_order() {
    each_engine(|engine, addr, _| {
        let req = b"GET /hello.txt HTTP/1.1\r\nHost: t\r\n\r\n\
                    HEAD /1k.txt HTTP/1.1\r\nHost: t\r\n\r\n\
                    GET /nope HTTP/1.1\r\nHost: t\r\n\r\n\
                    GET /style.css HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n";
        let raw = exchange(addr, req);
        let (a, n1) = parse_one(&raw, false);
        let (b, n2) = parse_one(&raw[n1..], true);
        let (c, n3) = parse_one(&raw[n1 + n2..], false);
        let (d, n4) = parse_one(&raw[n1 + n2 + n3..], false);
        assert_eq!(n1 + n2 + n3 + n4, raw.len(), "{engine}");
        assert_eq!(
            (a.status, b.status, c.status, d.status),
            (200, 200, 404, 200)
        );
        assert_eq!(a.body, b"hello, world\n");
        assert_eq!(b.header("content-length"), Some("1024"));
        assert_eq!(d.body, b"body{}");
    });
}

#[test]
fn bodies_are_drained_not_parsed() {
    each_engine(|engine, addr, _| {
        // The body looks like a request; it must not be answered as one.
        let req = b"GET /hello.txt HTTP/1.1\r\nHost: t\r\nContent-Length: 33\r\n\r\n\
                    GET /1k.txt HTTP/1.1\r\nHost: t\r\n\r\n\
                    GET /style.css HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n";
        let raw = exchange(addr, req);
        let (a, n1) = parse_one(&raw, false);
        let (b, n2) = parse_one(&raw[n1..], false);
        assert_eq!(n1 + n2, raw.len(), "{engine}: exactly two responses");
        assert_eq!(a.body, b"hello, world\n");
        assert_eq!(b.body, b"body{}");

        let chunked = b"POST /hello.txt HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n\
                        5\r\nhello\r\n18\r\nGET /1k.txt HTTP/1.1\r\nHo\r\n0\r\n\r\n\
                        GET /style.css HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n";
        let raw = exchange(addr, chunked);
        let (a, n1) = parse_one(&raw, false);
        let (b, n2) = parse_one(&raw[n1..], false);
        assert_eq!(n1 + n2, raw.len(), "{engine}: chunked body skipped");
        assert_eq!(a.status, 405);
        assert_eq!(a.header("allow"), Some("GET, HEAD"));
        assert_eq!(b.body, b"body{}");
    });
}
