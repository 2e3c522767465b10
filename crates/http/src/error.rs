//! Why a request was refused, and the status the server answers with.
//!
//! Every variant is fatal to the connection: after any of them the byte stream is in an unknown
//! state (we cannot tell where the next request would begin), so the server writes the status
//! from [`RequestError::status`] with [`Status::error_body`] and `Connection: close`, then closes.
//! When the refused request was a HEAD ([`crate::is_head_request`]), the error response is its
//! head alone: a response to HEAD never has content (RFC 9110 9.3.2), errors included.
//! Variants carry only `&'static str` details so that building one never allocates.

use crate::status::Status;

/// A request the server will not serve. See the module docs for what happens next: the server
/// answers with [`RequestError::status`] and closes the connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum RequestError {
    /// The request line or a header line does not follow RFC 9112 grammar (bad token, bare CR,
    /// obs-fold, whitespace before a colon, control bytes, ...). Server: 400, close.
    #[error("malformed request: {0}")]
    Malformed(&'static str),
    /// The request line is longer than `Limits::max_request_line` (also detected before the
    /// line ends). Server: 414, close.
    #[error("request line too long")]
    RequestLineTooLong,
    /// The header block is larger than `Limits::max_head` (also detected before it ends).
    /// Server: 431, close.
    #[error("request head too large")]
    HeadTooLarge,
    /// More header fields than `Limits::max_headers`. Server: 431, close.
    #[error("too many header fields")]
    TooManyHeaders,
    /// A well-formed version whose major is not 1 (e.g. `HTTP/2.0`, `HTTP/0.9`). A later
    /// HTTP/1 minor (`HTTP/1.2`) is no error: it is processed as HTTP/1.1 (RFC 9110 2.5).
    /// Server: 505, close.
    #[error("HTTP version not supported")]
    UnsupportedVersion,
    /// An HTTP/1.1 request without a `Host` field (RFC 9112 3.2). Server: 400, close.
    #[error("missing Host header")]
    MissingHost,
    /// More than one `Host` field line (RFC 9112 3.2). Server: 400, close.
    #[error("more than one Host header")]
    DuplicateHost,
    /// A `Host` value (or absolute-form authority) that is not a valid `host[:port]` of
    /// RFC 3986 3.2.2-3.2.3: a character outside the host grammar, a port that is not digits
    /// (`localhost:abc`, `localhost:80:80`), an unterminated or invalid IP literal (`[::1`),
    /// or an empty host in an `http` URI. RFC 9112 3.2: Server: 400, close.
    #[error("invalid Host: {0}")]
    InvalidHost(&'static str),
    /// The request target is in no form we accept for this method (RFC 9112 3.2), or holds a
    /// raw byte above 0x7F, which no form allows (RFC 9112 3: an invalid request-line).
    /// Server: 400, close.
    #[error("invalid request target: {0}")]
    InvalidTarget(&'static str),
    /// `Content-Length` is not a plain decimal number, overflows, or several differing values
    /// were sent (RFC 9112 6.3 item 5). Server: 400, close.
    #[error("invalid Content-Length")]
    InvalidContentLength,
    /// Both `Transfer-Encoding` and `Content-Length`: the classic request-smuggling shape
    /// (RFC 9112 6.1, 6.3 item 3). Server: 400, close.
    #[error("both Transfer-Encoding and Content-Length")]
    ConflictingFraming,
    /// `Transfer-Encoding` whose final coding is not `chunked`, with `chunked` more than once,
    /// or with a syntax error: the body length cannot be determined (RFC 9112 6.3 item 4).
    /// Server: 400, close.
    #[error("invalid Transfer-Encoding")]
    InvalidTransferEncoding,
    /// A transfer coding other than `chunked` before the final `chunked` (e.g. `gzip, chunked`).
    /// The framing is known, but we do not implement the coding; RFC 9112 6.1 says a server
    /// "SHOULD respond with 501" to a coding it does not understand. Server: 501, close.
    #[error("unsupported transfer coding")]
    UnsupportedTransferCoding,
    /// `Transfer-Encoding` in an HTTP/1.0 request: 1.0 has no chunked framing, so an
    /// intermediary may disagree with us about the body length (RFC 9112 6.1). Server: 400, close.
    #[error("Transfer-Encoding in an HTTP/1.0 request")]
    TransferEncodingInHttp10,
    /// The declared `Content-Length` or the decoded chunked body exceeds `Limits::max_body`.
    /// Server: 413, close.
    #[error("request body too large")]
    PayloadTooLarge,
    /// The chunked body does not follow RFC 9112 7.1 (bad hex size, missing CRLF, ...).
    /// Server: 400, close.
    #[error("malformed chunked body: {0}")]
    BadChunk(&'static str),
}

impl RequestError {
    /// The status the server answers with before closing the connection.
    pub fn status(&self) -> Status {
        match self {
            RequestError::RequestLineTooLong => Status::URI_TOO_LONG,
            RequestError::HeadTooLarge | RequestError::TooManyHeaders => {
                Status::REQUEST_HEADER_FIELDS_TOO_LARGE
            }
            RequestError::UnsupportedVersion => Status::HTTP_VERSION_NOT_SUPPORTED,
            RequestError::UnsupportedTransferCoding => Status::NOT_IMPLEMENTED,
            RequestError::PayloadTooLarge => Status::PAYLOAD_TOO_LARGE,
            RequestError::Malformed(_)
            | RequestError::MissingHost
            | RequestError::DuplicateHost
            | RequestError::InvalidHost(_)
            | RequestError::InvalidTarget(_)
            | RequestError::InvalidContentLength
            | RequestError::ConflictingFraming
            | RequestError::InvalidTransferEncoding
            | RequestError::TransferEncodingInHttp10
            | RequestError::BadChunk(_) => Status::BAD_REQUEST,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_variant_maps_to_an_error_status() {
        let all = [
            RequestError::Malformed("x"),
            RequestError::RequestLineTooLong,
            RequestError::HeadTooLarge,
            RequestError::TooManyHeaders,
            RequestError::UnsupportedVersion,
            RequestError::MissingHost,
            RequestError::DuplicateHost,
            RequestError::InvalidHost("x"),
            RequestError::InvalidTarget("x"),
            RequestError::InvalidContentLength,
            RequestError::ConflictingFraming,
            RequestError::InvalidTransferEncoding,
            RequestError::UnsupportedTransferCoding,
            RequestError::TransferEncodingInHttp10,
            RequestError::PayloadTooLarge,
            RequestError::BadChunk("x"),
        ];
        for e in all {
            let s = e.status();
            assert!(s.class() == 4 || s.class() == 5, "{e:?} -> {}", s.code());
            assert!(!e.to_string().is_empty());
        }
        assert_eq!(RequestError::RequestLineTooLong.status().code(), 414);
        assert_eq!(RequestError::TooManyHeaders.status().code(), 431);
        assert_eq!(RequestError::UnsupportedVersion.status().code(), 505);
        assert_eq!(RequestError::UnsupportedTransferCoding.status().code(), 501);
        assert_eq!(RequestError::PayloadTooLarge.status().code(), 413);
        assert_eq!(RequestError::ConflictingFraming.status().code(), 400);
    }
}
