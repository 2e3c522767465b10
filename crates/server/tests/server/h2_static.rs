//! Every static feature over HTTP/2 as over HTTP/1.1, on every engine that
//! carries HTTP/2 (prior knowledge, `--h2c`): the same request sent both ways
//! gets the same status, fields and body, since both go through the one
//! handler; plus what only HTTP/2 has (many streams at once, flow control on
//! large bodies, GOAWAY at shutdown) and what it must say in the log and
//! `/-/status`.

use std::io::{Read, Write};
use std::time::Duration;

use servelab_server::{Dist, LogMode, LogTarget, StatusDocument};

use crate::h2_client::{Client, Reply, each_h2_engine};
use crate::support::*;

/// The fields a response must carry alike over HTTP/1.1 and HTTP/2 (all but
/// `Date`, and the connection-specific ones HTTP/2 leaves out).
const COMPARED: &[&str] = &[
    "content-type",
    "content-length",
    "content-range",
    "content-encoding",
    "etag",
    "last-modified",
    "accept-ranges",
    "vary",
    "location",
    "www-authenticate",
    "allow",
    "cache-control",
];

/// Sends `method path` with `fields` over HTTP/1.1 (a fresh connection) and
/// over HTTP/2 (`client`), and asserts the two answers agree.
fn same_both_ways(
    addr: std::net::SocketAddr,
    client: &mut Client,
    method: &str,
    path: &str,
    fields: &[(&str, &str)],
) -> Reply {
    let mut req = format!("{method} {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n");
    for (n, v) in fields {
        req.push_str(&format!("{n}: {v}\r\n"));
    }
    req.push_str("\r\n");
    let h1 = get(addr, &req);
    let h2_fields: Vec<(&str, &[u8])> = fields.iter().map(|(n, v)| (*n, v.as_bytes())).collect();
    let h2 = client.request(method, path, &h2_fields);
    let what = format!("{method} {path} {fields:?}");
    assert_eq!(h2.reset, None, "{what}");
    assert_eq!(h2.status, h1.status, "{what}");
    assert_eq!(h2.body, h1.body, "{what}: body");
    for name in COMPARED {
        assert_eq!(h2.header(name), h1.header(name), "{what}: {name}");
    }
    assert_eq!(h2.header("server"), Some("servelab"));
    assert!(h2.header("date").is_some());
    assert_eq!(h2.header("connection"), None, "connection-specific");
    h2
}

#[test]
fn get_head_conditional_and_ranges_match_http1() {
    each_h2_engine(
        |_| {},
        |engine, server, _| {
            let addr = server.local_addr();
            let mut c = Client::connect(addr);
            let ok = same_both_ways(addr, &mut c, "GET", "/hello.txt", &[]);
            assert_eq!((ok.status, &ok.body[..]), (200, &b"hello, world\n"[..]));
            let etag = ok.header("etag").unwrap().to_owned();
            let head = same_both_ways(addr, &mut c, "HEAD", "/big.bin", &[]);
            assert!(head.body.is_empty(), "{engine}: HEAD has no body");
            assert_eq!(head.header("content-length"), Some("1048576"));
            let big = same_both_ways(addr, &mut c, "GET", "/big.bin", &[]);
            assert_eq!(big.body, big_bytes(), "{engine}: 1 MiB through the windows");
            let nm = same_both_ways(
                addr,
                &mut c,
                "GET",
                "/hello.txt",
                &[("if-none-match", &etag)],
            );
            assert_eq!(nm.status, 304);
            let pf = same_both_ways(addr, &mut c, "GET", "/hello.txt", &[("if-match", "\"x\"")]);
            assert_eq!(pf.status, 412);
            let r = same_both_ways(
                addr,
                &mut c,
                "GET",
                "/big.bin",
                &[("range", "bytes=1000-1999")],
            );
            assert_eq!((r.status, &r.body[..]), (206, &big_bytes()[1000..2000]));
            let multi = [("range", "bytes=0-9,100000-100009")];
            let m = same_both_ways(addr, &mut c, "GET", "/big.bin", &multi);
            assert_eq!(m.status, 206, "{engine}: multipart");
            let un = same_both_ways(
                addr,
                &mut c,
                "GET",
                "/big.bin",
                &[("range", "bytes=9999999-")],
            );
            assert_eq!(un.status, 416);
            for path in ["/sub", "/sub/", "/missing", "/%2e%2e/x", "/noindex/"] {
                same_both_ways(addr, &mut c, "GET", path, &[]);
            }
            let not_allowed = same_both_ways(addr, &mut c, "DELETE", "/hello.txt", &[]);
            assert_eq!(not_allowed.status, 405);
            assert!(c.goaway.is_none(), "{engine}: one connection for all");
        },
    );
}

#[test]
fn autoindex_spa_auth_and_encodings_match_http1() {
    // `htpasswd -nbB -C 4 alice 'open sesame'` (as in auth.rs).
    const USERS: &str = "alice:$2y$04$fuOjydCsmQ/JjZ0nf22ipu5p8OPAkHr0TQcPjDjGos8q0pgx7kv8C\n";
    let users_dir = tempfile::tempdir().unwrap();
    let users = users_dir.path().join("users");
    std::fs::write(&users, USERS).unwrap();
    each_h2_engine(
        |c| {
            c.autoindex = true;
            c.spa = true;
            c.compress = true;
            c.auth = Some(users.clone());
        },
        |engine, server, root| {
            std::fs::write(root.join("app.js"), "x".repeat(2000)).unwrap();
            std::fs::write(root.join("app.js.gz"), b"not really gzip").unwrap();
            let addr = server.local_addr();
            let mut c = Client::connect(addr);
            let denied = same_both_ways(addr, &mut c, "GET", "/hello.txt", &[]);
            assert_eq!(denied.status, 401, "{engine}");
            let alice = ("authorization", "Basic YWxpY2U6b3BlbiBzZXNhbWU=");
            let listing = same_both_ways(addr, &mut c, "GET", "/noindex/", &[alice]);
            assert!(String::from_utf8_lossy(&listing.body).contains("x.txt"));
            let spa = same_both_ways(addr, &mut c, "GET", "/some/route", &[alice]);
            assert_eq!(spa.status, 200, "{engine}: SPA fallback");
            let gz = [alice, ("accept-encoding", "gzip")];
            let pre = same_both_ways(addr, &mut c, "GET", "/app.js", &gz);
            assert_eq!(
                pre.body, b"not really gzip",
                "{engine}: the precompressed sibling"
            );
            let br = [alice, ("accept-encoding", "br")];
            let made = same_both_ways(addr, &mut c, "GET", "/app.js", &br);
            assert_eq!(
                made.header("content-encoding"),
                Some("br"),
                "{engine}: --compress"
            );
        },
    );
}

#[test]
fn many_streams_at_once_each_get_their_own_body() {
    each_h2_engine(
        |_| {},
        |engine, server, _| {
            let mut c = Client::connect(server.local_addr());
            let paths = ["/big.bin", "/hello.txt", "/1k.txt", "/big.bin", "/missing"];
            let ids: Vec<_> = (0..40)
                .map(|i| c.send("GET", paths[i % paths.len()], &[]))
                .collect();
            let replies = c.wait(&ids);
            for (i, r) in replies.iter().enumerate() {
                let path = paths[i % paths.len()];
                let want: Vec<u8> = match path {
                    "/big.bin" => big_bytes(),
                    "/hello.txt" => b"hello, world\n".to_vec(),
                    "/1k.txt" => vec![b'a'; 1024],
                    _ => {
                        assert_eq!(r.status, 404, "{engine}");
                        continue;
                    }
                };
                let state = (r.reset, c.goaway, c.closed);
                assert_eq!(
                    (r.status, r.body.len()),
                    (200, want.len()),
                    "{engine} {path} {state:?}"
                );
                assert!(r.body == want, "{engine} {path}: body");
            }
        },
    );
}

#[test]
fn the_log_says_http2_and_status_counts_streams_and_connections_apart() {
    for engine in crate::h2_client::h2_engines() {
        let dir = fixture();
        let log = dir.path().join("access.log");
        let server = start(dir.path(), engine, |c| {
            c.h2c = true;
            c.status = true;
            c.log = LogTarget::File(log.clone());
            c.log_mode = LogMode::Sync;
        });
        let mut c = Client::connect(server.local_addr());
        let ids: Vec<_> = (0..5).map(|_| c.send("GET", "/hello.txt", &[])).collect();
        c.wait(&ids);
        let status = c.get("/-/status", &[]);
        let doc: StatusDocument = serde_json::from_slice(&status.body).unwrap();
        assert_eq!(doc.http2.connections, 1, "{engine}");
        assert_eq!(doc.http2.open, 1, "{engine}");
        assert_eq!(doc.http2.streams, 6, "{engine}: five GETs and this one");
        assert_eq!(doc.connections.accepted, 1, "{engine}: one connection");
        // A response counts once the server saw its last byte written, which
        // may come after the client read it: the log is read after shutdown.
        let stats = server.stats();
        server.shutdown().unwrap();
        assert_eq!(stats.snapshot().h2.open, 0, "{engine}: closed");
        assert_eq!(stats.snapshot().h2.open_streams, 0, "{engine}: all done");
        let text = std::fs::read_to_string(&log).unwrap();
        let lines: Vec<_> = text.lines().collect();
        assert_eq!(lines.len(), 6, "{engine}: {text}");
        for line in &lines[..5] {
            assert!(
                line.contains("\"GET /hello.txt HTTP/2.0\" 200 13 "),
                "{line}"
            );
        }
        assert!(
            lines[5].contains("\"GET /-/status HTTP/2.0\" 200 "),
            "{text}"
        );
    }
}

#[test]
fn work_is_burnt_per_stream() {
    for engine in crate::h2_client::h2_engines() {
        let dir = fixture();
        let server = start(dir.path(), engine, |c| {
            c.h2c = true;
            c.work = Some(Dist::Const(Duration::from_millis(2)));
        });
        let mut c = Client::connect(server.local_addr());
        let ids: Vec<_> = (0..4).map(|_| c.send("GET", "/1k.txt", &[])).collect();
        for r in c.wait(&ids) {
            assert_eq!((r.status, r.body.len()), (200, 1024), "{engine}");
        }
        let stats = server.stats();
        server.shutdown().unwrap();
        let snap = stats.snapshot();
        assert_eq!(snap.service.buckets.iter().sum::<u64>(), 4, "{engine}");
        // Each response waited for at least its own 2 ms of CPU.
        assert!(snap.service.sum_ns >= 4 * 2_000_000, "{engine}");
    }
}

#[test]
fn shutdown_sends_goaway_and_closes_an_idle_connection() {
    for engine in crate::h2_client::h2_engines() {
        let dir = fixture();
        let server = start(dir.path(), engine, |c| c.h2c = true);
        let mut c = Client::connect(server.local_addr());
        assert_eq!(c.get("/hello.txt", &[]).status, 200);
        let stopper = std::thread::spawn(move || server.shutdown().unwrap());
        c.wait_for_close();
        stopper.join().unwrap();
        let (last, code) = c.goaway.expect("a GOAWAY before the close");
        assert_eq!(code, servelab_h2::ErrorCode::NoError, "{engine}");
        assert_eq!(last.0, 1, "{engine}: the last stream it took");
    }
}

#[test]
fn shutdown_lets_a_download_in_flight_finish_after_goaway() {
    for engine in crate::h2_client::h2_engines() {
        let dir = fixture();
        let server = start(dir.path(), engine, |c| c.h2c = true);
        let mut c = Client::connect(server.local_addr());
        let id = c.send("GET", "/big.bin", &[]);
        // Shutdown begins while the 1 MiB is held by the client's windows
        // (it has read nothing yet).
        std::thread::sleep(Duration::from_millis(100));
        let stopper = std::thread::spawn(move || server.shutdown().unwrap());
        let r = c.wait(&[id]).remove(0);
        assert!(r.body == big_bytes(), "{engine}: the download finished");
        c.wait_for_close();
        stopper.join().unwrap();
        assert_eq!(
            c.goaway.map(|(last, code)| (last.0, code)),
            Some((1, servelab_h2::ErrorCode::NoError)),
            "{engine}"
        );
    }
}

#[test]
fn max_requests_per_conn_ends_with_goaway_after_the_last() {
    each_h2_engine(
        |c| c.max_requests_per_conn = Some(2),
        |engine, server, _| {
            let mut c = Client::connect(server.local_addr());
            let ids: Vec<_> = (0..3).map(|_| c.send("GET", "/hello.txt", &[])).collect();
            let replies = c.wait(&ids);
            assert_eq!(replies[0].status, 200, "{engine}");
            assert_eq!(replies[1].status, 200, "{engine}");
            // The third was not taken: refused by the GOAWAY, safe to retry.
            assert_eq!(
                replies[2].reset,
                Some(servelab_h2::ErrorCode::RefusedStream),
                "{engine}"
            );
            let (_, code) = c.goaway.expect("GOAWAY");
            assert_eq!(code, servelab_h2::ErrorCode::NoError, "{engine}");
            c.wait_for_close();
        },
    );
}

#[test]
fn the_preface_without_h2c_gets_505_and_http1_still_works_with_it() {
    for engine in crate::h2_client::h2_engines() {
        let dir = fixture();
        let plain = start(dir.path(), engine, |_| {});
        let mut s = connect(plain.local_addr());
        s.write_all(servelab_h2::frame::PREFACE).unwrap();
        let mut out = Vec::new();
        let _ = s.read_to_end(&mut out);
        let (r, _) = parse_one(&out, false);
        assert_eq!(r.status, 505, "{engine}");
        plain.shutdown().unwrap();
        let h2c = start(dir.path(), engine, |c| c.h2c = true);
        let r = simple(h2c.local_addr(), "/hello.txt");
        assert_eq!(r.body, b"hello, world\n", "{engine}: HTTP/1.1 beside h2c");
        h2c.shutdown().unwrap();
    }
}

#[test]
fn engines_without_http2_refuse_h2c() {
    let dir = fixture();
    // The engines this system runs (uring where io_uring is allowed).
    for engine in servelab_server::Engine::here() {
        let mut config = servelab_server::Config::new(dir.path());
        config.engine = engine;
        config.h2c = true;
        let bound = servelab_server::Server::bind(config);
        match bound {
            Ok(s) => {
                assert!(engine.carries_http2(), "{engine}");
                s.spawn().shutdown().unwrap();
            }
            Err(e) => {
                assert!(!engine.carries_http2(), "{engine}");
                assert!(e.to_string().contains("--h2c needs an engine"), "{e}");
            }
        }
    }
}
