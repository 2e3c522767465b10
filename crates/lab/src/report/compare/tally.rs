//! How many points two runs differ at, and what chance allows for that count.
//!
//! A point's figures are not independent tests: throughput, response time and
//! CPU per request are tied by Little's law and the utilisation law, so a
//! point that moved moves in all of them, and a point that chance moved does
//! too. Counting figures therefore overstates the evidence: the same binary
//! against itself (`lab ab connections`, quiet machine, 2026-11-28) marked 4 of
//! 16 figures, all four at one point (epoll, 512 connections, where the client
//! is the bottleneck), under a line that said "about 1 in 20 is marked by
//! chance alone". So marks are counted by point: a point differs when Holm's
//! step-down procedure over its figures' Welch p-values rejects at 95% (the
//! family-wise rate of one point is then at most 5%), and a figure is marked
//! only when Holm rejects it. The tally then says how many of N points chance
//! alone marks on average (0.05 N) and at most in 95 runs of 100 (the
//! binomial's 95th percentile).
//!
//! A point flagged for a saturated client (the `client` check, on either
//! side) measures the load generator, not the server: it is shown and marked,
//! but left out of the tally of evidence about servers, and named.

use std::collections::BTreeMap;

use crate::check::CheckKind;
use crate::store::results::RunResults;

use super::row::Row;

/// Family-wise error rate of one point's figures.
const ALPHA: f64 = 0.05;

/// The marks of a comparison, by point.
#[derive(Debug, Clone, PartialEq)]
pub struct Tally {
    /// For each row (in the rows' order): whether Holm's procedure over its
    /// point's figures marks it.
    pub marked: Vec<bool>,
    /// Points with at least one tested figure and no saturated client.
    pub tested: Vec<String>,
    /// Of those, the points Holm marks.
    pub differ: Vec<String>,
    /// Points left out: a side's client was saturated there.
    pub client_bound: Vec<String>,
}

impl Tally {
    /// The marks of `rows` (from [`super::rows`] of `a` and `b`).
    pub fn of(a: &RunResults, b: &RunResults, rows: &[Row]) -> Tally {
        let mut by_point: BTreeMap<&str, Vec<(usize, f64)>> = BTreeMap::new();
        for (i, r) in rows.iter().enumerate() {
            if let Some(w) = r.welch() {
                by_point.entry(r.point.as_str()).or_default().push((i, w.p));
            }
        }
        let mut marked = vec![false; rows.len()];
        let (mut tested, mut differ, mut client_bound) = (Vec::new(), Vec::new(), Vec::new());
        // Points in the rows' order, each once.
        let mut order: Vec<&str> = Vec::new();
        for r in rows {
            if by_point.contains_key(r.point.as_str()) && !order.contains(&r.point.as_str()) {
                order.push(r.point.as_str());
            }
        }
        for point in order {
            let ps = &by_point[point];
            let rejected = holm(ps);
            for &i in &rejected {
                marked[i] = true;
            }
            if is_client_bound(a, point) || is_client_bound(b, point) {
                client_bound.push(point.to_string());
                continue;
            }
            tested.push(point.to_string());
            if !rejected.is_empty() {
                differ.push(point.to_string());
            }
        }
        Tally {
            marked,
            tested,
            differ,
            client_bound,
        }
    }

    /// The line under the table: the count, what chance allows, what is left out.
    pub fn sentence(&self) -> String {
        let n = self.tested.len();
        let mut s = format!(
            "{} of {n} points differ{}",
            self.differ.len(),
            if self.differ.is_empty() {
                String::new()
            } else {
                format!(" ({})", self.differ.join("; "))
            }
        );
        if n > 0 {
            s.push_str(&format!(
                "; by chance alone {n} points at 5% each are marked {:.2} on average and at most {} \
                 in 95 runs of 100 (binomial)",
                ALPHA * n as f64,
                binomial_quantile(n, ALPHA, 0.95)
            ));
        }
        if !self.client_bound.is_empty() {
            s.push_str(&format!(
                "; left out of the tally, because the load generator was saturated there (it \
                 measures the client, not the server): {}",
                self.client_bound.join("; ")
            ));
        }
        s
    }
}

/// Holm's step-down procedure at [`ALPHA`]: the rows it rejects, from `(row,
/// p)` pairs of one point.
fn holm(ps: &[(usize, f64)]) -> Vec<usize> {
    let mut sorted = ps.to_vec();
    sorted.sort_by(|x, y| x.1.total_cmp(&y.1));
    let k = sorted.len();
    let mut out = Vec::new();
    for (j, (i, p)) in sorted.iter().enumerate() {
        if *p <= ALPHA / (k - j) as f64 {
            out.push(*i);
        } else {
            break;
        }
    }
    out
}

/// Whether a run's point (by its label) failed the client check.
fn is_client_bound(r: &RunResults, point: &str) -> bool {
    r.points.iter().any(|p| {
        p.label() == point
            && p.checks
                .iter()
                .any(|c| c.kind == CheckKind::Client && !c.passed)
    })
}

/// The smallest k with P(X ≤ k) ≥ `q` for X ~ Binomial(n, p).
fn binomial_quantile(n: usize, p: f64, q: f64) -> usize {
    let mut term = (1.0 - p).powi(n as i32); // P(X = 0)
    let mut cdf = term;
    let mut k = 0;
    while cdf < q && k < n {
        term *= (n - k) as f64 / (k + 1) as f64 * p / (1.0 - p);
        k += 1;
        cdf += term;
    }
    k
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metric::Metric;
    use crate::store::results::Stat;

    #[test]
    fn the_binomial_quantile_is_what_chance_allows() {
        // 16 tests at 5%: 0.8 on average, at most 2 in 95 runs of 100.
        assert_eq!(binomial_quantile(16, 0.05, 0.95), 2);
        // 52 tests: at most 5 (docs/lab.md's lab ab figures).
        assert_eq!(binomial_quantile(52, 0.05, 0.95), 5);
        assert_eq!(binomial_quantile(1, 0.05, 0.95), 0);
    }

    #[test]
    fn holm_steps_down_over_a_points_figures() {
        // Four figures: 0.001 < 0.05/4, 0.02 > 0.05/3, so only the first.
        assert_eq!(holm(&[(0, 0.02), (1, 0.001), (2, 0.5), (3, 0.04)]), vec![1]);
        // 0.01 < 0.0125, 0.015 < 0.0167, 0.02 < 0.025, 0.04 < 0.05: all.
        let all = holm(&[(0, 0.01), (1, 0.015), (2, 0.02), (3, 0.04)]);
        assert_eq!(all.len(), 4);
        assert!(holm(&[(0, 0.06)]).is_empty());
    }

    /// Regression (issue 31): `lab ab connections`, the same binary on both
    /// sides, marked 4 of 16 figures, all at epoll with 512 connections where
    /// the client was the bottleneck, under "about 1 in 20 is marked by chance
    /// alone". Counted by point, that point is one mark, and as client-bound it
    /// is no evidence about the server: the tally is 0 of 3 points.
    #[test]
    fn marks_count_by_point_and_client_bound_points_stay_out_of_the_tally() {
        use crate::report::plot::figure::tests::{EXP, quick_run};
        let exp = crate::experiment::Experiment::parse(EXP, "t.toml").unwrap();
        let a = quick_run(&exp);
        let mut b = a.clone();
        // Three repeats a side; B 5% higher in every figure of the last point.
        let spread = |v: f64| Stat::of(&[v * 0.99, v, v * 1.01]).unwrap();
        let last = a
            .points
            .iter()
            .rposition(|p| p.summary.contains_key(&Metric::Throughput))
            .unwrap();
        let mut a = a;
        for (i, (pa, pb)) in a.points.iter_mut().zip(b.points.iter_mut()).enumerate() {
            for m in [
                Metric::Throughput,
                Metric::MeanMs,
                Metric::CpuUs,
                Metric::P99Ms,
            ] {
                if pa.status != crate::store::results::Status::Ok {
                    continue;
                }
                let v = 100.0;
                pa.summary.insert(m, spread(v));
                pb.summary
                    .insert(m, spread(if i == last { v * 1.05 } else { v }));
            }
        }
        let rows = super::super::row::rows(&a, &b);
        let t = Tally::of(&a, &b, &rows);
        assert_eq!(t.marked.iter().filter(|m| **m).count(), 4, "{t:?}");
        assert_eq!((t.tested.len(), t.differ.len()), (4, 1), "{t:?}");
        let s = t.sentence();
        assert!(s.starts_with("1 of 4 points differ ("), "{s}");
        assert!(
            s.contains("0.20 on average and at most 1 in 95 runs of 100"),
            "{s}"
        );
        // The client was saturated at that point in B: out of the tally.
        b.points[last].checks.push(crate::check::Check {
            kind: CheckKind::Client,
            passed: false,
            detail: "load generator on CPU 99%".into(),
        });
        let t = Tally::of(&a, &b, &rows);
        assert_eq!((t.tested.len(), t.differ.len()), (3, 0), "{t:?}");
        assert_eq!(t.marked.iter().filter(|m| **m).count(), 4, "still shown");
        assert!(
            t.sentence().contains("left out of the tally"),
            "{}",
            t.sentence()
        );
    }
}
