//! Think time is respected: the run cannot be shorter than the thinking it contains.

use std::time::{Duration, Instant};

use crate::support::{Behavior, TinyServer, closed};
use servelab_load::{Dist, Workload};

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
fn same_seed_same_think_times() {
    let server = TinyServer::start(Behavior::Ok(10));
    let run = |seed| {
        let mut spec = closed(&server.url(), 1, None, 5);
        spec.workload = Workload::Closed {
            users: 1,
            session: None,
            think: "uniform:1ms..30ms".parse::<Dist>().unwrap(),
        };
        spec.seed = seed;
        spec.threads = 1;
        servelab_load::run(&spec).unwrap()
    };
    // With one user the run is think, request, think...: its length is the sum
    // of the seeded think times plus the (small) latencies.
    let (a, b) = (run(7), run(7));
    assert_eq!(a.counts.ok, 5);
    assert_eq!(a.run.seed, b.run.seed);
    assert_eq!(a.run, b.run);
}
