//! The probes' own HTTP/1.1 client: one request at a time on a blocking
//! socket, the answer read to its end (Content-Length, chunked, or the close),
//! and whether the server keeps the connection.
//!
//! Why not the load generator: the probes must hold idle connections open,
//! watch a fresh one wait with a deadline of their own, and see the moment a
//! server closes an idle one. `servelab-load` runs workloads, not single
//! sockets.

use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::time::{Duration, Instant};

use servelab_lab::{LabError, Result};

/// Where the probes connect and what they ask.
#[derive(Debug, Clone)]
pub(crate) struct Target {
    addr: SocketAddr,
    request: Vec<u8>,
}

impl Target {
    /// The target of an `http://host[:port]/path` URL.
    pub(crate) fn of(url: &str, port: u16) -> Result<Target> {
        let rest = url
            .strip_prefix("http://")
            .ok_or_else(|| LabError::Other(format!("`{url}` is not an http:// URL")))?;
        let (authority, path) = match rest.find('/') {
            Some(i) => (&rest[..i], &rest[i..]),
            None => (rest, "/"),
        };
        let authority = authority.rsplit('@').next().unwrap_or(authority);
        let host = match authority.rsplit_once(':') {
            Some((h, p)) if !h.ends_with(':') && !p.contains(']') => h,
            _ => authority,
        };
        let bare = host.trim_start_matches('[').trim_end_matches(']');
        let addr = (bare, port)
            .to_socket_addrs()
            .map_err(|e| LabError::Other(format!("{url}: cannot resolve {bare}: {e}")))?
            .next()
            .ok_or_else(|| LabError::Other(format!("{url}: {bare} has no address")))?;
        let path = path.split('#').next().unwrap_or("/");
        let request = format!(
            "GET {path} HTTP/1.1\r\nHost: {authority}\r\nUser-Agent: servelab-predict-probe\r\n\r\n"
        );
        Ok(Target {
            addr,
            request: request.into_bytes(),
        })
    }

    /// A new connection (a connect only: a listen backlog accepts it even
    /// when the server has not).
    pub(crate) fn connect(&self, timeout: Duration) -> std::io::Result<Conn> {
        let s = TcpStream::connect_timeout(&self.addr, timeout)?;
        s.set_nodelay(true)?;
        Ok(Conn {
            s,
            buf: Vec::new(),
            idle_since: None,
            request: self.request.clone(),
        })
    }
}

/// What became of one request.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Answer {
    /// A 2xx/3xx answer, and the connection stays open for another request.
    Kept {
        /// From the request's send to the answer's last byte.
        latency: Duration,
    },
    /// An answer, after which the server closes the connection (`Connection:
    /// close`, HTTP/1.0 without keep-alive, or a body ended by the close).
    Closing {
        /// From the request's send to the answer's last byte.
        latency: Duration,
    },
    /// A 4xx/5xx answer (a 503 of a full server, for instance).
    Refused {
        /// Its status code.
        status: u16,
    },
    /// The connection was closed or reset before an answer.
    Gone,
    /// No answer yet by the deadline; the connection is still open.
    Waiting,
}

/// One probe connection.
#[derive(Debug)]
pub(crate) struct Conn {
    s: TcpStream,
    buf: Vec<u8>,
    /// When its last answer ended (it has been idle since).
    pub(crate) idle_since: Option<Instant>,
    request: Vec<u8>,
}

impl Conn {
    /// Sends the request (the server's window always takes a few hundred bytes).
    pub(crate) fn send(&mut self) -> std::io::Result<Instant> {
        self.s.set_nonblocking(false)?;
        self.s.set_write_timeout(Some(Duration::from_secs(5)))?;
        let sent = Instant::now();
        self.s.write_all(&self.request)?;
        Ok(sent)
    }

    /// Sends the request and waits up to `wait` for the answer.
    pub(crate) fn request(&mut self, wait: Duration) -> Answer {
        let Ok(sent) = self.send() else {
            return Answer::Gone;
        };
        self.await_answer(sent, sent + wait)
    }

    /// Reads until the answer to a request sent at `sent` is complete, the
    /// connection ends, or `deadline` passes.
    pub(crate) fn await_answer(&mut self, sent: Instant, deadline: Instant) -> Answer {
        if self.s.set_nonblocking(false).is_err() {
            return Answer::Gone;
        }
        let mut chunk = [0u8; 16 * 1024];
        loop {
            if let Some(a) = self.complete(sent, false) {
                return a;
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Answer::Waiting;
            }
            if self.s.set_read_timeout(Some(left)).is_err() {
                return Answer::Gone;
            }
            match self.s.read(&mut chunk) {
                Ok(0) => return self.complete(sent, true).unwrap_or(Answer::Gone),
                Ok(n) => self.buf.extend_from_slice(&chunk[..n]),
                Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                    return Answer::Waiting;
                }
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(_) => return Answer::Gone,
            }
        }
    }

    /// Whether the server has closed this idle connection (an end of stream
    /// or a reset waits to be read), without waiting.
    pub(crate) fn closed_by_server(&self) -> bool {
        if self.s.set_nonblocking(true).is_err() {
            return true;
        }
        let mut b = [0u8; 1];
        let closed = match self.s.peek(&mut b) {
            Ok(0) => true,
            Ok(_) => false,
            Err(e) => !matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::Interrupted),
        };
        let _ = self.s.set_nonblocking(false);
        closed
    }

    /// The answer in the buffer, if whole (`eof`: the server has closed, which
    /// ends a body of no declared length).
    fn complete(&mut self, sent: Instant, eof: bool) -> Option<Answer> {
        let head_end = self.buf.windows(4).position(|w| w == b"\r\n\r\n")? + 4;
        let head = String::from_utf8_lossy(&self.buf[..head_end]).to_ascii_lowercase();
        let mut lines = head.split("\r\n");
        let status_line = lines.next().unwrap_or("");
        let status: u16 = status_line
            .split(' ')
            .nth(1)
            .and_then(|s| s.parse().ok())
            .unwrap_or(0);
        let (mut length, mut chunked, mut close) =
            (None, false, status_line.starts_with("http/1.0"));
        for line in lines {
            let Some((name, value)) = line.split_once(':') else {
                continue;
            };
            let value = value.trim();
            match name.trim() {
                "content-length" => length = value.parse::<usize>().ok(),
                "transfer-encoding" => chunked = value.contains("chunked"),
                "connection" if value.contains("close") => close = true,
                "connection" if value.contains("keep-alive") => close = false,
                _ => {}
            }
        }
        let body = &self.buf[head_end..];
        let used = if chunked {
            let end = body.windows(5).position(|w| w == b"0\r\n\r\n")?;
            head_end + end + 5
        } else if let Some(n) = length {
            if body.len() < n {
                return None;
            }
            head_end + n
        } else if (100..200).contains(&status) || status == 204 || status == 304 {
            head_end
        } else {
            // No declared length: the body ends with the connection.
            if !eof {
                return None;
            }
            close = true;
            self.buf.len()
        };
        self.buf.drain(..used);
        let now = Instant::now();
        self.idle_since = Some(now);
        let latency = now - sent;
        Some(if !(200..400).contains(&status) {
            Answer::Refused { status }
        } else if close || eof {
            Answer::Closing { latency }
        } else {
            Answer::Kept { latency }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_url_becomes_an_address_and_a_request_for_its_path() {
        let t = Target::of("http://127.0.0.1:8080/a/b?x=1", 8080).unwrap();
        assert_eq!(t.addr, "127.0.0.1:8080".parse().unwrap());
        let req = String::from_utf8(t.request).unwrap();
        assert!(
            req.starts_with("GET /a/b?x=1 HTTP/1.1\r\nHost: 127.0.0.1:8080\r\n"),
            "{req}"
        );
        let t = Target::of("http://[::1]:9000", 9000).unwrap();
        assert_eq!(t.addr, "[::1]:9000".parse().unwrap());
        assert!(
            String::from_utf8(t.request)
                .unwrap()
                .starts_with("GET / HTTP/1.1\r\n")
        );
    }
}
