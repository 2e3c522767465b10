//! A request head from fields decoded elsewhere (an HTTP/2 stream's HPACK block) rather than
//! from HTTP/1.1 bytes: [`request_from_fields`] fills the same [`RequestHead`] that
//! [`parse_request`](super::parse_request) does, by the same rules, so that one handler
//! answers both protocols and answers them alike.
//!
//! Why not write the request out as an HTTP/1.1 head and parse that: the round trip was about
//! a quarter of the instructions of an HTTP/2 request to `serve` (`bench/callgrind.sh --h2`,
//! with the response's head read back the same way). What the round trip gave for free is
//! kept here, each as the status the parser would give: a method that is not a token and a
//! control octet in a value (400), the request line past `max_request_line` (414), too many
//! fields or a head past `max_head` (431, measured as the HTTP/1.1 head would be), the target's
//! form, `Host` (from `:authority`, which wins over a `host` field as RFC 9113 §8.3.1 has it;
//! neither is a 400 as a 1.1 request without `Host` is), and `Content-Length`.
//!
//! ```
//! use servelab_http::{Limits, Method, request_from_fields};
//! let fields = [("accept-encoding", &b"gzip"[..]), ("range", &b"bytes=0-1"[..])];
//! let head = request_from_fields("GET", "/a.txt", Some("example.com"), fields, false, &Limits::default())
//!     .unwrap();
//! assert_eq!((head.method, head.target, head.host), (Method::Get, "/a.txt", Some(&b"example.com"[..])));
//! assert_eq!((head.range, head.extra.accept_encoding), (Some("bytes=0-1"), Some("gzip")));
//! ```

use super::{Field, Limits, RequestHead, Version};
use crate::error::RequestError;
use crate::fields::ExtraFields;
use crate::framing::{is_tchar, parse_content_length};
use crate::method::Method;
use crate::target::{classify_target, validate_host_field};

/// ` HTTP/1.1` after the target, and the CRLFs, as an HTTP/1.1 head would count them.
const VERSION: usize = " HTTP/1.1".len();
const CRLF: usize = 2;
/// `: ` between a field's name and value.
const COLON: usize = 2;

/// The head of a request that came as decoded fields: `:method`, `:path` (empty for none),
/// `:authority`, then the regular fields in order (lowercase names). `control_in_values`
/// says that some value holds a control octet other than HTAB (the decoder saw them all).
/// Errors are the ones [`parse_request`](super::parse_request) gives the same request.
///
/// `version` is HTTP/1.1 (the rules that apply are 1.1's), `keep_alive` is true,
/// `head_len` is 0 (there is no head in a buffer) and `expect_continue` false (an HTTP/2
/// client does not wait for `100 Continue`).
pub fn request_from_fields<'a>(
    method_str: &'a str,
    target: &'a str,
    authority: Option<&'a str>,
    fields: impl IntoIterator<Item = (&'a str, &'a [u8])>,
    control_in_values: bool,
    limits: &Limits,
) -> Result<RequestHead<'a>, RequestError> {
    if method_str.is_empty() || !method_str.bytes().all(is_tchar) {
        return Err(RequestError::Malformed("invalid token in request line"));
    }
    if control_in_values {
        return Err(RequestError::Malformed("invalid header value"));
    }
    let method = Method::from_token(method_str);
    let line_len = method_str.len() + 1 + target.len() + VERSION;
    let mut head_len = line_len + CRLF + CRLF;
    let mut count = 0usize;
    if let Some(a) = authority {
        head_len += "host".len() + COLON + a.len() + CRLF;
        count += 1;
    }

    let mut host = None;
    let mut hosts = 0u32;
    let mut content_length: Option<u64> = None;
    let (mut if_none_match, mut if_modified_since, mut range, mut if_range) =
        (None, None, None, None);
    let (mut referer, mut user_agent) = (None, None);
    let mut extra = ExtraFields::default();
    let mut error = None;
    for (name, value) in fields {
        let field = Field::classify(name);
        if field == Some(Field::Host) && authority.is_some() {
            continue;
        }
        count += 1;
        head_len += name.len() + COLON + value.len() + CRLF;
        if error.is_some() {
            // Still counted: the limits come first, as in the parser.
            continue;
        }
        let Some(field) = field else { continue };
        let slot = match field {
            Field::Host => {
                hosts += 1;
                match validate_host_field(value) {
                    _ if hosts > 1 => error = Some(RequestError::DuplicateHost),
                    Ok(v) => host = Some(v),
                    Err(e) => error = Some(e),
                }
                continue;
            }
            Field::ContentLength => {
                match parse_content_length(value) {
                    Ok(n) if content_length.is_some_and(|old| old != n) => {
                        error = Some(RequestError::InvalidContentLength);
                    }
                    Ok(n) => content_length = Some(n),
                    Err(e) => error = Some(e),
                }
                continue;
            }
            // Connection-specific: an HTTP/2 decoder refuses them before this (RFC 9113
            // §8.2.2), and `Expect` asks for nothing here (see above).
            Field::Connection | Field::TransferEncoding | Field::Expect => continue,
            Field::IfNoneMatch => &mut if_none_match,
            Field::IfModifiedSince => &mut if_modified_since,
            Field::Range => &mut range,
            Field::IfRange => &mut if_range,
            Field::Referer => &mut referer,
            Field::UserAgent => &mut user_agent,
            Field::AcceptEncoding => &mut extra.accept_encoding,
            Field::IfMatch => &mut extra.if_match,
            Field::IfUnmodifiedSince => &mut extra.if_unmodified_since,
        };
        if slot.is_none() {
            *slot = std::str::from_utf8(value).ok();
        }
    }
    if count > limits.max_headers.min(super::HEADER_CAP) {
        return Err(RequestError::TooManyHeaders);
    }
    if line_len > limits.max_request_line {
        return Err(RequestError::RequestLineTooLong);
    }
    if head_len > limits.max_head {
        return Err(RequestError::HeadTooLarge);
    }
    let (target, _) = classify_target(method_str, target)?;
    // `:authority` stands where an HTTP/1.1 head has its `Host`: first.
    if let Some(a) = authority {
        host = Some(validate_host_field(a.as_bytes())?);
    }
    if let Some(e) = error {
        return Err(e);
    }
    if authority.is_none() && hosts == 0 {
        return Err(RequestError::MissingHost);
    }
    if content_length.is_some_and(|n| n > limits.max_body) {
        return Err(RequestError::PayloadTooLarge);
    }
    Ok(RequestHead {
        method,
        method_str,
        target,
        version: Version::Http11,
        host,
        keep_alive: true,
        content_length,
        chunked: false,
        expect_continue: false,
        if_none_match,
        if_modified_since,
        range,
        if_range,
        referer,
        user_agent,
        extra,
        head_len: 0,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::request::{Parse, parse_request};

    /// The request written as an HTTP/1.1 head, as the server once did for HTTP/2.
    fn as_http1(
        method: &str,
        target: &str,
        authority: Option<&str>,
        fields: &[(&str, &str)],
    ) -> Vec<u8> {
        let mut out = format!("{method} {target} HTTP/1.1\r\n");
        if let Some(a) = authority {
            out.push_str(&format!("host: {a}\r\n"));
        }
        for (n, v) in fields {
            if *n == "host" && authority.is_some() {
                continue;
            }
            out.push_str(&format!("{n}: {v}\r\n"));
        }
        out.push_str("\r\n");
        out.into_bytes()
    }

    /// Every case gives what the HTTP/1.1 parser gives the same request written as a head:
    /// the same fields, or the same status.
    #[test]
    fn fields_give_what_the_http1_parser_gives() {
        let limits = Limits {
            max_request_line: 64,
            max_head: 256,
            max_headers: 8,
            max_body: 1000,
        };
        let long = "/".repeat(60);
        let many: Vec<(&str, &str)> = (0..8).map(|_| ("x-a", "1")).collect();
        // The head is 37 bytes and the value: 256 is the limit, 257 past it.
        let (fits, over, far) = ("v".repeat(219), "v".repeat(220), "v".repeat(300));
        type Case<'a> = (&'a str, &'a str, Option<&'a str>, Vec<(&'a str, &'a str)>);
        let cases: Vec<Case> = vec![
            ("GET", "/a?b", Some("example.com"), vec![]),
            (
                "HEAD",
                "/a",
                Some("example.com:8443"),
                vec![("accept-encoding", "br, gzip")],
            ),
            ("GET", "/a", None, vec![("host", "h")]),
            ("GET", "/a", None, vec![]),
            ("GET", "/a", None, vec![("host", "h"), ("host", "i")]),
            ("GET", "/a", Some("a"), vec![("host", "b"), ("host", "c")]),
            ("GET", "/a", Some("bad host"), vec![]),
            (
                "GET",
                "/a",
                Some("h"),
                vec![("content-length", "5"), ("content-length", "6")],
            ),
            ("GET", "/a", Some("h"), vec![("content-length", "5000")]),
            ("GET", "/a", Some("h"), vec![("content-length", "x")]),
            ("G(T", "/a", Some("h"), vec![]),
            ("BREW", "/a", Some("h"), vec![]),
            ("OPTIONS", "*", Some("h"), vec![]),
            ("GET", "*", Some("h"), vec![]),
            ("GET", "", Some("h"), vec![]),
            ("GET", long.as_str(), Some("h"), vec![]),
            ("GET", "/a", Some("h"), many.clone()),
            ("GET", "/a", Some("h"), vec![("x-big", fits.as_str())]),
            ("GET", "/a", Some("h"), vec![("x-big", over.as_str())]),
            ("GET", "/a", Some("h"), vec![("x-big", far.as_str())]),
            (
                "GET",
                "/a",
                Some("h"),
                vec![
                    ("if-none-match", "\"x\""),
                    ("if-modified-since", "Sun, 06 Nov 1994 08:49:37 GMT"),
                    ("range", "bytes=0-1"),
                    ("if-range", "\"x\""),
                    ("referer", "http://r/"),
                    ("user-agent", "ua"),
                    ("if-match", "\"y\""),
                ],
            ),
            (
                "GET",
                "/a",
                Some("h"),
                vec![("range", "bytes=0-1"), ("range", "bytes=2-3")],
            ),
        ];
        let mut failed = 0;
        for (method, target, authority, fields) in &cases {
            let text = as_http1(method, target, *authority, fields);
            let want = match parse_request(&text, &limits) {
                Ok(Parse::Complete(h)) => Ok(RequestHead { head_len: 0, ..h }),
                Ok(Parse::Incomplete) => panic!("{text:?} is whole"),
                Err(e) => Err(e.status()),
            };
            failed += usize::from(want.is_err());
            let fields = fields.iter().map(|&(n, v)| (n, v.as_bytes()));
            let got = request_from_fields(method, target, *authority, fields, false, &limits)
                .map_err(|e| e.status());
            assert_eq!(got, want, "{}", String::from_utf8_lossy(&text));
        }
        // Not all alike: most cases are refusals, each a different rule.
        assert_eq!(failed, 13);
    }

    #[test]
    fn a_control_octet_in_a_value_is_a_400_as_in_http1() {
        let text = b"GET /a HTTP/1.1\r\nhost: h\r\nx-a: a\x01b\r\n\r\n";
        let want = parse_request(text, &Limits::default())
            .map(|_| ())
            .map_err(|e| e.status());
        let fields = [("x-a", &b"a\x01b"[..])];
        let got = request_from_fields("GET", "/a", Some("h"), fields, true, &Limits::default());
        assert_eq!(got.map(|_| ()).map_err(|e| e.status()), want);
        assert!(want.is_err());
    }
}
