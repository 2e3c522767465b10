//! Graceful shutdown with GOAWAY, the peer's GOAWAY, and the SETTINGS handshake.

use crate::peer::*;
use servelab_h2::{ErrorCode, Event, Limits, ServerConn, State, StreamId};

#[test]
fn shutdown_finishes_open_streams_and_refuses_new_ones() {
    let mut p = Peer::new(Limits::default());
    let (a, b) = (p.get(1), p.get(3));
    p.send(&a).unwrap();
    p.send(&b).unwrap();
    assert_eq!(request_streams(&p.events()), [1, 3]);
    p.conn.shutdown();
    assert_eq!(p.conn.state(), State::Draining);
    assert_eq!(
        p.read(),
        [Seen::GoAway {
            last: 3,
            code: ErrorCode::NoError
        }]
    );
    // A request the client sent before it saw the GOAWAY: not served, but decoded (the
    // table stays in step for the streams still open).
    let late = p.get(5);
    p.send(&late).unwrap();
    assert!(p.events().is_empty());
    for s in [1, 3] {
        p.conn.send_headers(StreamId(s), 204, &[], true).unwrap();
    }
    assert_eq!(p.conn.state(), State::Closed);
    assert_eq!(p.read().len(), 2);
}

#[test]
fn shutdown_with_nothing_open_closes_at_once() {
    let mut p = Peer::new(Limits::default());
    p.conn.shutdown();
    assert_eq!(p.conn.state(), State::Closed);
    assert_eq!(
        p.read(),
        [Seen::GoAway {
            last: 0,
            code: ErrorCode::NoError
        }]
    );
}

#[test]
fn the_peers_goaway_is_reported_and_drains_the_connection() {
    let mut p = Peer::new(Limits::default());
    let g = p.get(1);
    p.send(&g).unwrap();
    p.events();
    p.send(&encode(servelab_h2::frame::Frame::GoAway {
        last_stream: StreamId(0),
        code: ErrorCode::NoError,
        debug: b"bye",
    }))
    .unwrap();
    assert_eq!(
        p.events(),
        [Event::GoAway {
            last_stream: StreamId(0),
            code: ErrorCode::NoError
        }]
    );
    assert_eq!(p.conn.state(), State::Draining);
    p.conn.send_headers(StreamId(1), 200, &[], true).unwrap();
    assert_eq!(p.conn.state(), State::Closed);
}

#[test]
fn settings_ack_is_tracked_for_the_drivers_timeout() {
    let mut c = ServerConn::new(Limits::default());
    assert!(c.settings_ack_pending());
    let mut hello = servelab_h2::frame::PREFACE.to_vec();
    hello.extend(settings_frame(&[]));
    c.feed(&hello).unwrap();
    assert!(c.settings_ack_pending());
    // The driver's timer fires.
    c.goaway(ErrorCode::SettingsTimeout);
    assert_eq!(c.state(), State::Closed);
    let out = c.take_output();
    let tail = &out[out.len() - 17 - "closed by the server".len()..];
    assert_eq!(tail[3], servelab_h2::frame::kind::GOAWAY);
    assert_eq!(&tail[13..17], &4u32.to_be_bytes());
}

#[test]
fn our_settings_are_announced_first() {
    let c = ServerConn::new(Limits::default());
    let out = c.pending_output();
    assert_eq!(out[3], servelab_h2::frame::kind::SETTINGS);
    let params: Vec<(u16, u32)> = out[9..]
        .chunks(6)
        .map(|c| {
            (
                u16::from_be_bytes([c[0], c[1]]),
                u32::from_be_bytes([c[2], c[3], c[4], c[5]]),
            )
        })
        .collect();
    assert!(params.contains(&(2, 0)), "no push");
    assert!(params.contains(&(3, 100)), "concurrency");
    assert!(params.contains(&(6, 16 << 10)), "header list");
}
