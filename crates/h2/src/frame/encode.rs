//! [`Frame`] to bytes, appended to the caller's buffer.
//!
//! The encoder never pads (padding only hides lengths, and a static file's length is in its
//! `content-length` anyway), so [`Frame::Data`]'s `flow_len` is not written: the payload is
//! the data. It does not check what the decoder checks: the connection only builds valid
//! frames, and the round-trip tests below hold the two to the same format.

use crate::frame::{Frame, HEADER_LEN, MAX_WINDOW, Priority, flag, kind};
use crate::stream_id::StreamId;

/// Appends a frame header.
pub fn encode_header(out: &mut Vec<u8>, len: usize, kind: u8, flags: u8, stream: StreamId) {
    debug_assert!(len < 1 << 24, "frame length {len} beyond 24 bits");
    let l = (len as u32).to_be_bytes();
    out.extend_from_slice(&[l[1], l[2], l[3], kind, flags]);
    out.extend_from_slice(&(stream.0 & MAX_WINDOW).to_be_bytes());
}

/// Appends `frame`.
pub fn encode_frame(out: &mut Vec<u8>, frame: &Frame<'_>) {
    let bit = |on: bool, f: u8| if on { f } else { 0 };
    match *frame {
        Frame::Data {
            stream,
            data,
            end_stream,
            ..
        } => {
            encode_header(
                out,
                data.len(),
                kind::DATA,
                bit(end_stream, flag::END_STREAM),
                stream,
            );
            out.extend_from_slice(data);
        }
        Frame::Headers {
            stream,
            block,
            end_stream,
            end_headers,
            priority,
        } => {
            let flags = bit(end_stream, flag::END_STREAM)
                | bit(end_headers, flag::END_HEADERS)
                | bit(priority.is_some(), flag::PRIORITY);
            let len = block.len() + if priority.is_some() { 5 } else { 0 };
            encode_header(out, len, kind::HEADERS, flags, stream);
            if let Some(p) = priority {
                priority_fields(out, p);
            }
            out.extend_from_slice(block);
        }
        Frame::Priority { stream, priority } => {
            encode_header(out, 5, kind::PRIORITY, 0, stream);
            priority_fields(out, priority);
        }
        Frame::RstStream { stream, code } => {
            encode_header(out, 4, kind::RST_STREAM, 0, stream);
            out.extend_from_slice(&code.to_u32().to_be_bytes());
        }
        Frame::Settings { ack, params } => {
            encode_header(
                out,
                params.0.len(),
                kind::SETTINGS,
                bit(ack, flag::ACK),
                StreamId(0),
            );
            out.extend_from_slice(params.0);
        }
        Frame::PushPromise {
            stream,
            promised,
            block,
            end_headers,
        } => {
            let flags = bit(end_headers, flag::END_HEADERS);
            encode_header(out, 4 + block.len(), kind::PUSH_PROMISE, flags, stream);
            out.extend_from_slice(&promised.0.to_be_bytes());
            out.extend_from_slice(block);
        }
        Frame::Ping { ack, data } => {
            encode_header(out, 8, kind::PING, bit(ack, flag::ACK), StreamId(0));
            out.extend_from_slice(&data);
        }
        Frame::GoAway {
            last_stream,
            code,
            debug,
        } => {
            encode_header(out, 8 + debug.len(), kind::GOAWAY, 0, StreamId(0));
            out.extend_from_slice(&last_stream.0.to_be_bytes());
            out.extend_from_slice(&code.to_u32().to_be_bytes());
            out.extend_from_slice(debug);
        }
        Frame::WindowUpdate { stream, increment } => {
            encode_header(out, 4, kind::WINDOW_UPDATE, 0, stream);
            out.extend_from_slice(&increment.to_be_bytes());
        }
        Frame::Continuation {
            stream,
            block,
            end_headers,
        } => {
            let flags = bit(end_headers, flag::END_HEADERS);
            encode_header(out, block.len(), kind::CONTINUATION, flags, stream);
            out.extend_from_slice(block);
        }
        Frame::Unknown { kind, stream } => encode_header(out, 0, kind, 0, stream),
    }
}

/// Appends a whole header block as one HEADERS frame and as many CONTINUATION frames as
/// `max_frame_size` (the peer's SETTINGS_MAX_FRAME_SIZE) requires. The frames go out back to
/// back: nothing may come between them on the connection (RFC 9113 §6.10).
pub fn encode_header_block(
    out: &mut Vec<u8>,
    stream: StreamId,
    block: &[u8],
    end_stream: bool,
    max_frame_size: u32,
) {
    let max = (max_frame_size as usize).max(1);
    let mut chunks = block.chunks(max);
    let first = chunks.next().unwrap_or(&[]);
    let rest = chunks.len();
    out.reserve(block.len() + HEADER_LEN * (rest + 1));
    encode_frame(
        out,
        &Frame::Headers {
            stream,
            block: first,
            end_stream,
            end_headers: rest == 0,
            priority: None,
        },
    );
    for (i, c) in chunks.enumerate() {
        encode_frame(
            out,
            &Frame::Continuation {
                stream,
                block: c,
                end_headers: i + 1 == rest,
            },
        );
    }
}

fn priority_fields(out: &mut Vec<u8>, p: Priority) {
    let e = if p.exclusive { 1 << 31 } else { 0 };
    out.extend_from_slice(&(p.dependency.0 | e).to_be_bytes());
    out.push(p.weight);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorCode;
    use crate::frame::{MIN_MAX_FRAME_SIZE, Parse, SettingsPayload, decode_frame};

    fn round_trip(f: Frame<'_>) {
        let mut out = Vec::new();
        encode_frame(&mut out, &f);
        match decode_frame(&out, MIN_MAX_FRAME_SIZE) {
            Ok(Parse::Complete((g, n))) => {
                assert_eq!(n, out.len());
                let g = match (f, g) {
                    // The encoder does not pad, so the flow length is the data length.
                    (Frame::Data { .. }, Frame::Data { flow_len, data, .. }) => {
                        assert_eq!(flow_len as usize, data.len());
                        g
                    }
                    _ => g,
                };
                match (f, g) {
                    (
                        Frame::Data {
                            data,
                            end_stream,
                            stream,
                            ..
                        },
                        Frame::Data {
                            data: d,
                            end_stream: e,
                            stream: s,
                            ..
                        },
                    ) => {
                        assert_eq!((data, end_stream, stream), (d, e, s));
                    }
                    _ => assert_eq!(f, g),
                }
            }
            other => panic!("{f:?} decoded as {other:?}"),
        }
    }

    #[test]
    fn every_kind_round_trips() {
        let s = StreamId(7);
        let settings = [0u8, 4, 0, 0, 0xff, 0xff];
        for f in [
            Frame::Data {
                stream: s,
                data: b"hello",
                end_stream: true,
                flow_len: 5,
            },
            Frame::Headers {
                stream: s,
                block: b"\x82",
                end_stream: false,
                end_headers: true,
                priority: None,
            },
            Frame::Headers {
                stream: s,
                block: b"\x82",
                end_stream: true,
                end_headers: false,
                priority: Some(Priority {
                    dependency: StreamId(1),
                    exclusive: true,
                    weight: 9,
                }),
            },
            Frame::Priority {
                stream: s,
                priority: Priority {
                    dependency: StreamId(0),
                    exclusive: false,
                    weight: 0,
                },
            },
            Frame::RstStream {
                stream: s,
                code: ErrorCode::Cancel,
            },
            Frame::Settings {
                ack: false,
                params: SettingsPayload(&settings),
            },
            Frame::Settings {
                ack: true,
                params: SettingsPayload(&[]),
            },
            Frame::PushPromise {
                stream: s,
                promised: StreamId(2),
                block: b"x",
                end_headers: true,
            },
            Frame::Ping {
                ack: true,
                data: *b"12345678",
            },
            Frame::GoAway {
                last_stream: s,
                code: ErrorCode::EnhanceYourCalm,
                debug: b"calm",
            },
            Frame::WindowUpdate {
                stream: StreamId(0),
                increment: MAX_WINDOW,
            },
            Frame::Continuation {
                stream: s,
                block: b"more",
                end_headers: true,
            },
            Frame::Unknown {
                kind: 0x42,
                stream: s,
            },
        ] {
            round_trip(f);
        }
    }

    #[test]
    fn a_large_header_block_is_split_into_continuations() {
        let block: Vec<u8> = (0..40_000u32).map(|i| i as u8).collect();
        let mut out = Vec::new();
        encode_header_block(&mut out, StreamId(1), &block, true, MIN_MAX_FRAME_SIZE);
        let mut at = 0;
        let mut joined: Vec<u8> = Vec::new();
        let mut frames: Vec<Frame<'_>> = Vec::new();
        while at < out.len() {
            let Ok(Parse::Complete((f, n))) = decode_frame(&out[at..], MIN_MAX_FRAME_SIZE) else {
                panic!("bad frame at {at}");
            };
            match f {
                Frame::Headers {
                    block,
                    end_stream,
                    end_headers,
                    ..
                } => {
                    assert!(end_stream && !end_headers);
                    joined.extend(block);
                }
                Frame::Continuation { block, .. } => joined.extend(block),
                other => panic!("{other:?}"),
            }
            frames.push(f);
            at += n;
        }
        assert_eq!(joined, block);
        assert_eq!(frames.len(), 3);
        assert!(matches!(
            frames[2],
            Frame::Continuation {
                end_headers: true,
                ..
            }
        ));
        assert!(matches!(
            frames[1],
            Frame::Continuation {
                end_headers: false,
                ..
            }
        ));
    }
}
