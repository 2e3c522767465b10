//! Dotfiles are 404 unless `--dotfiles serve`, at any depth and however the
//! dot is spelled; `/.well-known/` (RFC 8615) is always served.

use servelab_server::{Dotfiles, Engine};

use crate::support::*;

fn plant(root: &std::path::Path) {
    std::fs::write(root.join(".env"), "SECRET=1").unwrap();
    std::fs::create_dir_all(root.join("sub/.git")).unwrap();
    std::fs::write(root.join("sub/.git/config"), "[core]").unwrap();
    std::fs::create_dir(root.join(".well-known")).unwrap();
    std::fs::write(root.join(".well-known/security.txt"), "Contact: x").unwrap();
    std::fs::write(root.join(".well-known/.hidden"), "h").unwrap();
}

#[test]
fn hidden_by_default_well_known_served() {
    for engine in Engine::here() {
        let dir = fixture();
        plant(dir.path());
        let server = start(dir.path(), engine, |_| {});
        let addr = server.local_addr();
        for path in [
            "/.env",
            "/%2eenv",
            "/sub/.git/config",
            "/sub/.git/",
            "/.well-known/.hidden",
            "/sub/./.git/config",
        ] {
            let r = simple(addr, path);
            assert_eq!(r.status, 404, "{engine} {path}");
            assert!(!String::from_utf8_lossy(&r.body).contains("SECRET"));
        }
        let r = simple(addr, "/.well-known/security.txt");
        assert_eq!(
            (r.status, r.body.as_slice()),
            (200, &b"Contact: x"[..]),
            "{engine}"
        );
        assert_eq!(simple(addr, "/hello.txt").status, 200);
        server.shutdown().unwrap();
    }
}

#[test]
fn served_when_asked() {
    for engine in Engine::here() {
        let dir = fixture();
        plant(dir.path());
        let server = start(dir.path(), engine, |c| c.dotfiles = Dotfiles::Serve);
        let addr = server.local_addr();
        assert_eq!(simple(addr, "/.env").body, b"SECRET=1", "{engine}");
        assert_eq!(simple(addr, "/sub/.git/config").status, 200, "{engine}");
        assert_eq!(simple(addr, "/.well-known/.hidden").status, 200, "{engine}");
        server.shutdown().unwrap();
    }
}
