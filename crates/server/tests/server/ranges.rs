//! Byte ranges: 206, 416, If-Range, multipart.

use crate::support::*;

fn range(addr: std::net::SocketAddr, path: &str, extra: &str) -> Resp {
    get(
        addr,
        &format!("GET {path} HTTP/1.1\r\nHost: t\r\n{extra}Connection: close\r\n\r\n"),
    )
}

#[test]
fn single_ranges() {
    let big = big_bytes();
    each_engine(|engine, addr, _| {
        let r = range(addr, "/big.bin", "Range: bytes=100-199\r\n");
        assert_eq!(r.status, 206, "{engine}");
        assert_eq!(r.header("content-range"), Some("bytes 100-199/1048576"));
        assert_eq!(r.body, &big[100..200]);
        let r = range(addr, "/big.bin", "Range: bytes=-10\r\n");
        assert_eq!(r.body, &big[big.len() - 10..]);
        let r = range(addr, "/big.bin", "Range: bytes=1000000-\r\n");
        assert_eq!(r.body, &big[1_000_000..]);
        let r = range(addr, "/hello.txt", "Range: bytes=0-4\r\n");
        assert_eq!(r.body, b"hello");
    });
}

#[test]
fn unsatisfiable_and_overflow() {
    each_engine(|engine, addr, _| {
        let r = range(addr, "/hello.txt", "Range: bytes=100-200\r\n");
        assert_eq!(r.status, 416, "{engine}");
        assert_eq!(r.header("content-range"), Some("bytes */13"));
        // nginx CVE-2017-7529 class: huge numbers must not wrap around.
        let r = range(addr, "/hello.txt", "Range: bytes=-18446744073709551615\r\n");
        assert!(r.status == 200 || r.status == 206, "{engine}: {}", r.status);
        assert_eq!(r.body, b"hello, world\n");
        let r = range(addr, "/hello.txt", "Range: bytes=18446744073709551615-\r\n");
        assert_eq!(r.status, 416);
        // Not a byte range: ignored.
        let r = range(addr, "/hello.txt", "Range: items=0-1\r\n");
        assert_eq!(r.status, 200);
    });
}

#[test]
fn if_range() {
    each_engine(|engine, addr, _| {
        let etag = simple(addr, "/hello.txt")
            .header("etag")
            .unwrap()
            .to_owned();
        let r = range(
            addr,
            "/hello.txt",
            &format!("Range: bytes=0-4\r\nIf-Range: {etag}\r\n"),
        );
        assert_eq!(r.status, 206, "{engine}");
        let r = range(
            addr,
            "/hello.txt",
            "Range: bytes=0-4\r\nIf-Range: \"stale\"\r\n",
        );
        assert_eq!(r.status, 200);
        assert_eq!(r.body, b"hello, world\n");
    });
}

#[test]
fn multipart_byteranges() {
    let big = big_bytes();
    each_engine(|engine, addr, _| {
        let r = range(addr, "/big.bin", "Range: bytes=0-9,500000-500009\r\n");
        assert_eq!(r.status, 206, "{engine}");
        let ctype = r.header("content-type").unwrap();
        let boundary = ctype
            .strip_prefix("multipart/byteranges; boundary=")
            .expect(ctype);
        let text = r.body.clone();
        let sep = format!("--{boundary}");
        let n_parts = text
            .windows(sep.len())
            .filter(|w| *w == sep.as_bytes())
            .count();
        assert_eq!(n_parts, 3, "two parts and the closing delimiter");
        let find = |needle: &[u8]| text.windows(needle.len()).any(|w| w == needle);
        assert!(find(&big[0..10]));
        assert!(find(&big[500_000..500_010]));
        assert!(find(b"Content-Range: bytes 500000-500009/1048576"));
        assert!(text.ends_with(format!("--{boundary}--\r\n").as_bytes()));
    });
}
