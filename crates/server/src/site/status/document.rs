//! The `/-/status` document as a type: the one contract between the server,
//! which writes it, and whoever reads it (the lab, scripts). Both sides use
//! this type through serde, so a field renamed on one side cannot silently
//! become a missing field on the other.

use serde::{Deserialize, Serialize};

use crate::runtime::stats::Snapshot;

/// The body of `GET /-/status`. Keys are stable; scripts may rely on them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StatusDocument {
    /// The engine's name (`--engine`).
    pub engine: String,
    /// Workers of the engine (1 for engines without `--workers`).
    pub workers: usize,
    /// Seconds since the server started, to the millisecond.
    pub uptime_seconds: f64,
    /// Connection counters.
    pub connections: Connections,
    /// Request counters.
    pub requests: Requests,
    /// Bytes written to clients, heads and bodies.
    pub bytes_sent: u64,
    /// TLS handshakes (all zero without TLS; absent from older servers).
    #[serde(default)]
    pub tls: Handshakes,
    /// HTTP/2 connections and streams, counted apart (all zero without
    /// HTTP/2; absent from older servers).
    #[serde(default)]
    pub http2: Http2,
}

/// HTTP/2 counters of [`StatusDocument`]: one connection carries many
/// streams (requests) at once, so they are counted apart.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Http2 {
    /// Connections that spoke HTTP/2 since the start (also in
    /// `connections.accepted`).
    pub connections: u64,
    /// HTTP/2 connections open now.
    pub open: u64,
    /// Streams that carried a request since the start (each also a request).
    pub streams: u64,
    /// Streams being served now.
    pub open_streams: u64,
}

/// TLS handshake counters of [`StatusDocument`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Handshakes {
    /// Full handshakes done.
    pub full: u64,
    /// Handshakes that resumed a session.
    pub resumed: u64,
    /// Handshakes that failed (not TLS, malformed, or cut off).
    pub failed: u64,
}

/// Connection counters of [`StatusDocument`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Connections {
    /// Accepted since the start.
    pub accepted: u64,
    /// Open now.
    pub open: u64,
    /// Refused with 503 (no room to serve them).
    pub dropped: u64,
}

/// Request counters of [`StatusDocument`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Requests {
    /// Every request finished: delivered (by class) or abandoned.
    pub total: u64,
    /// Being served now (this status request included).
    pub in_flight: u64,
    /// Finished for a client that had already gone (logged as 499).
    pub abandoned: u64,
    /// Responses completely written, by status class.
    pub by_class: ByClass,
}

/// Responses by status class.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ByClass {
    /// Informational.
    #[serde(rename = "1xx")]
    pub c1xx: u64,
    /// Success.
    #[serde(rename = "2xx")]
    pub c2xx: u64,
    /// Redirection.
    #[serde(rename = "3xx")]
    pub c3xx: u64,
    /// Client error.
    #[serde(rename = "4xx")]
    pub c4xx: u64,
    /// Server error.
    #[serde(rename = "5xx")]
    pub c5xx: u64,
}

impl StatusDocument {
    /// The document for one snapshot of the counters.
    pub fn new(s: &Snapshot, engine: &str, workers: usize) -> StatusDocument {
        let [c1xx, c2xx, c3xx, c4xx, c5xx] = s.responses;
        StatusDocument {
            engine: engine.to_owned(),
            workers,
            uptime_seconds: s.uptime.as_millis() as f64 / 1000.0,
            connections: Connections {
                accepted: s.accepted,
                open: s.open,
                dropped: s.dropped,
            },
            requests: Requests {
                total: c1xx + c2xx + c3xx + c4xx + c5xx + s.abandoned,
                in_flight: s.in_flight,
                abandoned: s.abandoned,
                by_class: ByClass {
                    c1xx,
                    c2xx,
                    c3xx,
                    c4xx,
                    c5xx,
                },
            },
            bytes_sent: s.bytes_sent,
            tls: Handshakes {
                full: s.tls.full,
                resumed: s.tls.resumed,
                failed: s.tls.failed,
            },
            http2: Http2 {
                connections: s.h2.connections,
                open: s.h2.open,
                streams: s.h2.streams,
                open_streams: s.h2.open_streams,
            },
        }
    }

    /// The document as the server sends it: one line of JSON.
    pub fn to_json(&self) -> String {
        // Serialising plain numbers and strings cannot fail.
        let mut o = serde_json::to_string(self).unwrap_or_default();
        o.push('\n');
        o
    }
}
