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
