//! `--compress`: text files compressed on the fly by `Accept-Encoding`, on every
//! engine. The bodies are decoded here as a client would, and compared with the
//! file's bytes; the rules around them (Vary, q=0, Range, HEAD, conditional
//! requests, a file that changes) are checked on the wire.

use std::io::Read;
use std::net::SocketAddr;
use std::path::Path;
use std::time::Duration;

use servelab_server::Engine;

use crate::support::*;

/// Text that compresses like a real page, not like one repeated byte: words
/// and numbers in an order drawn from a fixed generator. At 200 KB its
/// compressed bodies are larger than the 16 KiB kept inline, so they go out by
/// `sendfile` from a memfd.
fn page(len: usize) -> Vec<u8> {
    const WORDS: [&str; 8] = [
        "<li class=\"item\">",
        "servelab ",
        "compress ",
        "</li>\n",
        "request ",
        "the ",
        "response ",
        "<a href=\"/x\">",
    ];
    let mut x: u64 = 0x2545_f491_4f6c_dd1d;
    let mut out = Vec::with_capacity(len + 32);
    while out.len() < len {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        out.extend_from_slice(WORDS[(x % 8) as usize].as_bytes());
        out.extend_from_slice(format!("{} ", (x >> 8) % 10_000).as_bytes());
    }
    out.truncate(len);
    out
}

/// Files beside the fixture's: a page, a large script, a small text, an image
/// and a file with a precompressed sibling.
fn plant(root: &Path) {
    std::fs::write(root.join("page.html"), page(40_000)).unwrap();
    std::fs::write(root.join("app.js"), page(200_000)).unwrap();
    std::fs::write(root.join("pic.png"), page(40_000)).unwrap();
    std::fs::write(root.join("pre.css"), page(5_000)).unwrap();
    std::fs::write(root.join("pre.css.gz"), "STORED-GZIP").unwrap();
}

/// Runs `scenario` against a server with `--compress` for every engine.
fn each(scenario: impl Fn(Engine, SocketAddr, &Path)) {
    for engine in Engine::here() {
        let dir = fixture();
        plant(dir.path());
        let server = start(dir.path(), engine, |c| c.compress = true);
        scenario(engine, server.local_addr(), dir.path());
        server.shutdown().unwrap();
    }
}

fn req(method: &str, path: &str, extra: &str) -> String {
    format!("{method} {path} HTTP/1.1\r\nHost: t\r\n{extra}Connection: close\r\n\r\n")
}

fn get_ae(addr: SocketAddr, path: &str, extra: &str) -> Resp {
    get(addr, &req("GET", path, extra))
}

fn decode(coding: Option<&str>, body: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    match coding {
        None => out.extend_from_slice(body),
        Some("gzip") => {
            flate2::read::GzDecoder::new(body)
                .read_to_end(&mut out)
                .unwrap();
        }
        Some("br") => {
            brotli::Decompressor::new(body, 4096)
                .read_to_end(&mut out)
                .unwrap();
        }
        Some("zstd") => out = zstd::stream::decode_all(body).unwrap(),
        Some(other) => panic!("unexpected coding {other}"),
    }
    out
}

#[test]
fn each_coding_decodes_to_the_file() {
    each(|engine, addr, root| {
        for name in ["page.html", "app.js"] {
            let plain = std::fs::read(root.join(name)).unwrap();
            let identity = get_ae(addr, &format!("/{name}"), "");
            for coding in ["gzip", "br", "zstd"] {
                let ae = format!("Accept-Encoding: {coding}\r\n");
                let r = get_ae(addr, &format!("/{name}"), &ae);
                let ctx = format!("{engine} {name} {coding}");
                assert_eq!(r.status, 200, "{ctx}");
                assert_eq!(r.header("content-encoding"), Some(coding), "{ctx}");
                assert_eq!(r.header("vary"), Some("Accept-Encoding"), "{ctx}");
                assert_eq!(r.header("accept-ranges"), None, "{ctx}");
                assert_eq!(r.header("content-type"), identity.header("content-type"));
                assert_eq!(r.header("last-modified"), identity.header("last-modified"));
                assert!(r.body.len() * 2 < plain.len(), "{ctx}: {}", r.body.len());
                if name == "app.js" {
                    // Sent from a memfd by sendfile, not copied behind the head.
                    assert!(r.body.len() > 16 * 1024, "{ctx}: {}", r.body.len());
                }
                assert_eq!(decode(Some(coding), &r.body), plain, "{ctx}");
                let etag = r.header("etag").unwrap();
                let plain_etag = identity.header("etag").unwrap();
                assert_eq!(
                    etag,
                    format!("{}-{coding}\"", plain_etag.trim_end_matches('"')),
                    "{ctx}"
                );
            }
        }
    });
}

#[test]
fn weights_choose_and_q_zero_refuses() {
    each(|engine, addr, _| {
        let coding = |ae: &str| {
            let r = get_ae(addr, "/page.html", &format!("Accept-Encoding: {ae}\r\n"));
            assert_eq!(r.status, 200, "{engine} {ae}");
            assert_eq!(r.header("vary"), Some("Accept-Encoding"), "{engine} {ae}");
            r.header("content-encoding").map(str::to_owned)
        };
        assert_eq!(coding("gzip, deflate, br, zstd").as_deref(), Some("br"));
        assert_eq!(coding("gzip, zstd").as_deref(), Some("zstd"));
        assert_eq!(coding("br;q=0.5, gzip").as_deref(), Some("gzip"));
        assert_eq!(coding("br;q=0, zstd;q=0, gzip").as_deref(), Some("gzip"));
        assert_eq!(coding("gzip;q=0, br;q=0, zstd;q=0"), None);
        assert_eq!(coding("identity, gzip;q=0.5"), None);
        assert_eq!(coding("deflate"), None);
        // A file on disk wins on equal weights; weights still come first.
        let r = get_ae(addr, "/pre.css", "Accept-Encoding: gzip, br\r\n");
        assert_eq!(r.body, b"STORED-GZIP", "{engine}");
        let r = get_ae(addr, "/pre.css", "Accept-Encoding: br, gzip;q=0.5\r\n");
        assert_eq!(r.header("content-encoding"), Some("br"), "{engine}");
    });
}

#[test]
fn identity_when_not_asked_still_varies() {
    each(|engine, addr, root| {
        let r = get_ae(addr, "/page.html", "");
        assert_eq!(r.status, 200, "{engine}");
        assert_eq!(r.header("content-encoding"), None, "{engine}");
        assert_eq!(r.header("vary"), Some("Accept-Encoding"), "{engine}");
        assert_eq!(r.header("accept-ranges"), Some("bytes"), "{engine}");
        assert_eq!(r.body, std::fs::read(root.join("page.html")).unwrap());
    });
}

#[test]
fn small_files_and_images_are_not_compressed() {
    each(|engine, addr, _| {
        for path in ["/hello.txt", "/pic.png", "/big.bin", "/style.css"] {
            let r = get_ae(addr, path, "Accept-Encoding: gzip, br, zstd\r\n");
            assert_eq!(r.status, 200, "{engine} {path}");
            assert_eq!(r.header("content-encoding"), None, "{engine} {path}");
            assert_eq!(r.header("vary"), None, "{engine} {path}: cannot vary");
        }
        // 1 KiB is the floor, inclusive.
        let r = get_ae(addr, "/1k.txt", "Accept-Encoding: gzip\r\n");
        assert_eq!(r.header("content-encoding"), Some("gzip"), "{engine}");
        assert_eq!(decode(Some("gzip"), &r.body), vec![b'a'; 1024]);
    });
}

#[test]
fn a_range_gets_the_plain_file_and_its_validators() {
    each(|engine, addr, root| {
        let plain = std::fs::read(root.join("page.html")).unwrap();
        let identity = get_ae(addr, "/page.html", "");
        let r = get_ae(
            addr,
            "/page.html",
            "Accept-Encoding: gzip, br\r\nRange: bytes=100-199\r\n",
        );
        assert_eq!(r.status, 206, "{engine}");
        assert_eq!(r.header("content-encoding"), None, "{engine}");
        assert_eq!(r.body, &plain[100..200], "{engine}");
        assert_eq!(r.header("etag"), identity.header("etag"), "{engine}");
        assert_eq!(r.header("vary"), Some("Accept-Encoding"), "{engine}");
        let r = get_ae(
            addr,
            "/page.html",
            "Accept-Encoding: gzip\r\nRange: bytes=999999-\r\n",
        );
        assert_eq!(r.status, 416, "{engine}");
        assert_eq!(r.header("vary"), Some("Accept-Encoding"), "{engine}");
        // If-Range with the compressed tag does not name the plain file: 200,
        // the whole plain file.
        let gz = get_ae(addr, "/page.html", "Accept-Encoding: gzip\r\n");
        let if_range = format!(
            "Accept-Encoding: gzip\r\nRange: bytes=0-9\r\nIf-Range: {}\r\n",
            gz.header("etag").unwrap()
        );
        let r = get_ae(addr, "/page.html", &if_range);
        assert_eq!((r.status, r.body.len()), (200, plain.len()), "{engine}");
    });
}

#[test]
fn conditional_requests_use_the_compressed_tag() {
    each(|engine, addr, _| {
        let gz = get_ae(addr, "/page.html", "Accept-Encoding: gzip\r\n");
        let tag = gz.header("etag").unwrap();
        let r = get_ae(
            addr,
            "/page.html",
            &format!("Accept-Encoding: gzip\r\nIf-None-Match: {tag}\r\n"),
        );
        assert_eq!(r.status, 304, "{engine}");
        assert_eq!(r.header("etag"), Some(tag), "{engine}");
        assert_eq!(r.header("vary"), Some("Accept-Encoding"), "{engine}");
        // The same tag does not match the brotli or the plain representation.
        for ae in ["br", "identity"] {
            let r = get_ae(
                addr,
                "/page.html",
                &format!("Accept-Encoding: {ae}\r\nIf-None-Match: {tag}\r\n"),
            );
            assert_eq!(r.status, 200, "{engine} {ae}");
        }
        let r = get_ae(
            addr,
            "/page.html",
            &format!("Accept-Encoding: gzip\r\nIf-Match: {tag}\r\n"),
        );
        assert_eq!(r.status, 200, "{engine}: a strong tag passes If-Match");
        let r = get_ae(
            addr,
            "/page.html",
            "Accept-Encoding: gzip\r\nIf-Match: \"other\"\r\n",
        );
        assert_eq!(r.status, 412, "{engine}");
    });
}

#[test]
fn head_gives_the_fields_of_get() {
    each(|engine, addr, _| {
        for ae in ["", "Accept-Encoding: gzip\r\n", "Accept-Encoding: br\r\n"] {
            let g = get(addr, &req("GET", "/app.js", ae));
            let h = get(addr, &req("HEAD", "/app.js", ae));
            assert_eq!(h.status, g.status, "{engine} {ae:?}");
            assert!(h.body.is_empty());
            let fields = |r: &Resp| {
                let mut f: Vec<_> = r
                    .headers
                    .iter()
                    .filter(|(n, _)| !n.eq_ignore_ascii_case("date"))
                    .cloned()
                    .collect();
                f.sort();
                f
            };
            assert_eq!(fields(&h), fields(&g), "{engine} {ae:?}");
        }
    });
}

/// Regression guard for the cache of compressed bodies: a file rewritten in
/// place must never be served from its old compressed body. The file cache
/// trusts an entry for a second, so the check waits that long once for all
/// engines.
#[test]
fn a_changed_file_is_compressed_again() {
    let runs: Vec<_> = Engine::here()
        .map(|engine| {
            let dir = fixture();
            plant(dir.path());
            let server = start(dir.path(), engine, |c| c.compress = true);
            (engine, dir, server)
        })
        .collect();
    for (engine, _, server) in &runs {
        for coding in ["gzip", "br", "zstd"] {
            let ae = format!("Accept-Encoding: {coding}\r\n");
            let r = get_ae(server.local_addr(), "/page.html", &ae);
            assert_eq!(r.header("content-encoding"), Some(coding), "{engine}");
        }
    }
    for (_, dir, _) in &runs {
        // The same size: only the mtime tells the versions apart.
        let mut changed = page(40_000);
        changed[1000..1022].copy_from_slice(b"<p>a new paragraph</p>");
        std::fs::write(dir.path().join("page.html"), changed).unwrap();
    }
    std::thread::sleep(Duration::from_millis(1_100));
    for (engine, dir, server) in runs {
        let now = std::fs::read(dir.path().join("page.html")).unwrap();
        for coding in ["gzip", "br", "zstd"] {
            let ae = format!("Accept-Encoding: {coding}\r\n");
            let r = get_ae(server.local_addr(), "/page.html", &ae);
            assert_eq!(decode(Some(coding), &r.body), now, "{engine} {coding}");
        }
        server.shutdown().unwrap();
    }
}

#[test]
fn without_the_flag_nothing_is_compressed_or_varies() {
    each_engine(|engine, addr, root| {
        plant(root);
        let r = get_ae(addr, "/page.html", "Accept-Encoding: gzip, br, zstd\r\n");
        assert_eq!(r.status, 200, "{engine}");
        assert_eq!(r.header("content-encoding"), None, "{engine}");
        assert_eq!(r.header("vary"), None, "{engine}");
    });
}

/// Over HTTPS a large compressed body (kept in a memfd) is read and encrypted
/// like a file, on every engine.
#[test]
fn compressed_bodies_go_out_over_tls() {
    use std::io::Write;
    for engine in Engine::here() {
        let dir = fixture();
        plant(dir.path());
        let (source, client) = crate::tls::pki(dir.path());
        let server = start(dir.path(), engine, |c| {
            c.compress = true;
            c.tls = Some(source);
        });
        let mut s = crate::tls::tls_connect(server.local_addr(), &client);
        s.write_all(req("GET", "/app.js", "Accept-Encoding: zstd\r\n").as_bytes())
            .unwrap();
        let mut raw = Vec::new();
        s.read_to_end(&mut raw).unwrap();
        let (r, _) = parse_one(&raw, false);
        assert_eq!(r.header("content-encoding"), Some("zstd"), "{engine}");
        assert!(r.body.len() > 16 * 1024, "{engine}: {}", r.body.len());
        let plain = std::fs::read(dir.path().join("app.js")).unwrap();
        assert_eq!(decode(Some("zstd"), &r.body), plain, "{engine}");
        server.shutdown().unwrap();
    }
}
