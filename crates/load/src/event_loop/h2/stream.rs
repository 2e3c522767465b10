//! A request's life on HTTP/2 streams: an attempt waits at its connection
//! for a stream, opens one (HEADERS, then the body within the flow-control
//! windows), takes the response head and body, and ends ok, in an error, in
//! a timeout (the stream is cancelled), or refused (sent again once).

use std::time::Instant;

use servelab_h2::{ErrorCode, Event, SendError, State, StreamId};

use super::H2Loop;
use super::link::LinkState;
use super::slot::SlotState;
use crate::metrics::ErrorClass;

impl H2Loop {
    /// Starts an attempt of slot `k`'s request (a new one or a retry).
    pub(super) fn attempt(&mut self, k: usize, now: Instant) {
        self.rec.counts.attempts += 1;
        let s = &mut self.slots[k];
        s.req.attempts += 1;
        s.req.first_byte = None;
        match self.cfg.timeout {
            Some(t) => {
                let d = t.sample_duration(&mut s.rng);
                s.timer.arm(now + d, k, &mut self.timers);
            }
            None => s.timer.disarm(),
        }
        self.submit(k, now);
    }

    /// Puts slot `k`'s request on its connection: on a stream now if one can
    /// open, else in the connection's queue (connecting it if it has no
    /// socket).
    fn submit(&mut self, k: usize, now: Instant) {
        let l = self.slots[k].link;
        self.slots[k].state = SlotState::Waiting;
        if self.links[l].waiting.is_empty() && self.can_open(l) {
            return self.open_stream(l, k, now);
        }
        if !self.slots[k].waited {
            self.slots[k].waited = true;
            self.rec.h2.waited_for_stream += 1;
        }
        self.links[l].waiting.push_back(k);
        if self.links[l].state == LinkState::Down {
            self.connect(l, now);
        }
    }

    /// Whether link `l` can open a stream now: up, the server's SETTINGS
    /// in, no GOAWAY, and below both `--streams` and the server's limit.
    fn can_open(&self, l: usize) -> bool {
        let link = &self.links[l];
        let Some(h2) = link.h2.as_deref() else {
            return false;
        };
        if link.state != LinkState::Up || h2.state() != State::Open {
            return false;
        }
        let server = h2
            .peer_settings()
            .max_concurrent_streams
            .unwrap_or(u32::MAX);
        link.open.len() < self.streams.min(server) as usize
    }

    /// Opens the streams that link `l` can take for its waiting slots.
    pub(super) fn pump(&mut self, l: usize, now: Instant) {
        while self.can_open(l) {
            let Some(k) = self.links[l].waiting.pop_front() else {
                return;
            };
            self.open_stream(l, k, now);
        }
    }

    fn open_stream(&mut self, l: usize, k: usize, now: Instant) {
        let s = &mut self.slots[k];
        let p = &self.cfg.targets[s.req.target];
        let link = &mut self.links[l];
        let Some(h2) = link.h2.as_deref_mut() else {
            return link.waiting.push_front(k);
        };
        let opened =
            p.h2.with_head(|head, fields| h2.send_request(head, fields, p.body.is_empty()));
        let id = match opened {
            Ok(id) => id,
            Err(SendError::TooManyStreams | SendError::Draining | SendError::ConnectionClosed)
            | Err(SendError::StreamNotOpen(_)) => return link.waiting.push_front(k),
        };
        link.open.push((id.0, k));
        s.state = SlotState::Streaming;
        s.stream = id.0;
        s.req.sent = now;
        s.req.written = true;
        s.body_sent = 0;
        s.got = 0;
        s.length = None;
        s.status = 0;
        s.waited = false;
        self.rec.h2.streams_opened += 1;
        if !p.body.is_empty() {
            self.send_body(l, k);
        }
        self.mark_dirty(l);
    }

    /// Hands the connection as much of slot `k`'s body as the windows take;
    /// [`Event::WindowOpened`] calls again for the rest.
    fn send_body(&mut self, l: usize, k: usize) {
        let s = &mut self.slots[k];
        let body = &self.cfg.targets[s.req.target].body;
        let Some(h2) = self.links[l].h2.as_deref_mut() else {
            return;
        };
        if let Ok(n) = h2.send_data(StreamId(s.stream), &body[s.body_sent..], true) {
            s.body_sent += n;
        }
    }

    fn slot_of(&self, l: usize, stream: StreamId) -> Option<usize> {
        self.links[l]
            .open
            .iter()
            .find(|(id, _)| *id == stream.0)
            .map(|&(_, k)| k)
    }

    /// The stream of slot `k` is over (answered, reset or cancelled): it
    /// leaves its connection's table.
    fn close_stream(&mut self, l: usize, k: usize) {
        let open = &mut self.links[l].open;
        if let Some(i) = open.iter().position(|&(_, x)| x == k) {
            open.swap_remove(i);
        }
    }

    /// Handles what link `l`'s connection reported after a read, then opens
    /// the streams that became possible.
    pub(super) fn handle_events(&mut self, l: usize, now: Instant) {
        while let Some(ev) = self.links[l].h2.as_deref_mut().and_then(|h| h.poll_event()) {
            self.on_h2_event(l, &ev, now);
            // Its buffers take the next response (no allocation per response).
            if let Some(h2) = self.links[l].h2.as_deref_mut() {
                h2.recycle(ev);
            }
        }
        let link = &self.links[l];
        if !link.settled
            && link
                .h2
                .as_deref()
                .is_some_and(|h| h.state() != State::Handshake)
        {
            if let Some(max) = link
                .h2
                .as_deref()
                .and_then(|h| h.peer_settings().max_concurrent_streams)
            {
                let m = &mut self.rec.h2.server_max_streams;
                *m = Some(m.map_or(max, |x| x.min(max)));
            }
            self.usable(l, now);
        }
        self.pump(l, now);
    }

    /// One event of link `l`'s connection.
    fn on_h2_event(&mut self, l: usize, ev: &Event, now: Instant) {
        match ev {
            Event::Response(r) => {
                let Some(k) = self.slot_of(l, r.stream) else {
                    return;
                };
                let s = &mut self.slots[k];
                s.req.first_byte = Some(now);
                s.status = r.status;
                s.length = r
                    .header("content-length")
                    .and_then(|v| std::str::from_utf8(v).ok()?.parse().ok());
                if r.end_stream {
                    self.finish(l, k, now);
                }
            }
            &Event::Data {
                stream,
                ref data,
                end_stream,
            } => {
                let Some(k) = self.slot_of(l, stream) else {
                    return;
                };
                self.slots[k].got += data.len() as u64;
                if end_stream {
                    self.finish(l, k, now);
                }
            }
            &Event::Reset {
                stream,
                code,
                remote,
            } => {
                let Some(k) = self.slot_of(l, stream) else {
                    return;
                };
                self.close_stream(l, k);
                if remote && code == ErrorCode::RefusedStream {
                    self.refused(k, now);
                } else if remote {
                    self.rec.h2.streams_reset += 1;
                    self.fail(k, now, ErrorClass::Reset);
                } else {
                    // The connection reset it for a stream error: the
                    // server broke the protocol on it.
                    self.fail(k, now, ErrorClass::Malformed);
                }
            }
            &Event::WindowOpened { stream } => {
                if let Some(k) = self.slot_of(l, stream) {
                    self.send_body(l, k);
                }
            }
            Event::GoAway { .. } => self.rec.h2.goaways += 1,
            Event::Request(_) => {} // never on a client
        }
    }

    /// Slot `k`'s response ended: check its body against its length, count it.
    fn finish(&mut self, l: usize, k: usize, now: Instant) {
        self.close_stream(l, k);
        let s = &mut self.slots[k];
        s.timer.disarm();
        let head = self.cfg.targets[s.req.target].head;
        if !head && s.length.is_some_and(|n| n != s.got) {
            return self.fail(k, now, ErrorClass::Malformed);
        }
        let first = s.req.first_byte.unwrap_or(now);
        let ok = self.cfg.expect.contains(s.status);
        self.rec
            .response(now, s.req.intended, (s.req.sent, first), s.status, ok);
        self.rec.h2.streams_completed += 1;
        self.after(k, now);
    }

    /// Slot `k`'s request ends in error `class`.
    pub(super) fn fail(&mut self, k: usize, now: Instant, class: ErrorClass) {
        self.slots[k].timer.disarm();
        self.rec.failure(now, self.slots[k].req.intended, class);
        self.after(k, now);
    }

    /// The server did not process slot `k`'s stream (REFUSED_STREAM, or
    /// above its GOAWAY's last stream): send it again, once.
    fn refused(&mut self, k: usize, now: Instant) {
        self.rec.h2.streams_refused += 1;
        if self.slots[k].req.close_retried {
            return self.fail(k, now, ErrorClass::Reset);
        }
        self.slots[k].req.close_retried = true;
        self.rec.counts.attempts += 1;
        self.submit(k, now);
    }

    /// Slot `k`'s stream was lost with its connection (closed, reset, or a
    /// protocol error): an idempotent request with no byte of its answer yet
    /// goes out again once on a new connection (as a keep-alive close in
    /// HTTP/1.1: `close_retries`); otherwise it fails with `class`.
    pub(super) fn stream_lost(&mut self, k: usize, now: Instant, class: ErrorClass) {
        let s = &mut self.slots[k];
        if self.cfg.retry_on_close && s.req.first_byte.is_none() && !s.req.close_retried {
            s.req.close_retried = true;
            self.rec.counts.close_retries += 1;
            self.rec.counts.attempts += 1;
            return self.submit(k, now);
        }
        self.fail(k, now, class);
    }

    /// Slot `k`'s attempt timed out: its stream is cancelled (the connection
    /// goes on), and it is retried after `retry_wait` or fails.
    pub(super) fn timed_out(&mut self, k: usize, now: Instant) {
        self.rec.timed_out(now);
        let l = self.slots[k].link;
        match self.slots[k].state {
            SlotState::Streaming => {
                self.close_stream(l, k);
                if let Some(h2) = self.links[l].h2.as_deref_mut() {
                    h2.reset(StreamId(self.slots[k].stream), ErrorCode::Cancel);
                    // After a GOAWAY, the last stream's end ends the connection.
                    let ended = h2.state() == State::Closed;
                    self.rec.h2.streams_cancelled += 1;
                    self.mark_dirty(l);
                    if ended {
                        self.link_failed(l, now, ErrorClass::Closed);
                    }
                }
                self.pump(l, now);
            }
            _ => self.links[l].waiting.retain(|&x| x != k),
        }
        let retry = self
            .cfg
            .retries
            .is_none_or(|r| self.slots[k].req.attempts <= r);
        if !retry {
            self.rec
                .failure(now, self.slots[k].req.intended, ErrorClass::Timeout);
            return self.after(k, now);
        }
        self.rec.counts.retries += 1;
        let s = &mut self.slots[k];
        let wait = self.cfg.retry_wait.sample_duration(&mut s.rng);
        s.state = SlotState::RetryWait;
        s.timer.arm(now + wait, k, &mut self.timers);
    }
}
