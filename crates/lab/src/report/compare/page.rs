//! The comparison as a self-contained HTML page: A and B on the same axes for
//! each plot of A's experiment, then the table.

use std::fmt::Write as _;

use super::design::{design, warnings};
use super::drift::separate_shift;
use super::row::rows;
use super::table::cell;
use super::tally;
use crate::error::{LabError, Result};
use crate::experiment::Experiment;
use crate::html::{STYLE, esc};
use crate::report::plot::style::Marker;
use crate::report::plot::{self, Figure, Style};
use crate::store::results::RunResults;

/// One figure with both runs on the same axes: A's series, then B's, each label
/// ending in the run's letter.
pub(super) fn both(
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
pub(super) const PAGE_START: &str = "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><link rel=\"icon\" href=\"data:,\"><title>compare ";

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
