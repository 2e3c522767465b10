//! `/-/metrics` has a service-time histogram that counts exactly the responses
//! completely written, on every engine (the process engines through the shared
//! counter mapping).

use crate::support::*;

fn sample(text: &str, name: &str) -> f64 {
    text.lines()
        .find_map(|l| l.strip_prefix(name)?.strip_prefix(' '))
        .unwrap_or_else(|| panic!("no {name} in {text}"))
        .parse()
        .unwrap()
}

#[test]
fn histogram_counts_every_response() {
    for engine in servelab_server::Engine::here() {
        let dir = fixture();
        let server = start(dir.path(), engine, |c| c.status = true);
        let addr = server.local_addr();
        let n = 7;
        for i in 0..n {
            let path = if i % 3 == 0 { "/missing" } else { "/hello.txt" };
            simple(addr, path);
        }
        let m = String::from_utf8(simple(addr, "/-/metrics").body).unwrap();
        // The metrics request itself is not complete yet.
        let count = sample(&m, "servelab_service_seconds_count");
        assert_eq!(count, n as f64, "{engine}: {m}");
        assert_eq!(
            sample(&m, "servelab_service_seconds_bucket{le=\"+Inf\"}"),
            count
        );
        let sum = sample(&m, "servelab_service_seconds_sum");
        assert!(sum > 0.0, "{engine}: {sum}");
        // Cumulative buckets never decrease.
        let buckets: Vec<f64> = m
            .lines()
            .filter(|l| l.starts_with("servelab_service_seconds_bucket"))
            .map(|l| l.rsplit(' ').next().unwrap().parse().unwrap())
            .collect();
        assert!(
            buckets.windows(2).all(|w| w[0] <= w[1]),
            "{engine}: {buckets:?}"
        );
        server.shutdown().unwrap();
    }
}
