//! Fuzzes the HTTP/2 frame decoder and the connection on arbitrary bytes: the server role
//! after a client preface (everything a client can make the server do), and the client role
//! with three requests in flight (everything a server can make `load --h2` do).
//!
//! Beyond "no panic":
//! - frame decoding: a complete frame takes 9 to 9 + max octets, and every shorter prefix
//!   of it is `Incomplete`;
//! - the connection's answer does not depend on how TCP split the bytes: fed whole and fed
//!   in three pieces, it gives the same events and the same output;
//! - everything the server writes decodes as valid frames, and its header blocks decode
//!   with a fresh HPACK decoder (our encoder keeps no table state);
//! - open streams never pass the concurrency limit;
//! - a closed connection writes nothing more, and one closed by an error wrote GOAWAY last.
//!
//! The server's driver answers every request (a head, then a body as far as the windows
//! allow), so the send side and flow control are fuzzed too.
//!
//! Input layout: byte 0 picks the limits (bit 0: default or tiny), whether to send the
//! preface and SETTINGS for the fuzzer (bit 1) and the role (bit 2: client), bytes 1..=4 two
//! split points, the rest the frames.

#![no_main]

use libfuzzer_sys::fuzz_target;
use servelab_h2::frame::{self, Frame, Parse, decode_frame};
use servelab_h2::hpack::Decoder;
use servelab_h2::{ClientConn, Event, Limits, RequestHead, ServerConn, State};

fn limits(sel: u8) -> Limits {
    if sel & 1 == 0 {
        Limits::default()
    } else {
        Limits {
            max_concurrent_streams: 2,
            max_header_list_size: 256,
            max_header_block: 512,
            max_continuations: 2,
            max_peer_resets: 3,
            max_local_resets: 3,
            max_settings: 3,
            max_pings: 3,
            max_empty_frames: 3,
            max_control_backlog: 4,
            ..Limits::default()
        }
    }
}

/// Feeds `input` cut at `cuts`; returns (events, output, error). With `interleave`, the
/// driver answers and writes between pieces, as a real one does; without, only at the end,
/// so that the pieces alone differ between two runs.
fn run(
    input: &[u8],
    limits: Limits,
    cuts: &[usize],
    interleave: bool,
) -> (Vec<Event>, Vec<u8>, bool) {
    let mut c = ServerConn::new(limits);
    let mut events = Vec::new();
    let mut out = Vec::new();
    let mut failed = false;
    let mut pos = 0;
    let mut bounds: Vec<usize> = cuts.iter().map(|&k| k.min(input.len())).collect();
    bounds.sort_unstable();
    bounds.push(input.len());
    let last = bounds.len() - 1;
    for (i, end) in bounds.into_iter().enumerate() {
        let was_closed = c.state() == State::Closed && c.pending_output().is_empty();
        failed |= c.feed(&input[pos..end]).is_err();
        pos = end;
        if interleave || i == last {
            drive(&mut c, &mut events);
            assert!(c.active_streams() <= limits.max_concurrent_streams as usize);
            let o = c.take_output();
            if was_closed {
                assert!(o.is_empty(), "output after the end");
            }
            out.extend(o);
        }
    }
    (events, out, failed)
}

/// The client role: three requests (one with a body) before any input; the input is the
/// server's bytes.
fn run_client(input: &[u8], limits: Limits, cuts: &[usize]) -> (Vec<Event>, Vec<u8>, bool) {
    let mut c = ClientConn::new(limits);
    let head = RequestHead {
        method: "GET",
        scheme: "https",
        authority: "a",
        path: "/",
    };
    for end in [true, true, false] {
        let s = c
            .send_request(head, &[("accept", b"*/*")], end)
            .expect("room for 3 streams");
        if !end {
            let _ = c.send_data(s, &[b'y'; 70_000], true);
        }
    }
    let mut events = Vec::new();
    let mut failed = false;
    let mut pos = 0;
    let mut bounds: Vec<usize> = cuts.iter().map(|&k| k.min(input.len())).collect();
    bounds.sort_unstable();
    bounds.push(input.len());
    for end in bounds {
        failed |= c.feed(&input[pos..end]).is_err();
        pos = end;
    }
    events.extend(std::iter::from_fn(|| c.poll_event()));
    assert!(c.open_streams() <= 3);
    (events, c.take_output(), failed)
}

/// Answers every request with a head and as much of a 70,000-octet body as fits.
fn drive(c: &mut ServerConn, events: &mut Vec<Event>) {
    let body = [b'x'; 70_000];
    while let Some(e) = c.poll_event() {
        match &e {
            Event::Request(r) => {
                let s = r.stream;
                let _ = c.send_headers(s, 200, &[("content-length", b"70000")], false);
                let _ = c.send_data(s, &body, true);
            }
            Event::WindowOpened { stream } => {
                let _ = c.send_data(*stream, &body[..1000], true);
            }
            _ => {}
        }
        events.push(e);
    }
}

/// Checks the server's output: valid frames, decodable header blocks, GOAWAY last on error.
fn check_output(out: &[u8], failed: bool) {
    let mut at = 0;
    let mut hpack = Decoder::new(4096, usize::MAX);
    let mut block: Option<Vec<u8>> = None;
    let mut last_kind = None;
    while at < out.len() {
        let (f, n) = match decode_frame(&out[at..], frame::MAX_MAX_FRAME_SIZE) {
            Ok(Parse::Complete(x)) => x,
            other => panic!("server wrote a bad frame at {at}: {other:?}"),
        };
        at += n;
        last_kind = Some(out[at - n + 3]);
        match f {
            Frame::Headers {
                block: b,
                end_headers,
                ..
            } => {
                assert!(block.is_none(), "HEADERS inside a block");
                block = Some(b.to_vec());
                if end_headers {
                    hpack
                        .decode(&block.take().unwrap(), |_, _| {})
                        .expect("server HPACK");
                }
            }
            Frame::Continuation {
                block: b,
                end_headers,
                ..
            } => {
                let acc = block.as_mut().expect("CONTINUATION without HEADERS");
                acc.extend_from_slice(b);
                if end_headers {
                    hpack
                        .decode(&block.take().unwrap(), |_, _| {})
                        .expect("server HPACK");
                }
            }
            _ => assert!(block.is_none(), "frame inside a header block"),
        }
    }
    if failed {
        assert_eq!(
            last_kind,
            Some(frame::kind::GOAWAY),
            "a connection error ends in GOAWAY"
        );
    }
}

/// Frame decoding on its own: bounds, and prefixes of a complete frame are incomplete.
fn check_frames(mut buf: &[u8]) {
    while let Ok(Parse::Complete((_, n))) = decode_frame(buf, frame::MIN_MAX_FRAME_SIZE) {
        assert!((frame::HEADER_LEN..=frame::HEADER_LEN + 16_384).contains(&n) && n <= buf.len());
        for k in [0, n / 2, n - 1] {
            assert_eq!(
                decode_frame(&buf[..k], frame::MIN_MAX_FRAME_SIZE),
                Ok(Parse::Incomplete)
            );
        }
        buf = &buf[n..];
    }
}

fuzz_target!(|data: &[u8]| {
    if data.len() < 5 {
        return;
    }
    let limits = limits(data[0]);
    let client = data[0] & 4 != 0;
    let mut input = Vec::new();
    if data[0] & 2 == 0 {
        if !client {
            input.extend_from_slice(frame::PREFACE);
        }
        input.extend_from_slice(&[0, 0, 0, 4, 0, 0, 0, 0, 0]);
    }
    input.extend_from_slice(&data[5..]);
    check_frames(&data[5..]);
    let cuts = [
        usize::from(u16::from_le_bytes([data[1], data[2]])),
        usize::from(u16::from_le_bytes([data[3], data[4]])),
    ];
    if client {
        let whole = run_client(&input, limits, &[]);
        assert!(whole.1.starts_with(frame::PREFACE));
        check_output(&whole.1[frame::PREFACE.len()..], whole.2);
        assert_eq!(
            whole,
            run_client(&input, limits, &cuts),
            "the answer depends on the split"
        );
        return;
    }
    let whole = run(&input, limits, &[], false);
    check_output(&whole.1, whole.2);
    let split = run(&input, limits, &cuts, false);
    assert_eq!(whole, split, "the answer depends on the split");
    let live = run(&input, limits, &cuts, true);
    check_output(&live.1, live.2);
});
