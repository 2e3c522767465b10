//! `servelab lab compare A B`: two runs side by side (before and after a change).
//!
//! Points are matched by server and axis values; each metric shows A's median,
//! B's median and B/A, and a change is called out only when the two runs' ranges
//! (min..max over repeats) do not overlap, so that noise is not read as progress.

use std::fmt::Write as _;

use crate::metric::{self, Metric};
use crate::report::{STYLE, esc};
use crate::results::{PointRecord, RunResults, Stat, Status};

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
    /// B's median over A's.
    pub fn ratio(&self) -> Option<f64> {
        let (a, b) = (self.a?, self.b?);
        (a.median != 0.0).then(|| b.median / a.median)
    }

    /// Whether the ranges are disjoint (a change larger than the spread).
    pub fn significant(&self) -> bool {
        match (self.a, self.b) {
            (Some(a), Some(b)) => a.max < b.min || b.max < a.min,
            _ => false,
        }
    }
}

fn key(p: &PointRecord) -> String {
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

fn cell(s: Option<Stat>) -> String {
    s.map_or("-".into(), |s| metric::fmt(s.median))
}

/// A plain-text table for the terminal.
pub fn text(a: &RunResults, b: &RunResults, a_name: &str, b_name: &str) -> String {
    let mut t = String::new();
    let _ = writeln!(
        t,
        "A: {a_name} ({}, {}, commit {})",
        a.experiment, a.started_utc, a.machine.git_commit
    );
    let _ = writeln!(
        t,
        "B: {b_name} ({}, {}, commit {})",
        b.experiment, b.started_utc, b.machine.git_commit
    );
    if a.experiment != b.experiment {
        let _ = writeln!(
            t,
            "note: different experiments; only points with the same server and axis values match"
        );
    }
    if a.machine.cpu_model != b.machine.cpu_model || a.machine.cores != b.machine.cores {
        let _ = writeln!(
            t,
            "note: different machines ({} x{} vs {} x{})",
            a.machine.cpu_model, a.machine.cores, b.machine.cpu_model, b.machine.cores
        );
    }
    let rows = rows(a, b);
    let w = rows.iter().map(|r| r.point.len()).max().unwrap_or(5).max(5);
    let _ = writeln!(
        t,
        "{:<w$}  {:<12} {:>10} {:>10} {:>7}",
        "point", "metric", "A", "B", "B/A"
    );
    for r in &rows {
        let ratio = r.ratio().map_or("-".into(), |x| format!("{x:.2}"));
        let mark = if r.significant() { " *" } else { "" };
        let _ = writeln!(
            t,
            "{:<w$}  {:<12} {:>10} {:>10} {:>7}{mark}",
            r.point,
            r.metric,
            cell(r.a),
            cell(r.b),
            ratio
        );
    }
    let _ = writeln!(t, "* the ranges (min..max over repeats) do not overlap");
    t
}

/// The same comparison as a self-contained HTML page.
pub fn html(a: &RunResults, b: &RunResults, a_name: &str, b_name: &str) -> String {
    let mut h = String::new();
    let _ = write!(
        h,
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><link rel=\"icon\" href=\"data:,\">\
         <title>compare {} and {}</title><style>{STYLE}</style></head><body>\
         <h1>Comparison</h1><p>A: {} ({}, commit {})<br>B: {} ({}, commit {})</p>\
         <table><thead><tr><th class=\"l\">point</th><th class=\"l\">metric</th><th>A</th><th>B</th><th>B/A</th></tr></thead><tbody>\n",
        esc(a_name),
        esc(b_name),
        esc(a_name),
        esc(&a.started_utc),
        esc(&a.machine.git_commit),
        esc(b_name),
        esc(&b.started_utc),
        esc(&b.machine.git_commit)
    );
    for r in rows(a, b) {
        let ratio = r.ratio().map_or("-".into(), |x| format!("{x:.2}"));
        let _ = writeln!(
            h,
            "<tr{}><td class=\"l\">{}</td><td class=\"l\">{}</td><td>{}</td><td>{}</td><td>{ratio}</td></tr>",
            if r.significant() {
                " class=\"conclusion\""
            } else {
                ""
            },
            esc(&r.point),
            esc(&r.metric.axis_label()),
            cell(r.a),
            cell(r.b)
        );
    }
    h.push_str("</tbody></table><p>Highlighted rows: the ranges over repeats do not overlap.</p></body></html>\n");
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_disjoint_ranges_are_significant() {
        let s = |m, lo, hi| {
            Some(Stat {
                median: m,
                min: lo,
                max: hi,
            })
        };
        let r = Row {
            point: "p".into(),
            metric: Metric::Throughput,
            a: s(10.0, 9.0, 11.0),
            b: s(20.0, 19.0, 21.0),
        };
        assert!(r.significant());
        assert_eq!(r.ratio(), Some(2.0));
        let r = Row {
            point: "p".into(),
            metric: Metric::Throughput,
            a: s(10.0, 9.0, 11.0),
            b: s(10.5, 10.0, 12.0),
        };
        assert!(!r.significant());
        let r = Row {
            point: "p".into(),
            metric: Metric::Throughput,
            a: None,
            b: s(1.0, 1.0, 1.0),
        };
        assert_eq!(r.ratio(), None);
    }
}
