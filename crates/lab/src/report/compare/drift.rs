//! The common shift of two separate runs: when most figures that Welch's t
//! marks move the same way, the one line that says so and what it cannot tell.
//!
//! Two runs made at different times differ by the change compared and by
//! whatever the machine did in between (other tenants, frequency, caches). The
//! repeats of each run sample only the noise within it, so drift between the
//! runs is marked as if it were a change, and it marks every point the same
//! way. That pattern is said once under the table, with its size; nothing is
//! unmarked, because a uniform change of the build looks the same. Only a
//! design that measures A and B interleaved (`servelab lab ab`) tells them apart.

use std::fmt;

use super::design::pair;
use super::row::Row;
use crate::metric::{Better, Metric};
use crate::store::results::RunResults;

/// Fewest marked figures with a direction before a common shift is named: with
/// two or three, "most of them" is an anecdote.
pub const FEWEST: usize = 4;

/// The share of the marked figures that must agree for the shift to be
/// called common (three in four).
pub const MOST: f64 = 0.75;

/// B/A over some figures: the median and the range.
#[derive(Debug, Clone, PartialEq)]
pub struct Ratios {
    /// The metrics they belong to, in the table's order.
    pub metrics: Vec<Metric>,
    /// Median B/A.
    pub median: f64,
    /// Smallest B/A.
    pub lo: f64,
    /// Largest B/A.
    pub hi: f64,
    /// How many figures.
    pub n: usize,
}

impl Ratios {
    fn of(rows: &[&Row]) -> Option<Ratios> {
        let mut v: Vec<f64> = rows.iter().filter_map(|r| r.ratio()).collect();
        if v.is_empty() {
            return None;
        }
        v.sort_by(f64::total_cmp);
        let n = v.len();
        let median = if n % 2 == 1 {
            v[n / 2]
        } else {
            (v[n / 2 - 1] + v[n / 2]) / 2.0
        };
        let mut metrics: Vec<Metric> = rows.iter().map(|r| r.metric).collect();
        metrics.sort();
        metrics.dedup();
        Some(Ratios {
            metrics,
            median,
            lo: v[0],
            hi: v[n - 1],
            n,
        })
    }
}

/// Most marked figures of two separate runs say B is better (or worse) than A.
#[derive(Debug, Clone, PartialEq)]
pub struct Shift {
    /// Whether they say B is worse.
    pub worse: bool,
    /// How many marked figures say so.
    pub agree: usize,
    /// Marked figures of a metric with a better direction.
    pub marked: usize,
    /// B/A of the agreeing figures where more is better (throughput).
    pub higher: Option<Ratios>,
    /// B/A of the agreeing figures where less is better (times, CPU).
    pub lower: Option<Ratios>,
}

/// Whether B is better than A on this row (`None` for a metric that does not
/// rank, or without a ratio).
fn b_better(r: &Row) -> Option<bool> {
    let x = r.ratio()?;
    match r.metric.better() {
        Better::Higher => Some(x > 1.0),
        Better::Lower => Some(x < 1.0),
        Better::Neither => None,
    }
}

/// The common shift of the marked rows, when at least [`FEWEST`] marked
/// figures rank B against A and at least [`MOST`] of them agree.
pub fn common_shift(rows: &[Row]) -> Option<Shift> {
    let marked: Vec<(&Row, bool)> = rows
        .iter()
        .filter(|r| r.significant())
        .filter_map(|r| b_better(r).map(|b| (r, b)))
        .collect();
    let better = marked.iter().filter(|(_, b)| *b).count();
    let worse = marked.len() - better;
    let agree = better.max(worse);
    if marked.len() < FEWEST || (agree as f64) < MOST * marked.len() as f64 {
        return None;
    }
    let is_worse = worse >= better;
    let side: Vec<&Row> = marked
        .iter()
        .filter(|(_, b)| *b != is_worse)
        .map(|(r, _)| *r)
        .collect();
    let by = |want: Better| -> Vec<&Row> {
        side.iter()
            .copied()
            .filter(|r| r.metric.better() == want)
            .collect()
    };
    Some(Shift {
        worse: is_worse,
        agree,
        marked: marked.len(),
        higher: Ratios::of(&by(Better::Higher)),
        lower: Ratios::of(&by(Better::Lower)),
    })
}

impl fmt::Display for Shift {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let groups: Vec<String> = [&self.higher, &self.lower]
            .into_iter()
            .flatten()
            .map(|g| {
                let names: Vec<&str> = g.metrics.iter().map(|m| m.name()).collect();
                format!(
                    "{} B/A median {:.3}, {:.3}..{:.3} over {} figure{}",
                    names.join(", "),
                    g.median,
                    g.lo,
                    g.hi,
                    g.n,
                    if g.n == 1 { "" } else { "s" }
                )
            })
            .collect();
        write!(
            f,
            "{} of {} marked figures say B is {} than A ({}). Two separate runs cannot tell a \
             change this uniform from the machine drifting between them; \
             `servelab lab ab EXPERIMENT --a OLD --b NEW` measures both interleaved and can.",
            self.agree,
            self.marked,
            if self.worse { "worse" } else { "better" },
            groups.join("; ")
        )
    }
}

/// The common shift of two separate runs' marked figures (this module); never
/// for an interleaved pair, whose design already tells drift from change.
pub fn separate_shift(a: &RunResults, b: &RunResults, rows: &[Row]) -> Option<Shift> {
    if pair(a, b).is_some() {
        return None;
    }
    common_shift(rows)
}
