//! One compared figure of `lab compare`, and the rows of two runs: their
//! points matched by server and axis values.

use crate::metric::Metric;
use crate::sample::Welch;
use crate::store::results::{PointRecord, RunResults, Stat, Status};

/// Metrics compared, in this order, when both runs have them.
const METRICS: [Metric; 5] = [
    Metric::Throughput,
    Metric::MeanMs,
    Metric::P99Ms,
    Metric::CpuUs,
    Metric::Utilisation,
];

/// One compared figure.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// The point (server and axis values).
    pub point: String,
    /// The metric.
    pub metric: Metric,
    /// A's figure.
    pub a: Option<Stat>,
    /// B's figure.
    pub b: Option<Stat>,
}

impl Row {
    /// B's mean over A's.
    pub fn ratio(&self) -> Option<f64> {
        let (a, b) = (self.a?, self.b?);
        (a.mean != 0.0).then(|| b.mean / a.mean)
    }

    /// Welch's t-test of B against A (`None` below 2 repeats on a side).
    pub(crate) fn welch(&self) -> Option<Welch> {
        Welch::test(&self.a?.sample(), &self.b?.sample())
    }

    /// Whether Welch's t-test at 95% finds a difference.
    pub fn significant(&self) -> bool {
        self.welch().is_some_and(|w| w.significant())
    }

    /// The effect size: B − A relative to A, with its 95% interval, in percent
    /// ("+12.3% ± 2.1%"); `None` without a test.
    pub fn effect(&self) -> Option<String> {
        let w = self.welch()?;
        let a = self.a?.mean;
        if a == 0.0 {
            return None;
        }
        Some(format!(
            "{:+.1}% ± {:.1}%",
            w.diff / a.abs() * 100.0,
            w.half_width / a.abs() * 100.0
        ))
    }
}

pub(crate) fn key(p: &PointRecord) -> String {
    p.label()
}

/// The rows of a comparison.
pub fn rows(a: &RunResults, b: &RunResults) -> Vec<Row> {
    let mut out = Vec::new();
    let mut keys: Vec<String> = a.points.iter().map(key).collect();
    for p in &b.points {
        let k = key(p);
        if !keys.contains(&k) {
            keys.push(k);
        }
    }
    let get = |r: &RunResults, k: &str, m: Metric| {
        r.points
            .iter()
            .find(|p| key(p) == k && p.status == Status::Ok)
            .and_then(|p| p.summary.get(&m).copied())
    };
    for k in keys {
        for m in METRICS {
            let (sa, sb) = (get(a, &k, m), get(b, &k, m));
            if sa.is_some() || sb.is_some() {
                out.push(Row {
                    point: k.clone(),
                    metric: m,
                    a: sa,
                    b: sb,
                });
            }
        }
    }
    out
}
