//! Figures quoted in README.md and docs/lab.md come from the stored reference
//! results (`results/reference`), recomputed here with the lab's own code
//! (its accuracy table, its statistics, its number format) and looked for in
//! the docs' text. A retyped number drifts: docs/lab.md once gave `model-cpu`
//! errors of 2.81/8.34/8.58% where its report said 2.63/6.81/7.78%, and
//! `overload-cpu` −73.1% where it said +109%. When a reference run is redone,
//! this test names every quote that no longer holds.
//!
//! Whitespace is compared collapsed (a quote may wrap), and the docs' minus
//! sign (U+2212) reads as the reports' hyphen.

use std::path::{Path, PathBuf};

use servelab_lab::accuracy::{self, Table};
use servelab_lab::metric::{self, Metric};
use servelab_lab::{Experiment, RunResults};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn doc(name: &str) -> String {
    let text = std::fs::read_to_string(root().join(name)).unwrap();
    text.replace('\u{2212}', "-")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

/// A stored reference run and the experiment it embeds.
fn reference(name: &str) -> (Experiment, RunResults) {
    let r = RunResults::read(&root().join("results/reference").join(name)).unwrap();
    let exp = Experiment::parse(&r.source, &r.source_file).unwrap();
    (exp, r)
}

fn table(name: &str) -> Table {
    let (exp, r) = reference(name);
    accuracy::table(&exp, &r).unwrap()
}

/// A metric's largest error (signed) and mean absolute error.
fn largest(t: &Table, m: Metric) -> (f64, f64) {
    let s = t.summaries.iter().find(|s| s.metric == m).unwrap();
    (s.largest.0, s.mean_abs)
}

/// A target's misses and points, with its worst miss.
fn target(t: &Table, m: Metric, nth: usize) -> (usize, usize, f64) {
    let v = t
        .verdicts
        .iter()
        .filter(|v| v.metric == m)
        .nth(nth)
        .unwrap();
    let worst = v
        .misses
        .iter()
        .map(|x| x.1)
        .max_by(|a, b| a.abs().total_cmp(&b.abs()))
        .unwrap_or(0.0);
    (v.misses.len(), v.points, worst)
}

fn f(v: f64) -> String {
    metric::fmt(v)
}

/// `model`'s throughput against the exact model: largest and mean |error|, %.
fn model_errors() -> (f64, f64) {
    let (_, r) = reference("model");
    let errs: Vec<f64> = r
        .points
        .iter()
        .filter_map(|p| {
            let x = p.exact.get(&Metric::Throughput)?;
            let m = p.summary.get(&Metric::Throughput)?.mean;
            Some((x - m) / m * 100.0)
        })
        .collect();
    let max = errs.iter().map(|e| e.abs()).fold(0.0, f64::max);
    (
        max,
        errs.iter().map(|e| e.abs()).sum::<f64>() / errs.len() as f64,
    )
}

/// Server CPU per request at 100 requests per connection, "mean ± half-width".
fn engine_cpu(server: &str) -> String {
    let (_, r) = reference("engines");
    let p = r
        .points
        .iter()
        .find(|p| {
            p.server.as_deref() == Some(server)
                && p.var("session").and_then(|v| v.as_f64()) == Some(100.0)
        })
        .unwrap();
    let s = p.summary[&Metric::CpuUs];
    format!("{} ± {}", f(s.mean), f(s.half_width()))
}

fn quotes() -> Vec<(&'static str, String)> {
    let cpu = table("model-cpu");
    let (x, xm) = largest(&cpu, Metric::Throughput);
    let (r, rm) = largest(&cpu, Metric::MeanMs);
    let (p99, _) = largest(&cpu, Metric::P99Ms);
    let model_cpu = format!(
        "throughput within {}% (mean {}%), mean response time within {}% (mean {}%), p99 within {}%",
        f(x.abs()),
        f(xm),
        f(r.abs()),
        f(rm),
        f(p99.abs())
    );
    let ov = table("overload-cpu");
    let (ox, _) = largest(&ov, Metric::Throughput);
    let (gm, gp, gw) = target(&ov, Metric::Goodput, 0);
    let (_, _, below) = target(&ov, Metric::MeanMs, 0);
    let (_, _, beyond) = target(&ov, Metric::MeanMs, 1);
    let ap = table("apache");
    let (axm, axp, axw) = target(&ap, Metric::Throughput, 0);
    let (agm, agp, agw) = target(&ap, Metric::Goodput, 0);
    let (arm, arp, arw) = target(&ap, Metric::MeanMs, 0);
    let (abm, abp, abw) = target(&ap, Metric::MeanMs, 1);
    let (model_max, model_mean) = model_errors();
    let mut q = vec![
        ("docs/lab.md", model_cpu.clone()),
        (
            "docs/lab.md",
            format!(
                "met the throughput target (largest {}) and missed goodput at {gm} of {gp} points ({} at 45 users",
                accuracy::pct(ox),
                accuracy::pct(gw)
            ),
        ),
        (
            "docs/lab.md",
            format!(
                "below N* ({} at 32 users, finish) and 1 of 4 beyond ({}, 45 users",
                accuracy::pct(below),
                accuracy::pct(beyond)
            ),
        ),
        (
            "docs/lab.md",
            format!(
                "throughput missed 5% at {axm} of {axp} points (worst {}), goodput 10% at {agm} of \
                 {agp} (worst {}), the mean response time 10% below N* at {arm} of {arp} (worst {}) \
                 and 15% past it at {abm} of {abp} (worst {})",
                accuracy::pct(axw),
                accuracy::pct(agw),
                accuracy::pct(arw),
                accuracy::pct(abw)
            ),
        ),
        (
            "docs/lab.md",
            format!(
                "throughput within {}% of the measured at every point (mean {}%)",
                f(model_max),
                f(model_mean)
            ),
        ),
        (
            "README.md",
            format!(
                "predicts within {}% in throughput and {}% in mean response time at 6 of 6 points (`model-cpu`)",
                f(x.abs()),
                f(r.abs())
            ),
        ),
        (
            "README.md",
            format!(
                "(goodput {}, mean response time {} past N*",
                accuracy::pct(agw),
                accuracy::pct(abw)
            ),
        ),
        ("README.md", format!("`model`'s {}%", f(model_max))),
    ];
    // When the reference run was made, as its results record it (the docs
    // once gave a time of day no run had): the earliest start among the runs
    // of the reference sweep (not `h2`, run apart, nor `filesize`, run again
    // at its end), and `filesize`'s.
    let hm = |r: &RunResults| r.started_utc[11..16].to_string();
    let first = std::fs::read_dir(root().join("results/reference"))
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n != "h2" && n != "filesize")
        .filter(|n| {
            root()
                .join("results/reference")
                .join(n)
                .join("results.json")
                .is_file()
        })
        .map(|n| reference(&n).1.started_utc)
        .min()
        .unwrap();
    let (_, filesize) = reference("filesize");
    q.push((
        "docs/lab.md",
        format!("{} from {}", &first[..10], &first[11..16]),
    ));
    q.push((
        "docs/lab.md",
        format!("`filesize` is its second run, from {}", hm(&filesize)),
    ));
    for server in ["uring", "reactor", "epoll", "h2o", "lighttpd", "nginx"] {
        q.push(("README.md", engine_cpu(server)));
        q.push(("docs/lab.md", engine_cpu(server)));
    }
    q
}

#[test]
fn figures_quoted_in_the_docs_come_from_the_stored_reference_results() {
    let wrong: Vec<String> = quotes()
        .into_iter()
        .filter(|(file, text)| !doc(file).contains(text.as_str()))
        .map(|(file, text)| format!("{file} lacks: {text}"))
        .collect();
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
