//! Micro-benchmark of the response parser, the only per-byte work the load
//! generator does in user space (`perf` puts it near 1% of a keep-alive run; the
//! rest is the kernel's TCP).
//!
//! The parser is private to the crate, so the bench compiles its source file
//! directly (it depends on `httparse` alone).

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use std::hint::black_box;

#[allow(dead_code)]
#[path = "../src/response.rs"]
mod response;

use response::{Feed, ResponseParser};

fn nginx_1k() -> Vec<u8> {
    let mut r = b"HTTP/1.1 200 OK\r\nServer: nginx/1.22.1\r\nDate: Sun, 22 Nov 2026 02:15:24 GMT\r\n\
Content-Type: text/plain\r\nContent-Length: 1024\r\nLast-Modified: Sun, 22 Nov 2026 02:14:38 GMT\r\n\
Connection: keep-alive\r\nETag: \"6b02500e-400\"\r\nAccept-Ranges: bytes\r\n\r\n"
        .to_vec();
    r.resize(r.len() + 1024, b'x');
    r
}

fn chunked_1k() -> Vec<u8> {
    let mut r = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n".to_vec();
    for _ in 0..4 {
        r.extend_from_slice(b"100\r\n");
        r.resize(r.len() + 256, b'y');
        r.extend_from_slice(b"\r\n");
    }
    r.extend_from_slice(b"0\r\n\r\n");
    r
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("response");
    for (name, bytes) in [
        ("content_length_1k", nginx_1k()),
        ("chunked_1k", chunked_1k()),
    ] {
        g.throughput(Throughput::Elements(1));
        let mut p = ResponseParser::default();
        g.bench_function(name, |b| {
            b.iter(|| {
                p.reset();
                let f = p.feed(black_box(&bytes), false).unwrap();
                assert!(matches!(f, Feed::Complete { .. }));
            })
        });
    }
    let bytes = nginx_1k();
    let (head, body) = bytes.split_at(100);
    let mut p = ResponseParser::default();
    g.bench_function("head_split_across_two_reads", |b| {
        b.iter(|| {
            p.reset();
            assert_eq!(p.feed(black_box(head), false), Ok(Feed::Incomplete));
            assert!(matches!(
                p.feed(black_box(body), false),
                Ok(Feed::Complete { .. })
            ));
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
