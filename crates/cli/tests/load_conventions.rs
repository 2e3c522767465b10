//! `servelab load` with the conventions users bring from curl, wrk, k6, hey
//! and their shells (issue 30), run as a user runs it: logins in the URL, any
//! percentile, k6's thresholds, compound durations, negative numbers and other
//! tools' flags, Ctrl-C, and `--pin` against `serve --tls-self-signed`.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::process::{Child, Output, Stdio};
use std::time::Duration;

mod support;
use support::servelab;

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// A site with one small file, served by `servelab serve` on a free port.
fn site() -> (tempfile::TempDir, Child, String) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("index.html"), "hello\n").unwrap();
    let (child, addr) = support::serve(&["--log", "off", dir.path().to_str().unwrap()]);
    (dir, child, format!("http://{addr}/"))
}

fn stop(mut child: Child) {
    let _ = child.kill();
    let _ = child.wait();
}

fn load(args: &[&str]) -> Output {
    servelab()
        .arg("load")
        .args(args)
        .args(["--no-progress"])
        .output()
        .unwrap()
}

fn json(path: &std::path::Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// curl, wrk, k6 and oha send a login in the URL as Basic credentials; so
/// does `load`, percent-decoded, keeping it out of the Host header and out of
/// everything it prints and writes.
#[test]
fn a_login_in_the_url_is_sent_as_basic_auth_and_never_shown() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let server = std::thread::spawn(move || {
        let (mut conn, _) = listener.accept().unwrap();
        let mut got = Vec::new();
        let mut buf = [0u8; 4096];
        while !got.windows(4).any(|w| w == b"\r\n\r\n") {
            let n = conn.read(&mut buf).unwrap();
            assert!(n > 0, "closed before the head ended");
            got.extend_from_slice(&buf[..n]);
        }
        conn.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
            .unwrap();
        String::from_utf8(got).unwrap()
    });
    let dir = tempfile::tempdir().unwrap();
    let report = dir.path().join("r.json");
    // `s3%40cret` is `s3@cret`.
    let url = format!("http://al%69ce:s3%40cret@{addr}/x");
    let out = load(&[
        &url,
        "-n",
        "1",
        "-c",
        "1",
        "--json",
        report.to_str().unwrap(),
    ]);
    let head = server.join().unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    // base64("alice:s3@cret")
    assert!(
        head.contains("\r\nAuthorization: Basic YWxpY2U6czNAY3JldA==\r\n"),
        "{head}"
    );
    assert!(head.contains(&format!("\r\nHost: {addr}\r\n")), "{head}");
    let written = std::fs::read_to_string(&report).unwrap();
    for shown in [text(&out.stdout), text(&out.stderr), written.clone()] {
        assert!(
            !shown.contains("s3%40cret") && !shown.contains("s3@cret"),
            "{shown}"
        );
    }
    let target = json(&report)["run"]["targets"][0][0]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(target, format!("http://al%69ce:***@{addr}/x"));
    // A bad URL's error does not show the password either.
    let out = load(&["http://alice:s3cret@/x", "-n", "1"]);
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(
        !err.contains("s3cret") && err.contains("alice:***@"),
        "{err}"
    );
}

/// Any pNN in a threshold and in `--percentiles`; k6's pass conditions under
/// `--threshold`; every threshold worded as measured, limit, outcome.
#[test]
fn any_percentile_and_k6_thresholds_say_what_was_measured_and_the_limit() {
    let (_dir, server, url) = site();
    let out_dir = tempfile::tempdir().unwrap();
    let report = out_dir.path().join("r.json");
    let out = load(&[
        &url,
        "-n",
        "200",
        "-c",
        "2",
        "--percentiles",
        "50,95,99.99",
        "--fail-if",
        "p95>1h",
        "--threshold",
        "p(99.9)<1us",
        "--threshold",
        "http_req_failed:rate<1%",
        "--json",
        report.to_str().unwrap(),
    ]);
    stop(server);
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    // A threshold failed: status 4, as documented.
    assert_eq!(out.status.code(), Some(4), "{stdout}{stderr}");
    let latency = stdout
        .lines()
        .find(|l| l.trim_start().starts_with("latency"))
        .unwrap();
    assert!(
        latency.contains(" p50 ") && latency.contains(" p95 ") && latency.contains(" p99.99 "),
        "{latency}"
    );
    assert!(
        !latency.contains(" p90 "),
        "the choice replaces the default: {latency}"
    );
    assert!(stdout.contains("p95 was "), "{stdout}");
    assert!(stdout.contains(", limit <= 3600 s: passed"), "{stdout}");
    assert!(
        stdout.contains("errors was 0%, limit < 1%: passed"),
        "{stdout}"
    );
    let failed: Vec<&str> = stderr.lines().collect();
    assert_eq!(failed.len(), 1, "{stderr}");
    assert!(
        failed[0].starts_with("servelab: load failed: p99.9 was ")
            && failed[0].ends_with(", limit < 1 µs: failed"),
        "{stderr}"
    );
    let r = json(&report);
    assert_eq!(
        r["run"]["percentiles"],
        serde_json::json!([50.0, 95.0, 99.99])
    );
    let spectrum = r["latency"]["percentiles"].as_array().unwrap();
    assert!(spectrum.iter().any(|p| p[0] == 99.99), "{spectrum:?}");
    // A bad percentile is one line, before the run.
    let out = load(&[&url, "--percentiles", "50,101"]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        text(&out.stderr).lines().count(),
        1,
        "{}",
        text(&out.stderr)
    );
    assert!(
        text(&out.stderr).contains("--percentiles"),
        "{}",
        text(&out.stderr)
    );
}

/// `-d 1h30m` and `1m30s` (humantime's, Go's and systemd's spelling) work
/// where a duration is taken.
#[test]
fn compound_durations_are_accepted() {
    let (_dir, server, url) = site();
    let out_dir = tempfile::tempdir().unwrap();
    let report = out_dir.path().join("r.json");
    let out = load(&[
        &url,
        "-d",
        "1s250ms",
        "-n",
        "10",
        "-c",
        "1",
        "--timeout",
        "1m30s",
        "-q",
        "--json",
        report.to_str().unwrap(),
    ]);
    stop(server);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let r = json(&report);
    assert_eq!(r["run"]["duration_s"], 1.25);
    assert_eq!(r["run"]["timeout"], "const:90s");
    let out = load(&[&url, "-d", "30m1h"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("largest unit"),
        "{}",
        text(&out.stderr)
    );
}

/// A negative value gets one line that says what is wrong with it, not clap's
/// advice to write `-- -5`; hey's and oha's `-z` names ours.
#[test]
fn negative_values_and_other_tools_flags_are_said_in_plain_words() {
    for (args, says) in [
        (
            &["load", "--rate", "-5", "http://127.0.0.1:1/"][..],
            "servelab: error: --rate: -5 is negative: give a rate above 0",
        ),
        (
            &["serve", "--keepalive-timeout", "-5s"],
            "servelab: error: --keepalive-timeout: -5s is negative: give a duration of 0 or more",
        ),
        (
            &["load", "-z", "1s", "http://127.0.0.1:1/"],
            "servelab: error: -z is not a flag of `servelab load`",
        ),
    ] {
        let out = servelab().args(args).output().unwrap();
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.starts_with(says), "{args:?}: {err}");
        assert!(!err.contains("-- -") && !err.contains("<COMMAND>"), "{err}");
    }
}

/// Ctrl-C ends the run, prints and writes the report with the figures so far,
/// says it was cut short, and exits 130.
#[test]
fn ctrl_c_keeps_the_figures_says_so_and_exits_130() {
    let (_dir, server, url) = site();
    let out_dir = tempfile::tempdir().unwrap();
    let report = out_dir.path().join("r.json");
    let child = servelab()
        .args([
            "load",
            &url,
            "-d",
            "30s",
            "-c",
            "2",
            "--think",
            "1ms",
            "--no-progress",
        ])
        .args(["--json", report.to_str().unwrap()])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    let pid = rustix::process::Pid::from_raw(child.id() as i32).unwrap();
    rustix::process::kill_process(pid, rustix::process::Signal::INT).unwrap();
    let out = child.wait_with_output().unwrap();
    stop(server);
    let stdout = text(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(130),
        "{stdout}{}",
        text(&out.stderr)
    );
    assert!(stdout.contains("stopped      early: cut short"), "{stdout}");
    assert!(
        text(&out.stderr).contains("stopped early"),
        "{}",
        text(&out.stderr)
    );
    let r = json(&report);
    assert_eq!(r["interrupted"], true);
    assert!(r["counts"]["completed"].as_u64().unwrap() > 0, "{r}");
    assert!(r["duration_s"].as_f64().unwrap() < 30.0);
}

/// `--pin` takes the fingerprint `serve --tls-self-signed` prints, with or
/// without colons, in either case; a wrong pin fails in one clear line.
#[test]
fn pin_accepts_the_fingerprint_that_serve_prints() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("index.html"), "hello\n").unwrap();
    let mut child = servelab()
        .args(["serve", "--port", "0", "--log", "off", "--tls-self-signed"])
        .arg(dir.path())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut err = BufReader::new(child.stderr.take().unwrap());
    let (mut first, mut second) = (String::new(), String::new());
    err.read_line(&mut first).unwrap();
    err.read_line(&mut second).unwrap();
    let addr = first
        .split("https://")
        .nth(1)
        .and_then(|s| s.split(' ').next())
        .unwrap_or_else(|| panic!("{first}"))
        .to_string();
    let fingerprint = second
        .strip_prefix("servelab: TLS certificate SHA-256 fingerprint ")
        .unwrap_or_else(|| panic!("{second}"))
        .trim()
        .to_string();
    let url = format!("https://{addr}/");
    let bare = fingerprint.replace(':', "").to_lowercase();
    let mut wrong = fingerprint.clone();
    wrong.replace_range(0..2, if wrong.starts_with("00") { "11" } else { "00" });
    let runs: Vec<Output> = [&fingerprint, &bare, &wrong]
        .iter()
        .map(|pin| load(&[&url, "--pin", pin, "-n", "20", "-c", "2", "-q"]))
        .collect();
    // Without the pin the self-signed certificate is not trusted.
    let untrusted = load(&[&url, "-n", "1", "-q"]);
    stop(child);
    for out in &runs[..2] {
        assert!(out.status.success(), "{}", text(&out.stderr));
    }
    let err = text(&runs[2].stderr);
    assert_eq!(runs[2].status.code(), Some(2), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains(&format!("fingerprint {fingerprint}, not the --pin {wrong}")),
        "{err}"
    );
    assert_eq!(
        untrusted.status.code(),
        Some(2),
        "{}",
        text(&untrusted.stderr)
    );
}
