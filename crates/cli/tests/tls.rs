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

/// The keys and certificates of `tests/fixtures/tls` (made by openssl; see
/// the README there).
fn fixture(name: &str) -> String {
    format!("{}/tests/fixtures/tls/{name}", env!("CARGO_MANIFEST_DIR"))
}

/// `servelab serve ARGS` that must fail at start: its one stderr line.
fn refused(args: &[&str]) -> String {
    let out = servelab()
        .args(["serve", "--port", "0", "--log", "off"])
        .args(args)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
    assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
    assert!(err.starts_with("servelab: error: "), "{err}");
    err
}

/// A TLS server started with `args` in `dir`: the child, its port and its
/// stderr lines up to the last start line.
fn start_tls(args: &[&str], dir: &std::path::Path) -> (std::process::Child, u16, Vec<String>) {
    let mut child = servelab()
        .args(["serve", "--port", "0", "--log", "off"])
        .args(args)
        .current_dir(dir)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut err = BufReader::new(child.stderr.take().unwrap());
    let mut lines = Vec::new();
    let saved = args.contains(&"--tls-self-signed-cert");
    for _ in 0..if saved { 3 } else { 2 } {
        let mut line = String::new();
        err.read_line(&mut line).unwrap();
        lines.push(line);
    }
    let port = lines[0]
        .split("https://127.0.0.1:")
        .nth(1)
        .and_then(|s| s.split(' ').next())
        .unwrap_or_else(|| panic!("{lines:?}"))
        .parse()
        .unwrap();
    (child, port, lines)
}

fn curl(args: &[&str]) -> Option<std::process::Output> {
    std::process::Command::new("curl").args(args).output().ok()
}

/// An encrypted key said `base64 decode error: InvalidCharacter(45)` (legacy
/// `Proc-Type: 4,ENCRYPTED`) or "no usable PRIVATE KEY block in it: no items
/// found" (PKCS #8 `ENCRYPTED PRIVATE KEY`). Now: it is encrypted, and the
/// command that decrypts it.
#[test]
fn an_encrypted_key_is_named_so_with_the_command_that_decrypts_it() {
    let cert = fixture("cert.pem");
    for name in ["key-encrypted.pem", "key-legacy-encrypted.pem"] {
        let key = fixture(name);
        let err = refused(&["--tls-cert", &cert, "--tls-key", &key]);
        assert!(err.contains("the private key is encrypted"), "{err}");
        assert!(
            err.contains(&format!("`openssl pkey -in {key} -out key-plain.pem`")),
            "{err}"
        );
        assert!(
            !err.contains("base64") && !err.contains("no items"),
            "{err}"
        );
    }
    // The advice works: the decrypted copy serves.
    if curl(&["--version"]).is_none()
        || std::process::Command::new("openssl")
            .arg("version")
            .output()
            .is_err()
    {
        eprintln!("openssl or curl not installed; the decrypted key is not tried");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("index.html"), "decrypted\n").unwrap();
    let plain = dir.path().join("key-plain.pem");
    let made = std::process::Command::new("openssl")
        .args([
            "pkey",
            "-in",
            &fixture("key-encrypted.pem"),
            "-passin",
            "pass:servelab",
            "-out",
        ])
        .arg(&plain)
        .status()
        .unwrap();
    assert!(made.success());
    let (mut child, port, _) = start_tls(
        &[
            "--tls-cert",
            &cert,
            "--tls-key",
            plain.to_str().unwrap(),
            ".",
        ],
        dir.path(),
    );
    let page = curl(&[
        "-sS",
        "--cacert",
        &cert,
        &format!("https://localhost:{port}/"),
    ])
    .unwrap();
    child.kill().unwrap();
    child.wait().unwrap();
    assert_eq!(
        String::from_utf8_lossy(&page.stdout),
        "decrypted\n",
        "{page:?}"
    );
}

/// A pair that does not match said `KeyMismatch (is the key the certificate's?)`.
#[test]
fn a_key_of_another_certificate_is_named_with_both_files() {
    let (cert, key) = (fixture("cert.pem"), fixture("other-key.pem"));
    let err = refused(&["--tls-cert", &cert, "--tls-key", &key]);
    assert!(
        err.contains("the key does not belong to the certificate"),
        "{err}"
    );
    assert!(err.contains(&cert) && err.contains(&key), "{err}");
    assert!(!err.contains("KeyMismatch"), "{err}");
}

/// `--tls-self-signed` printed a fingerprint that no client could use. With
/// `--tls-self-signed-cert FILE` the certificate is written where asked and
/// `curl --cacert FILE` verifies the server with it; at the next start the
/// file is replaced, but a file servelab did not write is never touched.
#[test]
fn the_self_signed_certificate_is_written_where_asked_and_curl_trusts_it() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("index.html"), "trusted\n").unwrap();
    let cert = dir.path().join("dev.pem");
    let cert_arg = cert.to_str().unwrap();
    let (mut child, port, lines) = start_tls(&["--tls-self-signed-cert", cert_arg], dir.path());
    let first = std::fs::read_to_string(&cert).unwrap();
    let fetched = curl(&["--version"]).map(|_| {
        curl(&[
            "-sS",
            "--cacert",
            cert_arg,
            &format!("https://localhost:{port}/"),
        ])
        .unwrap()
    });
    let untrusted = curl(&["-sS", &format!("https://localhost:{port}/")]);
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(
        lines[2].contains(&format!("written to {cert_arg}"))
            && lines[2].contains(&format!(
                "curl --cacert {cert_arg} https://localhost:{port}/"
            )),
        "{lines:?}"
    );
    assert!(first.contains("-----BEGIN CERTIFICATE-----"), "{first}");
    assert!(!first.contains("PRIVATE KEY"), "{first}");
    match (fetched, untrusted) {
        (Some(page), Some(untrusted)) => {
            assert_eq!(
                String::from_utf8_lossy(&page.stdout),
                "trusted\n",
                "{page:?}"
            );
            assert!(
                !untrusted.status.success(),
                "curl trusted it without --cacert"
            );
        }
        _ => eprintln!("curl not installed; the certificate is not tried with it"),
    }

    // Restarted: a new certificate in the same file.
    let (mut child, _, _) = start_tls(&["--tls-self-signed-cert", cert_arg], dir.path());
    child.kill().unwrap();
    child.wait().unwrap();
    let second = std::fs::read_to_string(&cert).unwrap();
    assert_ne!(first, second, "the file was not replaced");

    // A file that servelab did not write is refused and left as it was.
    let mine = dir.path().join("mine.pem");
    std::fs::write(&mine, "my own certificate\n").unwrap();
    let err = refused(&["--tls-self-signed-cert", mine.to_str().unwrap()]);
    assert!(err.contains("servelab did not write it"), "{err}");
    assert_eq!(
        std::fs::read_to_string(&mine).unwrap(),
        "my own certificate\n"
    );
}

/// `--hsts` sends `Strict-Transport-Security` over HTTPS (one year unless
/// told), and is refused without TLS, where browsers ignore the field.
#[test]
fn hsts_is_sent_over_https_and_refused_without_it() {
    let err = refused(&["--hsts"]);
    assert!(err.contains("--hsts needs HTTPS"), "{err}");
    let err = refused(&[
        "--tls-self-signed",
        "--hsts",
        "--header",
        "Strict-Transport-Security: max-age=5",
    ]);
    assert!(err.contains("give one of them"), "{err}");
    if curl(&["--version"]).is_none() {
        eprintln!("curl not installed; skipping the wire check");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("index.html"), "hsts\n").unwrap();
    for (flag, field) in [
        ("--hsts", "strict-transport-security: max-age=31536000"),
        ("--hsts=600", "strict-transport-security: max-age=600"),
    ] {
        let cert = dir.path().join("dev.pem");
        let cert = cert.to_str().unwrap();
        let (mut child, port, _) = start_tls(&[flag, "--tls-self-signed-cert", cert], dir.path());
        // Over both protocols ALPN can pick (the default engine carries
        // HTTP/2, so curl's own choice is h2).
        for (protocol, status) in [("--http1.1", "http/1.1 200"), ("--http2", "http/2 200")] {
            let head = curl(&[
                "-sS",
                "-I",
                protocol,
                "--cacert",
                cert,
                &format!("https://localhost:{port}/"),
            ]);
            let head = String::from_utf8_lossy(&head.unwrap().stdout).to_ascii_lowercase();
            assert!(head.starts_with(status), "{protocol}: {head}");
            assert!(
                head.lines().any(|l| l.trim_end() == field),
                "{flag} {protocol}: {head}"
            );
        }
        child.kill().unwrap();
        child.wait().unwrap();
    }
}
