//! `--autoindex`: a directory without `index.html` gets a sorted, escaped HTML
//! listing that hides dotfiles and never shows anything outside the root; without
//! the flag the answer stays a 404.

use servelab_server::Engine;

use crate::support::*;

/// Extra files for the listing: a dotfile, a hostile name, a subdirectory.
fn plant(root: &std::path::Path) {
    let d = root.join("noindex");
    std::fs::write(d.join(".secret"), "hidden").unwrap();
    std::fs::write(d.join("<b>&'.txt"), "odd").unwrap();
    std::fs::write(d.join("B.txt"), "bb").unwrap();
    std::fs::create_dir(d.join("zdir")).unwrap();
}

/// The hrefs of a listing, in page order.
fn hrefs(html: &str) -> Vec<String> {
    html.split("<a href=\"")
        .skip(1)
        .map(|s| s[..s.find('"').unwrap()].to_owned())
        .collect()
}

#[test]
fn off_by_default() {
    each_engine(|engine, addr, _| {
        let r = simple(addr, "/noindex/");
        assert_eq!(r.status, 404, "{engine}");
    });
}

#[test]
fn listing_is_sorted_escaped_and_hides_dotfiles() {
    for engine in Engine::here() {
        let dir = fixture();
        plant(dir.path());
        let outside = tempfile::tempdir().unwrap();
        plant_escape(dir.path(), outside.path());
        std::fs::create_dir(dir.path().join("empty")).unwrap();
        let server = start(dir.path(), engine, |c| c.autoindex = true);
        let addr = server.local_addr();

        let r = simple(addr, "/noindex/");
        assert_eq!(r.status, 200, "{engine}");
        assert_eq!(r.header("content-type"), Some("text/html; charset=utf-8"));
        let html = String::from_utf8(r.body.clone()).unwrap();
        assert_eq!(
            hrefs(&html),
            ["../", "zdir/", "%3Cb%3E%26%27.txt", "B.txt", "x.txt"],
            "{engine}: {html}"
        );
        assert!(html.contains("&lt;b&gt;&amp;&#39;.txt</a>"), "{engine}");
        assert!(!html.contains("secret"), "{engine}: dotfile listed");
        assert!(
            html.contains("<td class=\"n\" title=\"2 bytes\">2 B</td>"),
            "{engine}: B.txt's size"
        );

        // The links work, the escaped one included.
        assert_eq!(simple(addr, "/noindex/%3Cb%3E%26%27.txt").body, b"odd");
        // HEAD: same length, no body.
        let h = get(
            addr,
            "HEAD /noindex/ HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n",
        );
        assert_eq!(h.status, 200);
        assert_eq!(
            h.header("content-length"),
            Some(r.body.len().to_string().as_str())
        );
        // Unchanged: a directory with index.html, the redirect without a slash.
        assert_eq!(simple(addr, "/sub/").body, b"<p>sub</p>");
        assert_eq!(simple(addr, "/noindex").status, 301);
        // The root has an index.html; an empty directory lists only its parent.
        assert_eq!(
            simple(addr, "/").body,
            b"<!doctype html><title>root</title>"
        );
        assert_eq!(
            hrefs(&String::from_utf8(simple(addr, "/empty/").body).unwrap()),
            ["../"]
        );
        // Never outside the root: a symlink to a directory outside is not found.
        assert_eq!(simple(addr, "/linkdir/").status, 404, "{engine}");
        // A dotfile directory is not listed either.
        std::fs::create_dir(dir.path().join(".git")).unwrap();
        assert_eq!(simple(addr, "/.git/").status, 404, "{engine}");
        server.shutdown().unwrap();
    }
}
