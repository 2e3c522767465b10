//! The extra fields (`Accept-Encoding`, `If-Match`, ...) the parser picks up in its
//! one pass, checked against `ExtraFields::scan` over the same head. The scan
//! lives in `fields.rs`; these tests sit under `request` because they drive the
//! whole parser, and `fields` must not import the module that uses it.

use super::{Limits, Parse, parse_request};
use crate::fields::ExtraFields;

/// Parses first, as the server does, then scans exactly the head, and checks that the
/// parser found the same fields.
fn scan(req: &[u8]) -> ExtraFields<'_> {
    let Ok(Parse::Complete(head)) = parse_request(req, &Limits::default()) else {
        panic!("not a valid head: {:?}", String::from_utf8_lossy(req));
    };
    let scanned = ExtraFields::scan(&req[..head.head_len]);
    assert_eq!(head.extra, scanned, "{:?}", String::from_utf8_lossy(req));
    scanned
}

/// The parser's one pass and the second scan find the same fields: each test below runs
/// through this, and so does a set of generated heads.
#[test]
fn parser_and_scan_agree_on_generated_heads() {
    let lines: &[&[u8]] = &[
        b"Accept-Encoding: gzip, br\r\n",
        b"accept-encoding:\r\n",
        b"ACCEPT-ENCODING:  zstd \t\r\n",
        b"Accept-Encodings: br\r\n",
        b"Accept: */*\r\n",
        b"If-Match: \"a\"\r\n",
        b"if-match: \"\xff\"\r\n",
        b"If-Matches: x\r\n",
        b"If-Unmodified-Since: Sun, 06 Nov 1994 08:49:37 GMT\r\n",
        b"if-unmodified-since: x\r\n",
        b"If-Range: \"a\"\r\n",
        b"Range: bytes=0-1\r\n",
        b"X-Accept-Encoding: gzip\r\n",
    ];
    let mut next = crate::test_rng::xorshift(0x9FB2_1C65_1E98_DF25);
    let mut found = 0;
    for _ in 0..5_000 {
        let mut req = b"GET / HTTP/1.1\r\nHost: x\r\n".to_vec();
        for _ in 0..(next() % 6) {
            req.extend_from_slice(lines[(next() % lines.len() as u64) as usize]);
        }
        req.extend_from_slice(b"\r\n");
        let f = scan(&req);
        found += usize::from(f != ExtraFields::default());
    }
    assert!(found > 2_000, "{found}");
}

#[test]
fn finds_each_field_case_insensitively() {
    let f = scan(
        b"GET / HTTP/1.1\r\nHOST: x\r\nIF-MATCH: \"a\", \"b\"\r\nAccept-Encoding:\tbr ;q=1 \r\n\
          if-unmodified-since: Sun, 06 Nov 1994 08:49:37 GMT\r\n\r\n",
    );
    assert_eq!(f.accept_encoding, Some("br ;q=1"));
    assert_eq!(f.if_match, Some("\"a\", \"b\""));
    assert_eq!(f.if_unmodified_since, Some("Sun, 06 Nov 1994 08:49:37 GMT"));
}

#[test]
fn absent_empty_and_first_wins() {
    let f = scan(b"GET / HTTP/1.1\r\nHost: x\r\nAccept: */*\r\nIf-None-Match: \"a\"\r\n\r\n");
    assert_eq!(f, ExtraFields::default());
    let f = scan(
        b"GET / HTTP/1.1\r\nHost: x\r\nAccept-Encoding:\r\nIf-Match: \"1\"\r\nIf-Match: \"2\"\r\n\r\n",
    );
    assert_eq!(f.accept_encoding, Some(""));
    assert_eq!(f.if_match, Some("\"1\""));
    // Empty lines before the request line are skipped, as the parser does.
    let f = scan(b"\r\n\r\nGET / HTTP/1.1\r\nHost: x\r\nAccept-Encoding: gzip\r\n\r\n");
    assert_eq!(f.accept_encoding, Some("gzip"));
}

#[test]
fn similar_names_and_the_body_are_not_fields() {
    let req = b"GET / HTTP/1.1\r\nHost: x\r\nAccept-Encodings: br\r\nIf-Matches: x\r\n\
                Content-Length: 20\r\n\r\nAccept-Encoding: gzip";
    let f = scan(req);
    assert_eq!(f, ExtraFields::default());
}

#[test]
fn non_utf8_values_are_ignored() {
    let f = scan(b"GET / HTTP/1.1\r\nHost: x\r\nIf-Match: \"\xff\"\r\n\r\n");
    assert_eq!(f.if_match, None);
}
