//! The access log: exactly one well-formed line per request, in both modes.

use std::io::{Read, Write};

use servelab_server::{Engine, LogFormat, LogMode, LogTarget};

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
    for engine in Engine::here() {
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

/// `--log-connections` on every engine and in both formats: the open line
/// first, the close line after the lines of the connection's requests, and in
/// a JSON log every line JSON. Regressions: the close line was never JSON, and
/// on `event` (selector and workers logging into separate buffers) it could
/// come before the request lines.
#[test]
fn connection_lines_when_asked() {
    for engine in Engine::here() {
        for format in [LogFormat::Combined, LogFormat::Json] {
            let dir = fixture();
            let logdir = tempfile::tempdir().unwrap();
            let log = logdir.path().join("access.log");
            let server = start(dir.path(), engine, |c| {
                c.log = LogTarget::File(log.clone());
                c.log_format = format;
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
            let what = format!("{engine} {}: {text}", format.name());
            assert_eq!(lines.len(), 4, "{what}");
            match format {
                LogFormat::Combined => {
                    assert!(
                        lines[0].starts_with("conn 127.0.0.1:") && lines[0].contains(" open "),
                        "{what}"
                    );
                    assert!(
                        lines[1].contains("\"GET /hello.txt HTTP/1.1\" 200 "),
                        "{what}"
                    );
                    assert!(
                        lines[2].contains("\"GET /hello.txt HTTP/1.1\" 200 "),
                        "{what}"
                    );
                    assert!(
                        lines[3].contains(" close ") && lines[3].contains("requests=2"),
                        "{what}"
                    );
                }
                LogFormat::Json => {
                    let v: Vec<serde_json::Value> = lines
                        .iter()
                        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{what}: {e}")))
                        .collect();
                    assert_eq!(v[0]["conn"], "open", "{what}");
                    assert_eq!(
                        (&v[1]["status"], &v[2]["status"]),
                        (&200.into(), &200.into()),
                        "{what}"
                    );
                    assert_eq!(
                        (&v[3]["conn"], &v[3]["requests"]),
                        (&"close".into(), &2.into()),
                        "{what}"
                    );
                    assert!(
                        v[3]["peer"].as_str().unwrap().starts_with("127.0.0.1:"),
                        "{what}"
                    );
                }
            }
        }
    }
}
