//! `--log-format json`: one JSON object per line with the combined format's
//! fields, valid for a strict parser whatever the client sends.

use std::io::Write;

use servelab_server::{Engine, LogFormat, LogTarget};

use crate::support::*;

#[test]
fn one_valid_object_per_request() {
    for engine in Engine::here() {
        let dir = fixture();
        let logdir = tempfile::tempdir().unwrap();
        let log = logdir.path().join("access.json");
        let server = start(dir.path(), engine, |c| {
            c.log = LogTarget::File(log.clone());
            c.log_format = LogFormat::Json;
        });
        let addr = server.local_addr();
        let ok = get(
            addr,
            "GET /hello.txt?q=\"x\" HTTP/1.1\r\nHost: t\r\nUser-Agent: a \"b\" \\ c\r\nReferer: http://r/\r\nConnection: close\r\n\r\n",
        );
        assert_eq!(ok.status, 200);
        assert_eq!(simple(addr, "/missing").status, 404);
        let bad = exchange(addr, b"GET / HTTP/1.1\r\nHost: t\r\nbad header\r\n\r\n");
        assert!(bad.starts_with(b"HTTP/1.1 400"));
        // HTTP/1.0 and a UTF-8 target.
        let mut s = connect(addr);
        s.write_all("GET /caf%C3%A9 HTTP/1.0\r\n\r\n".as_bytes())
            .unwrap();
        let _ = std::io::Read::read_to_end(&mut s, &mut Vec::new());
        server.shutdown().unwrap();

        let text = std::fs::read_to_string(&log).unwrap();
        let lines: Vec<serde_json::Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{engine}: {e}: {l}")))
            .collect();
        assert_eq!(lines.len(), 4, "{engine}: {text}");
        let by_status = |s: u64| {
            lines
                .iter()
                .find(|v| v["status"] == s)
                .unwrap_or_else(|| panic!("{engine}: no {s}: {text}"))
        };
        let ok = by_status(200);
        assert_eq!(ok["method"], "GET");
        assert_eq!(ok["target"], "/hello.txt?q=\"x\"");
        assert_eq!(ok["protocol"], "HTTP/1.1");
        assert_eq!(ok["user_agent"], "a \"b\" \\ c");
        assert_eq!(ok["referer"], "http://r/");
        assert_eq!(ok["remote"], "127.0.0.1");
        assert_eq!(ok["bytes"], 13);
        assert!(ok["service_us"].is_u64());
        assert!(ok["time"].as_str().unwrap().ends_with('Z'));
        assert_eq!(by_status(404)["referer"], serde_json::Value::Null);
        let bad = by_status(400);
        assert_eq!(
            (bad["method"].is_null(), bad["target"].is_null()),
            (true, true),
            "{engine}"
        );
        for v in &lines {
            assert_eq!(v.as_object().unwrap().len(), 10, "{engine}: {v}");
        }
    }
}
