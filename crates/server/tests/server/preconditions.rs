//! `If-Match` and `If-Unmodified-Since` answer 412 when they fail, in the order
//! of RFC 9110 13.2.2 (before `If-None-Match`/`If-Modified-Since`).

use crate::support::*;

fn req(path: &str, fields: &str) -> String {
    format!("GET {path} HTTP/1.1\r\nHost: t\r\n{fields}Connection: close\r\n\r\n")
}

#[test]
fn failing_preconditions_give_412() {
    each_engine(|engine, addr, _| {
        let etag = simple(addr, "/hello.txt")
            .header("etag")
            .unwrap()
            .to_owned();
        let lm = simple(addr, "/hello.txt")
            .header("last-modified")
            .unwrap()
            .to_owned();

        let r = get(addr, &req("/hello.txt", "If-Match: \"nope\"\r\n"));
        assert_eq!(r.status, 412, "{engine}");
        assert_eq!(
            get(
                addr,
                &req("/hello.txt", &format!("If-Match: \"x\", {etag}\r\n"))
            )
            .status,
            200
        );
        assert_eq!(get(addr, &req("/hello.txt", "If-Match: *\r\n")).status, 200);
        // Weak tags never match If-Match (strong comparison).
        assert_eq!(
            get(addr, &req("/hello.txt", &format!("If-Match: W/{etag}\r\n"))).status,
            412
        );

        let old = "If-Unmodified-Since: Sun, 06 Nov 1994 08:49:37 GMT\r\n";
        assert_eq!(get(addr, &req("/hello.txt", old)).status, 412, "{engine}");
        assert_eq!(
            get(
                addr,
                &req("/hello.txt", &format!("If-Unmodified-Since: {lm}\r\n"))
            )
            .status,
            200
        );
        assert_eq!(
            get(addr, &req("/hello.txt", "If-Unmodified-Since: soon\r\n")).status,
            200
        );
        // If-Match present: If-Unmodified-Since is ignored.
        let both = format!("If-Match: {etag}\r\n{old}");
        assert_eq!(get(addr, &req("/hello.txt", &both)).status, 200, "{engine}");
        // A failed precondition wins over a matching If-None-Match.
        let both = format!("If-Match: \"nope\"\r\nIf-None-Match: {etag}\r\n");
        assert_eq!(get(addr, &req("/hello.txt", &both)).status, 412, "{engine}");
        // Passing, the cache validators still decide.
        let both = format!("If-Match: {etag}\r\nIf-None-Match: {etag}\r\n");
        assert_eq!(get(addr, &req("/hello.txt", &both)).status, 304, "{engine}");
        // HEAD: no body; a missing file stays 404.
        let h = get(
            addr,
            "HEAD /hello.txt HTTP/1.1\r\nHost: t\r\nIf-Match: \"n\"\r\nConnection: close\r\n\r\n",
        );
        assert_eq!((h.status, h.body.len()), (412, 0));
        assert_eq!(
            get(addr, &req("/missing", "If-Match: \"n\"\r\n")).status,
            404
        );
    });
}

/// The 412 keeps a kept-alive connection usable: it is a normal answer.
#[test]
fn keep_alive_after_412() {
    each_engine(|engine, addr, _| {
        let raw = exchange(
            addr,
            b"GET /hello.txt HTTP/1.1\r\nHost: t\r\nIf-Match: \"n\"\r\n\r\nGET /hello.txt HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n",
        );
        let (first, used) = parse_one(&raw, false);
        let (second, _) = parse_one(&raw[used..], false);
        assert_eq!((first.status, second.status), (412, 200), "{engine}");
    });
}
