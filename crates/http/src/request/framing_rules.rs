//! Message framing (`Content-Length`, `Transfer-Encoding`, smuggling shapes) as the
//! parser applies it, tested through [`parse_request`]. The rules live in
//! `framing.rs`; these tests sit under `request` because they drive the whole
//! parser, and `framing` must not import the module that uses it.

use super::Parse;
use super::tests::{parse, status};
use crate::error::RequestError;

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
