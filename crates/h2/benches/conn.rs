//! Micro-benchmarks for the HTTP/2 per-request hot path: decoding a browser's request header
//! block, and a whole request through a server connection (HEADERS in, response head and a
//! 1 KiB body out). Run with `cargo bench -p servelab-h2`.

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use servelab_h2::frame::{self, Frame, SettingsPayload, encode_frame, encode_header_block};
use servelab_h2::hpack::{Decoder, Encoder};
use servelab_h2::{Event, Limits, ServerConn, StreamId};

/// What Firefox sends for a page, as HTTP/2 fields.
const BROWSER: [(&str, &str); 12] = [
    (":method", "GET"),
    (":scheme", "https"),
    (":authority", "127.0.0.1:8443"),
    (":path", "/docs/index.html"),
    (
        "user-agent",
        "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0",
    ),
    (
        "accept",
        "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8",
    ),
    ("accept-language", "en-US,en;q=0.5"),
    ("accept-encoding", "gzip, deflate, br, zstd"),
    ("sec-fetch-dest", "document"),
    ("sec-fetch-mode", "navigate"),
    ("sec-fetch-site", "none"),
    ("priority", "u=0, i"),
];

fn browser_block() -> Vec<u8> {
    let mut block = Vec::new();
    Encoder::new().encode(
        BROWSER.iter().map(|(n, v)| (n.as_bytes(), v.as_bytes())),
        &mut block,
    );
    block
}

fn bench(c: &mut Criterion) {
    let block = browser_block();
    let mut group = c.benchmark_group("h2");
    group.throughput(Throughput::Elements(1));
    group.bench_function("hpack_decode_browser", |b| {
        let mut d = Decoder::new(4096, 16 << 10);
        b.iter(|| {
            let mut n = 0;
            d.decode(black_box(&block), |name, value| {
                n += name.len() + value.len()
            })
            .unwrap();
            n
        })
    });

    group.bench_function("request_1k_response", |b| {
        let mut conn = ServerConn::new(Limits::default());
        let mut hello = frame::PREFACE.to_vec();
        for ack in [false, true] {
            let params = SettingsPayload::new(&[]);
            encode_frame(&mut hello, &Frame::Settings { ack, params });
        }
        conn.feed(&hello).unwrap();
        conn.take_output();
        let body = [b'x'; 1024];
        let fields: [(&str, &[u8]); 5] = [
            ("content-type", b"text/html; charset=utf-8"),
            ("content-length", b"1024"),
            ("etag", b"\"5f3e-400\""),
            ("last-modified", b"Thu, 03 Dec 2026 08:00:00 GMT"),
            ("date", b"Thu, 03 Dec 2026 08:30:00 GMT"),
        ];
        let mut input = Vec::new();
        let mut stream = 1u32;
        b.iter(|| {
            // A new stream each time, and the credit a client gives back for the body.
            input.clear();
            encode_header_block(&mut input, StreamId(stream), &block, true, 1 << 14);
            encode_frame(
                &mut input,
                &Frame::WindowUpdate {
                    stream: StreamId(0),
                    increment: 1024,
                },
            );
            stream += 2;
            conn.feed(&input).unwrap();
            while let Some(e) = conn.poll_event() {
                if let Event::Request(r) = e {
                    conn.send_headers(r.stream, 200, &fields, false).unwrap();
                    assert_eq!(conn.send_data(r.stream, &body, true), Ok(1024));
                    // As `serve` does: the next request reuses its buffers.
                    conn.recycle(r);
                }
            }
            black_box(conn.take_output().len())
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
