//! Nothing outside the root is ever served, whatever the encoding.

use crate::support::*;

#[test]
fn traversal_attempts_never_escape() {
    let outside = tempfile::tempdir().unwrap();
    for engine in servelab_server::Engine::here() {
        let dir = fixture();
        let secret = plant_escape(dir.path(), outside.path());
        let server = start(dir.path(), engine, |_| {});
        let addr = server.local_addr();
        for target in [
            "/../secret.txt",
            "/..%2fsecret.txt",
            "/%2e%2e/secret.txt",
            "/%2E%2e%2Fsecret.txt",
            "/sub/../../secret.txt",
            "/sub/%2e%2e/%2e%2e/secret.txt",
            "/..\\secret.txt",
            "/%5c..%5csecret.txt",
            "/hello.txt%00.png",
            "/link.txt",
            "/linkdir/secret.txt",
            "//etc/passwd",
            "/%c0%ae%c0%ae/secret.txt",
        ] {
            let raw = exchange(
                addr,
                format!("GET {target} HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n").as_bytes(),
            );
            let text = String::from_utf8_lossy(&raw);
            assert!(
                !text.contains(secret),
                "{engine} {target} leaked the secret"
            );
            assert!(
                !text.contains("root:x:0:0"),
                "{engine} {target} leaked /etc/passwd"
            );
            let (r, _) = parse_one(&raw, false);
            assert!(
                r.status == 400 || r.status == 404,
                "{engine} {target}: got {}",
                r.status
            );
        }
        // A link inside the root that stays inside still works.
        std::os::unix::fs::symlink("hello.txt", dir.path().join("inner")).unwrap();
        assert_eq!(simple(addr, "/inner").status, 200);
        server.shutdown().unwrap();
    }
}
