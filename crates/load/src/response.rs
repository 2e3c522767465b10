//! An incremental, strict HTTP/1.1 response parser that counts bodies without copying.
//!
//! The event loop feeds it whatever `recv` returned, from a buffer shared by all
//! connections of the thread. The head is parsed with `httparse::Response`; only when
//! a head is split across reads (rare: heads are small) are its bytes copied into the
//! connection's own buffer. The body is never copied: a `Content-Length` body is a
//! countdown, a chunked body goes through servelab-http's [`ChunkedDecoder`] (the
//! fuzzed one the server uses for request bodies, so that one decoder of the
//! framing serves both sides), and a body without either runs until the server
//! closes.
//!
//! Strictness is the point (issue 4: "a short or garbled response is an error, not a
//! success"): a bad status line, a bad or conflicting `Content-Length`, a bad chunk
//! size and an EOF inside a response are [`Malformed`]; bytes after a complete
//! response are reported as unused (`Feed::Complete { used }`), and the event loop,
//! which never pipelines, counts them as malformed too.

use servelab_http::ChunkedDecoder;

/// Why a response is not a valid HTTP/1.1 response.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Malformed {
    /// The status line or a header line does not parse.
    Head,
    /// The head is larger than [`MAX_HEAD`].
    HeadTooLarge,
    /// `Content-Length` is not a number, or two of them disagree.
    ContentLength,
    /// A chunk size line or chunk terminator is wrong.
    Chunk,
    /// The server closed the connection inside a response.
    Short,
}

/// The largest response head accepted, in bytes.
pub(crate) const MAX_HEAD: usize = 16 * 1024;

/// What a call to [`ResponseParser::feed`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Feed {
    /// Every byte was consumed and the response is not complete yet.
    Incomplete,
    /// The response is complete; `used` bytes of the input belonged to it.
    Complete {
        /// How many bytes of this input the response used.
        used: usize,
    },
}

#[derive(Debug, Clone)]
enum State {
    Head,
    Length {
        remaining: u64,
    },
    /// A chunked body: the decoder checks the framing and finds its end.
    Chunked(ChunkedDecoder),
    UntilClose,
    Done,
}

/// Parses one response at a time; [`reset`](ResponseParser::reset) before the next.
#[derive(Debug)]
pub(crate) struct ResponseParser {
    state: State,
    /// Bytes of a head split across reads (empty on the fast path).
    partial: Vec<u8>,
    status: u16,
    keep_alive: bool,
    started: bool,
}

impl Default for ResponseParser {
    fn default() -> Self {
        ResponseParser {
            state: State::Head,
            partial: Vec::new(),
            status: 0,
            keep_alive: true,
            started: false,
        }
    }
}

impl ResponseParser {
    /// Prepares for the next response on the same connection.
    #[inline]
    pub(crate) fn reset(&mut self) {
        self.state = State::Head;
        self.partial.clear();
        self.status = 0;
        self.keep_alive = true;
        self.started = false;
    }

    /// The status code (valid once the head is parsed).
    pub(crate) fn status(&self) -> u16 {
        self.status
    }

    /// Whether the connection may carry another request after this response.
    pub(crate) fn keep_alive(&self) -> bool {
        self.keep_alive
    }

    /// Whether any byte of this response has arrived.
    #[cfg(test)]
    pub(crate) fn started(&self) -> bool {
        self.started
    }

    /// Consumes response bytes; `head_request` says the request was HEAD (no body).
    pub(crate) fn feed(&mut self, data: &[u8], head_request: bool) -> Result<Feed, Malformed> {
        if !data.is_empty() {
            self.started = true;
        }
        let mut pos = 0;
        loop {
            match &mut self.state {
                State::Head => {
                    let used = self.parse_head(&data[pos..], head_request)?;
                    match used {
                        None => return Ok(Feed::Incomplete),
                        Some(n) => pos += n,
                    }
                }
                &mut State::Length { remaining } => {
                    let avail = (data.len() - pos) as u64;
                    if avail >= remaining {
                        pos += remaining as usize;
                        self.state = State::Done;
                    } else {
                        self.state = State::Length {
                            remaining: remaining - avail,
                        };
                        return Ok(Feed::Incomplete);
                    }
                }
                State::Chunked(decoder) => {
                    let (n, done) = decoder.feed(&data[pos..]).map_err(|_| Malformed::Chunk)?;
                    pos += n;
                    if done {
                        self.state = State::Done;
                    } else if pos == data.len() {
                        return Ok(Feed::Incomplete);
                    }
                }
                State::UntilClose => return Ok(Feed::Incomplete),
                State::Done => return Ok(Feed::Complete { used: pos }),
            }
        }
    }

    /// The server closed the connection: completes a read-until-close body, or
    /// says why the response is short. `Ok(false)`: no byte of a response arrived.
    pub(crate) fn eof(&mut self) -> Result<bool, Malformed> {
        match self.state {
            State::UntilClose | State::Done => {
                self.state = State::Done;
                Ok(true)
            }
            State::Head if !self.started => Ok(false),
            _ => Err(Malformed::Short),
        }
    }

    /// Parses the head from `data` (plus any earlier partial bytes); returns how
    /// many bytes of `data` the head used, or `None` when it needs more.
    fn parse_head(&mut self, data: &[u8], head_request: bool) -> Result<Option<usize>, Malformed> {
        // Uninitialised header slots: initialising 48 of them would cost a 1.5 KiB
        // memset per response on the hot path.
        let mut headers = [const { std::mem::MaybeUninit::<httparse::Header<'_>>::uninit() }; 48];
        let mut resp = httparse::Response::new(&mut []);
        let earlier = self.partial.len();
        let buf: &[u8] = if earlier == 0 {
            data
        } else {
            // Rare: a head split across reads. `partial` never exceeds MAX_HEAD
            // (checked below), so this copy is bounded by one read.
            self.partial.extend_from_slice(data);
            &self.partial
        };
        let parsed = httparse::ParserConfig::default().parse_response_with_uninit_headers(
            &mut resp,
            buf,
            &mut headers,
        );
        let head_len = match parsed {
            Ok(httparse::Status::Complete(n)) => n,
            Ok(httparse::Status::Partial) => {
                if buf.len() > MAX_HEAD {
                    return Err(Malformed::HeadTooLarge);
                }
                if earlier == 0 {
                    self.partial.extend_from_slice(data);
                }
                return Ok(None);
            }
            Err(_) => return Err(Malformed::Head),
        };
        if head_len > MAX_HEAD {
            return Err(Malformed::HeadTooLarge);
        }
        let status = resp.code.unwrap_or(0);
        let version = resp.version.unwrap_or(1);
        let mut length: Option<u64> = None;
        let mut chunked = false;
        let mut keep_alive = version == 1;
        for h in resp.headers.iter() {
            if h.name.eq_ignore_ascii_case("content-length") {
                let v = parse_length(h.value).ok_or(Malformed::ContentLength)?;
                if length.is_some_and(|l| l != v) {
                    return Err(Malformed::ContentLength);
                }
                length = Some(v);
            } else if h.name.eq_ignore_ascii_case("transfer-encoding") {
                let v = std::str::from_utf8(h.value).map_err(|_| Malformed::Head)?;
                chunked = v
                    .rsplit(',')
                    .next()
                    .is_some_and(|last| last.trim().eq_ignore_ascii_case("chunked"));
            } else if h.name.eq_ignore_ascii_case("connection") {
                for token in h.value.split(|&b| b == b',') {
                    let t = token.trim_ascii();
                    if t.eq_ignore_ascii_case(b"close") {
                        keep_alive = false;
                    } else if t.eq_ignore_ascii_case(b"keep-alive") {
                        keep_alive = true;
                    }
                }
            }
        }
        // How many bytes of `data` the head used: all of it minus what follows the head.
        let used = head_len - earlier;
        self.partial.clear();
        if (100..200).contains(&status) {
            if status == 101 {
                return Err(Malformed::Head);
            }
            // An interim response (100 Continue, 103 Early Hints): the real one follows.
            self.state = State::Head;
            return Ok(Some(used));
        }
        self.status = status;
        self.keep_alive = keep_alive;
        self.state = if head_request || status == 204 || status == 304 {
            State::Done
        } else if chunked {
            // A response body has no size limit here: it is counted, not kept.
            State::Chunked(ChunkedDecoder::new(u64::MAX))
        } else if let Some(n) = length {
            if n == 0 {
                State::Done
            } else {
                State::Length { remaining: n }
            }
        } else {
            self.keep_alive = false;
            State::UntilClose
        };
        Ok(Some(used))
    }
}

fn parse_length(v: &[u8]) -> Option<u64> {
    let v = v.trim_ascii();
    if v.is_empty() || v.len() > 19 || !v.iter().all(u8::is_ascii_digit) {
        return None;
    }
    std::str::from_utf8(v).ok()?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn whole(bytes: &[u8], head: bool) -> Result<(Feed, u16, bool), Malformed> {
        let mut p = ResponseParser::default();
        let f = p.feed(bytes, head)?;
        Ok((f, p.status(), p.keep_alive()))
    }

    /// Feeds the bytes one at a time, as the worst network would.
    fn bytewise(bytes: &[u8], head: bool) -> Result<Feed, Malformed> {
        let mut p = ResponseParser::default();
        for (i, b) in bytes.iter().enumerate() {
            if let Feed::Complete { used } = p.feed(std::slice::from_ref(b), head)? {
                assert_eq!(used, 1);
                return Ok(Feed::Complete { used: i + 1 });
            }
        }
        Ok(Feed::Incomplete)
    }

    #[test]
    fn content_length_body_in_one_read_and_bytewise() {
        let r = b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello";
        assert_eq!(
            whole(r, false).unwrap(),
            (Feed::Complete { used: r.len() }, 200, true)
        );
        assert_eq!(
            bytewise(r, false).unwrap(),
            Feed::Complete { used: r.len() }
        );
    }

    #[test]
    fn extra_bytes_are_reported_as_unused() {
        let r = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhiXX";
        assert_eq!(
            whole(r, false).unwrap().0,
            Feed::Complete { used: r.len() - 2 }
        );
    }

    #[test]
    fn head_and_204_have_no_body() {
        let r = b"HTTP/1.1 200 OK\r\nContent-Length: 500\r\n\r\n";
        assert_eq!(whole(r, true).unwrap().0, Feed::Complete { used: r.len() });
        assert_eq!(whole(r, false).unwrap().0, Feed::Incomplete);
        let r = b"HTTP/1.1 204 No Content\r\n\r\n";
        assert_eq!(whole(r, false).unwrap().0, Feed::Complete { used: r.len() });
    }

    #[test]
    fn chunked_with_extensions_and_trailers() {
        let r = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;x=y\r\nhello\r\nA\r\n0123456789\r\n0\r\nX-T: 1\r\n\r\n";
        assert_eq!(whole(r, false).unwrap().0, Feed::Complete { used: r.len() });
        assert_eq!(
            bytewise(r, false).unwrap(),
            Feed::Complete { used: r.len() }
        );
    }

    #[test]
    fn bad_chunks_are_malformed() {
        for r in [
            &b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n"[..],
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nabX",
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n\r\n",
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nffffffffffffffffff\r\n",
        ] {
            assert_eq!(whole(r, false).unwrap_err(), Malformed::Chunk);
        }
    }

    /// The chunked framing is read by servelab-http's fuzzed decoder (issue
    /// 18), which is stricter than the one this parser had: a folded trailer
    /// line, which the old decoder let through, is malformed.
    #[test]
    fn chunked_framing_is_servelab_http_s_and_as_strict() {
        let folded = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1\r\na\r\n0\r\n folded: x\r\n\r\n";
        assert_eq!(whole(folded, false).unwrap_err(), Malformed::Chunk);
        let zeros =
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0005\r\nhello\r\n0\r\n\r\n";
        assert_eq!(
            bytewise(zeros, false).unwrap(),
            Feed::Complete { used: zeros.len() }
        );
        // Bytes after the body are the next response's, reported unused.
        let mut two = zeros.to_vec();
        two.extend_from_slice(b"HTTP/1.1 200 OK");
        assert_eq!(
            whole(&two, false).unwrap().0,
            Feed::Complete { used: zeros.len() }
        );
    }

    #[test]
    fn garbage_and_bad_lengths_are_malformed() {
        assert_eq!(
            whole(b"HTTX/1.1 200 OK\r\n\r\n", false).unwrap_err(),
            Malformed::Head
        );
        assert_eq!(
            whole(b"garbage garbage\r\n\r\n", false).unwrap_err(),
            Malformed::Head
        );
        assert_eq!(
            whole(b"HTTP/1.1 200 OK\r\nContent-Length: x\r\n\r\n", false).unwrap_err(),
            Malformed::ContentLength
        );
        assert_eq!(
            whole(
                b"HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n",
                false
            )
            .unwrap_err(),
            Malformed::ContentLength
        );
    }

    #[test]
    fn eof_inside_a_body_is_short_and_before_a_response_is_not_started() {
        let mut p = ResponseParser::default();
        assert_eq!(p.eof(), Ok(false));
        p.feed(b"HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\nabc", false)
            .unwrap();
        assert_eq!(p.eof(), Err(Malformed::Short));
        let mut p = ResponseParser::default();
        p.feed(b"HTTP/1.1 2", false).unwrap();
        assert_eq!(p.eof(), Err(Malformed::Short));
    }

    #[test]
    fn body_until_close_completes_at_eof() {
        let mut p = ResponseParser::default();
        let f = p.feed(b"HTTP/1.0 200 OK\r\n\r\nsome body", false).unwrap();
        assert_eq!(f, Feed::Incomplete);
        assert!(!p.keep_alive());
        assert_eq!(p.eof(), Ok(true));
    }

    #[test]
    fn connection_close_and_http10_keep_alive() {
        let r = b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 0\r\n\r\n";
        assert!(!whole(r, false).unwrap().2);
        let r = b"HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 0\r\n\r\n";
        assert!(whole(r, false).unwrap().2);
    }

    #[test]
    fn interim_100_is_skipped() {
        let r =
            b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 404 Not Found\r\nContent-Length: 1\r\n\r\nx";
        assert_eq!(
            whole(r, false).unwrap(),
            (Feed::Complete { used: r.len() }, 404, true)
        );
    }

    #[test]
    fn reset_allows_the_next_response() {
        let mut p = ResponseParser::default();
        let r = b"HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\na";
        assert!(matches!(p.feed(&r[..10], false), Ok(Feed::Incomplete)));
        assert!(matches!(p.feed(&r[10..], false), Ok(Feed::Complete { .. })));
        p.reset();
        assert!(!p.started());
        assert_eq!(p.feed(r, false).unwrap(), Feed::Complete { used: r.len() });
    }

    #[test]
    fn endless_head_is_too_large() {
        let mut p = ResponseParser::default();
        p.feed(b"HTTP/1.1 200 OK\r\n", false).unwrap();
        let line = b"X-Pad: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\r\n";
        let mut result = Ok(Feed::Incomplete);
        for _ in 0..1000 {
            result = p.feed(line, false);
            if result.is_err() {
                break;
            }
        }
        assert!(matches!(
            result,
            Err(Malformed::HeadTooLarge) | Err(Malformed::Head)
        ));
    }
}
