//! How close the prediction came: the relative error of every measured figure
//! against the simulator's at every point, the largest and the mean per metric,
//! and whether each target of the experiment's `[accuracy]` was met.
//!
//! The error of a point is the prediction error `(simulated - measured) /
//! measured`, on the simulated mean and the measured mean over the repeats:
//! the same convention as `servelab predict` and the lab's `error_pct`, so
//! that "+5%" everywhere means the model said 5% more than was measured.
//! A rate measured near zero (goodput after a collapse, badput before one)
//! makes that ratio meaningless: 3 against 0.1 requests/s is "+2900%" and says
//! nothing. Below `floor` times the point's throughput bound, min(N/(S+Z),
//! c/S), the error is taken against that share of the bound instead, and the
//! table marks it. Times are never floored.
//!
//! Only points where the model applies are scored (see
//! [`crate::report::applicability`]): the others are listed with the reason, never
//! silently dropped.
//!
//! Targets are bands of the population in units of the saturation point N*
//! (`nstar = [0.8, 1.5]`), so that one file can ask for 5% far from the knee
//! and 10% at it.

use std::collections::BTreeMap;

use crate::experiment::{AccuracySpec, Experiment, TargetSpec};
use crate::metric::{self, Metric};
use crate::report::applicability;
use crate::store::results::{PointRecord, RunResults, Status};

/// The default floor: 5% of the throughput bound.
const FLOOR: f64 = 0.05;

/// One metric at one point.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Cell {
    /// Measured mean over the repeats.
    pub measured: f64,
    /// Simulated mean.
    pub simulated: f64,
    /// Relative error, percent.
    pub error_pct: f64,
    /// The error is against the floor, not the simulated value.
    pub floored: bool,
}

/// One point of the table.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// "server, axis=value".
    pub label: String,
    /// N / N*, when the point has users and the model a saturation point.
    pub load: Option<f64>,
    /// The compared metrics.
    pub cells: BTreeMap<Metric, Cell>,
}

/// One metric over every point.
#[derive(Debug, Clone, PartialEq)]
pub struct Summary {
    /// The metric.
    pub metric: Metric,
    /// The signed error of largest size, and where.
    pub largest: (f64, String),
    /// Mean absolute error.
    pub mean_abs: f64,
    /// Points compared.
    pub points: usize,
}

/// A target and how it went.
#[derive(Debug, Clone, PartialEq)]
pub struct Verdict {
    /// The metric.
    pub metric: Metric,
    /// Allowed error, percent.
    pub within_pct: f64,
    /// The band, in units of N*.
    pub nstar: Option<[f64; 2]>,
    /// Points in the band.
    pub points: usize,
    /// The points that missed: (label, error).
    pub misses: Vec<(String, f64)>,
    /// The experiment's explanation of a miss.
    pub caveat: Option<String>,
}

/// The whole comparison.
#[derive(Debug, Clone, PartialEq)]
pub struct Table {
    /// Metrics in table order.
    pub metrics: Vec<Metric>,
    /// Every point with a prediction.
    pub rows: Vec<Row>,
    /// Per metric.
    pub summaries: Vec<Summary>,
    /// Per target and metric.
    pub verdicts: Vec<Verdict>,
    /// Points with a prediction where the model does not apply, not scored:
    /// (label, reason).
    pub withheld: Vec<(String, String)>,
}

/// The prediction error of `simulated` against `measured`, (simulated −
/// measured) / measured, with `scale` the point's throughput bound for rates
/// (`None` for times).
pub fn cell(measured: f64, simulated: f64, scale: Option<f64>, floor: f64) -> Cell {
    let min = scale.map_or(0.0, |s| s * floor);
    let (denominator, floored) = if measured.abs() < min {
        (min, true)
    } else {
        (measured, false)
    };
    let error_pct = if denominator == 0.0 {
        if measured == simulated {
            0.0
        } else {
            f64::INFINITY
        }
    } else {
        (simulated - measured) / denominator * 100.0
    };
    Cell {
        measured,
        simulated,
        error_pct,
        floored,
    }
}

/// Whether a metric is a rate (floored) rather than a time.
fn is_rate(m: Metric) -> bool {
    m.unit() == "requests/s"
}

/// The table of a run, when the experiment asks for one.
pub fn table(exp: &Experiment, results: &RunResults) -> Option<Table> {
    let spec = exp.accuracy.as_ref()?;
    Some(compute(exp, spec, results))
}

fn compute(exp: &Experiment, spec: &AccuracySpec, results: &RunResults) -> Table {
    let metrics: Vec<Metric> = spec.metrics.iter().map(|m| *m.get_ref()).collect();
    let floor = spec.floor.unwrap_or(FLOOR);
    let ok = || results.points.iter().filter(|p| p.status == Status::Ok);
    let withheld = applicability::withheld(exp, ok());
    let rows: Vec<Row> = ok()
        .filter(|p| !p.predicted.is_empty() && applicability::why_not(exp, p).is_none())
        .map(|p| row(p, &metrics, floor))
        .collect();
    let summaries = metrics.iter().filter_map(|m| summary(*m, &rows)).collect();
    let verdicts = spec
        .targets
        .iter()
        .flat_map(|t| t.metrics.iter().map(move |m| (*m.get_ref(), t)))
        .map(|(m, t)| verdict(m, t, &rows))
        .collect();
    Table {
        metrics,
        rows,
        summaries,
        verdicts,
        withheld,
    }
}

fn row(p: &PointRecord, metrics: &[Metric], floor: f64) -> Row {
    let users = p.var("users").and_then(|v| v.as_f64());
    let nstar = p.exact.get(&Metric::SaturationUsers).copied();
    let scale = p.exact.get(&Metric::ThroughputMax).copied();
    let cells = metrics
        .iter()
        .filter_map(|m| {
            let measured = p.summary.get(m)?.mean;
            let simulated = p.predicted.get(m)?.mean;
            let scale = if is_rate(*m) { scale } else { None };
            Some((*m, cell(measured, simulated, scale, floor)))
        })
        .collect();
    Row {
        label: p.label(),
        load: users.zip(nstar).map(|(n, s)| n / s),
        cells,
    }
}

fn summary(m: Metric, rows: &[Row]) -> Option<Summary> {
    let errs: Vec<(f64, &str)> = rows
        .iter()
        .filter_map(|r| Some((r.cells.get(&m)?.error_pct, r.label.as_str())))
        .filter(|(e, _)| e.is_finite())
        .collect();
    let (e, at) = errs.iter().max_by(|a, b| a.0.abs().total_cmp(&b.0.abs()))?;
    Some(Summary {
        metric: m,
        largest: (*e, at.to_string()),
        mean_abs: errs.iter().map(|(e, _)| e.abs()).sum::<f64>() / errs.len() as f64,
        points: errs.len(),
    })
}

fn verdict(m: Metric, t: &TargetSpec, rows: &[Row]) -> Verdict {
    let in_band = |r: &&Row| match (t.nstar, r.load) {
        (None, _) => true,
        (Some([lo, hi]), Some(x)) => lo <= x && x < hi,
        (Some(_), None) => false,
    };
    let compared: Vec<(&Row, &Cell)> = rows
        .iter()
        .filter(in_band)
        .filter_map(|r| Some((r, r.cells.get(&m)?)))
        .collect();
    Verdict {
        metric: m,
        within_pct: t.within_pct,
        nstar: t.nstar,
        points: compared.len(),
        misses: compared
            .iter()
            .filter(|(_, c)| c.error_pct.abs() > t.within_pct || !c.error_pct.is_finite())
            .map(|(r, c)| (r.label.clone(), c.error_pct))
            .collect(),
        caveat: t.caveat.clone(),
    }
}

/// "below 0.8 N*", "from 0.8 to 1.5 N*", "at every point".
pub fn band_phrase(nstar: Option<[f64; 2]>) -> String {
    match nstar {
        None => "at every point".into(),
        Some([lo, hi]) if lo <= 0.0 => format!("below {} N*", metric::fmt_tick(hi)),
        Some([lo, hi]) if !hi.is_finite() || hi >= 1e6 => {
            format!("from {} N* on", metric::fmt_tick(lo))
        }
        Some([lo, hi]) => format!(
            "from {} to {} N*",
            metric::fmt_tick(lo),
            metric::fmt_tick(hi)
        ),
    }
}

/// "+4.2%" (or "-", or "inf").
pub fn pct(e: f64) -> String {
    if !e.is_finite() {
        return "no simulated value".into();
    }
    format!("{}{}%", if e >= 0.0 { "+" } else { "" }, metric::fmt(e))
}

/// The sentence that says whether the model holds.
pub fn sentence(t: &Table) -> Option<String> {
    let withheld = match t.withheld.len() {
        0 => String::new(),
        n => format!(
            " {n} point{} not scored, where the model does not apply.",
            if n == 1 { " was" } else { "s were" }
        ),
    };
    if t.rows.is_empty() {
        return (!t.withheld.is_empty()).then(|| {
            format!(
                "No point was scored: the model applies at none of the {} points with a prediction (the table says why).",
                t.withheld.len()
            )
        });
    }
    let largest: Vec<String> = t
        .summaries
        .iter()
        .map(|s| {
            format!(
                "{} {} (mean {}%)",
                s.metric.label(),
                pct(s.largest.0),
                metric::fmt(s.mean_abs)
            )
        })
        .collect();
    let missed: Vec<&Verdict> = t.verdicts.iter().filter(|v| !v.misses.is_empty()).collect();
    let judged = t.verdicts.iter().filter(|v| v.points > 0).count();
    let head = if judged == 0 {
        "No target could be judged (no point in its band)".to_string()
    } else if missed.is_empty() {
        format!(
            "The model holds: all {judged} targets met over {} points",
            t.rows.len()
        )
    } else {
        let parts: Vec<String> = missed
            .iter()
            .map(|v| {
                let worst = v
                    .misses
                    .iter()
                    .max_by(|a, b| a.1.abs().total_cmp(&b.1.abs()))
                    .map_or(String::new(), |(at, e)| {
                        format!(", worst {} at {at}", pct(*e))
                    });
                let band = match v.nstar {
                    None => String::new(),
                    Some(b) => format!(" {}", band_phrase(Some(b))),
                };
                format!(
                    "{} missed {}%{band} at {} of {} points{worst}",
                    v.metric.label(),
                    metric::fmt_tick(v.within_pct),
                    v.misses.len(),
                    v.points
                )
            })
            .collect();
        format!(
            "The model does not hold everywhere: {} (of {judged} targets)",
            parts.join("; ")
        )
    };
    Some(format!(
        "{head}. Largest errors: {}.{withheld}",
        largest.join(", ")
    ))
}

/// The report's section: per metric the largest and mean error, each target's
/// verdict, then every point.
pub fn html(t: &Table) -> String {
    use crate::html::esc;
    use std::fmt::Write as _;
    let mut h = String::from("<h2>Measured against simulated</h2>\n");
    let floor_note = t.rows.iter().any(|r| r.cells.values().any(|c| c.floored));
    let _ = writeln!(
        h,
        "<p>Error = (simulated mean &minus; measured mean) / measured mean, at every point {}{}.</p>",
        if t.withheld.is_empty() {
            "with a prediction"
        } else {
            "where the model applies (the table at the end lists the others and why)"
        },
        if floor_note {
            "; a rate measured under 5% of the throughput bound is compared against \
             that 5% instead (marked &dagger;)"
        } else {
            ""
        }
    );
    h.push_str(
        "<table><thead><tr><th class=\"l\">metric</th><th>largest error</th>\
         <th class=\"l\">at</th><th>mean |error|</th><th>points</th></tr></thead><tbody>\n",
    );
    for s in &t.summaries {
        let _ = writeln!(
            h,
            "<tr><td class=\"l\">{}</td><td>{}</td><td class=\"l\">{}</td><td>{}%</td><td>{}</td></tr>",
            esc(s.metric.label()),
            esc(&pct(s.largest.0)),
            esc(&s.largest.1),
            metric::fmt(s.mean_abs),
            s.points
        );
    }
    h.push_str("</tbody></table>\n");
    if !t.verdicts.is_empty() {
        h.push_str(
            "<table><thead><tr><th class=\"l\">target</th><th>points</th><th>missed</th>\
             <th class=\"l\">verdict</th></tr></thead><tbody>\n",
        );
        for v in &t.verdicts {
            let verdict = if v.points == 0 {
                "no point in this band with both figures".to_string()
            } else if v.misses.is_empty() {
                "met".to_string()
            } else {
                let list: Vec<String> = v
                    .misses
                    .iter()
                    .map(|(at, e)| format!("{} at {at}", pct(*e)))
                    .collect();
                let caveat = v.caveat.as_ref().map_or(String::new(), |c| {
                    format!(". Hypothesis written before the run: {c}")
                });
                format!("missed: {}{caveat}", list.join(", "))
            };
            let _ = writeln!(
                h,
                "<tr class=\"{}\"><td class=\"l\">{} within {}% {}</td><td>{}</td><td>{}</td><td class=\"l\">{}</td></tr>",
                if v.misses.is_empty() { "ok" } else { "failed" },
                esc(v.metric.label()),
                metric::fmt_tick(v.within_pct),
                esc(&match v.nstar {
                    None if !t.withheld.is_empty() => "at every scored point".to_string(),
                    band => band_phrase(band),
                }),
                v.points,
                v.misses.len(),
                esc(&verdict)
            );
        }
        h.push_str("</tbody></table>\n");
    }
    let loaded = t.rows.iter().any(|r| r.load.is_some());
    h.push_str("<div class=\"wide\"><table><thead><tr><th class=\"l\">point</th>");
    if loaded {
        h.push_str("<th>N/N*</th>");
    }
    for m in &t.metrics {
        let _ = write!(
            h,
            "<th>{}<br><small>measured / simulated ({}): error</small></th>",
            esc(m.label()),
            esc(m.unit())
        );
    }
    h.push_str("</tr></thead><tbody>\n");
    for r in &t.rows {
        let _ = write!(h, "<tr><td class=\"l\">{}</td>", esc(&r.label));
        if loaded {
            let _ = write!(
                h,
                "<td>{}</td>",
                r.load.map_or(String::new(), |x| format!("{x:.2}"))
            );
        }
        for m in &t.metrics {
            match r.cells.get(m) {
                Some(c) => {
                    let _ = write!(
                        h,
                        "<td>{} / {}: <strong>{}</strong>{}</td>",
                        metric::fmt(c.measured),
                        metric::fmt(c.simulated),
                        esc(&pct(c.error_pct)),
                        if c.floored { "&dagger;" } else { "" }
                    );
                }
                None => h.push_str("<td>&ndash;</td>"),
            }
        }
        h.push_str("</tr>\n");
    }
    h.push_str("</tbody></table></div>\n");
    h.push_str(&withheld_html(&t.withheld));
    h
}

/// The points not scored, grouped by reason.
fn withheld_html(withheld: &[(String, String)]) -> String {
    use crate::html::esc;
    use std::fmt::Write as _;
    if withheld.is_empty() {
        return String::new();
    }
    let mut by_reason: Vec<(&str, Vec<&str>)> = Vec::new();
    for (at, why) in withheld {
        match by_reason.iter_mut().find(|(w, _)| w == why) {
            Some((_, ats)) => ats.push(at),
            None => by_reason.push((why, vec![at])),
        }
    }
    let mut h = format!(
        "<p>Not scored and not drawn, where the model does not apply ({} point{}):</p>\n\
         <table><thead><tr><th class=\"l\">why</th><th class=\"l\">points</th></tr></thead><tbody>\n",
        withheld.len(),
        if withheld.len() == 1 { "" } else { "s" }
    );
    for (why, ats) in by_reason {
        let _ = writeln!(
            h,
            "<tr><td class=\"l\">{}</td><td class=\"l\">{}</td></tr>",
            esc(why),
            esc(&ats.join("; "))
        );
    }
    h.push_str("</tbody></table>\n");
    h
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::results::Stat;

    #[test]
    fn errors_are_relative_to_the_measurement_unless_it_is_near_zero() {
        // Predicted 105 against 100 measured is +5%, as `servelab predict` says it.
        let c = cell(100.0, 105.0, Some(200.0), 0.05);
        assert_eq!((c.error_pct, c.floored), (5.0, false));
        // 3 simulated against 0.1 requests/s measured, at a bound of 200:
        // against 10 requests/s.
        let c = cell(0.1, 3.0, Some(200.0), 0.05);
        assert!(c.floored);
        assert!((c.error_pct - 29.0).abs() < 1e-9, "{}", c.error_pct);
        // Times are never floored.
        let c = cell(1.0, 3.0, None, 0.05);
        assert_eq!((c.error_pct, c.floored), (200.0, false));
        assert_eq!(cell(0.0, 0.0, None, 0.05).error_pct, 0.0);
        assert!(cell(0.0, 1.0, None, 0.05).error_pct.is_infinite());
    }

    fn point(users: i64, measured: f64, simulated: f64) -> PointRecord {
        let m = |v: f64| BTreeMap::from([(Metric::Throughput, Stat::exact(v))]);
        PointRecord {
            index: 0,
            server: Some("event".into()),
            vars: vec![("users".into(), crate::experiment::Scalar::Int(users))],
            status: Status::Ok,
            reason: None,
            command: None,
            repeats: vec![],
            windows: vec![],
            stopped: None,
            checks: vec![],
            summary: m(measured),
            unmeasurable: BTreeMap::new(),
            predicted: m(simulated),
            exact: BTreeMap::from([
                (Metric::SaturationUsers, 100.0),
                (Metric::ThroughputMax, 200.0),
            ]),
            notes: vec![],
        }
    }

    fn spec(text: &str) -> AccuracySpec {
        toml::from_str(text).unwrap()
    }

    fn run(points: Vec<PointRecord>) -> RunResults {
        RunResults {
            schema: crate::store::results::SCHEMA.into(),
            experiment: "t".into(),
            source_file: "t".into(),
            source: String::new(),
            command: String::new(),
            quick: false,
            repeats: 1,
            protocol: None,
            started_utc: String::new(),
            duration_s: 0.0,
            machine: crate::store::machine::Machine::detect("0", None),
            placement: String::new(),
            interrupted: false,
            kernel: None,
            points,
        }
    }

    #[test]
    fn the_table_has_the_largest_and_mean_error_and_judges_each_band() {
        let results = run(vec![
            point(50, 100.0, 99.0),
            point(100, 200.0, 216.0),
            point(250, 200.0, 190.0),
        ]);
        let spec = spec(
            "metrics = [\"throughput\"]\n\
             [[target]]\nmetrics = [\"throughput\"]\nwithin_pct = 5\nnstar = [0.0, 0.8]\n\
             [[target]]\nmetrics = [\"throughput\"]\nwithin_pct = 10\nnstar = [0.8, 1.5]\n\
             [[target]]\nmetrics = [\"throughput\"]\nwithin_pct = 5\nnstar = [1.5, 1e9]\n",
        );
        let t = compute(
            &crate::report::applicability::tests::experiment(""),
            &spec,
            &results,
        );
        assert_eq!(t.rows.len(), 3);
        assert_eq!(t.rows[1].load, Some(1.0));
        let s = &t.summaries[0];
        assert_eq!(s.largest, (8.0, "event, users=100".to_string()));
        assert!((s.mean_abs - (1.0 + 8.0 + 5.0) / 3.0).abs() < 1e-9);
        let misses: Vec<usize> = t.verdicts.iter().map(|v| v.misses.len()).collect();
        assert_eq!(misses, [0, 0, 0], "5% exactly is within 5%");
        assert_eq!(
            sentence(&t).unwrap(),
            "The model holds: all 3 targets met over 3 points. Largest errors: throughput +8.00% (mean 4.67%)."
        );
        let mut results = results;
        results.points[2].predicted = BTreeMap::from([(Metric::Throughput, Stat::exact(150.0))]);
        let t = compute(
            &crate::report::applicability::tests::experiment(""),
            &spec,
            &results,
        );
        assert_eq!(
            sentence(&t).unwrap(),
            "The model does not hold everywhere: throughput missed 5% from 1.5 N* on at 1 of 1 points, worst -25.0% at event, users=250 (of 3 targets). Largest errors: throughput -25.0% (mean 11.3%)."
        );
    }

    /// Regression: `tls` scored one FCFS loop against thread, pool and prefork
    /// and at 24 points where the client was the bottleneck.
    #[test]
    fn points_where_the_model_does_not_apply_are_not_scored_and_say_why() {
        use crate::report::applicability::tests::{experiment, point};
        let exp = experiment(
            "[predict.applies]\nservers = [\"epoll\"]\nbecause = \"it is one FCFS loop\"\n",
        );
        let spec = spec("metrics = [\"throughput\"]\n");
        let mut results = run(vec![
            point("epoll", true),
            point("epoll", false),
            point("thread", true),
        ]);
        for p in &mut results.points {
            p.summary = p.predicted.clone();
        }
        let t = compute(&exp, &spec, &results);
        assert_eq!(t.rows.len(), 1, "only epoll with a free client is scored");
        assert_eq!(t.withheld.len(), 2);
        let html = html(&t);
        assert!(html.contains("client check failed"), "{html}");
        assert!(
            html.contains("the model describes epoll only: it is one FCFS loop"),
            "{html}"
        );
        assert!(
            sentence(&t)
                .unwrap()
                .ends_with("2 points were not scored, where the model does not apply.")
        );
    }

    #[test]
    fn bands_read_as_phrases() {
        assert_eq!(band_phrase(None), "at every point");
        assert_eq!(band_phrase(Some([0.0, 0.8])), "below 0.8 N*");
        assert_eq!(band_phrase(Some([0.8, 1.5])), "from 0.8 to 1.5 N*");
        assert_eq!(band_phrase(Some([1.5, 1e9])), "from 1.5 N* on");
    }
}
