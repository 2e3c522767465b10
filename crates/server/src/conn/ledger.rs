//! The ledger of a connection's owed responses: those produced and not yet
//! completely written, in wire order, with their log lines.
//!
//! A response counts (by status class, and in the service-time histogram) only
//! once its last byte is out ([`Ledger::settle`]). A client that goes before
//! that abandons it ([`Ledger::abandon`]): it counts as abandoned and is logged
//! with status 499 and the body bytes that did go out. Each log line is
//! written as the response is produced, without its service time, into one
//! buffer per connection (no allocation per request), and finished then.

use std::net::IpAddr;
use std::ops::Range;
use std::time::Instant;

use servelab_http::{RequestHead, Status};

use crate::log;
use crate::runtime::shared::{Local, Shared};

/// A response produced and not yet completely written.
#[derive(Debug)]
struct Owed {
    status: Status,
    /// Bytes of the whole response on the wire, head and body.
    wire: u64,
    /// Body bytes the head announced.
    body_len: u64,
    /// Where its log line (without the service time) ends in `log_buf`, and
    /// where its `status bytes` fields are (`0..0` without a log).
    log_end: usize,
    fields: Range<usize>,
    started: Instant,
}

/// The responses a connection owes its client.
#[derive(Debug, Default)]
pub(super) struct Ledger {
    /// In wire order.
    owed: Vec<Owed>,
    /// Bytes of the owed responses written so far.
    sent: u64,
    /// Log lines of owed responses, each missing its final ` <µs>\n`.
    log_buf: Vec<u8>,
}

/// One response just produced, for [`Ledger::owe`].
#[derive(Debug, Clone, Copy)]
pub(super) struct Produced {
    pub(super) status: Status,
    /// Bytes of the whole response on the wire, head and body.
    pub(super) wire: u64,
    /// Body bytes the head announced.
    pub(super) body_len: u64,
    /// When its request was parsed (the service time counts from here).
    pub(super) started: Instant,
}

impl Ledger {
    /// Nothing is owed.
    pub(super) fn is_empty(&self) -> bool {
        self.owed.is_empty()
    }

    /// Records a response just produced (to `req`, `None` for a request that
    /// could not be parsed, from `ip`; `http2`: on an HTTP/2 stream), with
    /// its log line.
    pub(super) fn owe(
        &mut self,
        req: Option<&RequestHead<'_>>,
        http2: bool,
        ip: IpAddr,
        p: Produced,
        site: &Shared,
        w: &Local,
    ) {
        let fields = if w.log.enabled() {
            let (clf, at) = (w.clock.clf(), self.log_buf.len());
            let f = site.log_format.request(
                &mut self.log_buf,
                ip,
                clf,
                req,
                http2,
                p.status,
                p.body_len,
            );
            at + f.start..at + f.end
        } else {
            0..0
        };
        self.owed.push(Owed {
            status: p.status,
            wire: p.wire,
            body_len: p.body_len,
            log_end: self.log_buf.len(),
            fields,
            started: p.started,
        });
    }

    /// `n` more bytes of the owed responses are out.
    pub(super) fn sent(&mut self, n: u64) {
        self.sent += n;
    }

    /// Every owed response is out: count and log each. Returns the time it
    /// took as now (the caller's next wait starts then).
    pub(super) fn settle(&mut self, site: &Shared, w: &mut Local) -> Instant {
        let now = Instant::now();
        let mut from = 0;
        let logging = w.log.enabled();
        for o in &self.owed {
            let took = now.saturating_duration_since(o.started);
            w.tally.completed(o.status.code(), took);
            if logging {
                let us = took.as_micros() as u64;
                let start = &self.log_buf[from..o.log_end];
                site.log_format.finish(&mut w.line, start, us);
                w.log.line(&w.line);
                from = o.log_end;
            }
        }
        self.clear();
        now
    }

    /// The client is gone (closed while served, reset, broken pipe, write
    /// timeout): count the owed responses as abandoned, not by their status;
    /// log them as 499 with the body bytes that did go out.
    pub(super) fn abandon(&mut self, site: &Shared, w: &mut Local) {
        let now = Instant::now();
        let mut sent = self.sent;
        let mut from = 0;
        for o in &self.owed {
            let got = sent.min(o.wire);
            sent -= got;
            if w.log.enabled() {
                // What went out beyond the head is body.
                let head = o.wire - o.body_len.min(o.wire);
                let fields = o.fields.start - from..o.fields.end - from;
                let us = now.saturating_duration_since(o.started).as_micros() as u64;
                let start = &self.log_buf[from..o.log_end];
                let body = got.saturating_sub(head);
                let mut line = start[..fields.start].to_vec();
                site.log_format
                    .status_and_bytes(&mut line, log::CLIENT_CLOSED, body);
                line.extend_from_slice(&start[fields.end..]);
                site.log_format.finish(&mut w.line, &line, us);
                w.log.line(&w.line);
                from = o.log_end;
            }
            w.tally.request_finished(true);
        }
        self.clear();
    }

    fn clear(&mut self) {
        self.owed.clear();
        self.sent = 0;
        self.log_buf.clear();
    }
}
