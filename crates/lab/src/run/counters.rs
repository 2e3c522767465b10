//! The server's own counters (`servelab serve --status`), read while the load
//! runs, for what only the server can know: badput (answers finished for a
//! client that had already gone) and the drops it answered with 503.
//!
//! Reading them is itself a request. On an engine with a request buffer the
//! status request waits in that buffer like any other, and when the buffer is
//! full it is refused with 503 like any other. So a reading is taken twice
//! while the load is still running, each retried until it is answered, and the
//! rates are the differences divided by the time between the two answers: the
//! counters describe the moment they were read, however long the request
//! waited. Reading at the start and the end of a repeat instead would mix in
//! the empty server of the start and the abandoned backlog of the end.
//!
//! Over TLS the reading is sent over TLS too (`fetch`), with the trust the
//! load uses: a server serving TLS answers nothing else on its port.

mod fetch;

use std::net::SocketAddr;
use std::time::{Duration, Instant};

pub(crate) use fetch::{Wire, get};

use servelab_server::StatusDocument;

use crate::metric::Metric;
use crate::store::results::Figures;

/// One reading of `/-/status`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Reading {
    /// When the answer arrived.
    pub(crate) at: Instant,
    /// 2xx responses delivered.
    pub(crate) ok: u64,
    /// Requests whose client left before the response was written.
    pub(crate) abandoned: u64,
    /// Requests refused with 503 at a full buffer.
    pub(crate) dropped: u64,
}

/// Reads `/-/status`, retrying a refusal every 20 ms until `deadline`.
pub(crate) fn read(addr: SocketAddr, wire: &Wire, deadline: Instant) -> Result<Reading, String> {
    let mut last = String::from("no answer");
    while Instant::now() < deadline {
        match read_once(addr, wire, deadline) {
            Ok(r) => return Ok(r),
            Err(e) => last = e,
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    Err(format!("/-/status unreadable before the deadline: {last}"))
}

fn read_once(addr: SocketAddr, wire: &Wire, deadline: Instant) -> Result<Reading, String> {
    let bytes = get(wire, addr, "/-/status", deadline)?;
    let at = Instant::now();
    let text = String::from_utf8(bytes).map_err(|_| "/-/status: not UTF-8".to_string())?;
    parse(&text).map(|(ok, abandoned, dropped)| Reading {
        at,
        ok,
        abandoned,
        dropped,
    })
}

/// (2xx, abandoned, dropped) from a whole HTTP response to `/-/status`.
fn parse(response: &str) -> Result<(u64, u64, u64), String> {
    let status = response.split(' ').nth(1).unwrap_or("");
    if status != "200" {
        return Err(format!("status {status}"));
    }
    let body = response
        .split_once("\r\n\r\n")
        .map(|(_, b)| b)
        .ok_or("no body")?;
    let doc: StatusDocument = serde_json::from_str(body).map_err(|e| format!("/-/status: {e}"))?;
    Ok((
        doc.requests.by_class.c2xx,
        doc.requests.abandoned,
        doc.connections.dropped,
    ))
}

/// The server's rates between two readings, per second: goodput, requests
/// abandoned, drops, and, when the server `finishes` abandoned requests,
/// badput (they are all served for nobody) and throughput (the two together).
/// A server that cancels them counts a cancelled request and one abandoned
/// while its answer was being written as one, so its badput is not known, and
/// its throughput is its goodput (less those few written for nobody).
pub(crate) fn rates(a: &Reading, b: &Reading, finishes: bool) -> Option<Figures> {
    let dt = b.at.checked_duration_since(a.at)?.as_secs_f64();
    if dt <= 0.0 {
        return None;
    }
    // The first reading's own 200 is counted between the two.
    let ok = b.ok.saturating_sub(a.ok).saturating_sub(1) as f64 / dt;
    let bad = b.abandoned.saturating_sub(a.abandoned) as f64 / dt;
    let drops = b.dropped.saturating_sub(a.dropped) as f64 / dt;
    let mut f = Figures::from([
        (Metric::Goodput, ok),
        (Metric::Abandoned, bad),
        (Metric::DropRate, drops),
    ]);
    if finishes {
        f.insert(Metric::Badput, bad);
        f.insert(Metric::Throughput, ok + bad);
    } else {
        f.insert(Metric::Throughput, ok);
    }
    Some(f)
}

#[cfg(test)]
mod tests {
    use super::*;

    const STATUS: &str = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\r\n\
        {\"engine\":\"event\",\"workers\":4,\"uptime_seconds\":1.0,\
        \"connections\":{\"accepted\":9,\"open\":1,\"dropped\":3},\
        \"requests\":{\"total\":9,\"in_flight\":1,\"abandoned\":2,\
        \"by_class\":{\"1xx\":0,\"2xx\":5,\"3xx\":0,\"4xx\":0,\"5xx\":3}},\"bytes_sent\":10}\n";

    #[test]
    fn a_status_answer_gives_2xx_abandoned_and_dropped() {
        assert_eq!(parse(STATUS), Ok((5, 2, 3)));
        let refused = "HTTP/1.1 503 Service Unavailable\r\nRetry-After: 1\r\n\r\n";
        assert_eq!(parse(refused), Err("status 503".into()));
        let e = parse("HTTP/1.1 200 OK\r\n\r\n{\"requests\":{}}").unwrap_err();
        assert!(e.starts_with("/-/status: missing field"), "{e}");
    }

    #[test]
    fn rates_are_differences_over_the_time_between_answers() {
        let t = Instant::now();
        let a = Reading {
            at: t,
            ok: 100,
            abandoned: 10,
            dropped: 0,
        };
        let b = Reading {
            at: t + Duration::from_secs(2),
            ok: 501,
            abandoned: 50,
            dropped: 8,
        };
        let r = rates(&a, &b, true).unwrap();
        assert_eq!(r[&Metric::Goodput], 200.0);
        assert_eq!(r[&Metric::Badput], 20.0);
        assert_eq!(r[&Metric::Abandoned], 20.0);
        assert_eq!(r[&Metric::Throughput], 220.0);
        assert_eq!(r[&Metric::DropRate], 4.0);
        assert!(rates(&b, &a, true).is_none());
        // Cancelled requests are abandoned but not badput, and not served.
        let r = rates(&a, &b, false).unwrap();
        assert_eq!(r[&Metric::Abandoned], 20.0);
        assert!(!r.contains_key(&Metric::Badput));
        assert_eq!(r[&Metric::Throughput], 200.0);
    }
}
