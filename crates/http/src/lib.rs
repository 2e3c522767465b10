//! servelab-http: the HTTP/1.1 protocol and static-file rules every servelab engine shares,
//! kept free of sockets and file I/O so that each rule is a pure function tested on bytes.
//!
//! An engine reads bytes, calls [`parse_request`] until it returns a complete
//! [`RequestHead`], maps the target to a file with [`resolve_target`], decides the answer with
//! the validators and range helpers below, and writes a [`ResponseHead`] encoded into its own
//! buffer. The hot path (parse, resolve, encode) borrows from the input and writes into the
//! caller's buffers, so a steady-state request does not touch the heap.
//!
//! # Layout
//! - [`request`]: incremental request-head parser and limits; with the private `framing`
//!   (Content-Length, Transfer-Encoding) and `target` (request-target forms, Host) checks;
//!   and [`request_from_fields`], the same head from fields decoded elsewhere (HTTP/2).
//! - [`body`]: chunked request bodies, validated and discarded.
//! - [`conditional`]: ETag, If-Match, If-Unmodified-Since, If-None-Match, If-Modified-Since,
//!   If-Range, each on its own; [`precondition`]: the RFC 9110 13.2.2 order (412, 304).
//! - [`dotfile`]: which paths are hidden (404) unless dotfiles are served.
//! - [`encoding`]: `Accept-Encoding` against the precompressed files that exist.
//! - [`fields`]: the request fields only the static-file handler needs.
//! - [`header`]: operator-given response fields (`--header`), checked once.
//! - [`listing`]: directory listing HTML from a list of entries.
//! - [`date`]: IMF-fixdate and log dates, with a once-a-second cache.
//! - [`error`]: why a request is refused, and the status for it.
//! - [`status`]: status codes, reason phrases, error pages.
//! - [`method`]: GET/HEAD versus 405 versus 501; HEAD in a head that did not parse.
//! - [`mime`]: `Content-Type` from the extension.
//! - [`multipart`]: `multipart/byteranges` bodies for several ranges.
//! - [`path`]: target to safe relative path; `Location` for directory redirects.
//! - [`range`]: `Range` header to byte ranges, overflow-safe.
//! - [`response`]: response head encoding (or its fields one by one, for an HTTP/2 head), and
//!   the `100 Continue` interim response.

#![deny(missing_docs)]

pub mod body;
pub mod conditional;
pub mod date;
pub mod dotfile;
pub mod encoding;
pub mod error;
pub mod fields;
mod framing;
pub mod header;
pub mod listing;
pub mod method;
pub mod mime;
pub mod multipart;
pub mod path;
pub mod precondition;
pub mod range;
pub mod request;
pub mod response;
pub mod status;
mod target;

pub use body::{ChunkedDecoder, MAX_METADATA};
pub use conditional::{
    ETag, if_none_match, if_range_matches, not_modified_since, not_modified_since_at,
};
pub use date::{HttpDate, fmt_clf_date, fmt_http_date};
pub use encoding::{Available, Coding, Negotiated, negotiate};
pub use error::RequestError;
pub use fields::ExtraFields;
pub use header::{ExtraHeader, HeaderError};
pub use method::{ALLOW, Method, is_head_request, is_registered_method};
pub use mime::{OCTET_STREAM, content_type};
pub use multipart::{Multipart, Part};
pub use path::{PathError, PathKind, append_location, resolve_target};
pub use precondition::{Outcome, Preconditions};
pub use range::{ByteRange, MAX_RANGES, RangeSet, Ranges, parse_range};
pub use request::{Limits, Parse, RequestHead, Version, parse_request, request_from_fields};
pub use response::{CONTINUE, Connection, ContentRange, FileFields, ResponseHead};
pub use status::Status;

/// Generated inputs for the tests that compare a fast checker with a plain one.
#[cfg(test)]
mod test_rng;

#[cfg(test)]
mod layout;
