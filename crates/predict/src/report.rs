//! Writing a prediction the way the lab writes a run: `results.json` (every
//! step, the fit, the predictions, the checked points and the error table)
//! and a self-contained `report.html` with measured-against-predicted figures,
//! in a new directory that is never overwritten.

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::judge::Verdict;
use crate::outcome::Outcome;
use crate::validate::Point;
use servelab_lab::html::{STYLE, esc};
use servelab_lab::plot::{Figure, Series};
use servelab_lab::{LabError, Result};

/// The schema of `results.json`; a field never changes meaning under it.
pub const SCHEMA: &str = "servelab-predict/3";

#[derive(Serialize)]
struct Document<'a> {
    schema: &'static str,
    #[serde(flatten)]
    outcome: &'a Outcome,
}

/// Makes `out` (refused when it exists) or `results/predict-STAMP`.
pub(crate) fn make_dir(out: Option<&Path>, stamp: &str) -> Result<PathBuf> {
    let path = match out {
        Some(p) => p.to_path_buf(),
        None => PathBuf::from(servelab_lab::rundir::DEFAULT_RUNS).join(format!("predict-{stamp}")),
    };
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent).map_err(|e| LabError::io(parent, e))?;
    }
    // create_dir, not create_dir_all: it fails on an existing directory, so
    // nothing is ever written over, even in a race with another run.
    std::fs::create_dir(&path).map_err(|e| {
        if e.kind() == std::io::ErrorKind::AlreadyExists {
            LabError::Other(format!(
                "{} exists; predict never overwrites: choose a new --out",
                path.display()
            ))
        } else {
            LabError::io(&path, e)
        }
    })?;
    Ok(path)
}

/// Writes `results.json` and `report.html` into `dir`.
pub(crate) fn write(dir: &Path, o: &Outcome) -> Result<()> {
    let json = serde_json::to_string_pretty(&Document {
        schema: SCHEMA,
        outcome: o,
    })
    .map_err(|e| LabError::Other(format!("results.json: {e}")))?;
    let p = dir.join("results.json");
    std::fs::write(&p, json).map_err(|e| LabError::io(&p, e))?;
    let p = dir.join("report.html");
    std::fs::write(&p, html(o)?).map_err(|e| LabError::io(&p, e))
}

fn pct(v: Option<f64>) -> String {
    v.map_or("–".into(), |v| format!("{v:.1}%"))
}

fn html(o: &Outcome) -> Result<String> {
    let f = &o.fit;
    let mut h = format!(
        "<!doctype html><html><head><meta charset=\"utf-8\"><title>servelab predict {}</title>\
         <style>{STYLE}</style></head><body><h1>servelab predict</h1><p class=\"q\">{}</p>\
         <pre>{}</pre>",
        esc(&o.url),
        esc(&o.url),
        esc(&o.command)
    );
    if let Some(v) = &o.validation {
        let missed_or_open = v.table.iter().any(|r| !r.why.is_empty());
        h.push_str(&format!(
            "<p{}><b>{}</b></p>",
            if missed_or_open {
                " class=\"flag\""
            } else {
                ""
            },
            esc(&v.headline())
        ));
        let why: Vec<String> = v
            .table
            .iter()
            .filter(|r| !r.why.is_empty())
            .map(|r| format!("<li>{}: {}</li>", r.target.label(), esc(&r.why.join("; "))))
            .collect();
        if !why.is_empty() {
            h.push_str(&format!("<ul>{}</ul>", why.concat()));
        }
    }
    for w in &o.warnings {
        h.push_str(&format!("<p class=\"flag\">Warning: {}</p>", esc(w)));
    }
    let a = &o.architecture;
    h.push_str(&format!(
        "<h2>Architecture</h2><p>{} ({:.1} s of probes).</p><ul>",
        esc(&a.summary()),
        a.probe_s
    ));
    for line in &a.how {
        h.push_str(&format!("<li>{}</li>", esc(line)));
    }
    h.push_str("</ul>");
    h.push_str(
        "<h2>Fit</h2><table><tr><th class=\"l\">parameter</th><th>value</th><th>±95%</th></tr>",
    );
    let row = |h: &mut String, name: &str, v: f64, hw: Option<f64>, unit: &str| {
        h.push_str(&format!(
            "<tr><td class=\"l\">{}</td><td>{v:.4} {unit}</td><td>{}</td></tr>",
            esc(name),
            hw.map_or("–".into(), |x| format!("{x:.4}"))
        ));
    };
    if let Some(c) = &f.cpu_demand_s {
        row(
            &mut h,
            "CPU per request D = U/X",
            c.value * 1e3,
            c.half_width.map(|x| x * 1e3),
            "ms",
        );
    }
    let r = &f.low_load_response_s;
    row(
        &mut h,
        "response time at 1 user",
        r.value * 1e3,
        r.half_width.map(|x| x * 1e3),
        "ms",
    );
    row(
        &mut h,
        "CV of the response time at 1 user",
        f.cv.value,
        f.cv.half_width,
        "",
    );
    row(
        &mut h,
        "plateau X_max",
        f.throughput_max.value,
        f.throughput_max.half_width,
        "/s",
    );
    row(
        &mut h,
        "servers X_max·D",
        f.servers_raw.value,
        f.servers_raw.half_width,
        "",
    );
    if let Some(slope) = &f.demand_slope_s_per_user {
        row(
            &mut h,
            "CPU per request, per added user",
            slope.value * 1e3,
            slope.half_width.map(|w| w * 1e3),
            "ms",
        );
    }
    h.push_str(&format!(
        "</table><p>Model: c = {}, k = {} ({}), service {}, buffer {}{}.</p><pre>{}</pre><ul>",
        f.cores,
        f.threads_per_core,
        f.policy,
        esc(&f.service.to_string()),
        f.buffer,
        f.buffer_bounds.map_or(String::new(), |(lo, hi)| format!(
            " (from refusals: {lo}..={hi})"
        )),
        esc(&o.sim_command)
    ));
    for n in &f.notes {
        h.push_str(&format!("<li>{}</li>", esc(n)));
    }
    h.push_str("</ul>");
    if let Some(t) = &f.threads_fit {
        h.push_str(&threads_table(t));
    }
    h.push_str("<h2>Staircase</h2><table><tr><th>load</th><th>X /s</th><th>R ms</th><th>CPU ms/req</th><th class=\"l\">repeats</th><th class=\"l\">checks</th></tr>");
    for s in &o.staircase {
        let x = s.sample(|r| Some(r.goodput));
        let rm = s.sample(|r| r.mean_ms);
        let cpu = s.sample(|r| r.cpu_ms);
        let failed: Vec<String> = s
            .checks
            .iter()
            .filter(|c| !c.passed)
            .map(|c| c.detail.clone())
            .collect();
        h.push_str(&format!(
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"l\">{}</td><td class=\"l\">{}</td></tr>",
            esc(&s.load.describe()),
            x.map_or("–".into(), |x| format!("{:.1} ± {:.1}", x.mean, x.half_width().unwrap_or(f64::NAN))),
            rm.map_or("–".into(), |x| format!("{:.2}", x.mean)),
            cpu.map_or("not measured".into(), |x| format!("{:.3}", x.mean)),
            esc(&s.stopped.describe(crate::staircase::PRECISION)),
            if failed.is_empty() { "passed".into() } else { format!("<span class=\"flag\">{}</span>", esc(&failed.join("; "))) }
        ));
    }
    h.push_str("</table>");
    if let Some(p) = &o.past_workers {
        h.push_str(&format!(
            "<p{}>Past the {} held workers (kept out of the fit): {}.</p>",
            if p.reading == crate::past_workers::Reading::NotHeld || p.model_agrees == Some(false) {
                " class=\"flag\""
            } else {
                ""
            },
            p.workers,
            esc(&p.summary)
        ));
    }
    if let Some(g) = &o.idle {
        h.push_str(&format!(
            "<p{}>One user thinking (kept out of the fit): {}.</p>",
            if g.costs_more { " class=\"flag\"" } else { "" },
            esc(&g.summary)
        ));
    }
    h.push_str("<h2>Predictions</h2><table><tr><th>load</th><th>think</th><th>X /s</th><th>goodput /s</th><th>badput /s</th><th>R ms</th><th>p99 ms</th><th>U %</th><th>drops /s</th><th>exact X</th></tr>");
    for p in &o.forecasts {
        h.push_str(&format!(
            "<tr><td>{}</td><td>{}</td><td>{:.1}</td><td>{:.1}</td><td>{:.1}</td><td>{}</td><td>{}</td><td>{:.1}</td><td>{:.2}</td><td>{}</td></tr>",
            esc(&p.load.describe()),
            if p.load.rate.is_some() { "open".to_string() } else { esc(&p.load.think.to_string()) },
            p.throughput.value,
            p.goodput.value,
            p.badput.value,
            p.mean_ms.map_or("–".into(), |m| format!("{:.2}", m.value)),
            p.p99_ms.map_or("–".into(), |m| format!("{:.2}", m.value)),
            p.utilisation_pct.value,
            p.drop_rate.value,
            p.exact_throughput.map_or("–".into(), |x| format!("{x:.1}")),
        ));
    }
    h.push_str(&format!(
        "</table><p>Knee N* = {:.1} users at the asked think time.",
        o.knee_users
    ));
    if let (Some(slo), found) = (&o.slo, &o.slo_users) {
        h.push_str(&format!(
            " Largest load meeting {}: {}.",
            esc(&slo.to_string()),
            found.map_or("none (one user misses it)".into(), |n| format!("{n} users"))
        ));
    }
    h.push_str("</p>");
    if o.forecasts.iter().any(|p| p.load.rate.is_some()) {
        h.push_str(&format!(
            "<p>An open rate λ is simulated as {} users thinking exp({}/λ) (the \
             simulator has closed users only): their arrivals are within 1% of Poisson at λ \
             while fewer than {} requests are in the server.</p>",
            crate::fit::OPEN_POPULATION,
            crate::fit::OPEN_POPULATION,
            crate::fit::OPEN_POPULATION / 100
        ));
    }
    match &o.validation {
        None => h.push_str("<h2>Validation</h2><p>Not run (--no-validate).</p>"),
        Some(v) => {
            h.push_str(&format!(
                "<h2>Validation: measured against predicted</h2><p>Error = (predicted &minus; \
                 measured) / measured. Each repeat is a run of <code>load</code> of its own: \
                 a window of {:.2} s that starts, once the server has finished the previous \
                 run's requests, from an empty server and fresh connections. The prediction is \
                 simulated the same way (windows of {:.2} s from an empty server, no warm-up, R \
                 over the requests answered in the window, requests still waiting at its end \
                 apart); the steady state at the same load is beside it in the table. Measured R is over \
                 the answered requests too; requests unfinished at a window's end are \
                 counted apart. A target is met when every point's error is within it, missed \
                 when at some point the error is past it by more than the error's 95% interval \
                 (the measured and predicted intervals combined), and inconclusive otherwise: \
                 this measurement cannot decide.</p>",
                v.window_s, v.window_s
            ));
            h.push_str("<table><tr><th class=\"l\">metric</th><th>target</th><th>points</th><th>largest |error|</th><th>mean |error|</th><th class=\"l\">verdict</th></tr>");
            for r in &v.table {
                h.push_str(&format!(
                    "<tr><td class=\"l\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"l\">{}</td></tr>",
                    r.target.label(),
                    r.limit_pct.map_or("none".into(), |l| format!("{l:.0}%")),
                    r.points,
                    pct(r.max_abs_pct),
                    pct(r.mean_abs_pct),
                    match r.verdict {
                        Some(Verdict::Met) => "met".to_string(),
                        Some(v) => format!(
                            "<span class=\"flag\">{}</span> at {} of {} points",
                            v.label(),
                            r.missed_points + r.inconclusive_points,
                            r.points
                        ),
                        None => "–".into(),
                    }
                ));
            }
            h.push_str("</table>");
            h.push_str(&point_table(&v.points));
            for (title, y, get) in FIGURES {
                let fig = figure(title, y, &v.points, get);
                h.push_str(&format!("<figure class=\"plot\">{}</figure>", fig.svg()?));
            }
        }
    }
    h.push_str("</body></html>\n");
    Ok(h)
}

/// A point's figure: measured, predicted as measured, and the steady state,
/// each a value with its 95% half-width.
type Getter = fn(&Point) -> [Option<(f64, Option<f64>)>; 3];

/// The figures: the server as measured against the model simulated as
/// measured (windows from an empty server), with the steady-state prediction
/// as a third series: where the two predictions part, the windows were too
/// short to reach the steady state, and a reader sees by how much.
const FIGURES: [(&str, &str, Getter); 2] = [
    ("Goodput against users", "goodput (requests/s)", |p| {
        let e = |f: &crate::fit::Estimate| Some((f.value, f.half_width));
        [e(&p.goodput), e(&p.predicted.goodput), e(&p.steady.goodput)]
    }),
    (
        "Mean response time against users",
        "mean response time (ms)",
        |p| {
            let e = |f: Option<crate::fit::Estimate>| f.map(|m| (m.value, m.half_width));
            [e(p.mean_ms), e(p.predicted.mean_ms), e(p.steady.mean_ms)]
        },
    ),
];

fn figure(title: &str, y: &str, points: &[Point], get: Getter) -> Figure {
    let named = |label: &str| Series {
        label: label.into(),
        ..Series::default()
    };
    // Three series, each its own colour: the server measured, the model
    // simulated as measured (what the errors are computed against), and the
    // model in steady state.
    let (mut server, mut windows, mut steady) = (
        named("server"),
        named("model, windows as measured"),
        named("model, steady state"),
    );
    let bar = |(v, hw): (f64, Option<f64>)| {
        let hw = hw.unwrap_or(0.0);
        (v, v - hw, v + hw)
    };
    // Open points have no users to stand on this axis; they are in the table.
    for p in points.iter().filter(|p| p.load.rate.is_none()) {
        let x = f64::from(p.load.users);
        let [m, pr, st] = get(p);
        if let Some((v, lo, hi)) = m.map(bar) {
            server.points.push((x, v, lo, hi));
        }
        if let Some((v, lo, hi)) = pr.map(bar) {
            windows.predicted.push((x, v, lo, hi));
        }
        if let Some((v, lo, hi)) = st.map(bar) {
            steady.predicted.push((x, v, lo, hi));
        }
        server.saturation = Some(p.predicted.knee_users);
    }
    let empty = server
        .points
        .is_empty()
        .then(|| "no validation point was measured".to_string());
    let series = [server, windows, steady]
        .into_iter()
        .filter(|s| !s.points.is_empty() || !s.predicted.is_empty())
        .collect();
    Figure {
        title: title.into(),
        x_label: "users".into(),
        y_label: y.into(),
        series,
        empty,
        ..Figure::default()
    }
}

fn point_table(points: &[Point]) -> String {
    let mut h = String::from(
        "<table><tr><th>load</th><th>X meas.</th><th>X pred.</th><th>X steady</th><th>R meas. ms</th><th>R pred. ms</th><th>R steady ms</th><th>p99 meas.</th><th>p99 pred.</th><th>unfinished meas.</th><th>unfinished pred.</th><th class=\"l\">errors</th><th class=\"l\">checks</th></tr>",
    );
    for p in points {
        let errs: Vec<String> = p
            .errors
            .iter()
            .map(|e| {
                format!(
                    "{} {:+.1}%{}{}",
                    e.target.label(),
                    e.pct,
                    e.half_width_pct
                        .map_or(String::new(), |h| format!(" ± {h:.1}")),
                    match e.verdict {
                        Some(Verdict::Missed) => " missed",
                        Some(Verdict::Inconclusive) => " inconclusive",
                        _ => "",
                    }
                )
            })
            .collect();
        let failed: Vec<String> = p
            .checks
            .iter()
            .filter(|c| !c.passed)
            .map(|c| c.detail.clone())
            .collect();
        let o =
            |v: Option<crate::fit::Estimate>| v.map_or("–".into(), |v| format!("{:.2}", v.value));
        h.push_str(&format!(
            "<tr><td>{}</td><td>{:.1}</td><td>{:.1}</td><td>{:.1}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{:.1}</td><td>{:.1}</td><td class=\"l\">{}</td><td class=\"l\">{}</td></tr>",
            esc(&p.load.describe()),
            p.goodput.value,
            p.predicted.goodput.value,
            p.steady.goodput.value,
            o(p.mean_ms),
            o(p.predicted.mean_ms),
            o(p.steady.mean_ms),
            o(p.p99_ms),
            o(p.predicted.p99_ms),
            p.unfinished.value,
            p.predicted.users_waiting_at_end.value,
            esc(&errs.join(", ")),
            if failed.is_empty() { "passed".into() } else { format!("<span class=\"flag\">{}</span>", esc(&failed.join("; "))) }
        ));
    }
    h.push_str("</table>");
    h
}

/// The threads-per-core fit: every candidate's error at every step.
fn threads_table(t: &crate::kfit::ThreadsFit) -> String {
    let mut h = String::from(
        "<h2>Threads per core k</h2><p>Mean response time at each step of the staircase, \
         simulated with each candidate; error = (predicted &minus; measured) / measured.</p>\
         <table><tr><th class=\"l\">k (policy)</th>",
    );
    for s in &t.steps {
        h.push_str(&format!("<th>{}</th>", esc(s)));
    }
    h.push_str("<th>RMS</th><th class=\"l\"></th></tr><tr><td class=\"l\">measured ms</td>");
    for m in &t.measured_ms {
        h.push_str(&format!(
            "<td>{}</td>",
            m.map_or("–".into(), |m| format!("{m:.3}"))
        ));
    }
    h.push_str("<td></td><td></td></tr>");
    for c in &t.candidates {
        h.push_str(&format!(
            "<tr><td class=\"l\">{} ({})</td>",
            c.threads_per_core, c.policy
        ));
        for e in &c.errors_pct {
            h.push_str(&format!(
                "<td>{}</td>",
                e.map_or("–".into(), |e| format!("{e:+.1}%"))
            ));
        }
        let mark = if c.threads_per_core == t.chosen {
            "the model's k"
        } else if t.not_told_apart.contains(&c.threads_per_core) {
            "not told apart"
        } else {
            ""
        };
        h.push_str(&format!(
            "<td>{:.1}%</td><td class=\"l\">{mark}</td></tr>",
            c.rms_pct
        ));
    }
    h.push_str("</table>");
    h
}
