//! Shared test machinery: a fixture tree, a server per engine, a raw client and
//! a strict response parser.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::Path;
use std::time::Duration;

use servelab_server::{Config, Engine, Running, Server};

/// Bytes of the 1 MiB fixture: a repeating, position-dependent pattern so a
/// misplaced range shows.
pub fn big_bytes() -> Vec<u8> {
    (0..1024 * 1024u32).map(|i| (i % 251) as u8).collect()
}

/// The fixture tree every test serves.
pub fn fixture() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path();
    std::fs::write(p.join("index.html"), "<!doctype html><title>root</title>").unwrap();
    std::fs::write(p.join("1k.txt"), "a".repeat(1024)).unwrap();
    std::fs::write(p.join("hello.txt"), "hello, world\n").unwrap();
    std::fs::write(p.join("big.bin"), big_bytes()).unwrap();
    std::fs::write(p.join("style.css"), "body{}").unwrap();
    std::fs::create_dir(p.join("sub")).unwrap();
    std::fs::write(p.join("sub/index.html"), "<p>sub</p>").unwrap();
    std::fs::create_dir(p.join("noindex")).unwrap();
    std::fs::write(p.join("noindex/x.txt"), "x").unwrap();
    std::fs::write(p.join("with space.txt"), "space").unwrap();
    dir
}

/// A secret outside the root, and a symlink to it inside; returns the secret's text.
pub fn plant_escape(root: &Path, outside: &Path) -> &'static str {
    let secret = "TOP-SECRET-CONTENT";
    std::fs::write(outside.join("secret.txt"), secret).unwrap();
    std::os::unix::fs::symlink(outside.join("secret.txt"), root.join("link.txt")).unwrap();
    std::os::unix::fs::symlink(outside, root.join("linkdir")).unwrap();
    secret
}

/// Starts a server on `root` with `engine`, after `tune` adjusts the config.
pub fn start(root: &Path, engine: Engine, tune: impl FnOnce(&mut Config)) -> Running {
    let mut config = Config::new(root);
    config.engine = engine;
    config.workers = 2;
    tune(&mut config);
    Server::bind(config).unwrap().spawn()
}

/// Runs `scenario` against a fresh server for every engine.
pub fn each_engine(scenario: impl Fn(Engine, SocketAddr, &Path)) {
    for engine in Engine::here() {
        let dir = fixture();
        let server = start(dir.path(), engine, |_| {});
        scenario(engine, server.local_addr(), dir.path());
        server.shutdown().unwrap();
    }
}

/// Connects with a read timeout so a wrong server fails the test instead of hanging it.
pub fn connect(addr: SocketAddr) -> TcpStream {
    let s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    s
}

/// Sends `req` and reads until the server closes.
pub fn exchange(addr: SocketAddr, req: &[u8]) -> Vec<u8> {
    let mut s = connect(addr);
    s.write_all(req).unwrap();
    let mut out = Vec::new();
    let _ = s.read_to_end(&mut out);
    out
}

/// A parsed response.
#[derive(Debug, Clone)]
pub struct Resp {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Resp {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// Parses one response from the front of `buf` (whose request method was
/// `head_request` or not); returns it and the bytes it used. Panics when the
/// framing is wrong, which is what the tests want.
pub fn parse_one(buf: &[u8], head_request: bool) -> (Resp, usize) {
    let mut headers = [httparse::EMPTY_HEADER; 64];
    let mut r = httparse::Response::new(&mut headers);
    let n = match r.parse(buf).expect("well-formed response head") {
        httparse::Status::Complete(n) => n,
        httparse::Status::Partial => panic!(
            "incomplete response head: {:?}",
            String::from_utf8_lossy(buf)
        ),
    };
    assert_eq!(r.version, Some(1), "HTTP/1.1 status line");
    let status = r.code.unwrap();
    let headers: Vec<(String, String)> = r
        .headers
        .iter()
        .map(|h| {
            (
                h.name.to_owned(),
                String::from_utf8(h.value.to_vec()).unwrap(),
            )
        })
        .collect();
    let mut resp = Resp {
        status,
        headers,
        body: Vec::new(),
    };
    assert!(resp.header("date").is_some(), "Date on every response");
    assert_eq!(resp.header("server"), Some("servelab"));
    let no_body = head_request || status == 304 || status / 100 == 1 || status == 204;
    let len: usize = match resp.header("content-length") {
        Some(v) => v.parse().unwrap(),
        None => {
            assert!(no_body, "Content-Length missing on {status}");
            0
        }
    };
    let body_len = if no_body { 0 } else { len };
    assert!(
        buf.len() >= n + body_len,
        "body shorter than Content-Length"
    );
    resp.body = buf[n..n + body_len].to_vec();
    (resp, n + body_len)
}

/// Sends one request on a fresh connection and parses the single response.
pub fn get(addr: SocketAddr, req: &str) -> Resp {
    let raw = exchange(addr, req.as_bytes());
    let head = req.starts_with("HEAD ");
    let (resp, used) = parse_one(&raw, head);
    assert_eq!(used, raw.len(), "extra bytes after the response");
    resp
}

/// A plain `GET path` that closes the connection.
pub fn simple(addr: SocketAddr, path: &str) -> Resp {
    get(
        addr,
        &format!("GET {path} HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n"),
    )
}
