//! What a server connection tells its driver, one event at a time
//! ([`crate::Connection::poll_event`]).

use crate::error::ErrorCode;
use crate::request::Request;
use crate::response::Response;
use crate::stream_id::StreamId;

/// Something the driver acts on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    /// Server only: a request's head. Answer it with [`crate::ServerConn::send_headers`]
    /// (and [`crate::Connection::send_data`]) on `request.stream`, then give it back with
    /// [`crate::ServerConn::recycle`] so that the next request reuses its buffers.
    Request(Request),
    /// Client only: the final response head on a stream opened by
    /// [`crate::ClientConn::send_request`] (interim 1xx heads are skipped).
    Response(Response),
    /// Body octets of the request (server) or response (client) (their flow-control credit is given back by the connection, so the
    /// driver must not buffer without bound: a static server drops them). `end_stream` marks
    /// the last (trailers end the body and are not reported).
    Data {
        /// The stream.
        stream: StreamId,
        /// The octets, padding removed.
        data: Vec<u8>,
        /// The body is complete.
        end_stream: bool,
    },
    /// The stream is gone: stop sending on it and free what it holds. `remote` is true when
    /// the peer reset it (or, on a client, a GOAWAY refused it), false when the connection
    /// did for a stream error. A reset the driver asked for with
    /// [`crate::Connection::reset`] gives no event.
    Reset {
        /// The stream.
        stream: StreamId,
        /// The code in the RST_STREAM.
        code: ErrorCode,
        /// Who reset it.
        remote: bool,
    },
    /// A stream whose last [`crate::Connection::send_data`] was cut short by flow control
    /// has window again: send more.
    WindowOpened {
        /// The stream.
        stream: StreamId,
    },
    /// The peer sent GOAWAY: no new stream will be taken; streams up to `last_stream` go on.
    /// On a client, streams above it were not processed: each gets an [`Event::Reset`] with
    /// REFUSED_STREAM (safe to retry elsewhere) before this event.
    GoAway {
        /// The last stream the peer says it may have processed.
        last_stream: StreamId,
        /// Why.
        code: ErrorCode,
    },
}
