//! A request's head from its decoded fields: pseudo-headers mapped to method, scheme,
//! authority and path, and the message rules of RFC 9113 §8.2 and §8.3.
//!
//! A request that breaks them is malformed: a stream error PROTOCOL_ERROR (§8.1.1), the
//! connection goes on. The checks run as HPACK emits each field, so a refused list is never
//! stored whole.

use crate::field::{check_value, regular_name};
use crate::frame::StreamId;

/// A request head, owned (it outlives the input buffer the fields were decoded from).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    /// The stream the request came on; answer on it.
    pub stream: StreamId,
    /// `:method`.
    pub method: String,
    /// `:scheme` (absent only for CONNECT).
    pub scheme: Option<String>,
    /// `:authority` (the HTTP/1.1 `Host`), if sent.
    pub authority: Option<String>,
    /// `:path`, with the query (absent only for CONNECT).
    pub path: Option<String>,
    /// The regular fields in order; names are lowercase.
    pub headers: Vec<(String, Vec<u8>)>,
    /// True when the HEADERS ended the stream: no body follows.
    pub end_stream: bool,
}

impl Request {
    /// The first value of field `name` (lowercase).
    pub fn header(&self, name: &str) -> Option<&[u8]> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| &v[..])
    }

    /// The `content-length` the request announced, if it is one valid number.
    pub(crate) fn content_length(&self) -> Result<Option<u64>, &'static str> {
        let mut found = None;
        for (n, v) in &self.headers {
            if n == "content-length" {
                let s = std::str::from_utf8(v).map_err(|_| "content-length not a number")?;
                let len: u64 = s.parse().map_err(|_| "content-length not a number")?;
                if found.is_some_and(|f| f != len) {
                    return Err("differing content-length values");
                }
                found = Some(len);
            }
        }
        Ok(found)
    }
}

/// Collects a request from fields as HPACK emits them; the first broken rule sticks.
#[derive(Debug)]
pub(crate) struct RequestBuilder {
    req: Request,
    method: bool,
    regular_seen: bool,
    error: Option<&'static str>,
}

impl RequestBuilder {
    pub(crate) fn new(stream: StreamId, end_stream: bool) -> Self {
        RequestBuilder {
            req: Request {
                stream,
                method: String::new(),
                scheme: None,
                authority: None,
                path: None,
                headers: Vec::new(),
                end_stream,
            },
            method: false,
            regular_seen: false,
            error: None,
        }
    }

    /// Takes one field.
    pub(crate) fn field(&mut self, name: &[u8], value: &[u8]) {
        if self.error.is_none()
            && let Err(e) = self.check(name, value)
        {
            self.error = Some(e);
        }
    }

    fn check(&mut self, name: &[u8], value: &[u8]) -> Result<(), &'static str> {
        check_value(value)?;
        if let Some(pseudo) = name.strip_prefix(b":") {
            if self.regular_seen {
                return Err("pseudo-header after a regular field");
            }
            let text = || {
                std::str::from_utf8(value)
                    .ok()
                    .filter(|s| s.bytes().all(|b| b.is_ascii_graphic()))
                    .map(str::to_owned)
                    .ok_or("pseudo-header value not visible ASCII")
            };
            let slot = match pseudo {
                b"method" => {
                    if self.method {
                        return Err("duplicate :method");
                    }
                    self.method = true;
                    self.req.method = text()?;
                    if self.req.method.is_empty() {
                        return Err("empty :method");
                    }
                    return Ok(());
                }
                b"scheme" => &mut self.req.scheme,
                b"authority" => &mut self.req.authority,
                b"path" => &mut self.req.path,
                _ => return Err("unknown or response pseudo-header"),
            };
            if slot.is_some() {
                return Err("duplicate pseudo-header");
            }
            *slot = Some(text()?);
            return Ok(());
        }
        self.regular_seen = true;
        let name = regular_name(name, value)?;
        self.req.headers.push((name, value.to_vec()));
        Ok(())
    }

    /// The request, or why it is malformed (§8.3.1).
    pub(crate) fn finish(self) -> Result<Request, &'static str> {
        if let Some(e) = self.error {
            return Err(e);
        }
        let r = self.req;
        if !self.method {
            return Err("missing :method");
        }
        if r.method == "CONNECT" {
            if r.scheme.is_some() || r.path.is_some() || r.authority.is_none() {
                return Err("CONNECT with :scheme or :path, or without :authority");
            }
            return Ok(r);
        }
        let (Some(_), Some(path)) = (&r.scheme, &r.path) else {
            return Err("missing :scheme or :path");
        };
        if !(path.starts_with('/') || (path == "*" && r.method == "OPTIONS")) {
            return Err(":path not origin-form");
        }
        r.content_length()?;
        Ok(r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn build(fields: &[(&str, &str)]) -> Result<Request, &'static str> {
        let mut b = RequestBuilder::new(StreamId(1), true);
        for (n, v) in fields {
            b.field(n.as_bytes(), v.as_bytes());
        }
        b.finish()
    }

    const GET: [(&str, &str); 4] = [
        (":method", "GET"),
        (":scheme", "https"),
        (":authority", "example.com"),
        (":path", "/a?b"),
    ];

    #[test]
    fn a_plain_get() {
        let mut f = GET.to_vec();
        f.push(("accept", "*/*"));
        let r = build(&f).unwrap();
        assert_eq!(r.method, "GET");
        assert_eq!(r.path.as_deref(), Some("/a?b"));
        assert_eq!(r.authority.as_deref(), Some("example.com"));
        assert_eq!(r.header("accept"), Some(&b"*/*"[..]));
    }

    #[test]
    fn malformed_requests() {
        let with = |extra: (&'static str, &'static str)| {
            let mut f = GET.to_vec();
            f.push(extra);
            build(&f)
        };
        assert!(with(("Accept", "x")).is_err(), "uppercase name");
        assert!(with(("connection", "close")).is_err());
        assert!(with(("te", "gzip")).is_err());
        assert!(with(("te", "trailers")).is_ok());
        assert!(with(("x", "a\r\nb")).is_err());
        assert!(with(("x", " a")).is_err());
        assert!(with((":status", "200")).is_err());
        assert!(with((":path", "/again")).is_err(), "duplicate");
        assert!(with(("content-length", "x")).is_err());
        assert!(
            build(&[(":method", "GET"), (":scheme", "https")]).is_err(),
            "no :path"
        );
        assert!(
            build(&[(":scheme", "https"), (":path", "/")]).is_err(),
            "no :method"
        );
        assert!(build(&[(":method", "GET"), (":scheme", "h"), (":path", "x")]).is_err());
        assert!(
            build(&[(":method", "GET"), ("a", "b"), (":path", "/")]).is_err(),
            "order"
        );
        assert!(build(&[(":method", "OPTIONS"), (":scheme", "h"), (":path", "*")]).is_ok());
        assert!(build(&[(":method", "CONNECT"), (":authority", "h:443")]).is_ok());
        assert!(build(&[(":method", "CONNECT"), (":authority", "h"), (":path", "/")]).is_err());
    }
}
