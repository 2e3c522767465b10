//! The access-log format as one value: a [`Format`], chosen once from
//! `--log-format` ([`of`]) and kept by the site, so the connection code that
//! owes log lines never branches on the format, and a new format is one more
//! value here.
//!
//! Every kind of line goes through it, `--log-connections` lines included, so a
//! JSON log is JSON on every line.

use std::net::{IpAddr, SocketAddr};
use std::ops::Range;

use servelab_http::{RequestHead, Status};

use super::{json, line};
use crate::config::LogFormat;

/// Appends a request line without its service time; see [`Format::request`].
type RequestFn = fn(
    &mut Vec<u8>,
    IpAddr,
    &[u8; 26],
    Option<&RequestHead<'_>>,
    bool,
    Status,
    u64,
) -> Range<usize>;
/// Writes a `--log-connections` line; see [`Format::connection`].
type ConnectionFn = fn(&mut Vec<u8>, SocketAddr, &[u8; 26], Option<(u64, u128)>, Option<bool>);

/// How the lines of one access-log format are written. A request line is
/// written in two steps, because its last field (the service time) is known
/// only once the response is completely written.
#[derive(Debug)]
pub(crate) struct Format {
    request: RequestFn,
    status_and_bytes: fn(&mut Vec<u8>, u16, u64),
    finish: fn(&mut Vec<u8>, &[u8], u64),
    connection: ConnectionFn,
}

/// Apache's Combined Log Format with the service time appended (`line.rs`).
static COMBINED: Format = Format {
    request: line::request,
    status_and_bytes: line::status_and_bytes,
    finish: line::finish,
    connection: line::connection,
};

/// One JSON object per line (`json.rs`).
static JSON: Format = Format {
    request: json::request,
    status_and_bytes: json::status_and_bytes,
    finish: json::finish,
    connection: json::connection,
};

/// The one place that looks at [`LogFormat`].
pub(crate) fn of(format: LogFormat) -> &'static Format {
    match format {
        LogFormat::Combined => &COMBINED,
        LogFormat::Json => &JSON,
    }
}

impl Format {
    /// Appends a request line without its service time to `out`; `req` is
    /// `None` for a request that could not be parsed; `http2`: it came on an
    /// HTTP/2 stream (its head was rebuilt as HTTP/1.1's for the handler, so
    /// the protocol field says `HTTP/2.0` instead of the head's version).
    /// Returns where its status and byte count are in `out`, for
    /// [`Format::status_and_bytes`].
    // One argument more than clippy's default: the line's fields, one by one.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn request(
        &self,
        out: &mut Vec<u8>,
        ip: IpAddr,
        clf: &[u8; 26],
        req: Option<&RequestHead<'_>>,
        http2: bool,
        status: Status,
        bytes: u64,
    ) -> Range<usize> {
        (self.request)(out, ip, clf, req, http2, status, bytes)
    }

    /// The status and byte-count fields, as [`Format::request`] writes them
    /// (rewritten for a response whose client left: 499 and the body bytes
    /// that did go out).
    pub(crate) fn status_and_bytes(&self, out: &mut Vec<u8>, status: u16, bytes: u64) {
        (self.status_and_bytes)(out, status, bytes);
    }

    /// Makes `line` the complete line: `start` (from [`Format::request`]) with
    /// the service time in microseconds and the newline.
    pub(crate) fn finish(&self, line: &mut Vec<u8>, start: &[u8], micros: u64) {
        (self.finish)(line, start, micros);
    }

    /// Makes `line` a `--log-connections` line: the connection from `peer`
    /// opened, or with `closed = Some((requests, micros))` closed after that
    /// many requests and that long.
    pub(crate) fn connection(
        &self,
        line: &mut Vec<u8>,
        peer: SocketAddr,
        clf: &[u8; 26],
        closed: Option<(u64, u128)>,
        tls: Option<bool>,
    ) {
        (self.connection)(line, peer, clf, closed, tls);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CLF: &[u8; 26] = b"10/Oct/2000:13:55:36 +0000";

    /// Regression: `--log-connections` lines were always the combined kind,
    /// even in a JSON log.
    #[test]
    fn connection_lines_follow_the_format() {
        let peer: SocketAddr = "127.0.0.1:9".parse().unwrap();
        let mut out = Vec::new();
        of(LogFormat::Json).connection(&mut out, peer, CLF, Some((3, 17)), Some(false));
        let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(v["conn"], "close");
        assert_eq!(v["peer"], "127.0.0.1:9");
        assert_eq!(
            (v["requests"].as_u64(), v["conn_us"].as_u64()),
            (Some(3), Some(17))
        );
        assert_eq!(v["tls"], "full");
        of(LogFormat::Json).connection(&mut out, peer, CLF, None, None);
        let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(
            (v["conn"].as_str(), v["time"].as_str()),
            (Some("open"), Some("2000-10-10T13:55:36Z"))
        );
        of(LogFormat::Combined).connection(&mut out, peer, CLF, None, None);
        assert!(out.starts_with(b"conn 127.0.0.1:9 open ["));
    }
}
