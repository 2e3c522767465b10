//! What answering a request produces, apart from the bytes already in the
//! output buffer: the [`Response`] (its status and announced length, for the
//! log and the counters) and the [`Body`] still to send with `sendfile(2)`; and
//! [`Persist`], what a response head says about the connection.
//!
//! The producers of responses, [`crate::handler`] (the files),
//! [`crate::status`] (the counters endpoints) and [`crate::autoindex`] (the
//! directory listings), build these; [`crate::conn`] consumes them. A small
//! generated page is one call, [`small_ok`], so the generators need nothing
//! from the handler.

use std::collections::VecDeque;
use std::fs::File;
use std::sync::Arc;

use servelab_http::{Part, ResponseHead, Status};

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
/// site's `--header` fields (`extra_headers`, encoded), and the body unless
/// the request was a HEAD.
pub(crate) fn small_ok(
    content_type: &'static str,
    body: &[u8],
    date: &[u8; 29],
    persist: Persist,
    head_only: bool,
    extra_headers: &[u8],
    out: &mut Vec<u8>,
) -> Response {
    let mut head = ResponseHead::new(Status::OK, date);
    head.content_type = Some(content_type);
    head.content_length = Some(body.len() as u64);
    persist.apply(&mut head);
    head.encode(out);
    if !extra_headers.is_empty() {
        // Before the empty line that ends the head.
        out.truncate(out.len() - 2);
        out.extend_from_slice(extra_headers);
        out.extend_from_slice(b"\r\n");
    }
    if !head_only {
        out.extend_from_slice(body);
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
        let mut out = Vec::new();
        let r = small_ok(
            "text/plain",
            b"hi",
            date,
            persist,
            false,
            b"X-A: 1\r\n",
            &mut out,
        );
        let text = String::from_utf8(out).unwrap();
        assert!(text.starts_with("HTTP/1.1 200 OK\r\n"), "{text}");
        assert!(text.contains("Content-Length: 2\r\n"), "{text}");
        assert!(text.ends_with("X-A: 1\r\n\r\nhi"), "{text}");
        assert_eq!((r.status, r.body_len), (Status::OK, 2));
        let mut out = Vec::new();
        let r = small_ok("text/plain", b"hi", date, persist, true, b"", &mut out);
        assert!(out.ends_with(b"Content-Length: 2\r\n\r\n"));
        assert_eq!(r.body_len, 0);
    }
}
