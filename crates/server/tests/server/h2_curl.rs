//! curl as the HTTP/2 client, when it is installed with HTTP/2 (nghttp2):
//! `--http2-prior-knowledge` against `--h2c`, and `--http2` over TLS, where
//! ALPN must choose `h2`, on every engine that carries HTTP/2. Skipped
//! (with a line saying so) where curl is missing or lacks HTTP/2.

use std::process::Command;

use servelab_server::TlsSource;

use crate::h2_client::h2_engines;
use crate::support::*;

/// Does this machine's curl speak HTTP/2?
fn curl_has_http2() -> bool {
    match Command::new("curl").arg("--version").output() {
        Ok(out) => String::from_utf8_lossy(&out.stdout).contains("HTTP2"),
        Err(_) => false,
    }
}

/// Runs curl with `args` and returns (body, the `%{http_version}` it used).
fn curl(args: &[&str], url: &str) -> (Vec<u8>, String) {
    let dir = tempfile::tempdir().unwrap();
    let body = dir.path().join("body");
    let out = Command::new("curl")
        .args(["-sS", "--max-time", "20", "-o"])
        .arg(&body)
        .args(["-w", "%{http_version} %{http_code}"])
        .args(args)
        .arg(url)
        .output()
        .unwrap();
    assert!(out.status.success(), "curl {args:?} {url}: {out:?}");
    let said = String::from_utf8(out.stdout).unwrap();
    (std::fs::read(&body).unwrap(), said)
}

#[test]
fn curl_fetches_over_h2c_and_over_tls_with_alpn_h2() {
    if !curl_has_http2() {
        eprintln!("skipped: no curl with HTTP/2 here");
        return;
    }
    for engine in h2_engines() {
        let dir = fixture();
        let h2c = start(dir.path(), engine, |c| c.h2c = true);
        let base = format!("http://{}", h2c.local_addr());
        for (path, want) in [
            ("/hello.txt", b"hello, world\n".to_vec()),
            ("/big.bin", big_bytes()),
        ] {
            let (body, said) = curl(&["--http2-prior-knowledge"], &format!("{base}{path}"));
            assert_eq!(said, "2 200", "{engine} {path}");
            assert!(body == want, "{engine} {path}: body");
        }
        h2c.shutdown().unwrap();
        let tls = start(dir.path(), engine, |c| c.tls = Some(TlsSource::SelfSigned));
        let url = format!("https://{}/big.bin", tls.local_addr());
        let (body, said) = curl(&["--http2", "-k"], &url);
        assert_eq!(said, "2 200", "{engine}: ALPN chose h2");
        assert!(body == big_bytes(), "{engine}: body over TLS");
        let (_, said) = curl(&["--http1.1", "-k"], &url);
        assert_eq!(said, "1.1 200", "{engine}: ALPN http/1.1 still");
        tls.shutdown().unwrap();
    }
}
