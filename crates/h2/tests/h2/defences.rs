//! Every attack the connection defends against, driven by hostile frames, with the RFC 9113
//! answer asserted and the work bounded (counted in frames fed before the connection ends,
//! never in time).

use crate::peer::*;
use servelab_h2::frame::{self, Frame, flag, kind};
use servelab_h2::hpack::integer;
use servelab_h2::{ErrorCode, Event, Limits, ServerConn, State, StreamId};

#[test]
fn bad_preface_is_a_protocol_error() {
    for bad in [
        &b"GET / HTTP/1.1\r\nHost: x\r\n\r\n"[..],
        b"PRI * HTTP/2.0\r\n\r\nXX",
        b"\x16\x03\x01",
    ] {
        let mut c = ServerConn::new(Limits::default());
        c.take_output();
        assert_eq!(conn_error(c.feed(bad)), ErrorCode::ProtocolError, "{bad:?}");
        assert_eq!(c.state(), State::Closed);
        let out = c.take_output();
        assert_eq!(out[3], kind::GOAWAY);
        assert_eq!(&out[13..17], &1u32.to_be_bytes());
        // What follows is ignored.
        assert_eq!(c.feed(b"anything"), Ok(()));
        assert!(c.take_output().is_empty());
    }
}

#[test]
fn a_preface_split_anywhere_is_fine() {
    let mut c = ServerConn::new(Limits::default());
    for b in frame::PREFACE {
        c.feed(&[*b]).unwrap();
    }
    assert_eq!(c.state(), State::Handshake);
    c.feed(&settings_frame(&[])).unwrap();
    assert_eq!(c.state(), State::Open);
}

#[test]
fn first_frame_not_settings_is_a_protocol_error() {
    let mut c = ServerConn::new(Limits::default());
    let mut hello = frame::PREFACE.to_vec();
    hello.extend(ping([0; 8]));
    assert_eq!(conn_error(c.feed(&hello)), ErrorCode::ProtocolError);
}

#[test]
fn oversized_frame_is_refused_before_its_payload_arrives() {
    let mut p = Peer::new(Limits::default());
    let mut header = raw(kind::DATA, 0, 1, &[]);
    header[..3].copy_from_slice(&[0xff, 0xff, 0xff]);
    assert_eq!(conn_error(p.send(&header)), ErrorCode::FrameSizeError);
    assert_goaway(&p.read(), ErrorCode::FrameSizeError);
}

#[test]
fn rapid_reset_is_stopped_with_enhance_your_calm() {
    // CVE-2023-44487: open a stream, reset it at once, repeat. The concurrency limit never
    // bites, so only the count of resets can stop it.
    let limits = Limits::default();
    let mut p = Peer::new(limits);
    let mut fed = 0;
    let mut result = Ok(());
    for i in 0..10_000u32 {
        let s = 2 * i + 1;
        let g = p.get(s);
        result = p.send(&g).and_then(|()| p.send(&rst(s, ErrorCode::Cancel)));
        fed += 1;
        // The driver handles events as they come; what it holds stays bounded.
        let ev = p.events();
        assert!(ev.len() <= 2);
        assert!(p.conn.active_streams() <= 1);
        if result.is_err() {
            break;
        }
    }
    assert_eq!(conn_error(result), ErrorCode::EnhanceYourCalm);
    assert_eq!(
        fed,
        limits.max_peer_resets + 1,
        "stopped at the first reset past the limit"
    );
    assert_goaway(&p.read(), ErrorCode::EnhanceYourCalm);
    assert_eq!(p.conn.state(), State::Closed);
}

#[test]
fn resets_spread_over_windows_are_allowed() {
    // A client that cancels requests now and then (a browser leaving a page) is no attack:
    // the count starts again at each tick of the driver's timer.
    let mut p = Peer::new(Limits::default());
    for i in 0..1_000u32 {
        let s = 2 * i + 1;
        let g = p.get(s);
        p.send(&g).unwrap();
        p.send(&rst(s, ErrorCode::Cancel)).unwrap();
        if i % 100 == 99 {
            p.conn.tick();
        }
    }
    assert_eq!(p.conn.state(), State::Open);
}

#[test]
fn continuation_flood_is_bounded_in_count() {
    // The 2024 CONTINUATION flood: a header block that never ends, in tiny frames.
    let limits = Limits::default();
    let mut p = Peer::new(limits);
    p.open_block(1, &[0x82]).unwrap();
    let cont = encode(Frame::Continuation {
        stream: StreamId(1),
        block: &[0x86],
        end_headers: false,
    });
    let mut n = 0;
    let code = loop {
        n += 1;
        if let Err(e) = p.send(&cont) {
            break e.code();
        }
        assert!(n < 1_000, "no end to the flood");
    };
    assert_eq!(code, ErrorCode::EnhanceYourCalm);
    assert_eq!(n, limits.max_continuations + 1);
    assert_goaway(&p.read(), ErrorCode::EnhanceYourCalm);
}

#[test]
fn continuation_flood_is_bounded_in_size() {
    let limits = Limits {
        max_continuations: u32::MAX,
        ..Limits::default()
    };
    let mut p = Peer::new(limits);
    p.open_block(1, &[]).unwrap();
    let big = vec![0x82; 16_384];
    let cont = encode(Frame::Continuation {
        stream: StreamId(1),
        block: &big,
        end_headers: false,
    });
    let mut buffered = 0;
    let code = loop {
        if let Err(e) = p.send(&cont) {
            break e.code();
        }
        buffered += big.len();
        assert!(buffered <= limits.max_header_block);
    };
    assert_eq!(code, ErrorCode::EnhanceYourCalm);
}

#[test]
fn empty_continuations_count_as_empty_frames() {
    let limits = Limits {
        max_continuations: u32::MAX,
        max_empty_frames: 50,
        ..Limits::default()
    };
    let mut p = Peer::new(limits);
    p.open_block(1, &[]).unwrap();
    let cont = encode(Frame::Continuation {
        stream: StreamId(1),
        block: &[],
        end_headers: false,
    });
    let mut n = 0;
    while p.send(&cont).is_ok() {
        n += 1;
        assert!(n <= 50);
    }
    assert_goaway(&p.read(), ErrorCode::EnhanceYourCalm);
}

#[test]
fn a_frame_inside_a_header_block_is_a_protocol_error() {
    let mut p = Peer::new(Limits::default());
    p.open_block(1, &[0x82]).unwrap();
    assert_eq!(conn_error(p.send(&ping([0; 8]))), ErrorCode::ProtocolError);
    // CONTINUATION of another stream, and CONTINUATION with no HEADERS before it.
    let mut p = Peer::new(Limits::default());
    p.open_block(1, &[0x82]).unwrap();
    let other = encode(Frame::Continuation {
        stream: StreamId(3),
        block: &[],
        end_headers: true,
    });
    assert_eq!(conn_error(p.send(&other)), ErrorCode::ProtocolError);
    let mut p = Peer::new(Limits::default());
    assert_eq!(conn_error(p.send(&other)), ErrorCode::ProtocolError);
}

#[test]
fn hpack_bomb_table_size_beyond_our_setting_is_a_compression_error() {
    let mut p = Peer::new(Limits::default());
    let mut block = Vec::new();
    integer::encode(1 << 30, 5, 0x20, &mut block);
    block.extend([0x82, 0x87, 0x84]);
    let h = encode(Frame::Headers {
        stream: StreamId(1),
        block: &block,
        end_stream: true,
        end_headers: true,
        priority: None,
    });
    assert_eq!(conn_error(p.send(&h)), ErrorCode::CompressionError);
    assert_goaway(&p.read(), ErrorCode::CompressionError);
}

#[test]
fn hpack_bomb_header_list_beyond_the_limit_gets_431_and_the_connection_goes_on() {
    let limits = Limits::default();
    let mut p = Peer::new(limits);
    // A 4,000-octet entry added to the table, then referenced 1,000 times: 4 MB of
    // decoded fields from a 5 KB block.
    let mut block = vec![0x82, 0x87, 0x84, 0x40, 0x01, b'x'];
    integer::encode(4_000, 7, 0, &mut block);
    block.extend(std::iter::repeat_n(b'v', 4_000));
    block.extend(std::iter::repeat_n(0xbe, 1_000));
    let h = encode(Frame::Headers {
        stream: StreamId(1),
        block: &block,
        end_stream: true,
        end_headers: true,
        priority: None,
    });
    p.send(&h).unwrap();
    assert!(p.events().is_empty(), "the driver never sees the list");
    assert_eq!(
        p.read(),
        [Seen::Headers {
            stream: 1,
            fields: vec![(":status".into(), "431".into())],
            end_stream: true
        }]
    );
    // The table is in step: a request that indexes the entry decodes.
    let h = encode(Frame::Headers {
        stream: StreamId(3),
        block: &[0x82, 0x87, 0x84, 0xbe],
        end_stream: true,
        end_headers: true,
        priority: None,
    });
    p.send(&h).unwrap();
    let ev = p.events();
    let [Event::Request(r)] = &ev[..] else {
        panic!("{ev:?}")
    };
    assert_eq!(r.header("x").map(<[u8]>::len), Some(4_000));
}

#[test]
fn settings_flood_is_stopped() {
    let limits = Limits::default();
    let mut p = Peer::new(limits);
    let s = settings_frame(&[(3, 10)]);
    let mut n = 1; // the handshake's SETTINGS counted
    while p.send(&s).is_ok() {
        n += 1;
        assert!(n <= limits.max_settings);
    }
    assert_eq!(n, limits.max_settings);
    assert_goaway(&p.read(), ErrorCode::EnhanceYourCalm);
}

#[test]
fn ping_flood_is_stopped() {
    let limits = Limits::default();
    let mut p = Peer::new(limits);
    let mut n = 0;
    while p.send(&ping(*b"12345678")).is_ok() {
        n += 1;
        assert!(n <= limits.max_pings);
        assert_eq!(
            p.read(),
            [Seen::Ping {
                ack: true,
                data: *b"12345678"
            }]
        );
    }
    assert_goaway(&p.read(), ErrorCode::EnhanceYourCalm);
}

#[test]
fn control_frames_queued_for_a_peer_that_does_not_read_are_bounded() {
    // PINGs spread over windows, but the peer never reads our ACKs: the queue is the target.
    let limits = Limits {
        max_control_backlog: 64,
        ..Limits::default()
    };
    let mut p = Peer::new(limits);
    p.conn.take_output();
    let mut result = Ok(());
    for i in 0..1_000 {
        if i % 50 == 0 {
            p.conn.tick();
        }
        result = p.send(&ping([0; 8]));
        if result.is_err() {
            break;
        }
    }
    assert_eq!(conn_error(result), ErrorCode::EnhanceYourCalm);
    assert!(p.conn.pending_output().len() < 65 * 17 + 100);
}

#[test]
fn empty_data_flood_is_stopped() {
    let limits = Limits::default();
    let mut p = Peer::new(limits);
    let h = p.headers(
        1,
        &[(":method", "POST"), (":scheme", "https"), (":path", "/")],
        false,
    );
    p.send(&h).unwrap();
    let empty = data(1, &[], false);
    let mut n = 0;
    while p.send(&empty).is_ok() {
        n += 1;
        assert!(n <= limits.max_empty_frames);
        p.events();
    }
    assert_goaway(&p.read(), ErrorCode::EnhanceYourCalm);
}

#[test]
fn more_streams_than_the_limit_are_refused() {
    let limits = Limits {
        max_concurrent_streams: 2,
        ..Limits::default()
    };
    let mut p = Peer::new(limits);
    for s in [1, 3, 5] {
        let g = p.get(s);
        p.send(&g).unwrap();
    }
    assert_eq!(request_streams(&p.events()), [1, 3]);
    assert_eq!(
        p.read(),
        [Seen::Rst {
            stream: 5,
            code: ErrorCode::RefusedStream
        }]
    );
    // One finishes; a new one fits.
    p.conn.send_headers(StreamId(1), 204, &[], true).unwrap();
    let g = p.get(7);
    p.send(&g).unwrap();
    assert_eq!(request_streams(&p.events()), [7]);
}

#[test]
fn refusing_streams_without_end_is_stopped() {
    // A client that ignores MAX_CONCURRENT_STREAMS and keeps opening: each refusal is a
    // reset we send, counted.
    let limits = Limits {
        max_concurrent_streams: 1,
        ..Limits::default()
    };
    let mut p = Peer::new(limits);
    let mut result = Ok(());
    for i in 0..10_000u32 {
        let g = p.get(2 * i + 1);
        result = p.send(&g);
        p.read();
        if result.is_err() {
            break;
        }
    }
    assert_eq!(conn_error(result), ErrorCode::EnhanceYourCalm);
}

#[test]
fn data_on_a_closed_stream_is_stream_closed() {
    let mut p = Peer::new(Limits::default());
    let g = p.get(1);
    p.send(&g).unwrap();
    p.conn.send_headers(StreamId(1), 204, &[], true).unwrap();
    p.read();
    // Stream 1 is closed (both sides ended).
    p.send(&data(1, b"x", false)).unwrap();
    assert_eq!(
        p.read(),
        [Seen::Rst {
            stream: 1,
            code: ErrorCode::StreamClosed
        }]
    );
    // WINDOW_UPDATE and RST_STREAM on a closed stream may cross ours: ignored.
    p.send(&window_update(1, 10)).unwrap();
    p.send(&rst(1, ErrorCode::Cancel)).unwrap();
    assert!(p.read().is_empty());
    assert_eq!(p.conn.state(), State::Open);
}

#[test]
fn data_after_end_stream_is_stream_closed() {
    let mut p = Peer::new(Limits::default());
    let g = p.get(1);
    p.send(&g).unwrap();
    p.events();
    p.send(&data(1, b"late", true)).unwrap();
    assert_eq!(
        p.read(),
        [Seen::Rst {
            stream: 1,
            code: ErrorCode::StreamClosed
        }]
    );
    assert!(matches!(
        p.events()[..],
        [Event::Reset {
            code: ErrorCode::StreamClosed,
            remote: false,
            ..
        }]
    ));
}

#[test]
fn headers_on_a_closed_stream_is_a_connection_error() {
    let mut p = Peer::new(Limits::default());
    let (a, b) = (p.get(1), p.get(3));
    p.send(&a).unwrap();
    p.send(&b).unwrap();
    p.conn.send_headers(StreamId(1), 204, &[], true).unwrap();
    let again = p.get(1);
    assert_eq!(conn_error(p.send(&again)), ErrorCode::StreamClosed);
    assert_goaway(&p.read(), ErrorCode::StreamClosed);
}

#[test]
fn frames_on_idle_streams_are_protocol_errors() {
    for f in [
        data(9, b"x", false),
        window_update(9, 1),
        rst(9, ErrorCode::Cancel),
    ] {
        let mut p = Peer::new(Limits::default());
        assert_eq!(conn_error(p.send(&f)), ErrorCode::ProtocolError, "{f:02x?}");
    }
    // A server-initiated (even) id from the client, and PUSH_PROMISE from a client.
    let mut p = Peer::new(Limits::default());
    let h = p.headers(2, &GET, true);
    assert_eq!(conn_error(p.send(&h)), ErrorCode::ProtocolError);
    let mut p = Peer::new(Limits::default());
    let pp = encode(Frame::PushPromise {
        stream: StreamId(1),
        promised: StreamId(2),
        block: &[],
        end_headers: true,
    });
    assert_eq!(conn_error(p.send(&pp)), ErrorCode::ProtocolError);
}

#[test]
fn frames_on_a_stream_we_reset_are_ignored() {
    let mut p = Peer::new(Limits::default());
    let h = p.headers(
        1,
        &[(":method", "POST"), (":scheme", "https"), (":path", "/")],
        false,
    );
    p.send(&h).unwrap();
    p.conn.reset(StreamId(1), ErrorCode::Cancel);
    p.read();
    // In flight before the client saw our RST_STREAM.
    p.send(&data(1, b"abc", false)).unwrap();
    let t = p.headers(1, &[("x", "1")], true);
    p.send(&t).unwrap();
    assert!(p.read().is_empty());
    assert_eq!(p.conn.state(), State::Open);
}

#[test]
fn bad_frames_each_get_their_rfc_answer() {
    let cases: [(Vec<u8>, ErrorCode); 6] = [
        (
            raw(kind::SETTINGS, flag::ACK, 0, &[0; 6]),
            ErrorCode::FrameSizeError,
        ),
        (raw(kind::PING, 0, 0, &[0; 9]), ErrorCode::FrameSizeError),
        (
            raw(kind::SETTINGS, 0, 0, &[0, 4, 0x80, 0, 0, 0]),
            ErrorCode::FlowControlError,
        ),
        (
            raw(kind::SETTINGS, 0, 0, &[0, 2, 0, 0, 0, 5]),
            ErrorCode::ProtocolError,
        ),
        (
            raw(kind::WINDOW_UPDATE, 0, 0, &[0; 4]),
            ErrorCode::ProtocolError,
        ),
        (
            raw(kind::DATA, flag::PADDED, 0, &[0]),
            ErrorCode::ProtocolError,
        ),
    ];
    for (f, code) in cases {
        let mut p = Peer::new(Limits::default());
        assert_eq!(conn_error(p.send(&f)), code, "{f:02x?}");
        assert_goaway(&p.read(), code);
    }
}

#[test]
fn unknown_frames_are_ignored_but_counted() {
    let limits = Limits {
        max_empty_frames: 10,
        ..Limits::default()
    };
    let mut p = Peer::new(limits);
    let f = raw(0xee, 0xff, 1, b"grease");
    for _ in 0..10 {
        p.send(&f).unwrap();
    }
    assert_eq!(conn_error(p.send(&f)), ErrorCode::EnhanceYourCalm);
}

#[test]
fn the_partial_frame_buffer_is_bounded_by_the_frame_size() {
    // A peer that sends a frame's worth minus one octet, forever: the connection holds at
    // most one frame.
    let mut p = Peer::new(Limits::default());
    let mut big = raw(kind::PING, 0, 0, &[]);
    big[..3].copy_from_slice(&[0, 0x40, 0]); // 16,384: allowed size, wrong for PING
    p.send(&big).unwrap();
    p.send(&vec![0; 16_383]).unwrap();
    assert_eq!(p.conn.state(), State::Open);
    assert_eq!(conn_error(p.send(&[0])), ErrorCode::FrameSizeError);
}

#[test]
fn a_stream_error_on_an_idle_stream_ends_the_connection() {
    // RST_STREAM may not be sent for an idle stream, so these become connection errors.
    let mut p = Peer::new(Limits::default());
    assert_eq!(
        conn_error(p.send(&raw(kind::PRIORITY, 0, 9, &[0; 4]))),
        ErrorCode::FrameSizeError
    );
    let mut p = Peer::new(Limits::default());
    assert_eq!(
        conn_error(p.send(&window_update(9, 0))),
        ErrorCode::ProtocolError
    );
}
