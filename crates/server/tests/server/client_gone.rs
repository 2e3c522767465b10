//! A client that closes before its response is completely written abandons
//! it, whatever the response's size and on every engine: the request counts
//! as abandoned (not as a 2xx) and is logged with status 499; with
//! `--on-abandon cancel` its `--delay`/`--work` stops and the connection is
//! let go at once. A half-close behind pipelined requests is not a departure:
//! every request is answered.
//!
//! The tests order events by the server's own counters (`in_flight` says a
//! request is being served before the client closes), not by sleeping. The
//! holds of a second are not a timing assertion: they only give the client
//! room to act while the server holds the response, on a loaded machine.

use std::io::{Read, Write};
use std::net::Shutdown;
use std::path::Path;
use std::time::{Duration, Instant};

use servelab_server::{Dist, Engine, LogFormat, LogMode, LogTarget, OnAbandon, Running, Snapshot};

use crate::support::*;

/// Waits (bounded) until the server's counters satisfy `ok`; returns them.
fn wait_for(server: &Running, bound: Duration, ok: impl Fn(&Snapshot) -> bool) -> Snapshot {
    let until = Instant::now() + bound;
    loop {
        let s = server.stats().snapshot();
        if ok(&s) || Instant::now() > until {
            return s;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// The access-log lines of a server that has been shut down.
fn log_lines(log: &Path) -> Vec<String> {
    std::fs::read_to_string(log)
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect()
}

/// The status and bytes fields of a Combined Log Format line.
fn status_and_bytes(line: &str) -> (u16, String) {
    let (_, rest) = line.split_once("\" ").expect(line);
    let mut f = rest.split(' ');
    let status = f.next().unwrap().parse().expect(line);
    (status, f.next().unwrap().to_owned())
}

/// A server with one worker, the given service and policy, and a sync log.
fn serve(
    root: &Path,
    log: &Path,
    engine: Engine,
    delay: Option<Duration>,
    work: Option<Duration>,
    policy: OnAbandon,
) -> Running {
    start(root, engine, |c| {
        c.workers = 1;
        c.delay = delay.map(Dist::Const);
        c.work = work.map(Dist::Const);
        c.on_abandon = policy;
        c.log = LogTarget::File(log.to_owned());
        c.log_mode = LogMode::Sync;
    })
}

/// Sends one request, waits until the server is serving it, then closes.
fn request_then_leave(server: &Running, path: &str) {
    let mut s = connect(server.local_addr());
    s.write_all(format!("GET {path} HTTP/1.1\r\nHost: t\r\n\r\n").as_bytes())
        .unwrap();
    let serving = wait_for(server, Duration::from_secs(10), |s| s.in_flight == 1);
    assert_eq!(serving.in_flight, 1, "the request never reached the server");
    drop(s);
}

/// The regression of the issue: a small response fits in the socket buffer,
/// so writing it to a client that has gone succeeded and counted as 2xx.
/// Now the close is seen while the response is held, for small and large
/// responses, on every engine and with either policy.
#[test]
fn client_gone_during_delay_is_abandoned_and_logged_499() {
    for engine in Engine::here() {
        for policy in [OnAbandon::Finish, OnAbandon::Cancel] {
            for path in ["/hello.txt", "/big.bin"] {
                let dir = fixture();
                let logdir = tempfile::tempdir().unwrap();
                let log = logdir.path().join("access.log");
                // With cancel the delay is far longer than the bound below:
                // only a cancelled hold can be abandoned in time.
                let delay = match policy {
                    OnAbandon::Finish => Duration::from_secs(1),
                    OnAbandon::Cancel => Duration::from_secs(60),
                };
                let server = serve(dir.path(), &log, engine, Some(delay), None, policy);
                request_then_leave(&server, path);
                let done = wait_for(&server, Duration::from_secs(20), |s| {
                    s.abandoned == 1 && s.open == 0
                });
                let what = format!("{engine} {policy} {path}: {done:?}");
                assert_eq!(done.abandoned, 1, "{what}");
                assert_eq!(done.open, 0, "{what}");
                assert_eq!(done.in_flight, 0, "{what}");
                assert_eq!(done.responses, [0; 5], "no response was delivered: {what}");
                assert_eq!(done.bytes_sent, 0, "{what}");
                server.shutdown().unwrap();
                let lines = log_lines(&log);
                assert_eq!(lines.len(), 1, "{what}: {lines:?}");
                assert_eq!(
                    status_and_bytes(&lines[0]),
                    (499, "-".to_owned()),
                    "{what}: {lines:?}"
                );
            }
        }
    }
}

/// The JSON log says 499 and the bytes sent too.
#[test]
fn client_gone_is_499_in_the_json_log_too() {
    for engine in Engine::here() {
        let dir = fixture();
        let logdir = tempfile::tempdir().unwrap();
        let log = logdir.path().join("access.log");
        let server = start(dir.path(), engine, |c| {
            c.delay = Some(Dist::Const(Duration::from_secs(60)));
            c.log = LogTarget::File(log.clone());
            c.log_mode = LogMode::Sync;
            c.log_format = LogFormat::Json;
        });
        request_then_leave(&server, "/hello.txt");
        let done = wait_for(&server, Duration::from_secs(20), |s| s.abandoned == 1);
        assert_eq!(done.abandoned, 1, "{engine}: {done:?}");
        server.shutdown().unwrap();
        let lines = log_lines(&log);
        assert_eq!(lines.len(), 1, "{engine}: {lines:?}");
        assert!(
            lines[0].contains(r#""status":499,"bytes":0,"#),
            "{engine}: {lines:?}"
        );
    }
}

/// `--work`: the close is seen while the CPU is burnt. With cancel the work
/// stops (a minute of it would outlast the bound); with finish it runs out,
/// and the response is still not written nor counted as 2xx.
#[test]
fn client_gone_during_work_is_abandoned() {
    for engine in Engine::here() {
        for policy in [OnAbandon::Finish, OnAbandon::Cancel] {
            for path in ["/hello.txt", "/big.bin"] {
                let dir = fixture();
                let logdir = tempfile::tempdir().unwrap();
                let log = logdir.path().join("access.log");
                let work = match policy {
                    OnAbandon::Finish => Duration::from_secs(1),
                    OnAbandon::Cancel => Duration::from_secs(60),
                };
                let server = serve(dir.path(), &log, engine, None, Some(work), policy);
                request_then_leave(&server, path);
                let done = wait_for(&server, Duration::from_secs(20), |s| {
                    s.abandoned == 1 && s.open == 0
                });
                let what = format!("{engine} {policy} {path}: {done:?}");
                assert_eq!(
                    (done.abandoned, done.open, done.in_flight),
                    (1, 0, 0),
                    "{what}"
                );
                assert_eq!(done.responses, [0; 5], "{what}");
                server.shutdown().unwrap();
                let lines = log_lines(&log);
                assert_eq!(lines.len(), 1, "{what}: {lines:?}");
                assert_eq!(status_and_bytes(&lines[0]).0, 499, "{what}: {lines:?}");
            }
        }
    }
}

/// Reads every response of a connection the server closes at the end.
fn responses(s: &mut std::net::TcpStream, n: usize) -> Vec<Resp> {
    let mut raw = Vec::new();
    let _ = s.read_to_end(&mut raw);
    let mut out = Vec::new();
    let mut at = 0;
    while out.len() < n && at < raw.len() {
        let (r, used) = parse_one(&raw[at..], false);
        out.push(r);
        at += used;
    }
    assert_eq!(at, raw.len(), "nothing after the last response");
    out
}

/// A client may send its requests and shut its sending side (RFC 9112 §9.6):
/// a close behind requests the server has not yet taken is a half-close, and
/// every request is answered, small and large, with or without a hold.
#[test]
fn half_close_after_pipelined_requests_is_answered() {
    let a = "GET /hello.txt HTTP/1.1\r\nHost: t\r\n\r\n";
    let b = "GET /big.bin HTTP/1.1\r\nHost: t\r\n\r\n";
    for engine in Engine::here() {
        for delay in [None, Some(Duration::from_secs(1))] {
            let dir = fixture();
            let logdir = tempfile::tempdir().unwrap();
            let log = logdir.path().join("access.log");
            let server = serve(dir.path(), &log, engine, delay, None, OnAbandon::Cancel);
            let mut s = connect(server.local_addr());
            if delay.is_some() {
                // The second request and the close arrive while the first
                // is held: both are still unread then.
                s.write_all(a.as_bytes()).unwrap();
                let serving = wait_for(&server, Duration::from_secs(10), |s| s.in_flight == 1);
                assert_eq!(serving.in_flight, 1, "{engine}");
                s.write_all(b.as_bytes()).unwrap();
            } else {
                s.write_all(format!("{a}{b}").as_bytes()).unwrap();
            }
            s.shutdown(Shutdown::Write).unwrap();
            let got = responses(&mut s, 2);
            let what = format!("{engine} {delay:?}");
            assert_eq!(got.len(), 2, "{what}");
            assert_eq!(
                (got[0].status, got[0].body.as_slice()),
                (200, &b"hello, world\n"[..])
            );
            assert_eq!(
                (got[1].status, got[1].body.len()),
                (200, big_bytes().len()),
                "{what}"
            );
            let done = wait_for(&server, Duration::from_secs(10), |s| s.open == 0);
            assert_eq!(done.abandoned, 0, "{what}: {done:?}");
            assert_eq!(done.responses[1], 2, "{what}: {done:?}");
            server.shutdown().unwrap();
            let lines = log_lines(&log);
            let statuses: Vec<u16> = lines.iter().map(|l| status_and_bytes(l).0).collect();
            assert_eq!(statuses, [200, 200], "{what}: {lines:?}");
        }
    }
}
