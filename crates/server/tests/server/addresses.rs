//! `--addr` forms and several listeners: every engine serves every listener.
//! (Loopback only: `:PORT`, which binds every interface, is tested by parsing,
//! in `addr.rs`.)

use std::net::SocketAddr;

use servelab_server::{Engine, ListenAddr};

use crate::support::*;

#[test]
fn every_listener_is_served_by_every_engine() {
    for engine in Engine::here() {
        let dir = fixture();
        let v6: ListenAddr = "[::1]:0".parse().unwrap();
        let host: ListenAddr = "localhost:0".parse().unwrap();
        let mut addrs: Vec<SocketAddr> = vec!["127.0.0.1:0".parse().unwrap()];
        addrs.extend_from_slice(v6.addrs());
        addrs.extend_from_slice(host.addrs());
        let server = start(dir.path(), engine, |c| c.addrs = addrs.clone());
        let bound = server.local_addrs().to_vec();
        assert_eq!(bound.len(), addrs.len(), "{engine}");
        assert_eq!(server.local_addr(), bound[0]);
        for (asked, got) in addrs.iter().zip(&bound) {
            assert_eq!(asked.ip(), got.ip(), "{engine}");
            assert_ne!(got.port(), 0);
        }
        // Several rounds so that every worker of every engine meets every listener.
        for round in 0..3 {
            for &a in &bound {
                let r = simple(a, "/hello.txt");
                assert_eq!(
                    (r.status, r.body.as_slice()),
                    (200, &b"hello, world\n"[..]),
                    "{engine} {a} round {round}"
                );
            }
        }
        server.shutdown().unwrap();
    }
}
