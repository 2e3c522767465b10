//! What answering a request produces, apart from the bytes already in the
//! output buffer: the [`Response`] (its status and announced length, for the
//! log and the counters) and the [`Body`] still to send with `sendfile(2)`; and
//! [`Persist`], what a response head says about the connection.
//!
//! The producers of responses, [`crate::site::handler`] (the files),
//! [`crate::site::status`] (the counters endpoints) and [`crate::site::autoindex`] (the
//! directory listings), build these; [`crate::conn`] consumes them. A small
//! generated page is one call, [`small_ok`], so the generators need nothing
//! from the handler.
//!
//! They write the head and a small body through [`Out`], one handler for both
//! protocols: HTTP/1.1's output buffer (`Vec<u8>`) takes the head as bytes,
//! written as before; HTTP/2 (`conn/h2.rs`) keeps its status and fields for
//! HPACK and the body for DATA, with no HTTP/1.1 bytes made and read back.
//! Generic, so that HTTP/1.1's code is what it was without the trait.

use std::collections::VecDeque;
use std::fs::File;
use std::sync::Arc;

use servelab_http::response::OkStart;
use servelab_http::{FileFields, Part, ResponseHead, Status};

use crate::runtime::shared::Shared;

/// Where a response goes: its head, then the small body behind it. See the
/// module docs.
pub(crate) trait Out {
    /// A head, field by field.
    fn head(&mut self, head: &ResponseHead<'_>);
    /// A whole file's `200 OK`, from the fields encoded when it was cached.
    fn file_ok(&mut self, fields: &FileFields, start: &OkStart, persist: Persist);
    /// Adds to the head just written `Content-Encoding` (with `encoding`),
    /// `Vary: Accept-Encoding` (with `vary`) and the `--header` fields (with
    /// `extra`: the site, whose fields they are). Called with something to add.
    fn add_fields(&mut self, encoding: Option<&str>, vary: bool, extra: Option<&Shared>);
    /// Adds the `--auth` challenge to the 401 head just written.
    fn add_challenge(&mut self);
    /// Body bytes behind the head.
    fn body(&mut self, bytes: &[u8]);
}

/// HTTP/1.1: everything as bytes, in the connection's output buffer.
impl Out for Vec<u8> {
    #[inline]
    fn head(&mut self, head: &ResponseHead<'_>) {
        head.encode(self);
    }

    #[inline]
    fn file_ok(&mut self, fields: &FileFields, start: &OkStart, persist: Persist) {
        fields.encode_ok(start, persist.connection(), persist.http10, self);
    }

    /// Before the empty line that ends the head.
    fn add_fields(&mut self, encoding: Option<&str>, vary: bool, extra: Option<&Shared>) {
        debug_assert!(self.ends_with(b"\r\n\r\n"), "called right after the head");
        self.truncate(self.len() - 2);
        if let Some(e) = encoding {
            self.extend_from_slice(b"Content-Encoding: ");
            self.extend_from_slice(e.as_bytes());
            self.extend_from_slice(b"\r\n");
        }
        if vary {
            self.extend_from_slice(b"Vary: Accept-Encoding\r\n");
        }
        if let Some(site) = extra {
            self.extend_from_slice(&site.extra_headers);
        }
        self.extend_from_slice(b"\r\n");
    }

    fn add_challenge(&mut self) {
        // RFC 9110 15.5.2: a 401 carries the challenge (`--auth`).
        self.truncate(self.len() - 2);
        self.extend_from_slice(crate::content::auth::CHALLENGE);
        self.extend_from_slice(b"\r\n");
    }

    #[inline]
    fn body(&mut self, bytes: &[u8]) {
        self.extend_from_slice(bytes);
    }
}

/// A body still to be sent after the output buffer.
#[derive(Debug, Default)]
pub(crate) enum Body {
    /// Nothing (or everything is already in the output buffer).
    #[default]
    Empty,
    /// A byte range of a file.
    File {
        file: Arc<File>,
        offset: u64,
        remaining: u64,
    },
    /// A multipart/byteranges body: literal parts and file ranges in order.
    Parts {
        file: Arc<File>,
        /// Boxed, so that a `Body` is 40 bytes rather than 64: every response
        /// moves one from the handler to the connection, and nearly always it
        /// is `Empty`. A multipart response pays one allocation more.
        #[allow(clippy::box_collection)]
        parts: Box<VecDeque<Part>>,
        /// The file range being sent now: (offset, remaining).
        current: Option<(u64, u64)>,
    },
}

impl Body {
    /// The file range to send next, as (file, offset, bytes left): the whole
    /// `File` body, or a multipart body's current part; `None` when what
    /// comes next is not a file range.
    #[inline]
    pub(crate) fn file_range(&self) -> Option<(&Arc<File>, u64, u64)> {
        match self {
            Body::File {
                file,
                offset,
                remaining,
            } => Some((file, *offset, *remaining)),
            Body::Parts {
                file,
                current: Some((offset, remaining)),
                ..
            } => Some((file, *offset, *remaining)),
            Body::Empty | Body::Parts { current: None, .. } => None,
        }
    }
}

/// What `handler::respond` decided.
#[derive(Debug)]
pub(crate) struct Response {
    pub(crate) status: Status,
    /// Body bytes the head announced (for the log); 0 for HEAD and bodiless statuses.
    pub(crate) body_len: u64,
    pub(crate) body: Body,
}

/// How the head should speak about the connection.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Persist {
    /// The connection stays open after this response.
    pub(crate) keep_alive: bool,
    /// The client speaks HTTP/1.0 (so keep-alive must be said explicitly).
    pub(crate) http10: bool,
}

impl Persist {
    /// Sets the persistence fields of a response head.
    pub(crate) fn apply(self, head: &mut ResponseHead<'_>) {
        head.connection = self.connection();
        head.http10 = self.http10;
    }

    /// What the head says about the connection (with [`Persist::http10`]).
    pub(crate) fn connection(self) -> servelab_http::Connection {
        if self.keep_alive {
            servelab_http::Connection::Default
        } else {
            servelab_http::Connection::Close
        }
    }
}

/// A complete `200 OK` for a small page generated in memory (the status
/// endpoints, a directory listing): the head with `content_type`, the
/// site's `--header` fields, and the body unless the request was a HEAD.
pub(crate) fn small_ok(
    content_type: &'static str,
    body: &[u8],
    date: &[u8; 29],
    persist: Persist,
    head_only: bool,
    site: &Shared,
    out: &mut impl Out,
) -> Response {
    let mut head = ResponseHead::new(Status::OK, date);
    head.content_type = Some(content_type);
    head.content_length = Some(body.len() as u64);
    persist.apply(&mut head);
    out.head(&head);
    if !site.extra_headers.is_empty() {
        out.add_fields(None, false, Some(site));
    }
    if !head_only {
        out.body(body);
    }
    Response {
        status: Status::OK,
        body_len: if head_only { 0 } else { body.len() as u64 },
        body: Body::Empty,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The multipart deque stays boxed (see `Body::Parts`): a `Body` is five
    /// words, not eight.
    #[test]
    fn a_body_is_five_words() {
        assert_eq!(
            std::mem::size_of::<Body>(),
            5 * std::mem::size_of::<usize>()
        );
    }

    #[test]
    fn small_ok_has_the_extra_fields_in_the_head_and_no_body_for_head() {
        let date = b"Sun, 06 Nov 1994 08:49:37 GMT";
        let persist = Persist {
            keep_alive: true,
            http10: false,
        };
        let dir = tempfile::tempdir().unwrap();
        let mut config = crate::config::Config::new(dir.path());
        config.headers = vec!["X-A: 1".parse().unwrap()];
        let site = Shared::new(config).unwrap();
        let mut out = Vec::new();
        let r = small_ok("text/plain", b"hi", date, persist, false, &site, &mut out);
        let text = String::from_utf8(out).unwrap();
        assert!(text.starts_with("HTTP/1.1 200 OK\r\n"), "{text}");
        assert!(text.contains("Content-Length: 2\r\n"), "{text}");
        assert!(text.ends_with("X-A: 1\r\n\r\nhi"), "{text}");
        assert_eq!((r.status, r.body_len), (Status::OK, 2));
        let mut out = Vec::new();
        let plain = Shared::new(crate::config::Config::new(dir.path())).unwrap();
        let r = small_ok("text/plain", b"hi", date, persist, true, &plain, &mut out);
        assert!(out.ends_with(b"Content-Length: 2\r\n\r\n"));
        assert_eq!(r.body_len, 0);
    }
}
