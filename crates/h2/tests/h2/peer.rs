//! A scripted HTTP/2 client: builds frames with the crate's own encoder and HPACK encoder,
//! and reads the server's output back into owned, comparable frames.

use servelab_h2::frame::{self, Frame, Parse, SettingsPayload, decode_frame, encode_frame};
use servelab_h2::hpack::{Decoder, Encoder};
use servelab_h2::{ErrorCode, Event, H2Error, Limits, ServerConn, StreamId};

/// A frame the server sent, owned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Seen {
    Settings {
        ack: bool,
        params: Vec<(u16, u32)>,
    },
    Headers {
        stream: u32,
        fields: Vec<(String, String)>,
        end_stream: bool,
    },
    Data {
        stream: u32,
        len: usize,
        end_stream: bool,
    },
    Rst {
        stream: u32,
        code: ErrorCode,
    },
    GoAway {
        last: u32,
        code: ErrorCode,
    },
    Ping {
        ack: bool,
        data: [u8; 8],
    },
    WindowUpdate {
        stream: u32,
        increment: u32,
    },
}

/// Reads a server's output into [`Seen`] frames, joining header blocks and decoding them
/// with its own HPACK decoder, as a client does.
pub struct Reader {
    dec: Decoder,
    /// A header block split over HEADERS + CONTINUATION frames.
    pending: Option<(u32, Vec<u8>, bool)>,
}

impl Reader {
    pub fn new() -> Reader {
        Reader {
            dec: Decoder::new(4096, 1 << 20),
            pending: None,
        }
    }

    /// The frames in `out`, which must hold whole frames.
    pub fn read(&mut self, out: &[u8]) -> Vec<Seen> {
        let mut seen = Vec::new();
        let mut at = 0;
        while at < out.len() {
            let Ok(Parse::Complete((f, n))) = decode_frame(&out[at..], frame::MAX_MAX_FRAME_SIZE)
            else {
                panic!("bad frame at {at}: {:02x?}", &out[at..]);
            };
            at += n;
            if let Some(s) = self.own(f) {
                seen.push(s);
            }
        }
        seen
    }

    /// The HPACK table the writer filled.
    pub fn table_size(&self) -> usize {
        self.dec.table_size()
    }

    fn own(&mut self, f: Frame<'_>) -> Option<Seen> {
        Some(match f {
            Frame::Settings { ack, params } => Seen::Settings {
                ack,
                params: params.iter().collect(),
            },
            Frame::Headers {
                stream,
                block,
                end_stream,
                end_headers,
                ..
            } => {
                self.pending = Some((stream.0, block.to_vec(), end_stream));
                if !end_headers {
                    return None;
                }
                return Some(self.finish_block());
            }
            Frame::Continuation {
                block, end_headers, ..
            } => {
                self.pending
                    .as_mut()
                    .expect("CONTINUATION after HEADERS")
                    .1
                    .extend(block);
                if !end_headers {
                    return None;
                }
                return Some(self.finish_block());
            }
            Frame::Data {
                stream,
                data,
                end_stream,
                ..
            } => Seen::Data {
                stream: stream.0,
                len: data.len(),
                end_stream,
            },
            Frame::RstStream { stream, code } => Seen::Rst {
                stream: stream.0,
                code,
            },
            Frame::GoAway {
                last_stream, code, ..
            } => Seen::GoAway {
                last: last_stream.0,
                code,
            },
            Frame::Ping { ack, data } => Seen::Ping { ack, data },
            Frame::WindowUpdate { stream, increment } => Seen::WindowUpdate {
                stream: stream.0,
                increment,
            },
            other => panic!("unexpected {other:?}"),
        })
    }

    fn finish_block(&mut self) -> Seen {
        let (stream, block, end_stream) = self.pending.take().unwrap();
        let mut fields = Vec::new();
        self.dec
            .decode(&block, |n, v| {
                fields.push((
                    String::from_utf8(n.to_vec()).unwrap(),
                    String::from_utf8(v.to_vec()).unwrap(),
                ))
            })
            .expect("writer's HPACK");
        Seen::Headers {
            stream,
            fields,
            end_stream,
        }
    }
}

pub struct Peer {
    pub conn: ServerConn,
    pub enc: Encoder,
    reader: Reader,
}

pub const GET: [(&str, &str); 3] = [(":method", "GET"), (":scheme", "https"), (":path", "/")];

impl Peer {
    /// A connection after the client's preface and an empty SETTINGS, with the server's
    /// handshake output read and dropped.
    pub fn new(limits: Limits) -> Peer {
        Peer::with_settings(limits, &[])
    }

    pub fn with_settings(limits: Limits, settings: &[(u16, u32)]) -> Peer {
        let mut p = Peer {
            conn: ServerConn::new(limits),
            enc: Encoder::new(),
            reader: Reader::new(),
        };
        let mut hello = frame::PREFACE.to_vec();
        hello.extend(settings_frame(settings));
        hello.extend(settings_ack());
        p.conn.feed(&hello).expect("handshake");
        let seen = p.read();
        assert!(
            matches!(seen[0], Seen::Settings { ack: false, .. }),
            "{seen:?}"
        );
        assert!(seen.contains(&Seen::Settings {
            ack: true,
            params: vec![]
        }));
        assert!(!p.conn.settings_ack_pending());
        p
    }

    pub fn send(&mut self, bytes: &[u8]) -> Result<(), H2Error> {
        self.conn.feed(bytes)
    }

    /// Everything the server has written since the last read.
    pub fn read(&mut self) -> Vec<Seen> {
        let out = self.conn.take_output();
        self.reader.read(&out)
    }

    /// Feeds a HEADERS frame that opens a header block on `stream` and does not end it
    /// (END_STREAM set): the start of every CONTINUATION attack.
    pub fn open_block(&mut self, stream: u32, block: &[u8]) -> Result<(), H2Error> {
        let h = encode(Frame::Headers {
            stream: StreamId(stream),
            block,
            end_stream: true,
            end_headers: false,
            priority: None,
        });
        self.send(&h)
    }

    pub fn events(&mut self) -> Vec<Event> {
        std::iter::from_fn(|| self.conn.poll_event()).collect()
    }

    /// A HEADERS frame (END_HEADERS) with these fields.
    pub fn headers(&mut self, stream: u32, fields: &[(&str, &str)], end_stream: bool) -> Vec<u8> {
        let block = self.block(fields);
        let mut out = Vec::new();
        frame::encode_header_block(&mut out, StreamId(stream), &block, end_stream, 1 << 14);
        out
    }

    pub fn block(&mut self, fields: &[(&str, &str)]) -> Vec<u8> {
        let mut block = Vec::new();
        self.enc.encode(
            fields.iter().map(|(n, v)| (n.as_bytes(), v.as_bytes())),
            &mut block,
        );
        block
    }

    /// `GET /` on `stream`, ended.
    pub fn get(&mut self, stream: u32) -> Vec<u8> {
        self.headers(stream, &GET, true)
    }
}

pub fn encode(f: Frame<'_>) -> Vec<u8> {
    let mut out = Vec::new();
    encode_frame(&mut out, &f);
    out
}

/// A frame from raw parts, for what the encoder would never build.
pub fn raw(kind: u8, flags: u8, stream: u32, payload: &[u8]) -> Vec<u8> {
    let mut v = (payload.len() as u32).to_be_bytes()[1..].to_vec();
    v.extend([kind, flags]);
    v.extend(stream.to_be_bytes());
    v.extend(payload);
    v
}

pub fn settings_frame(params: &[(u16, u32)]) -> Vec<u8> {
    let mut p = Vec::new();
    for (k, v) in params {
        p.extend(k.to_be_bytes());
        p.extend(v.to_be_bytes());
    }
    encode(Frame::Settings {
        ack: false,
        params: SettingsPayload::new(&p),
    })
}

pub fn settings_ack() -> Vec<u8> {
    raw(frame::kind::SETTINGS, frame::flag::ACK, 0, &[])
}

pub fn data(stream: u32, bytes: &[u8], end_stream: bool) -> Vec<u8> {
    encode(Frame::Data {
        stream: StreamId(stream),
        data: bytes,
        end_stream,
        flow_len: 0,
    })
}

pub fn rst(stream: u32, code: ErrorCode) -> Vec<u8> {
    encode(Frame::RstStream {
        stream: StreamId(stream),
        code,
    })
}

pub fn ping(data: [u8; 8]) -> Vec<u8> {
    encode(Frame::Ping { ack: false, data })
}

pub fn window_update(stream: u32, increment: u32) -> Vec<u8> {
    raw(
        frame::kind::WINDOW_UPDATE,
        0,
        stream,
        &increment.to_be_bytes(),
    )
}

/// The connection ended with GOAWAY `code`, written last.
pub fn assert_goaway(seen: &[Seen], code: ErrorCode) {
    match seen.last() {
        Some(Seen::GoAway { code: c, .. }) => assert_eq!(*c, code, "{seen:?}"),
        _ => panic!("no GOAWAY {code:?} at the end of {seen:?}"),
    }
}

pub fn conn_error(r: Result<(), H2Error>) -> ErrorCode {
    match r {
        Err(H2Error::Connection { code, .. }) => code,
        other => panic!("expected a connection error, got {other:?}"),
    }
}

pub fn request_streams(events: &[Event]) -> Vec<u32> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::Request(r) => Some(r.stream.0),
            _ => None,
        })
        .collect()
}
