//! What each event-loop thread records, and the counters the report shows.
//!
//! A [`Recorder`] belongs to one thread: recording is a few additions and histogram
//! increments, with no locks and no allocation (the per-second series grows by one
//! entry per second). The recorders are added together when the threads finish.
//!
//! Every request that finishes ends in exactly one way: `ok` (a complete, valid
//! response with an expected status, by default 200 to 399) or `failed`, in one
//! error class. A failed connect is an error
//! too, but it finishes no request: the connection backs off and connects again
//! for the same request. So `completed = ok + failed` and
//! `errors = failed + connect_refused + connect_other = errors.total()`.
//! Timed-out attempts that are retried are counted in `timeouts` and `retries`;
//! only a request that runs out of retries ends with the error class `timeout`.
//!
//! Every request the run was asked to make is counted: `scheduled = sent +
//! never_sent` (open arrivals no connection took before the end) and
//! `sent = completed + in_flight` (sent, not finished at the end). The
//! corrected latency holds one value per finished request: to its response or
//! to its error. A request unfinished at the end is counted apart, with its
//! age (end of the run less its intended start) in `unfinished_age`: that age
//! is a lower bound of a latency, not a latency, and mixing the two biases the
//! mean low by about (unfinished × their missing wait) / completed, in steady
//! state too (schema `servelab-load/4` did; `/5` keeps them apart).

use std::time::{Duration, Instant};

use hdrhistogram::Histogram as Hdr;
use serde::{Deserialize, Serialize};

use crate::coarse_histogram::CoarseHistogram;
use crate::h2_counts::H2Counts;
use crate::handshake_failure::{HandshakeFailureKind, HandshakeFailures};
use crate::histogram::new_hdr;
use crate::think::ThinkTotals;

/// Request and connection counters of a run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Counts {
    /// Requests the run was asked to make by its end: `sent + never_sent`.
    /// Closed users: every request a user started. Open: every arrival due
    /// before the end (or the limit).
    pub scheduled: u64,
    /// Requests given to a connection (closed users: started).
    pub sent: u64,
    /// Requests finished: `ok + failed`.
    pub completed: u64,
    /// Requests answered with a valid response of an expected status
    /// (`--expect-status`, by default 200 to 399) within their timeout (goodput).
    pub ok: u64,
    /// Requests that ended in an error (every class but the two connect ones).
    pub failed: u64,
    /// Error events: failed requests plus failed connects (`errors.total()`).
    pub errors: u64,
    /// Requests sent but not finished when the run ended (waiting for an
    /// answer, a retry or a reconnect).
    pub in_flight: u64,
    /// Open workload: arrivals due before the end that no connection took (they
    /// waited in the client because every connection was busy).
    pub never_sent: u64,
    /// Attempts sent or started (a retried request has several).
    pub attempts: u64,
    /// Attempts abandoned because their timeout expired.
    pub timeouts: u64,
    /// Attempts started again after a timeout.
    pub retries: u64,
    /// Requests sent again on a new connection because the reused keep-alive
    /// connection they were sent on closed (or reset) before any byte of the
    /// answer (RFC 9112, 9.3.1; Apache's event MPM does this under load). Each
    /// is also an attempt; none is an error.
    pub close_retries: u64,
    /// Connections opened: TCP connects that succeeded (for an `https://`
    /// target, whether or not its TLS handshake then did).
    pub connections: u64,
    /// TLS handshakes completed in full (no session resumed).
    pub tls_full: u64,
    /// TLS handshakes completed by resuming a session (a ticket or an ID).
    pub tls_resumed: u64,
    /// Idle keep-alive connections closed by the server between requests.
    pub idle_closed: u64,
    /// Request bytes written.
    pub bytes_sent: u64,
    /// Response bytes read (heads and bodies).
    pub bytes_received: u64,
}

impl Counts {
    pub(crate) fn add(&mut self, o: &Counts) {
        self.scheduled += o.scheduled;
        self.sent += o.sent;
        self.completed += o.completed;
        self.ok += o.ok;
        self.failed += o.failed;
        self.errors += o.errors;
        self.in_flight += o.in_flight;
        self.never_sent += o.never_sent;
        self.attempts += o.attempts;
        self.timeouts += o.timeouts;
        self.retries += o.retries;
        self.close_retries += o.close_retries;
        self.connections += o.connections;
        self.tls_full += o.tls_full;
        self.tls_resumed += o.tls_resumed;
        self.idle_closed += o.idle_closed;
        self.bytes_sent += o.bytes_sent;
        self.bytes_received += o.bytes_received;
    }
}

/// Errors by class: failed connects, and requests that ended in an error.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Errors {
    /// Connects refused by every address of the target (nothing listening); each
    /// is one error, and no request finishes with it.
    pub connect_refused: u64,
    /// Connects that failed otherwise (unreachable, out of ports or file
    /// descriptors); as `connect_refused`, errors that finish no request.
    pub connect_other: u64,
    /// The server reset the connection.
    pub reset: u64,
    /// The server closed the connection before any byte of the response.
    pub closed: u64,
    /// Every attempt timed out and no retry was left.
    pub timeout: u64,
    /// The response was short or garbled (bad head, bad length or chunk, extra bytes).
    pub malformed: u64,
    /// A complete, valid response whose status is not expected
    /// (`--expect-status`, by default 200 to 399).
    pub unexpected_status: u64,
    /// Any other socket error.
    pub io_other: u64,
    /// TLS handshakes that failed (by kind in the report's `tls_failures`); as
    /// the connect classes, errors that finish no request.
    pub tls_handshake: u64,
}

impl Errors {
    /// Sum of all classes.
    pub fn total(&self) -> u64 {
        self.connect_refused
            + self.connect_other
            + self.reset
            + self.closed
            + self.timeout
            + self.malformed
            + self.unexpected_status
            + self.io_other
            + self.tls_handshake
    }

    pub(crate) fn add(&mut self, o: &Errors) {
        self.connect_refused += o.connect_refused;
        self.connect_other += o.connect_other;
        self.reset += o.reset;
        self.closed += o.closed;
        self.timeout += o.timeout;
        self.malformed += o.malformed;
        self.unexpected_status += o.unexpected_status;
        self.io_other += o.io_other;
        self.tls_handshake += o.tls_handshake;
    }

    pub(crate) fn bump(&mut self, class: ErrorClass) {
        *match class {
            ErrorClass::ConnectRefused => &mut self.connect_refused,
            ErrorClass::ConnectOther => &mut self.connect_other,
            ErrorClass::Reset => &mut self.reset,
            ErrorClass::Closed => &mut self.closed,
            ErrorClass::Timeout => &mut self.timeout,
            ErrorClass::Malformed => &mut self.malformed,
            ErrorClass::IoOther => &mut self.io_other,
            ErrorClass::TlsHandshake => &mut self.tls_handshake,
        } += 1;
    }
}

/// The class a failed request is counted in (see [`Errors`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ErrorClass {
    ConnectRefused,
    ConnectOther,
    Reset,
    Closed,
    Timeout,
    Malformed,
    IoOther,
    TlsHandshake,
}

/// One second of the run's time series (seconds since the start of the run).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Second {
    /// Seconds since the start (this entry covers `[t, t+1)`).
    pub t: u64,
    /// Requests finished in this second.
    pub completed: u64,
    /// Of which ok.
    pub ok: u64,
    /// Error events in this second: failed requests and failed connects.
    pub errors: u64,
    /// Attempts that timed out in this second.
    pub timeouts: u64,
    /// Response bytes read in this second.
    pub bytes: u64,
    /// With stages: the index (from 0) of the stage under way at the start of
    /// this second; absent without stages.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stage: Option<u32>,
    /// Requests in flight (sent, not finished: waiting for an answer, a retry
    /// or a reconnect) as the second began: each thread counts its own at its
    /// first loop turn in the second, within 100 ms of its start. `null` when
    /// no thread was running then.
    #[serde(default)]
    pub in_flight: Option<u64>,
    /// Median corrected latency of the requests that finished in this second
    /// (answered or failed), us, to 1/16 (the midpoint of a 1/8-octave
    /// bucket); `null` when none finished.
    #[serde(default)]
    pub p50_us: Option<u64>,
    /// 99th percentile of the same, us, to 1/16; `null` when none finished.
    #[serde(default)]
    pub p99_us: Option<u64>,
    /// The latencies behind `p50_us` and `p99_us`, as `[[bucket, count], ...]`
    /// (8 buckets per power of two, exact below 16 us), so that threads and
    /// segments add exactly.
    #[serde(default)]
    pub latency_buckets: CoarseHistogram,
}

impl Second {
    /// Fills in `p50_us` and `p99_us` from `latency_buckets`.
    pub(crate) fn finish(&mut self) {
        self.p50_us = self.latency_buckets.quantile(0.5);
        self.p99_us = self.latency_buckets.quantile(0.99);
    }
}

/// Adds per-second series entry by entry (the longer one sets the length).
pub(crate) fn add_series(into: &mut Vec<Second>, from: &[Second]) {
    if into.len() < from.len() {
        let start = into.len() as u64;
        into.extend((start..from.len() as u64).map(|t| Second {
            t,
            ..Second::default()
        }));
    }
    for (a, b) in into.iter_mut().zip(from) {
        a.completed += b.completed;
        a.ok += b.ok;
        a.errors += b.errors;
        a.timeouts += b.timeouts;
        a.bytes += b.bytes;
        a.in_flight = match (a.in_flight, b.in_flight) {
            (Some(x), Some(y)) => Some(x + y),
            (x, y) => x.or(y),
        };
        a.latency_buckets.add(&b.latency_buckets);
    }
}

/// Status codes 0..=599 are counted in an array; anything else in the last slot.
pub(crate) const STATUS_SLOTS: usize = 601;

/// One thread's measurements.
#[derive(Debug)]
pub(crate) struct Recorder {
    /// From intended start to the request's outcome (coordinated omission
    /// corrected): its complete response or the error that ended it. One
    /// value per finished request.
    pub latency: Hdr<u64>,
    /// Requests unfinished at the end: the end less their intended start.
    pub unfinished_age: Hdr<u64>,
    /// From the last attempt's send to complete response.
    pub latency_uncorrected: Hdr<u64>,
    /// From send to first response byte.
    pub ttfb: Hdr<u64>,
    /// TCP connect durations.
    pub connect: Hdr<u64>,
    /// TLS handshake durations (completed handshakes), from the TCP connect
    /// to the handshake's end.
    pub tls_handshake: Hdr<u64>,
    /// Thread CPU spent in completed TLS handshakes (see `tls_cpu_s` in the report).
    pub tls_cpu: Duration,
    /// Failed TLS handshakes by kind.
    pub tls_failures: HandshakeFailures,
    pub counts: Counts,
    pub errors: Errors,
    pub status: Vec<u64>,
    pub series: Vec<Second>,
    /// Closed users' thinks that ended in a request, drawn and measured.
    pub thinks: ThinkTotals,
    /// HTTP/2: what the streams did (all zero for HTTP/1.1).
    pub h2: H2Counts,
    start: Instant,
}

fn us(d: Duration) -> u64 {
    d.as_micros().min(u128::from(u64::MAX)) as u64
}

impl Recorder {
    pub(crate) fn new(start: Instant) -> Recorder {
        Recorder {
            latency: new_hdr(),
            unfinished_age: new_hdr(),
            latency_uncorrected: new_hdr(),
            ttfb: new_hdr(),
            connect: new_hdr(),
            tls_handshake: new_hdr(),
            tls_cpu: Duration::ZERO,
            tls_failures: HandshakeFailures::default(),
            counts: Counts::default(),
            errors: Errors::default(),
            status: vec![0; STATUS_SLOTS],
            series: Vec::with_capacity(64),
            thinks: ThinkTotals::default(),
            h2: H2Counts::default(),
            start,
        }
    }

    #[inline]
    fn second(&mut self, now: Instant) -> &mut Second {
        let t = now.saturating_duration_since(self.start).as_secs() as usize;
        while self.series.len() <= t {
            let t = self.series.len() as u64;
            self.series.push(Second {
                t,
                ..Second::default()
            });
        }
        &mut self.series[t]
    }

    /// A complete, valid response; `ok` when its status is expected.
    #[inline]
    pub(crate) fn response(
        &mut self,
        now: Instant,
        intended: Instant,
        (sent, first_byte): (Instant, Instant),
        status: u16,
        ok: bool,
    ) {
        let latency = us(now.saturating_duration_since(intended));
        self.latency.saturating_record(latency);
        self.latency_uncorrected
            .saturating_record(us(now.saturating_duration_since(sent)));
        self.ttfb
            .saturating_record(us(first_byte.saturating_duration_since(sent)));
        self.status[usize::from(status).min(STATUS_SLOTS - 1)] += 1;
        self.counts.completed += 1;
        if ok {
            self.counts.ok += 1;
        } else {
            self.counts.failed += 1;
            self.counts.errors += 1;
            self.errors.unexpected_status += 1;
        }
        let s = self.second(now);
        s.completed += 1;
        s.latency_buckets.record(latency);
        if ok {
            s.ok += 1;
        } else {
            s.errors += 1;
        }
    }

    /// A request that ended in an error other than an unexpected status; its
    /// corrected latency runs to the error.
    pub(crate) fn failure(&mut self, now: Instant, intended: Instant, class: ErrorClass) {
        let latency = us(now.saturating_duration_since(intended));
        self.latency.saturating_record(latency);
        self.counts.completed += 1;
        self.counts.failed += 1;
        self.counts.errors += 1;
        self.errors.bump(class);
        let s = self.second(now);
        s.completed += 1;
        s.errors += 1;
        s.latency_buckets.record(latency);
    }

    /// The requests in flight as the second of `now` began (see [`Second::in_flight`]).
    pub(crate) fn in_flight_at(&mut self, now: Instant, n: u64) {
        self.second(now).in_flight = Some(n);
    }

    /// A connect that failed on every address: an error, but no request ends.
    pub(crate) fn connect_error(&mut self, now: Instant, class: ErrorClass) {
        self.counts.errors += 1;
        self.errors.bump(class);
        self.second(now).errors += 1;
    }

    /// A request not finished at `end`: its age `end - intended` is a lower
    /// bound of its latency, kept apart from the latencies. `sent` tells
    /// whether a connection had taken it.
    pub(crate) fn unfinished(&mut self, end: Instant, intended: Instant, sent: bool) {
        self.unfinished_age
            .saturating_record(us(end.saturating_duration_since(intended)));
        if sent {
            self.counts.in_flight += 1;
        } else {
            self.counts.never_sent += 1;
        }
    }

    /// Fills in the counts derived at the end of a thread's run.
    pub(crate) fn close(&mut self) {
        self.counts.scheduled = self.counts.sent + self.counts.never_sent;
    }

    /// An attempt that timed out (whether or not it is retried).
    pub(crate) fn timed_out(&mut self, now: Instant) {
        self.counts.timeouts += 1;
        self.second(now).timeouts += 1;
    }

    /// Response bytes read.
    #[inline]
    pub(crate) fn bytes(&mut self, now: Instant, n: usize) {
        self.counts.bytes_received += n as u64;
        self.second(now).bytes += n as u64;
    }

    /// A connection that finished connecting.
    pub(crate) fn connected(&mut self, took: Duration) {
        self.counts.connections += 1;
        self.connect.saturating_record(us(took));
    }

    /// A TLS handshake that completed after `took`, `resumed` or in full,
    /// having cost this thread `cpu`.
    pub(crate) fn handshake(&mut self, took: Duration, resumed: bool, cpu: Duration) {
        if resumed {
            self.counts.tls_resumed += 1;
        } else {
            self.counts.tls_full += 1;
        }
        self.tls_handshake.saturating_record(us(took));
        self.tls_cpu += cpu;
    }

    /// A TLS handshake that failed: an error, but no request ends.
    pub(crate) fn handshake_failed(&mut self, now: Instant, kind: HandshakeFailureKind) {
        self.tls_failures.bump(kind);
        self.connect_error(now, ErrorClass::TlsHandshake);
    }

    /// Adds another thread's recorder into this one.
    pub(crate) fn absorb(&mut self, o: &Recorder) {
        // The histograms share bounds, so adding cannot fail.
        let _ = self.latency.add(&o.latency);
        let _ = self.unfinished_age.add(&o.unfinished_age);
        let _ = self.latency_uncorrected.add(&o.latency_uncorrected);
        let _ = self.ttfb.add(&o.ttfb);
        let _ = self.connect.add(&o.connect);
        let _ = self.tls_handshake.add(&o.tls_handshake);
        self.tls_cpu += o.tls_cpu;
        self.tls_failures.add(&o.tls_failures);
        self.counts.add(&o.counts);
        self.errors.add(&o.errors);
        for (a, b) in self.status.iter_mut().zip(&o.status) {
            *a += b;
        }
        add_series(&mut self.series, &o.series);
        self.thinks.add(&o.thinks);
        self.h2.add(&o.h2);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_request_ends_in_one_way() {
        let t0 = Instant::now();
        let mut r = Recorder::new(t0);
        let later = t0 + Duration::from_millis(3);
        r.response(later, t0, (t0, later), 200, true);
        r.response(later, t0, (t0, later), 404, false);
        r.failure(later, t0, ErrorClass::Malformed);
        r.timed_out(later);
        r.failure(later, t0, ErrorClass::Timeout);
        r.connect_error(later, ErrorClass::ConnectRefused);
        assert_eq!(r.counts.completed, 4);
        assert_eq!(r.counts.ok, 1);
        assert_eq!(r.counts.completed, r.counts.ok + r.counts.failed);
        assert_eq!(r.counts.errors, r.errors.total());
        assert_eq!(
            r.counts.errors,
            r.counts.failed + 1,
            "a failed connect is an error"
        );
        assert_eq!(r.errors.unexpected_status, 1);
        assert_eq!(r.status[404], 1);
        assert_eq!(r.latency.len(), 4, "one per finished request, failures too");
        assert_eq!(r.series[0].completed, 4);
        assert_eq!(r.series[0].errors, 4);
    }

    #[test]
    fn unfinished_requests_are_kept_apart_with_their_ages() {
        let t0 = Instant::now();
        let mut r = Recorder::new(t0);
        r.counts.sent = 3;
        let end = t0 + Duration::from_secs(2);
        r.response(t0 + Duration::from_millis(5), t0, (t0, t0), 200, true);
        r.unfinished(end, t0 + Duration::from_millis(500), true);
        r.unfinished(end, t0 + Duration::from_millis(1500), true);
        r.unfinished(end, t0 + Duration::from_millis(1900), false);
        r.close();
        assert_eq!((r.counts.in_flight, r.counts.never_sent), (2, 1));
        assert_eq!(r.counts.scheduled, 4);
        assert_eq!(r.counts.sent, r.counts.completed + r.counts.in_flight);
        // The latency holds the finished request only (5 ms); the ages are
        // apart: 1.5 s for the oldest, 100 ms for the newest.
        assert_eq!(r.latency.len(), r.counts.completed);
        assert!(r.latency.max() < 6_000, "{}", r.latency.max());
        assert_eq!(r.unfinished_age.len(), 3);
        assert!(r.unfinished_age.max() >= 1_499_000 && r.unfinished_age.max() <= 1_501_000);
        assert!(r.unfinished_age.min() >= 99_000 && r.unfinished_age.min() <= 101_000);
        assert_eq!(
            r.latency_uncorrected.len(),
            1,
            "unfinished have no send-to-end time"
        );
    }

    #[test]
    fn series_grows_by_the_second_and_adds() {
        let t0 = Instant::now();
        let mut a = Recorder::new(t0);
        a.failure(t0 + Duration::from_millis(2500), t0, ErrorClass::Reset);
        assert_eq!(a.series.len(), 3);
        assert_eq!(a.series[2].errors, 1);
        let mut b = Recorder::new(t0);
        b.bytes(t0 + Duration::from_millis(4100), 10);
        a.absorb(&b);
        assert_eq!(a.series.len(), 5);
        assert_eq!((a.series[4].t, a.series[4].bytes), (4, 10));
        assert_eq!(a.counts.completed, 1);
    }
}
