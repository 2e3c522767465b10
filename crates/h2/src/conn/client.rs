//! The client role: requests open streams (odd ids, within the server's
//! SETTINGS_MAX_CONCURRENT_STREAMS); the header blocks that come back are responses.

use crate::conn::{Client, Connection, Phase, Role, SendError};
use crate::error::{ErrorCode, H2Error};
use crate::event::Event;
use crate::frame::{MAX_WINDOW, StreamId};
use crate::hpack::HpackError;
use crate::response::ResponseBuilder;
use crate::stream::Stream;

use ErrorCode::ProtocolError;

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
        let mut resp = ResponseBuilder::new(stream, end_stream);
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
