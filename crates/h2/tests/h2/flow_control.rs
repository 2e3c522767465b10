//! Flow control on what the server sends: both windows, frame sizes, and the zero window a
//! slowloris holds open.

use crate::peer::*;
use servelab_h2::{ErrorCode, Event, Limits, StreamId};

#[test]
fn data_is_cut_at_the_peers_frame_size_and_window() {
    let mut p = Peer::new(Limits::default());
    let g = p.get(1);
    p.send(&g).unwrap();
    p.events();
    p.conn.send_headers(StreamId(1), 200, &[], false).unwrap();
    let body = vec![1u8; 100_000];
    assert_eq!(p.conn.send_data(StreamId(1), &body, true), Ok(65_535));
    assert!(p.conn.stalled());
    assert_eq!(p.conn.send_capacity(StreamId(1)), 0);
    let seen = p.read();
    let sizes: Vec<usize> = seen
        .iter()
        .filter_map(|s| match s {
            Seen::Data {
                len, end_stream, ..
            } => {
                assert!(!end_stream);
                Some(*len)
            }
            _ => None,
        })
        .collect();
    assert_eq!(sizes, [16_384, 16_384, 16_384, 16_383]);
    // The stream window opening alone is not enough: the connection's is at zero too.
    p.send(&window_update(1, 50_000)).unwrap();
    assert!(p.events().is_empty());
    p.send(&window_update(0, 10_000)).unwrap();
    assert_eq!(
        p.events(),
        [Event::WindowOpened {
            stream: StreamId(1)
        }]
    );
    assert_eq!(
        p.conn.send_data(StreamId(1), &body[65_535..], true),
        Ok(10_000)
    );
    p.send(&window_update(0, 1 << 20)).unwrap();
    assert_eq!(
        p.events(),
        [Event::WindowOpened {
            stream: StreamId(1)
        }]
    );
    assert_eq!(
        p.conn.send_data(StreamId(1), &body[75_535..], true),
        Ok(24_465)
    );
    assert!(!p.conn.stalled());
    assert!(matches!(
        p.read().last(),
        Some(Seen::Data {
            end_stream: true,
            ..
        })
    ));
}

#[test]
fn a_larger_peer_frame_size_gives_larger_frames() {
    let mut p = Peer::with_settings(Limits::default(), &[(5, 1 << 20), (4, 1 << 20)]);
    p.send(&window_update(0, 1 << 20)).unwrap();
    let g = p.get(1);
    p.send(&g).unwrap();
    p.events();
    p.conn.send_headers(StreamId(1), 200, &[], false).unwrap();
    assert_eq!(
        p.conn.send_data(StreamId(1), &vec![0; 300_000], true),
        Ok(300_000)
    );
    let seen = p.read();
    assert_eq!(
        seen[1],
        Seen::Data {
            stream: 1,
            len: 300_000,
            end_stream: true
        }
    );
}

#[test]
fn zero_window_slowloris_is_exposed_and_costs_no_buffer() {
    // The client opens with a window of 0 and never raises it.
    let mut p = Peer::with_settings(Limits::default(), &[(4, 0)]);
    let g = p.get(1);
    p.send(&g).unwrap();
    p.events();
    p.conn
        .send_headers(StreamId(1), 200, &[("content-length", b"1000000")], false)
        .unwrap();
    p.read();
    assert!(!p.conn.stalled());
    for _ in 0..1000 {
        assert_eq!(p.conn.send_data(StreamId(1), &[0; 16_384], true), Ok(0));
    }
    assert!(p.conn.stalled(), "the driver can see the stall and time it");
    assert!(
        p.conn.pending_output().is_empty(),
        "nothing is queued for a stalled stream"
    );
    // The driver's timer fires: it resets the stream (or ends the connection).
    p.conn.reset(StreamId(1), ErrorCode::Cancel);
    assert!(!p.conn.stalled());
    assert_eq!(
        p.read(),
        [Seen::Rst {
            stream: 1,
            code: ErrorCode::Cancel
        }]
    );
}

#[test]
fn a_raised_initial_window_reopens_blocked_streams() {
    let mut p = Peer::with_settings(Limits::default(), &[(4, 0)]);
    let g = p.get(1);
    p.send(&g).unwrap();
    p.events();
    assert_eq!(p.conn.send_data(StreamId(1), b"abc", true), Ok(0));
    p.send(&settings_frame(&[(4, 10)])).unwrap();
    assert_eq!(
        p.events(),
        [Event::WindowOpened {
            stream: StreamId(1)
        }]
    );
    assert_eq!(p.conn.send_data(StreamId(1), b"abc", true), Ok(3));
}

#[test]
fn window_overflow_is_a_flow_control_error() {
    let mut p = Peer::new(Limits::default());
    let g = p.get(1);
    p.send(&g).unwrap();
    p.send(&window_update(1, (1 << 31) - 1)).unwrap();
    assert!(p.read().contains(&Seen::Rst {
        stream: 1,
        code: ErrorCode::FlowControlError
    }));
    assert_eq!(
        conn_error(p.send(&window_update(0, (1 << 31) - 1))),
        ErrorCode::FlowControlError
    );
    assert_goaway(&p.read(), ErrorCode::FlowControlError);
}

#[test]
fn received_data_credit_is_returned_within_half_a_window() {
    let mut p = Peer::new(Limits::default());
    let h = p.headers(
        1,
        &[(":method", "POST"), (":scheme", "https"), (":path", "/")],
        false,
    );
    p.send(&h).unwrap();
    let chunk = vec![0u8; 16_384];
    let mut sent = 0u64;
    let mut returned = [0u64; 2];
    for _ in 0..100 {
        p.send(&data(1, &chunk, false)).unwrap();
        sent += chunk.len() as u64;
        for s in p.read() {
            match s {
                Seen::WindowUpdate { stream, increment } => {
                    returned[stream as usize] += u64::from(increment)
                }
                other => panic!("{other:?}"),
            }
        }
        // The peer never sees less than half a window of credit: it is never blocked.
        for r in returned {
            assert!(sent - r < 65_535 / 2 + 16_384, "sent {sent}, returned {r}");
        }
    }
    assert_eq!(p.events().len(), 101);
}

#[test]
fn empty_data_without_end_stream_sends_nothing_and_blocks_nothing() {
    let mut p = Peer::new(Limits::default());
    let g = p.get(1);
    p.send(&g).unwrap();
    p.events();
    assert_eq!(p.conn.send_data(StreamId(1), b"", false), Ok(0));
    assert!(!p.conn.stalled());
    assert_eq!(p.conn.send_data(StreamId(1), b"", true), Ok(0));
    assert_eq!(
        p.read(),
        [Seen::Data {
            stream: 1,
            len: 0,
            end_stream: true
        }]
    );
}
