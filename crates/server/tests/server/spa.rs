//! `--spa`: a missing route gets the root's `index.html`; a missing asset (a
//! last segment with an extension) stays 404, and so does everything the
//! static rules answer first (files, directories, dotfiles, other methods).

use servelab_server::Engine;

use crate::support::*;

const ROOT_INDEX: &[u8] = b"<!doctype html><title>root</title>";

#[test]
fn routes_get_the_index_and_missing_assets_stay_404_on_every_engine() {
    for engine in Engine::here() {
        let dir = fixture();
        let server = start(dir.path(), engine, |c| c.spa = true);
        let addr = server.local_addr();
        for route in [
            "/users/42",
            "/settings",
            "/deep/route/with%20space/",
            "/noindex/x",
        ] {
            let r = simple(addr, route);
            assert_eq!(r.status, 200, "{engine} {route}");
            assert_eq!(r.body, ROOT_INDEX, "{engine} {route}");
            assert_eq!(r.header("content-type"), Some("text/html; charset=utf-8"));
            assert!(r.header("etag").is_some(), "{engine} {route}");
        }
        // HEAD: the index's length, no body.
        let h = get(
            addr,
            "HEAD /users/42 HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n",
        );
        assert_eq!(h.status, 200, "{engine}");
        assert_eq!(
            h.header("content-length"),
            Some(ROOT_INDEX.len().to_string().as_str()),
            "{engine}"
        );
        assert!(h.body.is_empty(), "{engine}");
        for asset in [
            "/app.js",
            "/assets/app.3f2a.css",
            "/users/42/avatar.png",
            "/favicon.ico",
        ] {
            assert_eq!(simple(addr, asset).status, 404, "{engine} {asset}");
        }
        // What exists is served as without --spa.
        assert_eq!(
            simple(addr, "/hello.txt").body,
            b"hello, world\n",
            "{engine}"
        );
        assert_eq!(simple(addr, "/sub/").body, b"<p>sub</p>", "{engine}");
        assert_eq!(simple(addr, "/sub").status, 301, "{engine}");
        // A directory without index.html is not a route; dotfiles stay hidden.
        assert_eq!(simple(addr, "/noindex/").status, 404, "{engine}");
        assert_eq!(simple(addr, "/.git/config").status, 404, "{engine}");
        assert_eq!(simple(addr, "/.env").status, 404, "{engine}");
        // Other methods are not routes.
        let p = get(
            addr,
            "POST /users/42 HTTP/1.1\r\nHost: t\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
        );
        assert_eq!(p.status, 405, "{engine}");
        server.shutdown().unwrap();
    }
}

#[test]
fn without_the_flag_a_route_is_404() {
    each_engine(|engine, addr, _| {
        assert_eq!(simple(addr, "/users/42").status, 404, "{engine}");
    });
}

#[test]
fn a_root_without_index_html_answers_404_for_routes() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "a").unwrap();
    let server = start(dir.path(), Engine::Pool, |c| c.spa = true);
    assert_eq!(simple(server.local_addr(), "/users/42").status, 404);
    server.shutdown().unwrap();
}
