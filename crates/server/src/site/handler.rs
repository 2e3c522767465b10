//! From a parsed request head to a response: the static-file rules.
//!
//! Every engine calls [`respond`] through [`crate::conn::Conn`]; nothing here
//! knows about sockets. The response head (and a small body) is appended to the
//! connection's output buffer; a large body is returned as a [`Body`] for the
//! engine to send with `sendfile(2)`.
//!
//! Order of decisions, following RFC 9110:
//! 1. method: GET and HEAD are served; other registered methods get 405 with
//!    `Allow`, unknown ones 501;
//! 2. credentials: with `--auth`, a request without a valid `Authorization:
//!    Basic` gets 401 and the challenge ([`crate::content::auth`]), `/-/status` too;
//! 3. path: percent-decoded and normalised by `servelab_http::path`, 400 when it
//!    is unsafe; a dotfile is 404 unless `--dotfiles serve` (`/.well-known/`
//!    excepted, see `servelab_http::dotfile`); opened beneath the root (see
//!    [`crate::content::files`]);
//!    with `--spa`, a missing route gets the root's `index.html` instead of
//!    404 ([`crate::site::spa`]);
//! 4. directories: with a trailing slash their `index.html` (or, with
//!    `--autoindex` and no `index.html`, a listing: [`crate::site::autoindex`]; without
//!    it a 404 whose page names the flag), without it a 301;
//! 5. representation (12.5.3): `Accept-Encoding` against the precompressed
//!    siblings the file cache found (`X.br`, `X.zst`, `X.gz`) and, with
//!    `--compress`, the codings the server can make itself for a text file
//!    without `Range` ([`crate::content::compress`]; a sibling wins on equal weights);
//!    406 only when the client excludes the plain file and accepts none of
//!    them. Everything below applies to the representation chosen: its ETag,
//!    its time, its length;
//! 6. preconditions (13.2.2): `If-Match`, else `If-Unmodified-Since`, give 412;
//!    then `If-None-Match`, else `If-Modified-Since`, give 304;
//! 7. ranges (GET only, 14.2): `If-Range`, then one range (206), several
//!    (multipart 206; on an encoded file the whole file instead, since a
//!    `Content-Encoding` would wrongly cover the multipart body), or
//!    unsatisfiable (416).
//!
//! Successful responses (2xx, 3xx) carry the `--header` fields; a file with
//! precompressed siblings, or one `--compress` would compress, says
//! `Vary: Accept-Encoding` whichever representation is sent.

use std::sync::Arc;
use std::time::SystemTime;

use servelab_http::conditional::ETag;
use servelab_http::encoding::{Available, Coding, Negotiated, negotiate_compress};
use servelab_http::precondition::{Outcome, PRECONDITION_FAILED, Preconditions};
use servelab_http::{
    ContentRange, Method, Multipart, PathKind, RangeSet, RequestHead, ResponseHead, Status, dotfile,
};

use crate::config::Dotfiles;
use crate::content::cache::{CachedFile, Entry, FileCache};
use crate::content::compress::{Encoded, Stored};
use crate::content::files::FileError;
use crate::runtime::clock::Clock;
use crate::runtime::shared::{Local, Shared};
use crate::site::response::{Body, Out, Persist, Response};

/// 406 Not Acceptable (RFC 9110 15.5.7).
const NOT_ACCEPTABLE: Status = Status::NOT_ACCEPTABLE;

/// What `--auth` reads of a request: its `Authorization` field, which the
/// typed head does not keep.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Authorization<'a> {
    /// In an HTTP/1.1 head's bytes, looked for only when `--auth` asks.
    Head(&'a [u8]),
    /// Its one value (HTTP/2); `None` for none, or more than one.
    Value(Option<&'a [u8]>),
}

/// Answers one well-formed request, HTTP/1.1's or HTTP/2's, into `out` (see
/// [`Out`]); `authorization` is where `--auth` finds the credentials.
///
/// `inline(always)`: it has two callers, HTTP/1.1's `Conn::answer` and
/// HTTP/2's `conn/h2.rs`, and with two LLVM stopped inlining it (and
/// `serve_path`) into the first. With both `inline(always)` and two smaller
/// changes in `conn.rs`, a keep-alive request went from 3,009 back to 2,965
/// instructions under callgrind (`bench/callgrind.sh --engine reactor`,
/// 2026-12-03; 2,896 before HTTP/2).
#[inline(always)]
pub(crate) fn respond(
    req: &RequestHead<'_>,
    authorization: Authorization<'_>,
    site: &Shared,
    w: &mut Local,
    persist: Persist,
    out: &mut impl Out,
) -> Response {
    let head_only = match req.method {
        Method::Get => false,
        Method::Head => true,
        Method::Other => {
            return if servelab_http::is_registered_method(req.method_str) {
                error(Status::METHOD_NOT_ALLOWED, w, persist, false, out)
            } else {
                error(Status::NOT_IMPLEMENTED, w, persist, false, out)
            };
        }
    };
    // --auth: before any path is looked at, the counters endpoints included.
    if let Some(auth) = &site.auth
        && !match authorization {
            Authorization::Head(head) => auth.allows(head),
            Authorization::Value(value) => auth.allows_value(value),
        }
    {
        return error(Status::UNAUTHORIZED, w, persist, head_only, out);
    }
    // --status: the counters endpoints (owned by status.rs). The flag is checked
    // here too, so that a server without it makes no call (20 instructions of a
    // keep-alive request under callgrind, 2026-11-26).
    if site.config.status
        && let Some(resp) = crate::site::status::respond(req, head_only, site, w, persist, out)
    {
        return resp;
    }
    // From here on, the worker's parts are borrowed one by one: the path is
    // decoded into its scratch string and read beside the file cache. Taking the
    // string out of the worker and putting it back cost 20 instructions of a
    // keep-alive request under callgrind (2026-11-26).
    let Local {
        path, files, clock, ..
    } = w;
    path.clear();
    let date = clock.http();
    match servelab_http::resolve_target(req.target, path) {
        Err(_) => error_at(Status::BAD_REQUEST, date, persist, head_only, out),
        Ok(_) if site.config.dotfiles == Dotfiles::Hide && dotfile::is_hidden(path) => {
            error_at(Status::NOT_FOUND, date, persist, head_only, out)
        }
        Ok(kind) => {
            let ask = Ask { req, head_only };
            serve_path(&ask, path, kind, site, files, clock, persist, out)
        }
    }
}

/// What the client asked for a file.
struct Ask<'r, 'a> {
    req: &'r RequestHead<'a>,
    head_only: bool,
}

// One argument more than clippy's default: the worker's parts come one by one
// (see `respond`). `inline(always)` for the reason `respond` gives.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn serve_path(
    ask: &Ask<'_, '_>,
    path: &str,
    kind: PathKind,
    site: &Shared,
    files: &mut FileCache,
    clock: &Clock,
    persist: Persist,
    out: &mut impl Out,
) -> Response {
    let head_only = ask.head_only;
    let date = clock.http();
    // One lookup: a file is served from the entry it finds.
    match files.open(&site.root, path, clock.now()) {
        Ok(Entry::File(f)) if kind == PathKind::File => {
            send_file(ask, f, site, clock, persist, out)
        }
        // `/file.txt/` names a directory that does not exist.
        Ok(Entry::File(_)) => error_at(Status::NOT_FOUND, date, persist, head_only, out),
        Ok(Entry::Dir { .. }) if kind == PathKind::Dir => {
            serve_dir(ask, path, site, files, clock, persist, out)
        }
        Ok(Entry::Dir { .. }) => {
            redirect_to_dir(ask.req.target, site, date, persist, head_only, out)
        }
        Err(FileError::NotFound) if site.config.spa && crate::site::spa::is_route(path) => {
            match files.open(&site.root, "index.html", clock.now()) {
                Ok(Entry::File(f)) => send_file(ask, f, site, clock, persist, out),
                Ok(Entry::Dir { .. }) => error_at(Status::NOT_FOUND, date, persist, head_only, out),
                Err(e) => file_error(e, "index.html", date, persist, head_only, out),
            }
        }
        Err(e) => file_error(e, path, date, persist, head_only, out),
    }
}

/// A directory asked for with its trailing slash: its `index.html`, else (with
/// `--autoindex`) a listing.
fn serve_dir(
    ask: &Ask<'_, '_>,
    path: &str,
    site: &Shared,
    files: &mut FileCache,
    clock: &Clock,
    persist: Persist,
    out: &mut impl Out,
) -> Response {
    let head_only = ask.head_only;
    let mut index = String::with_capacity(path.len() + 11);
    index.push_str(path);
    if !index.is_empty() {
        index.push('/');
    }
    index.push_str("index.html");
    let date = clock.http();
    match files.open(&site.root, &index, clock.now()) {
        Ok(Entry::File(f)) => send_file(ask, f, site, clock, persist, out),
        Ok(Entry::Dir { .. }) => error_at(Status::NOT_FOUND, date, persist, head_only, out),
        Err(FileError::NotFound) if site.config.autoindex => {
            match crate::site::autoindex::respond(path, site, date, persist, head_only, out) {
                Ok(resp) => resp,
                Err(e) => file_error(e, path, date, persist, head_only, out),
            }
        }
        // The directory exists (its entry was just found): say what would list it.
        Err(FileError::NotFound) => {
            crate::site::autoindex::not_listed(date, persist, head_only, out)
        }
        Err(e) => file_error(e, &index, date, persist, head_only, out),
    }
}

fn send_file(
    ask: &Ask<'_, '_>,
    file: &CachedFile,
    site: &Shared,
    clock: &Clock,
    persist: Persist,
    out: &mut impl Out,
) -> Response {
    let (req, head_only) = (ask.req, ask.head_only);
    let date = clock.http();
    // No extra lookup for the representation: the siblings are in the entry.
    // Without `--compress`, one test of a flag more than before it existed.
    let (negotiated, could_compress) = if site.config.compress {
        negotiate_with_compress(req, file)
    } else {
        let n = servelab_http::negotiate(req.extra.accept_encoding, file.available);
        (n, false)
    };
    let coding = match negotiated {
        Negotiated::Send(c) => c,
        Negotiated::Compress(c) => match send_compressed(ask, file, c, site, clock, persist, out) {
            Some(resp) => return resp,
            // The file changed while it was read: its plain bytes this time.
            None => Coding::Identity,
        },
        Negotiated::NotAcceptable => {
            return error_at(NOT_ACCEPTABLE, date, persist, head_only, out);
        }
    };
    let f = file.representation(coding).unwrap_or(file);
    let vary = !file.available.is_empty() || could_compress;
    let encoding = coding.token();
    let etag = &f.etag;
    let outcome = if conditional_fields(req).is_empty() {
        Outcome::Serve { ranges: true }
    } else {
        preconditions(req, &f.etag, f.mtime)
    };
    let ranges_apply = match outcome {
        Outcome::Serve { ranges } => ranges,
        Outcome::PreconditionFailed => {
            return error_at(PRECONDITION_FAILED, date, persist, head_only, out);
        }
        Outcome::NotModified => {
            return not_modified(etag, &f.last_modified, site, date, persist, vary, out);
        }
    };
    let ranges = match (req.range, head_only) {
        (Some(range), false) if ranges_apply => match servelab_http::parse_range(range, f.len) {
            // See the module docs: no multipart body for an encoded file.
            RangeSet::Ranges(r) if r.as_slice().len() > 1 && coding != Coding::Identity => {
                RangeSet::Whole
            }
            other => other,
        },
        _ => RangeSet::Whole,
    };
    // Every other answer starts from this head.
    let head = || {
        let mut head = ResponseHead::new(Status::OK, date);
        head.etag = Some(etag.as_str());
        head.last_modified = Some(&f.last_modified);
        persist.apply(&mut head);
        head.content_type = Some(file.content_type);
        head.accept_ranges = true;
        head
    };
    match ranges {
        RangeSet::Whole => {
            // The common case: the file's fields were encoded when it was cached,
            // the status line and `Date` when the second began.
            out.file_ok(&f.fields, clock.ok_start(), persist);
            add_fields(out, site, encoding, vary);
            body_of(f, 0, f.len, head_only, Status::OK, out)
        }
        RangeSet::Unsatisfiable => {
            let mut head = head();
            head.status = Status::RANGE_NOT_SATISFIABLE;
            head.content_range = Some(ContentRange::Unsatisfied { len: f.len });
            head.content_type = None;
            head.content_length = Some(0);
            out.head(&head);
            // A client error: no operator fields, but the choice still varied.
            add_vary(out, vary);
            Response {
                status: Status::RANGE_NOT_SATISFIABLE,
                body_len: 0,
                body: Body::Empty,
            }
        }
        RangeSet::Ranges(ranges) if ranges.as_slice().len() == 1 => {
            let r = ranges.as_slice()[0];
            let mut head = head();
            head.status = Status::PARTIAL_CONTENT;
            head.content_range = Some(ContentRange::Range {
                start: r.start,
                end: r.end,
                len: f.len,
            });
            head.content_length = Some(r.len());
            out.head(&head);
            add_fields(out, site, encoding, vary);
            body_of(f, r.start, r.len(), false, Status::PARTIAL_CONTENT, out)
        }
        RangeSet::Ranges(ranges) => {
            let boundary = etag.as_str().trim_matches('"');
            let plan = Multipart::new(&ranges, f.len, file.content_type, boundary);
            let mut ctype = String::with_capacity(48);
            ctype.push_str("multipart/byteranges; boundary=");
            ctype.push_str(boundary);
            let mut head = head();
            head.status = Status::PARTIAL_CONTENT;
            head.content_type = Some(&ctype);
            head.content_length = Some(plan.content_length());
            out.head(&head);
            add_fields(out, site, None, vary);
            Response {
                status: Status::PARTIAL_CONTENT,
                body_len: plan.content_length(),
                body: Body::Parts {
                    file: Arc::clone(&f.file),
                    parts: Box::new(plan.parts().collect()),
                    current: None,
                },
            }
        }
    }
}

/// With `--compress`: the representation for `req`, and whether `file` could
/// be sent compressed at all (then every answer for it varies). A `Range`
/// request may not be compressed (see `compress.rs`).
#[inline(never)]
fn negotiate_with_compress(req: &RequestHead<'_>, file: &CachedFile) -> (Negotiated, bool) {
    let could = crate::content::compress::eligible(file);
    let compress = if could && req.range.is_none() {
        Available::ALL
    } else {
        Available::NONE
    };
    let n = negotiate_compress(req.extra.accept_encoding, file.available, compress);
    (n, could)
}

/// `file` compressed with `coding` (`--compress`, see `compress.rs`), found in
/// the cache or made now; `None` when it cannot be made. Out of line, like
/// everything on this path, so that `send_file` and `respond` stay small
/// enough to be inlined into the connection's loop for plain files (the
/// compressed path inlined cost 32 instructions of a keep-alive request
/// without `--compress` under callgrind, 2,920 against 2,888, 2026-11-28).
#[inline(never)]
fn send_compressed(
    ask: &Ask<'_, '_>,
    file: &CachedFile,
    coding: Coding,
    site: &Shared,
    clock: &Clock,
    persist: Persist,
    out: &mut impl Out,
) -> Option<Response> {
    let encoded = site.compressed.get(file, coding)?;
    Some(send_encoded(ask, file, &encoded, site, clock, persist, out))
}

/// A body compressed on the fly: the whole of it, or a 304 or 412 by its own
/// ETag; always with `Vary: Accept-Encoding`.
fn send_encoded(
    ask: &Ask<'_, '_>,
    file: &CachedFile,
    encoded: &Encoded,
    site: &Shared,
    clock: &Clock,
    persist: Persist,
    out: &mut impl Out,
) -> Response {
    let (req, head_only) = (ask.req, ask.head_only);
    let date = clock.http();
    if !conditional_fields(req).is_empty() {
        match preconditions(req, &encoded.etag, file.mtime) {
            Outcome::Serve { .. } => {}
            Outcome::PreconditionFailed => {
                return error_at(PRECONDITION_FAILED, date, persist, head_only, out);
            }
            Outcome::NotModified => {
                let lm = &file.last_modified;
                return not_modified(&encoded.etag, lm, site, date, persist, true, out);
            }
        }
    }
    out.file_ok(&encoded.fields, clock.ok_start(), persist);
    add_fields(out, site, encoded.coding.token(), true);
    let len = encoded.len;
    let body = match &encoded.body {
        _ if head_only || len == 0 => Body::Empty,
        Stored::Inline(bytes) => {
            out.body(bytes);
            Body::Empty
        }
        Stored::File(f) => Body::File {
            file: Arc::clone(f),
            offset: 0,
            remaining: len,
        },
    };
    Response {
        status: Status::OK,
        body_len: if head_only { 0 } else { len },
        body,
    }
}

/// RFC 9110 15.4.5: a 304 carries the validators (and `Vary`, and the
/// operator's fields) but no body and no Content-Length.
fn not_modified(
    etag: &ETag,
    last_modified: &[u8; 29],
    site: &Shared,
    date: &[u8; 29],
    persist: Persist,
    vary: bool,
    out: &mut impl Out,
) -> Response {
    let mut head = ResponseHead::new(Status::NOT_MODIFIED, date);
    head.etag = Some(etag.as_str());
    head.last_modified = Some(last_modified);
    persist.apply(&mut head);
    out.head(&head);
    add_fields(out, site, None, vary);
    Response {
        status: Status::NOT_MODIFIED,
        body_len: 0,
        body: Body::Empty,
    }
}

/// The request's conditional fields, as the precondition rules take them.
/// Inlined with `Preconditions::is_empty`, so that asking a request without
/// them (most requests) is five comparisons.
#[inline]
fn conditional_fields<'a>(req: &RequestHead<'a>) -> Preconditions<'a> {
    Preconditions {
        if_match: req.extra.if_match,
        if_unmodified_since: req.extra.if_unmodified_since,
        if_none_match: req.if_none_match,
        if_modified_since: req.if_modified_since,
        if_range: req.if_range,
    }
}

/// What the conditional fields of a request that has some decide, against the
/// validators of the representation chosen for it.
#[inline(never)]
fn preconditions(req: &RequestHead<'_>, etag: &ETag, mtime: SystemTime) -> Outcome {
    let pre = conditional_fields(req);
    debug_assert!(!pre.is_empty());
    servelab_http::precondition::evaluate(&pre, true, etag, mtime, SystemTime::now())
}

/// The body of a whole file or one range: copied behind the head when it is
/// small and cached (one write for the whole response), else by sendfile.
fn body_of(
    f: &CachedFile,
    offset: u64,
    len: u64,
    head_only: bool,
    status: Status,
    out: &mut impl Out,
) -> Response {
    if head_only || len == 0 {
        return Response {
            status,
            body_len: if head_only { 0 } else { len },
            body: Body::Empty,
        };
    }
    if let Some(bytes) = &f.bytes {
        // The range was checked against this same entry's length.
        out.body(&bytes[offset as usize..(offset + len) as usize]);
        return Response {
            status,
            body_len: len,
            body: Body::Empty,
        };
    }
    Response {
        status,
        body_len: len,
        body: Body::File {
            file: Arc::clone(&f.file),
            offset,
            remaining: len,
        },
    }
}

fn file_error(
    e: FileError,
    path: &str,
    date: &[u8; 29],
    persist: Persist,
    head_only: bool,
    out: &mut impl Out,
) -> Response {
    let status = match e {
        FileError::NotFound => Status::NOT_FOUND,
        FileError::Forbidden => Status::FORBIDDEN,
        FileError::Io(err) => {
            // Not the client's fault: say what the system said, once per request.
            eprintln!("servelab: cannot open /{path}: {err}");
            Status::INTERNAL_SERVER_ERROR
        }
    };
    error_at(status, date, persist, head_only, out)
}

fn redirect_to_dir(
    target: &str,
    site: &Shared,
    date: &[u8; 29],
    persist: Persist,
    head_only: bool,
    out: &mut impl Out,
) -> Response {
    let mut location = String::with_capacity(target.len() + 1);
    servelab_http::append_location(target, &mut location);
    let body = Status::MOVED_PERMANENTLY.error_body();
    let mut head = ResponseHead::new(Status::MOVED_PERMANENTLY, date);
    head.location = Some(&location);
    head.content_type = Some("text/html; charset=utf-8");
    head.content_length = Some(body.len() as u64);
    persist.apply(&mut head);
    out.head(&head);
    add_fields(out, site, None, false);
    if !head_only {
        out.body(body.as_bytes());
    }
    Response {
        status: Status::MOVED_PERMANENTLY,
        body_len: if head_only { 0 } else { body.len() as u64 },
        body: Body::Empty,
    }
}

/// Adds to the head just written what `ResponseHead` has no field for:
/// `Content-Encoding` of a precompressed file, `Vary: Accept-Encoding` when the
/// file has siblings, and the `--header` fields (this is only called for
/// successful responses). Nothing to add, the common case, costs one
/// comparison, inlined in the caller (the call itself was 24 instructions of a
/// keep-alive request under callgrind, 2026-11-26).
#[inline]
pub(crate) fn add_fields(out: &mut impl Out, site: &Shared, encoding: Option<&str>, vary: bool) {
    if encoding.is_none() && !vary && site.extra_headers.is_empty() {
        return;
    }
    out.add_fields(encoding, vary, Some(site));
}

/// `Vary` alone, for an error that still depended on `Accept-Encoding` (416).
fn add_vary(out: &mut impl Out, vary: bool) {
    if vary {
        out.add_fields(None, true, None);
    }
}

/// An error page: a small HTML body, `Allow` on 405, `Retry-After` on 503,
/// `WWW-Authenticate` on 401.
pub(crate) fn error(
    status: Status,
    w: &mut Local,
    persist: Persist,
    head_only: bool,
    out: &mut impl Out,
) -> Response {
    // The clock was ticked when the request started (`Conn::answer`,
    // `Conn::fail`): no second read of it.
    error_at(status, w.clock.http(), persist, head_only, out)
}

/// [`error`] for callers without a worker (the acceptor answering 503).
pub(crate) fn error_at(
    status: Status,
    date: &[u8; 29],
    persist: Persist,
    head_only: bool,
    out: &mut impl Out,
) -> Response {
    let body = status.error_body();
    let mut head = ResponseHead::new(status, date);
    head.content_type = Some("text/html; charset=utf-8");
    head.content_length = Some(body.len() as u64);
    persist.apply(&mut head);
    if status == Status::METHOD_NOT_ALLOWED {
        head.allow = Some("GET, HEAD");
    }
    if status == Status::SERVICE_UNAVAILABLE {
        head.retry_after = Some(1);
    }
    out.head(&head);
    if status == Status::UNAUTHORIZED {
        // RFC 9110 15.5.2: a 401 carries the challenge (`--auth`).
        out.add_challenge();
    }
    if !head_only {
        out.body(body.as_bytes());
    }
    Response {
        status,
        body_len: if head_only { 0 } else { body.len() as u64 },
        body: Body::Empty,
    }
}

#[cfg(test)]
mod tests {
    use servelab_http::encoding::Coding;
    use servelab_http::{Parse, parse_request};

    use super::*;
    use crate::config::Config;

    /// A whole file's `200` as the general encoder writes it: the reference
    /// the head encoded from the cache entry (`FileFields`) must equal.
    fn general_head(
        file: &CachedFile,
        coding: Coding,
        date: &[u8; 29],
        persist: Persist,
        site: &Shared,
    ) -> Vec<u8> {
        let f = file.representation(coding).expect("the sibling exists");
        let mut head = ResponseHead::new(Status::OK, date);
        head.etag = Some(f.etag.as_str());
        head.last_modified = Some(&f.last_modified);
        persist.apply(&mut head);
        head.content_type = Some(file.content_type);
        head.accept_ranges = true;
        head.content_length = Some(f.len);
        let mut out = Vec::new();
        head.encode(&mut out);
        add_fields(&mut out, site, coding.token(), !file.available.is_empty());
        out
    }

    /// A request's conditional fields are empty exactly when it sends none of
    /// the five: every subset of them, each written in two cases.
    #[test]
    fn conditional_fields_are_empty_only_without_any() {
        let fields = [
            "If-Match: \"a\"",
            "If-Unmodified-Since: Sun, 06 Nov 1994 08:49:37 GMT",
            "If-None-Match: *",
            "If-Modified-Since: Sun, 06 Nov 1994 08:49:37 GMT",
            "If-Range: \"a\"",
        ];
        let limits = Config::new(".").limits;
        let mut seen = [0; 2];
        for set in 0..1u32 << fields.len() {
            for upper in [false, true] {
                let mut text = String::from("GET /a HTTP/1.1\r\nHost: t\r\nRange: bytes=0-1\r\n");
                for (i, field) in fields.iter().enumerate() {
                    if set & 1 << i != 0 {
                        let field = if upper {
                            field.to_uppercase()
                        } else {
                            field.to_string()
                        };
                        text.push_str(&field);
                        text.push_str("\r\n");
                    }
                }
                text.push_str("\r\n");
                let Ok(Parse::Complete(req)) = parse_request(text.as_bytes(), &limits) else {
                    panic!("{text:?} parses");
                };
                assert_eq!(conditional_fields(&req).is_empty(), set == 0, "{text:?}");
                seen[usize::from(set == 0)] += 1;
            }
        }
        assert_eq!(seen, [62, 2]);
    }

    #[test]
    fn a_whole_file_head_is_what_the_general_encoder_writes() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path();
        std::fs::write(p.join("a.txt"), "hello").unwrap();
        std::fs::write(p.join("app.js"), "let x = 1;").unwrap();
        std::fs::write(p.join("app.js.gz"), "gzipped").unwrap();
        std::fs::write(p.join("big.bin"), vec![7u8; 20_000]).unwrap();
        let cases = [
            ("/a.txt", "", "a.txt", Coding::Identity),
            ("/app.js", "", "app.js", Coding::Identity),
            (
                "/app.js",
                "Accept-Encoding: gzip\r\n",
                "app.js",
                Coding::Gzip,
            ),
            ("/big.bin", "", "big.bin", Coding::Identity),
        ];
        let mut checked = 0;
        for headers in [
            &[][..],
            &["X-Frame-Options: DENY", "Cache-Control: no-cache"],
        ] {
            let mut config = Config::new(p);
            config.headers = headers.iter().map(|h| h.parse().unwrap()).collect();
            let site = Shared::new(config).unwrap();
            let mut w = site.local();
            w.clock.tick();
            for (target, accept, name, coding) in cases {
                for method in ["GET", "HEAD"] {
                    for version in ["1.1", "1.0"] {
                        for keep_alive in [true, false] {
                            let text = format!(
                                "{method} {target} HTTP/{version}\r\nHost: t\r\n{accept}\r\n"
                            );
                            let Ok(Parse::Complete(req)) =
                                parse_request(text.as_bytes(), &site.config.limits)
                            else {
                                panic!("{text:?} parses");
                            };
                            let persist = Persist {
                                keep_alive,
                                http10: version == "1.0",
                            };
                            let mut out = Vec::new();
                            let resp = respond(
                                &req,
                                Authorization::Head(text.as_bytes()),
                                &site,
                                &mut w,
                                persist,
                                &mut out,
                            );
                            assert_eq!(resp.status, Status::OK);
                            let date = *w.clock.http();
                            let Ok(Entry::File(file)) =
                                w.files.open(&site.root, name, w.clock.now())
                            else {
                                panic!("{name} is cached");
                            };
                            let want = general_head(file, coding, &date, persist, &site);
                            let got = &out[..want.len().min(out.len())];
                            assert_eq!(
                                String::from_utf8_lossy(got),
                                String::from_utf8_lossy(&want),
                                "{text:?}"
                            );
                            // Behind the head: the small body, or nothing (HEAD, or
                            // sent by sendfile).
                            let f = file.representation(coding).unwrap();
                            let body = match (&f.bytes, method) {
                                (Some(bytes), "GET") => &bytes[..],
                                _ => &[][..],
                            };
                            assert_eq!(&out[want.len()..], body, "{text:?}");
                            checked += 1;
                        }
                    }
                }
            }
        }
        assert_eq!(checked, 2 * 4 * 2 * 2 * 2);
    }

    /// A compressed body's head (encoded from `Encoded::fields`, then
    /// `Content-Encoding` and `Vary`) is what the general encoder writes for
    /// the same fields, without `Accept-Ranges`.
    #[test]
    fn a_compressed_head_is_what_the_general_encoder_writes() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("a.html"),
            "<p>compress me</p>\n".repeat(200),
        )
        .unwrap();
        for headers in [&[][..], &["Cache-Control: no-cache"]] {
            let mut config = Config::new(dir.path());
            config.compress = true;
            config.headers = headers.iter().map(|h| h.parse().unwrap()).collect();
            let site = Shared::new(config).unwrap();
            let mut w = site.local();
            w.clock.tick();
            for coding in Coding::ENCODED {
                for keep_alive in [true, false] {
                    let token = coding.token().unwrap();
                    let text = format!(
                        "GET /a.html HTTP/1.1\r\nHost: t\r\nAccept-Encoding: {token}\r\n\r\n"
                    );
                    let Ok(Parse::Complete(req)) =
                        parse_request(text.as_bytes(), &site.config.limits)
                    else {
                        panic!("{text:?} parses");
                    };
                    let persist = Persist {
                        keep_alive,
                        http10: false,
                    };
                    let mut out = Vec::new();
                    let resp = respond(
                        &req,
                        Authorization::Head(text.as_bytes()),
                        &site,
                        &mut w,
                        persist,
                        &mut out,
                    );
                    assert_eq!(resp.status, Status::OK);
                    let date = *w.clock.http();
                    let Ok(Entry::File(file)) = w.files.open(&site.root, "a.html", w.clock.now())
                    else {
                        panic!("a.html is cached");
                    };
                    let encoded = site.compressed.get(file, coding).unwrap();
                    let mut head = ResponseHead::new(Status::OK, &date);
                    head.etag = Some(encoded.etag.as_str());
                    head.last_modified = Some(&file.last_modified);
                    persist.apply(&mut head);
                    head.content_type = Some(file.content_type);
                    head.content_length = Some(encoded.len);
                    let mut want = Vec::new();
                    head.encode(&mut want);
                    add_fields(&mut want, &site, Some(token), true);
                    assert_eq!(
                        String::from_utf8_lossy(&out[..want.len()]),
                        String::from_utf8_lossy(&want),
                        "{coding:?}"
                    );
                    assert_eq!(resp.body_len, encoded.len);
                }
            }
        }
    }
}
