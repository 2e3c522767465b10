//! A small latency histogram for one second of the series: 1/8-octave buckets.
//!
//! The run's own histograms are HdrHistograms with 3 significant digits, about
//! 40 KiB each: fine four times per run, too much once per second per thread
//! for an hour. A timeline needs less: which second the p99 went up in, and by
//! about how much. So each second keeps counts in log-linear buckets, 8 per
//! power of two (values below 16 us exact), at most 496 of them (any u64; 240
//! for latencies up to an hour): a bucket's
//! midpoint is within 1/16 (6.25%) of any value in it. The counts are written
//! sparse (`[[bucket, count], ...]`), so segments and threads add exactly, and
//! the per-second `p50_us`/`p99_us` are recomputed from the sums.

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Values below this are counted exactly, one bucket each.
const EXACT: u64 = 16;
/// Buckets per power of two above [`EXACT`].
const PER_OCTAVE: u64 = 8;
/// Enough buckets for any u64 value.
const BUCKETS: usize = 16 + 60 * 8;

/// Counts of values in 1/8-octave buckets.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CoarseHistogram {
    counts: Vec<u32>,
}

/// The bucket of a value.
fn bucket(v: u64) -> usize {
    if v < EXACT {
        return v as usize;
    }
    let e = 63 - u64::from(v.leading_zeros()); // floor(log2 v), at least 4
    let sub = (v >> (e - 3)) & (PER_OCTAVE - 1);
    (EXACT + (e - 4) * PER_OCTAVE + sub) as usize
}

/// The midpoint of a bucket (its value, below [`EXACT`]).
fn midpoint(i: usize) -> u64 {
    let i = i as u64;
    if i < EXACT {
        return i;
    }
    let e = (i - EXACT) / PER_OCTAVE + 4;
    let sub = (i - EXACT) % PER_OCTAVE;
    let width = 1u64 << (e - 3);
    (PER_OCTAVE + sub) * width + width / 2
}

impl CoarseHistogram {
    /// Counts one value.
    #[inline]
    pub(crate) fn record(&mut self, v: u64) {
        let b = bucket(v);
        if self.counts.len() <= b {
            self.counts.resize(b + 1, 0);
        }
        self.counts[b] = self.counts[b].saturating_add(1);
    }

    /// Adds another histogram's counts.
    pub(crate) fn add(&mut self, o: &CoarseHistogram) {
        if self.counts.len() < o.counts.len() {
            self.counts.resize(o.counts.len(), 0);
        }
        for (a, b) in self.counts.iter_mut().zip(&o.counts) {
            *a = a.saturating_add(*b);
        }
    }

    /// How many values.
    pub fn count(&self) -> u64 {
        self.counts.iter().map(|&c| u64::from(c)).sum()
    }

    /// The `q` quantile (0 to 1), as its bucket's midpoint; `None` when empty.
    pub fn quantile(&self, q: f64) -> Option<u64> {
        let n = self.count();
        if n == 0 {
            return None;
        }
        // The smallest value with at least ceil(q n) values at or below it.
        let rank = ((q * n as f64).ceil() as u64).clamp(1, n);
        let mut seen = 0;
        for (i, &c) in self.counts.iter().enumerate() {
            seen += u64::from(c);
            if seen >= rank {
                return Some(midpoint(i));
            }
        }
        None
    }
}

impl Serialize for CoarseHistogram {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let sparse: Vec<(usize, u32)> = self
            .counts
            .iter()
            .enumerate()
            .filter(|(_, c)| **c > 0)
            .map(|(i, &c)| (i, c))
            .collect();
        sparse.serialize(s)
    }
}

impl<'de> Deserialize<'de> for CoarseHistogram {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<CoarseHistogram, D::Error> {
        let sparse = Vec::<(usize, u32)>::deserialize(d)?;
        let mut h = CoarseHistogram::default();
        for (i, c) in sparse {
            if i >= BUCKETS {
                return Err(serde::de::Error::custom(format!(
                    "latency bucket {i} is beyond the last, {}",
                    BUCKETS - 1
                )));
            }
            if h.counts.len() <= i {
                h.counts.resize(i + 1, 0);
            }
            h.counts[i] = h.counts[i].saturating_add(c);
        }
        Ok(h)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_hold_their_values_within_a_sixteenth() {
        for v in (0..100_000u64).chain([1 << 40, u64::MAX / 3, u64::MAX]) {
            let b = bucket(v);
            assert!(b < BUCKETS, "{v}");
            let m = midpoint(b) as f64;
            assert!((m - v as f64).abs() <= v as f64 / 16.0 + 0.5, "{v}: {m}");
            if v > 0 {
                assert!(bucket(v - 1) <= b, "monotone at {v}");
            }
        }
    }

    #[test]
    fn quantiles_add_and_round_trip_sparse() {
        let mut a = CoarseHistogram::default();
        for v in 1..=100 {
            a.record(v * 100);
        }
        let p50 = a.quantile(0.5).unwrap() as f64;
        assert!((p50 - 5000.0).abs() <= 5000.0 / 16.0, "{p50}");
        let p99 = a.quantile(0.99).unwrap() as f64;
        assert!((p99 - 9900.0).abs() <= 9900.0 / 16.0, "{p99}");
        let mut b = CoarseHistogram::default();
        b.record(3);
        b.add(&a);
        assert_eq!(b.count(), 101);
        assert_eq!(b.quantile(0.0), Some(3));
        let json = serde_json::to_string(&b).unwrap();
        assert_eq!(serde_json::from_str::<CoarseHistogram>(&json).unwrap(), b);
        assert!(serde_json::from_str::<CoarseHistogram>("[[9999,1]]").is_err());
        assert_eq!(CoarseHistogram::default().quantile(0.5), None);
    }
}
