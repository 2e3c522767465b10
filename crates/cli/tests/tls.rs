//! `servelab serve` with TLS flags: the start banner (scheme and the
//! certificate's fingerprint) and the one-line errors for bad files.

use std::io::{BufRead, BufReader};
use std::process::Stdio;

mod support;
use support::servelab;

#[test]
fn self_signed_banner_says_https_and_the_fingerprint() {
    let mut child = servelab()
        .args(["serve", "--port", "0", "--log", "off", "--tls-self-signed"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut err = BufReader::new(child.stderr.take().unwrap());
    let (mut first, mut second) = (String::new(), String::new());
    err.read_line(&mut first).unwrap();
    err.read_line(&mut second).unwrap();
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(first.contains(" on https://127.0.0.1:"), "{first}");
    let fingerprint = second
        .strip_prefix("servelab: TLS certificate SHA-256 fingerprint ")
        .unwrap_or_else(|| panic!("{second}"))
        .trim();
    let bytes: Vec<&str> = fingerprint.split(':').collect();
    assert_eq!(bytes.len(), 32, "{fingerprint}");
    assert!(
        bytes
            .iter()
            .all(|b| b.len() == 2 && b.chars().all(|c| c.is_ascii_hexdigit())),
        "{fingerprint}"
    );
}

#[test]
fn bad_certificate_files_are_one_line_and_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let junk = dir.path().join("junk.pem");
    std::fs::write(&junk, "not a certificate\n").unwrap();
    let missing = dir.path().join("missing.pem");
    let junk = junk.to_str().unwrap();
    let missing = missing.to_str().unwrap();
    for (args, says) in [
        (
            vec!["--tls-cert", missing, "--tls-key", junk],
            "missing.pem",
        ),
        (
            vec!["--tls-cert", junk, "--tls-key", junk],
            "no CERTIFICATE",
        ),
        (vec!["--tls-cert", junk], "--tls-key"),
    ] {
        let out = servelab()
            .args(["serve", "--port", "0", "--log", "off"])
            .args(&args)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.starts_with("servelab: error: "), "{err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains(says), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{err}");
    }
}
