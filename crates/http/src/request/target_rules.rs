//! Request targets and the `Host` field as the parser applies them, tested
//! through [`parse_request`]. The rules live in `target.rs`; these tests sit
//! under `request` because they drive the whole parser, and `target` must not
//! import the module that uses it.

use super::Parse;
use super::tests::{complete, error, parse, status};
use crate::error::RequestError;
use crate::method::Method;

#[test]
fn host_rules() {
    assert_eq!(error(b"GET / HTTP/1.1\r\n\r\n"), RequestError::MissingHost);
    assert_eq!(
        error(b"GET / HTTP/1.1\r\nHost: a\r\nhost: a\r\n\r\n"),
        RequestError::DuplicateHost
    );
    assert_eq!(status(b"GET / HTTP/1.1\r\nHost: a b\r\n\r\n"), 400);
    assert_eq!(status(b"GET / HTTP/1.1\r\nHost: user@a\r\n\r\n"), 400);
    assert_eq!(status(b"GET / HTTP/1.1\r\nHost: a/b\r\n\r\n"), 400);
    assert_eq!(status(b"GET / HTTP/1.1\r\nHost: \xff\r\n\r\n"), 400);
    assert_eq!(
        complete(b"GET / HTTP/1.1\r\nHost:\r\n\r\n").host,
        Some(&b""[..])
    );
    assert_eq!(
        complete(b"GET / HTTP/1.1\r\nHost: [::1]:8080\r\n\r\n").host,
        Some(&b"[::1]:8080"[..])
    );
}

#[test]
fn target_forms() {
    let h = complete(b"GET http://example.com:8080/a/b?c HTTP/1.1\r\nHost: other\r\n\r\n");
    assert_eq!(
        (h.target, h.host),
        ("/a/b?c", Some(&b"example.com:8080"[..]))
    );
    let h = complete(b"GET HTTPS://example.com HTTP/1.1\r\nHost: x\r\n\r\n");
    assert_eq!((h.target, h.host), ("/", Some(&b"example.com"[..])));
    let h = complete(b"GET http://example.com?q=1 HTTP/1.1\r\nHost: x\r\n\r\n");
    assert_eq!(h.target, "/");
    // Absolute-form does not excuse a missing Host in 1.1 (RFC 9112 3.2).
    assert_eq!(
        error(b"GET http://example.com/ HTTP/1.1\r\n\r\n"),
        RequestError::MissingHost
    );
    assert_eq!(
        status(b"GET http://u@example.com/ HTTP/1.1\r\nHost: x\r\n\r\n"),
        400
    );
    assert_eq!(status(b"GET http:///x HTTP/1.1\r\nHost: x\r\n\r\n"), 400);
    assert_eq!(
        status(b"GET ftp://example.com/ HTTP/1.1\r\nHost: x\r\n\r\n"),
        400
    );
    assert_eq!(status(b"GET a/b HTTP/1.1\r\nHost: x\r\n\r\n"), 400);
    // asterisk-form only with OPTIONS, authority-form only with CONNECT.
    let h = complete(b"OPTIONS * HTTP/1.1\r\nHost: x\r\n\r\n");
    assert_eq!((h.method, h.target), (Method::Other, "*"));
    assert_eq!(status(b"GET * HTTP/1.1\r\nHost: x\r\n\r\n"), 400);
    let h = complete(b"CONNECT example.com:443 HTTP/1.1\r\nHost: x\r\n\r\n");
    assert_eq!((h.method_str, h.target), ("CONNECT", "example.com:443"));
    assert_eq!(
        status(b"GET example.com:443 HTTP/1.1\r\nHost: x\r\n\r\n"),
        400
    );
    assert_eq!(status(b"CONNECT / HTTP/1.1\r\nHost: x\r\n\r\n"), 400);
    assert_eq!(
        status(b"CONNECT example.com HTTP/1.1\r\nHost: x\r\n\r\n"),
        400
    );
    // Raw bytes above 0x7F make the request-line invalid (RFC 9112 3); percent-encoded
    // they are fine (path resolution decides).
    assert_eq!(
        error("GET /caf\u{e9} HTTP/1.1\r\nHost: x\r\n\r\n".as_bytes()),
        RequestError::InvalidTarget("raw byte above 0x7F")
    );
    assert_eq!(status(b"GET /\xff HTTP/1.1\r\nHost: x\r\n\r\n"), 400);
    assert_eq!(status(b"OPTIONS \xff HTTP/1.1\r\nHost: x\r\n\r\n"), 400);
    assert_eq!(
        status("CONNECT h\u{e9}:443 HTTP/1.1\r\nHost: x\r\n\r\n".as_bytes()),
        400
    );
    assert_eq!(
        complete(b"GET /caf%C3%A9 HTTP/1.1\r\nHost: x\r\n\r\n").target,
        "/caf%C3%A9"
    );
}

#[test]
fn authority_syntax() {
    let host = |v: &str| {
        let req = format!("GET / HTTP/1.1\r\nHost: {v}\r\n\r\n");
        parse(req.as_bytes()).map(|p| match p {
            Parse::Complete(h) => h.host.map(|v| String::from_utf8(v.to_vec()).unwrap()),
            Parse::Incomplete => panic!("{v}"),
        })
    };
    for good in [
        "localhost",
        "localhost:8080",
        "localhost:",
        "127.0.0.1:80",
        "[::1]",
        "[::1]:443",
        "[2001:db8::7]:0",
        "[::ffff:192.0.2.1]",
        "[v1.fe80::a+en1]",
        "xn--caf-dma.example",
        "caf%C3%A9.example",
        "a.b-c_d~e!$&'()*+,;=",
    ] {
        assert_eq!(host(good), Ok(Some(good.to_owned())), "{good:?}");
    }
    for bad in [
        "localhost:abc",
        "localhost:80:80",
        "localhost:-1",
        "localhost: 80",
        "localhost:+80",
        "[::1",
        "[::1]x",
        "[::1]:8x",
        "[::1]]",
        "::1",
        "[]",
        "[::g]",
        "[1.2.3.4]",
        "[::1%25eth0]",
        "[v1]",
        "[v.x]",
        "[vz.x]",
        "a]b",
        "a[b",
        "%",
        "a%2",
        "a%zz",
    ] {
        assert!(
            matches!(host(bad), Err(RequestError::InvalidHost(_))),
            "{bad:?}: {:?}",
            host(bad)
        );
    }
    // The absolute form's authority follows the same rules, and its host may not be empty.
    let absolute = |t: &str| {
        let req = format!("GET {t} HTTP/1.1\r\nHost: x\r\n\r\n");
        parse(req.as_bytes()).map(|p| match p {
            Parse::Complete(h) => h.host.map(|v| String::from_utf8(v.to_vec()).unwrap()),
            Parse::Incomplete => panic!("{t}"),
        })
    };
    assert_eq!(absolute("http://x:99/"), Ok(Some("x:99".to_owned())));
    assert_eq!(
        absolute("http://[::1]:99/a"),
        Ok(Some("[::1]:99".to_owned()))
    );
    for bad in [
        "http://x:9x9/",
        "http://x:80:80/",
        "http://[::1/",
        "http://:80/",
        "http://[::1]x/",
    ] {
        assert!(
            matches!(absolute(bad), Err(RequestError::InvalidHost(_))),
            "{bad:?}"
        );
    }
    // CONNECT's authority too.
    assert_eq!(
        complete(b"CONNECT [::1]:443 HTTP/1.1\r\nHost: x\r\n\r\n").target,
        "[::1]:443"
    );
    assert_eq!(status(b"CONNECT ::1:443 HTTP/1.1\r\nHost: x\r\n\r\n"), 400);
}
