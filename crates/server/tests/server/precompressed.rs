//! Precompressed files: `X.br`, `X.zst` and `X.gz` beside `X` are sent when
//! `Accept-Encoding` allows them (q-values honoured, identity always possible),
//! with `Content-Encoding`, `Vary` and an ETag per encoding; ranges and
//! conditional requests apply to the representation sent. The server never
//! compresses: the "compressed" fixtures here are marker bytes, so a test can
//! tell which file was sent.

use std::net::SocketAddr;

use servelab_server::Engine;

use crate::support::*;

const PLAIN: &str = "console.log('plain');\n";
const GZ: &str = "GZIP-BYTES-0123456789";
const BR: &str = "BROTLI-BYTES";

fn plant(root: &std::path::Path) {
    std::fs::write(root.join("app.js"), PLAIN).unwrap();
    std::fs::write(root.join("app.js.gz"), GZ).unwrap();
    std::fs::write(root.join("app.js.br"), BR).unwrap();
}

fn get_ae(addr: SocketAddr, path: &str, extra: &str) -> Resp {
    get(
        addr,
        &format!("GET {path} HTTP/1.1\r\nHost: t\r\n{extra}Connection: close\r\n\r\n"),
    )
}

fn each(scenario: impl Fn(Engine, SocketAddr)) {
    for engine in Engine::here() {
        let dir = fixture();
        plant(dir.path());
        let server = start(dir.path(), engine, |_| {});
        scenario(engine, server.local_addr());
        server.shutdown().unwrap();
    }
}

#[test]
fn negotiation_by_q_value_then_server_preference() {
    each(|engine, addr| {
        let r = get_ae(
            addr,
            "/app.js",
            "Accept-Encoding: gzip, deflate, br, zstd\r\n",
        );
        assert_eq!(r.status, 200, "{engine}");
        assert_eq!(r.body, BR.as_bytes(), "{engine}");
        assert_eq!(r.header("content-encoding"), Some("br"));
        assert_eq!(r.header("vary"), Some("Accept-Encoding"));
        assert!(r.header("content-type").unwrap().contains("javascript"));
        assert!(r.header("etag").unwrap().ends_with("-br\""));

        let r = get_ae(addr, "/app.js", "Accept-Encoding: br;q=0.5, gzip\r\n");
        assert_eq!(
            (r.body.as_slice(), r.header("content-encoding")),
            (GZ.as_bytes(), Some("gzip"))
        );
        let r = get_ae(addr, "/app.js", "Accept-Encoding: x-gzip\r\n");
        assert_eq!(r.body, GZ.as_bytes(), "{engine}");
        let r = get_ae(addr, "/app.js", "Accept-Encoding: zstd\r\n");
        assert_eq!(r.body, PLAIN.as_bytes(), "{engine}: no .zst on disk");
    });
}

#[test]
fn q_zero_and_identity() {
    each(|engine, addr| {
        // q=0 excludes; the plain file is always possible.
        let r = get_ae(addr, "/app.js", "Accept-Encoding: br;q=0, gzip;q=0\r\n");
        assert_eq!(r.status, 200, "{engine}");
        assert_eq!(r.body, PLAIN.as_bytes());
        assert_eq!(r.header("content-encoding"), None);
        assert_eq!(
            r.header("vary"),
            Some("Accept-Encoding"),
            "the choice depended on it"
        );
        // No field: the plain file (clients that did not ask may not decode).
        let r = get_ae(addr, "/app.js", "");
        assert_eq!(
            (r.body.as_slice(), r.header("content-encoding")),
            (PLAIN.as_bytes(), None)
        );
        // Identity weighed higher than the files.
        let r = get_ae(addr, "/app.js", "Accept-Encoding: identity, gzip;q=0.5\r\n");
        assert_eq!(r.body, PLAIN.as_bytes(), "{engine}");
        // Identity excluded: an encoded file if one is acceptable, else 406.
        let r = get_ae(addr, "/app.js", "Accept-Encoding: gzip, identity;q=0\r\n");
        assert_eq!(r.body, GZ.as_bytes(), "{engine}");
        let r = get_ae(addr, "/hello.txt", "Accept-Encoding: *;q=0\r\n");
        assert_eq!(r.status, 406, "{engine}");
        let r = get_ae(addr, "/app.js", "Accept-Encoding: zstd, identity;q=0\r\n");
        assert_eq!(r.status, 406, "{engine}");
        // A file without siblings does not vary.
        let r = get_ae(addr, "/hello.txt", "Accept-Encoding: gzip, br\r\n");
        assert_eq!((r.status, r.header("vary")), (200, None), "{engine}");
        assert_eq!(r.header("content-encoding"), None);
    });
}

#[test]
fn ranges_and_validators_apply_to_the_encoded_file() {
    each(|engine, addr| {
        let r = get_ae(
            addr,
            "/app.js",
            "Accept-Encoding: gzip\r\nRange: bytes=5-9\r\n",
        );
        assert_eq!(r.status, 206, "{engine}");
        assert_eq!(r.body, &GZ.as_bytes()[5..10]);
        assert_eq!(
            r.header("content-range"),
            Some(format!("bytes 5-9/{}", GZ.len()).as_str())
        );
        assert_eq!(r.header("content-encoding"), Some("gzip"));
        assert_eq!(r.header("vary"), Some("Accept-Encoding"));
        let r = get_ae(
            addr,
            "/app.js",
            "Accept-Encoding: gzip\r\nRange: bytes=100-\r\n",
        );
        assert_eq!(r.status, 416, "{engine}");
        assert_eq!(
            r.header("content-range"),
            Some(format!("bytes */{}", GZ.len()).as_str())
        );

        let gz_tag = get_ae(addr, "/app.js", "Accept-Encoding: gzip\r\n")
            .header("etag")
            .unwrap()
            .to_owned();
        let plain_tag = get_ae(addr, "/app.js", "")
            .header("etag")
            .unwrap()
            .to_owned();
        assert_ne!(gz_tag, plain_tag);
        // 304 only for the representation the tag names.
        let r = get_ae(
            addr,
            "/app.js",
            &format!("Accept-Encoding: gzip\r\nIf-None-Match: {gz_tag}\r\n"),
        );
        assert_eq!(r.status, 304, "{engine}");
        assert_eq!(r.header("etag"), Some(gz_tag.as_str()));
        assert_eq!(r.header("vary"), Some("Accept-Encoding"));
        let r = get_ae(
            addr,
            "/app.js",
            &format!("Accept-Encoding: br\r\nIf-None-Match: {gz_tag}\r\n"),
        );
        assert_eq!(
            (r.status, r.body.as_slice()),
            (200, BR.as_bytes()),
            "{engine}"
        );
        // If-Range with the gzip tag honours a range only on the gzip file.
        let ir = format!("Accept-Encoding: gzip\r\nIf-Range: {gz_tag}\r\nRange: bytes=0-3\r\n");
        assert_eq!(get_ae(addr, "/app.js", &ir).status, 206, "{engine}");
        let ir = format!("If-Range: {gz_tag}\r\nRange: bytes=0-3\r\n");
        let r = get_ae(addr, "/app.js", &ir);
        assert_eq!(
            (r.status, r.body.as_slice()),
            (200, PLAIN.as_bytes()),
            "{engine}"
        );
        // If-Match against the representation sent.
        let r = get_ae(
            addr,
            "/app.js",
            &format!("Accept-Encoding: br\r\nIf-Match: {gz_tag}\r\n"),
        );
        assert_eq!(r.status, 412, "{engine}");
        // HEAD: the encoded length, no body.
        let h = get(
            addr,
            "HEAD /app.js HTTP/1.1\r\nHost: t\r\nAccept-Encoding: br\r\nConnection: close\r\n\r\n",
        );
        assert_eq!(
            h.header("content-length"),
            Some(BR.len().to_string().as_str())
        );
        assert_eq!(h.header("content-encoding"), Some("br"));
    });
}
