//! HTTP/2 clients for the server tests, over a real socket with prior
//! knowledge (the server runs with `--h2c`): [`Client`], `servelab-h2`'s
//! `ClientConn` for well-behaved requests, and [`Raw`], frames built by hand
//! with the crate's encoder for a hostile client.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::Path;
use std::time::Duration;

use servelab_h2::frame::{
    self, Frame, Parse, SettingsPayload, decode_frame, encode_frame, encode_header_block,
};
use servelab_h2::hpack::{Decoder, Encoder};
use servelab_h2::{ClientConn, ErrorCode, Event, Limits, RequestHead, StreamId};
use servelab_server::{Config, Engine, Running};

use crate::support::{fixture, start};

/// The engines that carry HTTP/2.
pub fn h2_engines() -> impl Iterator<Item = Engine> {
    Engine::here().filter(|e| e.carries_http2())
}

/// Starts a server with `--h2c` (after `tune`) on a fresh fixture for each
/// engine that carries HTTP/2, and runs `scenario` against it.
pub fn each_h2_engine(tune: impl Fn(&mut Config), scenario: impl Fn(Engine, &Running, &Path)) {
    for engine in h2_engines() {
        let dir = fixture();
        let server = start(dir.path(), engine, |c| {
            c.h2c = true;
            tune(c);
        });
        scenario(engine, &server, dir.path());
        server.shutdown().unwrap();
    }
}

/// A response as the client saw it.
#[derive(Debug, Clone, Default)]
pub struct Reply {
    pub status: u16,
    pub headers: Vec<(String, Vec<u8>)>,
    pub body: Vec<u8>,
    /// The stream was reset (by the server, or refused by its GOAWAY).
    pub reset: Option<ErrorCode>,
    done: bool,
}

impl Reply {
    /// A field's value, as text.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| std::str::from_utf8(v).unwrap())
    }
}

/// A well-behaved HTTP/2 client on one connection.
pub struct Client {
    pub sock: TcpStream,
    pub conn: ClientConn,
    replies: Vec<(StreamId, Reply)>,
    /// The server's GOAWAY, if one came.
    pub goaway: Option<(StreamId, ErrorCode)>,
    /// The server closed the connection.
    pub closed: bool,
}

impl Client {
    /// Connects and sends the preface and SETTINGS.
    pub fn connect(addr: SocketAddr) -> Client {
        let sock = TcpStream::connect(addr).unwrap();
        sock.set_read_timeout(Some(Duration::from_secs(10)))
            .unwrap();
        Client {
            sock,
            conn: ClientConn::new(Limits::default()),
            replies: Vec::new(),
            goaway: None,
            closed: false,
        }
    }

    /// Opens a stream with `method` on `path` and `fields`.
    pub fn send(&mut self, method: &str, path: &str, fields: &[(&str, &[u8])]) -> StreamId {
        let head = RequestHead {
            method,
            scheme: "http",
            authority: "localhost",
            path,
        };
        let id = self.conn.send_request(head, fields, true).unwrap();
        self.replies.push((id, Reply::default()));
        id
    }

    /// A GET of `path`, to its end.
    pub fn get(&mut self, path: &str, fields: &[(&str, &[u8])]) -> Reply {
        self.request("GET", path, fields)
    }

    /// One request, to its end.
    pub fn request(&mut self, method: &str, path: &str, fields: &[(&str, &[u8])]) -> Reply {
        let id = self.send(method, path, fields);
        self.wait(&[id]).remove(0)
    }

    /// Moves bytes until every stream of `ids` has ended (or the connection).
    pub fn wait(&mut self, ids: &[StreamId]) -> Vec<Reply> {
        while !self.closed && !ids.iter().all(|id| self.reply(*id).done) {
            self.step();
        }
        ids.iter().map(|id| self.reply(*id).clone()).collect()
    }

    /// Reads until the server closes the connection.
    pub fn wait_for_close(&mut self) {
        while !self.closed {
            self.step();
        }
    }

    fn reply(&mut self, id: StreamId) -> &mut Reply {
        &mut self
            .replies
            .iter_mut()
            .find(|(s, _)| *s == id)
            .expect("a stream this client opened")
            .1
    }

    /// Writes what is pending, reads once, handles the events.
    fn step(&mut self) {
        let out = self.conn.take_output();
        if !out.is_empty() && self.sock.write_all(&out).is_err() {
            self.closed = true;
            return;
        }
        let mut buf = [0; 16 * 1024];
        let n = match self.sock.read(&mut buf) {
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => 0,
            Err(e) => panic!("reading: {e}"),
        };
        if n == 0 {
            self.closed = true;
            return;
        }
        let _ = self.conn.feed(&buf[..n]);
        while let Some(event) = self.conn.poll_event() {
            match event {
                Event::Response(r) => {
                    let reply = self.reply(r.stream);
                    reply.status = r.status;
                    reply.headers = r.headers;
                    reply.done = r.end_stream;
                }
                Event::Data {
                    stream,
                    data,
                    end_stream,
                } => {
                    let reply = self.reply(stream);
                    reply.body.extend_from_slice(&data);
                    reply.done |= end_stream;
                }
                Event::Reset { stream, code, .. } => {
                    let reply = self.reply(stream);
                    reply.reset = Some(code);
                    reply.done = true;
                }
                Event::GoAway { last_stream, code } => self.goaway = Some((last_stream, code)),
                Event::Request(_) | Event::WindowOpened { .. } => {}
            }
        }
    }
}

/// A frame the server sent, as a hostile client's test looks at it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Seen {
    /// HEADERS with its `:status`.
    Headers {
        stream: u32,
        status: u16,
    },
    Data {
        stream: u32,
        len: usize,
    },
    Rst {
        stream: u32,
        code: ErrorCode,
    },
    GoAway {
        last: u32,
        code: ErrorCode,
    },
    /// SETTINGS, PING, WINDOW_UPDATE: not looked at.
    Other,
}

/// A client that writes frames of its own making.
pub struct Raw {
    pub sock: TcpStream,
    pub enc: Encoder,
    dec: Decoder,
    inbuf: Vec<u8>,
    /// A header block split over CONTINUATIONs.
    block: Vec<u8>,
}

impl Raw {
    /// Connects and sends the preface, SETTINGS with `settings`, and the ACK
    /// of the server's SETTINGS (sent ahead: the server's come first anyway).
    pub fn connect(addr: SocketAddr, settings: &[(u16, u32)]) -> Raw {
        let mut raw = Raw::connect_bare(addr);
        let mut hello = frame::PREFACE.to_vec();
        hello.extend(settings_frame(settings));
        hello.extend(frame_bytes(&Frame::Settings {
            ack: true,
            params: SettingsPayload::new(&[]),
        }));
        raw.write(&hello);
        raw
    }

    /// Connects and sends nothing.
    pub fn connect_bare(addr: SocketAddr) -> Raw {
        let sock = TcpStream::connect(addr).unwrap();
        sock.set_read_timeout(Some(Duration::from_secs(10)))
            .unwrap();
        Raw {
            sock,
            enc: Encoder::new(),
            dec: Decoder::new(4096, 1 << 20),
            inbuf: Vec::new(),
            block: Vec::new(),
        }
    }

    /// Writes `bytes`; a server that already closed is fine (its answer is
    /// read next).
    pub fn write(&mut self, bytes: &[u8]) {
        let _ = self.sock.write_all(bytes);
    }

    /// A request's header block (GET `path`), encoded by this client.
    pub fn request_block(&mut self, path: &str) -> Vec<u8> {
        let mut block = Vec::new();
        self.enc.encode(
            [
                (&b":method"[..], &b"GET"[..]),
                (b":scheme", b"http"),
                (b":authority", b"localhost"),
                (b":path", path.as_bytes()),
            ],
            &mut block,
        );
        block
    }

    /// HEADERS (one frame) with a GET of `path` on `stream`.
    pub fn get(&mut self, stream: u32, path: &str, end_stream: bool) -> Vec<u8> {
        let block = self.request_block(path);
        let mut out = Vec::new();
        encode_header_block(&mut out, StreamId(stream), &block, end_stream, 16_384);
        out
    }

    /// Reads frames until `stop` says so or the server closes; returns them.
    pub fn read_until(&mut self, stop: impl Fn(&Seen) -> bool) -> Vec<Seen> {
        let mut seen = Vec::new();
        loop {
            let mut inbuf = std::mem::take(&mut self.inbuf);
            while let Ok(Parse::Complete((f, n))) = decode_frame(&inbuf, frame::MAX_MAX_FRAME_SIZE)
            {
                let s = self.own(f);
                inbuf.drain(..n);
                if let Some(s) = s {
                    let end = stop(&s);
                    seen.push(s);
                    if end {
                        self.inbuf = inbuf;
                        return seen;
                    }
                }
            }
            self.inbuf = inbuf;
            let mut buf = [0; 16 * 1024];
            match self.sock.read(&mut buf) {
                Ok(0) => return seen,
                Ok(n) => self.inbuf.extend_from_slice(&buf[..n]),
                Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => return seen,
                Err(e) => panic!("reading: {e}; seen so far {seen:?}"),
            }
        }
    }

    /// Reads to the server's GOAWAY (or its close); returns the GOAWAY's code.
    pub fn goaway(&mut self) -> Option<ErrorCode> {
        let seen = self.read_until(|s| matches!(s, Seen::GoAway { .. }));
        seen.iter().find_map(|s| match s {
            Seen::GoAway { code, .. } => Some(*code),
            _ => None,
        })
    }

    fn own(&mut self, f: Frame<'_>) -> Option<Seen> {
        Some(match f {
            Frame::Headers {
                stream,
                block,
                end_headers,
                ..
            } => {
                self.block = block.to_vec();
                if !end_headers {
                    return None;
                }
                self.headers(stream.0)
            }
            Frame::Continuation {
                stream,
                block,
                end_headers,
            } => {
                self.block.extend_from_slice(block);
                if !end_headers {
                    return None;
                }
                self.headers(stream.0)
            }
            Frame::Data { stream, data, .. } => Seen::Data {
                stream: stream.0,
                len: data.len(),
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
            _ => Seen::Other,
        })
    }

    fn headers(&mut self, stream: u32) -> Seen {
        let mut status = 0;
        let block = std::mem::take(&mut self.block);
        self.dec
            .decode(&block, |n, v| {
                if n == b":status" {
                    status = std::str::from_utf8(v).unwrap().parse().unwrap();
                }
            })
            .expect("the server's HPACK");
        Seen::Headers { stream, status }
    }
}

/// A frame's bytes.
pub fn frame_bytes(f: &Frame<'_>) -> Vec<u8> {
    let mut out = Vec::new();
    encode_frame(&mut out, f);
    out
}

/// A SETTINGS frame with `params`.
pub fn settings_frame(params: &[(u16, u32)]) -> Vec<u8> {
    let mut payload = Vec::new();
    for (id, v) in params {
        payload.extend(id.to_be_bytes());
        payload.extend(v.to_be_bytes());
    }
    frame_bytes(&Frame::Settings {
        ack: false,
        params: SettingsPayload::new(&payload),
    })
}
