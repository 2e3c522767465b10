//! Byte streams from an independent implementation (Python's `h2` 4.4.1 with `hpack` 4.2.0;
//! tests/fixtures/python_h2.py regenerates them): what its client sends, served by our
//! connection; and what its server sends, read with our frame and HPACK decoders (the
//! pieces a client uses). Its encoder indexes repeated fields in its dynamic table and
//! Huffman-codes strings, which our own encoder never does.

use crate::peer::{Reader, Seen};
use servelab_h2::frame;
use servelab_h2::{ErrorCode, Event, Limits, ServerConn, StreamId};

const CLIENT: &[u8] = include_bytes!("../fixtures/client.bin");
const SERVER: &[u8] = include_bytes!("../fixtures/server.bin");

#[test]
fn python_h2_client_is_served() {
    let mut c = ServerConn::new(Limits::default());
    c.feed(CLIENT).unwrap();
    let events: Vec<Event> = std::iter::from_fn(|| c.poll_event()).collect();
    let requests: Vec<_> = events
        .iter()
        .filter_map(|e| match e {
            Event::Request(r) => Some(r),
            _ => None,
        })
        .collect();
    let summary: Vec<_> = requests
        .iter()
        .map(|r| (r.stream.0, r.method(), r.path().unwrap(), r.end_stream))
        .collect();
    assert_eq!(
        summary,
        [
            (1, "GET", "/index.html", true),
            (3, "HEAD", "/a%20b?q=1", true),
            (5, "POST", "/upload", false),
            (7, "GET", "/big", true)
        ]
    );
    for r in &requests {
        assert_eq!(r.authority(), Some("example.com"));
        assert_eq!(r.scheme(), Some("https"));
        assert_eq!(r.header("user-agent"), Some(&b"python-h2/4.4.1"[..]));
        let cookies: Vec<&[u8]> = r
            .headers()
            .filter(|(n, _)| *n == "cookie")
            .map(|(_, v)| v)
            .collect();
        assert_eq!(cookies, [&b"a=1"[..], b"b=2"]);
    }
    let body: Vec<u8> = events
        .iter()
        .filter_map(|e| match e {
            Event::Data {
                stream: StreamId(5),
                data,
                ..
            } => Some(data.clone()),
            _ => None,
        })
        .flatten()
        .collect();
    assert_eq!(body, b"hello world");
    assert!(events.contains(&Event::Reset {
        stream: StreamId(7),
        code: ErrorCode::NoError,
        remote: true
    }));
    let out = c.take_output();
    let ping_ack = [0, 0, 8, frame::kind::PING, frame::flag::ACK, 0, 0, 0, 0];
    assert!(
        out.windows(17)
            .any(|w| w[..9] == ping_ack && &w[9..] == b"pingpong")
    );
}

#[test]
fn python_h2_server_output_reads_with_the_client_pieces() {
    let mut reader = Reader::new();
    let seen = reader.read(SERVER);
    let head = |s: u32, len: &str| Seen::Headers {
        stream: s,
        fields: [
            (":status", "200"),
            ("content-type", "text/plain; charset=utf-8"),
            ("server", "python-h2"),
            ("content-length", len),
        ]
        .iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect(),
        end_stream: false,
    };
    let rest: Vec<_> = seen
        .iter()
        .filter(|s| {
            matches!(
                s,
                Seen::Headers { .. } | Seen::Data { .. } | Seen::GoAway { .. }
            )
        })
        .cloned()
        .collect();
    assert_eq!(
        rest,
        [
            head(1, "10"),
            Seen::Data {
                stream: 1,
                len: 10,
                end_stream: true
            },
            head(3, "6"),
            Seen::Data {
                stream: 3,
                len: 6,
                end_stream: true
            },
            Seen::GoAway {
                last: 3,
                code: ErrorCode::NoError
            },
        ]
    );
    // The second response reused the first one's fields from the dynamic table.
    assert!(reader.table_size() > 0);
}

/// Our server's answer to `client.bin`: GET gets 200 with a body, HEAD 200 without one, POST
/// 201 after its body. Compared with `fixtures/server_reply.bin`, which
/// `fixtures/python_h2.py` feeds back to the Python client that sent `client.bin`: h2 must
/// accept every frame and see the three responses (the script asserts it). Regenerate the
/// file with `H2_BLESS=1 cargo test -p servelab-h2 --test h2 golden`.
#[test]
fn our_answer_to_python_h2_client_matches_the_golden_file() {
    let mut c = ServerConn::new(Limits::default());
    c.feed(CLIENT).unwrap();
    while let Some(e) = c.poll_event() {
        match e {
            Event::Request(r) if r.method() == "GET" => {
                let _ = c.send_headers(
                    r.stream,
                    200,
                    &[("content-type", b"text/plain"), ("content-length", b"5")],
                    false,
                );
                let _ = c.send_data(r.stream, b"hello", true);
            }
            Event::Request(r) if r.method() == "HEAD" => {
                c.send_headers(r.stream, 200, &[("content-length", b"5")], true)
                    .unwrap();
            }
            Event::Data {
                stream,
                end_stream: true,
                ..
            } => {
                c.send_headers(stream, 201, &[("content-length", b"0")], true)
                    .unwrap();
            }
            _ => {}
        }
    }
    c.shutdown();
    let out = c.take_output();
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/server_reply.bin"
    );
    if std::env::var_os("H2_BLESS").is_some() {
        std::fs::write(path, &out).unwrap();
    }
    let golden = std::fs::read(path).expect("server_reply.bin (H2_BLESS=1 writes it)");
    assert_eq!(
        out, golden,
        "our output changed: check it with python_h2.py, then bless"
    );
}
