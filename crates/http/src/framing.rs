//! Message framing: how long the request body is, from `Content-Length` and
//! `Transfer-Encoding` (RFC 9112 6).
//!
//! This is where request smuggling lives: when a front end and this server could disagree
//! about where a body ends, the bytes after the disagreement become a request nobody checked.
//! So the rules are strict: `Content-Length` is plain digits (identical duplicates fold),
//! `Transfer-Encoding` must end in a single `chunked`, and the request parser refuses the two
//! together.

use crate::error::RequestError;

/// Trims optional whitespace (SP and HTAB) from both ends of a field value.
pub(crate) fn trim_ows(v: &[u8]) -> &[u8] {
    let start = v
        .iter()
        .position(|&b| b != b' ' && b != b'\t')
        .unwrap_or(v.len());
    let end = v
        .iter()
        .rposition(|&b| b != b' ' && b != b'\t')
        .map_or(start, |i| i + 1);
    &v[start..end]
}

/// Parses a Content-Length value: 1*DIGIT, or a list of identical ones (RFC 9110 8.6 lets a
/// recipient fold `5, 5` into 5). Signs, spaces inside, hex, empty elements and overflow are
/// errors: being lenient here is how smuggling starts.
pub(crate) fn parse_content_length(value: &[u8]) -> Result<u64, RequestError> {
    let mut result: Option<u64> = None;
    for element in value.split(|&b| b == b',') {
        let digits = trim_ows(element);
        if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
            return Err(RequestError::InvalidContentLength);
        }
        let mut n: u64 = 0;
        for &d in digits {
            n = n
                .checked_mul(10)
                .and_then(|n| n.checked_add(u64::from(d - b'0')))
                .ok_or(RequestError::InvalidContentLength)?;
        }
        if result.is_some_and(|r| r != n) {
            return Err(RequestError::InvalidContentLength);
        }
        result = Some(n);
    }
    result.ok_or(RequestError::InvalidContentLength)
}

/// What the Transfer-Encoding field lines said, accumulated over all of them (a list field may
/// be split over several lines; RFC 9110 5.3).
#[derive(Default)]
pub(crate) struct TransferCodings {
    pub(crate) seen: bool,
    codings: u32,
    chunked: u32,
    last_is_chunked: bool,
    others: bool,
    bad_syntax: bool,
}

impl TransferCodings {
    pub(crate) fn add(&mut self, value: &[u8]) {
        self.seen = true;
        for element in value.split(|&b| b == b',') {
            let element = trim_ows(element);
            if element.is_empty() {
                continue; // empty list elements are allowed (RFC 9110 5.6.1)
            }
            let (name, params) = match element.iter().position(|&b| b == b';') {
                Some(i) => (trim_ows(&element[..i]), true),
                None => (element, false),
            };
            if name.is_empty() || !name.iter().all(|&b| is_tchar(b)) {
                self.bad_syntax = true;
                continue;
            }
            self.codings += 1;
            self.last_is_chunked = name.eq_ignore_ascii_case(b"chunked");
            if self.last_is_chunked {
                self.chunked += 1;
                // chunked takes no parameters (RFC 9112 7.1).
                self.bad_syntax |= params;
            } else {
                self.others = true;
            }
        }
    }

    /// RFC 9112 6.3 item 4: the final coding must be chunked, applied once (6.1); otherwise
    /// the body length is unknown and the answer is 400. A known framing with a coding we do
    /// not implement before it (`gzip, chunked`) is 501, as 6.1 recommends for codings the
    /// server does not understand: the client may retry without it.
    pub(crate) fn check(&self) -> Result<(), RequestError> {
        if self.bad_syntax || self.codings == 0 || !self.last_is_chunked || self.chunked > 1 {
            return Err(RequestError::InvalidTransferEncoding);
        }
        if self.others {
            return Err(RequestError::UnsupportedTransferCoding);
        }
        Ok(())
    }
}

/// RFC 9110 5.6.2 token characters.
pub(crate) fn is_tchar(b: u8) -> bool {
    b.is_ascii_alphanumeric()
        || matches!(
            b,
            b'!' | b'#'
                | b'$'
                | b'%'
                | b'&'
                | b'\''
                | b'*'
                | b'+'
                | b'-'
                | b'.'
                | b'^'
                | b'_'
                | b'`'
                | b'|'
                | b'~'
        )
}

#[cfg(test)]
mod tests {
    use crate::error::RequestError;

    #[test]
    fn direct_unit_checks() {
        use super::{TransferCodings, parse_content_length, trim_ows};
        assert_eq!(trim_ows(b" \t a b \t"), b"a b");
        assert_eq!(trim_ows(b"   "), b"");
        assert_eq!(parse_content_length(b"18446744073709551615"), Ok(u64::MAX));
        assert_eq!(
            parse_content_length(b"18446744073709551616"),
            Err(RequestError::InvalidContentLength)
        );
        let mut te = TransferCodings::default();
        te.add(b"gzip");
        te.add(b" , chunked");
        assert_eq!(te.check(), Err(RequestError::UnsupportedTransferCoding));
        let mut te = TransferCodings::default();
        te.add(b"chunked");
        assert_eq!(te.check(), Ok(()));
        assert!(te.seen);
    }
}
