//! A request's head from its decoded fields: pseudo-headers mapped to method, scheme,
//! authority and path, and the message rules of RFC 9113 §8.2 and §8.3.
//!
//! A request that breaks them is malformed: a stream error PROTOCOL_ERROR (§8.1.1), the
//! connection goes on. The checks run as HPACK emits each field, so a refused list is never
//! stored whole.

use std::ops::Range;

use crate::field::{all_visible, check_value, regular_name};
use crate::stream_id::StreamId;

/// A request head, owned (it outlives the input buffer the fields were decoded from).
///
/// Its text is kept in two buffers, not a string per field: the pseudo-header values and the
/// field names (ASCII, checked) in one, the field values (any octets but NUL, CR and LF) in
/// the other, each field a pair of ranges. A request of a dozen fields was two dozen
/// allocations and as many frees, about a tenth of the instructions of an HTTP/2 request to
/// `serve` (`bench/callgrind.sh --h2`); a driver that gives the request back with
/// [`crate::ServerConn::recycle`] when it is done makes the next one with none.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    /// The stream the request came on; answer on it.
    pub stream: StreamId,
    /// True when the HEADERS ended the stream: no body follows.
    pub end_stream: bool,
    /// The pseudo-header values and the field names, back to back.
    text: String,
    /// The field values, back to back.
    values: Vec<u8>,
    method: Range<u32>,
    scheme: Option<Range<u32>>,
    authority: Option<Range<u32>>,
    path: Option<Range<u32>>,
    /// Each regular field: its name in `text`, its value in `values`.
    fields: Vec<(Range<u32>, Range<u32>)>,
    /// Some value holds a control octet other than HTAB, which RFC 9113 lets through (it
    /// refuses only NUL, CR and LF) but an HTTP/1.1 head may not carry.
    control_in_values: bool,
}

fn span(r: &Range<u32>) -> Range<usize> {
    r.start as usize..r.end as usize
}

impl Request {
    /// An empty request on `stream`, keeping `self`'s buffers (the text's is
    /// handed to the builder).
    fn reset(&mut self, stream: StreamId, end_stream: bool) {
        self.stream = stream;
        self.end_stream = end_stream;
        self.values.clear();
        self.method = 0..0;
        self.scheme = None;
        self.authority = None;
        self.path = None;
        self.fields.clear();
        self.control_in_values = false;
    }

    /// `:method`.
    pub fn method(&self) -> &str {
        &self.text[span(&self.method)]
    }

    /// `:scheme` (absent only for CONNECT).
    pub fn scheme(&self) -> Option<&str> {
        self.scheme.as_ref().map(|r| &self.text[span(r)])
    }

    /// `:authority` (the HTTP/1.1 `Host`), if sent.
    pub fn authority(&self) -> Option<&str> {
        self.authority.as_ref().map(|r| &self.text[span(r)])
    }

    /// `:path`, with the query (absent only for CONNECT).
    pub fn path(&self) -> Option<&str> {
        self.path.as_ref().map(|r| &self.text[span(r)])
    }

    /// The regular fields in order; names are lowercase.
    pub fn headers(&self) -> impl ExactSizeIterator<Item = (&str, &[u8])> + Clone + '_ {
        self.fields
            .iter()
            .map(|(n, v)| (&self.text[span(n)], &self.values[span(v)]))
    }

    /// The first value of field `name` (lowercase).
    pub fn header(&self, name: &str) -> Option<&[u8]> {
        self.headers().find(|(n, _)| *n == name).map(|(_, v)| v)
    }

    /// True when some field value holds a control octet other than HTAB (which HTTP/2
    /// allows and HTTP/1.1 does not: a server that holds both to one rule refuses it).
    pub fn control_in_values(&self) -> bool {
        self.control_in_values
    }

    /// Octets its buffers hold (for [`crate::ServerConn::recycle`]'s bound).
    pub(crate) fn capacity(&self) -> usize {
        self.text.capacity()
            + self.values.capacity()
            + self.fields.capacity() * std::mem::size_of::<(Range<u32>, Range<u32>)>()
    }

    /// The `content-length` the request announced, if it is one valid number.
    pub(crate) fn content_length(&self) -> Result<Option<u64>, &'static str> {
        let mut found = None;
        for (n, v) in self.headers() {
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

/// Appends `s` to `text`, giving its range.
fn push(text: &mut Vec<u8>, s: &[u8]) -> Range<u32> {
    let start = text.len() as u32;
    text.extend_from_slice(s);
    start..text.len() as u32
}

/// Collects a request from fields as HPACK emits them; the first broken rule sticks.
#[derive(Debug)]
pub(crate) struct RequestBuilder {
    req: Request,
    /// The request's text while it is collected: its fields are checked to be ASCII one by
    /// one, and it becomes the request's `String` once, in [`RequestBuilder::finish`] (a
    /// UTF-8 check per field was about 7% of the instructions of a request to `serve`).
    text: Vec<u8>,
    method: bool,
    regular_seen: bool,
    error: Option<&'static str>,
}

impl RequestBuilder {
    /// A builder for a request on `stream`, in the buffers of `spare` (a request given back
    /// by the driver) when there is one.
    pub(crate) fn new(stream: StreamId, end_stream: bool, spare: Option<Request>) -> Self {
        let (req, mut text) = match spare {
            Some(mut r) => {
                r.reset(stream, end_stream);
                let text = std::mem::take(&mut r.text).into_bytes();
                (r, text)
            }
            None => (
                Request {
                    stream,
                    end_stream,
                    text: String::new(),
                    values: Vec::new(),
                    method: 0..0,
                    scheme: None,
                    authority: None,
                    path: None,
                    fields: Vec::new(),
                    control_in_values: false,
                },
                Vec::new(),
            ),
        };
        text.clear();
        RequestBuilder {
            req,
            text,
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
        if let Some(pseudo) = name.strip_prefix(b":") {
            if self.regular_seen {
                return Err("pseudo-header after a regular field");
            }
            // Visible ASCII is a valid field value too: no other check of it.
            if !all_visible(value) {
                return Err("pseudo-header value not visible ASCII");
            }
            let text = value;
            let slot = match pseudo {
                b"method" => {
                    if self.method {
                        return Err("duplicate :method");
                    }
                    if text.is_empty() {
                        return Err("empty :method");
                    }
                    self.method = true;
                    self.req.method = push(&mut self.text, text);
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
            *slot = Some(push(&mut self.text, text));
            return Ok(());
        }
        self.regular_seen = true;
        self.req.control_in_values |= check_value(value)?;
        let name = regular_name(name, value)?;
        let name = push(&mut self.text, name);
        let start = self.req.values.len() as u32;
        self.req.values.extend_from_slice(value);
        let value = start..self.req.values.len() as u32;
        self.req.fields.push((name, value));
        Ok(())
    }

    /// The request and the `content-length` it announced, or why it is malformed (§8.3.1).
    pub(crate) fn finish(self) -> Result<(Request, Option<u64>), &'static str> {
        if let Some(e) = self.error {
            return Err(e);
        }
        if !self.method {
            return Err("missing :method");
        }
        let mut r = self.req;
        // Every byte was checked to be visible ASCII or a token: this cannot fail.
        r.text = String::from_utf8(self.text).map_err(|_| "field not ASCII")?;
        let method = r.method();
        if method == "CONNECT" {
            if r.scheme.is_some() || r.path.is_some() || r.authority.is_none() {
                return Err("CONNECT with :scheme or :path, or without :authority");
            }
            let len = r.content_length()?;
            return Ok((r, len));
        }
        let (Some(_), Some(path)) = (r.scheme(), r.path()) else {
            return Err("missing :scheme or :path");
        };
        if !(path.starts_with('/') || (path == "*" && method == "OPTIONS")) {
            return Err(":path not origin-form");
        }
        let len = r.content_length()?;
        Ok((r, len))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn build(fields: &[(&str, &str)]) -> Result<Request, &'static str> {
        let mut b = RequestBuilder::new(StreamId(1), true, None);
        for (n, v) in fields {
            b.field(n.as_bytes(), v.as_bytes());
        }
        b.finish().map(|(r, _)| r)
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
        assert_eq!(r.method(), "GET");
        assert_eq!(r.path(), Some("/a?b"));
        assert_eq!(r.authority(), Some("example.com"));
        assert_eq!(r.header("accept"), Some(&b"*/*"[..]));
        assert!(!r.control_in_values());
    }

    /// A request decoded into a recycled one's buffers is the request decoded
    /// afresh: nothing of the old one is left.
    #[test]
    fn a_recycled_request_keeps_nothing_of_the_last() {
        let mut old = GET.to_vec();
        old.push(("cookie", "a\x01b"));
        let old = build(&old).unwrap();
        assert!(old.control_in_values());
        let fields = [(":method", "HEAD"), (":scheme", "http"), (":path", "/")];
        let mut b = RequestBuilder::new(StreamId(3), false, Some(old));
        for (n, v) in fields {
            b.field(n.as_bytes(), v.as_bytes());
        }
        let (reused, _) = b.finish().unwrap();
        let mut b = RequestBuilder::new(StreamId(3), false, None);
        for (n, v) in fields {
            b.field(n.as_bytes(), v.as_bytes());
        }
        assert_eq!(reused, b.finish().unwrap().0);
        assert_eq!((reused.method(), reused.authority()), ("HEAD", None));
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
