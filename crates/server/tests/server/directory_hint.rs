//! A directory without `index.html`, served without `--autoindex`: the 404 page
//! says that `--autoindex` would list it, and names no path. A path that does
//! not exist keeps the plain 404, so the hint tells nothing a listing would not.

use crate::support::*;

#[test]
fn a_directory_without_index_names_the_flag() {
    each_engine(|engine, addr, root| {
        let r = simple(addr, "/noindex/");
        assert_eq!(r.status, 404, "{engine}");
        assert_eq!(r.header("content-type"), Some("text/html; charset=utf-8"));
        let page = String::from_utf8(r.body).unwrap();
        assert!(page.contains("--autoindex"), "{engine}: {page}");
        assert!(page.contains("no index.html"), "{engine}: {page}");
        let root = root.to_str().unwrap();
        assert!(!page.contains(root), "{engine}: leaks {root}");
        assert!(!page.contains("noindex"), "{engine}: {page}");
        // HEAD: the same length, no body.
        let h = get(
            addr,
            "HEAD /noindex/ HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n",
        );
        assert_eq!(h.status, 404, "{engine}");
        assert_eq!(
            h.header("content-length"),
            Some(page.len().to_string().as_str())
        );
    });
}

#[test]
fn a_missing_path_keeps_the_plain_404() {
    each_engine(|engine, addr, _| {
        for path in ["/missing/", "/missing", "/noindex/missing/", "/hello.txt/"] {
            let r = simple(addr, path);
            assert_eq!(r.status, 404, "{engine} {path}");
            let page = String::from_utf8(r.body).unwrap();
            assert!(!page.contains("autoindex"), "{engine} {path}: {page}");
        }
    });
}

#[test]
fn with_the_flag_the_directory_is_listed() {
    for engine in servelab_server::Engine::here() {
        let dir = fixture();
        let server = start(dir.path(), engine, |c| c.autoindex = true);
        let r = simple(server.local_addr(), "/noindex/");
        assert_eq!(r.status, 200, "{engine}");
        assert!(String::from_utf8(r.body).unwrap().contains("x.txt"));
        server.shutdown().unwrap();
    }
}
