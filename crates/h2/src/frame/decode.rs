//! Bytes to [`Frame`]: every rule of RFC 9113 §4 and §6 that one frame alone can break.
//!
//! The length is checked against our SETTINGS_MAX_FRAME_SIZE as soon as the 9-octet header
//! is in, before the payload arrives, so a peer that announces a 16 MiB frame is refused
//! without the driver buffering any of it.

use crate::error::{ErrorCode, H2Error};
use crate::frame::setting;
use crate::frame::{
    Frame, FrameHeader, HEADER_LEN, MAX_MAX_FRAME_SIZE, MAX_WINDOW, MIN_MAX_FRAME_SIZE, Parse,
    Priority, SettingsPayload, flag, kind,
};
use crate::stream_id::StreamId;

use ErrorCode::{FlowControlError, FrameSizeError, ProtocolError};

/// The frame header at the start of `buf`, if 9 octets are there.
pub fn decode_header(buf: &[u8]) -> Option<FrameHeader> {
    let h: &[u8; HEADER_LEN] = buf.get(..HEADER_LEN)?.try_into().ok()?;
    Some(FrameHeader {
        len: u32::from_be_bytes([0, h[0], h[1], h[2]]),
        kind: h[3],
        flags: h[4],
        stream: StreamId(u32::from_be_bytes([h[5], h[6], h[7], h[8]]) & MAX_WINDOW),
    })
}

/// Decodes the frame at the start of `buf`, whose payload may be at most `max_frame_size`
/// octets (the SETTINGS_MAX_FRAME_SIZE we advertised). Returns the frame and the octets it
/// took, [`Parse::Incomplete`] when more bytes are needed, or the error the frame is.
pub fn decode_frame(buf: &[u8], max_frame_size: u32) -> Result<Parse<(Frame<'_>, usize)>, H2Error> {
    let Some(h) = decode_header(buf) else {
        return Ok(Parse::Incomplete);
    };
    if h.len > max_frame_size {
        return Err(H2Error::conn(
            FrameSizeError,
            "frame larger than SETTINGS_MAX_FRAME_SIZE",
        ));
    }
    let end = HEADER_LEN + h.len as usize;
    let Some(payload) = buf.get(HEADER_LEN..end) else {
        return Ok(Parse::Incomplete);
    };
    Ok(Parse::Complete((decode_payload(h, payload)?, end)))
}

/// Decodes a payload whose header is `h`.
pub fn decode_payload(h: FrameHeader, p: &[u8]) -> Result<Frame<'_>, H2Error> {
    let s = h.stream;
    let on_stream = |reason| {
        if s.is_connection() {
            Err(H2Error::conn(ProtocolError, reason))
        } else {
            Ok(())
        }
    };
    let on_connection = |reason| {
        if s.is_connection() {
            Ok(())
        } else {
            Err(H2Error::conn(ProtocolError, reason))
        }
    };
    let has = |f: u8| h.flags & f != 0;
    match h.kind {
        kind::DATA => {
            on_stream("DATA on stream 0")?;
            let data = unpad(p, has(flag::PADDED))?;
            Ok(Frame::Data {
                stream: s,
                data,
                end_stream: has(flag::END_STREAM),
                flow_len: h.len,
            })
        }
        kind::HEADERS => {
            on_stream("HEADERS on stream 0")?;
            let mut rest = unpad(p, has(flag::PADDED))?;
            let priority = if has(flag::PRIORITY) {
                let Some((fields, block)) = rest.split_first_chunk::<5>() else {
                    return Err(H2Error::conn(
                        FrameSizeError,
                        "HEADERS too short for priority",
                    ));
                };
                rest = block;
                // A self-dependency is a stream error, but the block must still reach HPACK
                // (it may change the table): the connection checks it after decoding.
                Some(priority_fields(fields))
            } else {
                None
            };
            Ok(Frame::Headers {
                stream: s,
                block: rest,
                end_stream: has(flag::END_STREAM),
                end_headers: has(flag::END_HEADERS),
                priority,
            })
        }
        kind::PRIORITY => {
            on_stream("PRIORITY on stream 0")?;
            let fields: &[u8; 5] = p.try_into().map_err(|_| {
                H2Error::stream(s, FrameSizeError, "PRIORITY payload is not 5 octets")
            })?;
            Ok(Frame::Priority {
                stream: s,
                priority: priority(s, fields)?,
            })
        }
        kind::RST_STREAM => {
            on_stream("RST_STREAM on stream 0")?;
            let c: [u8; 4] = p
                .try_into()
                .map_err(|_| H2Error::conn(FrameSizeError, "RST_STREAM payload is not 4 octets"))?;
            Ok(Frame::RstStream {
                stream: s,
                code: ErrorCode::from_u32(u32::from_be_bytes(c)),
            })
        }
        kind::SETTINGS => {
            on_connection("SETTINGS on a stream")?;
            let ack = has(flag::ACK);
            if ack && !p.is_empty() {
                return Err(H2Error::conn(FrameSizeError, "SETTINGS ACK with a payload"));
            }
            if p.len() % 6 != 0 {
                return Err(H2Error::conn(
                    FrameSizeError,
                    "SETTINGS length not a multiple of 6",
                ));
            }
            let params = SettingsPayload(p);
            for (id, v) in params.iter() {
                check_setting(id, v)?;
            }
            Ok(Frame::Settings { ack, params })
        }
        kind::PUSH_PROMISE => {
            on_stream("PUSH_PROMISE on stream 0")?;
            let rest = unpad(p, has(flag::PADDED))?;
            let Some((id, block)) = rest.split_first_chunk::<4>() else {
                return Err(H2Error::conn(FrameSizeError, "PUSH_PROMISE too short"));
            };
            Ok(Frame::PushPromise {
                stream: s,
                promised: StreamId(u32::from_be_bytes(*id) & MAX_WINDOW),
                block,
                end_headers: has(flag::END_HEADERS),
            })
        }
        kind::PING => {
            on_connection("PING on a stream")?;
            let data: [u8; 8] = p
                .try_into()
                .map_err(|_| H2Error::conn(FrameSizeError, "PING payload is not 8 octets"))?;
            Ok(Frame::Ping {
                ack: has(flag::ACK),
                data,
            })
        }
        kind::GOAWAY => {
            on_connection("GOAWAY on a stream")?;
            if p.len() < 8 {
                return Err(H2Error::conn(
                    FrameSizeError,
                    "GOAWAY shorter than 8 octets",
                ));
            }
            Ok(Frame::GoAway {
                last_stream: StreamId(u32::from_be_bytes([p[0], p[1], p[2], p[3]]) & MAX_WINDOW),
                code: ErrorCode::from_u32(u32::from_be_bytes([p[4], p[5], p[6], p[7]])),
                debug: &p[8..],
            })
        }
        kind::WINDOW_UPDATE => {
            let c: [u8; 4] = p.try_into().map_err(|_| {
                H2Error::conn(FrameSizeError, "WINDOW_UPDATE payload is not 4 octets")
            })?;
            let increment = u32::from_be_bytes(c) & MAX_WINDOW;
            if increment == 0 {
                let reason = "WINDOW_UPDATE of 0";
                return Err(if s.is_connection() {
                    H2Error::conn(ProtocolError, reason)
                } else {
                    H2Error::stream(s, ProtocolError, reason)
                });
            }
            Ok(Frame::WindowUpdate {
                stream: s,
                increment,
            })
        }
        kind::CONTINUATION => {
            on_stream("CONTINUATION on stream 0")?;
            Ok(Frame::Continuation {
                stream: s,
                block: p,
                end_headers: has(flag::END_HEADERS),
            })
        }
        k => Ok(Frame::Unknown { kind: k, stream: s }),
    }
}

/// Strips the Pad Length octet and the padding (§6.1): padding as long as the rest, or
/// longer, is a PROTOCOL_ERROR.
fn unpad(p: &[u8], padded: bool) -> Result<&[u8], H2Error> {
    if !padded {
        return Ok(p);
    }
    let Some((&pad, rest)) = p.split_first() else {
        return Err(H2Error::conn(
            FrameSizeError,
            "PADDED frame without a Pad Length",
        ));
    };
    let pad = usize::from(pad);
    if pad > rest.len() {
        return Err(H2Error::conn(
            ProtocolError,
            "padding longer than the payload",
        ));
    }
    Ok(&rest[..rest.len() - pad])
}

/// The five priority octets; a stream that depends on itself is a stream PROTOCOL_ERROR
/// (§5.3.1).
fn priority(s: StreamId, f: &[u8; 5]) -> Result<Priority, H2Error> {
    let p = priority_fields(f);
    if p.dependency == s {
        return Err(H2Error::stream(
            s,
            ProtocolError,
            "stream depends on itself",
        ));
    }
    Ok(p)
}

fn priority_fields(f: &[u8; 5]) -> Priority {
    let dep = u32::from_be_bytes([f[0], f[1], f[2], f[3]]);
    Priority {
        dependency: StreamId(dep & MAX_WINDOW),
        exclusive: dep & !MAX_WINDOW != 0,
        weight: f[4],
    }
}

/// The value rules of §6.5.2; unknown identifiers pass (they are ignored).
fn check_setting(id: u16, v: u32) -> Result<(), H2Error> {
    match id {
        setting::ENABLE_PUSH if v > 1 => Err(H2Error::conn(
            ProtocolError,
            "SETTINGS_ENABLE_PUSH not 0 or 1",
        )),
        setting::INITIAL_WINDOW_SIZE if v > MAX_WINDOW => Err(H2Error::conn(
            FlowControlError,
            "SETTINGS_INITIAL_WINDOW_SIZE above 2^31-1",
        )),
        setting::MAX_FRAME_SIZE if !(MIN_MAX_FRAME_SIZE..=MAX_MAX_FRAME_SIZE).contains(&v) => {
            Err(H2Error::conn(
                ProtocolError,
                "SETTINGS_MAX_FRAME_SIZE outside 2^14..2^24-1",
            ))
        }
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(kind: u8, flags: u8, stream: u32, payload: &[u8]) -> Vec<u8> {
        let mut v = (payload.len() as u32).to_be_bytes()[1..].to_vec();
        v.extend([kind, flags]);
        v.extend(stream.to_be_bytes());
        v.extend(payload);
        v
    }

    fn one(bytes: &[u8]) -> Result<Frame<'_>, H2Error> {
        match decode_frame(bytes, MIN_MAX_FRAME_SIZE)? {
            Parse::Complete((f, n)) => {
                assert_eq!(n, bytes.len());
                Ok(f)
            }
            Parse::Incomplete => panic!("incomplete"),
        }
    }

    fn conn_code(bytes: &[u8]) -> ErrorCode {
        match one(bytes) {
            Err(H2Error::Connection { code, .. }) => code,
            other => panic!("expected a connection error, got {other:?}"),
        }
    }

    #[test]
    fn every_prefix_of_a_frame_is_incomplete() {
        let f = frame(kind::PING, 0, 0, &[1; 8]);
        for k in 0..f.len() {
            assert_eq!(
                decode_frame(&f[..k], MIN_MAX_FRAME_SIZE),
                Ok(Parse::Incomplete)
            );
        }
        assert_eq!(
            one(&f),
            Ok(Frame::Ping {
                ack: false,
                data: [1; 8]
            })
        );
    }

    #[test]
    fn oversized_frame_is_refused_from_its_header_alone() {
        let mut h = frame(kind::DATA, 0, 1, &[]);
        h[..3].copy_from_slice(&[0x01, 0x00, 0x00]); // 65536 > 16384
        assert!(matches!(
            decode_frame(&h, MIN_MAX_FRAME_SIZE),
            Err(H2Error::Connection {
                code: FrameSizeError,
                ..
            })
        ));
    }

    #[test]
    fn reserved_bit_of_the_stream_id_is_ignored() {
        let f = frame(kind::RST_STREAM, 0, 0x8000_0003, &8u32.to_be_bytes());
        assert_eq!(
            one(&f),
            Ok(Frame::RstStream {
                stream: StreamId(3),
                code: ErrorCode::Cancel
            })
        );
    }

    #[test]
    fn data_padding_is_removed_but_counted_for_flow_control() {
        let f = frame(
            kind::DATA,
            flag::PADDED | flag::END_STREAM,
            1,
            b"\x03abcXYZ",
        );
        assert_eq!(
            one(&f),
            Ok(Frame::Data {
                stream: StreamId(1),
                data: b"abc",
                end_stream: true,
                flow_len: 7
            })
        );
        // Padding of the whole rest is allowed (empty data); one more is not.
        assert!(one(&frame(kind::DATA, flag::PADDED, 1, b"\x03XYZ")).is_ok());
        assert_eq!(
            conn_code(&frame(kind::DATA, flag::PADDED, 1, b"\x04XYZ")),
            ProtocolError
        );
        assert_eq!(
            conn_code(&frame(kind::DATA, flag::PADDED, 1, b"")),
            FrameSizeError
        );
    }

    #[test]
    fn stream_zero_rules() {
        for k in [
            kind::DATA,
            kind::HEADERS,
            kind::PRIORITY,
            kind::RST_STREAM,
            kind::CONTINUATION,
            kind::PUSH_PROMISE,
        ] {
            let payload = if k == kind::PRIORITY {
                vec![0; 5]
            } else {
                vec![0; 4]
            };
            assert_eq!(
                conn_code(&frame(k, 0, 0, &payload)),
                ProtocolError,
                "kind {k}"
            );
        }
        assert_eq!(conn_code(&frame(kind::SETTINGS, 0, 1, &[])), ProtocolError);
        assert_eq!(conn_code(&frame(kind::PING, 0, 1, &[0; 8])), ProtocolError);
        assert_eq!(
            conn_code(&frame(kind::GOAWAY, 0, 1, &[0; 8])),
            ProtocolError
        );
    }

    #[test]
    fn fixed_sizes() {
        assert_eq!(conn_code(&frame(kind::PING, 0, 0, &[0; 7])), FrameSizeError);
        assert_eq!(
            conn_code(&frame(kind::RST_STREAM, 0, 1, &[0; 5])),
            FrameSizeError
        );
        assert_eq!(
            conn_code(&frame(kind::WINDOW_UPDATE, 0, 0, &[0; 3])),
            FrameSizeError
        );
        assert_eq!(
            conn_code(&frame(kind::GOAWAY, 0, 0, &[0; 7])),
            FrameSizeError
        );
        assert_eq!(
            conn_code(&frame(kind::SETTINGS, 0, 0, &[0; 5])),
            FrameSizeError
        );
        assert_eq!(
            conn_code(&frame(kind::SETTINGS, flag::ACK, 0, &[0; 6])),
            FrameSizeError
        );
        // PRIORITY of the wrong size is a stream error (§6.3).
        assert!(matches!(
            one(&frame(kind::PRIORITY, 0, 3, &[0; 4])),
            Err(H2Error::Stream {
                stream: StreamId(3),
                code: FrameSizeError,
                ..
            })
        ));
    }

    #[test]
    fn window_update_of_zero_is_a_stream_or_connection_error() {
        assert_eq!(
            conn_code(&frame(kind::WINDOW_UPDATE, 0, 0, &[0; 4])),
            ProtocolError
        );
        assert!(matches!(
            one(&frame(kind::WINDOW_UPDATE, 0, 5, &[0x80, 0, 0, 0])),
            Err(H2Error::Stream {
                stream: StreamId(5),
                code: ProtocolError,
                ..
            })
        ));
    }

    #[test]
    fn setting_values_are_checked() {
        let s = |id: u16, v: u32| {
            let mut p = id.to_be_bytes().to_vec();
            p.extend(v.to_be_bytes());
            frame(kind::SETTINGS, 0, 0, &p)
        };
        assert_eq!(conn_code(&s(setting::ENABLE_PUSH, 2)), ProtocolError);
        assert_eq!(
            conn_code(&s(setting::INITIAL_WINDOW_SIZE, 1 << 31)),
            FlowControlError
        );
        assert_eq!(conn_code(&s(setting::MAX_FRAME_SIZE, 16383)), ProtocolError);
        assert_eq!(
            conn_code(&s(setting::MAX_FRAME_SIZE, 1 << 24)),
            ProtocolError
        );
        assert!(one(&s(setting::MAX_FRAME_SIZE, 1 << 14)).is_ok());
        assert!(
            one(&s(0x99, u32::MAX)).is_ok(),
            "unknown settings are ignored"
        );
    }

    #[test]
    fn headers_with_priority_and_self_dependency() {
        let mut p = vec![0x80, 0, 0, 3, 15];
        p.extend(b"blk");
        let f = frame(kind::HEADERS, flag::PRIORITY | flag::END_HEADERS, 1, &p);
        assert_eq!(
            one(&f),
            Ok(Frame::Headers {
                stream: StreamId(1),
                block: b"blk",
                end_stream: false,
                end_headers: true,
                priority: Some(Priority {
                    dependency: StreamId(3),
                    exclusive: true,
                    weight: 15
                })
            })
        );
        // Self-dependency in HEADERS is left to the connection (the block must be decoded);
        // in PRIORITY it is the decoder's.
        let f = frame(kind::HEADERS, flag::PRIORITY, 3, &p);
        assert!(matches!(one(&f), Ok(Frame::Headers { .. })));
        let f = frame(kind::PRIORITY, 0, 3, &p[..5]);
        assert!(matches!(
            one(&f),
            Err(H2Error::Stream {
                code: ProtocolError,
                ..
            })
        ));
        let f = frame(kind::HEADERS, flag::PRIORITY, 1, &[0, 0, 0]);
        assert_eq!(conn_code(&f), FrameSizeError);
    }

    #[test]
    fn unknown_types_are_passed_over() {
        assert_eq!(
            one(&frame(0xfa, 0xff, 7, b"anything")),
            Ok(Frame::Unknown {
                kind: 0xfa,
                stream: StreamId(7)
            })
        );
    }
}
