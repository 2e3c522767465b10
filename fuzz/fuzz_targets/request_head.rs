//! Fuzzes `parse_request`, the request-head parser every engine trusts with raw socket bytes.
//!
//! Beyond "no panic", it checks the properties the connection driver relies on:
//! - a complete head's `head_len` is within the input, and every string in it borrows from
//!   the head itself (the driver slices the buffer with these);
//! - the parser is incremental: any prefix shorter than `head_len` is `Incomplete` (never an
//!   error, never a different head), and any longer prefix gives the very same head; so the
//!   answer does not depend on how TCP split the bytes. If the whole input is an error or
//!   incomplete, no prefix may be complete, and an incomplete input has no failing prefix;
//! - the framing rules hold: never both `Content-Length` and chunked, `Content-Length` within
//!   `max_body`, chunked only in HTTP/1.1, `Host` present in HTTP/1.1;
//! - every line of a complete head ends in CRLF: no bare LF (a smuggling gadget).
//!
//! Input layout: byte 0 picks the limits (default or tiny, so the size checks get reached),
//! bytes 1..=4 are two split points, the rest is the request.

#![no_main]

use libfuzzer_sys::fuzz_target;
use servelab_http::{Limits, Parse, RequestHead, Version, parse_request};

fn limits(sel: u8) -> Limits {
    if sel & 1 == 0 {
        Limits::default()
    } else {
        Limits {
            max_request_line: usize::from(sel >> 1) + 8,
            max_head: usize::from(sel) * 2 + 16,
            max_headers: usize::from(sel % 8),
            max_body: u64::from(sel),
        }
    }
}

/// True when `s` lies inside `buf[..end]`.
fn within(buf: &[u8], end: usize, s: &[u8]) -> bool {
    let base = buf.as_ptr() as usize;
    let p = s.as_ptr() as usize;
    s.is_empty() || (p >= base && p + s.len() <= base + end)
}

fn check_head(buf: &[u8], h: &RequestHead<'_>, limits: &Limits) {
    assert!(
        h.head_len > 0 && h.head_len <= buf.len(),
        "head_len out of bounds"
    );
    let end = h.head_len;
    if let Some(host) = h.host {
        assert!(within(buf, end, host), "host {host:?} outside the head");
        assert!(host.is_ascii(), "non-ASCII host {host:?}");
    }
    for s in [Some(h.method_str), Some(h.target)]
        .into_iter()
        .chain([h.if_none_match, h.if_modified_since, h.range, h.if_range])
        .chain([h.referer, h.user_agent])
        .flatten()
    {
        // `/` for an absolute-form URI without a path is a static string.
        if s != "/" {
            assert!(within(buf, end, s.as_bytes()), "field {s:?} outside the head");
        }
    }
    assert!(!(h.chunked && h.content_length.is_some()), "CL and chunked");
    assert!(h.content_length.is_none_or(|n| n <= limits.max_body));
    if h.chunked {
        assert_eq!(h.version, Version::Http11, "chunked in 1.0");
    }
    if h.version == Version::Http11 {
        assert!(h.host.is_some(), "1.1 without Host");
    }
    assert!(!h.target.is_empty());
    assert!(
        !h.target.bytes().any(|b| b.is_ascii_control() || b == b' '),
        "control byte or space in target"
    );
    assert!(
        buf[..end].ends_with(b"\r\n"),
        "head does not end at a CRLF"
    );
    // No bare LF from the request line on (the empty lines before it are skipped).
    let start = buf[..end]
        .iter()
        .position(|&b| b != b'\r' && b != b'\n')
        .unwrap_or(end);
    for i in start..end {
        assert!(buf[i] != b'\n' || buf[i - 1] == b'\r', "bare LF at {i}");
    }
}

fuzz_target!(|data: &[u8]| {
    if data.len() < 5 {
        return;
    }
    let limits = limits(data[0]);
    let splits = [
        usize::from(u16::from_le_bytes([data[1], data[2]])),
        usize::from(u16::from_le_bytes([data[3], data[4]])),
    ];
    let buf = &data[5..];
    let whole = parse_request(buf, &limits);
    if let Ok(Parse::Complete(h)) = &whole {
        check_head(buf, h, &limits);
    }
    for k in splits.iter().map(|&s| s % (buf.len() + 1)) {
        let prefix = parse_request(&buf[..k], &limits);
        match (&whole, &prefix) {
            (Ok(Parse::Complete(h)), _) if k < h.head_len => {
                assert_eq!(prefix, Ok(Parse::Incomplete), "prefix {k} of a valid head");
            }
            (Ok(Parse::Complete(h)), Ok(Parse::Complete(p))) => {
                assert_eq!(h, p, "a longer prefix changed the head");
            }
            (Ok(Parse::Complete(_)), other) => panic!("prefix {k} past the head: {other:?}"),
            (_, Ok(Parse::Complete(_))) => panic!("prefix {k} complete, whole input not"),
            (Ok(Parse::Incomplete), Err(e)) => panic!("prefix {k} fails ({e}), whole incomplete"),
            _ => {}
        }
    }
});
