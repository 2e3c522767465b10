//! A TLS slowloris on the event-driven engines: hundreds of connections
//! that trickle a ClientHello a byte at a time must not delay a normal TLS
//! client. There, a connection mid-handshake is one more socket waiting for
//! an edge (or a future), holding no worker: the loop reads what came, finds
//! no complete record, and serves others.
//!
//! The bound is the normal client's socket timeout, 5 s, against a server
//! `--read-timeout` of 30 s: an engine that let the trickling handshakes hold
//! it would answer only once they time out, long after. Assertions are on
//! outcomes (every normal request answered 200 while every attacker was
//! still connected), not on measured times.

use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::thread;
use std::time::Duration;

use rustls::pki_types::ServerName;
use rustls::{ClientConfig, ClientConnection};
use servelab_server::{Capacity, Engine};

use crate::support::{fixture, parse_one, start};
use crate::tls::{pki, tls_connect};

/// Slow handshakes kept open at once.
const ATTACKERS: usize = 300;

/// A real ClientHello, as the attackers' bytes.
fn client_hello(client: &Arc<ClientConfig>) -> Vec<u8> {
    let name = ServerName::try_from("127.0.0.1").unwrap();
    let mut c = ClientConnection::new(client.clone(), name).unwrap();
    let mut hello = Vec::new();
    c.write_tls(&mut hello).unwrap();
    hello
}

/// Opens `ATTACKERS` connections, then sends each one byte of `hello` every
/// 20 ms until `stop`; counts (in `cut`) those the server ended meanwhile.
fn attack(
    addr: SocketAddr,
    hello: Vec<u8>,
    stop: Arc<AtomicBool>,
    ready: Arc<AtomicBool>,
    cut: Arc<AtomicUsize>,
) {
    let mut socks: Vec<(Option<TcpStream>, usize)> = (0..ATTACKERS)
        .map(|_| {
            let s = TcpStream::connect(addr).unwrap();
            s.set_nonblocking(true).unwrap();
            (Some(s), 0)
        })
        .collect();
    ready.store(true, Ordering::Release);
    let mut buf = [0u8; 256];
    while !stop.load(Ordering::Acquire) {
        for (slot, pos) in &mut socks {
            let Some(s) = slot else { continue };
            let gone = match s.read(&mut buf) {
                Ok(_) => true,
                Err(e) => e.kind() != ErrorKind::WouldBlock,
            };
            // Never the last byte: the hello stays incomplete.
            let gone = gone || (*pos + 1 < hello.len() && s.write(&hello[*pos..*pos + 1]).is_err());
            if gone {
                *slot = None;
                cut.fetch_add(1, Ordering::Relaxed);
            } else if *pos + 1 < hello.len() {
                *pos += 1;
            }
        }
        thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn trickling_handshakes_do_not_delay_others_on_event_driven_engines() {
    // The engines where a waiting connection holds no worker (epoll,
    // reactor, event, async), from the catalogue.
    let engines = Engine::here().filter(|e| e.capacity() == Capacity::Unbounded);
    for engine in engines {
        let dir = fixture();
        let certs = tempfile::tempdir().unwrap();
        let (source, client) = pki(certs.path());
        let server = start(dir.path(), engine, |c| {
            c.tls = Some(source);
            c.read_timeout = Duration::from_secs(30);
            c.workers = 1;
        });
        let addr = server.local_addr();
        let (stop, ready) = (
            Arc::new(AtomicBool::new(false)),
            Arc::new(AtomicBool::new(false)),
        );
        let cut = Arc::new(AtomicUsize::new(0));
        let attacker = {
            let (hello, stop, ready, cut) = (
                client_hello(&client),
                stop.clone(),
                ready.clone(),
                cut.clone(),
            );
            thread::spawn(move || attack(addr, hello, stop, ready, cut))
        };
        while !ready.load(Ordering::Acquire) {
            thread::sleep(Duration::from_millis(10));
        }
        // Let every attacker have sent some bytes first.
        thread::sleep(Duration::from_millis(300));
        for i in 0..3 {
            let mut s = tls_connect(addr, &client);
            s.get_ref()
                .set_read_timeout(Some(Duration::from_secs(5)))
                .unwrap();
            s.write_all(b"GET /hello.txt HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
                .unwrap();
            let mut out = Vec::new();
            s.read_to_end(&mut out)
                .unwrap_or_else(|e| panic!("{engine}: request {i} under the attack: {e}"));
            let (resp, _) = parse_one(&out, false);
            assert_eq!(resp.status, 200, "{engine}");
        }
        stop.store(true, Ordering::Release);
        attacker.join().unwrap();
        assert_eq!(
            cut.load(Ordering::Relaxed),
            0,
            "{engine}: attackers were cut off early"
        );
        server.shutdown().unwrap();
    }
}
