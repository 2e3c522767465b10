//! `report.html`: one self-contained page per run (inline SVG and CSS, no script,
//! no network fetch) with the question, the conclusion, the plots, a table of every
//! point and the command that reruns it. It is rebuilt from `results.json`
//! (`servelab lab report DIR`), where the run's numbers and the experiment's
//! text are stored; the words come from the experiment's current definition
//! when it plans the same points ([`crate::report::definition`]), and the page says so.
//!
//! Every figure is also written beside the page as `figure-N.svg`, and linked from
//! its caption, so that it can go into a paper or a slide as it is.

use std::fmt::Write as _;
use std::path::Path;

use crate::error::{LabError, Result};
use crate::experiment::Experiment;
use crate::html::{STYLE, esc};
use crate::metric::{self, Metric};
use crate::report::conclusion;
use crate::report::definition::Definition;
use crate::report::plot;
use crate::store::results::{RunResults, Status, UNMEASURABLE};

/// Writes `report.html` into `dir`, and each figure beside it as `figure-N.svg`.
pub fn write(dir: &Path, results: &RunResults, exp: &Experiment) -> Result<()> {
    write_noted(dir, results, exp, None)
}

/// [`write`] with a sentence about the definition rendered under the question.
fn write_noted(
    dir: &Path,
    results: &RunResults,
    exp: &Experiment,
    note: Option<&str>,
) -> Result<()> {
    for (i, p) in exp.plots.iter().enumerate() {
        let svg = plot::figure(p, exp, results).svg()?;
        let path = dir.join(figure_file(i));
        std::fs::write(&path, svg).map_err(|e| LabError::io(path, e))?;
    }
    let html = page(results, exp, note)?;
    let path = dir.join("report.html");
    std::fs::write(&path, html).map_err(|e| LabError::io(path, e))
}

/// The file name of the `i`th figure (from 0), beside `report.html`.
pub fn figure_file(i: usize) -> String {
    format!("figure-{}.svg", i + 1)
}

/// Rebuilds `report.html` of a results directory from its `results.json`,
/// with the words of the definition [`Definition::for_rebuild`] chooses.
pub fn rebuild(dir: &Path) -> Result<()> {
    let results = RunResults::read(dir)?;
    let def = Definition::for_rebuild(&results)?;
    let dir = if dir.is_dir() {
        dir
    } else {
        dir.parent().unwrap_or(Path::new("."))
    };
    write_noted(dir, &results, &def.exp, def.note.as_deref())
}

/// The report's HTML text.
pub fn render(results: &RunResults, exp: &Experiment) -> Result<String> {
    page(results, exp, None)
}

/// [`render`] with a sentence about the definition rendered under the question.
fn page(results: &RunResults, exp: &Experiment, note: Option<&str>) -> Result<String> {
    let mut h = String::new();
    let title = format!("{} ({})", exp.title, results.experiment);
    let _ = write!(
        h,
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <link rel=\"icon\" href=\"data:,\"><title>{}</title><style>{STYLE}</style></head><body>\n",
        esc(&title)
    );
    let _ = writeln!(h, "<h1>{}</h1>", esc(&exp.title));
    let _ = writeln!(h, "<p class=\"q\">{}</p>", esc(&exp.question));
    if let Some(note) = note {
        let _ = writeln!(h, "<p class=\"definition\">{}</p>", esc(note));
    }
    if results.interrupted {
        let _ = writeln!(
            h,
            "<p class=\"failed\">This run was interrupted; the points not reached are marked skipped.</p>"
        );
    }
    // The seed's claims first: what this run says about them.
    h.push_str(&crate::report::claim::html(exp, results));
    let concluded = conclusion::conclude(exp, results);
    let _ = writeln!(
        h,
        "<p class=\"conclusion\"><strong>Conclusion:</strong> {}</p>",
        esc(&concluded)
    );
    // The prediction drawn in the figures agrees by construction too.
    if let Some(note) = crate::report::construction::note(exp)
        .filter(|_| !concluded.contains(crate::report::construction::LABEL))
    {
        let _ = writeln!(h, "<p class=\"conclusion\">{}</p>", esc(&note));
    }
    let m = &results.machine;
    let simulated = results.points.iter().all(|p| p.server.is_none());
    let seed = exp.seed.as_ref().map_or(String::new(), |s| {
        format!("<dt>seed report</dt><dd>{}</dd>", esc(s))
    });
    let _ = writeln!(
        h,
        "<dl class=\"meta\"><dt>experiment</dt><dd>{} ({})</dd>{seed}<dt>started</dt><dd>{} ({} s{})</dd>\
         <dt>protocol</dt><dd>{}</dd>\
         <dt>placement</dt><dd>{}</dd><dt>machine</dt><dd>{}, {} CPUs, Linux {}</dd>\
         <dt>servelab</dt><dd>{} (commit {})</dd></dl>",
        esc(&results.experiment),
        esc(&results.source_file),
        esc(&results.started_utc),
        metric::fmt(results.duration_s),
        if results.quick { ", --quick" } else { "" },
        if simulated {
            "simulated: figures are means over replications, bars and bands are 95% confidence intervals".to_string()
        } else {
            protocol_sentence(results)
        },
        esc(&results.placement),
        esc(&m.cpu_model),
        m.cores,
        esc(&m.kernel),
        esc(&m.version),
        esc(&m.git_commit),
    );
    let counts = [
        Status::Ok,
        Status::Failed,
        Status::Unavailable,
        Status::Skipped,
    ]
    .map(|s| (s, results.points.iter().filter(|p| p.status == s).count()));
    let summary: Vec<String> = counts
        .iter()
        .filter(|(_, n)| *n > 0)
        .map(|(s, n)| format!("{n} {}", s.as_str()))
        .collect();
    let _ = writeln!(h, "<p>Points: {}.</p>", summary.join(", "));

    let _ = writeln!(h, "<h2>Plots</h2>");
    for (i, p) in exp.plots.iter().enumerate() {
        figure(&mut h, i, &plot::figure(p, exp, results))?;
    }
    if let Some(t) = crate::report::accuracy::table(exp, results) {
        h.push_str(&crate::report::accuracy::html(&t));
    }
    if let Some(k) = &results.kernel {
        h.push_str(&k.html());
    }
    let _ = writeln!(h, "<h2>Figures</h2>");
    table(&mut h, results, exp);
    timelines(&mut h, results)?;
    let _ = writeln!(
        h,
        "<h2>Rerun</h2><pre>{}</pre><p>Rebuild this page from <code>results.json</code>: \
         <code>servelab lab report DIR</code>. Compare two runs: <code>servelab lab compare A B</code>.</p>",
        esc(&results.command)
    );
    let _ = writeln!(
        h,
        "<details><summary>Experiment file ({})</summary><pre>{}</pre></details>",
        esc(&results.source_file),
        esc(&results.source)
    );
    h.push_str("</body></html>\n");
    Ok(h)
}

/// The measurement protocol in words: windows, warm-up, repeats, precision,
/// and whether the run was `--quick`.
fn protocol_sentence(results: &RunResults) -> String {
    let Some(p) = &results.protocol else {
        return format!("{} repeats per point", results.repeats);
    };
    let quick = if p.quick {
        "--quick run, shorter than the protocol asks (10 s windows, at least 3 repeats), for a check \
         that the experiment runs, not for its figures: "
    } else {
        ""
    };
    let repeats = if p.min_repeats == p.max_repeats {
        format!("{} repeats per point", p.min_repeats)
    } else {
        format!(
            "{} to {} repeats per point, more until the 95% interval of {} is within ±{}% of its mean",
            p.min_repeats,
            p.max_repeats,
            p.headline.label(),
            metric::fmt_tick(p.precision * 100.0)
        )
    };
    let pair = p.interleaved.as_ref().map_or_else(String::new, |i| {
        let design = match i.by {
            crate::store::results::Alternation::Repeat => {
                "with both servers alive side by side and their repeats alternating in ABBA order \
                 by repeat"
            }
            crate::store::results::Alternation::Point => "back to back, in ABBA order by point",
        };
        format!(
            " Side {} of an interleaved pair (servelab lab ab): every point was measured with A ({}) \
             and B ({}) {design}; `lab compare` the two sides to test the change.",
            i.side.dir_name().to_uppercase(),
            i.exe_a,
            i.exe_b
        )
    });
    // A run stored before servelab-lab/4 measured and checked the old way.
    let (times, little) = if results.schema == crate::store::results::SCHEMA {
        (
            "response times are over finished requests",
            "N = X·(R+C) + thinks/s·Z + the time of requests unfinished and of thinks cut at the \
             windows' ends, each term measured apart; C the connect time per request",
        )
    } else {
        (
            "response times include the requests unfinished at a window's end, counted to it \
             (stored before servelab-lab/4)",
            "N = X·(R+C+Z), as checked when this run was made; C the connect time per request",
        )
    };
    // Its stored checks are the ones it was made with (CPU per request only
    // where the point has one).
    let cpu = if results.points.iter().any(|pt| {
        pt.checks
            .iter()
            .any(|c| c.kind == crate::check::CheckKind::Cpu)
    }) {
        "CPU per request, "
    } else {
        ""
    };
    format!(
        "{quick}a warm-up of at least {} s at full load, then measured windows of at least {} s; {repeats}. \
         Figures are means over repeats; ± and bars are 95% Student-t intervals; {times}. Each point \
         is checked against Little's law within 5% ({little}), for a busy client, errors, {cpu}and \
         unfinished requests beyond what Little's law expects in flight; a point that \
         fails a check is marked ⚑ and kept.{pair}",
        metric::fmt_tick(p.warmup_s),
        metric::fmt_tick(p.window_s)
    )
}

/// One figure: the SVG inline (its notes are inside it), and a caption with a link
/// to its own SVG file. `data-marks` counts the points and bars drawn (0 when the
/// figure says in words why it has none), for tests that open the page.
pub(crate) fn figure(h: &mut String, i: usize, fig: &plot::Figure) -> Result<()> {
    let svg = fig.svg()?;
    let _ = writeln!(
        h,
        "<figure class=\"plot\" id=\"plot-{n}\" data-marks=\"{marks}\">{svg}<figcaption>Figure {n}: {title}. \
         {instead}x: {x}; y: {y}. <a href=\"{file}\">SVG</a></figcaption></figure>",
        n = i + 1,
        marks = fig.marks(),
        title = esc(&fig.title),
        instead = fig
            .drawn_instead
            .as_ref()
            .map_or_else(String::new, |d| format!(
                "<strong class=\"warn\">{}</strong> ",
                esc(d)
            )),
        x = esc(&fig.x_caption()),
        y = esc(&fig.y_label),
        file = figure_file(i),
    );
    Ok(())
}

fn table(h: &mut String, results: &RunResults, exp: &Experiment) {
    let mut metrics: Vec<Metric> = Vec::new();
    for mt in Metric::ALL {
        if results
            .points
            .iter()
            .any(|p| p.summary.contains_key(mt) || p.unmeasurable.contains_key(mt))
        {
            metrics.push(*mt);
        }
    }
    let predicted = results
        .points
        .iter()
        .any(|p| p.predicted.contains_key(&Metric::Throughput));
    let exact = results
        .points
        .iter()
        .any(|p| p.exact.contains_key(&Metric::Throughput));
    let axes: Vec<&str> = results.points.first().map_or_else(Vec::new, |p| {
        p.vars.iter().map(|(n, _)| n.as_str()).collect()
    });
    h.push_str("<div class=\"wide\"><table><thead><tr><th>#</th>");
    if results.points.iter().any(|p| p.server.is_some()) {
        h.push_str("<th class=\"l\">server</th>");
    }
    for a in &axes {
        let _ = write!(h, "<th>{}</th>", esc(a));
    }
    h.push_str("<th class=\"l\">status</th>");
    for mt in &metrics {
        let _ = write!(h, "<th>{}</th>", esc(&mt.axis_label()));
    }
    if predicted {
        h.push_str("<th>simulated throughput (requests/s)</th>");
    }
    if exact {
        h.push_str("<th>exact throughput (requests/s)</th>");
    }
    h.push_str("<th class=\"l\">notes</th></tr></thead><tbody>\n");
    let has_server = results.points.iter().any(|p| p.server.is_some());
    for p in &results.points {
        let _ = write!(
            h,
            "<tr class=\"{}\"><td>{}</td>",
            p.status.as_str(),
            p.index
        );
        if has_server {
            let _ = write!(
                h,
                "<td class=\"l\">{}</td>",
                esc(p.server.as_deref().unwrap_or(""))
            );
        }
        for (_, v) in &p.vars {
            let _ = write!(h, "<td>{}</td>", esc(&v.to_string()));
        }
        // A --quick run's short windows are said once, in the protocol line.
        let shown = |c: &&crate::check::Check| {
            !(c.passed || (results.quick && c.kind == crate::check::CheckKind::Window))
        };
        let failed: Vec<&crate::check::Check> = p.checks.iter().filter(shown).collect();
        let _ = write!(
            h,
            "<td class=\"l\">{}{}</td>",
            p.status.as_str(),
            if failed.is_empty() {
                String::new()
            } else {
                format!(
                    " <span class=\"flag\" title=\"{}\">&#9873; {}</span>",
                    esc(&failed
                        .iter()
                        .map(|c| c.detail.as_str())
                        .collect::<Vec<_>>()
                        .join("; ")),
                    esc(&failed
                        .iter()
                        .map(|c| c.kind.label())
                        .collect::<Vec<_>>()
                        .join(", "))
                )
            }
        );
        for mt in &metrics {
            if let Some(why) = p.unmeasurable.get(mt) {
                let _ = write!(
                    h,
                    "<td class=\"unmeasurable\" title=\"{}\">{UNMEASURABLE}</td>",
                    esc(why)
                );
                continue;
            }
            match p.summary.get(mt) {
                Some(s) if s.n >= 2 => {
                    let range = match (s.median, s.min, s.max) {
                        (Some(md), Some(lo), Some(hi)) => format!(
                            "median {}, min {}, max {}",
                            metric::fmt(md),
                            metric::fmt(lo),
                            metric::fmt(hi)
                        ),
                        _ => String::new(),
                    };
                    let _ = write!(
                        h,
                        "<td title=\"{}\">{} <small>&plusmn;{} (n={})</small></td>",
                        esc(&range),
                        metric::fmt(s.mean),
                        metric::fmt(s.half_width()),
                        s.n
                    );
                }
                Some(s) => {
                    let _ = write!(h, "<td>{} <small>(n=1)</small></td>", metric::fmt(s.mean));
                }
                None => h.push_str("<td></td>"),
            }
        }
        if predicted {
            match p.predicted.get(&Metric::Throughput) {
                Some(s) => {
                    let _ = write!(
                        h,
                        "<td>{} <small>&plusmn;{}</small></td>",
                        metric::fmt(s.mean),
                        metric::fmt(s.half_width())
                    );
                }
                None => h.push_str("<td></td>"),
            }
        }
        if exact {
            let _ = write!(
                h,
                "<td>{}</td>",
                p.exact
                    .get(&Metric::Throughput)
                    .map_or(String::new(), |v| metric::fmt(*v))
            );
        }
        let mut notes: Vec<String> = p.reason.iter().cloned().collect();
        if let (Some(st), Some(pr)) = (&p.stopped, &results.protocol) {
            notes.push(st.describe(pr.precision));
        }
        notes.extend(
            failed
                .iter()
                .map(|c| format!("⚑ {}: {}", c.kind.label(), c.detail)),
        );
        notes.extend(p.notes.iter().cloned());
        if !p.predicted.is_empty() || !p.exact.is_empty() {
            notes.extend(
                crate::report::applicability::why_not(exp, p)
                    .map(|why| format!("prediction not drawn or scored: {why}")),
            );
        }
        let _ = writeln!(
            h,
            "<td class=\"l notes\">{}</td></tr>",
            esc(&notes.join("; "))
        );
    }
    h.push_str("</tbody></table></div>\n");
    if let Some(law) = utilisation_law(results) {
        let _ = writeln!(h, "<p class=\"law\">{}</p>", esc(&law));
    }
    // Each reason a figure could not be measured, once, under the table.
    let mut reasons: Vec<(Metric, String, Vec<usize>)> = Vec::new();
    for p in &results.points {
        for (m, why) in &p.unmeasurable {
            let why = strip_repeat(why).to_string();
            match reasons.iter_mut().find(|(k, w, _)| k == m && *w == why) {
                Some((_, _, at)) => at.push(p.index),
                None => reasons.push((*m, why, vec![p.index])),
            }
        }
    }
    if !reasons.is_empty() {
        h.push_str("<p>Figures marked unmeasurable:</p><ul>\n");
        for (m, why, at) in &reasons {
            let points: Vec<String> = at.iter().map(|i| format!("#{i}")).collect();
            let _ = writeln!(
                h,
                "<li>{} at {} ({}): {}</li>",
                esc(m.label()),
                if at.len() == 1 {
                    "1 point".to_string()
                } else {
                    format!("{} points", at.len())
                },
                points.join(", "),
                esc(why)
            );
        }
        h.push_str("</ul>\n");
    }
}

/// The timelines of the knee and the collapse of every curve and of the
/// points that failed a check (a --quick run's short windows aside), at most
/// [`plot::timeline::MOST`].
fn timelines(h: &mut String, results: &RunResults) -> Result<()> {
    let keys = plot::timeline::key_points(results);
    // Each drawn point with why: the knee and collapse of its curve, and any
    // check it failed.
    let mut drawn: Vec<(&crate::store::results::PointRecord, Vec<&str>)> = Vec::new();
    for p in &results.points {
        let mut why: Vec<&str> = keys
            .iter()
            .filter(|(i, _)| *i == p.index)
            .map(|(_, w)| w.label())
            .collect();
        if p.checks
            .iter()
            .any(|c| !c.passed && c.kind != crate::check::CheckKind::Window)
        {
            why.push("flagged");
        }
        if !why.is_empty() {
            drawn.push((p, why));
        }
    }
    let figs: Vec<(plot::Figure, String)> = drawn
        .iter()
        .filter_map(|(p, why)| plot::timeline::timeline(p).map(|f| (f, why.join(", "))))
        .collect();
    if figs.is_empty() {
        return Ok(());
    }
    let _ = writeln!(
        h,
        "<h2>Timelines</h2><p>Requests finished in each second of each measured window, at \
         the knee of each curve (its most rate per mean response time), at its collapse (its \
         last point, when the rate fell under half its best), and at every point that failed a \
         check{}.</p>",
        if figs.len() > plot::timeline::MOST {
            format!(
                " (the first {} of {}; the table names the others)",
                plot::timeline::MOST,
                figs.len()
            )
        } else {
            String::new()
        }
    );
    for (f, why) in figs.iter().take(plot::timeline::MOST) {
        let _ = writeln!(
            h,
            "<figure class=\"timeline\">{}<figcaption>{} ({})</figcaption></figure>",
            f.svg()?,
            esc(&f.title),
            esc(why)
        );
    }
    Ok(())
}

/// The utilisation law in words, at the point whose server was busiest: the
/// server CPU share U (CPU seconds over window seconds) against X·D, the
/// throughput times the server CPU per request. `None` when no point measured
/// all three.
fn utilisation_law(results: &RunResults) -> Option<String> {
    let (p, u, x, d) = results
        .points
        .iter()
        .filter_map(|p| {
            let u = p.summary.get(&Metric::CpuPct)?.mean;
            let x = p.summary.get(&Metric::Throughput)?.mean;
            let d = p.summary.get(&Metric::CpuUs)?.mean;
            Some((p, u, x, d))
        })
        .max_by(|a, b| a.1.total_cmp(&b.1))?;
    Some(format!(
        "Server CPU share U is the server's CPU seconds over the window's seconds (100% is one \
         CPU's worth). The utilisation law U = X·D holds with D the server CPU per request: at \
         the busiest point, #{} ({}), X = {} requests/s × D = {} µs gives {:.1}%, against U = \
         {:.1}% measured (X counts answered requests; D divides by every finished one).",
        p.index,
        p.label(),
        metric::fmt(x),
        metric::fmt(d),
        x * d / 1e4,
        u
    ))
}

/// A reason without its "repeat N: " prefix, so that one cause is said once.
fn strip_repeat(why: &str) -> &str {
    why.strip_prefix("repeat ")
        .and_then(|r| r.split_once(": "))
        .filter(|(n, _)| n.chars().all(|c| c.is_ascii_digit()))
        .map_or(why, |(_, rest)| rest)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::{Check, CheckKind};
    use crate::protocol::Protocol;
    use crate::report::plot::figure::tests::{EXP, quick_run};

    #[test]
    fn the_table_of_figures_says_where_a_prediction_was_withheld_and_why() {
        use crate::report::applicability::tests::{experiment, point};
        let exp = experiment("");
        let results = RunResults {
            points: vec![point("epoll", false), point("thread", true)],
            ..quick_run(&toml::from_str(EXP).unwrap())
        };
        let html = render(&results, &exp).unwrap();
        assert_eq!(
            html.matches("prediction not drawn or scored: the load generator was the bottleneck")
                .count(),
            1,
            "only the client-bound point"
        );
    }

    #[test]
    fn a_reason_is_said_once_without_its_repeat() {
        assert_eq!(
            strip_repeat("repeat 12: no request completed"),
            "no request completed"
        );
        assert_eq!(strip_repeat("too short"), "too short");
        assert_eq!(strip_repeat("repeat x: y"), "repeat x: y");
    }

    #[test]
    fn the_protocol_is_stated_a_quick_run_says_so_and_a_failed_check_is_flagged() {
        let exp = Experiment::parse(EXP, "t.toml").unwrap();
        let mut r = quick_run(&exp);
        let mut p = Protocol {
            quick: false,
            window_s: 10.0,
            warmup_s: 2.0,
            min_repeats: 3,
            max_repeats: 10,
            precision: 0.02,
            headline: Metric::Throughput,
            interleaved: None,
        };
        r.protocol = Some(p.clone());
        let s = protocol_sentence(&r);
        assert!(
            s.contains("windows of at least 10 s; 3 to 10 repeats per point, more until the 95% interval of throughput is within ±2%"),
            "{s}"
        );
        assert!(!s.contains("quick") && !s.contains("interleaved"), "{s}");
        // The check and the response times are described as the run made them.
        assert!(
            s.contains("over finished requests") && s.contains("N = X·(R+C) + thinks/s·Z"),
            "{s}"
        );
        let mut old = r.clone();
        old.schema = crate::store::results::SCHEMA_V3.into();
        let s = protocol_sentence(&old);
        assert!(
            s.contains("stored before servelab-lab/4") && s.contains("N = X·(R+C+Z)"),
            "{s}"
        );
        r.protocol = Some(Protocol {
            interleaved: Some(crate::store::results::Interleaved {
                side: crate::store::results::Side::B,
                pair: "p".into(),
                exe_a: "/old/servelab".into(),
                exe_b: "/new/servelab".into(),
                by: crate::store::results::Alternation::Point,
                first: vec![],
                started_s: vec![],
                repeat_started_s: vec![],
                server_pid: vec![],
            }),
            ..p.clone()
        });
        let s = protocol_sentence(&r);
        assert!(
            s.ends_with("Side B of an interleaved pair (servelab lab ab): every point was measured with A (/old/servelab) and B (/new/servelab) back to back, in ABBA order by point; `lab compare` the two sides to test the change."),
            "{s}"
        );
        if let Some(i) = r.protocol.as_mut().and_then(|p| p.interleaved.as_mut()) {
            i.by = crate::store::results::Alternation::Repeat;
        }
        let s = protocol_sentence(&r);
        assert!(
            s.ends_with("every point was measured with A (/old/servelab) and B (/new/servelab) with both servers alive side by side and their repeats alternating in ABBA order by repeat; `lab compare` the two sides to test the change."),
            "{s}"
        );
        p.quick = true;
        p.min_repeats = 2;
        p.max_repeats = 2;
        r.protocol = Some(p);
        let s = protocol_sentence(&r);
        assert!(
            s.starts_with("--quick run, shorter than the protocol asks"),
            "{s}"
        );
        r.points[0].checks.push(Check {
            kind: CheckKind::LittlesLaw,
            passed: false,
            detail: "N = 8 users; X·(R+Z) gives 6.1".into(),
        });
        let html = render(&r, &exp).unwrap();
        assert!(html.contains("&#9873; Little&#39;s law") || html.contains("&#9873; Little's law"));
        assert!(
            html.contains("⚑ Little's law: N = 8 users"),
            "the note names it"
        );
    }

    #[test]
    fn the_utilisation_law_is_shown_at_the_busiest_point() {
        let exp = Experiment::parse(EXP, "t.toml").unwrap();
        let mut r = quick_run(&exp);
        for p in &mut r.points {
            p.summary.remove(&Metric::CpuPct);
        }
        assert_eq!(utilisation_law(&r), None);
        let stat = |mean| crate::store::results::Stat {
            mean,
            ..r.points[0].summary[&Metric::Throughput]
        };
        let (x, d, u) = (stat(2000.0), stat(150.0), stat(31.0));
        let p = &mut r.points[0];
        p.summary.insert(Metric::Throughput, x);
        p.summary.insert(Metric::CpuUs, d);
        p.summary.insert(Metric::CpuPct, u);
        let law = utilisation_law(&r).unwrap();
        assert!(
            law.contains("gives 30.0%, against U = 31.0% measured"),
            "{law}"
        );
        assert!(
            render(&r, &exp)
                .unwrap()
                .contains("utilisation law U = X·D")
        );
    }
}
