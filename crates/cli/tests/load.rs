//! `servelab load` as a user meets it: flags that only the binary has
//! (standard input as a request body).

use std::io::{Read, Write};
use std::net::TcpListener;
use std::process::{Command, Stdio};

mod support;

/// `--body @-` reads the body from standard input and sends it whole.
#[test]
fn a_body_from_standard_input_is_sent_with_its_length() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/form", listener.local_addr().unwrap());
    let server = std::thread::spawn(move || {
        let (mut conn, _) = listener.accept().unwrap();
        let mut got = Vec::new();
        let mut buf = [0u8; 4096];
        // The head, then as many body bytes as it announces.
        let (head_end, length) = loop {
            let n = conn.read(&mut buf).unwrap();
            assert!(n > 0, "closed before the request ended: {got:?}");
            got.extend_from_slice(&buf[..n]);
            if let Some(p) = got.windows(4).position(|w| w == b"\r\n\r\n") {
                let head = String::from_utf8_lossy(&got[..p]).to_ascii_lowercase();
                let length: usize = head
                    .lines()
                    .find_map(|l| l.strip_prefix("content-length:"))
                    .map_or(0, |v| v.trim().parse().unwrap());
                break (p + 4, length);
            }
        };
        while got.len() < head_end + length {
            let n = conn.read(&mut buf).unwrap();
            assert!(n > 0);
            got.extend_from_slice(&buf[..n]);
        }
        conn.write_all(b"HTTP/1.1 201 Created\r\nContent-Length: 0\r\n\r\n")
            .unwrap();
        String::from_utf8(got).unwrap()
    });
    let mut child = Command::new(env!("CARGO_BIN_EXE_servelab"))
        .args(["load", &url, "-n", "1", "-c", "1", "-q", "--method", "POST"])
        .args(["--body", "@-", "-H", "Content-Type: text/plain"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"hello from stdin")
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let request = server.join().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(request.starts_with("POST /form HTTP/1.1\r\n"), "{request}");
    assert!(request.contains("\r\nContent-Length: 16\r\n"), "{request}");
    assert!(request.ends_with("\r\n\r\nhello from stdin"), "{request}");
}

/// Starts `servelab serve` on a free port over `root`; returns it and its address.
fn serve(root: &std::path::Path) -> (std::process::Child, String) {
    let root = root.to_str().unwrap();
    let (child, addr) = support::serve(&["--log", "off", "--workers", "8", root]);
    (child, addr.to_string())
}

/// The shell command of the first container of a manifest (`- exec ...`),
/// and the names of the environment variables the manifest sets.
fn manifest(name: &str) -> (String, Vec<String>) {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../deploy/kubernetes")
        .join(name);
    let text = std::fs::read_to_string(&path).unwrap();
    let command = text
        .lines()
        .find_map(|l| l.trim().strip_prefix("- exec "))
        .unwrap_or_else(|| panic!("no `- exec` line in {name}"))
        .to_string();
    let env = text
        .lines()
        .filter_map(|l| l.trim().strip_prefix("- name: "))
        .filter(|n| n.chars().all(|c| c.is_ascii_uppercase() || c == '_'))
        .map(str::to_string)
        .collect();
    (format!("exec {command}"), env)
}

/// deploy/kubernetes/job.yaml, run here: its N segments as separate processes
/// with exactly the environment the Indexed Job gives each pod (the manifest's
/// variables plus JOB_COMPLETION_INDEX), its command run by /bin/sh as in the
/// pod, then merge-job.yaml's command. The merged report counts what one run
/// of the same load counts. (No cluster is reachable here: the scheduling,
/// the volume and the image are not tested.)
#[test]
fn the_kubernetes_job_s_segments_merge_to_one_run() {
    let dir = tempfile::tempdir().unwrap();
    let www = dir.path().join("www");
    std::fs::create_dir(&www).unwrap();
    std::fs::write(www.join("1k.txt"), vec![b'x'; 1024]).unwrap();
    let results = dir.path().join("results");
    std::fs::create_dir(&results).unwrap();
    let (mut server, addr) = serve(&www);
    let url = format!("http://{addr}/1k.txt");
    let flags = "-c 6 -n 600";
    let bin_dir = std::path::Path::new(env!("CARGO_BIN_EXE_servelab"))
        .parent()
        .unwrap()
        .to_str()
        .unwrap()
        .to_string();
    let path = format!("{bin_dir}:/usr/bin:/bin");
    let start_at =
        servelab_load::StartAt(std::time::SystemTime::now() + std::time::Duration::from_secs(2))
            .to_string();

    let (command, env) = manifest("job.yaml");
    let mut names = env.clone();
    names.sort();
    assert_eq!(
        names,
        [
            "LOAD_FLAGS",
            "RESULTS",
            "SEGMENTS",
            "START_AT",
            "TARGET_URL"
        ],
        "the test sets what the manifest sets"
    );
    let segments: Vec<_> = (0..3)
        .map(|index| {
            Command::new("/bin/sh")
                .args(["-c", &command])
                .env_clear()
                .env("PATH", &path)
                .env("SEGMENTS", "3")
                .env("TARGET_URL", &url)
                .env("LOAD_FLAGS", flags)
                .env("START_AT", &start_at)
                .env("RESULTS", &results)
                .env("JOB_COMPLETION_INDEX", index.to_string())
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for s in segments {
        let out = s.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let (merge, env) = manifest("merge-job.yaml");
    assert_eq!(env, ["RESULTS"]);
    let out = Command::new("/bin/sh")
        .args(["-c", &merge])
        .env_clear()
        .env("PATH", &path)
        .env("RESULTS", &results)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let whole_json = dir.path().join("whole.json");
    let out = Command::new(env!("CARGO_BIN_EXE_servelab"))
        .args(["load", &url, "-c", "6", "-n", "600", "-q", "--json"])
        .arg(&whole_json)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let _ = server.kill();
    let _ = server.wait();

    let merged = servelab_load::Report::read(&results.join("merged.json")).unwrap();
    let whole = servelab_load::Report::read(&whole_json).unwrap();
    assert_eq!(merged.segments, ["1/3", "2/3", "3/3"]);
    let (m, w) = (&merged.counts, &whole.counts);
    assert_eq!(
        (
            m.scheduled,
            m.sent,
            m.completed,
            m.ok,
            m.errors,
            m.connections
        ),
        (
            w.scheduled,
            w.sent,
            w.completed,
            w.ok,
            w.errors,
            w.connections
        )
    );
    assert_eq!((m.completed, m.ok), (600, 600));
    assert_eq!(merged.latency.count, whole.latency.count);
    assert_eq!(merged.run.start_at.as_deref(), Some(start_at.as_str()));
    assert!(
        merged.start_lag_ms.is_some(),
        "each segment says how late it started"
    );
}

/// Runs `servelab load ARGS` and returns (exit code, stderr).
fn load_fails(args: &[&str]) -> (Option<i32>, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_servelab"))
        .arg("load")
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// An https:// URL on a plain-HTTP server, and a --cacert that is not a
/// certificate: each one line `servelab: error: ...`, status 2, at once.
#[test]
fn tls_mistakes_are_one_clear_line() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    // A plain-HTTP server: it answers whatever comes with a 400 and closes.
    std::thread::spawn(move || {
        for conn in listener.incoming() {
            let Ok(mut conn) = conn else { continue };
            let mut buf = [0u8; 4096];
            let _ = conn.read(&mut buf);
            let _ = conn.write_all(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n");
        }
    });
    let url = format!("https://127.0.0.1:{port}/");
    let (code, err) = load_fails(&[&url, "-n", "5", "-c", "1", "-q", "--insecure"]);
    assert_eq!(code, Some(2), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with("servelab: error: TLS handshake with 127.0.0.1:"),
        "{err}"
    );
    assert!(err.contains("http://"), "{err}");

    let dir = tempfile::tempdir().unwrap();
    let bogus = dir.path().join("ca.pem");
    std::fs::write(&bogus, "not a certificate\n").unwrap();
    let (code, err) = load_fails(&[&url, "-n", "1", "--cacert", bogus.to_str().unwrap()]);
    assert_eq!(code, Some(2), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.starts_with("servelab: error: --cacert "), "{err}");
    assert!(err.contains("no PEM certificate"), "{err}");
}
