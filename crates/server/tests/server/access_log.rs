//! The access log: exactly one well-formed line per request, in both modes.

use std::io::{Read, Write};

use servelab_server::{Engine, LogMode, LogTarget};

use crate::support::*;

/// Checks one Combined Log Format line with the service time appended.
fn check_line(line: &str) -> (u16, String) {
    // 127.0.0.1 - - [22/Nov/2026:10:00:00 +0000] "GET /x HTTP/1.1" 200 13 "-" "ua" 57
    let (prefix, rest) = line.split_once(" - - [").expect(line);
    assert_eq!(prefix, "127.0.0.1", "{line}");
    let (date, rest) = rest.split_once("] \"").expect(line);
    assert_eq!(date.len(), 26, "{line}");
    assert!(date.ends_with(" +0000"));
    let (request, rest) = rest.split_once("\" ").expect(line);
    let mut fields = rest.splitn(3, ' ');
    let status: u16 = fields.next().unwrap().parse().expect(line);
    let bytes = fields.next().unwrap();
    assert!(bytes == "-" || bytes.parse::<u64>().is_ok(), "{line}");
    let tail = fields.next().unwrap();
    let (quoted, us) = tail.rsplit_once(' ').expect(line);
    assert!(quoted.starts_with('"') && quoted.ends_with('"'), "{line}");
    us.parse::<u64>().expect(line);
    (status, request.to_owned())
}

#[test]
fn concurrent_requests_one_line_each() {
    for &engine in Engine::ALL {
        for mode in [LogMode::Sync, LogMode::Buffered] {
            let dir = fixture();
            let logdir = tempfile::tempdir().unwrap();
            let log = logdir.path().join("access.log");
            let server = start(dir.path(), engine, |c| {
                c.log = LogTarget::File(log.clone());
                c.log_mode = mode;
                c.workers = 4;
            });
            let addr = server.local_addr();
            let (clients, per_client) = (8, 25);
            std::thread::scope(|s| {
                for t in 0..clients {
                    s.spawn(move || {
                        for i in 0..per_client {
                            let path = if i % 5 == 4 { "/missing".to_owned() } else { format!("/hello.txt?c={t}&i={i}") };
                            let r = get(
                                addr,
                                &format!("GET {path} HTTP/1.1\r\nHost: t\r\nUser-Agent: test \"quoted\"\r\nConnection: close\r\n\r\n"),
                            );
                            assert!(r.status == 200 || r.status == 404);
                        }
                    });
                }
            });
            server.shutdown().unwrap();
            let text = std::fs::read_to_string(&log).unwrap();
            let lines: Vec<&str> = text.lines().collect();
            assert_eq!(lines.len(), clients * per_client, "{engine} {mode:?}");
            let mut not_found = 0;
            for l in &lines {
                let (status, request) = check_line(l);
                assert!(request.starts_with("GET /"), "{l}");
                if status == 404 {
                    not_found += 1;
                }
                assert!(
                    l.contains("\"test \\\"quoted\\\"\""),
                    "escaped user agent: {l}"
                );
            }
            assert_eq!(not_found, clients * per_client / 5);
        }
    }
}

#[test]
fn connection_lines_when_asked() {
    let dir = fixture();
    let logdir = tempfile::tempdir().unwrap();
    let log = logdir.path().join("access.log");
    let server = start(dir.path(), Engine::Pool, |c| {
        c.log = LogTarget::File(log.clone());
        c.log_connections = true;
    });
    let mut s = connect(server.local_addr());
    s.write_all(b"GET /hello.txt HTTP/1.1\r\nHost: t\r\n\r\nGET /hello.txt HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
        .unwrap();
    let mut out = Vec::new();
    s.read_to_end(&mut out).unwrap();
    server.shutdown().unwrap();
    let text = std::fs::read_to_string(&log).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 4, "{text}");
    assert!(lines[0].starts_with("conn 127.0.0.1:") && lines[0].contains(" open "));
    assert!(
        lines[3].contains(" close ") && lines[3].contains("requests=2"),
        "{text}"
    );
}
