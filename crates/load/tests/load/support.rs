//! Tiny HTTP servers written for the tests: each behaves in one precise way
//! (answers, garbles, delays, stalls) and counts what it saw, so that a test can
//! compare the generator's report with the server's own view.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use servelab_load::{LoadSpec, Target, Workload};

/// A request as the tiny server saw it: its method and its body.
pub type Seen = (String, Vec<u8>);

/// How the tiny server answers each request.
#[derive(Debug, Clone, Copy)]
pub enum Behavior {
    /// `200 OK` with a body of this many bytes, keep-alive.
    Ok(usize),
    /// Bytes that are not HTTP.
    Garbled,
    /// A head promising 100 bytes, then 10 bytes and a close.
    Short,
    /// `200 OK` (4-byte body) after this delay.
    Delay(Duration),
    /// Like `Ok(16)`, but the request numbered `nth` (1-based, server-wide) is
    /// answered only after `pause`: a server that stalls once.
    StallOnce { nth: u64, pause: Duration },
    /// Like `Ok(16)` but chunked.
    Chunked,
    /// Like `Ok(16)` for the first request on a connection; the second is read
    /// and not answered: the connection is closed, as Apache's event MPM closes
    /// keep-alive connections when its workers are busy.
    CloseReused,
}

/// A server on 127.0.0.1:0 running `behavior` on a thread per connection.
pub struct TinyServer {
    pub addr: SocketAddr,
    pub accepted: Arc<AtomicU64>,
    pub requests: Arc<AtomicU64>,
    /// The request target of every request, in arrival order.
    pub paths: Arc<Mutex<Vec<String>>>,
    /// The method and body (by `Content-Length`) of every request, in arrival order.
    pub bodies: Arc<Mutex<Vec<Seen>>>,
    _acceptor: Acceptor,
}

/// A listener's accept loop on a thread of its own, a thread per connection
/// running `serve`; dropping it stops the loop (a connect wakes it) and joins it.
pub struct Acceptor {
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
    accept: Option<JoinHandle<()>>,
}

impl Acceptor {
    pub fn start(
        listener: TcpListener,
        serve: impl Fn(TcpStream) + Send + Clone + 'static,
    ) -> Acceptor {
        let addr = listener.local_addr().unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let st = stop.clone();
        let accept = std::thread::spawn(move || {
            for conn in listener.incoming() {
                if st.load(Ordering::SeqCst) {
                    break;
                }
                let Ok(conn) = conn else { continue };
                let serve = serve.clone();
                std::thread::spawn(move || serve(conn));
            }
        });
        Acceptor {
            addr,
            stop,
            accept: Some(accept),
        }
    }
}

impl Drop for Acceptor {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        let _ = TcpStream::connect(self.addr); // wake the accept loop
        if let Some(h) = self.accept.take() {
            let _ = h.join();
        }
    }
}

impl TinyServer {
    pub fn start(behavior: Behavior) -> TinyServer {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let addr = listener.local_addr().unwrap();
        let accepted = Arc::new(AtomicU64::new(0));
        let requests = Arc::new(AtomicU64::new(0));
        let paths = Arc::new(Mutex::new(Vec::new()));
        let bodies = Arc::new(Mutex::new(Vec::new()));
        let (acc, req, pa, bo) = (
            accepted.clone(),
            requests.clone(),
            paths.clone(),
            bodies.clone(),
        );
        let acceptor = Acceptor::start(listener, move |conn| {
            acc.fetch_add(1, Ordering::SeqCst);
            serve(conn, behavior, &req, &pa, &bo);
        });
        TinyServer {
            addr,
            accepted,
            requests,
            paths,
            bodies,
            _acceptor: acceptor,
        }
    }

    pub fn url(&self) -> String {
        format!("http://{}/file", self.addr)
    }
}

fn serve(
    mut conn: TcpStream,
    behavior: Behavior,
    requests: &AtomicU64,
    paths: &Mutex<Vec<String>>,
    bodies: &Mutex<Vec<Seen>>,
) {
    let _ = conn.set_nodelay(true);
    let _ = conn.set_read_timeout(Some(Duration::from_secs(20)));
    let mut buf = Vec::with_capacity(4096);
    let mut chunk = [0u8; 4096];
    let mut on_this_connection = 0u64;
    loop {
        // Read one request head.
        let end = loop {
            if let Some(p) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                break p + 4;
            }
            match conn.read(&mut chunk) {
                Ok(0) | Err(_) => return,
                Ok(n) => buf.extend_from_slice(&chunk[..n]),
            }
        };
        let head = String::from_utf8_lossy(&buf[..end]).to_ascii_lowercase();
        buf.drain(..end);
        // Read the body its Content-Length announces.
        let length: usize = head
            .lines()
            .find_map(|l| l.strip_prefix("content-length:"))
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(0);
        while buf.len() < length {
            match conn.read(&mut chunk) {
                Ok(0) | Err(_) => return,
                Ok(n) => buf.extend_from_slice(&chunk[..n]),
            }
        }
        let body: Vec<u8> = buf.drain(..length).collect();
        let method = head
            .split_whitespace()
            .next()
            .unwrap_or("")
            .to_ascii_uppercase();
        let close = head.contains("connection: close");
        {
            // Both records under the bodies lock, so that `paths[i]` and
            // `bodies[i]` are the same request even when connections race
            // (they did not always line up under load).
            let mut seen = bodies.lock().unwrap();
            seen.push((method, body));
            if let Some(path) = head.split_whitespace().nth(1) {
                paths.lock().unwrap().push(path.to_string());
            }
        }
        let n = requests.fetch_add(1, Ordering::SeqCst) + 1;
        on_this_connection += 1;
        let ok = |len: usize| {
            let mut r = format!("HTTP/1.1 200 OK\r\nContent-Length: {len}\r\n\r\n").into_bytes();
            r.resize(r.len() + len, b'x');
            r
        };
        let reply = match behavior {
            Behavior::Ok(len) => ok(len),
            Behavior::Garbled => b"SMTP ready, not HTTP at all\r\n\r\n".to_vec(),
            Behavior::Short => {
                let _ = conn.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n0123456789");
                return;
            }
            Behavior::Delay(d) => {
                std::thread::sleep(d);
                ok(4)
            }
            Behavior::StallOnce { nth, pause } => {
                if n == nth {
                    std::thread::sleep(pause);
                }
                ok(16)
            }
            Behavior::CloseReused if on_this_connection > 1 => return,
            Behavior::CloseReused => ok(16),
            Behavior::Chunked => b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n6\r\nabcdef\r\nA\r\n0123456789\r\n0\r\n\r\n".to_vec(),
        };
        if conn.write_all(&reply).is_err() {
            return;
        }
        if close || matches!(behavior, Behavior::Garbled) {
            return;
        }
    }
}

/// A closed-workload spec against `url`, limited by request count.
pub fn closed(url: &str, users: u32, session: Option<u32>, requests: u64) -> LoadSpec {
    let mut spec = LoadSpec::new(vec![Target::new(url)]);
    spec.workload = Workload::Closed {
        users,
        session,
        think: servelab_load::Dist::ZERO,
    };
    spec.requests = Some(requests);
    spec.threads = 2;
    // A generous safety net: no test may hang, whatever breaks.
    spec.duration = Some(Duration::from_secs(60));
    spec
}
