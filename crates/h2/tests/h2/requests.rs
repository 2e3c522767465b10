//! Requests a well-behaved client makes, and the answers on the wire.

use crate::peer::*;
use servelab_h2::frame::{self, Frame};
use servelab_h2::{ErrorCode, Event, Limits, State, StreamId};

#[test]
fn get_is_answered_with_headers_and_data() {
    let mut p = Peer::new(Limits::default());
    let req = p.headers(
        1,
        &[
            (":method", "GET"),
            (":scheme", "https"),
            (":authority", "example.com"),
            (":path", "/a.txt?x=1"),
            ("accept", "*/*"),
        ],
        true,
    );
    p.send(&req).unwrap();
    let ev = p.events();
    let [Event::Request(r)] = &ev[..] else {
        panic!("{ev:?}")
    };
    assert_eq!(
        (r.method(), r.path(), r.authority()),
        ("GET", Some("/a.txt?x=1"), Some("example.com"))
    );
    assert_eq!(r.scheme(), Some("https"));
    assert_eq!(r.header("accept"), Some(&b"*/*"[..]));
    assert!(r.end_stream);
    p.conn
        .send_headers(
            r.stream,
            200,
            &[("content-type", b"text/plain"), ("content-length", b"5")],
            false,
        )
        .unwrap();
    assert_eq!(p.conn.send_data(r.stream, b"hello", true), Ok(5));
    assert_eq!(
        p.read(),
        [
            Seen::Headers {
                stream: 1,
                fields: vec![
                    (":status".into(), "200".into()),
                    ("content-type".into(), "text/plain".into()),
                    ("content-length".into(), "5".into())
                ],
                end_stream: false
            },
            Seen::Data {
                stream: 1,
                len: 5,
                end_stream: true
            },
        ]
    );
    assert_eq!(
        p.conn.active_streams(),
        0,
        "both sides ended: the stream is closed"
    );
    assert_eq!(p.conn.state(), State::Open);
}

#[test]
fn head_is_a_header_block_that_ends_the_stream() {
    let mut p = Peer::new(Limits::default());
    let req = p.headers(
        1,
        &[(":method", "HEAD"), (":scheme", "http"), (":path", "/")],
        true,
    );
    p.send(&req).unwrap();
    let s = StreamId(request_streams(&p.events())[0]);
    p.conn.send_headers(s, 304, &[], true).unwrap();
    let seen = p.read();
    assert_eq!(
        seen,
        [Seen::Headers {
            stream: 1,
            fields: vec![(":status".into(), "304".into())],
            end_stream: true
        }]
    );
    assert_eq!(
        p.conn.send_data(s, b"x", true),
        Err(servelab_h2::SendError::StreamNotOpen(s))
    );
}

#[test]
fn the_events_do_not_depend_on_how_the_bytes_were_split() {
    let mut script = frame::PREFACE.to_vec();
    script.extend(settings_frame(&[(4, 100_000)]));
    let mut helper = Peer::new(Limits::default());
    for s in [1, 3, 5] {
        let h = helper.headers(
            s,
            &[
                (":method", "POST"),
                (":scheme", "https"),
                (":path", "/up"),
                ("content-length", "3"),
            ],
            false,
        );
        script.extend(h);
        script.extend(data(s, b"abc", true));
    }
    script.extend(ping(*b"pingpong"));
    let whole = {
        let mut c = servelab_h2::ServerConn::new(Limits::default());
        c.feed(&script).unwrap();
        (
            std::iter::from_fn(|| c.poll_event()).collect::<Vec<_>>(),
            c.take_output(),
        )
    };
    assert_eq!(request_streams(&whole.0), [1, 3, 5]);
    for step in [1, 2, 7, 9, 100] {
        let mut c = servelab_h2::ServerConn::new(Limits::default());
        for chunk in script.chunks(step) {
            c.feed(chunk).unwrap();
        }
        let events: Vec<_> = std::iter::from_fn(|| c.poll_event()).collect();
        // Data events may come in pieces only if frames do; frames are whole here.
        assert_eq!(events, whole.0, "split every {step}");
        assert_eq!(c.take_output(), whole.1, "split every {step}");
    }
}

#[test]
fn a_body_is_delivered_and_its_window_given_back() {
    let mut p = Peer::new(Limits::default());
    let req = p.headers(
        1,
        &[
            (":method", "POST"),
            (":scheme", "https"),
            (":path", "/"),
            ("content-length", "50000"),
        ],
        false,
    );
    p.send(&req).unwrap();
    let chunk = vec![7u8; 10_000];
    for i in 0..5 {
        p.send(&data(1, &chunk, i == 4)).unwrap();
    }
    let ev = p.events();
    let got: usize = ev
        .iter()
        .map(|e| match e {
            Event::Data { data, .. } => data.len(),
            _ => 0,
        })
        .sum();
    assert_eq!(got, 50_000);
    assert!(matches!(
        ev.last(),
        Some(Event::Data {
            end_stream: true,
            ..
        })
    ));
    let seen = p.read();
    // The connection's credit came back (half of 65,535 used); the stream's too, until its
    // END_STREAM made more credit pointless.
    assert!(
        seen.iter()
            .any(|s| matches!(s, Seen::WindowUpdate { stream: 0, .. })),
        "{seen:?}"
    );
    assert!(
        seen.iter()
            .any(|s| matches!(s, Seen::WindowUpdate { stream: 1, .. })),
        "{seen:?}"
    );
}

#[test]
fn a_body_that_does_not_match_content_length_is_malformed() {
    let mut p = Peer::new(Limits::default());
    let req = p.headers(
        1,
        &[
            (":method", "POST"),
            (":scheme", "https"),
            (":path", "/"),
            ("content-length", "2"),
        ],
        false,
    );
    p.send(&req).unwrap();
    p.send(&data(1, b"abc", true)).unwrap();
    assert_eq!(
        p.read(),
        [Seen::Rst {
            stream: 1,
            code: ErrorCode::ProtocolError
        }]
    );
    let ev = p.events();
    assert!(matches!(
        ev.last(),
        Some(Event::Reset {
            code: ErrorCode::ProtocolError,
            remote: false,
            ..
        })
    ));
    // The connection goes on.
    let g = p.get(3);
    p.send(&g).unwrap();
    assert_eq!(request_streams(&p.events()), [3]);
}

#[test]
fn a_malformed_request_is_a_stream_error_and_the_connection_goes_on() {
    let mut p = Peer::new(Limits::default());
    for (s, bad) in [
        (1, ("Upper", "x")),
        (3, ("connection", "keep-alive")),
        (5, (":protocol", "x")),
    ] {
        let mut fields = GET.to_vec();
        fields.push(bad);
        let h = p.headers(s, &fields, true);
        p.send(&h).unwrap();
        assert_eq!(
            p.read(),
            [Seen::Rst {
                stream: s,
                code: ErrorCode::ProtocolError
            }],
            "{bad:?}"
        );
    }
    assert!(
        p.events().is_empty(),
        "a malformed request never reaches the driver"
    );
    let g = p.get(7);
    p.send(&g).unwrap();
    assert_eq!(request_streams(&p.events()), [7]);
}

#[test]
fn trailers_end_the_body() {
    let mut p = Peer::new(Limits::default());
    let h = p.headers(
        1,
        &[(":method", "POST"), (":scheme", "https"), (":path", "/")],
        false,
    );
    p.send(&h).unwrap();
    p.send(&data(1, b"abc", false)).unwrap();
    let t = p.headers(1, &[("x-checksum", "1")], true);
    p.send(&t).unwrap();
    let ev = p.events();
    assert!(
        matches!(ev.last(), Some(Event::Data { end_stream: true, data, .. }) if data.is_empty()),
        "{ev:?}"
    );
    // Trailers without END_STREAM are malformed.
    let h = p.headers(
        3,
        &[(":method", "POST"), (":scheme", "https"), (":path", "/")],
        false,
    );
    p.send(&h).unwrap();
    let t = p.headers(3, &[("x", "1")], false);
    p.send(&t).unwrap();
    assert!(p.read().contains(&Seen::Rst {
        stream: 3,
        code: ErrorCode::ProtocolError
    }));
}

#[test]
fn a_large_response_head_is_split_into_continuations() {
    let mut p = Peer::new(Limits::default());
    let g = p.get(1);
    p.send(&g).unwrap();
    p.events();
    let big = vec![b'a'; 40_000];
    p.conn
        .send_headers(StreamId(1), 200, &[("x-big", &big)], true)
        .unwrap();
    let seen = p.read();
    let [Seen::Headers { fields, .. }] = &seen[..] else {
        panic!("{seen:?}")
    };
    assert_eq!(fields[1].1.len(), 40_000);
}

#[test]
fn the_peers_table_size_change_is_signalled_in_the_next_block() {
    let mut p = Peer::with_settings(Limits::default(), &[(1, 0)]);
    let g = p.get(1);
    p.send(&g).unwrap();
    p.events();
    p.conn.send_headers(StreamId(1), 200, &[], true).unwrap();
    let out = p.conn.pending_output().to_vec();
    // HEADERS payload starts with the size update to 0.
    assert_eq!(out[9], 0x20, "{out:02x?}");
    assert!(matches!(p.read()[..], [Seen::Headers { .. }]));
}

#[test]
fn priority_is_parsed_and_ignored_but_self_dependency_is_refused() {
    let mut p = Peer::new(Limits::default());
    p.send(&encode(Frame::Priority {
        stream: StreamId(9),
        priority: frame::Priority {
            dependency: StreamId(1),
            exclusive: false,
            weight: 3,
        },
    }))
    .unwrap();
    let block = p.block(&GET);
    let h = encode(Frame::Headers {
        stream: StreamId(1),
        block: &block,
        end_stream: true,
        end_headers: true,
        priority: Some(frame::Priority {
            dependency: StreamId(1),
            exclusive: false,
            weight: 0,
        }),
    });
    p.send(&h).unwrap();
    assert_eq!(
        p.read(),
        [Seen::Rst {
            stream: 1,
            code: ErrorCode::ProtocolError
        }]
    );
    // The table stayed in step: the next request decodes.
    let g = p.get(3);
    p.send(&g).unwrap();
    assert_eq!(request_streams(&p.events()), [3]);
}

#[test]
fn an_http1_style_head_is_lowercased_and_loses_its_connection_fields() {
    let mut p = Peer::new(Limits::default());
    let g = p.get(1);
    p.send(&g).unwrap();
    p.events();
    let fields: [(&str, &[u8]); 4] = [
        ("Content-Type", b"text/html"),
        ("Connection", b"keep-alive"),
        ("Transfer-Encoding", b"chunked"),
        ("ETag", b"\"x\""),
    ];
    p.conn
        .send_headers(StreamId(1), 200, &fields, true)
        .unwrap();
    let seen = p.read();
    let [Seen::Headers { fields, .. }] = &seen[..] else {
        panic!("{seen:?}")
    };
    let names: Vec<&str> = fields.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, [":status", "content-type", "etag"]);
}
