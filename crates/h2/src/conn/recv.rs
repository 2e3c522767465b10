//! Frames from the peer, by type: the stream-state rules of RFC 9113 §5.1, flow control on
//! what we receive (§6.9), header blocks (§4.3, §6.10) and settings (§6.5).

use crate::conn::guard::Abuse;
use crate::conn::{Connection, HeaderBlock, Phase, Role};
use crate::error::{ErrorCode, H2Error};
use crate::event::Event;
use crate::frame::{Frame, MAX_WINDOW, SettingsPayload};
use crate::hpack::HpackError;
use crate::stream_id::StreamId;

use ErrorCode::{FlowControlError, ProtocolError, StreamClosed};

impl<R: Role> Connection<R> {
    /// Handles one decoded frame.
    pub(super) fn on_frame(&mut self, frame: Frame<'_>) -> Result<(), H2Error> {
        if self.phase == Phase::FirstSettings {
            let Frame::Settings { ack: false, .. } = frame else {
                return Err(H2Error::conn(ProtocolError, "first frame not SETTINGS"));
            };
            self.phase = Phase::Open;
        }
        // Between HEADERS and END_HEADERS, only CONTINUATION of the same stream (§6.10).
        if let Some(b) = &self.block {
            match frame {
                Frame::Continuation { stream, .. } if stream == b.stream => {}
                _ => return Err(H2Error::conn(ProtocolError, "frame inside a header block")),
            }
        }
        match frame {
            Frame::Data {
                stream,
                data,
                end_stream,
                flow_len,
            } => self.on_data(stream, data, end_stream, flow_len),
            Frame::Headers {
                stream,
                block,
                end_stream,
                end_headers,
                priority,
            } => {
                // A server takes new streams on odd ids; a client only answers on its own.
                let refused = if R::CLIENT {
                    self.is_idle(stream)
                } else {
                    !stream.is_client_initiated()
                };
                if refused {
                    return Err(H2Error::conn(
                        ProtocolError,
                        "HEADERS on a stream the peer may not open",
                    ));
                }
                let self_dependent = priority.is_some_and(|p| p.dependency == stream);
                if block.len() > self.limits.max_header_block {
                    return Err(calm("header block too large"));
                }
                if end_headers {
                    self.on_header_block(stream, block, end_stream, self_dependent)
                } else {
                    self.block = Some(HeaderBlock {
                        stream,
                        buf: block.to_vec(),
                        end_stream,
                        continuations: 0,
                        self_dependent,
                    });
                    Ok(())
                }
            }
            Frame::Continuation {
                block, end_headers, ..
            } => {
                let Some(b) = &mut self.block else {
                    return Err(H2Error::conn(ProtocolError, "CONTINUATION without HEADERS"));
                };
                b.continuations = b.continuations.saturating_add(1);
                if b.continuations > self.limits.max_continuations {
                    return Err(calm("too many CONTINUATION frames"));
                }
                if b.buf.len() + block.len() > self.limits.max_header_block {
                    return Err(calm("header block too large"));
                }
                b.buf.extend_from_slice(block);
                if block.is_empty() && !end_headers {
                    self.guard.count(Abuse::Empty, &self.limits)?;
                }
                if end_headers {
                    let b = self.block.take().expect("checked above");
                    self.on_header_block(b.stream, &b.buf, b.end_stream, b.self_dependent)
                } else {
                    Ok(())
                }
            }
            Frame::Priority { .. } => self.guard.count(Abuse::Empty, &self.limits),
            Frame::RstStream { stream, code } => {
                if self.is_idle(stream) {
                    return Err(H2Error::conn(ProtocolError, "RST_STREAM on an idle stream"));
                }
                if self.streams.remove(&stream.0).is_some() {
                    self.events.push_back(Event::Reset {
                        stream,
                        code,
                        remote: true,
                    });
                    self.maybe_done();
                    self.guard.count(Abuse::PeerReset, &self.limits)?;
                }
                Ok(())
            }
            Frame::Settings { ack, params } => self.on_settings(ack, params),
            Frame::PushPromise { .. } => {
                Err(H2Error::conn(ProtocolError, "PUSH_PROMISE from a client"))
            }
            Frame::Ping { ack, data } => {
                if ack {
                    // We send no PING, so an ACK answers nothing: ignored.
                    return Ok(());
                }
                self.guard.count(Abuse::Ping, &self.limits)?;
                self.control(&Frame::Ping { ack: true, data })
            }
            Frame::GoAway {
                last_stream, code, ..
            } => {
                if R::CLIENT {
                    self.refused_by_goaway(last_stream);
                }
                self.events.push_back(Event::GoAway { last_stream, code });
                if self.phase == Phase::Open {
                    self.phase = Phase::Draining;
                }
                self.maybe_done();
                Ok(())
            }
            Frame::WindowUpdate { stream, increment } => self.on_window_update(stream, increment),
            Frame::Unknown { .. } => self.guard.count(Abuse::Empty, &self.limits),
        }
    }

    fn on_data(
        &mut self,
        stream: StreamId,
        data: &[u8],
        end_stream: bool,
        flow_len: u32,
    ) -> Result<(), H2Error> {
        if self.is_idle(stream) {
            return Err(H2Error::conn(ProtocolError, "DATA on an idle stream"));
        }
        let flow = i64::from(flow_len);
        if flow > self.conn_recv_window {
            return Err(H2Error::conn(
                FlowControlError,
                "DATA beyond the connection window",
            ));
        }
        self.conn_recv_window -= flow;
        // The connection's credit comes back whatever happens to the stream: a reset stream's
        // DATA still used the connection window.
        self.release_connection(flow_len);
        if data.is_empty() && !end_stream {
            self.guard.count(Abuse::Empty, &self.limits)?;
        }
        let initial = self.ours.initial_window_size;
        let Some(s) = self.streams.get_mut(&stream.0) else {
            if self.recently_reset.contains(&stream) {
                return Ok(());
            }
            return Err(H2Error::stream(
                stream,
                StreamClosed,
                "DATA on a closed stream",
            ));
        };
        if !s.remote_open() {
            return Err(H2Error::stream(
                stream,
                StreamClosed,
                "DATA after END_STREAM",
            ));
        }
        if !s.got_head {
            return Err(H2Error::stream(
                stream,
                ProtocolError,
                "DATA before the head",
            ));
        }
        if flow > s.recv_window {
            return Err(H2Error::stream(
                stream,
                FlowControlError,
                "DATA beyond the stream window",
            ));
        }
        s.recv_window -= flow;
        s.received += data.len() as u64;
        let data = self.body(data);
        self.deliver(stream, data, end_stream)?;
        let Some(s) = self.streams.get_mut(&stream.0).filter(|_| !end_stream) else {
            return Ok(());
        };
        // Give the credit back once half the window is used: one WINDOW_UPDATE per half
        // window, not one per frame.
        s.recv_unacked += flow_len;
        if s.recv_unacked >= initial / 2 {
            let increment = std::mem::take(&mut s.recv_unacked);
            s.recv_window += i64::from(increment);
            crate::frame::encode_frame(&mut self.out, &Frame::WindowUpdate { stream, increment });
        }
        Ok(())
    }

    fn release_connection(&mut self, n: u32) {
        self.conn_recv_unacked += n;
        if self.conn_recv_unacked >= crate::settings::DEFAULT_WINDOW / 2 {
            let increment = std::mem::take(&mut self.conn_recv_unacked);
            self.conn_recv_window += i64::from(increment);
            crate::frame::encode_frame(
                &mut self.out,
                &Frame::WindowUpdate {
                    stream: StreamId::CONNECTION,
                    increment,
                },
            );
        }
    }

    /// A complete header block: a head (request or response, by role), trailers, or a block
    /// to decode and drop.
    fn on_header_block(
        &mut self,
        stream: StreamId,
        block: &[u8],
        end_stream: bool,
        self_dependent: bool,
    ) -> Result<(), H2Error> {
        if R::CLIENT {
            self.on_response_block(stream, block, end_stream, self_dependent)
        } else if stream <= self.last_peer_stream {
            self.on_trailers(stream, block, end_stream)
        } else {
            self.on_request_block(stream, block, end_stream, self_dependent)
        }
    }

    /// A header block on a stream the peer opened before: trailers if the stream is open,
    /// otherwise a frame on a closed stream.
    pub(super) fn on_trailers(
        &mut self,
        stream: StreamId,
        block: &[u8],
        end_stream: bool,
    ) -> Result<(), H2Error> {
        // Decoded whatever follows, so that the table stays in step.
        match self.decoder.decode(block, |_, _| {}) {
            Ok(()) | Err(HpackError::ListTooLarge) => {}
            Err(HpackError::Compression(why)) => {
                return Err(H2Error::conn(ErrorCode::CompressionError, why));
            }
        }
        let Some(s) = self.streams.get_mut(&stream.0) else {
            if self.recently_reset.contains(&stream) {
                return Ok(());
            }
            return Err(H2Error::conn(StreamClosed, "HEADERS on a closed stream"));
        };
        if !s.remote_open() {
            return Err(H2Error::stream(
                stream,
                StreamClosed,
                "HEADERS after END_STREAM",
            ));
        }
        if !end_stream {
            return Err(H2Error::stream(
                stream,
                ProtocolError,
                "trailers without END_STREAM",
            ));
        }
        self.deliver(stream, Vec::new(), true)
    }

    /// Body octets for the driver (trailers end a body with none), once they agree with the
    /// `content-length` (§8.1.1); the stream's remote side ends with `end_stream`.
    fn deliver(
        &mut self,
        stream: StreamId,
        data: Vec<u8>,
        end_stream: bool,
    ) -> Result<(), H2Error> {
        let s = self
            .streams
            .get_mut(&stream.0)
            .expect("delivered on a live stream");
        if !s.length_ok(end_stream) {
            return Err(H2Error::stream(
                stream,
                ProtocolError,
                "DATA does not match content-length",
            ));
        }
        self.events.push_back(Event::Data {
            stream,
            data,
            end_stream,
        });
        if end_stream && s.close_remote() {
            self.streams.remove(&stream.0);
            self.maybe_done();
        }
        Ok(())
    }

    fn on_settings(&mut self, ack: bool, params: SettingsPayload<'_>) -> Result<(), H2Error> {
        if ack {
            if self.unacked_settings > 0 {
                self.unacked_settings -= 1;
                self.decoder
                    .set_max_allowed(self.ours.header_table_size as usize);
            }
            return Ok(());
        }
        self.guard.count(Abuse::Settings, &self.limits)?;
        let before = self.peer;
        self.peer.apply(params);
        if params
            .iter()
            .any(|(id, _)| id == crate::settings::id::HEADER_TABLE_SIZE)
        {
            self.encoder
                .peer_table_size_changed(self.peer.header_table_size);
        }
        let delta =
            i64::from(self.peer.initial_window_size) - i64::from(before.initial_window_size);
        if delta != 0 {
            for (&id, s) in &mut self.streams {
                s.send_window += delta;
                if s.send_window > i64::from(MAX_WINDOW) {
                    return Err(H2Error::conn(FlowControlError, "window beyond 2^31-1"));
                }
                if delta > 0 && s.blocked && s.send_window > 0 && self.conn_send_window > 0 {
                    s.blocked = false;
                    self.events.push_back(Event::WindowOpened {
                        stream: StreamId(id),
                    });
                }
            }
        }
        self.control(&Frame::Settings {
            ack: true,
            params: SettingsPayload(&[]),
        })
    }

    fn on_window_update(&mut self, stream: StreamId, increment: u32) -> Result<(), H2Error> {
        let inc = i64::from(increment);
        if stream.is_connection() {
            self.conn_send_window += inc;
            if self.conn_send_window > i64::from(MAX_WINDOW) {
                return Err(H2Error::conn(
                    FlowControlError,
                    "connection window beyond 2^31-1",
                ));
            }
            if self.conn_send_window > 0 {
                for (&id, s) in &mut self.streams {
                    if s.blocked && s.send_window > 0 {
                        s.blocked = false;
                        self.events.push_back(Event::WindowOpened {
                            stream: StreamId(id),
                        });
                    }
                }
            }
            return Ok(());
        }
        if self.is_idle(stream) {
            return Err(H2Error::conn(
                ProtocolError,
                "WINDOW_UPDATE on an idle stream",
            ));
        }
        let Some(s) = self.streams.get_mut(&stream.0) else {
            // Closed streams: a WINDOW_UPDATE may cross our END_STREAM (§5.1).
            return Ok(());
        };
        s.send_window += inc;
        if s.send_window > i64::from(MAX_WINDOW) {
            return Err(H2Error::stream(
                stream,
                FlowControlError,
                "stream window beyond 2^31-1",
            ));
        }
        if s.blocked && s.send_window > 0 && self.conn_send_window > 0 {
            s.blocked = false;
            self.events.push_back(Event::WindowOpened { stream });
        }
        Ok(())
    }
}

fn calm(reason: &'static str) -> H2Error {
    H2Error::conn(ErrorCode::EnhanceYourCalm, reason)
}
