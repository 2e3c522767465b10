//! Files, directories, types and HEAD.

use crate::support::*;

#[test]
fn serves_files_with_type_length_and_validators() {
    each_engine(|engine, addr, _| {
        let r = simple(addr, "/hello.txt");
        assert_eq!(r.status, 200, "{engine}");
        assert_eq!(r.body, b"hello, world\n");
        assert_eq!(r.header("content-type"), Some("text/plain; charset=utf-8"));
        assert!(r.header("etag").unwrap().starts_with('"'));
        assert!(r.header("last-modified").unwrap().ends_with("GMT"));
        assert_eq!(r.header("accept-ranges"), Some("bytes"));
        let css = simple(addr, "/style.css");
        assert!(css.header("content-type").unwrap().starts_with("text/css"));
        let big = simple(addr, "/big.bin");
        assert_eq!(big.status, 200);
        assert_eq!(big.body, big_bytes(), "{engine}: 1 MiB body intact");
    });
}

#[test]
fn directories_index_and_redirect() {
    each_engine(|engine, addr, _| {
        let r = simple(addr, "/");
        assert_eq!(r.status, 200, "{engine}");
        assert!(r.header("content-type").unwrap().starts_with("text/html"));
        assert_eq!(r.body, b"<!doctype html><title>root</title>");
        assert_eq!(simple(addr, "/sub/").body, b"<p>sub</p>");
        let redirect = simple(addr, "/sub?x=1");
        assert_eq!(redirect.status, 301);
        assert_eq!(redirect.header("location"), Some("/sub/?x=1"));
        assert_eq!(simple(addr, "/noindex/").status, 404);
        assert_eq!(simple(addr, "/with%20space.txt").body, b"space");
    });
}

#[test]
fn missing_is_404_with_html() {
    each_engine(|engine, addr, _| {
        let r = simple(addr, "/nope.txt");
        assert_eq!(r.status, 404, "{engine}");
        assert!(r.header("content-type").unwrap().starts_with("text/html"));
        assert!(!r.body.is_empty());
        assert_eq!(simple(addr, "/hello.txt/").status, 404);
    });
}

#[test]
fn unreadable_is_403() {
    // Root ignores permissions; only meaningful for other users.
    if rustix::process::geteuid().is_root() {
        return;
    }
    each_engine(|_, addr, root| {
        let p = root.join("locked.txt");
        std::fs::write(&p, "x").unwrap();
        std::fs::set_permissions(&p, std::os::unix::fs::PermissionsExt::from_mode(0o000)).unwrap();
        assert_eq!(simple(addr, "/locked.txt").status, 403);
    });
}

#[test]
fn head_has_get_headers_and_no_body() {
    each_engine(|engine, addr, _| {
        for path in ["/hello.txt", "/big.bin", "/nope", "/sub"] {
            let g = simple(addr, path);
            let h = get(
                addr,
                &format!("HEAD {path} HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n"),
            );
            assert_eq!(g.status, h.status, "{engine} {path}");
            let strip = |r: &Resp| {
                r.headers
                    .iter()
                    .filter(|(n, _)| !n.eq_ignore_ascii_case("date"))
                    .cloned()
                    .collect::<Vec<_>>()
            };
            assert_eq!(
                strip(&g),
                strip(&h),
                "{engine} {path}: HEAD headers = GET headers"
            );
            assert!(h.body.is_empty());
        }
    });
}
