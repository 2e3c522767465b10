//! Think time is respected: the run cannot be shorter than the thinking it contains.

use std::time::{Duration, Instant};

use crate::support::{Behavior, TinyServer, closed};
use servelab_load::{Dist, Target, Workload};

#[test]
fn users_think_between_requests() {
    let server = TinyServer::start(Behavior::Ok(10));
    let mut spec = closed(&server.url(), 2, Some(2), 10);
    spec.workload = Workload::Closed {
        users: 2,
        session: Some(2),
        think: "const:50ms".parse::<Dist>().unwrap(),
    };
    let t0 = Instant::now();
    let report = servelab_load::run(&spec).unwrap();
    let took = t0.elapsed();
    assert_eq!(report.counts.ok, 10);
    // Each user sends 5 requests with a think of 50 ms after each of the first 4
    // answers: the run lasts at least 200 ms (a lower bound that follows from the
    // semantics, not a speed measurement).
    assert!(took >= Duration::from_millis(200), "{took:?}");
    assert!(report.duration_s >= 0.2, "{}", report.duration_s);
    // Sessions of 2 requests: 5 requests per user make 3 connections per user.
    assert_eq!(report.counts.connections, 6);
}

#[test]
fn same_seed_same_random_choices() {
    // One user, two targets of equal weight: the sequence of paths the server sees
    // is the user's random stream. The same seed repeats it; another changes it.
    let server = TinyServer::start(Behavior::Ok(10));
    let base = format!("http://{}", server.addr);
    let run = |seed| {
        let mut spec = closed(&format!("{base}/a"), 1, None, 40);
        spec.targets.push(Target::new(format!("{base}/b")));
        spec.workload = Workload::Closed {
            users: 1,
            session: None,
            think: "uniform:0ms..1ms".parse::<Dist>().unwrap(),
        };
        spec.seed = seed;
        spec.threads = 1;
        let before = server.paths.lock().unwrap().len();
        assert_eq!(servelab_load::run(&spec).unwrap().counts.ok, 40);
        server.paths.lock().unwrap()[before..].to_vec()
    };
    let (a, b, c) = (run(7), run(7), run(8));
    assert_eq!(a.len(), 40);
    assert_eq!(a, b);
    assert_ne!(a, c);
    assert!(a.iter().any(|p| p == "/a") && a.iter().any(|p| p == "/b"));
}

/// Regression: every closed user sent its first request at the first instant,
/// a burst of N requests that under client timeouts became a wave of timeouts
/// and retries. Users with a think time now start in the middle of one (its
/// stationary residual, as the simulator's users do): with a constant 20 s
/// think, a user's first request comes after a uniform 0..20 s, so in a
/// 300 ms run about 1.5% of 200 users send one, and all 200 only with
/// probability 0.015^200.
#[test]
fn users_with_a_think_time_start_spread_over_one() {
    let server = TinyServer::start(Behavior::Ok(10));
    let mut spec = closed(&server.url(), 200, None, 1_000_000);
    spec.workload = Workload::Closed {
        users: 200,
        session: None,
        think: "const:20s".parse::<Dist>().unwrap(),
    };
    spec.requests = None;
    spec.duration = Some(Duration::from_millis(300));
    let report = servelab_load::run(&spec).unwrap();
    assert!(report.counts.sent < 100, "{} sent", report.counts.sent);
    // Without a think time, every user starts at once, as wrk does.
    let mut spec = closed(&server.url(), 20, None, 20);
    spec.threads = 1;
    let report = servelab_load::run(&spec).unwrap();
    assert_eq!(report.counts.connections, 20);
}
