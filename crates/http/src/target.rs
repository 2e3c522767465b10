//! The request target and the authority: which forms of RFC 9112 3.2 we accept, and what a
//! valid `Host` looks like.
//!
//! origin-form (`/path?query`) is what clients send to servers. absolute-form
//! (`http://host/path`) is for proxies, but RFC 9112 3.2.2 requires servers to accept it; its
//! authority then overrides `Host`. asterisk-form (`*`) is only meaningful with OPTIONS and
//! authority-form (`host:port`) only with CONNECT; anywhere else they are refused with 400,
//! because a later stage that expects a path would misread them.

use crate::error::RequestError;

/// Splits the request target into (target, authority) by form (RFC 9112 3.2).
pub(crate) fn classify_target<'a>(
    method: &str,
    target: &'a str,
) -> Result<(&'a str, Option<&'a str>), RequestError> {
    if method == "CONNECT" {
        // authority-form, and only with CONNECT (RFC 9112 3.2.3): host ":" port.
        let Some((host, port)) = target.rsplit_once(':') else {
            return Err(RequestError::InvalidTarget("CONNECT needs host:port"));
        };
        if host.is_empty() || port.is_empty() || !port.bytes().all(|b| b.is_ascii_digit()) {
            return Err(RequestError::InvalidTarget("CONNECT needs host:port"));
        }
        validate_host(target).map_err(|_| RequestError::InvalidTarget("bad CONNECT authority"))?;
        return Ok((target, None));
    }
    if target.starts_with('/') {
        return Ok((target, None));
    }
    if target == "*" {
        return if method == "OPTIONS" {
            Ok((target, None))
        } else {
            Err(RequestError::InvalidTarget("'*' is only for OPTIONS"))
        };
    }
    // absolute-form (RFC 9112 3.2.2), which servers must accept although clients send it only
    // to proxies.
    let rest = strip_prefix_ignore_case(target, "http://")
        .or_else(|| strip_prefix_ignore_case(target, "https://"))
        .ok_or(RequestError::InvalidTarget(
            "not origin-form or absolute-form",
        ))?;
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, path) = rest.split_at(end);
    if authority.contains('@') {
        // RFC 9110 4.2.4: userinfo is deprecated and a favourite of phishing; treat as error.
        return Err(RequestError::InvalidTarget("userinfo in target"));
    }
    if authority.is_empty() {
        // RFC 9110 4.2.1: an http URI with an empty host MUST be rejected.
        return Err(RequestError::InvalidHost("empty authority"));
    }
    validate_host(authority)?;
    // "http://h" and "http://h?q" have an empty path, which means "/". We cannot build "/?q"
    // without allocating, and a static server ignores queries, so the query is dropped.
    let path = if path.starts_with('/') { path } else { "/" };
    Ok((path, Some(authority)))
}

/// RFC 3986 `unreserved / sub-delims`: the bytes allowed raw in every URI
/// component this crate checks or writes (hosts, paths, queries).
pub(crate) fn is_unreserved_or_sub_delim(b: u8) -> bool {
    b.is_ascii_alphanumeric()
        || matches!(
            b,
            b'-' | b'.'
                | b'_'
                | b'~'
                | b'!'
                | b'$'
                | b'&'
                | b'\''
                | b'('
                | b')'
                | b'*'
                | b'+'
                | b','
                | b';'
                | b'='
        )
}

pub(crate) fn strip_prefix_ignore_case<'a>(s: &'a str, prefix: &str) -> Option<&'a str> {
    let head = s.get(..prefix.len())?;
    head.eq_ignore_ascii_case(prefix)
        .then(|| &s[prefix.len()..])
}

/// Checks `host[:port]` against RFC 3986's authority characters (reg-name, IPv4, IP-literal),
/// without userinfo. An empty Host is allowed (RFC 9112 3.2: for targets with no authority).
pub(crate) fn validate_host(host: &str) -> Result<(), RequestError> {
    let ok = host
        .bytes()
        .all(|b| is_unreserved_or_sub_delim(b) || matches!(b, b'%' | b':' | b'[' | b']'));
    if ok {
        Ok(())
    } else {
        Err(RequestError::InvalidHost("character not allowed in host"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::method::Method;
    use crate::request::{Limits, Parse, RequestHead, parse_request};

    fn parse(buf: &[u8]) -> Result<Parse<RequestHead<'_>>, RequestError> {
        parse_request(buf, &Limits::default())
    }

    fn complete(buf: &[u8]) -> RequestHead<'_> {
        match parse(buf) {
            Ok(Parse::Complete(h)) => h,
            other => panic!("{:?}: {other:?}", String::from_utf8_lossy(buf)),
        }
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
        assert_eq!(complete(b"GET / HTTP/1.1\r\nHost:\r\n\r\n").host, Some(""));
        assert_eq!(
            complete(b"GET / HTTP/1.1\r\nHost: [::1]:8080\r\n\r\n").host,
            Some("[::1]:8080")
        );
    }

    #[test]
    fn target_forms() {
        let h = complete(b"GET http://example.com:8080/a/b?c HTTP/1.1\r\nHost: other\r\n\r\n");
        assert_eq!((h.target, h.host), ("/a/b?c", Some("example.com:8080")));
        let h = complete(b"GET HTTPS://example.com HTTP/1.1\r\nHost: x\r\n\r\n");
        assert_eq!((h.target, h.host), ("/", Some("example.com")));
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
        // Non-ASCII UTF-8 in the target is passed on (path resolution decides).
        assert_eq!(
            complete("GET /caf\u{e9} HTTP/1.1\r\nHost: x\r\n\r\n".as_bytes()).target,
            "/caf\u{e9}"
        );
    }
}
