//! The known HTTP/2 attacks, each driven by a hostile client with raw frames
//! over a real socket against every engine that carries HTTP/2: each gets the
//! RFC 9113 answer (a stream error, or GOAWAY with the right code), and the
//! server keeps serving a well-behaved client on another connection. The
//! bounds themselves (how many frames, how many octets) are `servelab-h2`'s,
//! tested on bytes in `crates/h2/tests/h2/defences.rs`; here the point is
//! that the server carries them out on every engine.

use std::time::Duration;

use servelab_h2::frame::{Frame, PREFACE, encode_header_block};
use servelab_h2::hpack::integer;
use servelab_h2::{ErrorCode, StreamId};
use servelab_server::Running;

use crate::h2_client::{Client, Raw, Seen, each_h2_engine, frame_bytes, settings_frame};

/// A well-behaved client still gets served.
fn still_serves(server: &Running, engine: servelab_server::Engine) {
    let mut c = Client::connect(server.local_addr());
    let r = c.get("/hello.txt", &[]);
    assert_eq!(
        (r.status, &r.body[..]),
        (200, &b"hello, world\n"[..]),
        "{engine}"
    );
}

/// Runs `attack` on every engine with HTTP/2 and checks that the server
/// goes on serving others.
fn each(attack: impl Fn(servelab_server::Engine, &Running)) {
    each_h2_engine(
        |c| c.write_timeout = Duration::from_millis(300),
        |engine, server, _| {
            attack(engine, server);
            still_serves(server, engine);
        },
    );
}

#[test]
fn rapid_reset_is_stopped_with_enhance_your_calm() {
    // CVE-2023-44487: open a stream and reset it at once, over and over.
    each(|engine, server| {
        let mut raw = Raw::connect(server.local_addr(), &[]);
        let mut out = Vec::new();
        for i in 0..300u32 {
            let id = 2 * i + 1;
            out.extend(raw.get(id, "/hello.txt", true));
            out.extend(frame_bytes(&Frame::RstStream {
                stream: StreamId(id),
                code: ErrorCode::Cancel,
            }));
        }
        raw.write(&out);
        assert_eq!(raw.goaway(), Some(ErrorCode::EnhanceYourCalm), "{engine}");
    });
}

#[test]
fn continuation_flood_is_stopped_with_enhance_your_calm() {
    // The 2024 family: a header block that never ends.
    each(|engine, server| {
        let mut raw = Raw::connect(server.local_addr(), &[]);
        let block = raw.request_block("/hello.txt");
        let mut out = frame_bytes(&Frame::Headers {
            stream: StreamId(1),
            block: &block,
            end_stream: true,
            end_headers: false,
            priority: None,
        });
        for _ in 0..100 {
            out.extend(frame_bytes(&Frame::Continuation {
                stream: StreamId(1),
                block: b"x-padding-field-x",
                end_headers: false,
            }));
        }
        raw.write(&out);
        assert_eq!(raw.goaway(), Some(ErrorCode::EnhanceYourCalm), "{engine}");
    });
}

#[test]
fn hpack_bomb_table_size_is_a_compression_error() {
    each(|engine, server| {
        let mut raw = Raw::connect(server.local_addr(), &[]);
        let mut block = Vec::new();
        integer::encode(1 << 30, 5, 0x20, &mut block);
        block.extend([0x82, 0x86, 0x84]);
        let mut out = Vec::new();
        encode_header_block(&mut out, StreamId(1), &block, true, 16_384);
        raw.write(&out);
        assert_eq!(raw.goaway(), Some(ErrorCode::CompressionError), "{engine}");
    });
}

#[test]
fn hpack_bomb_header_list_gets_431_and_the_connection_goes_on() {
    each(|engine, server| {
        let mut raw = Raw::connect(server.local_addr(), &[]);
        // A 4,000-octet entry, then referenced 1,000 times: 4 MB of fields
        // from a 5 KB block.
        let mut block = vec![0x82, 0x86, 0x84, 0x40, 0x01, b'x'];
        integer::encode(4_000, 7, 0, &mut block);
        block.extend(std::iter::repeat_n(b'v', 4_000));
        block.extend(std::iter::repeat_n(0xbe, 1_000));
        let mut out = Vec::new();
        encode_header_block(&mut out, StreamId(1), &block, true, 16_384);
        out.extend(raw.get(3, "/hello.txt", true));
        raw.write(&out);
        let seen = raw.read_until(|s| matches!(s, Seen::Headers { stream: 3, .. }));
        assert!(
            seen.contains(&Seen::Headers {
                stream: 1,
                status: 431
            }),
            "{engine}: {seen:?}"
        );
        assert!(
            seen.contains(&Seen::Headers {
                stream: 3,
                status: 200
            }),
            "{engine}: {seen:?}"
        );
    });
}

#[test]
fn settings_flood_is_stopped_with_enhance_your_calm() {
    // CVE-2019-9515.
    each(|engine, server| {
        let mut raw = Raw::connect(server.local_addr(), &[]);
        let one = settings_frame(&[(4, 65_535)]);
        raw.write(&one.repeat(200));
        assert_eq!(raw.goaway(), Some(ErrorCode::EnhanceYourCalm), "{engine}");
    });
}

#[test]
fn ping_flood_is_stopped_with_enhance_your_calm() {
    // CVE-2019-9512.
    each(|engine, server| {
        let mut raw = Raw::connect(server.local_addr(), &[]);
        let ping = frame_bytes(&Frame::Ping {
            ack: false,
            data: *b"flooding",
        });
        raw.write(&ping.repeat(200));
        assert_eq!(raw.goaway(), Some(ErrorCode::EnhanceYourCalm), "{engine}");
    });
}

#[test]
fn a_zero_window_held_open_resets_the_stream_at_the_write_timeout() {
    // The flow-control slowloris: the client opens no window, so the body
    // never moves; the server gives the stream up (CANCEL) after
    // --write-timeout (300 ms here) and keeps the connection.
    each(|engine, server| {
        let mut raw = Raw::connect(server.local_addr(), &[(4, 0)]);
        let get = raw.get(1, "/big.bin", true);
        raw.write(&get);
        let seen = raw.read_until(|s| matches!(s, Seen::Rst { .. } | Seen::GoAway { .. }));
        assert!(
            seen.contains(&Seen::Headers {
                stream: 1,
                status: 200
            }),
            "{engine}: {seen:?}"
        );
        assert!(
            !seen.iter().any(|s| matches!(s, Seen::Data { .. })),
            "{engine}"
        );
        assert_eq!(
            seen.last(),
            Some(&Seen::Rst {
                stream: 1,
                code: ErrorCode::Cancel
            }),
            "{engine}"
        );
        // The connection goes on: a PING is answered... by a request here.
        let get = raw.get(3, "/missing", true);
        raw.write(&get);
        let seen = raw.read_until(|s| matches!(s, Seen::Headers { stream: 3, .. }));
        assert_eq!(
            seen.last(),
            Some(&Seen::Headers {
                stream: 3,
                status: 404
            }),
            "{engine}"
        );
    });
}

#[test]
fn more_streams_than_the_limit_are_refused() {
    // SETTINGS_MAX_CONCURRENT_STREAMS is 100: requests whose bodies never
    // end keep their streams open, so the 101st is refused.
    each(|engine, server| {
        let mut raw = Raw::connect(server.local_addr(), &[]);
        let mut out = Vec::new();
        for i in 0..101u32 {
            out.extend(raw.get(2 * i + 1, "/hello.txt", false));
        }
        raw.write(&out);
        let seen = raw.read_until(|s| matches!(s, Seen::Rst { .. } | Seen::GoAway { .. }));
        assert_eq!(
            seen.last(),
            Some(&Seen::Rst {
                stream: 201,
                code: ErrorCode::RefusedStream
            }),
            "{engine}"
        );
    });
}

#[test]
fn a_bad_preface_is_a_protocol_error() {
    each(|engine, server| {
        let mut raw = Raw::connect_bare(server.local_addr());
        let mut bad = PREFACE.to_vec();
        bad[18] = b'X';
        raw.write(&bad);
        assert_eq!(raw.goaway(), Some(ErrorCode::ProtocolError), "{engine}");
    });
}

#[test]
fn frames_on_closed_streams_get_stream_closed() {
    each(|engine, server| {
        let mut raw = Raw::connect(server.local_addr(), &[]);
        let mut two = raw.get(1, "/hello.txt", true);
        two.extend(raw.get(3, "/hello.txt", true));
        raw.write(&two);
        raw.read_until(|s| matches!(s, Seen::Data { stream: 3, .. }));
        // DATA on the closed stream: a stream error, the connection goes on.
        raw.write(&frame_bytes(&Frame::Data {
            stream: StreamId(1),
            data: b"late",
            end_stream: true,
            flow_len: 4,
        }));
        let seen = raw.read_until(|s| matches!(s, Seen::Rst { .. } | Seen::GoAway { .. }));
        assert_eq!(
            seen.last(),
            Some(&Seen::Rst {
                stream: 1,
                code: ErrorCode::StreamClosed
            }),
            "{engine}"
        );
        // HEADERS on a closed stream (3; frames on 1 now cross our reset and
        // are ignored, RFC 9113 §5.1): a connection error.
        let again = raw.get(3, "/hello.txt", true);
        raw.write(&again);
        assert_eq!(raw.goaway(), Some(ErrorCode::StreamClosed), "{engine}");
    });
}

#[test]
fn a_client_that_only_pings_meets_the_keepalive_timeout() {
    // The idle timer counts from the last request or response, not the last
    // byte: PINGs every 100 ms do not keep a connection that asks for nothing.
    each_h2_engine(
        |c| c.keepalive_timeout = Duration::from_millis(400),
        |engine, server, _| {
            let mut raw = Raw::connect(server.local_addr(), &[]);
            let ping = frame_bytes(&Frame::Ping {
                ack: false,
                data: *b"stillup!",
            });
            let mut code = None;
            // Bounded: 100 PINGs (10 s) at most; the timeout comes long before.
            for _ in 0..100 {
                raw.write(&ping);
                let seen =
                    raw.read_until(|s| *s == Seen::Other || matches!(s, Seen::GoAway { .. }));
                if let Some(Seen::GoAway { code: c, .. }) = seen.last() {
                    code = Some(*c);
                    break;
                }
                std::thread::sleep(Duration::from_millis(100));
            }
            assert_eq!(code, Some(ErrorCode::NoError), "{engine}");
            still_serves(server, engine);
        },
    );
}

#[test]
fn bodies_made_in_memory_are_held_one_bound_at_a_time() {
    // A client that opens no window and asks for a large listing on many
    // streams: the server answers one, holds its body, and answers the next
    // only once the first is gone (here: reset at the write timeout), so it
    // never holds ten listings for one connection.
    each_h2_engine(
        |c| {
            c.autoindex = true;
            c.write_timeout = Duration::from_millis(300);
        },
        |engine, server, root| {
            let big = root.join("many");
            std::fs::create_dir(&big).unwrap();
            for i in 0..1500 {
                std::fs::write(big.join(format!("{i:0>120}.txt")), "").unwrap();
            }
            let mut raw = Raw::connect(server.local_addr(), &[(4, 0)]);
            let mut out = Vec::new();
            for i in 0..10u32 {
                out.extend(raw.get(2 * i + 1, "/many/", true));
            }
            raw.write(&out);
            let seen = raw.read_until(|s| matches!(s, Seen::Rst { .. } | Seen::GoAway { .. }));
            let heads: Vec<_> = seen
                .iter()
                .filter(|s| matches!(s, Seen::Headers { .. }))
                .collect();
            assert_eq!(
                heads,
                [&Seen::Headers {
                    stream: 1,
                    status: 200
                }],
                "{engine}: {seen:?}"
            );
            assert_eq!(
                seen.last(),
                Some(&Seen::Rst {
                    stream: 1,
                    code: ErrorCode::Cancel
                })
            );
            // Then the next one is answered.
            let seen = raw.read_until(|s| matches!(s, Seen::Headers { .. }));
            assert_eq!(
                seen.last(),
                Some(&Seen::Headers {
                    stream: 3,
                    status: 200
                }),
                "{engine}"
            );
        },
    );
}
