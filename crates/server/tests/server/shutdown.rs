//! Graceful shutdown: in-flight responses complete, idle connections close.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use servelab_server::{Config, Engine, Running};

use crate::support::*;

/// A download under way on `engine` (`tune`d): the server, the client's
/// socket, the body, the first 1 KiB read, and the served folder (kept
/// while the test runs). The body is larger than the
/// socket buffers of both ends, so the response is still being written when
/// shutdown begins.
fn download_under_way(
    engine: Engine,
    tune: impl FnOnce(&mut Config),
) -> (Running, TcpStream, Vec<u8>, [u8; 1024], tempfile::TempDir) {
    let dir = fixture();
    let body: Vec<u8> = (0..24 * 1024 * 1024u32).map(|i| (i % 241) as u8).collect();
    std::fs::write(dir.path().join("huge.bin"), &body).unwrap();
    let server = start(dir.path(), engine, tune);
    let mut s = connect(server.local_addr());
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    s.write_all(b"GET /huge.bin HTTP/1.1\r\nHost: t\r\n\r\n")
        .unwrap();
    let mut first = [0u8; 1024];
    s.read_exact(&mut first).unwrap();
    (server, s, body, first, dir)
}

#[test]
fn slow_download_completes_across_shutdown() {
    for engine in Engine::here() {
        let (server, mut s, body, first, _dir) =
            download_under_way(engine, |c| c.grace = Duration::from_secs(60));
        let stopper = std::thread::spawn(move || server.shutdown());
        std::thread::sleep(Duration::from_millis(100));
        let mut rest = Vec::new();
        let mut buf = vec![0u8; 1 << 16];
        loop {
            match s.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => rest.extend_from_slice(&buf[..n]),
                Err(e) => panic!("{engine}: download cut: {e}"),
            }
        }
        let mut all = first.to_vec();
        all.extend_from_slice(&rest);
        let (r, used) = parse_one(&all, false);
        assert_eq!(used, all.len());
        assert!(r.body == body, "{engine}: whole body after shutdown began");
        assert_eq!(
            r.header("connection"),
            None,
            "head was sent before the signal"
        );
        stopper.join().unwrap().unwrap();
    }
}

#[test]
fn idle_connections_do_not_delay_shutdown() {
    for engine in Engine::here() {
        let dir = fixture();
        let server = start(dir.path(), engine, |c| {
            c.keepalive_timeout = Duration::from_secs(60)
        });
        let mut s = connect(server.local_addr());
        s.write_all(b"GET /hello.txt HTTP/1.1\r\nHost: t\r\n\r\n")
            .unwrap();
        let mut buf = [0u8; 4096];
        let _ = s.read(&mut buf).unwrap();
        std::thread::sleep(Duration::from_millis(50));
        let t = Instant::now();
        server.shutdown().unwrap();
        assert!(
            t.elapsed() < Duration::from_secs(30),
            "{engine}: shutdown waited for an idle keep-alive connection"
        );
        assert_eq!(
            s.read(&mut buf).unwrap_or(0),
            0,
            "{engine}: idle connection closed"
        );
    }
}

/// The other end of the grace period: a client that stops reading keeps its
/// response from finishing, and when the grace period is over the server
/// cuts it and stops (`driver/grace.rs` on the loops, each engine's own way
/// elsewhere).
#[test]
fn a_response_still_owed_when_the_grace_period_ends_is_cut() {
    for engine in Engine::here() {
        let (server, mut s, body, first, _dir) = download_under_way(engine, |c| {
            c.grace = Duration::from_millis(300);
            c.write_timeout = Duration::from_secs(60);
        });
        // The client reads nothing more until the server has stopped.
        server.shutdown().unwrap();
        let mut got = first.len();
        let mut buf = vec![0u8; 1 << 16];
        loop {
            match s.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => got += n,
            }
        }
        assert!(
            got < body.len(),
            "{engine}: the response was cut ({got} of {} bytes)",
            body.len()
        );
    }
}
