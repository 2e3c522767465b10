//! What the driver sends: response heads, data within both flow-control windows, resets and
//! GOAWAY (RFC 9113 §5.2, §6.8, §8.3.2).

use crate::conn::guard::Abuse;
use crate::conn::{Connection, Phase, Role};
use crate::error::{ErrorCode, H2Error};
use crate::event::Event;
use crate::field::CONNECTION_SPECIFIC;
use crate::frame::{Frame, encode_frame, encode_header_block};
use crate::stream_id::StreamId;

/// Why the driver's answer was not sent. Neither is a failure of the driver: the peer went
/// away first (an [`Event::Reset`] or the connection's end says so too).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum SendError {
    /// The stream was reset or has already ended our side: drop the response.
    #[error("stream {0} is not open for sending")]
    StreamNotOpen(StreamId),
    /// The connection is closed: flush the output and close.
    #[error("connection closed")]
    ConnectionClosed,
    /// Client: GOAWAY was sent or received (or the stream ids ran out), so no new stream
    /// may open: open a new connection.
    #[error("the connection takes no new stream")]
    Draining,
    /// Client: the server's SETTINGS_MAX_CONCURRENT_STREAMS is reached: wait for a stream to
    /// end.
    #[error("the server's concurrency limit is reached")]
    TooManyStreams,
}

impl<R: Role> Connection<R> {
    /// Sends as much of `data` on `stream` as both flow-control windows and the peer's frame
    /// size allow, and returns how much was taken. `end_stream` is set on the last frame only
    /// if all of `data` was taken (empty `data` with `end_stream` ends the stream). Taking
    /// less than offered marks the stream blocked: an [`Event::WindowOpened`] says when to
    /// offer the rest, and [`Connection::stalled`] tells the driver it is waiting.
    pub fn send_data(
        &mut self,
        stream: StreamId,
        data: &[u8],
        end_stream: bool,
    ) -> Result<usize, SendError> {
        self.sendable(stream)?;
        if data.is_empty() && !end_stream {
            return Ok(0);
        }
        let conn_window = self.conn_send_window;
        let max_frame = self.peer.max_frame_size as usize;
        let s = self
            .streams
            .get_mut(&stream.0)
            .expect("checked by sendable");
        let window = conn_window.min(s.send_window).max(0) as usize;
        let n = data.len().min(window);
        let done = n == data.len();
        if n == 0 && !(done && end_stream) {
            s.blocked = true;
            return Ok(0);
        }
        s.blocked = !done;
        s.send_window -= n as i64;
        self.conn_send_window -= n as i64;
        let mut chunks = data[..n].chunks(max_frame).peekable();
        if chunks.peek().is_none() {
            encode_frame(
                &mut self.out,
                &Frame::Data {
                    stream,
                    data: &[],
                    end_stream: true,
                    flow_len: 0,
                },
            );
        }
        while let Some(c) = chunks.next() {
            encode_frame(
                &mut self.out,
                &Frame::Data {
                    stream,
                    data: c,
                    end_stream: done && end_stream && chunks.peek().is_none(),
                    flow_len: c.len() as u32,
                },
            );
        }
        if done && end_stream {
            self.end_local(stream);
        }
        Ok(n)
    }

    /// How many octets [`Connection::send_data`] would take now on `stream` (0 if it is not
    /// open for sending): for a driver that reads the file only as far as it can send.
    pub fn send_capacity(&self, stream: StreamId) -> usize {
        match self.streams.get(&stream.0) {
            Some(s) if s.local_open() => self.conn_send_window.min(s.send_window).max(0) as usize,
            _ => 0,
        }
    }

    /// Resets `stream` with `code` (the driver gave up on it: an I/O error, a stalled
    /// window). No event follows.
    pub fn reset(&mut self, stream: StreamId, code: ErrorCode) {
        if self.phase == Phase::Closed {
            return;
        }
        self.streams.remove(&stream.0);
        self.remember_reset(stream);
        encode_frame(&mut self.out, &Frame::RstStream { stream, code });
        self.maybe_done();
    }

    /// Graceful shutdown: GOAWAY NO_ERROR with the last stream the peer opened, so that every
    /// request already sent is answered and no new one is taken. The state becomes
    /// [`crate::State::Draining`], then [`crate::State::Closed`] when the last stream ends.
    pub fn shutdown(&mut self) {
        if matches!(self.phase, Phase::Closed) || self.goaway_last.is_some() {
            return;
        }
        self.goaway_last = Some(self.last_peer_stream);
        self.write_goaway(ErrorCode::NoError, b"");
        self.phase = Phase::Draining;
        self.maybe_done();
    }

    /// Ends the connection now with GOAWAY `code` (a timeout the driver enforces:
    /// SETTINGS_TIMEOUT, a stalled window with ENHANCE_YOUR_CALM or NO_ERROR for idleness).
    pub fn goaway(&mut self, code: ErrorCode) {
        if self.phase != Phase::Closed {
            self.fail(H2Error::conn(code, "closed by the server"));
        }
    }

    pub(super) fn sendable(&self, stream: StreamId) -> Result<(), SendError> {
        if self.phase == Phase::Closed {
            return Err(SendError::ConnectionClosed);
        }
        match self.streams.get(&stream.0) {
            Some(s) if s.local_open() => Ok(()),
            _ => Err(SendError::StreamNotOpen(stream)),
        }
    }

    /// Encodes and queues a head: the pseudo-fields, then `fields` (lowercased, without the
    /// connection-specific ones, §8.2). The stream must be open for sending.
    pub(super) fn write_head<'f>(
        &mut self,
        stream: StreamId,
        pseudo: &[(&[u8], &[u8])],
        fields: impl IntoIterator<Item = (&'f [u8], &'f [u8])>,
        end_stream: bool,
    ) {
        let mut block = std::mem::take(&mut self.head_buf);
        block.clear();
        self.encoder.begin_block(&mut block);
        for (name, value) in pseudo {
            self.encoder.field(name, value, &mut block);
        }
        // Names up to 64 octets are lowercased on the stack (an HTTP/1.1
        // handler's `Content-Type`), longer ones in a buffer made for them.
        let mut short = [0u8; 64];
        let mut long = Vec::new();
        for (name, value) in fields {
            // The same field at the same place as in the last head: encoded
            // as then, past the checks below (it passed them then).
            if self.encoder.repeat(name, value, &mut block) {
                continue;
            }
            let mut name: &[u8] = name;
            if name.iter().any(u8::is_ascii_uppercase) {
                let buf: &mut [u8] = if name.len() <= short.len() {
                    &mut short[..name.len()]
                } else {
                    long.clear();
                    long.resize(name.len(), 0);
                    &mut long
                };
                for (b, c) in buf.iter_mut().zip(name) {
                    *b = c.to_ascii_lowercase();
                }
                name = buf;
            }
            if CONNECTION_SPECIFIC.contains(&name) {
                continue;
            }
            self.encoder.field_afresh(name, value, &mut block);
        }
        encode_header_block(
            &mut self.out,
            stream,
            &block,
            end_stream,
            self.peer.max_frame_size,
        );
        self.head_buf = block;
        if end_stream {
            self.end_local(stream);
        }
    }

    /// We ended our side of `stream`.
    pub(super) fn end_local(&mut self, stream: StreamId) {
        if let Some(s) = self.streams.get_mut(&stream.0)
            && s.close_local()
        {
            self.streams.remove(&stream.0);
            self.maybe_done();
        }
    }

    /// Resets `stream` for a stream error: RST_STREAM, an event if the driver knew the
    /// stream, and a count toward [`crate::Limits::max_local_resets`].
    pub(super) fn local_reset(&mut self, stream: StreamId, code: ErrorCode) -> Result<(), H2Error> {
        if self.streams.remove(&stream.0).is_some() {
            self.events.push_back(Event::Reset {
                stream,
                code,
                remote: false,
            });
        }
        self.remember_reset(stream);
        self.control(&Frame::RstStream { stream, code })?;
        self.maybe_done();
        if code != ErrorCode::NoError {
            self.guard.count(Abuse::LocalReset, &self.limits)?;
        }
        Ok(())
    }

    fn remember_reset(&mut self, stream: StreamId) {
        if self.recently_reset.len() >= self.limits.max_concurrent_streams.max(1) as usize {
            self.recently_reset.pop_front();
        }
        self.recently_reset.push_back(stream);
    }

    pub(super) fn write_goaway(&mut self, code: ErrorCode, debug: &[u8]) {
        encode_frame(
            &mut self.out,
            &Frame::GoAway {
                last_stream: self.last_peer_stream,
                code,
                debug,
            },
        );
    }
}
