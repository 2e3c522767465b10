//! Exhaustion of the engines' own bounds, on every engine: more connections
//! than `--workers` + `--queue` (pool) or `--max-conns` (thread, fork) can
//! hold. Overload must be answered (pool: 503 with `Retry-After`; the capped
//! engines: the client waits in the listen backlog) and never turn into a
//! reset, a hang or a dead server; once the hogs leave, service recovers.
//! (Descriptor exhaustion, `EMFILE`, needs a process with a low `ulimit -n`:
//! see `bench/exhaustion.sh`.)

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use servelab_server::Engine;

use crate::support::*;

/// Connections that hold a slot: a head that never ends (cut by the read
/// timeout). They arrive 50 ms apart so that a pool worker has taken the first
/// before the second arrives, which makes the pool's placement deterministic.
fn hogs(addr: std::net::SocketAddr, n: usize) -> Vec<TcpStream> {
    (0..n)
        .map(|_| {
            let mut s = connect(addr);
            s.write_all(b"GET /hello.txt HTTP/1.1\r\nHost: t\r\n")
                .unwrap();
            std::thread::sleep(Duration::from_millis(50));
            s
        })
        .collect()
}

#[test]
fn bounded_engines_answer_overload_and_recover() {
    for engine in Engine::here() {
        let dir = fixture();
        let server = start(dir.path(), engine, |c| {
            c.workers = 1;
            c.queue = 1;
            c.max_conns = 2;
            c.read_timeout = Duration::from_millis(500);
        });
        let addr = server.local_addr();
        let held = hogs(addr, 4);
        let r = simple(addr, "/hello.txt");
        match r.status {
            200 => assert_eq!(r.body, b"hello, world\n"),
            503 => assert!(
                r.header("retry-after").is_some(),
                "{engine}: 503 without Retry-After"
            ),
            other => panic!("{engine}: overload answered {other}"),
        }
        if engine == Engine::Pool {
            // One connection with the worker, one in the queue: the rest, and
            // this client, are refused at once rather than queued without bound.
            assert_eq!(r.status, 503, "{engine}: a full queue must refuse");
        }
        // Every hog gets an answer (503 or 408) or a close: none is left hanging.
        for mut s in held {
            let mut out = Vec::new();
            s.read_to_end(&mut out).unwrap();
            if !out.is_empty() {
                let status = parse_one(&out, false).0.status;
                assert!(matches!(status, 408 | 503), "{engine}: hog got {status}");
            }
        }
        // Recovered: the slots are free again.
        for _ in 0..5 {
            assert_eq!(
                simple(addr, "/hello.txt").status,
                200,
                "{engine}: after overload"
            );
        }
        server.shutdown().unwrap();
    }
}

#[test]
fn many_short_connections_beyond_the_bounds_all_answered() {
    // 200 connections at once, each a complete request, against a pool with a
    // queue of 8 and engines capped at 4 connections: each gets 200 or 503
    // (the pool refusing), nothing else, and the server serves on.
    for engine in Engine::here() {
        let dir = fixture();
        let server = start(dir.path(), engine, |c| {
            c.workers = 2;
            c.queue = 8;
            c.max_conns = 4;
        });
        let addr = server.local_addr();
        let mut streams: Vec<TcpStream> = (0..200)
            .map(|_| {
                let mut s = connect(addr);
                s.write_all(b"GET /1k.txt HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
                    .unwrap();
                s
            })
            .collect();
        let (mut ok, mut refused) = (0, 0);
        for s in &mut streams {
            let mut out = Vec::new();
            s.read_to_end(&mut out).unwrap();
            match parse_one(&out, false).0.status {
                200 => ok += 1,
                503 => refused += 1,
                other => panic!("{engine}: got {other}"),
            }
        }
        assert_eq!(ok + refused, 200, "{engine}");
        assert!(ok >= 1, "{engine}: nothing served");
        eprintln!("{engine}: 200 connections at once: {ok} served, {refused} refused with 503");
        assert_eq!(simple(addr, "/hello.txt").status, 200, "{engine}");
        server.shutdown().unwrap();
    }
}
