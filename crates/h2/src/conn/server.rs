//! The server role: a header block on a new stream is a request; answers go out as response
//! heads.

use crate::conn::{Connection, Role, SendError, Server};
use crate::error::{ErrorCode, H2Error};
use crate::event::Event;
use crate::hpack::HpackError;
use crate::request::{Request, RequestBuilder};
use crate::stream::Stream;
use crate::stream_id::StreamId;

use ErrorCode::ProtocolError;

/// Most requests kept for reuse ([`Connection::recycle`]): a stream's worth more than a client
/// usually keeps in flight (h2load's `-m 10`, a browser's few dozen at a page load).
const SPARE_REQUESTS: usize = 32;
/// A request whose buffers grew past this many octets is not kept: one large head does not
/// hold its memory for the rest of the connection.
const SPARE_MAX_BYTES: usize = 4096;

impl Connection<Server> {
    /// Sends a response head on `stream`: `:status` and `fields`. The fields an HTTP/1.1
    /// head would carry can be passed as they are: names are lowercased (HTTP/2 requires it,
    /// §8.2.1) and the connection-specific ones (`Connection`, `Keep-Alive`,
    /// `Transfer-Encoding`, ...) are left out (§8.2.2). With `end_stream`, the response has
    /// no body (HEAD, 304, an error without a body).
    pub fn send_headers(
        &mut self,
        stream: StreamId,
        status: u16,
        fields: &[(&str, &[u8])],
        end_stream: bool,
    ) -> Result<(), SendError> {
        let fields = fields.iter().map(|&(n, v)| (n.as_bytes(), v));
        self.send_head(stream, status, fields, end_stream)
    }

    /// [`send_headers`](Connection::send_headers) with the fields from an iterator: for a driver that keeps
    /// them in its own buffers, so that it need not collect them in a slice first.
    pub fn send_head<'f>(
        &mut self,
        stream: StreamId,
        status: u16,
        fields: impl IntoIterator<Item = (&'f [u8], &'f [u8])>,
        end_stream: bool,
    ) -> Result<(), SendError> {
        self.sendable(stream)?;
        let digits = itoa_status(status);
        self.write_head(stream, &[(b":status", &digits)], fields, end_stream);
        Ok(())
    }

    /// Gives back a request the driver is done with: the next request is decoded into its
    /// buffers instead of new ones (see [`Request`]). Optional; a request not given back is
    /// simply freed.
    pub fn recycle(&mut self, req: Request) {
        if self.spare_requests.len() < SPARE_REQUESTS && req.capacity() <= SPARE_MAX_BYTES {
            self.spare_requests.push(req);
        }
    }
}

impl<R: Role> Connection<R> {
    /// A header block that opens a stream: a request, or a refusal.
    pub(super) fn on_request_block(
        &mut self,
        stream: StreamId,
        block: &[u8],
        end_stream: bool,
        self_dependent: bool,
    ) -> Result<(), H2Error> {
        self.last_peer_stream = stream;
        let mut req = RequestBuilder::new(stream, end_stream, self.spare_requests.pop());
        let decoded = self.decoder.decode(block, |n, v| req.field(n, v));
        let too_large = match decoded {
            Ok(()) => false,
            Err(HpackError::ListTooLarge) => true,
            Err(HpackError::Compression(why)) => {
                return Err(H2Error::conn(ErrorCode::CompressionError, why));
            }
        };
        if self.goaway_last.is_some_and(|last| stream > last) {
            // After our GOAWAY: decoded for the table's sake, not served (§6.8).
            return Ok(());
        }
        if self_dependent {
            return Err(H2Error::stream(
                stream,
                ProtocolError,
                "stream depends on itself",
            ));
        }
        if self.streams.len() >= self.limits.max_concurrent_streams as usize {
            return Err(H2Error::stream(
                stream,
                ErrorCode::RefusedStream,
                "too many streams",
            ));
        }
        let mut s = Stream::new(
            self.peer.initial_window_size,
            self.ours.initial_window_size,
            end_stream,
        );
        if too_large {
            self.streams.insert(stream.0, s);
            return self.refuse_too_large(stream, end_stream);
        }
        let (req, expect_len) = req
            .finish()
            .map_err(|why| H2Error::stream(stream, ProtocolError, why))?;
        s.expect_len = expect_len;
        if !s.length_ok(end_stream) {
            return Err(H2Error::stream(
                stream,
                ProtocolError,
                "content-length without a body",
            ));
        }
        self.streams.insert(stream.0, s);
        self.events.push_back(Event::Request(req));
        Ok(())
    }

    /// A header list past SETTINGS_MAX_HEADER_LIST_SIZE: 431 on the stream (RFC 9113
    /// §10.5.1), and if the request body is still coming, RST_STREAM NO_ERROR so that it
    /// stops (§8.1).
    fn refuse_too_large(&mut self, stream: StreamId, end_stream: bool) -> Result<(), H2Error> {
        self.write_head(stream, &[(b":status", b"431")], [], true);
        if !end_stream {
            self.local_reset(stream, ErrorCode::NoError)?;
        }
        Ok(())
    }
}

/// A status code's three digits (100..=999; anything else is a bug in the driver, sent as
/// 500 rather than as a malformed response).
fn itoa_status(status: u16) -> [u8; 3] {
    let s = if (100..1000).contains(&status) {
        status
    } else {
        500
    };
    [
        b'0' + (s / 100) as u8,
        b'0' + (s / 10 % 10) as u8,
        b'0' + (s % 10) as u8,
    ]
}
