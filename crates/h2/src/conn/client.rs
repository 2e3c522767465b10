//! The client role: requests open streams (odd ids, within the server's
//! SETTINGS_MAX_CONCURRENT_STREAMS); the header blocks that come back are responses.

use crate::conn::{Client, Connection, Phase, Role, SendError};
use crate::error::{ErrorCode, H2Error};
use crate::event::Event;
use crate::frame::MAX_WINDOW;
use crate::hpack::HpackError;
use crate::response::{Response, ResponseBuilder};
use crate::stream::Stream;
use crate::stream_id::StreamId;

use ErrorCode::ProtocolError;

/// Most responses, and most body buffers, kept for reuse ([`Connection::recycle`]): what
/// one read brings at 32 streams in flight. A read with more events than that allocates
/// for the rest, as without reuse.
const SPARE: usize = 32;
/// A body buffer larger than this is not kept (one DATA frame at the largest frame size a
/// client announces by default, 16 KiB, fits).
const SPARE_BODY_BYTES: usize = 16 << 10;

/// Events the driver gave back ([`Connection::recycle`]), whose buffers the next responses
/// and bodies are decoded into.
#[derive(Debug, Default)]
pub(super) struct Spare {
    responses: Vec<Response>,
    bodies: Vec<Vec<u8>>,
}

/// A request's pseudo-header fields (RFC 9113 §8.3.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RequestHead<'a> {
    /// `:method`.
    pub method: &'a str,
    /// `:scheme`: `https`, or `http` for prior knowledge.
    pub scheme: &'a str,
    /// `:authority`: the HTTP/1.1 `Host`.
    pub authority: &'a str,
    /// `:path`, with the query.
    pub path: &'a str,
}

impl Connection<Client> {
    /// Opens a stream with a request: the pseudo-fields of `head`, then `fields` (lowercased,
    /// connection-specific ones left out). With `end_stream` the request has no body (GET);
    /// otherwise send it with [`Connection::send_data`]. Returns the new stream's id; its
    /// response comes as [`Event::Response`].
    pub fn send_request(
        &mut self,
        head: RequestHead<'_>,
        fields: &[(&str, &[u8])],
        end_stream: bool,
    ) -> Result<StreamId, SendError> {
        match self.phase {
            Phase::Closed => return Err(SendError::ConnectionClosed),
            Phase::Draining => return Err(SendError::Draining),
            _ => {}
        }
        if self.next_stream > MAX_WINDOW {
            return Err(SendError::Draining);
        }
        if self
            .peer
            .max_concurrent_streams
            .is_some_and(|max| self.streams.len() >= max as usize)
        {
            return Err(SendError::TooManyStreams);
        }
        let stream = StreamId(self.next_stream);
        self.next_stream += 2;
        let mut s = Stream::new(
            self.peer.initial_window_size,
            self.ours.initial_window_size,
            false,
        );
        s.got_head = false;
        self.streams.insert(stream.0, s);
        let pseudo: [(&[u8], &[u8]); 4] = [
            (b":method", head.method.as_bytes()),
            (b":scheme", head.scheme.as_bytes()),
            (b":authority", head.authority.as_bytes()),
            (b":path", head.path.as_bytes()),
        ];
        let fields = fields.iter().map(|&(n, v)| (n.as_bytes(), v));
        self.write_head(stream, &pseudo, fields, end_stream);
        Ok(stream)
    }

    /// Streams open now that a new request would count against the server's limit with.
    pub fn open_streams(&self) -> usize {
        self.streams.len()
    }

    /// Widens the connection's receive window (RFC 9113 §6.9) to `size` octets (at most
    /// 2^31-1) by queueing a WINDOW_UPDATE on stream 0 for the difference; a `size` at or
    /// below the window now does nothing. The connection window starts at 65,535 octets
    /// whatever SETTINGS say (§6.9.2), and a server may send only that much of all its
    /// streams' bodies before credit comes back: with many responses in flight at once
    /// (100 streams of 1 KiB is 100 KiB), it waits for the client's WINDOW_UPDATE every
    /// round. Credit is then given back as before, every 32 KiB received.
    pub fn set_connection_window(&mut self, size: u32) {
        let size = i64::from(size.min(MAX_WINDOW));
        let grow = size - self.conn_recv_window - i64::from(self.conn_recv_unacked);
        let Ok(increment) = u32::try_from(grow) else {
            return;
        };
        if increment == 0 {
            return;
        }
        self.conn_recv_window += i64::from(increment);
        crate::frame::encode_frame(
            &mut self.out,
            &crate::frame::Frame::WindowUpdate {
                stream: StreamId::CONNECTION,
                increment,
            },
        );
    }

    /// Gives back an event the driver is done with: the buffers of an [`Event::Response`]
    /// (its fields) and of an [`Event::Data`] (its octets) take the next ones, so that a
    /// client that recycles every event allocates nothing per response in the steady
    /// state. Optional; an event not given back is simply freed.
    pub fn recycle(&mut self, event: Event) {
        match event {
            Event::Response(r) if self.spare.responses.len() < SPARE => {
                self.spare.responses.push(r);
            }
            Event::Data { data, .. }
                if self.spare.bodies.len() < SPARE && data.capacity() <= SPARE_BODY_BYTES =>
            {
                self.spare.bodies.push(data);
            }
            _ => {}
        }
    }
}

impl<R: Role> Connection<R> {
    /// A header block on one of our streams: its response head (after any 1xx), or
    /// trailers.
    pub(super) fn on_response_block(
        &mut self,
        stream: StreamId,
        block: &[u8],
        end_stream: bool,
        self_dependent: bool,
    ) -> Result<(), H2Error> {
        let head_due = self.streams.get(&stream.0).is_some_and(|s| !s.got_head);
        if !head_due {
            return self.on_trailers(stream, block, end_stream);
        }
        let mut resp = ResponseBuilder::new(stream, end_stream, self.spare.responses.pop());
        match self.decoder.decode(block, |n, v| resp.field(n, v)) {
            Ok(()) => {}
            Err(HpackError::ListTooLarge) => {
                return Err(H2Error::stream(
                    stream,
                    ProtocolError,
                    "response head too large",
                ));
            }
            Err(HpackError::Compression(why)) => {
                return Err(H2Error::conn(ErrorCode::CompressionError, why));
            }
        }
        if self_dependent {
            return Err(H2Error::stream(
                stream,
                ProtocolError,
                "stream depends on itself",
            ));
        }
        let resp = resp
            .finish()
            .map_err(|why| H2Error::stream(stream, ProtocolError, why))?;
        if resp.status < 200 {
            // An interim head (103 Early Hints, 100 Continue): the final one follows, so it
            // cannot end the stream (§8.1).
            if end_stream {
                return Err(H2Error::stream(
                    stream,
                    ProtocolError,
                    "1xx with END_STREAM",
                ));
            }
            return Ok(());
        }
        let s = self.streams.get_mut(&stream.0).expect("checked above");
        s.got_head = true;
        self.events.push_back(Event::Response(resp));
        if end_stream && s.close_remote() {
            self.streams.remove(&stream.0);
            self.maybe_done();
        }
        Ok(())
    }

    /// `data` in a body buffer of its own for an [`Event::Data`]: a given-back one when
    /// there is one (only a client gives any back).
    pub(super) fn body(&mut self, data: &[u8]) -> Vec<u8> {
        let mut buf = self.spare.bodies.pop().unwrap_or_default();
        buf.clear();
        buf.extend_from_slice(data);
        buf
    }

    /// The server's GOAWAY: our streams above `last` were not processed and never will be.
    pub(super) fn refused_by_goaway(&mut self, last: StreamId) {
        let mut refused: Vec<u32> = self
            .streams
            .keys()
            .copied()
            .filter(|&id| id > last.0)
            .collect();
        refused.sort_unstable();
        for id in refused {
            self.streams.remove(&id);
            self.events.push_back(Event::Reset {
                stream: StreamId(id),
                code: ErrorCode::RefusedStream,
                remote: true,
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::conn::{ClientConn, RequestHead, ServerConn};
    use crate::event::Event;
    use crate::limits::Limits;

    const GET: RequestHead<'static> = RequestHead {
        method: "GET",
        scheme: "http",
        authority: "example.com",
        path: "/",
    };

    /// A response's fields.
    type Fields<'a> = &'a [(&'a str, &'a [u8])];

    /// Responses decoded into given-back events hold their own fields and bodies, never a
    /// previous response's, whether they carry more fields than it or fewer.
    #[test]
    fn recycled_events_hold_only_the_next_response() {
        let mut c = ClientConn::new(Limits::default());
        let mut s = ServerConn::new(Limits::default());
        let answers: [(Fields<'_>, &[u8]); 3] = [
            (
                &[
                    ("server", b"a"),
                    ("etag", b"\"1\""),
                    ("x-long", &[b'v'; 300]),
                ],
                b"first body, the longest",
            ),
            (&[("server", b"bb")], b"second"),
            (
                &[("server", b"c"), ("a", b"1"), ("b", b"2"), ("d", b"3")],
                b"third",
            ),
        ];
        for (fields, body) in answers {
            let id = c.send_request(GET, &[], true).unwrap();
            s.feed(&c.take_output()).unwrap();
            while let Some(ev) = s.poll_event() {
                if let Event::Request(r) = ev {
                    s.send_headers(r.stream, 200, fields, false).unwrap();
                    assert_eq!(s.send_data(r.stream, body, true), Ok(body.len()));
                }
            }
            c.feed(&s.take_output()).unwrap();
            let (mut head, mut got) = (None, Vec::new());
            while let Some(ev) = c.poll_event() {
                match &ev {
                    Event::Response(r) => head = Some((r.stream, r.status, r.headers.clone())),
                    Event::Data { data, .. } => got.extend_from_slice(data),
                    _ => {}
                }
                c.recycle(ev);
            }
            let want: Vec<(String, Vec<u8>)> = fields
                .iter()
                .map(|&(n, v)| (n.to_string(), v.to_vec()))
                .collect();
            assert_eq!(head, Some((id, 200, want)));
            assert_eq!(got, body);
        }
    }

    /// The server sends `n` bodies of 40,000 octets on a connection whose window the
    /// client widened to `window` (or left at 65,535): what it could send before any
    /// WINDOW_UPDATE came back.
    fn sent_before_credit(window: Option<u32>, n: usize) -> usize {
        let mut c = ClientConn::new(Limits::default());
        if let Some(w) = window {
            c.set_connection_window(w);
        }
        let mut s = ServerConn::new(Limits::default());
        for _ in 0..n {
            c.send_request(GET, &[], true).unwrap();
        }
        s.feed(&c.take_output()).unwrap();
        let body = vec![b'x'; 40_000];
        let mut sent = 0;
        while let Some(ev) = s.poll_event() {
            if let Event::Request(r) = ev {
                s.send_headers(r.stream, 200, &[], false).unwrap();
                sent += s.send_data(r.stream, &body, true).unwrap();
            }
        }
        sent
    }

    #[test]
    fn a_widened_connection_window_lets_the_server_send_past_65535() {
        assert_eq!(sent_before_credit(None, 3), 65_535);
        assert_eq!(sent_before_credit(Some(1 << 20), 3), 120_000);
        // The window is what the server may send: widened to 100,000, it sends that.
        assert_eq!(sent_before_credit(Some(100_000), 3), 100_000);
    }

    #[test]
    fn widening_to_the_window_it_has_or_less_sends_nothing() {
        let mut c = ClientConn::new(Limits::default());
        let start = c.take_output().len();
        c.set_connection_window(65_535);
        c.set_connection_window(1_000);
        assert!(c.pending_output().is_empty());
        c.set_connection_window(1 << 20);
        // One WINDOW_UPDATE: a 9-octet header and a 4-octet increment.
        assert_eq!(c.take_output().len(), 13);
        c.set_connection_window(1 << 20);
        c.set_connection_window(u32::MAX); // capped at 2^31-1: one more
        assert_eq!(c.take_output().len(), 13);
        assert!(start > 0);
    }
}
