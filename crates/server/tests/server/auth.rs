//! `--auth FILE`: HTTP Basic against bcrypt hashes, on every engine. Without
//! valid credentials every path, `/-/status` included, is 401 with the
//! challenge; with them the site is served as usual, request after request on
//! one kept-alive connection.

use std::io::{Read, Write};

use servelab_server::{Config, Engine, Server, ServerError};

use crate::support::*;

// `htpasswd -nbB -C 4 alice 'open sesame'`.
const USERS: &str =
    "# made with htpasswd -B\nalice:$2y$04$fuOjydCsmQ/JjZ0nf22ipu5p8OPAkHr0TQcPjDjGos8q0pgx7kv8C\n";
/// `alice:open sesame` in base64.
const ALICE: &str = "YWxpY2U6b3BlbiBzZXNhbWU=";
/// `alice:wrong`.
const WRONG: &str = "YWxpY2U6d3Jvbmc=";
/// `mallory:open sesame`.
const STRANGER: &str = "bWFsbG9yeTpvcGVuIHNlc2FtZQ==";

fn with_auth(addr: std::net::SocketAddr, path: &str, token: Option<&str>) -> Resp {
    let field = token.map_or(String::new(), |t| format!("Authorization: Basic {t}\r\n"));
    get(
        addr,
        &format!("GET {path} HTTP/1.1\r\nHost: t\r\n{field}Connection: close\r\n\r\n"),
    )
}

#[test]
fn only_valid_credentials_get_through_on_every_engine() {
    for engine in Engine::here() {
        let dir = fixture();
        let users = dir.path().join(".users");
        std::fs::write(&users, USERS).unwrap();
        let server = start(dir.path(), engine, |c| {
            c.auth = Some(users.clone());
            c.status = true;
        });
        let addr = server.local_addr();
        for path in ["/", "/hello.txt", "/missing", "/-/status", "/-/metrics"] {
            for token in [None, Some(WRONG), Some(STRANGER)] {
                let r = with_auth(addr, path, token);
                assert_eq!(r.status, 401, "{engine} {path} {token:?}");
                assert_eq!(
                    r.header("www-authenticate"),
                    Some("Basic realm=\"servelab\", charset=\"UTF-8\""),
                    "{engine}"
                );
                assert!(String::from_utf8_lossy(&r.body).contains("401"), "{engine}");
            }
        }
        assert_eq!(
            with_auth(addr, "/hello.txt", Some(ALICE)).body,
            b"hello, world\n"
        );
        assert_eq!(
            with_auth(addr, "/missing", Some(ALICE)).status,
            404,
            "{engine}"
        );
        assert_eq!(
            with_auth(addr, "/-/status", Some(ALICE)).status,
            200,
            "{engine}"
        );
        // HEAD without credentials: the challenge, no body.
        let h = get(
            addr,
            "HEAD / HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n",
        );
        assert_eq!(h.status, 401, "{engine}");
        assert!(h.body.is_empty(), "{engine}");
        // Several requests on one connection: every one is checked.
        let mut s = connect(addr);
        let ok =
            format!("GET /hello.txt HTTP/1.1\r\nHost: t\r\nAuthorization: Basic {ALICE}\r\n\r\n");
        let bad = "GET /hello.txt HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n";
        s.write_all(format!("{ok}{ok}{bad}").as_bytes()).unwrap();
        let mut raw = Vec::new();
        let _ = s.read_to_end(&mut raw);
        let (a, n) = parse_one(&raw, false);
        let (b, m) = parse_one(&raw[n..], false);
        let (c, _) = parse_one(&raw[n + m..], false);
        assert_eq!((a.status, b.status, c.status), (200, 200, 401), "{engine}");
        server.shutdown().unwrap();
    }
}

#[test]
fn a_weak_password_file_stops_the_server_from_starting() {
    let dir = fixture();
    let users = dir.path().join("users");
    std::fs::write(&users, "alice:open sesame\n").unwrap();
    let mut config = Config::new(dir.path());
    config.auth = Some(users);
    let err = Server::bind(config).unwrap_err();
    assert!(matches!(err, ServerError::Auth { .. }), "{err:?}");
    assert!(err.to_string().contains("plaintext"), "{err}");
}
