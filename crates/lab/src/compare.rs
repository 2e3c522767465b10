//! `servelab lab compare A B`: two runs side by side (before and after a change).
//!
//! Points are matched by server and axis values; each metric shows A's mean,
//! B's mean, B/A and B − A with its 95% interval, and a change is marked only
//! when Welch's t-test on the two runs' repeats finds it at 95%, so that noise is
//! not read as progress. A point with one repeat on either side has no spread to
//! test against and is never marked. The comparison warns when the two runs
//! differ in protocol (`--quick` against full), machine or CPU placement, and
//! says so when a run is compared with itself.
//! Two runs with no point in common are refused ([`check`]): a table of dashes
//! would look like a comparison and be none. The HTML page draws both runs on the
//! same axes, one figure per plot of A's experiment.
//!
//! The design decides what a mark means. A pair that `servelab lab ab` measured
//! interleaved ([`pair`]) had both servers of every point alive side by side and
//! their repeats alternating in ABBA order (older pairs: A and B back to back,
//! alternating by point), so drift slower than a repeat hits both and Welch's t
//! on each side's repeats tests the change. Two separate runs also differ by
//! whatever the machine did between them, which their repeats do not sample;
//! when most marked figures move one way, a line under the table says so with
//! the common shift ([`drift`]), and that only an interleaved pair can tell it
//! from a change.
//!
//! Marks are counted by point, not by figure ([`tally`]): a point's figures
//! are tied by Little's law and the utilisation law, so Holm's procedure runs
//! over each point's figures, the tally says what chance allows for the number
//! of points, and points where the load generator was saturated stay out of it.
//!
//! Layout: this file holds the rows, the test, the warnings, the table and the
//! page; `drift.rs` the common shift of separate runs; `tally.rs` the marks by
//! point.

pub mod drift;
pub mod tally;

use std::fmt::Write as _;

use crate::error::{LabError, Result};
use crate::experiment::Experiment;
use crate::html::{STYLE, esc};
use crate::metric::{self, Metric};
use crate::plot::style::Marker;
use crate::plot::{self, Figure, Style};
use crate::results::{Alternation, Interleaved, PointRecord, RunResults, Stat, Status};
use crate::stats::Welch;

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

/// A's record of the interleaved pair that A and B form, when `servelab lab
/// ab` measured them together (either way round); `None` for separate runs.
pub fn pair<'r>(a: &'r RunResults, b: &RunResults) -> Option<&'r Interleaved> {
    let ia = a.protocol.as_ref()?.interleaved.as_ref()?;
    let ib = b.protocol.as_ref()?.interleaved.as_ref()?;
    ia.pairs_with(ib).then_some(ia)
}

/// One line on how A and B were measured, and so what a mark can mean.
pub fn design(a: &RunResults, b: &RunResults) -> String {
    if a == b {
        return "design: one run compared with itself".into();
    }
    match pair(a, b) {
        Some(i) => {
            let led_by_a = i
                .first
                .iter()
                .filter(|s| **s == crate::results::Side::A)
                .count();
            match i.by {
                Alternation::Repeat => format!(
                    "design: an interleaved pair (servelab lab ab, pair {}): ABBA by repeat, both \
                     servers alive: at every point A's server and B's ran side by side and their \
                     repeats alternated A B, B A, ... (A first at {led_by_a} of {} points), so \
                     drift slower than a repeat and what one side's load leaves behind hit both \
                     alike; the test is Welch's t on each side's interleaved repeats",
                    i.pair,
                    i.first.len()
                ),
                Alternation::Point => format!(
                    "design: an interleaved pair (servelab lab ab, pair {}): every point was \
                     measured with A and B back to back, each on a fresh server, in ABBA order by \
                     point (A first at {led_by_a} of {} points), so drift slower than a point hits \
                     both alike; the test is Welch's t on each side's back-to-back repeats",
                    i.pair,
                    i.first.len()
                ),
            }
        }
        None => "design: two separate runs: the repeats of each sample the noise within it, not \
                 the drift of the machine between them, so a mark is a change of the build or of \
                 the machine (`servelab lab ab` tells them apart)"
            .into(),
    }
}

/// Why the two runs may differ for reasons other than the change compared: one
/// line each, empty when none.
pub fn warnings(a: &RunResults, b: &RunResults) -> Vec<String> {
    let mut out = Vec::new();
    if a == b {
        out.push(
            "A and B are the same run: every difference is zero, and this says nothing about noise"
                .into(),
        );
        return out;
    }
    if a.experiment != b.experiment {
        out.push(
            "different experiments; only points with the same server and axis values match".into(),
        );
    }
    if a.quick != b.quick {
        let q = |r: &RunResults| if r.quick { "--quick" } else { "full" };
        out.push(format!(
            "different protocols: A is a {} run and B a {} one (windows, warm-up and repeats differ)",
            q(a),
            q(b)
        ));
    } else if let (Some(pa), Some(pb)) = (&a.protocol, &b.protocol)
        && !same_protocol(pa, pb)
    {
        out.push(format!(
            "different protocols: A measured windows of {} s with {}..{} repeats, B {} s with {}..{}",
            metric::fmt(pa.window_s),
            pa.min_repeats,
            pa.max_repeats,
            metric::fmt(pb.window_s),
            pb.min_repeats,
            pb.max_repeats
        ));
    }
    if a.protocol.is_none() != b.protocol.is_none() {
        out.push("one run records its protocol and the other does not".into());
    }
    if (a.schema == crate::results::SCHEMA_V3) != (b.schema == crate::results::SCHEMA_V3) {
        out.push(format!(
            "response times differ in kind: {} was written as {} (mean_ms, p50_ms and p99_ms \
             over every started request, those unfinished at a window's end counted to it, \
             which biases them low), the other over finished requests only",
            if a.schema == crate::results::SCHEMA_V3 {
                "A"
            } else {
                "B"
            },
            crate::results::SCHEMA_V3
        ));
    }
    if pair(a, b).is_none() {
        let interleaved =
            |r: &RunResults| r.protocol.as_ref().is_some_and(|p| p.interleaved.is_some());
        for (name, r) in [("A", a), ("B", b)] {
            if interleaved(r) {
                out.push(format!(
                    "{name} is one side of an interleaved pair, but not of a pair with the other \
                     run: compare the two sides of one `lab ab` directory to have its design"
                ));
            }
        }
    }
    if a.machine.cpu_model != b.machine.cpu_model || a.machine.cores != b.machine.cores {
        out.push(format!(
            "different machines ({} x{} vs {} x{})",
            a.machine.cpu_model, a.machine.cores, b.machine.cpu_model, b.machine.cores
        ));
    }
    if a.placement != b.placement {
        out.push(format!(
            "different CPU placement (A: {}; B: {})",
            a.placement, b.placement
        ));
    }
    out
}

/// Whether two protocols are the same but for the pair each run belongs to.
fn same_protocol(a: &crate::protocol::Protocol, b: &crate::protocol::Protocol) -> bool {
    let bare = |p: &crate::protocol::Protocol| crate::protocol::Protocol {
        interleaved: None,
        ..p.clone()
    };
    bare(a) == bare(b)
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

/// "2.5e4 ±1.2% (n=3)": the mean, its interval relative to it, and the repeats.
fn cell(s: Option<Stat>) -> String {
    s.map_or("-".into(), |s| {
        let rel = if s.mean != 0.0 && s.n >= 2 {
            format!(" ±{:.1}%", s.half_width() / s.mean.abs() * 100.0)
        } else {
            String::new()
        };
        format!("{}{rel} (n={})", metric::fmt(s.mean), s.n)
    })
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
    let _ = writeln!(t, "{}", design(a, b));
    for w in warnings(a, b) {
        let _ = writeln!(t, "warning: {w}");
    }
    let rows = rows(a, b);
    let w = rows.iter().map(|r| r.point.len()).max().unwrap_or(5).max(5);
    let _ = writeln!(
        t,
        "{:<w$}  {:<12} {:>22} {:>22} {:>7}  {:<16}",
        "point", "metric", "A mean ±95%", "B mean ±95%", "B/A", "B-A"
    );
    let tally = tally::Tally::of(a, b, &rows);
    for (r, &marked) in rows.iter().zip(&tally.marked) {
        let ratio = r.ratio().map_or("-".into(), |x| format!("{x:.2}"));
        let mark = if marked { " *" } else { "" };
        let _ = writeln!(
            t,
            "{:<w$}  {:<12} {:>22} {:>22} {:>7}  {:<16}{mark}",
            r.point,
            r.metric,
            cell(r.a),
            cell(r.b),
            ratio,
            r.effect().unwrap_or_else(|| "-".into())
        );
    }
    let _ = writeln!(
        t,
        "* different by Welch's t-test on the repeats, Holm-corrected across each point's \
         figures (95% per point). {}. B-A: the difference relative to A, with its 95% interval.",
        tally.sentence()
    );
    if let Some(shift) = separate_shift(a, b, &rows) {
        let _ = writeln!(t, "common shift: {shift}");
    }
    t
}

/// The common shift of two separate runs' marked figures ([`drift`]); never
/// for an interleaved pair, whose design already tells drift from change.
pub fn separate_shift(a: &RunResults, b: &RunResults, rows: &[Row]) -> Option<drift::Shift> {
    if pair(a, b).is_some() {
        return None;
    }
    drift::common_shift(rows)
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

/// How every comparison page begins (its `<title>`): what marks a file as one
/// that `lab compare` wrote, and so may write again.
const PAGE_START: &str = "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><link rel=\"icon\" href=\"data:,\"><title>compare ";

/// Writes the comparison `page` to `path`, which must not exist or be a
/// comparison page written before: a tool never overwrites a file it did not
/// create (`--html README.md` is refused, and the file kept).
pub fn write_html(path: &std::path::Path, page: &str) -> Result<()> {
    match std::fs::read(path) {
        Ok(old) if !old.starts_with(PAGE_START.as_bytes()) => {
            return Err(LabError::Other(format!(
                "{} exists and is not a comparison page; not overwritten",
                path.display()
            )));
        }
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(LabError::io(path, e)),
    }
    std::fs::write(path, page).map_err(|e| LabError::io(path, e))
}

/// The same comparison as a self-contained HTML page: A and B drawn on the same
/// axes for each plot of A's experiment, then the table.
pub fn html(a: &RunResults, b: &RunResults, a_name: &str, b_name: &str) -> Result<String> {
    let mut h = String::new();
    h.push_str(PAGE_START);
    let _ = writeln!(
        h,
        "{} and {}</title><style>{STYLE}</style></head><body>\
         <h1>Comparison</h1><p>A: {} ({}, {}, commit {})<br>B: {} ({}, {}, commit {})</p>",
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
    let _ = writeln!(h, "<p>{}.</p>", esc(&upper_first(&design(a, b))));
    for w in warnings(a, b) {
        let _ = writeln!(h, "<p class=\"failed\">Warning: {}.</p>", esc(&w));
    }
    if let Ok(exp) = Experiment::parse(&a.source, &a.source_file) {
        let _ = writeln!(h, "<h2>Plots</h2>");
        for (i, p) in exp.plots.iter().enumerate() {
            let fig = both(p, &exp, a, b);
            let svg = fig.svg()?;
            // The figure's notes (a substitution, why it is empty, flagged
            // points) are drawn inside the SVG, as in a report: the caption
            // does not say them a second time.
            let _ = writeln!(
                h,
                "<figure class=\"plot\" id=\"plot-{n}\" data-marks=\"{m}\">{svg}<figcaption>Figure {n}: {t}: A and B on the same axes.</figcaption></figure>",
                n = i + 1,
                m = fig.marks(),
                t = esc(&fig.title),
            );
        }
    }
    let _ = writeln!(
        h,
        "<h2>Figures</h2><div class=\"wide\"><table><thead><tr><th class=\"l\">point</th><th class=\"l\">metric</th>\
         <th>A mean ±95% (repeats)</th><th>B mean ±95% (repeats)</th><th>B/A</th><th>B &minus; A (95%)</th></tr></thead><tbody>"
    );
    let rows = rows(a, b);
    let tally = tally::Tally::of(a, b, &rows);
    for (r, &marked) in rows.iter().zip(&tally.marked) {
        let ratio = r.ratio().map_or("-".into(), |x| format!("{x:.2}"));
        let _ = writeln!(
            h,
            "<tr{}><td class=\"l\">{}</td><td class=\"l\">{}</td><td>{}</td><td>{}</td><td>{ratio}</td><td>{}</td></tr>",
            if marked { " class=\"conclusion\"" } else { "" },
            esc(&r.point),
            esc(&r.metric.axis_label()),
            esc(&cell(r.a)),
            esc(&cell(r.b)),
            esc(&r.effect().unwrap_or_else(|| "-".into()))
        );
    }
    let _ = writeln!(
        h,
        "</tbody></table></div><p>Highlighted rows: different by Welch&#39;s t-test on the \
         repeats, Holm-corrected across each point&#39;s figures (95% per point). {}.</p>",
        esc(&tally.sentence())
    );
    if let Some(shift) = separate_shift(a, b, &rows) {
        let _ = writeln!(
            h,
            "<p class=\"failed\">Common shift: {}</p>",
            esc(&shift.to_string())
        );
    }
    h.push_str("</body></html>\n");
    Ok(h)
}

/// `s` with its first letter in upper case, to open a sentence.
fn upper_first(s: &str) -> String {
    let mut c = s.chars();
    c.next()
        .map(|f| f.to_uppercase().chain(c).collect())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `--html` never replaces a file that is not a comparison page, and
    /// replaces one that is.
    #[test]
    fn html_is_written_only_over_a_comparison_page() {
        let tmp = tempfile::tempdir().unwrap();
        let other = tmp.path().join("README.md");
        std::fs::write(&other, "# mine\n").unwrap();
        let page = format!("{PAGE_START}x and y</title></head></html>\n");
        let e = write_html(&other, &page).unwrap_err().to_string();
        assert!(
            e.ends_with("is not a comparison page; not overwritten"),
            "{e}"
        );
        assert_eq!(std::fs::read_to_string(&other).unwrap(), "# mine\n");
        let fresh = tmp.path().join("c.html");
        write_html(&fresh, &page).unwrap();
        let again = page.replace("x and y", "x and z");
        write_html(&fresh, &again).unwrap();
        assert_eq!(std::fs::read_to_string(&fresh).unwrap(), again);
    }

    #[test]
    fn only_a_difference_welchs_test_finds_is_significant() {
        let s = |v: &[f64]| Stat::of(v);
        let r = Row {
            point: "p".into(),
            metric: Metric::Throughput,
            a: s(&[9.0, 10.0, 11.0]),
            b: s(&[19.0, 20.0, 21.0]),
        };
        assert!(r.significant());
        assert_eq!(r.ratio(), Some(2.0));
        assert_eq!(r.effect().unwrap(), "+100.0% ± 22.7%");
        // Regression (issue 15): a 1% change was marked because a 1-repeat run
        // fell outside a 3-repeat range; one repeat has no spread to test.
        let r = Row {
            point: "p".into(),
            metric: Metric::Throughput,
            a: s(&[99.0, 100.0, 100.5]),
            b: s(&[101.0]),
        };
        assert!(!r.significant() && r.effect().is_none());
        // Overlapping noise is not a difference.
        let r = Row {
            point: "p".into(),
            metric: Metric::Throughput,
            a: s(&[9.0, 10.0, 11.0]),
            b: s(&[10.0, 10.5, 12.0]),
        };
        assert!(!r.significant());
        let r = Row {
            point: "p".into(),
            metric: Metric::Throughput,
            a: None,
            b: s(&[1.0]),
        };
        assert_eq!(r.ratio(), None);
    }

    #[test]
    fn a_run_against_itself_or_a_quick_one_is_said() {
        use crate::plot::figure::tests::{EXP, quick_run};
        let exp = Experiment::parse(EXP, "t.toml").unwrap();
        let a = quick_run(&exp);
        let w = warnings(&a, &a);
        assert!(w[0].contains("the same run"), "{w:?}");
        let mut b = a.clone();
        b.quick = !a.quick;
        b.placement = "elsewhere".into();
        let w = warnings(&a, &b).join("\n");
        assert!(
            w.contains("different protocols") && w.contains("--quick"),
            "{w}"
        );
        assert!(w.contains("different CPU placement"), "{w}");
        // A run stored before servelab-lab/4 holds response times of another kind.
        let mut old = a.clone();
        old.schema = crate::results::SCHEMA_V3.into();
        let w = warnings(&old, &a).join("\n");
        assert!(
            w.contains("response times differ in kind: A was written as servelab-lab/3"),
            "{w}"
        );
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
