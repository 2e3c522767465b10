//! The client role: against our own server in memory (the two ends of one connection, bytes
//! moved by hand), against Python h2's server output, and against a server that breaks the
//! rules.

use crate::peer::{Reader, Seen, data, encode, raw, settings_frame};
use servelab_h2::frame::{self, Frame, kind};
use servelab_h2::{
    ClientConn, ErrorCode, Event, Limits, RequestHead, SendError, ServerConn, State, StreamId,
};

const GET: RequestHead<'static> = RequestHead {
    method: "GET",
    scheme: "https",
    authority: "example.com",
    path: "/",
};

fn get(path: &str) -> RequestHead<'_> {
    RequestHead { path, ..GET }
}

/// The bodies the server sends: the path's length in octets, after a leading `/`.
fn body_len(path: &str) -> usize {
    path[1..].parse().unwrap_or(0)
}

/// Moves bytes both ways until neither side has anything to say; the server answers every
/// request with a body whose length is in its path, sent as far as the windows allow.
/// Returns the client's events.
fn pump(client: &mut ClientConn, server: &mut ServerConn) -> Vec<Event> {
    let mut events = Vec::new();
    let mut pending: Vec<(StreamId, usize)> = Vec::new();
    for _ in 0..10_000 {
        let to_server = client.take_output();
        let to_client_before = server.pending_output().len();
        server.feed(&to_server).unwrap();
        while let Some(e) = server.poll_event() {
            if let Event::Request(r) = e {
                let n = body_len(r.path().unwrap());
                let len = n.to_string();
                server
                    .send_headers(r.stream, 200, &[("content-length", len.as_bytes())], false)
                    .unwrap();
                pending.push((r.stream, n));
            }
        }
        for (stream, left) in &mut pending {
            let chunk = vec![b'x'; *left];
            *left -= server.send_data(*stream, &chunk, true).unwrap_or(*left);
        }
        pending.retain(|&(_, left)| left > 0);
        let to_client = server.take_output();
        client.feed(&to_client).unwrap();
        events.extend(std::iter::from_fn(|| client.poll_event()));
        if to_server.is_empty()
            && to_client.is_empty()
            && to_client_before == 0
            && client.pending_output().is_empty()
        {
            break;
        }
    }
    events
}

fn bodies(events: &[Event]) -> Vec<(u32, usize, bool)> {
    let mut per: std::collections::BTreeMap<u32, (usize, bool)> = Default::default();
    for e in events {
        if let Event::Data {
            stream,
            data,
            end_stream,
        } = e
        {
            let v = per.entry(stream.0).or_default();
            v.0 += data.len();
            v.1 |= end_stream;
        }
    }
    per.into_iter().map(|(s, (n, end))| (s, n, end)).collect()
}

#[test]
fn client_and_server_in_memory() {
    let mut client = ClientConn::new(Limits::default());
    let mut server = ServerConn::new(Limits::default());
    for path in ["/10", "/0", "/200000"] {
        client
            .send_request(get(path), &[("user-agent", b"servelab-load")], true)
            .unwrap();
    }
    let events = pump(&mut client, &mut server);
    let statuses: Vec<(u32, u16)> = events
        .iter()
        .filter_map(|e| match e {
            Event::Response(r) => Some((r.stream.0, r.status)),
            _ => None,
        })
        .collect();
    assert_eq!(statuses, [(1, 200), (3, 200), (5, 200)]);
    // 200,000 octets needed WINDOW_UPDATEs from the client, given by the connection itself.
    assert_eq!(
        bodies(&events),
        [(1, 10, true), (3, 0, true), (5, 200_000, true)]
    );
    assert_eq!(client.open_streams(), 0);
    assert_eq!(server.active_streams(), 0);
    assert!(!client.settings_ack_pending() && !server.settings_ack_pending());
}

#[test]
fn a_request_with_a_body() {
    let mut client = ClientConn::new(Limits::default());
    let mut server = ServerConn::new(Limits::default());
    let head = RequestHead {
        method: "POST",
        ..get("/5")
    };
    let s = client
        .send_request(head, &[("content-length", b"11")], false)
        .unwrap();
    assert_eq!(client.send_data(s, b"hello world", true), Ok(11));
    server.feed(&client.take_output()).unwrap();
    let got: Vec<Event> = std::iter::from_fn(|| server.poll_event()).collect();
    assert!(matches!(&got[0], Event::Request(r) if r.method() == "POST" && !r.end_stream));
    assert_eq!(
        got[1],
        Event::Data {
            stream: s,
            data: b"hello world".to_vec(),
            end_stream: true
        }
    );
}

#[test]
fn the_servers_concurrency_limit_is_kept() {
    let mut client = ClientConn::new(Limits::default());
    let mut server = ServerConn::new(Limits {
        max_concurrent_streams: 2,
        ..Limits::default()
    });
    client.feed(&server.take_output()).unwrap();
    assert_eq!(client.peer_settings().max_concurrent_streams, Some(2));
    client.send_request(get("/1"), &[], true).unwrap();
    client.send_request(get("/1"), &[], true).unwrap();
    assert_eq!(
        client.send_request(get("/1"), &[], true),
        Err(SendError::TooManyStreams)
    );
    let events = pump(&mut client, &mut server);
    assert_eq!(bodies(&events).len(), 2);
    assert!(
        client.send_request(get("/1"), &[], true).is_ok(),
        "room again"
    );
}

#[test]
fn the_servers_goaway_refuses_streams_it_did_not_take() {
    let mut client = ClientConn::new(Limits::default());
    let mut server = ServerConn::new(Limits::default());
    client.send_request(get("/1"), &[], true).unwrap();
    server.feed(&client.take_output()).unwrap();
    assert_eq!(std::iter::from_fn(|| server.poll_event()).count(), 1);
    client.send_request(get("/1"), &[], true).unwrap(); // stream 3: in flight
    server.shutdown(); // GOAWAY, last stream 1
    client.feed(&server.take_output()).unwrap();
    let events: Vec<Event> = std::iter::from_fn(|| client.poll_event()).collect();
    assert_eq!(
        events,
        [
            Event::Reset {
                stream: StreamId(3),
                code: ErrorCode::RefusedStream,
                remote: true
            },
            Event::GoAway {
                last_stream: StreamId(1),
                code: ErrorCode::NoError
            },
        ]
    );
    assert_eq!(client.state(), State::Draining);
    assert_eq!(
        client.send_request(get("/1"), &[], true),
        Err(SendError::Draining)
    );
}

#[test]
fn python_h2_server_output_is_read_by_the_client() {
    let mut client = ClientConn::new(Limits::default());
    client.send_request(get("/"), &[], true).unwrap();
    client.send_request(get("/"), &[], true).unwrap();
    client
        .feed(include_bytes!("../fixtures/server.bin"))
        .unwrap();
    let events: Vec<Event> = std::iter::from_fn(|| client.poll_event()).collect();
    let heads: Vec<_> = events
        .iter()
        .filter_map(|e| match e {
            Event::Response(r) => {
                Some((r.stream.0, r.status, r.header("server").map(<[u8]>::to_vec)))
            }
            _ => None,
        })
        .collect();
    assert_eq!(
        heads,
        [
            (1, 200, Some(b"python-h2".to_vec())),
            (3, 200, Some(b"python-h2".to_vec()))
        ]
    );
    assert_eq!(bodies(&events), [(1, 10, true), (3, 6, true)]);
    assert!(matches!(
        events.last(),
        Some(Event::GoAway {
            code: ErrorCode::NoError,
            ..
        })
    ));
    assert_eq!(client.state(), State::Closed, "GOAWAY with nothing open");
}

/// A client after the server's SETTINGS, with stream 1 open.
fn client_with_stream() -> ClientConn {
    let mut client = ClientConn::new(Limits::default());
    client.feed(&settings_frame(&[])).unwrap();
    client.send_request(GET, &[], true).unwrap();
    client.take_output();
    client
}

fn response_block(fields: &[(&str, &str)]) -> Vec<u8> {
    let mut enc = servelab_h2::hpack::Encoder::new();
    let mut block = Vec::new();
    enc.encode(
        fields.iter().map(|(n, v)| (n.as_bytes(), v.as_bytes())),
        &mut block,
    );
    block
}

fn headers(stream: u32, fields: &[(&str, &str)], end_stream: bool) -> Vec<u8> {
    let block = response_block(fields);
    encode(Frame::Headers {
        stream: StreamId(stream),
        block: &block,
        end_stream,
        end_headers: true,
        priority: None,
    })
}

#[test]
fn interim_heads_are_skipped_and_the_final_one_reported() {
    let mut client = client_with_stream();
    client
        .feed(&headers(
            1,
            &[(":status", "103"), ("link", "</a.css>")],
            false,
        ))
        .unwrap();
    client
        .feed(&headers(1, &[(":status", "204")], true))
        .unwrap();
    let events: Vec<Event> = std::iter::from_fn(|| client.poll_event()).collect();
    assert!(matches!(&events[..], [Event::Response(r)] if r.status == 204 && r.end_stream));
    assert_eq!(client.open_streams(), 0);
}

#[test]
fn a_server_that_breaks_the_rules_gets_the_rfc_answer() {
    // DATA before the head: stream error.
    let mut client = client_with_stream();
    client.feed(&data(1, b"x", true)).unwrap();
    let mut r = Reader::new();
    assert_eq!(
        r.read(&client.take_output()),
        [Seen::Rst {
            stream: 1,
            code: ErrorCode::ProtocolError
        }]
    );
    // A response without :status: stream error.
    let mut client = client_with_stream();
    client.feed(&headers(1, &[("server", "x")], true)).unwrap();
    assert_eq!(
        Reader::new().read(&client.take_output()),
        [Seen::Rst {
            stream: 1,
            code: ErrorCode::ProtocolError
        }]
    );
    // HEADERS on a stream we never opened, and PUSH_PROMISE (we disabled push): connection
    // errors.
    for f in [
        headers(3, &[(":status", "200")], true),
        headers(2, &[(":status", "200")], true),
        raw(
            kind::PUSH_PROMISE,
            frame::flag::END_HEADERS,
            1,
            &[0, 0, 0, 2],
        ),
    ] {
        let mut client = client_with_stream();
        assert!(
            matches!(
                client.feed(&f),
                Err(servelab_h2::H2Error::Connection {
                    code: ErrorCode::ProtocolError,
                    ..
                })
            ),
            "{f:02x?}"
        );
    }
    // A server whose first frame is not SETTINGS.
    let mut client = ClientConn::new(Limits::default());
    assert!(
        client
            .feed(&headers(1, &[(":status", "200")], true))
            .is_err()
    );
}
