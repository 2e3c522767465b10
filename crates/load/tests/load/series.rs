//! The per-second series: what finished, how many were in flight as the second
//! began, and the latency percentiles of the second.

use std::time::Duration;

use crate::support::{Behavior, TinyServer, closed};

#[test]
fn each_second_carries_its_concurrency_and_latency() {
    // 4 users, no think time, a server that answers after 50 ms: 25 rounds of
    // at least 50 ms, so the run lasts more than a second, and every user has
    // a request in flight whenever the loop looks.
    let server = TinyServer::start(Behavior::Delay(Duration::from_millis(50)));
    let r = servelab_load::run(&closed(&server.url(), 4, None, 100)).unwrap();
    assert_eq!(r.counts.ok, 100);
    assert!(r.series.len() >= 2, "{:?}", r.series);
    assert_eq!(
        r.series[0].in_flight,
        Some(0),
        "sampled before the first send"
    );
    assert_eq!(r.series[1].in_flight, Some(4), "{:?}", r.series[1]);
    // Every latency is at least the server's 50 ms, less the buckets' 1/16.
    for s in r.series.iter().filter(|s| s.completed > 0) {
        let (p50, p99) = (s.p50_us.unwrap(), s.p99_us.unwrap());
        assert!(p50 >= 46_875 && p99 >= p50, "{s:?}");
    }
    // Each finished request is in its second's latencies, once.
    let counted: u64 = r.series.iter().map(|s| s.latency_buckets.count()).sum();
    assert_eq!(counted, r.counts.completed);
    // And the JSON round trip keeps them (merge adds them).
    let back = servelab_load::Report::from_json(&r.to_json(), "-".as_ref()).unwrap();
    assert_eq!(back.series, r.series);
    let merged = servelab_load::Report::merge(&[back]).unwrap();
    assert_eq!(merged.series[1].p99_us, r.series[1].p99_us);
}
