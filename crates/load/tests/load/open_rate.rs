//! The open workload: exact counts, and coordinated omission made visible.

use std::time::Duration;

use crate::support::{Behavior, TinyServer};
use servelab_load::{Arrival, LoadSpec, Target, Workload};

fn open(url: &str, rate: f64, connections: u32, requests: u64) -> LoadSpec {
    let mut spec = LoadSpec::new(vec![Target::new(url)]);
    spec.workload = Workload::Open {
        rate,
        arrival: Arrival::Uniform,
        connections,
        session: None,
    };
    spec.requests = Some(requests);
    spec.threads = 1;
    spec.duration = Some(Duration::from_secs(60));
    spec
}

#[test]
fn an_open_run_completes_exactly_its_requests() {
    let server = TinyServer::start(Behavior::Ok(64));
    let mut spec = open(&server.url(), 1000.0, 4, 200);
    spec.threads = 2;
    let report = servelab_load::run(&spec).unwrap();
    assert_eq!(report.counts.completed, 200);
    assert_eq!(report.counts.ok, 200);
    assert!(report.counts.connections <= 4);
}

#[test]
fn a_stall_shows_in_corrected_latency_not_in_uncorrected() {
    // 200 requests/s on one connection; request 20 stalls the server for 400 ms,
    // so ~80 requests wait in the client. Their corrected latency counts the wait.
    let server = TinyServer::start(Behavior::StallOnce {
        nth: 20,
        pause: Duration::from_millis(400),
    });
    let report = servelab_load::run(&open(&server.url(), 200.0, 1, 150)).unwrap();
    assert_eq!(report.counts.ok, 150);
    let (c, u) = (&report.latency, &report.latency_uncorrected);
    assert!(c.max >= 400_000, "corrected max {}", c.max);
    assert!(
        c.p90 > u.p90,
        "corrected p90 {} vs uncorrected {}",
        c.p90,
        u.p90
    );
    assert!(
        c.mean > 2.0 * u.mean,
        "corrected mean {} vs {}",
        c.mean,
        u.mean
    );
    assert_eq!(report.counts.connections, 1);
}
