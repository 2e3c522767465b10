//! A response's head from its decoded fields, for the client side: `:status` and the
//! regular fields, with the rules of RFC 9113 §8.3.2 and §8.2.
//!
//! A response that breaks them is malformed: a stream error PROTOCOL_ERROR (§8.1.1).

use crate::field::{check_value, regular_name};
use crate::frame::StreamId;

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
    status: bool,
    regular_seen: bool,
    error: Option<&'static str>,
}

impl ResponseBuilder {
    pub(crate) fn new(stream: StreamId, end_stream: bool) -> Self {
        ResponseBuilder {
            resp: Response {
                stream,
                status: 0,
                headers: Vec::new(),
                end_stream,
            },
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
        let name = String::from_utf8_lossy(name).into_owned();
        self.resp.headers.push((name, value.to_vec()));
        Ok(())
    }

    /// The response, or why it is malformed.
    pub(crate) fn finish(self) -> Result<Response, &'static str> {
        if let Some(e) = self.error {
            return Err(e);
        }
        if !self.status {
            return Err("missing :status");
        }
        Ok(self.resp)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn build(fields: &[(&str, &str)]) -> Result<Response, &'static str> {
        let mut b = ResponseBuilder::new(StreamId(1), false);
        for (n, v) in fields {
            b.field(n.as_bytes(), v.as_bytes());
        }
        b.finish()
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
