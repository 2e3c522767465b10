//! Slow clients (slowloris) on every engine: many connections that trickle a
//! request head a byte at a time must not stop normal clients being served.
//!
//! The defence is the same for every engine: a request head must be complete
//! within `read_timeout` of its first byte, or the connection gets 408 and is
//! closed. What differs is how much a slow connection costs until then: a
//! worker (serial: the whole server; pool: one of `--workers` threads), or a
//! thread or process under `--max-conns`, or only a slot in an event loop. So
//! the attack here is sized to what the engine can hold while the defence
//! works: serial serves one connection at a time, so a few attackers already
//! make every normal client wait `attackers x read_timeout`; the others get 200.
//! The bench script `bench/slowloris.sh` measures what users see under the
//! issue's 1,000-connection attack with the default settings.
//!
//! Assertions are on counts (every normal request answered 200, three of them
//! while the attack was running, attackers were cut off), never on timings.

use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use servelab_server::Engine;

use crate::support::*;

/// What the attackers send, one byte per tick, never the blank line.
const TRICKLE: &[u8] = b"GET /hello.txt HTTP/1.1\r\nHost: t\r\nX-Slow: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";

/// How many slow connections the engine is asked to bear.
fn attackers(engine: Engine) -> usize {
    match engine {
        Engine::Serial => 4,
        _ => 200,
    }
}

/// One slow connection: its socket and how far into `TRICKLE` it is.
struct Slow {
    stream: Option<TcpStream>,
    pos: usize,
}

/// Keeps `n` slow connections open until `stop`, sending each a byte every
/// 100 ms and reconnecting any the server closes. Returns how many the server
/// cut off (closed, reset or answered) during the attack.
fn attack(addr: SocketAddr, n: usize, stop: Arc<AtomicBool>, opened: Arc<AtomicUsize>) -> usize {
    let mut slots: Vec<Slow> = (0..n)
        .map(|_| Slow {
            stream: None,
            pos: 0,
        })
        .collect();
    let mut cut = 0;
    let mut buf = [0u8; 1024];
    while !stop.load(Ordering::Relaxed) {
        for slot in &mut slots {
            if slot.stream.is_none() {
                // Blocking connect on loopback: the kernel completes it from
                // the backlog even while the server is busy.
                if let Ok(s) = TcpStream::connect(addr) {
                    s.set_nonblocking(true).unwrap();
                    slot.stream = Some(s);
                    slot.pos = 0;
                    opened.fetch_add(1, Ordering::Relaxed);
                }
                continue;
            }
            let s = slot.stream.as_mut().unwrap();
            let closed = match s.read(&mut buf) {
                Ok(_) => true, // EOF or the 408: either way the server ended it
                Err(e) if e.kind() == ErrorKind::WouldBlock => false,
                Err(_) => true,
            };
            let closed = closed
                || match s.write(&TRICKLE[slot.pos % TRICKLE.len()..][..1]) {
                    Ok(_) => {
                        slot.pos += 1;
                        false
                    }
                    Err(e) if e.kind() == ErrorKind::WouldBlock => false,
                    Err(_) => true,
                };
            if closed {
                cut += 1;
                slot.stream = None;
            }
        }
        thread::sleep(Duration::from_millis(100));
    }
    cut
}

#[test]
fn trickling_heads_do_not_stop_normal_clients() {
    for engine in Engine::here() {
        let dir = fixture();
        let server = start(dir.path(), engine, |c| {
            c.read_timeout = Duration::from_millis(300);
            c.workers = 32;
        });
        let addr = server.local_addr();
        let stop = Arc::new(AtomicBool::new(false));
        let opened = Arc::new(AtomicUsize::new(0));
        let n = attackers(engine);
        let attacker = {
            let (stop, opened) = (stop.clone(), opened.clone());
            thread::spawn(move || attack(addr, n, stop, opened))
        };
        // Let every attacker connect before the first normal client.
        let start_wait = Instant::now();
        while opened.load(Ordering::Relaxed) < n && start_wait.elapsed() < Duration::from_secs(10) {
            thread::sleep(Duration::from_millis(20));
        }
        // Normal clients, one after another, while the attack goes on: the
        // attack stops only once three of them have been served (or after a
        // minute, which fails the test: the attack starved them).
        let began = Instant::now();
        let mut during = 0;
        while during < 3 && began.elapsed() < Duration::from_secs(60) {
            let r = simple(addr, "/hello.txt");
            assert_eq!(r.status, 200, "{engine}: normal client under attack");
            assert_eq!(r.body, b"hello, world\n");
            during += 1;
        }
        // The attack outlasts the read timeout even when the normal clients
        // were served at once (thread, event loops), so the defence must act.
        while began.elapsed() < Duration::from_secs(1) {
            thread::sleep(Duration::from_millis(50));
        }
        stop.store(true, Ordering::Relaxed);
        let cut = attacker.join().unwrap();
        // And after it.
        for _ in 0..5 {
            assert_eq!(simple(addr, "/hello.txt").status, 200, "{engine}: after");
        }
        assert_eq!(during, 3, "{engine}: normal clients starved by the attack");
        assert!(
            cut >= 1,
            "{engine}: no slow connection was cut off ({} opened)",
            opened.load(Ordering::Relaxed)
        );
        eprintln!(
            "{engine}: {n} attackers, {} connections opened, {cut} cut off; {during} normal requests served during {:?}",
            opened.load(Ordering::Relaxed),
            began.elapsed()
        );
        server.shutdown().unwrap();
    }
}
