//! `--header 'Name: value'` is added to every successful (2xx, 3xx) response,
//! not to errors.

use servelab_server::Engine;

use crate::support::*;

#[test]
fn added_to_successful_responses_only() {
    for engine in Engine::here() {
        let dir = fixture();
        let server = start(dir.path(), engine, |c| {
            c.headers = vec![
                "Cache-Control: max-age=60".parse().unwrap(),
                "Access-Control-Allow-Origin: *".parse().unwrap(),
            ];
        });
        let addr = server.local_addr();
        let ok = simple(addr, "/hello.txt");
        let etag = ok.header("etag").unwrap().to_owned();
        let partial = get(
            addr,
            "GET /big.bin HTTP/1.1\r\nHost: t\r\nRange: bytes=0-9\r\nConnection: close\r\n\r\n",
        );
        let not_modified = get(
            addr,
            &format!(
                "GET /hello.txt HTTP/1.1\r\nHost: t\r\nIf-None-Match: {etag}\r\nConnection: close\r\n\r\n"
            ),
        );
        let small_inline = simple(addr, "/style.css");
        let redirect = simple(addr, "/sub");
        for (what, r, code) in [
            ("200", &ok, 200),
            ("206", &partial, 206),
            ("304", &not_modified, 304),
            ("200 inline", &small_inline, 200),
            ("301", &redirect, 301),
        ] {
            assert_eq!(r.status, code, "{engine} {what}");
            assert_eq!(
                r.header("cache-control"),
                Some("max-age=60"),
                "{engine} {what}"
            );
            assert_eq!(
                r.header("access-control-allow-origin"),
                Some("*"),
                "{engine} {what}"
            );
        }
        assert_eq!(
            small_inline.body, b"body{}",
            "{engine}: body intact after the fields"
        );
        let missing = simple(addr, "/missing");
        assert_eq!(missing.status, 404);
        assert_eq!(missing.header("cache-control"), None, "{engine}");
        server.shutdown().unwrap();
    }
}
