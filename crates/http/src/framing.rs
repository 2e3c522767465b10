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
    use crate::request::{Limits, Parse, RequestHead, parse_request};

    fn parse(buf: &[u8]) -> Result<Parse<RequestHead<'_>>, RequestError> {
        parse_request(buf, &Limits::default())
    }

    fn error(buf: &[u8]) -> RequestError {
        match parse(buf) {
            Err(e) => e,
            other => panic!("{:?}: {other:?}", String::from_utf8_lossy(buf)),
        }
    }

    fn status(buf: &[u8]) -> u16 {
        error(buf).status().code()
    }

    #[test]
    fn content_length_rules() {
        let cl = |v: &str| {
            let req = format!("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: {v}\r\n\r\n");
            parse(req.as_bytes()).map(|p| match p {
                Parse::Complete(h) => h.content_length,
                Parse::Incomplete => panic!(),
            })
        };
        assert_eq!(cl("0"), Ok(Some(0)));
        assert_eq!(cl("42"), Ok(Some(42)));
        assert_eq!(cl("007"), Ok(Some(7)));
        assert_eq!(cl("42, 42"), Ok(Some(42)));
        for bad in [
            "",
            "+1",
            "-1",
            "0x10",
            "1 2",
            "1.0",
            "4 2",
            "42, 43",
            "42,",
            "1e3",
            "١",
            "99999999999999999999999",
        ] {
            assert_eq!(cl(bad), Err(RequestError::InvalidContentLength), "{bad:?}");
        }
        assert_eq!(cl("1048576"), Ok(Some(1 << 20)));
        assert_eq!(cl("1048577"), Err(RequestError::PayloadTooLarge));
        assert_eq!(
            cl("18446744073709551615"),
            Err(RequestError::PayloadTooLarge)
        );
        // Identical duplicate lines fold; differing ones are refused.
        let two = |a: &str, b: &str| {
            let req = format!(
                "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: {a}\r\nContent-Length: {b}\r\n\r\n"
            );
            parse(req.as_bytes()).map(|_| ())
        };
        assert_eq!(two("5", "5"), Ok(()));
        assert_eq!(two("5", "6"), Err(RequestError::InvalidContentLength));
    }

    #[test]
    fn smuggling_shapes_are_refused() {
        let te = |fields: &str, version: &str| {
            let req = format!("POST / {version}\r\nHost: a\r\n{fields}\r\n");
            parse(req.as_bytes()).map(|p| matches!(p, Parse::Complete(h) if h.chunked))
        };
        let te11 = |fields: &str| te(fields, "HTTP/1.1");
        assert_eq!(te11("Transfer-Encoding: chunked\r\n"), Ok(true));
        assert_eq!(te11("Transfer-Encoding: Chunked\r\n"), Ok(true));
        assert_eq!(
            te11("Transfer-Encoding: gzip,, chunked\r\n")
                .unwrap_err()
                .status()
                .code(),
            501
        );
        // CL.TE and TE.CL.
        assert_eq!(
            te11("Content-Length: 5\r\nTransfer-Encoding: chunked\r\n"),
            Err(RequestError::ConflictingFraming)
        );
        assert_eq!(
            te11("Transfer-Encoding: chunked\r\nContent-Length: 5\r\n"),
            Err(RequestError::ConflictingFraming)
        );
        // TE.TE: obfuscated or doubled codings.
        for bad in [
            "Transfer-Encoding: chunked, identity\r\n",
            "Transfer-Encoding: gzip\r\n",
            "Transfer-Encoding: chunked\r\nTransfer-Encoding: gzip\r\n",
            "Transfer-Encoding: chunked, chunked\r\n",
            "Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n",
            "Transfer-Encoding: xchunked\r\n",
            "Transfer-Encoding: chunked;foo=bar\r\n",
            "Transfer-Encoding: \"chunked\"\r\n",
            "Transfer-Encoding: \r\n",
            "Transfer-Encoding: ,\r\n",
        ] {
            assert_eq!(
                te11(bad),
                Err(RequestError::InvalidTransferEncoding),
                "{bad:?}"
            );
        }
        assert_eq!(
            status(b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding : chunked\r\n\r\n"),
            400
        );
        assert_eq!(
            status(b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding:\x0bchunked\r\n\r\n"),
            400
        );
        assert_eq!(
            te11("Transfer-Encoding: gzip, chunked\r\n"),
            Err(RequestError::UnsupportedTransferCoding)
        );
        assert_eq!(
            te11("Transfer-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n"),
            Err(RequestError::UnsupportedTransferCoding)
        );
        assert_eq!(
            te("Transfer-Encoding: chunked\r\n", "HTTP/1.0"),
            Err(RequestError::TransferEncodingInHttp10)
        );
    }

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
