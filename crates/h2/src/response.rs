//! A response's head from its decoded fields, for the client side: `:status` and the
//! regular fields, with the rules of RFC 9113 §8.3.2 and §8.2.
//!
//! A response that breaks them is malformed: a stream error PROTOCOL_ERROR (§8.1.1).
//!
//! A response given back to its connection ([`crate::ClientConn::recycle`]) is decoded
//! into again: its fields' strings are overwritten in place, so a client that gets the
//! same fields on every response (a server's `server`, `date`, `content-type`, ...)
//! allocates nothing for them. Without it, the owned fields were about a dozen
//! allocations and frees per response: against nginx (50 connections × 10 streams over
//! TLS), 23% of `load --h2`'s CPU samples were in libc's malloc and free, 13% with
//! reuse (perf).

use crate::field::{check_value, regular_name};
use crate::stream_id::StreamId;

/// A response head, owned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Response {
    /// The stream of the request it answers.
    pub stream: StreamId,
    /// `:status`, 200 to 999 (interim 1xx heads are not reported).
    pub status: u16,
    /// The regular fields in order; names are lowercase.
    pub headers: Vec<(String, Vec<u8>)>,
    /// True when the HEADERS ended the stream: no body follows.
    pub end_stream: bool,
}

impl Response {
    /// The first value of field `name` (lowercase).
    pub fn header(&self, name: &str) -> Option<&[u8]> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| &v[..])
    }
}

/// Collects a response from fields as HPACK emits them; the first broken rule sticks.
#[derive(Debug)]
pub(crate) struct ResponseBuilder {
    resp: Response,
    /// Regular fields taken so far: the first `fields` entries of `resp.headers` are this
    /// response's, the rest a reused response's, to be overwritten or dropped.
    fields: usize,
    status: bool,
    regular_seen: bool,
    error: Option<&'static str>,
}

impl ResponseBuilder {
    /// A builder for the response on `stream`, decoding into `spare`'s buffers when given.
    pub(crate) fn new(stream: StreamId, end_stream: bool, spare: Option<Response>) -> Self {
        let mut resp = spare.unwrap_or_else(|| Response {
            stream,
            status: 0,
            headers: Vec::new(),
            end_stream,
        });
        resp.stream = stream;
        resp.status = 0;
        resp.end_stream = end_stream;
        ResponseBuilder {
            resp,
            fields: 0,
            status: false,
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
        if name == b":status" {
            if self.regular_seen || self.status {
                return Err(":status repeated or after a regular field");
            }
            let [a, b, c] = value else {
                return Err(":status not three digits");
            };
            if ![a, b, c].iter().all(|d| d.is_ascii_digit()) || *a == b'0' {
                return Err(":status not three digits");
            }
            self.status = true;
            self.resp.status =
                u16::from(a - b'0') * 100 + u16::from(b - b'0') * 10 + u16::from(c - b'0');
            return Ok(());
        }
        if name.starts_with(b":") {
            return Err("request or unknown pseudo-header in a response");
        }
        self.regular_seen = true;
        let name = regular_name(name, value)?;
        // A token is ASCII (checked by `regular_name`), so nothing is lost.
        let name = String::from_utf8_lossy(name);
        match self.resp.headers.get_mut(self.fields) {
            Some((n, v)) => {
                n.clear();
                n.push_str(&name);
                v.clear();
                v.extend_from_slice(value);
            }
            None => self.resp.headers.push((name.into_owned(), value.to_vec())),
        }
        self.fields += 1;
        Ok(())
    }

    /// The response, or why it is malformed.
    pub(crate) fn finish(mut self) -> Result<Response, &'static str> {
        if let Some(e) = self.error {
            return Err(e);
        }
        if !self.status {
            return Err("missing :status");
        }
        self.resp.headers.truncate(self.fields);
        Ok(self.resp)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn build(fields: &[(&str, &str)]) -> Result<Response, &'static str> {
        build_into(None, fields)
    }

    fn build_into(
        spare: Option<Response>,
        fields: &[(&str, &str)],
    ) -> Result<Response, &'static str> {
        let mut b = ResponseBuilder::new(StreamId(1), false, spare);
        for (n, v) in fields {
            b.field(n.as_bytes(), v.as_bytes());
        }
        b.finish()
    }

    /// A reused response holds exactly the new response's fields, whether it had more
    /// or fewer before, and keeps its strings' buffers.
    #[test]
    fn a_reused_response_holds_only_the_new_fields() {
        let first = build(&[(":status", "200"), ("server", "nginx"), ("etag", "\"abc\"")]).unwrap();
        let name_buf = first.headers[0].0.as_ptr();
        let second = build_into(Some(first), &[(":status", "404"), ("server", "h2o")]).unwrap();
        assert_eq!(second.status, 404);
        assert_eq!(second.headers, [("server".to_string(), b"h2o".to_vec())]);
        assert_eq!(
            second.headers[0].0.as_ptr(),
            name_buf,
            "the name's buffer was reused"
        );
        let third = build_into(
            Some(second),
            &[(":status", "200"), ("a", "1"), ("b", "2"), ("c", "3")],
        )
        .unwrap();
        assert_eq!(third.header("b"), Some(&b"2"[..]));
        assert_eq!(third.headers.len(), 3);
        assert!(build_into(Some(third), &[("server", "x")]).is_err());
    }

    #[test]
    fn status_and_fields() {
        let r = build(&[(":status", "404"), ("content-type", "text/html")]).unwrap();
        assert_eq!(r.status, 404);
        assert_eq!(r.header("content-type"), Some(&b"text/html"[..]));
        for bad in [
            &[("content-type", "x")][..],
            &[(":status", "20")],
            &[(":status", "abc")],
            &[(":status", "099")],
            &[(":status", "200"), (":status", "200")],
            &[(":status", "200"), (":path", "/")],
            &[(":status", "200"), ("Server", "x")],
        ] {
            assert!(build(bad).is_err(), "{bad:?}");
        }
    }
}
