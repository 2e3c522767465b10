//! A tiny HTTP/2 server for the `--h2` tests: `servelab_h2::ServerConn` over a
//! real loopback socket, a thread per connection, behaving in one precise way
//! (a concurrency limit, resets, GOAWAY) and counting what it saw.

use std::collections::HashMap;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use servelab_h2::{ErrorCode, Event, Limits, ServerConn, State, StreamId};

use crate::support::Acceptor;

/// How the server answers.
#[derive(Debug, Clone, Copy)]
pub struct H2Behavior {
    /// Response body length (`content-length` is sent).
    pub body: usize,
    /// SETTINGS_MAX_CONCURRENT_STREAMS.
    pub max_streams: u32,
    /// The n-th, 2n-th... request (server-wide, 1-based) is reset with
    /// RST_STREAM INTERNAL_ERROR instead of answered.
    pub reset_every: Option<u64>,
    /// Each connection sends a graceful GOAWAY after answering this many
    /// requests, then closes once its streams are done.
    pub goaway_after: Option<u64>,
    /// The n-th, 2n-th... request (server-wide, 1-based) is never answered.
    pub stall_every: Option<u64>,
}

impl H2Behavior {
    pub fn ok(body: usize) -> H2Behavior {
        H2Behavior {
            body,
            max_streams: 100,
            reset_every: None,
            goaway_after: None,
            stall_every: None,
        }
    }
}

#[derive(Debug, Default)]
pub struct H2Seen {
    pub accepted: AtomicU64,
    pub requests: AtomicU64,
    pub answered: AtomicU64,
    pub resets: AtomicU64,
    /// Request body octets received.
    pub body_bytes: AtomicU64,
    /// The most streams open at once on one connection.
    pub most_open: AtomicU64,
    /// Requests the server refused for its concurrency limit.
    pub refused: AtomicU64,
    /// Responses whose body the client's flow-control windows cut short when
    /// first sent (the rest waited for a WINDOW_UPDATE).
    pub held_by_window: AtomicU64,
    /// Requests that carried an `authorization` field, and its last value.
    pub authorized: AtomicU64,
    pub authorization: std::sync::Mutex<Vec<u8>>,
}

pub struct H2Server {
    pub addr: SocketAddr,
    pub seen: Arc<H2Seen>,
    _acceptor: Acceptor,
}

impl H2Server {
    pub fn start(b: H2Behavior) -> H2Server {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let seen = Arc::new(H2Seen::default());
        let s = Arc::clone(&seen);
        let acceptor = Acceptor::start(listener, move |conn: TcpStream| {
            let _ = conn.set_nodelay(true);
            serve(conn, b, &s)
        });
        H2Server {
            addr,
            seen,
            _acceptor: acceptor,
        }
    }

    /// The same server over TLS, ALPN `h2` (`config` offers it).
    pub fn start_tls(b: H2Behavior, config: Arc<rustls::ServerConfig>) -> H2Server {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let seen = Arc::new(H2Seen::default());
        let s = Arc::clone(&seen);
        let acceptor = Acceptor::start(listener, move |tcp: TcpStream| {
            let _ = tcp.set_nodelay(true);
            let Ok(conn) = rustls::ServerConnection::new(Arc::clone(&config)) else {
                return;
            };
            serve(rustls::StreamOwned::new(conn, tcp), b, &s);
        });
        H2Server {
            addr,
            seen,
            _acceptor: acceptor,
        }
    }

    pub fn url(&self) -> String {
        format!("http://{}/f", self.addr)
    }
}

fn write_out<S: Write>(conn: &mut ServerConn, sock: &mut S) -> bool {
    let out = conn.take_output();
    out.is_empty() || sock.write_all(&out).and_then(|()| sock.flush()).is_ok()
}

fn serve<S: Read + Write>(mut sock: S, b: H2Behavior, seen: &H2Seen) {
    seen.accepted.fetch_add(1, Ordering::SeqCst);
    let limits = Limits {
        max_concurrent_streams: b.max_streams,
        ..Limits::default()
    };
    let mut conn = ServerConn::new(limits);
    let body = vec![b'x'; b.body];
    let length = b.body.to_string();
    // Responses still being sent (flow control): stream -> octets sent.
    let mut sending: HashMap<u32, usize> = HashMap::new();
    let mut open: HashMap<u32, ()> = HashMap::new();
    let mut answered_here = 0u64;
    let mut buf = vec![0u8; 64 * 1024];
    if !write_out(&mut conn, &mut sock) {
        return;
    }
    loop {
        let n = match sock.read(&mut buf) {
            Ok(0) | Err(_) => return,
            Ok(n) => n,
        };
        let failed = conn.feed(&buf[..n]).is_err();
        let mut ended: Vec<StreamId> = Vec::new();
        while let Some(ev) = conn.poll_event() {
            match ev {
                Event::Request(req) => {
                    open.insert(req.stream.0, ());
                    if let Some(a) = req.header("authorization") {
                        seen.authorized.fetch_add(1, Ordering::SeqCst);
                        *seen.authorization.lock().unwrap() = a.to_vec();
                    }
                    seen.most_open
                        .fetch_max(open.len() as u64, Ordering::SeqCst);
                    if req.end_stream {
                        ended.push(req.stream);
                    }
                }
                Event::Data {
                    stream,
                    data,
                    end_stream,
                } => {
                    seen.body_bytes
                        .fetch_add(data.len() as u64, Ordering::SeqCst);
                    if end_stream {
                        ended.push(stream);
                    }
                }
                Event::Reset {
                    stream,
                    code,
                    remote,
                } => {
                    if !remote && code == ErrorCode::RefusedStream {
                        seen.refused.fetch_add(1, Ordering::SeqCst);
                    }
                    open.remove(&stream.0);
                    sending.remove(&stream.0);
                }
                Event::WindowOpened { stream } => {
                    if let Some(&at) = sending.get(&stream.0) {
                        let taken = conn.send_data(stream, &body[at..], true).unwrap_or(0);
                        if at + taken == body.len() {
                            sending.remove(&stream.0);
                            open.remove(&stream.0);
                        } else {
                            sending.insert(stream.0, at + taken);
                        }
                    }
                }
                _ => {}
            }
        }
        for stream in ended {
            let nth = seen.requests.fetch_add(1, Ordering::SeqCst) + 1;
            if b.reset_every.is_some_and(|k| nth % k == 0) {
                seen.resets.fetch_add(1, Ordering::SeqCst);
                conn.reset(stream, ErrorCode::InternalError);
                open.remove(&stream.0);
                continue;
            }
            if b.stall_every.is_some_and(|k| nth % k == 0) {
                continue;
            }
            let fields: [(&str, &[u8]); 1] = [("content-length", length.as_bytes())];
            if conn
                .send_headers(stream, 200, &fields, body.is_empty())
                .is_err()
            {
                continue;
            }
            seen.answered.fetch_add(1, Ordering::SeqCst);
            answered_here += 1;
            if body.is_empty() {
                open.remove(&stream.0);
            } else {
                let taken = conn.send_data(stream, &body, true).unwrap_or(0);
                if taken == body.len() {
                    open.remove(&stream.0);
                } else {
                    seen.held_by_window.fetch_add(1, Ordering::SeqCst);
                    sending.insert(stream.0, taken);
                }
            }
            if b.goaway_after.is_some_and(|g| answered_here == g) {
                conn.shutdown();
            }
        }
        if !write_out(&mut conn, &mut sock) || failed || conn.state() == State::Closed {
            return;
        }
    }
}
