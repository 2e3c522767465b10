//! Validators and 304.

use crate::support::*;

#[test]
fn if_none_match_and_if_modified_since_give_304() {
    each_engine(|engine, addr, _| {
        let first = simple(addr, "/hello.txt");
        let etag = first.header("etag").unwrap().to_owned();
        let lm = first.header("last-modified").unwrap().to_owned();
        let r = get(
            addr,
            &format!(
                "GET /hello.txt HTTP/1.1\r\nHost: t\r\nIf-None-Match: {etag}\r\nConnection: close\r\n\r\n"
            ),
        );
        assert_eq!(r.status, 304, "{engine}");
        assert!(r.body.is_empty());
        assert_eq!(r.header("etag"), Some(etag.as_str()));
        let r = get(
            addr,
            &format!(
                "GET /hello.txt HTTP/1.1\r\nHost: t\r\nIf-Modified-Since: {lm}\r\nConnection: close\r\n\r\n"
            ),
        );
        assert_eq!(r.status, 304);
        // If-None-Match wins over If-Modified-Since (RFC 9110 13.2.2).
        let r = get(
            addr,
            &format!(
                "GET /hello.txt HTTP/1.1\r\nHost: t\r\nIf-None-Match: \"other\"\r\nIf-Modified-Since: {lm}\r\nConnection: close\r\n\r\n"
            ),
        );
        assert_eq!(r.status, 200);
        let r = get(
            addr,
            "GET /hello.txt HTTP/1.1\r\nHost: t\r\nIf-Modified-Since: Sat, 01 Jan 2000 00:00:00 GMT\r\nConnection: close\r\n\r\n",
        );
        assert_eq!(r.status, 200);
    });
}
