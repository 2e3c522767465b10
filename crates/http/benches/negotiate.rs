//! What the static-file features add to a request: the second scan of the head for
//! `Accept-Encoding`/`If-Match`/`If-Unmodified-Since`, `Accept-Encoding` negotiation with and
//! without precompressed siblings, and the precondition check when no conditional field is
//! sent. Run with `cargo bench -p servelab-http --bench negotiate`.

use std::hint::black_box;
use std::time::{Duration, UNIX_EPOCH};

use criterion::{Criterion, criterion_group, criterion_main};
use servelab_http::conditional::ETag;
use servelab_http::{Available, Coding, ExtraFields, Preconditions, negotiate, precondition};

/// What Firefox sends for a page on a local server (as in `parse.rs`).
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
    let mut group = c.benchmark_group("fields_scan");
    for (name, req) in [("browser", BROWSER), ("minimal", MINIMAL)] {
        group.bench_function(name, |b| b.iter(|| ExtraFields::scan(black_box(req))));
    }
    group.finish();

    let ae = Some("gzip, deflate, br, zstd");
    let siblings = Available::NONE.with(Coding::Gzip).with(Coding::Br);
    c.bench_function("negotiate/no_siblings", |b| {
        b.iter(|| negotiate(black_box(ae), black_box(Available::NONE)))
    });
    c.bench_function("negotiate/gzip_and_br", |b| {
        b.iter(|| negotiate(black_box(ae), black_box(siblings)))
    });

    let mtime = UNIX_EPOCH + Duration::from_secs(1_700_000_000);
    let etag = ETag::new(1024, mtime);
    let none = Preconditions::default();
    c.bench_function("precondition/none", |b| {
        b.iter(|| {
            let p = black_box(&none);
            p.is_empty()
                || precondition::evaluate(p, true, &etag, mtime, mtime)
                    .status()
                    .is_none()
        })
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
