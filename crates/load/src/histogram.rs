//! Latency histograms: recording in the event loop, and their JSON form.
//!
//! Every latency is recorded in an HdrHistogram of microseconds (1 us to 1 hour,
//! 3 significant digits), one per thread, added together at the end. The JSON form
//! ([`Histogram`]) carries the summary a reader wants (min, mean, p50 ... max, a
//! percentile spectrum) *and* every non-empty bucket as `[value_us, count]`, so
//! that `servelab load merge` can rebuild the exact histogram of each segment and
//! add them: percentiles of a merged run are computed, never averaged.

use hdrhistogram::Histogram as Hdr;
use serde::{Deserialize, Serialize};

use crate::error::LoadError;

/// Highest latency the histograms track, in microseconds (1 hour); above is clamped.
pub const MAX_US: u64 = 3_600_000_000;
/// Significant decimal digits of every histogram.
pub const SIGFIG: u8 = 3;

/// The percentiles of the spectrum in the JSON report.
pub const SPECTRUM: [f64; 22] = [
    0.0, 10.0, 20.0, 25.0, 30.0, 40.0, 50.0, 60.0, 70.0, 75.0, 80.0, 90.0, 95.0, 97.5, 99.0, 99.5,
    99.9, 99.95, 99.99, 99.995, 99.999, 100.0,
];

/// A fresh, empty recording histogram.
pub(crate) fn new_hdr() -> Hdr<u64> {
    Hdr::new_with_bounds(1, MAX_US, SIGFIG).expect("constant bounds are valid")
}

/// A histogram as it appears in the JSON report; all values in microseconds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Histogram {
    /// Number of values recorded.
    pub count: u64,
    /// Smallest value (0 when empty).
    pub min: u64,
    /// Mean.
    pub mean: f64,
    /// Standard deviation.
    pub stdev: f64,
    /// Median.
    pub p50: u64,
    /// 90th percentile.
    pub p90: u64,
    /// 99th percentile.
    pub p99: u64,
    /// 99.9th percentile.
    pub p999: u64,
    /// Largest value.
    pub max: u64,
    /// `[percentile, value]` for each percentile in [`SPECTRUM`] and each
    /// one the run chose (`--percentiles`), ascending.
    pub percentiles: Vec<(f64, u64)>,
    /// Every non-empty bucket as `[highest value of the bucket, count]`, ascending:
    /// enough to rebuild the histogram exactly.
    pub buckets: Vec<(u64, u64)>,
}

impl Histogram {
    /// Summarises a recording histogram, with the standard spectrum.
    #[cfg(test)]
    pub(crate) fn from_hdr(h: &Hdr<u64>) -> Histogram {
        Histogram::from_hdr_with(h, &crate::metric::Percentiles::standard())
    }

    /// Summarises a recording histogram; `chosen` joins the spectrum.
    pub(crate) fn from_hdr_with(h: &Hdr<u64>, chosen: &crate::metric::Percentiles) -> Histogram {
        let count = h.len();
        let q = |p: f64| {
            if count == 0 {
                0
            } else {
                h.value_at_quantile(p / 100.0)
            }
        };
        Histogram {
            count,
            min: if count == 0 { 0 } else { h.min() },
            mean: if count == 0 { 0.0 } else { h.mean() },
            stdev: if count == 0 { 0.0 } else { h.stdev() },
            p50: q(50.0),
            p90: q(90.0),
            p99: q(99.0),
            p999: q(99.9),
            max: if count == 0 { 0 } else { h.max() },
            percentiles: {
                let mut ps: Vec<f64> = SPECTRUM.to_vec();
                ps.extend(chosen.iter().map(|p| p.value()));
                ps.sort_by(f64::total_cmp);
                ps.dedup();
                ps.into_iter().map(|p| (p, q(p))).collect()
            },
            buckets: h
                .iter_recorded()
                .map(|v| (v.value_iterated_to(), v.count_at_value()))
                .collect(),
        }
    }

    /// The value at percentile `p` (0 when empty): from the spectrum when it
    /// holds it, or else from the buckets.
    pub fn percentile(&self, p: crate::metric::Percentile) -> u64 {
        let v = p.value();
        if let Some(&(_, x)) = self.percentiles.iter().find(|(q, _)| *q == v) {
            return x;
        }
        match self.to_hdr() {
            Ok(h) if self.count > 0 => h.value_at_quantile(v / 100.0),
            _ => 0,
        }
    }

    /// Rebuilds the recording histogram from the buckets.
    pub(crate) fn to_hdr(&self) -> Result<Hdr<u64>, LoadError> {
        let mut h = new_hdr();
        for &(value, n) in &self.buckets {
            h.record_n(value, n)
                .map_err(|e| LoadError::Merge(format!("bucket {value}: {e:?}")))?;
        }
        if h.len() != self.count {
            return Err(LoadError::Merge(format!(
                "histogram buckets hold {} values but count says {}",
                h.len(),
                self.count
            )));
        }
        Ok(h)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_rebuild_the_exact_histogram() {
        let mut h = new_hdr();
        for v in [3u64, 17, 17, 250, 1_000, 12_345, 999_999, 5_000_000] {
            h.record(v).unwrap();
        }
        let j = Histogram::from_hdr(&h);
        let back = j.to_hdr().unwrap();
        assert_eq!(Histogram::from_hdr(&back), j);
        assert_eq!(j.count, 8);
        assert_eq!(j.min, 3);
    }

    #[test]
    fn merged_percentiles_come_from_added_buckets() {
        let (mut a, mut b, mut all) = (new_hdr(), new_hdr(), new_hdr());
        for v in 1..=1000u64 {
            a.record(v).unwrap();
            all.record(v).unwrap();
        }
        for v in 10_000..=10_100u64 {
            b.record(v).unwrap();
            all.record(v).unwrap();
        }
        let mut m = Histogram::from_hdr(&a).to_hdr().unwrap();
        m.add(Histogram::from_hdr(&b).to_hdr().unwrap()).unwrap();
        assert_eq!(Histogram::from_hdr(&m), Histogram::from_hdr(&all));
    }

    #[test]
    fn empty_histogram_is_all_zero() {
        let j = Histogram::from_hdr(&new_hdr());
        assert_eq!((j.count, j.min, j.max, j.p99), (0, 0, 0, 0));
        assert!(j.buckets.is_empty());
    }

    #[test]
    fn inconsistent_count_is_rejected() {
        let mut h = new_hdr();
        h.record(5).unwrap();
        let mut j = Histogram::from_hdr(&h);
        j.count = 2;
        assert!(j.to_hdr().is_err());
    }
}
