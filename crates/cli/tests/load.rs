//! `servelab load` as a user meets it: flags that only the binary has
//! (standard input as a request body).

use std::io::{Read, Write};
use std::net::TcpListener;
use std::process::{Command, Stdio};

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
