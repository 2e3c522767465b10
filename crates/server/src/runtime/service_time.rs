//! The service-time histogram of `/-/metrics`: Prometheus buckets, `_sum` and `_count`.
//!
//! Service time is what the access log's last field measures: from the moment a request
//! has been parsed to the moment its response is completely written (so it includes
//! `--work`, `--delay` and the send). Responses whose client went away are not counted
//! (they are in `requests_abandoned_total`).
//!
//! The counts live beside the other counters in the shared mapping (`stats.rs`), so they are
//! exact for the process engines too: one relaxed `fetch_add` on the bucket and one on the
//! sum per response, each counter on its own cache line. Buckets are stored per interval
//! (not cumulatively) so that a response touches one bucket; the exposition adds them up.
//! The sum is kept in nanoseconds, so it is exact (it would wrap after 584 years of
//! cumulative service time).
//!
//! The bounds are Prometheus' usual 1-2.5-5 steps from 100 µs to 10 s: a static file on
//! loopback takes tens of microseconds, a `--delay` experiment up to seconds.

use std::fmt::Write as _;
use std::time::Duration;

/// Upper bounds of the buckets in nanoseconds (`le`, inclusive); a last bucket is `+Inf`.
pub(crate) const BOUNDS_NS: [u64; 16] = [
    100_000,
    250_000,
    500_000,
    1_000_000,
    2_500_000,
    5_000_000,
    10_000_000,
    25_000_000,
    50_000_000,
    100_000_000,
    250_000_000,
    500_000_000,
    1_000_000_000,
    2_500_000_000,
    5_000_000_000,
    10_000_000_000,
];

/// Buckets stored: one per bound and `+Inf`.
pub(crate) const BUCKETS: usize = BOUNDS_NS.len() + 1;

/// The bucket a service time falls in: the first whose bound is at least `d`.
pub(crate) fn bucket(d: Duration) -> usize {
    let ns = nanos(d);
    BOUNDS_NS.partition_point(|&b| b < ns)
}

/// `d` in nanoseconds, saturating.
pub(crate) fn nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

/// A copy of the histogram at one moment.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ServiceTimes {
    /// Responses per bucket (not cumulative), the last one above 10 s.
    pub buckets: [u64; BUCKETS],
    /// Sum of all service times, in nanoseconds.
    pub sum_ns: u64,
}

impl ServiceTimes {
    /// Responses counted.
    pub fn count(&self) -> u64 {
        self.buckets.iter().sum()
    }

    /// Appends the histogram in the Prometheus text format 0.0.4.
    pub(crate) fn render(&self, o: &mut String) {
        self.render_as(
            o,
            "servelab_service_seconds",
            "Time from a parsed request to its response completely written.",
        );
    }

    /// Appends the histogram as the metric `name` (the same bounds serve
    /// the TLS handshake time).
    pub(crate) fn render_as(&self, o: &mut String, name: &str, help: &str) {
        // Writing to a String cannot fail.
        let _ = writeln!(o, "# HELP {name} {help}");
        let _ = writeln!(o, "# TYPE {name} histogram");
        let mut cumulative = 0;
        for (i, &bound) in BOUNDS_NS.iter().enumerate() {
            cumulative += self.buckets[i];
            let _ = writeln!(o, "{name}_bucket{{le=\"{}\"}} {cumulative}", seconds(bound));
        }
        cumulative += self.buckets[BUCKETS - 1];
        let _ = writeln!(o, "{name}_bucket{{le=\"+Inf\"}} {cumulative}");
        let _ = writeln!(o, "{name}_sum {}", seconds(self.sum_ns));
        let _ = writeln!(o, "{name}_count {cumulative}");
    }
}

/// Nanoseconds as decimal seconds with no trailing zeros (`0.00025`, `1`, `2.5`), exact:
/// integer arithmetic, no float rounding.
fn seconds(ns: u64) -> String {
    let (whole, frac) = (ns / 1_000_000_000, ns % 1_000_000_000);
    if frac == 0 {
        return whole.to_string();
    }
    let digits = format!("{frac:09}");
    format!("{whole}.{}", digits.trim_end_matches('0'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_are_inclusive_upper_bounds() {
        assert_eq!(bucket(Duration::ZERO), 0);
        assert_eq!(bucket(Duration::from_micros(100)), 0);
        assert_eq!(bucket(Duration::from_nanos(100_001)), 1);
        assert_eq!(bucket(Duration::from_millis(1)), 3);
        assert_eq!(bucket(Duration::from_secs(10)), BUCKETS - 2);
        assert_eq!(bucket(Duration::from_secs(11)), BUCKETS - 1);
        assert_eq!(bucket(Duration::MAX), BUCKETS - 1);
        assert!(BOUNDS_NS.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn seconds_are_exact_decimals() {
        assert_eq!(seconds(100_000), "0.0001");
        assert_eq!(seconds(250_000), "0.00025");
        assert_eq!(seconds(1_000_000_000), "1");
        assert_eq!(seconds(2_500_000_000), "2.5");
        assert_eq!(seconds(1), "0.000000001");
        assert_eq!(seconds(0), "0");
    }

    #[test]
    fn exposition_is_cumulative_with_sum_and_count() {
        let mut h = ServiceTimes::default();
        for d in [50_000u64, 90_000, 300_000, 20_000_000_000] {
            h.buckets[bucket(Duration::from_nanos(d))] += 1;
            h.sum_ns += d;
        }
        assert_eq!(h.count(), 4);
        let mut o = String::new();
        h.render(&mut o);
        assert!(o.contains("# TYPE servelab_service_seconds histogram\n"));
        assert!(o.contains("servelab_service_seconds_bucket{le=\"0.0001\"} 2\n"));
        assert!(o.contains("servelab_service_seconds_bucket{le=\"0.00025\"} 2\n"));
        assert!(o.contains("servelab_service_seconds_bucket{le=\"0.0005\"} 3\n"));
        assert!(o.contains("servelab_service_seconds_bucket{le=\"10\"} 3\n"));
        assert!(o.contains("servelab_service_seconds_bucket{le=\"+Inf\"} 4\n"));
        assert!(o.contains("servelab_service_seconds_sum 20.00044\n"));
        assert!(o.ends_with("servelab_service_seconds_count 4\n"));
        // Every bucket line, in increasing `le`, never decreasing.
        let counts: Vec<u64> = o
            .lines()
            .filter(|l| l.starts_with("servelab_service_seconds_bucket"))
            .map(|l| l.rsplit(' ').next().unwrap().parse().unwrap())
            .collect();
        assert_eq!(counts.len(), BUCKETS);
        assert!(counts.windows(2).all(|w| w[0] <= w[1]));
    }
}
