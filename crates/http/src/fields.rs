//! The request fields only the static-file handler needs: `Accept-Encoding` (for
//! precompressed files), `If-Match` and `If-Unmodified-Since` (for 412).
//!
//! [`crate::parse_request`] fills them into [`crate::RequestHead::extra`] in its one loop over
//! the fields, so the head is not read twice. [`ExtraFields::scan`] finds the same fields in
//! the bytes of a head that `parse_request` has already accepted, for a caller that kept only
//! those bytes: `memchr` finds the line starts, and a line is looked at past its first byte only
//! when that byte is `a` or `i` (either case). The tests check that both ways agree.
//!
//! The head given to `scan` must be one that `parse_request` accepted (`&buf[..head_len]`): its
//! grammar is then known to be valid (tokens, no obs-fold, no bare CR or LF), so the scan only
//! splits lines. As for the parser's other fields, the first field line of each name counts and
//! a value that is not UTF-8 is ignored.
//!
//! ```
//! use servelab_http::fields::ExtraFields;
//! let head = b"GET / HTTP/1.1\r\nHost: x\r\naccept-encoding: gzip, br\r\nIf-Match: \"a\"\r\n\r\n";
//! let f = ExtraFields::scan(head);
//! assert_eq!(f.accept_encoding, Some("gzip, br"));
//! assert_eq!(f.if_match, Some("\"a\""));
//! assert_eq!(f.if_unmodified_since, None);
//! ```

/// Fields of a request head that the parser skips. Each borrows from the head.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ExtraFields<'a> {
    /// `Accept-Encoding`, trimmed (`Some("")` for an empty field, which means "no coding").
    pub accept_encoding: Option<&'a str>,
    /// `If-Match`.
    pub if_match: Option<&'a str>,
    /// `If-Unmodified-Since`.
    pub if_unmodified_since: Option<&'a str>,
}

impl<'a> ExtraFields<'a> {
    /// Scans a complete, already parsed request head (request line, fields, blank line).
    pub fn scan(head: &'a [u8]) -> ExtraFields<'a> {
        let mut out = ExtraFields::default();
        // Line starts are found with memchr (SIMD), so most of a browser's 600-byte head is
        // never looked at byte by byte: only the first byte of each line is. The first line
        // found is the request line (or an empty line before it), which never matches.
        for at in memchr::memchr_iter(b'\n', head).map(|i| i + 1) {
            let Some(&first) = head.get(at) else { break };
            if !matches!(first, b'a' | b'A' | b'i' | b'I') {
                if first == b'\r' || first == b'\n' {
                    // A blank line: the end of the head, unless it precedes the request line.
                    if head[..at].iter().any(|&b| b != b'\r' && b != b'\n') {
                        break;
                    }
                }
                continue;
            }
            let end = memchr::memchr(b'\n', &head[at..]).map_or(head.len(), |i| at + i);
            let line = &head[at..end];
            let line = line.strip_suffix(b"\r").unwrap_or(line);
            let Some(colon) = memchr::memchr(b':', line) else {
                continue;
            };
            let name = &line[..colon];
            let slot = match name.len() {
                15 if name.eq_ignore_ascii_case(b"accept-encoding") => &mut out.accept_encoding,
                8 if name.eq_ignore_ascii_case(b"if-match") => &mut out.if_match,
                19 if name.eq_ignore_ascii_case(b"if-unmodified-since") => {
                    &mut out.if_unmodified_since
                }
                _ => continue,
            };
            if slot.is_none() {
                let value = trim(&line[colon + 1..]);
                *slot = std::str::from_utf8(value).ok();
            }
        }
        out
    }
}

fn trim(v: &[u8]) -> &[u8] {
    let start = v.iter().position(|&b| b != b' ' && b != b'\t');
    let Some(start) = start else {
        return &[];
    };
    let end = v
        .iter()
        .rposition(|&b| b != b' ' && b != b'\t')
        .map_or(start, |e| e + 1);
    &v[start..end]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Limits, Parse, parse_request};

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
}
