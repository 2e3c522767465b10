//! The request head: incremental, allocation-free parsing of an HTTP/1.1 request line and header
//! block (RFC 9112 sections 2 to 3, 5 and 6), plus the checks httparse leaves to us.
//!
//! [`parse_request`] is fed the whole buffer read so far, every time; it returns
//! [`Parse::Incomplete`] until the blank line ending the head has arrived. `head_len` then tells
//! the caller where the body, or the next pipelined request, begins. Everything in
//! [`RequestHead`] borrows from the buffer: parsing never touches the heap (httparse's header
//! array lives on the stack, uninitialised).
//!
//! httparse enforces the grammar (tokens, single spaces, no obs-fold, no whitespace before a
//! colon, no control bytes in the target or in values). It also takes a bare LF as a line end,
//! which RFC 9112 2.2 allows; we refuse it (400), as llhttp does, because a front end that does
//! not split `Dummy: x\nContent-Length: 23` into two fields sees a different request: a
//! smuggling gadget. On top of it this module enforces the size limits even before the head is complete (a client that never sends CRLF
//! cannot make us buffer forever), tells a well-formed but unsupported version (505) from
//! garbage (400), and applies RFC 9112's framing rules: `Host` exactly once in 1.1,
//! `Content-Length` a plain decimal, `Transfer-Encoding` never with `Content-Length`, never in
//! 1.0, and ending in `chunked`. These are the request-smuggling defences: whenever two parsers
//! could disagree about where this request's body ends, we refuse it.
//!
//! ```
//! use servelab_http::{parse_request, Limits, Method, Parse};
//! let buf = b"GET /a.txt HTTP/1.1\r\nHost: x\r\n\r\nGET /b HTTP/1.1\r\nHost: x\r\n\r\n";
//! let Ok(Parse::Complete(head)) = parse_request(buf, &Limits::default()) else { panic!() };
//! assert_eq!((head.method, head.target, head.keep_alive), (Method::Get, "/a.txt", true));
//! let Ok(Parse::Complete(next)) = parse_request(&buf[head.head_len..], &Limits::default()) else { panic!() };
//! assert_eq!(next.target, "/b");
//! ```

use std::mem::MaybeUninit;

use crate::error::RequestError;
use crate::fields::ExtraFields;
use crate::framing::{TransferCodings, parse_content_length, trim_ows};
use crate::method::Method;
use crate::target::{classify_target, validate_host_field};

/// The protocol version of a request. Anything else is refused with 505 (well-formed) or 400.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Version {
    /// HTTP/1.0: closes after each response unless the client asks for keep-alive.
    Http10,
    /// HTTP/1.1: persistent by default, `Host` required.
    Http11,
}

/// Size limits on what a client may send, each with the status it triggers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Longest request line in bytes, without its CRLF (default 8192; over it: 414).
    pub max_request_line: usize,
    /// Largest head in bytes, request line and CRLFCRLF included (default 16384; over it: 431).
    pub max_head: usize,
    /// Most header fields (default 100; over it: 431). Values above 256 act as 256, the size of
    /// the on-stack header array.
    pub max_headers: usize,
    /// Largest request body we read and discard (default 1 MiB; over it: 413).
    pub max_body: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_request_line: 8192,
            max_head: 16384,
            max_headers: 100,
            max_body: 1 << 20,
        }
    }
}

/// The result of feeding bytes to an incremental parser. Needing more bytes is a state, not an
/// error.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Parse<T> {
    /// A complete value was parsed.
    Complete(T),
    /// The input ends before the value does: read more and call again with the longer buffer.
    Incomplete,
}

/// A parsed request head. Every string and byte slice in it borrows from the buffer given to
/// [`parse_request`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RequestHead<'a> {
    /// The method, reduced to what the server branches on.
    pub method: Method,
    /// The method token as sent (for the log and for 405 versus 501).
    pub method_str: &'a str,
    /// The request target: the path and query of origin-form (`/a?b`), the path part of
    /// absolute-form (`/` when the URI has none), `*` for OPTIONS, `host:port` for CONNECT.
    pub target: &'a str,
    /// HTTP/1.0 or HTTP/1.1.
    pub version: Version,
    /// The `Host` value, or the authority of an absolute-form target, which RFC 9112 3.2.2
    /// says takes precedence. Always ASCII: it has passed RFC 3986's authority grammar, which
    /// admits nothing else. It stays bytes because the server never reads it, and turning it
    /// into `&str` cost a UTF-8 check on every request (`std::str::from_utf8` on it cannot
    /// fail, for a caller that wants one).
    pub host: Option<&'a [u8]>,
    /// Whether the connection stays open after the response (RFC 9112 9.3): HTTP/1.1 unless a
    /// `Connection: close` token; HTTP/1.0 only with a `keep-alive` token (and no `close`).
    pub keep_alive: bool,
    /// The body length from `Content-Length`, already checked against `Limits::max_body`.
    pub content_length: Option<u64>,
    /// The body uses chunked framing: decode it with `ChunkedDecoder` after `head_len`.
    pub chunked: bool,
    /// The client may wait for `100 Continue` before sending the content (RFC 9110 10.1.1):
    /// an `Expect: 100-continue` in an HTTP/1.1 request whose framing announces content
    /// (chunked, or a `Content-Length` above 0). Never set for HTTP/1.0, whose expectation
    /// the RFC says to ignore. The server must not wait for the content before answering:
    /// it sends [`CONTINUE`](crate::response::CONTINUE), or the final status at once.
    pub expect_continue: bool,
    /// `If-None-Match` (first field line; non-UTF-8 values are ignored).
    pub if_none_match: Option<&'a str>,
    /// `If-Modified-Since` (first field line).
    pub if_modified_since: Option<&'a str>,
    /// `Range` (first field line).
    pub range: Option<&'a str>,
    /// `If-Range` (first field line).
    pub if_range: Option<&'a str>,
    /// `Referer`, for the combined log format.
    pub referer: Option<&'a str>,
    /// `User-Agent`, for the combined log format.
    pub user_agent: Option<&'a str>,
    /// `Accept-Encoding`, `If-Match` and `If-Unmodified-Since`, for the static-file handler.
    pub extra: ExtraFields<'a>,
    /// Bytes consumed by the head, including the final empty line: the body (or the next
    /// pipelined request) starts at `buf[head_len..]`.
    pub head_len: usize,
}

/// The size of the stack array httparse fills; `Limits::max_headers` is clamped to it.
const HEADER_CAP: usize = 256;

/// Parses one request head from the start of `buf`. See the module docs; errors say which
/// status to answer before closing.
pub fn parse_request<'a>(
    buf: &'a [u8],
    limits: &Limits,
) -> Result<Parse<RequestHead<'a>>, RequestError> {
    let mut slots = [const { MaybeUninit::<httparse::Header<'a>>::uninit() }; HEADER_CAP];
    let mut req = httparse::Request::new(&mut []);
    let n = limits.max_headers.min(HEADER_CAP);
    let head_len = match req.parse_with_uninit_headers(buf, &mut slots[..n]) {
        Ok(httparse::Status::Complete(len)) => len,
        Ok(httparse::Status::Partial) => {
            check_sizes(buf, buf.len(), limits)?;
            return Ok(Parse::Incomplete);
        }
        Err(httparse::Error::Version) => {
            return match version_error(buf, limits)? {
                Parse::Complete(line_len) => later_minor(buf, &req, line_len, limits),
                Parse::Incomplete => Ok(Parse::Incomplete),
            };
        }
        Err(httparse::Error::TooManyHeaders) => return Err(RequestError::TooManyHeaders),
        Err(e) => return Err(RequestError::Malformed(describe(e))),
    };
    let (Some(method_str), Some(raw_target), Some(v)) = (req.method, req.path, req.version) else {
        // httparse fills all three before reporting Complete.
        return Err(RequestError::Malformed("incomplete request line"));
    };
    check_complete(
        &buf[..head_len],
        method_str,
        raw_target,
        req.headers,
        limits,
    )?;
    let version = if v == 0 {
        Version::Http10
    } else {
        Version::Http11
    };
    let line = RequestLine {
        method_str,
        raw_target,
        version,
    };
    build(line, req.headers, head_len, limits)
}

/// An HTTP/1.x request with a minor version above 1 (`HTTP/1.2`): RFC 9110 2.5 says a
/// recipient processes it as the highest minor version it implements, here 1.1. httparse
/// refuses every version but 1.0 and 1.1, yet it has checked the method and the target
/// before the version (they are in `req`), and [`version_error`] has checked the version
/// token and its line end (`line_len` bytes in all); the header block is left to httparse's
/// own header parser, with the same strict defaults as for a 1.1 request. Rare, so the
/// header array here is simply initialised.
fn later_minor<'a>(
    buf: &'a [u8],
    req: &httparse::Request<'_, 'a>,
    line_len: usize,
    limits: &Limits,
) -> Result<Parse<RequestHead<'a>>, RequestError> {
    let (Some(method_str), Some(raw_target)) = (req.method, req.path) else {
        return Err(RequestError::Malformed("bad request line"));
    };
    let mut headers = [httparse::EMPTY_HEADER; HEADER_CAP];
    let n = limits.max_headers.min(HEADER_CAP);
    let (fields_len, headers) = match httparse::parse_headers(&buf[line_len..], &mut headers[..n]) {
        Ok(httparse::Status::Complete(done)) => done,
        Ok(httparse::Status::Partial) => {
            check_sizes(buf, buf.len(), limits)?;
            return Ok(Parse::Incomplete);
        }
        Err(httparse::Error::TooManyHeaders) => return Err(RequestError::TooManyHeaders),
        Err(e) => return Err(RequestError::Malformed(describe(e))),
    };
    let head_len = line_len + fields_len;
    check_complete(&buf[..head_len], method_str, raw_target, headers, limits)?;
    let line = RequestLine {
        method_str,
        raw_target,
        version: Version::Http11,
    };
    build(line, headers, head_len, limits)
}

/// The request line, as httparse checked it.
struct RequestLine<'a> {
    method_str: &'a str,
    raw_target: &'a str,
    version: Version,
}

/// Applies the checks httparse leaves to us (target form, Host, framing, limits) and
/// collects the fields the server uses.
///
/// Every field is a local until the end, where the head is built once, inside the value
/// returned: a `RequestHead` is over 200 bytes, and a head built early and then moved into
/// `Ok(Parse::Complete(..))` cost two `memcpy` calls a request. It is inlined into its two
/// callers (the second, [`later_minor`], is rare), so that the request line stays in registers
/// and no registers are saved twice: with the origin-form shortcut of `classify_target` and the
/// Host check inlined as well, that took 51 instructions off a wrk request under callgrind
/// (2026-11-26).
#[inline(always)]
fn build<'a>(
    line: RequestLine<'a>,
    headers: &[httparse::Header<'a>],
    head_len: usize,
    limits: &Limits,
) -> Result<Parse<RequestHead<'a>>, RequestError> {
    let RequestLine {
        method_str,
        raw_target,
        version,
    } = line;
    let method = Method::from_token(method_str);
    let (target, authority) = classify_target(method_str, raw_target)?;

    let mut host = None;
    let mut content_length: Option<u64> = None;
    let (mut if_none_match, mut if_modified_since, mut range, mut if_range) =
        (None, None, None, None);
    let (mut referer, mut user_agent) = (None, None);
    let mut extra = ExtraFields::default();
    let mut hosts = 0u32;
    let (mut close, mut keep) = (false, false);
    let mut te = TransferCodings::default();
    let mut expect_continue = false;

    for h in headers {
        let Some(field) = Field::classify(h.name) else {
            continue;
        };
        // No trim here: httparse already drops the whitespace around a value (leading in its
        // parser, trailing before it stores the field), and
        // `header_names_are_case_insensitive_and_values_trimmed` holds it to that.
        let value = h.value;
        let slot = match field {
            Field::Host => {
                hosts += 1;
                if hosts > 1 {
                    return Err(RequestError::DuplicateHost);
                }
                host = Some(validate_host_field(value)?);
                continue;
            }
            Field::Connection => {
                for token in value.split(|&b| b == b',') {
                    let token = trim_ows(token);
                    close |= token.eq_ignore_ascii_case(b"close");
                    keep |= token.eq_ignore_ascii_case(b"keep-alive");
                }
                continue;
            }
            Field::ContentLength => {
                let n = parse_content_length(value)?;
                if content_length.is_some_and(|old| old != n) {
                    return Err(RequestError::InvalidContentLength);
                }
                content_length = Some(n);
                continue;
            }
            Field::TransferEncoding => {
                te.add(value);
                continue;
            }
            Field::Expect => {
                // A list of expectations, case-insensitive (RFC 9110 10.1.1). Others are
                // ignored: 417 is a MAY, and nothing else is defined.
                expect_continue |= value
                    .split(|&b| b == b',')
                    .any(|e| trim_ows(e).eq_ignore_ascii_case(b"100-continue"));
                continue;
            }
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

    if version == Version::Http11 && hosts == 0 {
        return Err(RequestError::MissingHost);
    }
    if let Some(authority) = authority {
        host = Some(authority.as_bytes());
    }
    let mut chunked = false;
    if te.seen {
        if version == Version::Http10 {
            return Err(RequestError::TransferEncodingInHttp10);
        }
        if content_length.is_some() {
            return Err(RequestError::ConflictingFraming);
        }
        te.check()?;
        chunked = true;
    }
    if content_length.is_some_and(|n| n > limits.max_body) {
        return Err(RequestError::PayloadTooLarge);
    }
    Ok(Parse::Complete(RequestHead {
        method,
        method_str,
        target,
        version,
        host,
        keep_alive: match version {
            Version::Http11 => !close,
            Version::Http10 => keep && !close,
        },
        content_length,
        chunked,
        // RFC 9110 10.1.1: a 1.0 request's expectation is ignored, and with no content there
        // is nothing to wait for.
        expect_continue: expect_continue
            && version == Version::Http11
            && (chunked || content_length.is_some_and(|n| n > 0)),
        if_none_match,
        if_modified_since,
        range,
        if_range,
        referer,
        user_agent,
        extra,
        head_len,
    }))
}

/// The header fields the parser looks at; all others are skipped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Field {
    Host,
    Connection,
    ContentLength,
    Expect,
    TransferEncoding,
    IfNoneMatch,
    IfModifiedSince,
    Range,
    IfRange,
    Referer,
    UserAgent,
    AcceptEncoding,
    IfMatch,
    IfUnmodifiedSince,
}

impl Field {
    /// Case-insensitive match, dispatched on the length and the first byte: a browser sends a
    /// dozen fields and most of them are none of these, so most lookups end there, and each
    /// name is compared with at most one candidate.
    ///
    /// `name` is a token (httparse refuses anything else in a field name), and every candidate
    /// is lowercase letters and `-`. For such bytes, `b | 0x20 == c` is `b.eq_ignore_ascii_case(&c)`:
    /// the bit lowercases a letter, leaves `-` and digits as they are, and turns no other token
    /// byte into a letter or `-` (only CR, never in a token, would become `-`). That is one
    /// operation a byte instead of lowercasing both sides; a test compares it with
    /// `eq_ignore_ascii_case` over every byte value.
    ///
    /// Inlined into its one caller on purpose: once `build` was inlined into `parse_request`,
    /// the compiler stopped inlining this, and the call per field cost a browser's request 50
    /// more instructions than it saved (callgrind, 2026-11-26).
    #[inline(always)]
    fn classify(name: &str) -> Option<Field> {
        let name = name.as_bytes();
        let is = |lower: &[u8]| {
            name.len() == lower.len() && name.iter().zip(lower).all(|(&b, &c)| b | 0x20 == c)
        };
        let first = name.first()? | 0x20;
        match (name.len(), first) {
            (4, b'h') if is(b"host") => Some(Field::Host),
            (5, b'r') if is(b"range") => Some(Field::Range),
            (6, b'e') if is(b"expect") => Some(Field::Expect),
            (7, b'r') if is(b"referer") => Some(Field::Referer),
            (8, b'i') if is(b"if-range") => Some(Field::IfRange),
            (8, b'i') if is(b"if-match") => Some(Field::IfMatch),
            (10, b'c') if is(b"connection") => Some(Field::Connection),
            (10, b'u') if is(b"user-agent") => Some(Field::UserAgent),
            (13, b'i') if is(b"if-none-match") => Some(Field::IfNoneMatch),
            (14, b'c') if is(b"content-length") => Some(Field::ContentLength),
            (15, b'a') if is(b"accept-encoding") => Some(Field::AcceptEncoding),
            (17, b't') if is(b"transfer-encoding") => Some(Field::TransferEncoding),
            (17, b'i') if is(b"if-modified-since") => Some(Field::IfModifiedSince),
            (19, b'i') if is(b"if-unmodified-since") => Some(Field::IfUnmodifiedSince),
            _ => None,
        }
    }
}

/// Enforces the request-line and head limits on `buf[..end]`, complete or not.
fn check_sizes(buf: &[u8], end: usize, limits: &Limits) -> Result<(), RequestError> {
    let head = &buf[..end.min(buf.len())];
    // httparse skips empty lines before the request line (RFC 9112 2.2); so do we. They still
    // count towards max_head, which bounds an endless stream of CRLFs.
    let start = head
        .iter()
        .position(|&b| b != b'\r' && b != b'\n')
        .unwrap_or(head.len());
    let line = &head[start..];
    let line = match line.iter().position(|&b| b == b'\n') {
        Some(i) => &line[..i],
        None => line,
    };
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    if line.len() > limits.max_request_line {
        return Err(RequestError::RequestLineTooLong);
    }
    if head.len() > limits.max_head {
        return Err(RequestError::HeadTooLarge);
    }
    Ok(())
}

/// Checks a complete head: the limits of [`check_sizes`] first, then refuses a bare LF (one
/// without a CR before it) anywhere from the request line on (see the module docs).
///
/// Both come from where httparse found the request line and the fields, with no scan of the
/// bytes. With httparse's default (strict) settings every LF from the request line on ends a
/// line: it refuses LF and bare CR inside a method, target, field name or value, and obs-fold.
/// So each line end is either just before a field's name (the request line's and every field's
/// but the last) or in the head's last four bytes (the last line's and the empty line's): the
/// head is free of bare LFs when each name follows a CRLF and the head ends in CRLFCRLF. The
/// request line is `method SP target SP HTTP/x.y` (the version token is always 8 bytes: httparse
/// takes only `HTTP/1.0` and `HTTP/1.1`, and [`version_error`] only `HTTP/1.d`). This costs a
/// few instructions a field instead of a walk over every byte of the head (about 440 of a wrk
/// request's 3,860 user-space instructions); a test compares it with that walk.
///
/// The empty lines before the request line, which RFC 9112 2.2 says to skip, carry no field, so
/// a bare LF there stays harmless and accepted. Only complete heads are checked for bare LFs, so
/// that an error never depends on where TCP split the bytes (a prefix is `Incomplete` or the
/// whole head's answer); `check_sizes` bounds what an incomplete head holds.
fn check_complete(
    head: &[u8],
    method: &str,
    target: &str,
    headers: &[httparse::Header<'_>],
    limits: &Limits,
) -> Result<(), RequestError> {
    // httparse's slices all point into `head`; `offset` is where one starts.
    let offset = |s: &str| s.as_ptr().addr().wrapping_sub(head.as_ptr().addr());
    const VERSION: usize = " HTTP/1.1".len();
    let line_len = offset(target) + target.len() + VERSION - offset(method);
    if line_len > limits.max_request_line {
        return Err(RequestError::RequestLineTooLong);
    }
    if head.len() > limits.max_head {
        return Err(RequestError::HeadTooLarge);
    }
    let crlf_before = |name: &str| {
        let at = offset(name);
        head.get(at.wrapping_sub(2)..at) == Some(b"\r\n")
    };
    if head.ends_with(b"\r\n\r\n") && headers.iter().all(|h| crlf_before(h.name)) {
        Ok(())
    } else {
        Err(RequestError::Malformed("bare LF"))
    }
}

/// httparse refused the version. A well-formed `HTTP/1.d` (d above 1, since httparse takes
/// 1.0 and 1.1) is processed as 1.1 (RFC 9110 2.5): the answer is `Complete` with the length
/// of everything up to the end of the request line, leading empty lines included. Another
/// well-formed `HTTP/d.d` is 505 (RFC 9110 15.6.6), anything else 400, and `Incomplete`
/// while the token could still become either.
fn version_error(buf: &[u8], limits: &Limits) -> Result<Parse<usize>, RequestError> {
    let start = buf
        .iter()
        .position(|&b| b != b'\r' && b != b'\n')
        .unwrap_or(buf.len());
    let line = &buf[start..];
    // httparse accepted the method and the target, each followed by exactly one space.
    let mut spaces = line
        .iter()
        .enumerate()
        .filter(|&(_, &b)| b == b' ')
        .map(|(i, _)| i);
    let (Some(_), Some(second)) = (spaces.next(), spaces.next()) else {
        return Err(RequestError::Malformed("bad request line"));
    };
    let rest = &line[second + 1..];
    let end = rest
        .iter()
        .position(|&b| b == b'\r' || b == b'\n')
        .unwrap_or(rest.len());
    let token = &rest[..end];
    const PATTERN: &[u8] = b"HTTP/d.d";
    let fits = token.len() <= PATTERN.len()
        && token.iter().zip(PATTERN).all(|(&b, &p)| match p {
            b'd' => b.is_ascii_digit(),
            _ => b == p,
        });
    if !fits {
        return Err(RequestError::Malformed("bad HTTP version"));
    }
    // The request line ends at `line_end`, CRLF or LF included.
    let line_end = match rest.get(end) {
        None => {
            check_sizes(buf, buf.len(), limits)?;
            return Ok(Parse::Incomplete);
        }
        Some(_) if token.len() < PATTERN.len() => {
            return Err(RequestError::Malformed("bad HTTP version"));
        }
        Some(b'\r') => match rest.get(end + 1) {
            None => {
                check_sizes(buf, buf.len(), limits)?;
                return Ok(Parse::Incomplete);
            }
            Some(b'\n') => end + 2,
            Some(_) => return Err(RequestError::Malformed("bare CR")),
        },
        Some(_) => end + 1,
    };
    if token[5] != b'1' {
        return Err(RequestError::UnsupportedVersion);
    }
    let line_len = start + second + 1 + line_end;
    check_sizes(buf, line_len, limits)?;
    Ok(Parse::Complete(line_len))
}

/// A short description of an httparse error for `RequestError::Malformed`.
fn describe(e: httparse::Error) -> &'static str {
    match e {
        httparse::Error::HeaderName => "invalid header name",
        httparse::Error::HeaderValue => "invalid header value",
        httparse::Error::NewLine => "invalid line ending",
        httparse::Error::Token => "invalid token in request line",
        httparse::Error::Version => "bad HTTP version",
        httparse::Error::Status => "invalid status",
        httparse::Error::TooManyHeaders => "too many headers",
    }
}

mod decoded;
pub use decoded::request_from_fields;

#[cfg(test)]
mod fields_rules;
#[cfg(test)]
mod framing_rules;
#[cfg(test)]
mod target_rules;

#[cfg(test)]
mod tests {
    use super::*;

    // Shared with the rule tests beside this module (`framing_rules`,
    // `target_rules`).
    pub(super) fn parse(buf: &[u8]) -> Result<Parse<RequestHead<'_>>, RequestError> {
        parse_request(buf, &Limits::default())
    }

    pub(super) fn complete(buf: &[u8]) -> RequestHead<'_> {
        match parse(buf) {
            Ok(Parse::Complete(h)) => h,
            other => panic!("{:?}: {other:?}", String::from_utf8_lossy(buf)),
        }
    }

    pub(super) fn error(buf: &[u8]) -> RequestError {
        match parse(buf) {
            Err(e) => e,
            other => panic!("{:?}: {other:?}", String::from_utf8_lossy(buf)),
        }
    }

    pub(super) fn status(buf: &[u8]) -> u16 {
        error(buf).status().code()
    }

    const BROWSER: &[u8] = b"GET /docs/index.html?lang=en HTTP/1.1\r\n\
        Host: 127.0.0.1:8080\r\n\
        User-Agent: Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0\r\n\
        Accept: text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8\r\n\
        Accept-Language: en-US,en;q=0.5\r\n\
        Accept-Encoding: gzip, deflate, br, zstd\r\n\
        Referer: http://127.0.0.1:8080/\r\n\
        Connection: keep-alive\r\n\
        If-None-Match: \"1a-2b\"\r\n\
        If-Modified-Since: Sun, 06 Nov 1994 08:49:37 GMT\r\n\
        Range: bytes=0-99\r\n\
        If-Range: \"1a-2b\"\r\n\
        \r\n";

    #[test]
    fn typical_browser_request() {
        let h = complete(BROWSER);
        assert_eq!(h.method, Method::Get);
        assert_eq!(h.method_str, "GET");
        assert_eq!(h.target, "/docs/index.html?lang=en");
        assert_eq!(h.version, Version::Http11);
        assert_eq!(h.host, Some(&b"127.0.0.1:8080"[..]));
        assert!(h.keep_alive);
        assert_eq!(h.content_length, None);
        assert!(!h.chunked);
        assert_eq!(h.if_none_match, Some("\"1a-2b\""));
        assert_eq!(h.if_modified_since, Some("Sun, 06 Nov 1994 08:49:37 GMT"));
        assert_eq!(h.range, Some("bytes=0-99"));
        assert_eq!(h.if_range, Some("\"1a-2b\""));
        assert_eq!(h.referer, Some("http://127.0.0.1:8080/"));
        assert!(h.user_agent.unwrap().starts_with("Mozilla/5.0"));
        assert_eq!(h.head_len, BROWSER.len());
    }

    #[test]
    fn header_names_are_case_insensitive_and_values_trimmed() {
        let h = complete(b"HEAD / HTTP/1.1\r\nhOsT:   example.com  \r\nRANGE:bytes=1-\r\n\r\n");
        assert_eq!(h.method, Method::Head);
        assert_eq!(h.host, Some(&b"example.com"[..]));
        assert_eq!(h.range, Some("bytes=1-"));
        // Tabs too, on both sides, in every field the parser keeps.
        let h = complete(
            b"GET / HTTP/1.1\r\nHost:\t a \t\r\nRange: \tbytes=1-\t\r\nIf-Range:\t\"e\" \r\n\
              If-None-Match: \t\"e\"\t\r\nIf-Modified-Since:\tx \r\nReferer:  r\t\r\n\
              User-Agent:\tu\t\r\nAccept-Encoding: \tgzip\t \r\nIf-Match:\t*\t\r\n\
              If-Unmodified-Since: y\t\r\nContent-Length:\t0\t\r\nConnection:\tclose\t\r\n\r\n",
        );
        assert_eq!(
            (h.host, h.range, h.if_range),
            (Some(&b"a"[..]), Some("bytes=1-"), Some("\"e\""))
        );
        assert_eq!(
            (h.if_none_match, h.if_modified_since),
            (Some("\"e\""), Some("x"))
        );
        assert_eq!((h.referer, h.user_agent), (Some("r"), Some("u")));
        assert_eq!(h.extra.accept_encoding, Some("gzip"));
        assert_eq!(
            (h.extra.if_match, h.extra.if_unmodified_since),
            (Some("*"), Some("y"))
        );
        assert_eq!((h.content_length, h.keep_alive), (Some(0), false));
        // An empty value, or one of whitespace only, is empty.
        let h = complete(b"GET / HTTP/1.1\r\nHost: a\r\nRange:\r\nReferer: \t \r\n\r\n");
        assert_eq!((h.range, h.referer), (Some(""), Some("")));
    }

    /// Feeding any prefix gives Incomplete or the final answer, never something else: the
    /// incremental parser is equivalent to the whole-buffer one at every split point.
    fn check_every_split(buf: &[u8]) {
        let whole = parse(buf);
        assert!(!matches!(whole, Ok(Parse::Incomplete)), "{whole:?}");
        let mut decided = false;
        for end in 0..buf.len() {
            let part = parse(&buf[..end]);
            match (&part, &whole) {
                (Ok(Parse::Incomplete), _) => {
                    assert!(!decided, "prefix {end} went back to Incomplete");
                }
                (Err(a), Err(b)) => {
                    assert_eq!(a, b, "prefix {end} of {:?}", String::from_utf8_lossy(buf));
                    decided = true;
                }
                (Ok(Parse::Complete(a)), Ok(Parse::Complete(b))) => {
                    // Only once the head is whole: the rest is body.
                    assert_eq!(a, b);
                    assert!(end >= a.head_len);
                    decided = true;
                }
                _ => panic!(
                    "prefix {end} of {:?} gave {part:?}, whole gave {whole:?}",
                    String::from_utf8_lossy(buf)
                ),
            }
        }
    }

    #[test]
    fn byte_by_byte_equals_whole() {
        check_every_split(BROWSER);
        check_every_split(b"GET / HTTP/1.0\r\n\r\n");
        check_every_split(b"\r\n\r\nGET / HTTP/1.1\nHost: a\n\n");
        check_every_split(b"GET / HTTP/1.1\r\nDummy: x\nContent-Length: 23\r\nHost: a\r\n\r\n");
        check_every_split(b"GET / HTTP/2.0\r\nHost: a\r\n\r\n");
        check_every_split(b"GET / HTTP/1.2\r\nHost: a\r\n\r\n");
        check_every_split(b"GET / HTTX/1.1\r\nHost: a\r\n\r\n");
        check_every_split(b"GET / HTTP/1.1\r\nHost: a\r\nBad Name: x\r\n\r\n");
        check_every_split(b"GET / HTTP/1.1\r\n\r\n");
        check_every_split(b"GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nhello");
        let long = format!("GET /{} HTTP/1.1\r\nHost: a\r\n\r\n", "a".repeat(9000));
        check_every_split(long.as_bytes());
    }

    #[test]
    fn byte_by_byte_into_a_growing_buffer() {
        // What an engine does: append each read to its buffer and re-parse.
        let mut buf = Vec::new();
        let mut result = None;
        for &b in BROWSER {
            buf.push(b);
            if let Parse::Complete(h) = parse(&buf).unwrap() {
                result = Some(h.head_len);
            }
        }
        assert_eq!(result, Some(BROWSER.len()));
    }

    #[test]
    fn pipelined_requests_parse_one_after_another() {
        let buf = b"GET /1 HTTP/1.1\r\nHost: a\r\n\r\n\
                    HEAD /2 HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\n\r\nabc\
                    GET /3 HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n\
                    GET /4 HTT";
        let mut rest = &buf[..];
        let mut seen = Vec::new();
        while let Parse::Complete(h) = parse(rest).unwrap() {
            seen.push((h.target, h.keep_alive));
            let body = h.content_length.unwrap_or(0) as usize;
            rest = &rest[h.head_len + body..];
        }
        assert_eq!(seen, [("/1", true), ("/2", true), ("/3", false)]);
        assert_eq!(rest, b"GET /4 HTT");
    }

    #[test]
    fn persistence_rules() {
        let ka = |req: &[u8]| complete(req).keep_alive;
        assert!(ka(b"GET / HTTP/1.1\r\nHost: a\r\n\r\n"));
        assert!(!ka(
            b"GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n"
        ));
        assert!(!ka(
            b"GET / HTTP/1.1\r\nHost: a\r\nConnection: Upgrade, CLOSE\r\n\r\n"
        ));
        assert!(!ka(b"GET / HTTP/1.0\r\n\r\n"));
        assert!(ka(b"GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n"));
        assert!(!ka(
            b"GET / HTTP/1.0\r\nConnection: keep-alive, close\r\n\r\n"
        ));
        assert!(!ka(
            b"GET / HTTP/1.0\r\nConnection: keep-alive\r\nConnection: close\r\n\r\n"
        ));
        // Host is optional in 1.0.
        assert_eq!(complete(b"GET / HTTP/1.0\r\n\r\n").host, None);
    }

    /// Regression: `Dummy: x\nContent-Length: 23` was read as two fields (RFC 9112 2.2 allows
    /// it), while a front end that splits lines only on CRLF sees one field and no body: the
    /// two disagree on where the next request begins. Every bare LF in a head is now a 400.
    #[test]
    fn bare_lf_in_a_head_is_400() {
        for req in [
            &b"POST / HTTP/1.1\r\nHost: a\r\nDummy: x\nContent-Length: 23\r\n\r\n"[..],
            b"GET / HTTP/1.1\nHost: a\r\n\r\n", // after the request line
            b"GET / HTTP/1.1\r\nHost: a\n\r\n", // after the last field
            b"GET / HTTP/1.1\r\nHost: a\r\n\n", // the empty line ending the head
            b"GET / HTTP/1.1\nHost: a\n\n",     // LF-only throughout
            b"GET / HTTP/1.0\n\n",              // no fields at all
            b"\r\nGET / HTTP/1.1\r\nHost: a\n\r\n", // after skipped empty lines
        ] {
            let e = error(req);
            assert_eq!(
                e,
                RequestError::Malformed("bare LF"),
                "{:?}",
                String::from_utf8_lossy(req)
            );
            assert_eq!(e.status().code(), 400);
            check_every_split(req);
        }
        // Empty lines before the request line carry no field: a bare LF there is skipped.
        assert_eq!(
            complete(b"\n\r\n\nGET / HTTP/1.1\r\nHost: a\r\n\r\n").host,
            Some(&b"a"[..])
        );
        // A body is not the head: its bytes are not checked here.
        let h = complete(b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 2\r\n\r\n\n\n");
        assert_eq!(h.content_length, Some(2));
    }

    #[test]
    fn malformed_requests_are_400() {
        for req in [
            &b"GET  / HTTP/1.1\r\nHost: a\r\n\r\n"[..],
            b"GET / HTTP/1.1 \r\nHost: a\r\n\r\n",
            b"GET\t/ HTTP/1.1\r\nHost: a\r\n\r\n",
            b"/ HTTP/1.1\r\nHost: a\r\n\r\n",
            b"GET / HTTP/1.1\r\nHost : a\r\n\r\n", // whitespace before colon
            b"GET / HTTP/1.1\r\nHost: a\r\nX: 1\r\n y\r\n\r\n", // obs-fold
            b"GET / HTTP/1.1\r\n Host: a\r\n\r\n", // leading whitespace
            b"GET / HTTP/1.1\r\nHost: a\rX: y\r\n\r\n", // bare CR in a field value
            b"GET / HTTP/1.1\rHost: a\r\n\r\n",    // bare CR after the version
            b"GET /a\rb HTTP/1.1\r\nHost: a\r\n\r\n", // bare CR in the target
            b"GET /a\0b HTTP/1.1\r\nHost: a\r\n\r\n", // NUL in the target
            b"GET /a\x7fb HTTP/1.1\r\nHost: a\r\n\r\n", // DEL in the target
            b"GET /a\x80b HTTP/1.1\r\nHost: a\r\n\r\n", // raw bytes above 0x7F (RFC 9112 3)
            b"GET /caf\xc3\xa9 HTTP/1.1\r\nHost: a\r\n\r\n",
            b"GET http://h\xc3\xa9/ HTTP/1.1\r\nHost: a\r\n\r\n",
            b"GET / HTTP/1.1\r\nHost: a\r\nX: a\0b\r\n\r\n", // NUL in a value
            b"GET / HTTP/1.1\r\nHost: a\r\nX: a\x01b\r\n\r\n",
            b"GET / HTTP/1.1\r\nHost: a\r\nX: a\x7fb\r\n\r\n",
            b"GET / HTTP/1.1\r\nHost: a\r\n: empty-name\r\n\r\n",
            b"GET / HTTP/1.1\r\nHost: a\r\nNoColon\r\n\r\n",
            b"G(T / HTTP/1.1\r\nHost: a\r\n\r\n",
            b"GET / HTTP/1.10\r\nHost: a\r\n\r\n",
            b"GET / HTTP/1\r\nHost: a\r\n\r\n",
            b"GET / HTTP/11\r\nHost: a\r\n\r\n",
            b"GET / http/1.1\r\nHost: a\r\n\r\n",
            b"GET / FOO/1.1\r\nHost: a\r\n\r\n",
            b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03", // a TLS ClientHello
        ] {
            assert_eq!(status(req), 400, "{:?}", String::from_utf8_lossy(req));
        }
    }

    #[test]
    fn unsupported_versions_are_505() {
        for v in ["HTTP/2.0", "HTTP/0.9", "HTTP/3.0", "HTTP/9.9", "HTTP/0.1"] {
            let req = format!("GET / {v}\r\nHost: a\r\n\r\n");
            assert_eq!(
                error(req.as_bytes()),
                RequestError::UnsupportedVersion,
                "{v}"
            );
            let req = format!("GET / {v}\n\n");
            assert_eq!(status(req.as_bytes()), 505, "{v} with bare LF");
        }
        assert_eq!(parse(b"GET / HTTP/2.0"), Ok(Parse::Incomplete));
        assert_eq!(parse(b"GET / HTTP/2.0\r"), Ok(Parse::Incomplete));
        assert_eq!(status(b"GET / HTTP/2.0\rx"), 400);
        // The HTTP/2 connection preface: the version is checked first.
        assert_eq!(status(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"), 505);
    }

    #[test]
    fn later_http1_minor_versions_are_processed_as_1_1() {
        // RFC 9110 2.5: HTTP/1.2 is answered as the highest 1.x we implement.
        for v in ["HTTP/1.2", "HTTP/1.9"] {
            let req = format!("\r\nGET /a?b {v}\r\nHost: h:1\r\nRange: bytes=1-\r\n\r\nNEXT");
            let h = complete(req.as_bytes());
            assert_eq!((h.method, h.target), (Method::Get, "/a?b"), "{v}");
            assert_eq!((h.version, h.host), (Version::Http11, Some(&b"h:1"[..])));
            assert_eq!((h.keep_alive, h.range), (true, Some("bytes=1-")));
            assert_eq!(&req.as_bytes()[h.head_len..], b"NEXT");
            check_every_split(req.as_bytes());
        }
        let h = complete(b"HEAD / HTTP/1.2\r\nHost: a\r\nConnection: close\r\n\r\n");
        assert_eq!((h.method, h.keep_alive), (Method::Head, false));
        // And every 1.1 rule applies: Host, framing, grammar, limits.
        for (req, want) in [
            (&b"GET / HTTP/1.2\r\n\r\n"[..], RequestError::MissingHost),
            (
                b"POST / HTTP/1.2\r\nHost: a\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n",
                RequestError::ConflictingFraming,
            ),
            (
                b"GET / HTTP/1.2\r\nHost: a\r\nX: 1\r\n y\r\n\r\n",
                RequestError::Malformed("invalid header name"),
            ),
            (
                b"GET / HTTP/1.2\r\nHost : a\r\n\r\n",
                RequestError::Malformed("invalid header name"),
            ),
            (
                b"GET / HTTP/1.2\r\nHost: a\rX: y\r\n\r\n",
                RequestError::Malformed("invalid header value"),
            ),
            (
                b"GET /caf\xc3\xa9 HTTP/1.2\r\nHost: a\r\n\r\n",
                RequestError::InvalidTarget("raw byte above 0x7F"),
            ),
            (b"GET / HTTP/1.2\rHost: a\r\n\r\n", RequestError::Malformed("bare CR")),
            (b"GET / HTTP/1.2\nHost: a\n\n", RequestError::Malformed("bare LF")),
            (b"GET / HTTP/1.20\r\nHost: a\r\n\r\n", RequestError::Malformed("bad HTTP version")),
        ] {
            assert_eq!(error(req), want, "{:?}", String::from_utf8_lossy(req));
        }
        let mut many = String::from("GET / HTTP/1.2\r\nHost: a\r\n");
        many.push_str(&"X: y\r\n".repeat(100));
        assert_eq!(error(many.as_bytes()), RequestError::TooManyHeaders);
        let mut big = String::from("GET / HTTP/1.2\r\nHost: a\r\n");
        while big.len() <= Limits::default().max_head {
            big.push_str(&format!("X-Filler: {}\r\n", "f".repeat(300)));
        }
        assert_eq!(error(big.as_bytes()), RequestError::HeadTooLarge);
        big.push_str("\r\n");
        assert_eq!(error(big.as_bytes()), RequestError::HeadTooLarge);
        let long = format!("GET /{} HTTP/1.2\r\nHost: a\r\n\r\n", "a".repeat(9000));
        assert_eq!(error(long.as_bytes()), RequestError::RequestLineTooLong);
    }

    #[test]
    fn expect_100_continue() {
        let expects = |req: &[u8]| complete(req).expect_continue;
        assert!(expects(
            b"POST / HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n"
        ));
        assert!(expects(
            b"PUT / HTTP/1.1\r\nHost: a\r\nexpect: foo, 100-Continue\r\nTransfer-Encoding: chunked\r\n\r\n"
        ));
        assert!(expects(
            b"GET / HTTP/1.2\r\nHost: a\r\nExpect: 100-continue\r\nContent-Length: 1\r\n\r\n"
        ));
        // No content to wait for, a 1.0 request (RFC 9110 10.1.1: ignore it), other values.
        assert!(!expects(
            b"POST / HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\n\r\n"
        ));
        assert!(!expects(
            b"POST / HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\nContent-Length: 0\r\n\r\n"
        ));
        assert!(!expects(
            b"POST / HTTP/1.0\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n"
        ));
        assert!(!expects(
            b"POST / HTTP/1.1\r\nHost: a\r\nExpect: 100-continued\r\nContent-Length: 5\r\n\r\n"
        ));
        assert!(!expects(
            b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\n"
        ));
        // A body over the limit is still refused from the head alone.
        assert_eq!(
            error(b"POST / HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\nContent-Length: 1048577\r\n\r\n"),
            RequestError::PayloadTooLarge
        );
    }

    /// `Field::classify` as it was, with `eq_ignore_ascii_case` and a dispatch on the length
    /// alone: the reference for the one that compares with `| 0x20`.
    fn classify_reference(name: &str) -> Option<Field> {
        let is = |s: &str| name.eq_ignore_ascii_case(s);
        match name.len() {
            4 if is("host") => Some(Field::Host),
            5 if is("range") => Some(Field::Range),
            6 if is("expect") => Some(Field::Expect),
            7 if is("referer") => Some(Field::Referer),
            8 if is("if-range") => Some(Field::IfRange),
            8 if is("if-match") => Some(Field::IfMatch),
            10 if is("connection") => Some(Field::Connection),
            10 if is("user-agent") => Some(Field::UserAgent),
            13 if is("if-none-match") => Some(Field::IfNoneMatch),
            14 if is("content-length") => Some(Field::ContentLength),
            15 if is("accept-encoding") => Some(Field::AcceptEncoding),
            17 if is("transfer-encoding") => Some(Field::TransferEncoding),
            17 if is("if-modified-since") => Some(Field::IfModifiedSince),
            19 if is("if-unmodified-since") => Some(Field::IfUnmodifiedSince),
            _ => None,
        }
    }

    /// Every name `classify` knows, with every byte that httparse lets into a field name put in
    /// each position in turn, and in random mixed case: the `| 0x20` comparison gives the
    /// reference's answer. The premise, that a name holds only token bytes, is checked against
    /// httparse itself over every byte value.
    #[test]
    fn field_classify_agrees_with_eq_ignore_ascii_case() {
        const NAMES: [&str; 14] = [
            "host",
            "range",
            "expect",
            "referer",
            "if-range",
            "if-match",
            "connection",
            "user-agent",
            "if-none-match",
            "content-length",
            "accept-encoding",
            "transfer-encoding",
            "if-modified-since",
            "if-unmodified-since",
        ];
        let in_name: Vec<u8> = (0..=255u8)
            .filter(|&b| {
                let fields = [&b"X"[..], &[b], b"Y: v\r\n\r\n"].concat();
                let mut slots = [httparse::EMPTY_HEADER; 2];
                matches!(
                    httparse::parse_headers(&fields, &mut slots),
                    Ok(httparse::Status::Complete((_, [h]))) if h.name.len() == 3
                )
            })
            .collect();
        let tchar = |b: u8| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b);
        assert!(in_name.iter().all(|&b| tchar(b)), "{in_name:?}");
        assert_eq!(in_name.len(), 77, "httparse admits every token byte");

        let mut names: Vec<Vec<u8>> = Vec::new();
        for name in NAMES {
            for at in 0..name.len() {
                for &b in &in_name {
                    let mut n = name.as_bytes().to_vec();
                    n[at] = b;
                    names.push(n);
                }
            }
        }
        let mut next = crate::test_rng::xorshift(0x94D0_49BB_1331_11EB);
        for _ in 0..20_000 {
            let name = NAMES[(next() % NAMES.len() as u64) as usize];
            let mut n: Vec<u8> = name
                .bytes()
                .map(|b| {
                    if next() % 2 == 0 {
                        b.to_ascii_uppercase()
                    } else {
                        b
                    }
                })
                .collect();
            if next() % 4 == 0 {
                let at = (next() % n.len() as u64) as usize;
                n[at] = in_name[(next() % in_name.len() as u64) as usize];
            }
            names.push(n);
        }
        let mut known = 0;
        for n in &names {
            let n = std::str::from_utf8(n).unwrap();
            let new = Field::classify(n);
            assert_eq!(new, classify_reference(n), "{n:?}");
            known += usize::from(new.is_some());
        }
        // Both answers occur often, so the comparison means something.
        assert!(
            known > 10_000 && names.len() - known > 10_000,
            "{known} of {}",
            names.len()
        );
    }

    #[test]
    fn size_limits() {
        let limits = Limits::default();
        // Request line exactly at the limit passes; one byte more is 414, even before CRLF.
        let target_len = limits.max_request_line - "GET  HTTP/1.1".len();
        let at = format!(
            "GET /{} HTTP/1.1\r\nHost: a\r\n\r\n",
            "a".repeat(target_len - 1)
        );
        assert!(matches!(parse(at.as_bytes()), Ok(Parse::Complete(_))));
        let over = format!(
            "GET /{} HTTP/1.1\r\nHost: a\r\n\r\n",
            "a".repeat(target_len)
        );
        assert_eq!(error(over.as_bytes()), RequestError::RequestLineTooLong);
        // The limits are checked before the line ends: too long and a bare LF is still 414.
        let both = format!("GET /{} HTTP/1.1\nHost: a\r\n\r\n", "a".repeat(target_len));
        assert_eq!(error(both.as_bytes()), RequestError::RequestLineTooLong);
        let both = format!("GET /{} HTTP/1.1\r\nHost: a\n\r\n", "a".repeat(target_len));
        assert_eq!(error(both.as_bytes()), RequestError::RequestLineTooLong);
        let endless = format!("GET /{}", "a".repeat(limits.max_request_line));
        assert_eq!(error(endless.as_bytes()), RequestError::RequestLineTooLong);
        // A head over 16 KiB: 431, complete or not.
        let mut big = String::from("GET / HTTP/1.1\r\nHost: a\r\n");
        while big.len() <= limits.max_head {
            big.push_str(&format!("X-Filler: {}\r\n", "f".repeat(300)));
        }
        assert_eq!(error(big.as_bytes()), RequestError::HeadTooLarge);
        big.push_str("\r\n");
        assert_eq!(error(big.as_bytes()), RequestError::HeadTooLarge);
        // An endless stream of empty lines is bounded by the head limit.
        assert_eq!(error(&[b'\n'; 20000]), RequestError::HeadTooLarge);
        // 100 fields pass, 101 are 431.
        let fields = |n: usize| {
            let mut s = String::from("GET / HTTP/1.1\r\n");
            for i in 0..n {
                s.push_str(if i == 0 { "Host: a\r\n" } else { "X: y\r\n" });
            }
            s + "\r\n"
        };
        assert!(matches!(
            parse(fields(100).as_bytes()),
            Ok(Parse::Complete(_))
        ));
        assert_eq!(error(fields(101).as_bytes()), RequestError::TooManyHeaders);
        assert_eq!(error(fields(101).as_bytes()).status().code(), 431);
        // Custom, tighter limits.
        let tight = Limits {
            max_request_line: 10,
            max_head: 40,
            max_headers: 1,
            max_body: 0,
        };
        assert_eq!(
            parse_request(b"GET /abcdefgh HTTP/1.1\r\n", &tight),
            Err(RequestError::RequestLineTooLong)
        );
        assert_eq!(
            parse_request(b"GET / HTTP/1.1\r\nHost: a\r\nX: y\r\n\r\n", &tight),
            Err(RequestError::TooManyHeaders)
        );
        assert_eq!(
            parse_request(
                b"GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\n\r\n",
                &Limits {
                    max_headers: 5,
                    max_head: 100,
                    ..tight
                }
            ),
            Err(RequestError::RequestLineTooLong)
        );
        assert_eq!(
            parse_request(
                b"GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\n\r\n",
                &Limits {
                    max_request_line: 100,
                    max_headers: 5,
                    max_head: 100,
                    max_body: 0,
                }
            ),
            Err(RequestError::PayloadTooLarge)
        );
    }

    #[test]
    fn non_utf8_optional_values_are_ignored() {
        let h = complete(
            b"GET / HTTP/1.1\r\nHost: a\r\nUser-Agent: caf\xe9\r\nRange: bytes=0-1\r\n\r\n",
        );
        assert_eq!(h.user_agent, None);
        assert_eq!(h.range, Some("bytes=0-1"));
        // The first of duplicate optional fields wins.
        let h =
            complete(b"GET / HTTP/1.1\r\nHost: a\r\nRange: bytes=0-1\r\nRange: bytes=5-\r\n\r\n");
        assert_eq!(h.range, Some("bytes=0-1"));
    }

    /// The byte scan that `check_complete` replaced: walks every line end of the head. Kept as
    /// the reference that the offsets-only check must agree with.
    fn check_complete_scan(head: &[u8], limits: &Limits) -> Result<(), RequestError> {
        let start = head
            .iter()
            .position(|&b| b != b'\r' && b != b'\n')
            .unwrap_or(head.len());
        let mut line_ends = memchr::memchr_iter(b'\n', &head[start..]).map(|i| start + i);
        let first = line_ends.next();
        let line = &head[start..first.unwrap_or(head.len())];
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if line.len() > limits.max_request_line {
            return Err(RequestError::RequestLineTooLong);
        }
        if head.len() > limits.max_head {
            return Err(RequestError::HeadTooLarge);
        }
        match first
            .into_iter()
            .chain(line_ends)
            .find(|&i| head[i - 1] != b'\r')
        {
            Some(_) => Err(RequestError::Malformed("bare LF")),
            None => Ok(()),
        }
    }

    /// `check_complete` reads line ends from httparse's offsets instead of scanning; over a
    /// generated set of heads (every CRLF of several requests turned into a bare LF, one at a
    /// time and all at once, random mutations, tight limits) it gives the scan's answer.
    #[test]
    fn check_complete_agrees_with_a_scan_of_every_line_end() {
        let seeds: [&[u8]; 6] = [
            BROWSER,
            b"GET / HTTP/1.1\r\nHost: a\r\n\r\n",
            b"\r\n\n\r\nGET /x?y HTTP/1.0\r\n\r\n",
            b"POST /x HTTP/1.1\r\nHost: a\r\nX:\r\nY: \t \r\nContent-Length: 2\r\n\r\nab",
            b"GET http://h:1/p HTTP/1.1\r\nHost: a  \r\nA: b\r\n\r\n",
            b"OPTIONS * HTTP/1.1\r\nHost: a\r\n\r\n",
        ];
        let tight = Limits {
            max_request_line: 20,
            max_head: 60,
            ..Limits::default()
        };
        let mut heads: Vec<Vec<u8>> = Vec::new();
        for seed in seeds {
            heads.push(seed.to_vec());
            let crs: Vec<usize> = (0..seed.len().saturating_sub(1))
                .filter(|&i| seed[i] == b'\r' && seed[i + 1] == b'\n')
                .collect();
            for &i in &crs {
                let mut one = seed.to_vec();
                one.remove(i);
                heads.push(one);
            }
            heads.push(seed.iter().copied().filter(|&b| b != b'\r').collect());
        }
        let interesting = b"\r\n :\t/aH";
        let mut next = crate::test_rng::xorshift(0x0123_4567_89AB_CDEF);
        for round in 0..20_000 {
            let mut buf = seeds[round % seeds.len()].to_vec();
            crate::test_rng::mutate(&mut buf, &mut next, interesting, 3);
            heads.push(buf);
        }
        let mut compared = [0u32; 2];
        for buf in &heads {
            let mut slots = [httparse::EMPTY_HEADER; 64];
            let mut req = httparse::Request::new(&mut slots);
            let Ok(httparse::Status::Complete(len)) = req.parse(buf) else {
                continue;
            };
            let (Some(method), Some(target)) = (req.method, req.path) else {
                panic!("complete without a request line");
            };
            for limits in [Limits::default(), tight] {
                let new = check_complete(&buf[..len], method, target, req.headers, &limits);
                let old = check_complete_scan(&buf[..len], &limits);
                assert_eq!(new, old, "{:?}", String::from_utf8_lossy(buf));
                compared[usize::from(new.is_ok())] += 1;
            }
        }
        // Both answers occur often, so the comparison means something.
        assert!(compared[0] > 1000 && compared[1] > 1000, "{compared:?}");
    }

    #[test]
    fn mutated_requests_never_panic_and_stay_in_bounds() {
        // A cheap deterministic fuzzer: flip, insert and delete bytes of real requests, with a
        // bias towards the bytes that matter to HTTP framing.
        let seeds: [&[u8]; 4] = [
            BROWSER,
            b"POST /x HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
            b"GET http://h:1/p?q HTTP/1.0\r\nContent-Length: 3, 3\r\nConnection: keep-alive\r\n\r\nabc",
            b"PUT /u HTTP/1.2\r\nHost: [::1]:8\r\nExpect: 100-continue\r\nContent-Length: 1\r\n\r\nx",
        ];
        let interesting = b"\r\n :,;\0\t\x7f\xff/%-0123456789Hh";
        let mut next = crate::test_rng::xorshift(0xDEAD_BEEF_CAFE_F00D);
        let mut outcomes = [0u32; 3];
        for round in 0..30_000 {
            let mut buf = seeds[round % seeds.len()].to_vec();
            crate::test_rng::mutate(&mut buf, &mut next, interesting, 4);
            match parse(&buf) {
                Ok(Parse::Complete(h)) => {
                    outcomes[0] += 1;
                    assert!(h.head_len <= buf.len());
                    assert!(
                        h.content_length
                            .is_none_or(|n| n <= Limits::default().max_body)
                    );
                    assert!(!(h.chunked && h.content_length.is_some()));
                    assert!(h.version == Version::Http10 || h.host.is_some());
                    assert!(!h.expect_continue || h.version == Version::Http11);
                    assert!(h.target.is_ascii());
                    assert!(h.host.is_none_or(<[u8]>::is_ascii));
                }
                Ok(Parse::Incomplete) => outcomes[1] += 1,
                Err(e) => {
                    outcomes[2] += 1;
                    assert!(e.status().class() >= 4);
                }
            }
        }
        assert!(
            outcomes[0] > 1000 && outcomes[1] > 0 && outcomes[2] > 1000,
            "{outcomes:?}"
        );
    }
}
