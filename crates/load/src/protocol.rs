//! Which HTTP a run speaks: HTTP/1.1, or HTTP/2 with a number of streams per
//! connection (`--h2 --streams N`, h2load's `-m`).
//!
//! Why a separate loop for HTTP/2 (`event_loop::h2`): an HTTP/1.1 connection
//! carries one request at a time, so a closed user *is* a connection, and the
//! HTTP/1.1 loop's state machine is the request's. An HTTP/2 connection
//! carries up to N requests at once, so a user is a stream slot on a shared
//! connection. Both loops share the recorder, the schedule of arrivals, the
//! timers, the connect and TLS code, and the report.

use std::fmt;

/// The protocol of a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Protocol {
    /// HTTP/1.1: one request at a time per connection.
    #[default]
    Http1,
    /// HTTP/2 (ALPN `h2` over TLS, prior knowledge over `http://`), with up to
    /// `streams` requests in flight per connection (fewer if the server's
    /// SETTINGS_MAX_CONCURRENT_STREAMS is lower).
    H2 {
        /// Requests kept in flight per connection.
        streams: u32,
    },
}

impl Protocol {
    /// Requests each connection carries at once: 1 for HTTP/1.1.
    pub fn streams(self) -> u32 {
        match self {
            Protocol::Http1 => 1,
            Protocol::H2 { streams } => streams,
        }
    }

    /// Whether this is HTTP/2.
    pub fn is_h2(self) -> bool {
        matches!(self, Protocol::H2 { .. })
    }

    /// The name the report gives it: `http/1.1` or `h2` (the ALPN names).
    pub fn name(self) -> &'static str {
        match self {
            Protocol::Http1 => "http/1.1",
            Protocol::H2 { .. } => "h2",
        }
    }
}

/// `http/1.1` or `h2` (the ALPN names, as [`Protocol::name`] gives them);
/// `h2` with one stream, which `streams` changes.
impl std::str::FromStr for Protocol {
    type Err = String;
    fn from_str(s: &str) -> Result<Protocol, String> {
        match s.trim() {
            "http/1.1" => Ok(Protocol::Http1),
            "h2" => Ok(Protocol::H2 { streams: 1 }),
            _ => Err(format!("unknown protocol `{s}` (http/1.1 or h2)")),
        }
    }
}

impl fmt::Display for Protocol {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
