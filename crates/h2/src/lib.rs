//! servelab-h2: HTTP/2 (RFC 9113) for servelab as pure code over bytes: frames, HPACK
//! (RFC 7541), stream states, flow control, settings, and the defences against the known
//! HTTP/2 attacks. No sockets, no threads, no clock: a driver moves bytes in and out.
//!
//! Why sans-I/O, as servelab-http is: every engine (blocking threads, epoll, the reactor,
//! tokio) drives the same state machine, so HTTP/2 behaves the same on each, and every rule
//! is a unit test on bytes. The fuzz target `h2` feeds it arbitrary input.
//!
//! A server driver:
//!
//! ```
//! use servelab_h2::{Event, Limits, ServerConn, State};
//!
//! let mut conn = ServerConn::new(Limits::default());
//! // A client's preface, an empty SETTINGS, and `GET /` on stream 1 (HPACK: indexed
//! // :method GET, :scheme https, :path /).
//! let mut input = servelab_h2::frame::PREFACE.to_vec();
//! input.extend([0, 0, 0, 4, 0, 0, 0, 0, 0]);
//! input.extend([0, 0, 3, 1, 5, 0, 0, 0, 1, 0x82, 0x87, 0x84]);
//! conn.feed(&input).unwrap();
//! while let Some(event) = conn.poll_event() {
//!     if let Event::Request(req) = event {
//!         assert_eq!(req.path(), Some("/"));
//!         let body = b"hello";
//!         let len = body.len().to_string();
//!         conn.send_headers(req.stream, 200, &[("content-length", len.as_bytes())], false)
//!             .unwrap();
//!         let taken = conn.send_data(req.stream, body, true).unwrap();
//!         assert_eq!(taken, body.len()); // within the initial 65,535-octet windows
//!     }
//! }
//! let out = conn.take_output(); // SETTINGS, SETTINGS ACK, HEADERS, DATA: write them
//! assert!(!out.is_empty());
//! assert_eq!(conn.state(), State::Open);
//! ```
//!
//! A client (`load --h2`) is the same state machine in the other role: [`ClientConn::new`],
//! [`ClientConn::send_request`] with a [`RequestHead`], then the same `feed`, `poll_event`
//! ([`Event::Response`], [`Event::Data`]) and output calls. The codec pieces ([`frame`],
//! [`hpack`], [`settings`]) are public for anything else.
//!
//! # Layout
//! - [`frame`]: frame types, decoder and encoder; the connection preface; the
//!   frame type, flag and setting codes.
//! - [`hpack`]: header compression, with limits.
//! - [`settings`]: SETTINGS parameters.
//! - [`limits`]: every bound a connection enforces, and why.
//! - [`conn`]: the connection state machine, server ([`ServerConn`]) or client
//!   ([`ClientConn`]); [`event`]: what it reports.
//! - [`request`], [`response`]: heads from decoded fields (pseudo-headers, §8.3).
//! - [`stream`]: stream states and windows; [`StreamId`] (`stream_id.rs`), which
//!   frames, events and errors all name.
//! - [`error`]: error codes, stream and connection errors.

#![deny(missing_docs)]

pub mod conn;
pub mod error;
pub mod event;
mod field;
pub mod frame;
pub mod hpack;
pub mod limits;
pub mod request;
pub mod response;
pub mod settings;
pub mod stream;
mod stream_id;

pub use conn::{
    Client, ClientConn, Connection, RequestHead, Role, SendError, Server, ServerConn, State,
};
pub use error::{ErrorCode, H2Error};
pub use event::Event;
pub use limits::Limits;
pub use request::Request;
pub use response::Response;
pub use stream_id::StreamId;

#[cfg(test)]
mod layout;
