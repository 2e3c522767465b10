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

use super::Row;
use crate::metric::{Better, Metric};

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::{rows, separate_shift, text};
    use crate::experiment::Experiment;
    use crate::plot::figure::tests::{EXP, quick_run};
    use crate::results::{RunResults, Stat, Status};

    /// A run of `EXP` whose 4 measured points each have throughput, mean and
    /// 99th percentile response time and CPU per request from 3 repeats
    /// (16 figures), each scaled by `scale(point, metric)`.
    fn run(scale: impl Fn(usize, Metric) -> f64) -> RunResults {
        let exp = Experiment::parse(EXP, "t.toml").unwrap();
        let mut r = quick_run(&exp);
        let mut k = 0;
        for p in r.points.iter_mut().filter(|p| p.status == Status::Ok) {
            p.summary.clear();
            for (m, base) in [
                (Metric::Throughput, 1000.0),
                (Metric::MeanMs, 2.0),
                (Metric::P99Ms, 9.0),
                (Metric::CpuUs, 30.0),
            ] {
                let x = base * scale(k, m);
                // 0.2% spread: any shift of a few percent is marked.
                p.summary
                    .insert(m, Stat::of(&[x * 0.998, x, x * 1.002]).unwrap());
            }
            k += 1;
        }
        assert_eq!(k, 4);
        r
    }

    /// B 5% slower everywhere: throughput 5% lower, times and CPU 5% higher.
    fn slower(_: usize, m: Metric) -> f64 {
        if m == Metric::Throughput { 0.95 } else { 1.05 }
    }

    #[test]
    fn sixteen_figures_all_five_percent_worse_are_named_as_one_shift() {
        let a = run(|_, _| 1.0);
        let b = run(slower);
        let rows = rows(&a, &b);
        assert_eq!(rows.iter().filter(|r| r.significant()).count(), 16);
        let shift = separate_shift(&a, &b, &rows).expect("a uniform shift is named");
        assert!(shift.worse);
        assert_eq!((shift.agree, shift.marked), (16, 16));
        let hi = shift.higher.as_ref().unwrap();
        assert_eq!(
            (hi.n, hi.metrics.as_slice()),
            (4, &[Metric::Throughput][..])
        );
        assert!((hi.median - 0.95).abs() < 1e-9, "{hi:?}");
        let lo = shift.lower.as_ref().unwrap();
        assert_eq!(lo.n, 12);
        assert!((lo.median - 1.05).abs() < 1e-9, "{lo:?}");
        let t = text(&a, &b, "A", "B");
        let line = t
            .lines()
            .find(|l| l.starts_with("common shift: "))
            .expect("the line is printed");
        assert!(
            line.starts_with("common shift: 16 of 16 marked figures say B is worse than A (throughput B/A median 0.950, 0.950..0.950 over 4 figures; mean_ms, p99_ms, cpu_us B/A median 1.050"),
            "{line}"
        );
        assert!(line.contains("`servelab lab ab"), "{line}");
        // Every mark stays: the line explains them, it does not hide them.
        assert_eq!(t.lines().filter(|l| l.ends_with(" *")).count(), 16);
    }

    #[test]
    fn marks_in_both_directions_or_too_few_are_no_common_shift() {
        let a = run(|_, _| 1.0);
        // Two points better, two worse.
        let b = run(|k, m| {
            if k % 2 == 0 {
                slower(k, m)
            } else {
                1.0 / slower(k, m)
            }
        });
        let marked = rows(&a, &b);
        assert_eq!(marked.iter().filter(|r| r.significant()).count(), 16);
        assert_eq!(separate_shift(&a, &b, &marked), None);
        assert!(!text(&a, &b, "A", "B").contains("common shift"));
        // Three marked figures are too few to call a pattern.
        let b = run(|k, m| {
            if k == 0 && m != Metric::CpuUs {
                slower(k, m)
            } else {
                1.0
            }
        });
        let marked = rows(&a, &b);
        assert_eq!(marked.iter().filter(|r| r.significant()).count(), 3);
        assert_eq!(separate_shift(&a, &b, &marked), None);
        // Twelve of sixteen (three in four) agreeing is a common shift.
        let b = run(|k, m| {
            if k == 0 {
                1.0 / slower(k, m)
            } else {
                slower(k, m)
            }
        });
        let shift = separate_shift(&a, &b, &rows(&a, &b)).unwrap();
        assert_eq!((shift.agree, shift.marked, shift.worse), (12, 16, true));
    }

    #[test]
    fn an_interleaved_pair_gets_no_common_shift_line() {
        use crate::results::{Alternation, Interleaved, Side};
        let mut a = run(|_, _| 1.0);
        let mut b = run(slower);
        let record = |side| Interleaved {
            side,
            pair: "p".into(),
            exe_a: "/a".into(),
            exe_b: "/b".into(),
            by: Alternation::Repeat,
            first: vec![Side::A, Side::B],
            started_s: vec![],
            repeat_started_s: vec![],
            server_pid: vec![],
        };
        let protocol = crate::protocol::Protocol {
            quick: true,
            window_s: 0.25,
            warmup_s: 0.1,
            min_repeats: 3,
            max_repeats: 3,
            precision: 0.02,
            headline: Metric::Throughput,
            interleaved: None,
        };
        a.protocol = Some(crate::protocol::Protocol {
            interleaved: Some(record(Side::A)),
            ..protocol.clone()
        });
        b.protocol = Some(crate::protocol::Protocol {
            interleaved: Some(record(Side::B)),
            ..protocol
        });
        let t = text(&a, &b, "A", "B");
        assert!(
            t.contains("design: an interleaved pair")
                && t.contains("ABBA by repeat, both servers alive"),
            "{t}"
        );
        assert!(
            !t.contains("common shift") && !t.contains("different protocols"),
            "{t}"
        );
        // The same uniform change, now measured interleaved, is marked as a change.
        assert_eq!(t.lines().filter(|l| l.ends_with(" *")).count(), 16);
        // A pair of the first `lab ab` (by point) says so.
        for r in [&mut a, &mut b] {
            if let Some(i) = r.protocol.as_mut().and_then(|p| p.interleaved.as_mut()) {
                i.by = Alternation::Point;
            }
        }
        let t = text(&a, &b, "A", "B");
        assert!(
            t.contains("in ABBA order by point") && !t.contains("by repeat"),
            "{t}"
        );
        // Two sides of different pairs are separate runs.
        if let Some(i) = b.protocol.as_mut().and_then(|p| p.interleaved.as_mut()) {
            i.pair = "q".into();
        }
        let t = text(&a, &b, "A", "B");
        assert!(
            t.contains("design: two separate runs") && t.contains("common shift"),
            "{t}"
        );
        assert!(t.contains("but not of a pair with the other run"), "{t}");
    }
}
