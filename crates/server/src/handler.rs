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
//! 2. path: percent-decoded and normalised by `servelab_http::path`, 400 when it
//!    is unsafe; opened beneath the root (see [`crate::files`]);
//! 3. directories: with a trailing slash their `index.html`, without it a 301;
//! 4. conditionals (13.2.2): `If-None-Match`, else `If-Modified-Since`, give 304;
//! 5. ranges (GET only, 14.2): `If-Range`, then one range (206), several
//!    (multipart 206), or unsatisfiable (416).

use std::sync::Arc;

use servelab_http::{
    ContentRange, Method, Multipart, PathKind, RangeSet, RequestHead, ResponseHead, Status,
    conditional, mime,
};

use crate::cache::{CachedFile, Entry};
use crate::files::FileError;
use crate::response::{Body, Persist, Response};
use crate::shared::{Local, Shared};

/// Answers one well-formed request.
pub(crate) fn respond(
    req: &RequestHead<'_>,
    site: &Shared,
    w: &mut Local,
    persist: Persist,
    out: &mut Vec<u8>,
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
    // --status: the counters endpoints (owned by status.rs; a no-op without the flag).
    if let Some(resp) = crate::status::respond(req, head_only, site, w, persist, out) {
        return resp;
    }
    let mut path = std::mem::take(&mut w.path);
    path.clear();
    let resp = match servelab_http::resolve_target(req.target, &mut path) {
        Err(_) => error(Status::BAD_REQUEST, w, persist, head_only, out),
        Ok(kind) => serve_path(req, &path, kind, site, w, persist, head_only, out),
    };
    w.path = path;
    resp
}

#[allow(clippy::too_many_arguments)] // one call site; a struct would only rename them
fn serve_path(
    req: &RequestHead<'_>,
    path: &str,
    kind: PathKind,
    site: &Shared,
    w: &mut Local,
    persist: Persist,
    head_only: bool,
    out: &mut Vec<u8>,
) -> Response {
    let is_dir = match w.files.open(&site.root, path) {
        Ok(Entry::Dir { .. }) => true,
        Ok(Entry::File(_)) => false,
        Err(e) => return file_error(e, path, w, persist, head_only, out),
    };
    match (is_dir, kind) {
        (false, PathKind::File) => {}
        // `/file.txt/` names a directory that does not exist.
        (false, PathKind::Dir) => return error(Status::NOT_FOUND, w, persist, head_only, out),
        (true, PathKind::Dir) => {
            let mut index = String::with_capacity(path.len() + 11);
            index.push_str(path);
            if !index.is_empty() {
                index.push('/');
            }
            index.push_str("index.html");
            return match w.files.open(&site.root, &index) {
                Ok(Entry::File(f)) => send_file(
                    req,
                    f,
                    "index.html",
                    w.clock.http(),
                    persist,
                    head_only,
                    out,
                ),
                Ok(Entry::Dir { .. }) => error(Status::NOT_FOUND, w, persist, head_only, out),
                Err(e) => file_error(e, &index, w, persist, head_only, out),
            };
        }
        (true, PathKind::File) => {
            return redirect_to_dir(req.target, w, persist, head_only, out);
        }
    }
    match w.files.open(&site.root, path) {
        Ok(Entry::File(f)) => send_file(req, f, path, w.clock.http(), persist, head_only, out),
        // Changed between the two lookups of this request: answer as if it had
        // been found so a moment ago, which is what the first lookup saw.
        _ => error(Status::NOT_FOUND, w, persist, head_only, out),
    }
}

fn send_file(
    req: &RequestHead<'_>,
    f: &CachedFile,
    name: &str,
    date: &[u8; 29],
    persist: Persist,
    head_only: bool,
    out: &mut Vec<u8>,
) -> Response {
    let etag = &f.etag;
    let not_modified = match (req.if_none_match, req.if_modified_since) {
        (Some(inm), _) => conditional::if_none_match(inm, etag),
        (None, Some(ims)) => conditional::not_modified_since(ims, f.mtime),
        (None, None) => false,
    };
    let mut head = ResponseHead::new(Status::OK, date);
    head.etag = Some(etag.as_str());
    head.last_modified = Some(&f.last_modified);
    persist.apply(&mut head);
    if not_modified {
        // RFC 9110 15.4.5: a 304 carries the validators but no body and no
        // Content-Length describing a body.
        head.status = Status::NOT_MODIFIED;
        head.encode(out);
        return Response {
            status: Status::NOT_MODIFIED,
            body_len: 0,
            body: Body::Empty,
        };
    }
    let content_type = mime::content_type(name);
    head.content_type = Some(content_type);
    head.accept_ranges = true;

    let ranges = match (req.range, head_only) {
        (Some(range), false) => {
            let applies = req
                .if_range
                .is_none_or(|ir| conditional::if_range_matches(ir, etag, f.mtime));
            if applies {
                servelab_http::parse_range(range, f.len)
            } else {
                RangeSet::Whole
            }
        }
        _ => RangeSet::Whole,
    };
    match ranges {
        RangeSet::Whole => {
            head.content_length = Some(f.len);
            head.encode(out);
            body_of(f, 0, f.len, head_only, Status::OK, out)
        }
        RangeSet::Unsatisfiable => {
            head.status = Status::RANGE_NOT_SATISFIABLE;
            head.content_range = Some(ContentRange::Unsatisfied { len: f.len });
            head.content_type = None;
            head.content_length = Some(0);
            head.encode(out);
            Response {
                status: Status::RANGE_NOT_SATISFIABLE,
                body_len: 0,
                body: Body::Empty,
            }
        }
        RangeSet::Ranges(ranges) if ranges.as_slice().len() == 1 => {
            let r = ranges.as_slice()[0];
            head.status = Status::PARTIAL_CONTENT;
            head.content_range = Some(ContentRange::Range {
                start: r.start,
                end: r.end,
                len: f.len,
            });
            head.content_length = Some(r.len());
            head.encode(out);
            body_of(f, r.start, r.len(), false, Status::PARTIAL_CONTENT, out)
        }
        RangeSet::Ranges(ranges) => {
            let boundary = etag.as_str().trim_matches('"');
            let plan = Multipart::new(&ranges, f.len, content_type, boundary);
            let mut ctype = String::with_capacity(48);
            ctype.push_str("multipart/byteranges; boundary=");
            ctype.push_str(boundary);
            head.status = Status::PARTIAL_CONTENT;
            head.content_type = Some(&ctype);
            head.content_length = Some(plan.content_length());
            head.encode(out);
            Response {
                status: Status::PARTIAL_CONTENT,
                body_len: plan.content_length(),
                body: Body::Parts {
                    file: Arc::clone(&f.file),
                    parts: plan.parts().collect(),
                    current: None,
                },
            }
        }
    }
}

/// The body of a whole file or one range: copied behind the head when it is
/// small and cached (one write for the whole response), else by sendfile.
fn body_of(
    f: &CachedFile,
    offset: u64,
    len: u64,
    head_only: bool,
    status: Status,
    out: &mut Vec<u8>,
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
        out.extend_from_slice(&bytes[offset as usize..(offset + len) as usize]);
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
    w: &mut Local,
    persist: Persist,
    head_only: bool,
    out: &mut Vec<u8>,
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
    error(status, w, persist, head_only, out)
}

fn redirect_to_dir(
    target: &str,
    w: &mut Local,
    persist: Persist,
    head_only: bool,
    out: &mut Vec<u8>,
) -> Response {
    let mut location = String::with_capacity(target.len() + 1);
    servelab_http::append_location(target, &mut location);
    let body = Status::MOVED_PERMANENTLY.error_body();
    let mut head = ResponseHead::new(Status::MOVED_PERMANENTLY, w.clock.http());
    head.location = Some(&location);
    head.content_type = Some("text/html; charset=utf-8");
    head.content_length = Some(body.len() as u64);
    persist.apply(&mut head);
    head.encode(out);
    if !head_only {
        out.extend_from_slice(body.as_bytes());
    }
    Response {
        status: Status::MOVED_PERMANENTLY,
        body_len: if head_only { 0 } else { body.len() as u64 },
        body: Body::Empty,
    }
}

/// An error page: a small HTML body, `Allow` on 405, `Retry-After` on 503.
pub(crate) fn error(
    status: Status,
    w: &mut Local,
    persist: Persist,
    head_only: bool,
    out: &mut Vec<u8>,
) -> Response {
    w.clock.tick();
    error_at(status, w.clock.http(), persist, head_only, out)
}

/// [`error`] for callers without a worker (the acceptor answering 503).
pub(crate) fn error_at(
    status: Status,
    date: &[u8; 29],
    persist: Persist,
    head_only: bool,
    out: &mut Vec<u8>,
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
    head.encode(out);
    if !head_only {
        out.extend_from_slice(body.as_bytes());
    }
    Response {
        status,
        body_len: if head_only { 0 } else { body.len() as u64 },
        body: Body::Empty,
    }
}
