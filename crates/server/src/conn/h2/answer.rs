//! An HTTP/2 response as the one handler writes it ([`Out`]): the status and
//! the fields of its head, kept for HPACK, and the small body behind it, kept
//! for DATA. Nothing is written as HTTP/1.1 and read back: the handler's typed
//! head (`ResponseHead`, or a cached file's `FileFields`) gives its fields
//! here one by one, with lowercase names and without the connection fields
//! HTTP/2 has no use for (RFC 9113 §8.2.2).
//!
//! Its buffers live as long as the connection, so an answer allocates nothing
//! once the first few have sized them.

use std::ops::Range;

use servelab_http::response::OkStart;
use servelab_http::{FileFields, ResponseHead};

use crate::runtime::shared::Shared;
use crate::site::response::{Out, Persist};

/// One response's head and small body; see the module docs.
#[derive(Debug, Default)]
pub(super) struct Answer {
    /// `:status`.
    pub(super) status: u16,
    /// The fields' names and values, back to back.
    text: Vec<u8>,
    /// Each field: its name and its value in `text`.
    fields: Vec<(Range<u32>, Range<u32>)>,
    /// Body bytes the handler wrote behind the head.
    pub(super) body: Vec<u8>,
}

impl Answer {
    /// Empties it for the next response, keeping the buffers.
    pub(super) fn clear(&mut self) {
        self.status = 0;
        self.text.clear();
        self.fields.clear();
        self.body.clear();
    }

    /// The head's fields, in order.
    pub(super) fn fields(&self) -> impl Iterator<Item = (&[u8], &[u8])> {
        let at = |r: &Range<u32>| &self.text[r.start as usize..r.end as usize];
        self.fields.iter().map(move |(n, v)| (at(n), at(v)))
    }

    fn push(&mut self, name: &[u8], value: &[u8]) {
        let mut span = |bytes: &[u8]| {
            let start = self.text.len() as u32;
            self.text.extend_from_slice(bytes);
            start..self.text.len() as u32
        };
        let field = (span(name), span(value));
        self.fields.push(field);
    }
}

impl Out for Answer {
    fn head(&mut self, head: &ResponseHead<'_>) {
        self.status = head.status.code();
        head.each_field(|name, value| self.push(name.as_bytes(), value));
    }

    fn file_ok(&mut self, fields: &FileFields, start: &OkStart, _persist: Persist) {
        self.status = 200;
        fields.each_field(start.date(), |name, value| {
            self.push(name.as_bytes(), value)
        });
    }

    fn add_fields(&mut self, encoding: Option<&str>, vary: bool, extra: Option<&Shared>) {
        if let Some(e) = encoding {
            self.push(b"content-encoding", e.as_bytes());
        }
        if vary {
            self.push(b"vary", b"Accept-Encoding");
        }
        // The `--header` fields as given; `ServerConn` lowercases the names.
        for h in extra.map_or(&[][..], |site| site.config.headers.as_slice()) {
            self.push(h.name().as_bytes(), h.value().as_bytes());
        }
    }

    fn add_challenge(&mut self) {
        // `CHALLENGE` is the HTTP/1.1 line: its value without name and CRLF.
        const NAME: &[u8] = b"WWW-Authenticate: ";
        let line = crate::content::auth::CHALLENGE;
        self.push(b"www-authenticate", &line[NAME.len()..line.len() - 2]);
    }

    fn body(&mut self, bytes: &[u8]) {
        self.body.extend_from_slice(bytes);
    }
}

#[cfg(test)]
mod tests {
    use servelab_http::{Parse, parse_request};

    use super::*;
    use crate::config::Config;
    use crate::site::handler::{self, Authorization};

    /// Fields as (lowercase name, value).
    type Fields = Vec<(Vec<u8>, Vec<u8>)>;

    /// An HTTP/1.1 response's status, fields (lowercase names, no connection
    /// field) and body.
    fn split(resp: &[u8]) -> (u16, Fields, Vec<u8>) {
        let end = resp.windows(4).position(|w| w == b"\r\n\r\n").unwrap();
        let head = std::str::from_utf8(&resp[..end]).unwrap();
        let mut lines = head.split("\r\n");
        let status = lines.next().unwrap()[9..12].parse().unwrap();
        let fields = lines
            .map(|l| l.split_once(": ").unwrap())
            .filter(|(n, _)| !n.eq_ignore_ascii_case("connection"))
            .map(|(n, v)| (n.to_ascii_lowercase().into_bytes(), v.as_bytes().to_vec()))
            .collect();
        (status, fields, resp[end + 4..].to_vec())
    }

    /// The one handler gives HTTP/2 what it writes for HTTP/1.1: the same
    /// status, fields and body, for every kind of answer it makes.
    #[test]
    fn an_answer_holds_what_the_http1_response_says() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path();
        std::fs::write(p.join("a.txt"), "hello world").unwrap();
        std::fs::write(p.join("app.js"), "let x = 1;").unwrap();
        std::fs::write(p.join("app.js.gz"), "gzipped").unwrap();
        std::fs::create_dir(p.join("d")).unwrap();
        let requests = [
            "GET /a.txt",
            "HEAD /a.txt",
            "GET /a.txt\r\nRange: bytes=0-1",
            "GET /a.txt\r\nRange: bytes=0-0,2-3",
            "GET /a.txt\r\nRange: bytes=99-",
            "GET /a.txt\r\nIf-Modified-Since: Fri, 01 Jan 2100 00:00:00 GMT",
            "GET /a.txt\r\nIf-Match: \"nope\"",
            "GET /app.js\r\nAccept-Encoding: gzip",
            "GET /missing",
            "GET /d",
            "GET /d/",
            "POST /a.txt",
            "BREW /a.txt",
        ];
        let mut checked = 0;
        for headers in [&[][..], &["X-Frame-Options: DENY"]] {
            let mut config = Config::new(p);
            config.headers = headers.iter().map(|h| h.parse().unwrap()).collect();
            let site = Shared::new(config).unwrap();
            let mut w = site.local();
            w.clock.tick();
            let persist = Persist {
                keep_alive: true,
                http10: false,
            };
            for request in requests {
                let text = format!("{request}\r\nHost: t\r\n\r\n");
                let (line, rest) = text.split_once("\r\n").unwrap();
                let text = format!("{line} HTTP/1.1\r\n{rest}");
                let Ok(Parse::Complete(req)) = parse_request(text.as_bytes(), &site.config.limits)
                else {
                    panic!("{text:?} parses");
                };
                let auth = Authorization::Head(text.as_bytes());
                let mut bytes = Vec::new();
                let one = handler::respond(&req, auth, &site, &mut w, persist, &mut bytes);
                let mut answer = Answer::default();
                let two = handler::respond(&req, auth, &site, &mut w, persist, &mut answer);
                assert_eq!((one.status, one.body_len), (two.status, two.body_len));
                let (status, fields, body) = split(&bytes);
                assert_eq!(answer.status, status, "{text:?}");
                let got: Vec<_> = answer
                    .fields()
                    .map(|(n, v)| (n.to_ascii_lowercase(), v.to_vec()))
                    .collect();
                assert_eq!(got, fields, "{text:?}");
                assert_eq!(answer.body, body, "{text:?}");
                checked += 1;
            }
        }
        assert_eq!(checked, 2 * 13);
    }
}
