//! The tests against `servelab serve` itself, started in-process on port 0.

use std::time::{Duration, Instant};

use servelab_load::{Dist, LoadSpec, Report, Segment, Target, Workload};
use servelab_server::{Config, Running, Server};

struct Served {
    running: Option<Running>,
    url: String,
    dir: tempfile::TempDir,
}

impl Served {
    fn start() -> Served {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("1k.txt"), vec![b'x'; 1024]).unwrap();
        let mut config = Config::new(dir.path());
        // The pool engine serves one connection per worker: at least one per user.
        config.workers = 16;
        let running = Server::bind(config).unwrap().spawn();
        let url = format!("http://{}/1k.txt", running.local_addr());
        Served {
            running: Some(running),
            url,
            dir,
        }
    }

    fn accepted(&self) -> u64 {
        self.running.as_ref().unwrap().stats().snapshot().accepted
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        if let Some(r) = self.running.take() {
            let _ = r.shutdown();
        }
    }
}

fn spec(url: &str, users: u32, session: Option<u32>, think: &str, requests: u64) -> LoadSpec {
    let mut spec = LoadSpec::new(vec![Target::new(url)]);
    spec.workload = Workload::Closed {
        users,
        session,
        think: think.parse::<Dist>().unwrap(),
    };
    spec.requests = Some(requests);
    spec.threads = 2;
    spec.duration = Some(Duration::from_secs(60)); // safety net only
    spec
}

#[test]
fn serve_a_run_of_1000_requests_reports_1000() {
    let s = Served::start();
    let r = servelab_load::run(&spec(&s.url, 8, None, "0s", 1000)).unwrap();
    assert_eq!(r.counts.completed, 1000);
    assert_eq!(r.counts.ok, 1000);
    assert_eq!(r.status["200"], 1000);
    assert_eq!(r.counts.connections, 8);
    assert_eq!(s.accepted(), 8);
}

#[test]
fn serve_keep_alive_reuse_connections_equal_users_times_sessions() {
    // Seed 000: 8 users, sessions of 10 requests; 4 sessions each.
    let s = Served::start();
    let r = servelab_load::run(&spec(&s.url, 8, Some(10), "0s", 320)).unwrap();
    assert_eq!(r.counts.ok, 320);
    assert_eq!(r.counts.connections, 8 * 4);
    assert_eq!(s.accepted(), 8 * 4);
}

#[test]
fn serve_ab_style_one_request_per_connection() {
    // Seed 003: ab -c 5 -n N, no keep-alive.
    let s = Served::start();
    let r = servelab_load::run(&spec(&s.url, 5, Some(1), "0s", 200)).unwrap();
    assert_eq!(r.counts.ok, 200);
    assert_eq!(r.counts.connections, 200);
}

#[test]
fn serve_think_time_bounds_the_run_length() {
    let s = Served::start();
    let t0 = Instant::now();
    // 3 users x 4 requests, 40 ms of think after each of a user's first 3 answers.
    let r = servelab_load::run(&spec(&s.url, 3, None, "const:40ms", 12)).unwrap();
    let took = t0.elapsed();
    assert_eq!(r.counts.ok, 12);
    assert!(took >= Duration::from_millis(120), "{took:?}");
    // And not absurdly longer (a loose bound: 3 x 40 ms plus plenty of slack).
    assert!(took < Duration::from_secs(20), "{took:?}");
}

#[test]
fn serve_merge_of_two_segments_equals_one_run() {
    let s = Served::start();
    let dir = tempfile::tempdir().unwrap();
    let mut reports = Vec::new();
    for index in 1..=2 {
        let mut sp = spec(&s.url, 4, Some(5), "0s", 500);
        sp.segment = Segment { index, count: 2 };
        let path = dir.path().join(format!("{index}.json"));
        servelab_load::run(&sp).unwrap().write(&path).unwrap();
        reports.push(Report::read(&path).unwrap());
    }
    let merged = Report::merge(&reports).unwrap();
    let whole = servelab_load::run(&spec(&s.url, 4, Some(5), "0s", 500)).unwrap();
    assert_eq!(merged.counts.completed, whole.counts.completed);
    assert_eq!(merged.counts.ok, 500);
    assert_eq!(merged.counts.connections, whole.counts.connections);
    assert_eq!(merged.latency.count, 500);
}

#[test]
fn serve_open_rate_run_is_exact() {
    let s = Served::start();
    let mut sp = spec(&s.url, 1, None, "0s", 300);
    sp.workload = Workload::Open {
        rate: 2000.0,
        arrival: servelab_load::Arrival::Poisson,
        connections: 8,
        session: None,
    };
    let r = servelab_load::run(&sp).unwrap();
    assert_eq!(r.counts.ok, 300);
    assert!(r.latency.count == 300 && r.latency_uncorrected.count == 300);
    // Corrected latency is never below the uncorrected one, request by request.
    assert!(r.latency.max >= r.latency_uncorrected.max);
}

#[test]
fn serve_idle_connections_closed_by_the_server_are_replaced() {
    // The server drops idle keep-alive connections after 30 ms; users think 500 ms,
    // so every next request finds its connection gone and reconnects, without error.
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), b"hello").unwrap();
    let mut config = Config::new(dir.path());
    config.workers = 2;
    config.keepalive_timeout = Duration::from_millis(30);
    let running = Server::bind(config).unwrap().spawn();
    let url = format!("http://{}/a.txt", running.local_addr());
    let r = servelab_load::run(&spec(&url, 2, None, "const:500ms", 6)).unwrap();
    running.shutdown().unwrap();
    assert_eq!(r.counts.ok, 6, "{:?}", r.errors);
    assert_eq!(r.counts.errors, 0);
    assert_eq!(r.counts.connections, 6);
    // Users think after every answer, their last one included: 3 closes each.
    assert_eq!(r.counts.idle_closed, 6);
}

#[test]
fn serve_head_requests_and_404s() {
    let s = Served::start();
    let mut sp = spec(&s.url, 2, None, "0s", 20);
    sp.method = servelab_load::Method::Head;
    let r = servelab_load::run(&sp).unwrap();
    assert_eq!(r.counts.ok, 20);
    assert!(
        r.counts.bytes_received < 20 * 1024,
        "HEAD answers carry no body"
    );
    let missing = s.url.replace("1k.txt", "missing.txt");
    let r = servelab_load::run(&spec(&missing, 2, None, "0s", 20)).unwrap();
    assert_eq!(r.counts.completed, 20);
    assert_eq!(r.errors.unexpected_status, 20);
    assert_eq!(r.status["404"], 20);
}

/// Regression (issue 19): `load URL/dir` (a 301) reported "0 ok, 38,809
/// failed". A redirect is ok by default (200-399, as k6); `--expect-status`
/// says otherwise.
#[test]
fn serve_a_redirect_is_ok_unless_the_run_expects_only_200() {
    let s = Served::start();
    std::fs::create_dir(s.dir.path().join("dir")).unwrap();
    let url = s.url.replace("1k.txt", "dir");
    let r = servelab_load::run(&spec(&url, 2, None, "0s", 20)).unwrap();
    assert_eq!(r.status["301"], 20, "{:?}", r.status);
    assert_eq!((r.counts.ok, r.counts.errors), (20, 0));
    assert_eq!(r.run.expect_status, "200-399");
    let mut sp = spec(&url, 2, None, "0s", 20);
    sp.expect_status = "200,304".parse().unwrap();
    let r = servelab_load::run(&sp).unwrap();
    assert_eq!((r.counts.ok, r.errors.unexpected_status), (0, 20));
    assert_eq!(r.run.expect_status, "200,304");
}

#[test]
fn serve_saturated_pool_every_scheduled_request_is_counted() {
    // Regression test for the reproduction: `serve --engine pool
    // --workers 1 --delay 10ms` answers about 100 requests/s; `load --rate 2000
    // --connections 10` used to send a few hundred of its arrivals and report
    // nothing about the thousands it never sent.
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("1k.txt"), vec![b'x'; 1024]).unwrap();
    let mut config = Config::new(dir.path());
    config.engine = servelab_server::Engine::Pool;
    config.workers = 1;
    config.delay = Some("10ms".parse().unwrap());
    let running = Server::bind(config).unwrap().spawn();
    let url = format!("http://{}/1k.txt", running.local_addr());
    let mut sp = spec(&url, 1, None, "0s", 1);
    sp.requests = None;
    sp.duration = Some(Duration::from_secs(1));
    sp.threads = 1; // one evenly spaced schedule: 2,000 gaps in the second, 2,001 starts
    sp.workload = Workload::Open {
        rate: 2000.0,
        arrival: servelab_load::Arrival::Uniform,
        connections: 10,
        session: None,
    };
    let r = servelab_load::run(&sp).unwrap();
    let _ = running.shutdown();
    let c = &r.counts;
    assert!((2000..=2001).contains(&c.scheduled), "{c:?}");
    assert_eq!(c.scheduled, c.sent + c.never_sent, "{c:?}");
    assert_eq!(c.sent, c.completed + c.in_flight, "{c:?}");
    // One worker holds one keep-alive connection: the pool can answer at most
    // about 100 of the 2,000 in a second, so most were never sent.
    assert!(c.never_sent > 1000, "{c:?}");
    assert_eq!(r.latency.count, c.completed);
    assert_eq!(r.unfinished_age.count, c.in_flight + c.never_sent);
    assert!(r.saturation().is_some());
}

#[test]
fn serve_stages_ramp_closed_users_up_and_down() {
    // 0 -> 3 users over 1 s, 3 for 1 s, 3 -> 0 over 1 s; a think time keeps
    // the request count small.
    let s = Served::start();
    let mut sp = spec(&s.url, 3, None, "const:20ms", 1);
    sp.requests = None;
    sp.duration = None;
    sp.stages = Some("1s:3,1s:3,1s:0".parse().unwrap());
    let r = servelab_load::run(&sp).unwrap();
    assert_eq!(r.counts.errors, 0, "{:?}", r.errors);
    assert!(r.counts.ok > 0);
    // Each user joined once and kept its connection until the ramp down.
    assert_eq!(r.counts.connections, 3);
    assert_eq!(s.accepted(), 3);
    assert_eq!(r.counts.in_flight, 0, "users above the level wait, idle");
    assert_eq!(r.run.stages.as_deref(), Some("1s:3,1s:3,1s:0"));
    let stages: Vec<Option<u32>> = r.series.iter().map(|x| x.stage).collect();
    assert_eq!(&stages[..3], &[Some(0), Some(1), Some(2)], "{:?}", r.series);
    let summary = r.summary();
    assert!(summary.contains("stage 2      3 -> 3 users"), "{summary}");
}

#[test]
fn serve_stages_ramp_an_even_rate_to_the_exact_count() {
    // 0 -> 200/s over 1 s, then 200/s for 1 s: 100 + 200 arrivals, exactly.
    let s = Served::start();
    let mut sp = spec(&s.url, 1, None, "0s", 1);
    sp.requests = None;
    sp.duration = None;
    sp.threads = 1;
    sp.workload = Workload::Open {
        rate: 200.0,
        arrival: servelab_load::Arrival::Uniform,
        connections: 8,
        session: None,
    };
    sp.stages = Some("1s:200,1s:200".parse().unwrap());
    let r = servelab_load::run(&sp).unwrap();
    assert_eq!(r.counts.scheduled, 300, "{:?}", r.counts);
    assert_eq!(r.counts.scheduled, r.counts.sent + r.counts.never_sent);
    assert_eq!(r.latency.count + r.unfinished_age.count, 300);
    assert_eq!(r.counts.errors, 0, "{:?}", r.errors);
    assert_eq!(r.series[0].stage, Some(0));
    assert_eq!(r.series[1].stage, Some(1));
}

#[test]
fn serve_answers_a_post_with_a_body_405_and_reads_the_framing_right() {
    // servelab serves GET and HEAD; a POST gets 405. Expected, its answers are
    // ok, and none is malformed: the body's framing kept the stream in step.
    let s = Served::start();
    let mut sp = spec(&s.url, 2, Some(5), "0s", 20);
    sp.method = servelab_load::Method::Post;
    sp.body = Some(std::sync::Arc::from(&b"name=value"[..]));
    sp.expect_status = "405".parse().unwrap();
    let r = servelab_load::run(&sp).unwrap();
    assert_eq!(r.status["405"], 20, "{:?}", r.status);
    assert_eq!((r.counts.ok, r.counts.errors), (20, 0), "{:?}", r.errors);
}
