//! Request methods: which ones we serve, and how we refuse the others.
//!
//! servelab serves only GET and HEAD. RFC 9110 distinguishes two refusals: a method the server
//! knows but the resource does not allow gets 405 with `Allow` (15.5.6), a method the server
//! does not recognise gets 501 (15.6.2). "Knows" here means the methods registered by RFC 9110
//! and RFC 5789 (PATCH); everything else is unknown. Methods are case-sensitive (RFC 9110 9.1),
//! so `get` is an unknown method, not GET.

/// The request method, reduced to what the server branches on. The original token stays
/// available as `RequestHead::method_str` for the access log.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Method {
    /// `GET`: serve the resource.
    Get,
    /// `HEAD`: exactly GET's response head, no body.
    Head,
    /// Any other method token; see [`is_registered_method`] for 405 versus 501.
    Other,
}

impl Method {
    /// Classifies a method token (case-sensitive, as RFC 9110 9.1 requires).
    pub fn from_token(token: &str) -> Method {
        match token {
            "GET" => Method::Get,
            "HEAD" => Method::Head,
            _ => Method::Other,
        }
    }
}

/// True when `buf`, a request head that may be incomplete or invalid, starts with the method
/// `HEAD` (after the empty lines RFC 9112 2.2 lets a server skip).
///
/// An error raised while reading a head (400, 408, 413, 414, 431, 501, 505) has no parsed
/// [`Method`], yet a response to HEAD must never carry content (RFC 9110 9.3.2): the server
/// asks this to send such a response as a head alone. A wrong guess cannot break framing,
/// because every such error closes the connection after its response.
pub fn is_head_request(buf: &[u8]) -> bool {
    let start = buf
        .iter()
        .position(|&b| b != b'\r' && b != b'\n')
        .unwrap_or(buf.len());
    buf[start..].starts_with(b"HEAD ")
}

/// The value of the `Allow` header sent with 405.
pub const ALLOW: &str = "GET, HEAD";

/// True for the registered methods the server knows of (GET HEAD POST PUT DELETE CONNECT OPTIONS
/// TRACE PATCH): for those other than GET and HEAD the server answers 405 with
/// `Allow: GET, HEAD`; for every other token it answers 501.
pub fn is_registered_method(token: &str) -> bool {
    matches!(
        token,
        "GET" | "HEAD" | "POST" | "PUT" | "DELETE" | "CONNECT" | "OPTIONS" | "TRACE" | "PATCH"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classifies_tokens_case_sensitively() {
        assert_eq!(Method::from_token("GET"), Method::Get);
        assert_eq!(Method::from_token("HEAD"), Method::Head);
        assert_eq!(Method::from_token("get"), Method::Other);
        assert_eq!(Method::from_token("POST"), Method::Other);
    }

    #[test]
    fn registered_methods_get_405_others_501() {
        for m in [
            "GET", "HEAD", "POST", "PUT", "DELETE", "CONNECT", "OPTIONS", "TRACE", "PATCH",
        ] {
            assert!(is_registered_method(m), "{m}");
        }
        for m in ["get", "BREW", "PROPFIND", "", "GET "] {
            assert!(!is_registered_method(m), "{m}");
        }
    }

    #[test]
    fn head_is_recognised_in_heads_that_do_not_parse() {
        for yes in [
            &b"HEAD / HTTP/2.0\r\n\r\n"[..],
            b"HEAD /\xff HTTP/1.1\r\n",
            b"\r\n\nHEAD /x",
            b"HEAD ",
        ] {
            assert!(is_head_request(yes), "{:?}", String::from_utf8_lossy(yes));
        }
        for no in [
            &b""[..],
            b"HEA",
            b"HEAD",
            b"head / HTTP/1.1\r\n",
            b"HEADX / HTTP/1.1\r\n",
            b"GET / HTTP/1.1\r\nX: HEAD \r\n",
            b" HEAD / HTTP/1.1\r\n",
        ] {
            assert!(!is_head_request(no), "{:?}", String::from_utf8_lossy(no));
        }
    }
}
