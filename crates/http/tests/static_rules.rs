//! The crate used as an engine uses it: bytes in, a decision and a response head out, through
//! the public API only. Also checks the promise the crate docs make: the per-request hot path
//! does not allocate.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use servelab_http::{
    ChunkedDecoder, ContentRange, ETag, HttpDate, Limits, Method, Multipart, Parse, PathKind,
    RangeSet, ResponseHead, Status, content_type, if_none_match, if_range_matches,
    not_modified_since, parse_range, parse_request, resolve_target,
};

/// A counting allocator: lets the test assert that the hot path makes no heap allocation.
mod counting {
    #![allow(unsafe_code)]
    use std::alloc::{GlobalAlloc, Layout, System};
    use std::cell::Cell;

    thread_local! {
        static ALLOCS: Cell<u64> = const { Cell::new(0) };
    }

    pub struct Counting;

    // SAFETY: every call is forwarded unchanged to the system allocator; the only addition is
    // a thread-local counter increment, which neither allocates (const-initialised
    // thread_local) nor touches the memory being managed.
    unsafe impl GlobalAlloc for Counting {
        unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
            ALLOCS.with(|c| c.set(c.get() + 1));
            // SAFETY: same contract as ours, forwarded.
            unsafe { System.alloc(layout) }
        }
        unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
            // SAFETY: same contract as ours, forwarded.
            unsafe { System.dealloc(ptr, layout) }
        }
        unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
            ALLOCS.with(|c| c.set(c.get() + 1));
            // SAFETY: same contract as ours, forwarded.
            unsafe { System.realloc(ptr, layout, new_size) }
        }
    }

    /// Allocations made by this thread so far.
    pub fn allocs() -> u64 {
        ALLOCS.with(Cell::get)
    }
}

#[global_allocator]
static ALLOCATOR: counting::Counting = counting::Counting;

const REQUEST: &[u8] = b"GET /docs/caf%C3%A9.html?v=2 HTTP/1.1\r\n\
Host: 127.0.0.1:8080\r\n\
User-Agent: curl/8.5.0\r\n\
Accept: */*\r\n\
If-None-Match: \"0-0\", W/\"stale\"\r\n\
If-Modified-Since: Sun, 06 Nov 1994 08:49:37 GMT\r\n\
Range: bytes=0-99\r\n\
If-Range: \"400-2b9e7e8b6b3a5f15\"\r\n\
\r\n";

/// One request through everything an engine calls per request, with buffers it reuses.
fn serve_once(path: &mut String, out: &mut Vec<u8>, date: &HttpDate) -> usize {
    let Ok(Parse::Complete(req)) = parse_request(REQUEST, &Limits::default()) else {
        panic!("request did not parse");
    };
    assert_eq!(req.method, Method::Get);
    assert_eq!(resolve_target(req.target, path), Ok(PathKind::File));
    let mtime = UNIX_EPOCH + Duration::new(784_111_777, 5);
    let etag = ETag::new(1024, mtime);
    let not_modified = match req.if_none_match {
        Some(inm) => if_none_match(inm, &etag),
        None => req
            .if_modified_since
            .is_some_and(|ims| not_modified_since(ims, mtime)),
    };
    assert!(!not_modified);
    let ranges = match (req.range, req.if_range) {
        (Some(r), Some(ir)) if if_range_matches(ir, &etag, mtime) => parse_range(r, 1024),
        (Some(r), None) => parse_range(r, 1024),
        _ => RangeSet::Whole,
    };
    let last_modified = servelab_http::fmt_http_date(mtime);
    let mut head = ResponseHead::new(Status::OK, date.http());
    head.content_type = Some(content_type(path));
    head.last_modified = Some(&last_modified);
    head.etag = Some(etag.as_str());
    head.accept_ranges = true;
    head.content_length = Some(1024);
    if let RangeSet::Ranges(r) = ranges {
        let r = r.as_slice()[0];
        head.status = Status::PARTIAL_CONTENT;
        head.content_range = Some(ContentRange::Range {
            start: r.start,
            end: r.end,
            len: 1024,
        });
        head.content_length = Some(r.len());
    }
    out.clear();
    head.encode(out);
    out.len()
}

#[test]
fn hot_path_does_not_allocate() {
    let mut path = String::with_capacity(256);
    let mut out = Vec::with_capacity(1024);
    let date = HttpDate::new(SystemTime::now());
    serve_once(&mut path, &mut out, &date); // warm up: buffers reach their size
    let before = counting::allocs();
    for _ in 0..100 {
        serve_once(&mut path, &mut out, &date);
    }
    assert_eq!(counting::allocs() - before, 0);
    // The If-Range tag did not match, so the whole file is served.
    let text = String::from_utf8(out).unwrap();
    assert!(text.starts_with("HTTP/1.1 200 OK\r\n"), "{text}");
    assert!(text.contains("\r\nContent-Type: text/html; charset=utf-8\r\n"));
    assert!(text.ends_with("\r\nContent-Length: 1024\r\n\r\n"));
    assert_eq!(path, "docs/café.html");
}

#[test]
fn pipelined_bytes_with_a_chunked_body_in_between() {
    let stream: &[u8] = b"POST /upload HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n\
        4\r\nWiki\r\n5\r\npedia\r\n0\r\n\r\n\
        GET /next HTTP/1.1\r\nHost: a\r\n\r\n";
    let limits = Limits::default();
    let Ok(Parse::Complete(first)) = parse_request(stream, &limits) else {
        panic!()
    };
    assert!(first.chunked && first.method == Method::Other);
    let mut body = ChunkedDecoder::new(limits.max_body);
    let (used, done) = body.feed(&stream[first.head_len..]).unwrap();
    assert!(done);
    assert_eq!(body.total(), 9);
    let rest = &stream[first.head_len + used..];
    let Ok(Parse::Complete(second)) = parse_request(rest, &limits) else {
        panic!()
    };
    assert_eq!(second.target, "/next");
    assert_eq!(second.head_len, rest.len());
}

#[test]
fn multi_range_response_is_consistent() {
    let file: Vec<u8> = (0..2000u32).map(|i| (i % 251) as u8).collect();
    let RangeSet::Ranges(ranges) = parse_range("bytes=0-9,1000-1009,-5", 2000) else {
        panic!()
    };
    let plan = Multipart::new(
        &ranges,
        2000,
        "application/octet-stream",
        &Multipart::boundary(7),
    );
    let mut body = Vec::new();
    for part in plan.parts() {
        match part {
            servelab_http::Part::Bytes(b) => body.extend_from_slice(&b),
            servelab_http::Part::File(r) => {
                body.extend_from_slice(&file[r.start as usize..=r.end as usize])
            }
        }
    }
    assert_eq!(body.len() as u64, plan.content_length());
    assert_eq!(
        body.windows(13).filter(|w| w == b"Content-Range").count(),
        3
    );
    let mut head = ResponseHead::new(Status::PARTIAL_CONTENT, b"Sun, 06 Nov 1994 08:49:37 GMT");
    head.content_type = Some(plan.content_type());
    head.content_length = Some(plan.content_length());
    let mut out = Vec::new();
    head.encode(&mut out);
    let text = String::from_utf8(out).unwrap();
    assert!(
        text.contains("Content-Type: multipart/byteranges; boundary=servelab0000000000000007\r\n")
    );
}

#[test]
fn every_error_is_answerable() {
    let limits = Limits::default();
    for req in [
        &b"GET / HTTP/2.0\r\n\r\n"[..],
        b"GET / HTTP/1.1\r\n\r\n",
        b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 99999999\r\n\r\n",
        b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip, chunked\r\n\r\n",
    ] {
        let err = parse_request(req, &limits).unwrap_err();
        let status = err.status();
        let mut out = Vec::new();
        let mut head = ResponseHead::new(status, b"Sun, 06 Nov 1994 08:49:37 GMT");
        head.content_type = Some("text/html; charset=utf-8");
        head.content_length = Some(status.error_body().len() as u64);
        head.connection = servelab_http::Connection::Close;
        head.encode(&mut out);
        out.extend_from_slice(status.error_body().as_bytes());
        let text = String::from_utf8(out).unwrap();
        assert!(text.contains(&format!("{} {}", status.code(), status.reason())));
        assert!(text.contains("Connection: close"));
    }
}
