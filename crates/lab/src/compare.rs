//! `servelab lab compare A B`: two runs side by side (before and after a change).
//!
//! Points are matched by server and axis values; each metric shows A's median,
//! B's median and B/A, and a change is called out only when the two runs' ranges
//! (min..max over repeats) do not overlap, so that noise is not read as progress.
//! Two runs with no point in common are refused ([`check`]): a table of dashes
//! would look like a comparison and be none. The HTML page draws both runs on the
//! same axes, one figure per plot of A's experiment.

use std::fmt::Write as _;

use crate::error::{LabError, Result};
use crate::experiment::Experiment;
use crate::metric::{self, Metric};
use crate::plot::style::Marker;
use crate::plot::{self, Figure, Style};
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

/// The points (server and axis values) with figures in both runs.
pub fn common(a: &RunResults, b: &RunResults) -> Vec<String> {
    let ok = |r: &RunResults| -> Vec<String> {
        r.points
            .iter()
            .filter(|p| p.status == Status::Ok)
            .map(key)
            .collect()
    };
    let in_b = ok(b);
    let mut out: Vec<String> = ok(a).into_iter().filter(|k| in_b.contains(k)).collect();
    out.dedup();
    out
}

/// Refuses two runs that have no point in common.
pub fn check(a: &RunResults, b: &RunResults, a_name: &str, b_name: &str) -> Result<()> {
    if !common(a, b).is_empty() {
        return Ok(());
    }
    let why = if a.experiment == b.experiment {
        format!(
            "no point has figures in both (A: {} of {} points ok, B: {} of {})",
            a.points.iter().filter(|p| p.status == Status::Ok).count(),
            a.points.len(),
            b.points.iter().filter(|p| p.status == Status::Ok).count(),
            b.points.len()
        )
    } else {
        format!(
            "they are runs of different experiments ({} and {}) and share no server and axis values",
            a.experiment, b.experiment
        )
    };
    Err(LabError::Other(format!(
        "nothing to compare between {a_name} and {b_name}: {why}"
    )))
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

/// One figure with both runs on the same axes: A's series, then B's, each label
/// ending in the run's letter.
fn both(
    plot: &crate::experiment::PlotSpec,
    exp: &Experiment,
    a: &RunResults,
    b: &RunResults,
) -> Figure {
    let fa = plot::figure(plot, exp, a);
    let fb = plot::figure(plot, exp, b);
    let mut fig = fa.clone();
    fig.series.clear();
    // Each series of A beside the same series of B, in one colour: solid with
    // A's marker for A, dashed with crosses for B.
    let mut labels: Vec<&str> = fa.series.iter().map(|s| s.label.as_str()).collect();
    for s in &fb.series {
        if !labels.contains(&s.label.as_str()) {
            labels.push(&s.label);
        }
    }
    if fa.categorical {
        bars_of_both(&mut fig, &fa, &fb, &labels);
    }
    for (k, label) in labels.iter().enumerate().filter(|_| !fa.categorical) {
        let base = Style::nth(k);
        for (run, f) in [("A", &fa), ("B", &fb)] {
            if let Some(s) = f.series.iter().find(|s| s.label == *label) {
                let mut s = s.clone();
                s.label = format!("{label}, {run}");
                fig.series.push(s);
                fig.styles.push(if run == "A" {
                    Style { dash: None, ..base }
                } else {
                    Style {
                        dash: Some((12, 5)),
                        marker: if base.marker == Marker::Cross {
                            Marker::Plus
                        } else {
                            Marker::Cross
                        },
                        ..base
                    }
                });
            }
        }
    }
    // A note both runs share is said once.
    fig.notes = fa
        .notes
        .iter()
        .map(|n| {
            if fb.notes.contains(n) {
                n.clone()
            } else {
                format!("A: {n}")
            }
        })
        .chain(
            fb.notes
                .iter()
                .filter(|n| !fa.notes.contains(n))
                .map(|n| format!("B: {n}")),
        )
        .collect();
    fig.drawn_instead = match (&fa.drawn_instead, &fb.drawn_instead) {
        (Some(x), Some(y)) if x == y => Some(x.clone()),
        (None, None) => None,
        (x, y) => Some(
            [("A", x), ("B", y)]
                .iter()
                .filter_map(|(run, d)| d.as_ref().map(|d| format!("{run}: {d}")))
                .collect::<Vec<_>>()
                .join(" "),
        ),
    };
    fig.empty = match (&fa.empty, &fb.empty) {
        (Some(x), Some(y)) if x == y => Some(x.clone()),
        (Some(x), Some(y)) => Some(format!("A: {x} B: {y}")),
        _ => None,
    };
    if fig.empty.is_none() {
        for (run, f) in [("A", &fa), ("B", &fb)] {
            if let Some(why) = &f.empty {
                fig.notes.push(format!("{run}: {why}"));
            }
        }
    }
    fig
}

/// Grouped bars of both runs: one group per series (server), one bar per x value
/// and run. The x values are renumbered so that each (value, run) is a bar of its
/// own, named "value, A" or "value, B".
fn bars_of_both(fig: &mut Figure, fa: &Figure, fb: &Figure, labels: &[&str]) {
    let mut xs: Vec<f64> = fa
        .series
        .iter()
        .chain(&fb.series)
        .flat_map(|s| s.points.iter().map(|p| p.0))
        .collect();
    xs.sort_by(f64::total_cmp);
    xs.dedup();
    let name = |x: f64| {
        fa.x_names
            .iter()
            .find(|(v, _)| (v - x).abs() < 1e-9)
            .map_or_else(|| plot::ticks::label(x), |(_, n)| n.clone())
    };
    fig.x_names = xs
        .iter()
        .flat_map(|x| [format!("{}, A", name(*x)), format!("{}, B", name(*x))])
        .enumerate()
        .map(|(i, n)| (i as f64, n))
        .collect();
    for label in labels {
        let mut merged = plot::Series {
            label: label.to_string(),
            ..plot::Series::default()
        };
        for (run, f) in [(0.0, fa), (1.0, fb)] {
            if let Some(s) = f.series.iter().find(|s| s.label == *label) {
                for p in &s.points {
                    let i = xs.iter().position(|x| *x == p.0).unwrap_or(0) as f64;
                    merged.points.push((2.0 * i + run, p.1, p.2, p.3));
                }
            }
        }
        merged.points.sort_by(|a, b| a.0.total_cmp(&b.0));
        fig.series.push(merged);
    }
}

/// The same comparison as a self-contained HTML page: A and B drawn on the same
/// axes for each plot of A's experiment, then the table.
pub fn html(a: &RunResults, b: &RunResults, a_name: &str, b_name: &str) -> Result<String> {
    let mut h = String::new();
    let _ = write!(
        h,
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><link rel=\"icon\" href=\"data:,\">\
         <title>compare {} and {}</title><style>{STYLE}</style></head><body>\
         <h1>Comparison</h1><p>A: {} ({}, {}, commit {})<br>B: {} ({}, {}, commit {})</p>\n",
        esc(a_name),
        esc(b_name),
        esc(a_name),
        esc(&a.experiment),
        esc(&a.started_utc),
        esc(&a.machine.git_commit),
        esc(b_name),
        esc(&b.experiment),
        esc(&b.started_utc),
        esc(&b.machine.git_commit)
    );
    if let Ok(exp) = Experiment::parse(&a.source, &a.source_file) {
        let _ = writeln!(h, "<h2>Plots</h2>");
        for (i, p) in exp.plots.iter().enumerate() {
            let fig = both(p, &exp, a, b);
            let svg = fig.svg()?;
            let notes: Vec<String> = fig
                .drawn_instead
                .iter()
                .chain(&fig.empty)
                .chain(&fig.notes)
                .map(|n| esc(n))
                .collect();
            let _ = writeln!(
                h,
                "<figure class=\"plot\" id=\"plot-{n}\" data-marks=\"{m}\">{svg}<figcaption>Figure {n}: {t}: A and B on the same axes.{notes}</figcaption></figure>",
                n = i + 1,
                m = fig.marks(),
                t = esc(&fig.title),
                notes = if notes.is_empty() {
                    String::new()
                } else {
                    format!(" {}", notes.join(" "))
                },
            );
        }
    }
    let _ = writeln!(
        h,
        "<h2>Figures</h2><div class=\"wide\"><table><thead><tr><th class=\"l\">point</th><th class=\"l\">metric</th>\
         <th>A</th><th>B</th><th>B/A</th></tr></thead><tbody>"
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
    h.push_str("</tbody></table></div><p>Highlighted rows: the ranges over repeats do not overlap.</p></body></html>\n");
    Ok(h)
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

    #[test]
    fn runs_with_no_point_in_common_are_refused() {
        use crate::plot::figure::tests::{EXP, quick_run};
        let exp = Experiment::parse(EXP, "t.toml").unwrap();
        let a = quick_run(&exp);
        assert!(check(&a, &a, "A", "B").is_ok());
        assert!(!common(&a, &a).is_empty());
        let mut b = a.clone();
        for p in &mut b.points {
            p.status = Status::Failed;
        }
        let err = check(&a, &b, "runA", "runB").unwrap_err().to_string();
        assert!(
            err.contains("runA") && err.contains("no point has figures in both"),
            "{err}"
        );
        let mut c = a.clone();
        c.experiment = "other".into();
        for p in &mut c.points {
            p.vars[0].0 = "clients".into();
        }
        let err = check(&a, &c, "runA", "runC").unwrap_err().to_string();
        assert!(err.contains("different experiments (t and other)"), "{err}");
    }

    #[test]
    fn the_html_page_draws_both_runs_on_the_same_axes() {
        use crate::plot::figure::tests::{EXP, quick_run};
        let exp = Experiment::parse(EXP, "t.toml").unwrap();
        let a = quick_run(&exp);
        let page = html(&a, &a, "A", "B").unwrap();
        assert_eq!(page.matches("<svg").count(), exp.plots.len());
        for label in [
            "pool, client users = 8, A (measured)",
            "pool, client users = 8, B (measured)",
        ] {
            assert!(page.contains(label), "missing {label}");
        }
    }

    #[test]
    fn categories_of_both_runs_are_bars_in_one_group_per_server() {
        use crate::plot::figure::tests::{EXP, quick_run};
        let text = EXP.replace("values = [1, 8, 32]", "values = [1, 8]");
        let exp = Experiment::parse(&text, "t.toml").unwrap();
        let a = quick_run(&exp);
        let fig = both(&exp.plots[1], &exp, &a, &a);
        assert!(fig.categorical);
        // One group (pool, at workers 1 and 4) per series, and its bars
        // named by value and run.
        assert_eq!(fig.series.len(), 2);
        let svg = fig.svg().unwrap();
        for label in [
            "client users = 8, A (measured)",
            "client users = 1, B (measured)",
        ] {
            assert!(svg.contains(label), "missing {label}");
        }
    }
}
