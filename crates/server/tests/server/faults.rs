//! Faults around a connection, on every engine: the connection concerned may
//! end, the server must not. A client that resets mid-response, a file that is
//! truncated or deleted while it is being sent, and an access log on a disk
//! that refuses every write (`/dev/full`). (A prefork worker killed by a signal
//! needs the real binary and process tree: see `bench/faults.sh`.)

use std::io::{ErrorKind, Read, Write};
use std::net::SocketAddr;
use std::path::Path;
use std::time::Duration;

use servelab_server::{Engine, LogMode, LogTarget};

use crate::support::*;

/// Size of the file sent while it changes: larger than what loopback socket
/// buffers hold, so the server is still sending when the test acts.
const LARGE: usize = 32 * 1024 * 1024;

fn write_large(root: &Path) {
    std::fs::write(root.join("large.bin"), vec![b'L'; LARGE]).unwrap();
}

/// Starts a GET of `/large.bin`, reads the head and a little of the body, and
/// returns the stream (the server is now blocked on a full socket buffer) and
/// the `Content-Length` it announced.
fn start_large_download(addr: SocketAddr) -> (std::net::TcpStream, usize, usize) {
    let mut s = connect(addr);
    s.write_all(b"GET /large.bin HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
        .unwrap();
    let mut buf = vec![0u8; 64 * 1024];
    let mut got = Vec::new();
    let head_end = loop {
        let n = s.read(&mut buf).unwrap();
        assert!(n > 0, "closed before the head");
        got.extend_from_slice(&buf[..n]);
        if let Some(i) = got.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
    };
    let (resp, _) = {
        let mut headers = [httparse::EMPTY_HEADER; 32];
        let mut r = httparse::Response::new(&mut headers);
        r.parse(&got[..head_end]).unwrap();
        assert_eq!(r.code, Some(200));
        let len = r
            .headers
            .iter()
            .find(|h| h.name.eq_ignore_ascii_case("content-length"))
            .map(|h| {
                std::str::from_utf8(h.value)
                    .unwrap()
                    .parse::<usize>()
                    .unwrap()
            })
            .unwrap();
        (len, ())
    };
    // Let the server fill the socket buffers.
    std::thread::sleep(Duration::from_millis(200));
    (s, resp, got.len() - head_end)
}

/// Reads to the end; returns the body bytes read and whether it ended by EOF
/// (true) or by a reset (false). A timeout fails the test: the server must
/// close a response it cannot complete.
fn read_rest(s: &mut std::net::TcpStream) -> (usize, bool) {
    let mut buf = vec![0u8; 256 * 1024];
    let mut total = 0;
    loop {
        match s.read(&mut buf) {
            Ok(0) => return (total, true),
            Ok(n) => total += n,
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) if e.kind() == ErrorKind::ConnectionReset => return (total, false),
            Err(e) => panic!("response neither completed nor closed: {e}"),
        }
    }
}

fn still_serving(engine: Engine, addr: SocketAddr) {
    for _ in 0..3 {
        let r = simple(addr, "/hello.txt");
        assert_eq!(r.status, 200, "{engine}: after the fault");
        assert_eq!(r.body, b"hello, world\n");
    }
}

#[test]
fn client_reset_mid_response() {
    each_engine(|engine, addr, root| {
        write_large(root);
        for _ in 0..3 {
            let (s, len, _) = start_large_download(addr);
            assert_eq!(len, LARGE);
            // SO_LINGER 0: close sends RST instead of FIN.
            rustix::net::sockopt::set_socket_linger(&s, Some(Duration::ZERO)).unwrap();
            drop(s);
        }
        // A reset on a small response too, with pipelined requests unread.
        let mut s = connect(addr);
        s.write_all(&b"GET /big.bin HTTP/1.1\r\nHost: t\r\n\r\n".repeat(20))
            .unwrap();
        let mut buf = [0u8; 100];
        let _ = s.read(&mut buf).unwrap();
        rustix::net::sockopt::set_socket_linger(&s, Some(Duration::ZERO)).unwrap();
        drop(s);
        still_serving(engine, addr);
    });
}

#[test]
fn file_truncated_while_sent_closes_the_connection() {
    each_engine(|engine, addr, root| {
        write_large(root);
        let (mut s, len, first) = start_large_download(addr);
        // Truncate in place: the server's open descriptor sees the new size,
        // so sendfile comes up short of the announced length.
        let f = std::fs::OpenOptions::new()
            .write(true)
            .open(root.join("large.bin"))
            .unwrap();
        f.set_len(1000).unwrap();
        let (rest, _) = read_rest(&mut s);
        assert!(
            first + rest < len,
            "{engine}: a truncated file cannot fill its Content-Length"
        );
        still_serving(engine, addr);
    });
}

#[test]
fn file_deleted_while_sent_is_sent_whole() {
    // Unlinking removes the name, not the open file: the response completes.
    each_engine(|engine, addr, root| {
        write_large(root);
        let (mut s, len, first) = start_large_download(addr);
        std::fs::remove_file(root.join("large.bin")).unwrap();
        let (rest, eof) = read_rest(&mut s);
        assert!(eof, "{engine}: reset instead of a clean end");
        assert_eq!(first + rest, len, "{engine}: deleted file sent short");
        // The open-file cache may serve the old descriptor for up to its
        // revalidation window (one second); give it a few.
        let gone = (0..50).any(|_| {
            std::thread::sleep(Duration::from_millis(100));
            simple(addr, "/hello.txt").status == 200
                && get(
                    addr,
                    "HEAD /large.bin HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n",
                )
                .status
                    == 404
        });
        assert!(gone, "{engine}: a deleted file is still served after 5 s");
        still_serving(engine, addr);
    });
}

#[test]
fn failing_log_disk_does_not_stop_serving() {
    if !Path::new("/dev/full").exists() {
        eprintln!("no /dev/full here; skipped");
        return;
    }
    for engine in Engine::here() {
        for mode in [LogMode::Sync, LogMode::Buffered] {
            let dir = fixture();
            let server = start(dir.path(), engine, |c| {
                c.log = LogTarget::File("/dev/full".into());
                c.log_mode = mode;
            });
            let addr = server.local_addr();
            for i in 0..50 {
                let r = simple(addr, if i % 2 == 0 { "/hello.txt" } else { "/nope" });
                assert_eq!(
                    r.status,
                    if i % 2 == 0 { 200 } else { 404 },
                    "{engine} {mode:?}"
                );
            }
            // The buffered flusher has written (and failed) by now.
            std::thread::sleep(Duration::from_millis(1200));
            still_serving(engine, addr);
            server.shutdown().unwrap();
        }
    }
}
