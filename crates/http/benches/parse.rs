//! Micro-benchmarks for the per-request hot path: parsing a typical browser request head,
//! resolving its path and encoding a response head. Run with `cargo bench -p servelab-http`.

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use servelab_http::{Limits, Parse, ResponseHead, Status, parse_request, resolve_target};

/// What Firefox sends for a page on a local server.
const BROWSER: &[u8] = b"GET /docs/index.html HTTP/1.1\r\n\
Host: 127.0.0.1:8080\r\n\
User-Agent: Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0\r\n\
Accept: text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8\r\n\
Accept-Language: en-US,en;q=0.5\r\n\
Accept-Encoding: gzip, deflate, br, zstd\r\n\
Connection: keep-alive\r\n\
Upgrade-Insecure-Requests: 1\r\n\
Sec-Fetch-Dest: document\r\n\
Sec-Fetch-Mode: navigate\r\n\
Sec-Fetch-Site: none\r\n\
Sec-Fetch-User: ?1\r\n\
Priority: u=0, i\r\n\
\r\n";

/// What the load generator sends.
const MINIMAL: &[u8] = b"GET /1k.txt HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";

fn bench(c: &mut Criterion) {
    let limits = Limits::default();
    let mut group = c.benchmark_group("parse_request");
    for (name, req) in [("browser", BROWSER), ("minimal", MINIMAL)] {
        group.throughput(Throughput::Elements(1));
        group.bench_function(name, |b| {
            b.iter(|| match parse_request(black_box(req), &limits) {
                Ok(Parse::Complete(head)) => head.head_len,
                _ => unreachable!(),
            })
        });
    }
    group.finish();

    let mut out = String::with_capacity(256);
    c.bench_function("resolve_target", |b| {
        b.iter(|| resolve_target(black_box("/docs/caf%C3%A9/./index.html?x=1"), &mut out))
    });

    let mut buf = Vec::with_capacity(512);
    let date = b"Sun, 06 Nov 1994 08:49:37 GMT";
    c.bench_function("response_head_encode", |b| {
        b.iter(|| {
            buf.clear();
            let mut head = ResponseHead::new(Status::OK, date);
            head.content_length = Some(black_box(1024));
            head.content_type = Some("text/plain; charset=utf-8");
            head.last_modified = Some(date);
            head.etag = Some("\"400-17a2b3c4d5e6f\"");
            head.accept_ranges = true;
            head.encode(&mut buf);
            buf.len()
        })
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
