//! What only the event-loop engines promise: nothing a client does stalls the
//! others on the same loop, `--delay` parks a connection instead of a thread,
//! and idle connections are cheap, and a large body sent in pieces resumes
//! when the client reads. Each test runs `epoll`, `reactor` and `uring` with one worker,
//! so every connection shares one loop (the large-body test runs `event` too).
//! Assertions are on counts and bytes.

use std::io::{Read, Write};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use servelab_server::{Dist, Engine, Waits};

use crate::support::*;

/// The engines that answer on their loop's own thread, from the catalogue
/// (`epoll`, `reactor`, and `uring`'s ring).
fn loops() -> impl Iterator<Item = Engine> {
    Engine::here().filter(|e| matches!(e.waits(), Waits::EventLoop | Waits::Ring))
}

/// Reads one response of a keep-alive connection (Content-Length framed).
fn read_one(s: &mut std::net::TcpStream) -> Resp {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 8192];
    loop {
        if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&buf[..end]).to_lowercase();
            let len: usize = head
                .lines()
                .find_map(|l| l.strip_prefix("content-length: "))
                .map_or(0, |v| v.trim().parse().unwrap());
            if buf.len() >= end + 4 + len {
                return parse_one(&buf, false).0;
            }
        }
        let n = s.read(&mut chunk).unwrap();
        assert!(n > 0, "connection closed early");
        buf.extend_from_slice(&chunk[..n]);
    }
}

#[test]
fn a_client_sending_a_byte_a_second_does_not_stall_others() {
    for engine in loops() {
        let dir = fixture();
        let server = start(dir.path(), engine, |c| {
            c.workers = 1;
            c.read_timeout = Duration::from_secs(30);
        });
        let addr = server.local_addr();
        let slow_done = Arc::new(AtomicBool::new(false));
        let slow = {
            let slow_done = slow_done.clone();
            std::thread::spawn(move || {
                let mut s = connect(addr);
                let req = b"GET /hello.txt HTTP/1.1\r\nHost: t\r\n\r\n";
                for at in 0..req.len() {
                    s.write_all(&req[at..=at]).unwrap();
                    std::thread::sleep(Duration::from_secs(1));
                    if slow_done.load(Ordering::SeqCst) {
                        // The fast client is done: finish the head at once.
                        s.write_all(&req[at + 1..]).unwrap();
                        break;
                    }
                }
                read_one(&mut s).status
            })
        };
        // Let the slow client's first byte arrive, then run a burst.
        std::thread::sleep(Duration::from_millis(100));
        let mut fast = connect(addr);
        let mut ok = 0;
        for _ in 0..500 {
            fast.write_all(b"GET /1k.txt HTTP/1.1\r\nHost: t\r\n\r\n")
                .unwrap();
            if read_one(&mut fast).status == 200 {
                ok += 1;
            }
        }
        // The slow head is still incomplete here (it needs 36 more seconds),
        // yet the fast client got every answer on the same single loop.
        assert!(!slow.is_finished(), "{engine}: slow client finished early");
        slow_done.store(true, Ordering::SeqCst);
        assert_eq!(ok, 500, "{engine}");
        assert_eq!(slow.join().unwrap(), 200, "{engine}: slow client answered");
        server.shutdown().unwrap();
    }
}

#[test]
fn delay_parks_connections_not_the_loop() {
    // Twenty connections each ask for a response held back 2 s by one
    // single-threaded loop. Each client waits at most 6 s: had the loop slept
    // through each delay in turn, most would time out.
    for engine in loops() {
        let dir = fixture();
        let server = start(dir.path(), engine, |c| {
            c.workers = 1;
            c.delay = Some(Dist::Const(Duration::from_secs(2)));
        });
        let addr = server.local_addr();
        let mut conns: Vec<_> = (0..20)
            .map(|_| {
                let mut s = connect(addr);
                s.set_read_timeout(Some(Duration::from_secs(6))).unwrap();
                s.write_all(b"GET /hello.txt HTTP/1.1\r\nHost: t\r\n\r\n")
                    .unwrap();
                s
            })
            .collect();
        let ok = conns
            .iter_mut()
            .map(|s| read_one(s).status)
            .filter(|&status| status == 200)
            .count();
        assert_eq!(ok, 20, "{engine}");
        server.shutdown().unwrap();
    }
}

#[test]
fn large_bodies_resume_after_a_client_that_reads_late() {
    // The loops stop a `sendfile` once 64 KiB wait unsent (TCP_NOTSENT_LOWAT)
    // and resume on the next EPOLLOUT edge. A client with a small receive
    // buffer asks for the 1 MiB file twice and reads nothing for a while, so
    // each body has to be sent in many pieces, each after such an edge: both
    // must arrive whole and in order, and another client is served meanwhile.
    // `event` is here too: its workers send without the mark and wait for
    // POLLOUT when the socket is full, a path this client forces as well.
    let with_workers = Engine::here().filter(|e| e.waits() == Waits::HandOff);
    for engine in loops().chain(with_workers) {
        let dir = fixture();
        let server = start(dir.path(), engine, |c| c.workers = 1);
        let addr = server.local_addr();
        let sock =
            socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).unwrap();
        sock.set_recv_buffer_size(16 * 1024).unwrap();
        sock.connect(&addr.into()).unwrap();
        let mut slow: std::net::TcpStream = sock.into();
        slow.set_read_timeout(Some(Duration::from_secs(10)))
            .unwrap();
        slow.write_all(
            b"GET /big.bin HTTP/1.1\r\nHost: t\r\n\r\n\
              GET /big.bin HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n",
        )
        .unwrap();
        std::thread::sleep(Duration::from_millis(300));
        let mut other = connect(addr);
        other
            .set_read_timeout(Some(Duration::from_secs(10)))
            .unwrap();
        other
            .write_all(b"GET /hello.txt HTTP/1.1\r\nHost: t\r\n\r\n")
            .unwrap();
        assert_eq!(read_one(&mut other).status, 200, "{engine}");
        let mut raw = Vec::new();
        slow.read_to_end(&mut raw).unwrap();
        let big = big_bytes();
        let (first, used) = parse_one(&raw, false);
        let (second, _) = parse_one(&raw[used..], false);
        for (i, r) in [first, second].iter().enumerate() {
            assert_eq!(r.status, 200, "{engine} response {i}");
            assert!(r.body == big, "{engine} response {i}: body differs");
        }
        server.shutdown().unwrap();
    }
}

#[test]
fn many_idle_connections_and_new_requests_still_served() {
    for engine in loops() {
        let dir = fixture();
        let server = start(dir.path(), engine, |c| c.workers = 1);
        let addr = server.local_addr();
        let mut idle: Vec<_> = (0..500).map(|_| connect(addr)).collect();
        // Each has been used once and is now idle, its buffers returned to
        // the loop. (A connection that never sends is not accepted before it
        // does, or before the kernel stops deferring it: TCP_DEFER_ACCEPT.)
        for s in idle.iter_mut() {
            s.write_all(b"GET /hello.txt HTTP/1.1\r\nHost: t\r\n\r\n")
                .unwrap();
            assert_eq!(read_one(s).status, 200);
        }
        assert_eq!(simple(addr, "/1k.txt").status, 200, "{engine}");
        let open = server.stats().snapshot().open;
        assert!(open >= 500, "{engine}: {open} open");
        // And the used ones are still alive.
        for s in idle.iter_mut().step_by(2).take(10) {
            s.write_all(b"GET /1k.txt HTTP/1.1\r\nHost: t\r\n\r\n")
                .unwrap();
            assert_eq!(read_one(s).status, 200, "{engine}");
        }
        drop(idle);
        server.shutdown().unwrap();
    }
}
