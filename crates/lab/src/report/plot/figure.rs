//! A figure built from a run: its series, axes and the sentences it must say.

use std::collections::BTreeMap;

use super::filter::{Filter, filter_of, matches, substitute};
use super::style::Style;
use crate::experiment::{Axis, Experiment, PlotSpec, Scalar};
use crate::metric::Metric;
use crate::report::applicability;
use crate::store::results::{PointRecord, RunResults, Status};

/// One series of a plot: (x, mean, 95% interval low, high) sorted by x, and predictions.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Series {
    /// Legend label, without the "(measured)" that the legend adds.
    pub label: String,
    /// Measured (or simulated) points.
    pub points: Vec<(f64, f64, f64, f64)>,
    /// Simulator prediction (x, mean, lo, hi).
    pub predicted: Vec<(f64, f64, f64, f64)>,
    /// Exact model (x, value).
    pub exact: Vec<(f64, f64)>,
    /// The model's saturation population N*, when x is the number of users.
    pub saturation: Option<f64>,
}

/// Everything one figure shows: its series, its axes, and what it must say.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Figure {
    /// Title, drawn above the plot.
    pub title: String,
    /// x-axis label with its unit.
    pub x_label: String,
    /// y-axis label with its unit.
    pub y_label: String,
    /// Logarithmic x axis.
    pub log_x: bool,
    /// Logarithmic y axis.
    pub log_y: bool,
    /// The x axis is a category: grouped bars, with `x_names` naming the values.
    pub categorical: bool,
    /// The name of each x value, for categories (x, name), in axis order.
    pub x_names: Vec<(f64, String)>,
    /// Whether the figure's series are measured or simulated (legend suffix).
    pub simulated: bool,
    /// The series.
    pub series: Vec<Series>,
    /// The look of each series, when chosen by the caller (a comparison gives
    /// the two runs' versions of a series one colour); empty: [`Style::nth`].
    pub styles: Vec<Style>,
    /// When the run lacks the values the plot is for: the sentence naming the
    /// values wanted and the ones drawn instead, shown as a banner under the
    /// title (and in the report's caption), so that it cannot be missed.
    pub drawn_instead: Option<String>,
    /// Sentences drawn inside the figure, under the title.
    pub notes: Vec<String>,
    /// Why the figure has nothing to draw, when it has nothing.
    pub empty: Option<String>,
}

impl Figure {
    /// The look of the `i`th series.
    pub fn style(&self, i: usize) -> Style {
        self.styles.get(i).copied().unwrap_or_else(|| Style::nth(i))
    }

    /// What the x axis shows, for a caption: grouped bars of several series are
    /// grouped by server, one bar per value of the plot's x.
    pub fn x_caption(&self) -> String {
        if self.categorical && self.series.len() > 1 {
            format!("server, one bar per {}", self.x_label)
        } else {
            self.x_label.clone()
        }
    }

    /// The number of data marks (points and bars) the figure draws.
    pub fn marks(&self) -> usize {
        if self.empty.is_some() {
            return 0;
        }
        self.series
            .iter()
            .map(|s| s.points.len() + s.predicted.len() + s.exact.len())
            .sum()
    }

    /// The runs of series `i`'s points that a line may join, in x order.
    ///
    /// A line claims the curve between two measured points. It is drawn only
    /// where the axis was sampled densely enough for that: two neighbours are
    /// left unjoined when another series of the figure was measured at an x
    /// between them (this series skipped ground the figure tested: handlers
    /// drew 4 workers from 24.6 at 1 user to 99.2 at 32, reading about 60 at 8
    /// users where the value was about 99), or when they are more than
    /// `WIDEST_JOIN` of the axis apart (overload drew a straight line from
    /// 177 at 130 users to 0 at 360). A series of fewer than 3 points is not
    /// joined at all.
    pub fn joined_runs(&self, i: usize) -> Vec<Vec<(f64, f64)>> {
        let Some(s) = self.series.get(i) else {
            return Vec::new();
        };
        if s.points.len() < 3 {
            return Vec::new();
        }
        let pts: Vec<(f64, f64)> = s.points.iter().map(|p| (p.0, p.1)).collect();
        let mut runs = self.runs(&pts, |p| p.0);
        runs.retain(|r| r.len() >= 2);
        runs
    }

    /// `points` in x order, cut into runs wherever [`Figure::joined_runs`]'s
    /// rule leaves two neighbours unjoined; a lone point is a run of one. The
    /// same rule holds for the simulator's and the exact model's points, which
    /// were computed only there too.
    pub fn runs<T: Copy>(&self, points: &[T], x: impl Fn(&T) -> f64) -> Vec<Vec<T>> {
        let t = |x: f64| if self.log_x { x.max(1e-12).log10() } else { x };
        let all: Vec<f64> = self
            .series
            .iter()
            .flat_map(|s| s.points.iter().map(|p| p.0))
            .collect();
        let (lo, hi) = all
            .iter()
            .chain(points.iter().map(&x).collect::<Vec<_>>().iter())
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &v| {
                (a.min(t(v)), b.max(t(v)))
            });
        let span = (hi - lo).max(f64::MIN_POSITIVE);
        let mut pts: Vec<T> = points.to_vec();
        pts.sort_by(|a, b| x(a).total_cmp(&x(b)));
        let mut runs: Vec<Vec<T>> = Vec::new();
        for (k, p) in pts.iter().enumerate() {
            let joined = k > 0 && {
                let (a, b) = (x(&pts[k - 1]), x(p));
                let skipped = all.iter().any(|&v| v > a && v < b);
                let wide = (t(b) - t(a)) / span > WIDEST_JOIN;
                !(skipped || wide)
            };
            if joined {
                runs.last_mut()
                    .expect("a run before a joined point")
                    .push(*p);
            } else {
                runs.push(vec![*p]);
            }
        }
        runs
    }

    /// Whether some neighbouring points of a series of 3 or more are left
    /// unjoined by [`Figure::joined_runs`].
    fn has_unjoined_gaps(&self) -> bool {
        (0..self.series.len()).any(|i| {
            let n = self.series[i].points.len();
            n >= 3
                && self
                    .joined_runs(i)
                    .iter()
                    .map(|r| r.len() - 1)
                    .sum::<usize>()
                    < n - 1
        })
    }
}

/// Widest gap between neighbouring points that a line joins, as a share of the
/// x axis' span (of its logarithm on a log axis).
pub const WIDEST_JOIN: f64 = 0.4;

/// Whether an experiment's axis is a category rather than a continuum: at most
/// two values in the full sweep (a case and its alternative, such as keep-alive
/// or not), or values that are not numbers.
fn is_category(exp: &Experiment, axis: &str) -> bool {
    exp.axis(axis).is_some_and(|a| {
        let values = a.values.get_ref();
        values.len() <= 2 || values.iter().any(|v| v.as_f64().is_none())
    })
}

/// The x value of a record: the number, or for a text value its place on the axis.
fn x_of(exp: &Experiment, axis: &str, v: &Scalar) -> Option<f64> {
    v.as_f64().or_else(|| {
        exp.axis(axis)
            .and_then(|a| a.values.get_ref().iter().position(|w| w == v))
            .map(|i| i as f64)
    })
}

/// Builds the series of a plot from a run, with the filter given.
fn series_with(
    plot: &PlotSpec,
    exp: &Experiment,
    results: &RunResults,
    filter: &Filter,
) -> Vec<Series> {
    let x_axis = plot.x.get_ref();
    let div = exp
        .axis(x_axis)
        .and_then(|a| a.display_divisor)
        .unwrap_or(1.0);
    let metric = *plot.y.get_ref();
    let key = |r: &PointRecord| {
        let mut parts: Vec<String> = r.server.iter().cloned().collect();
        for (n, v) in &r.vars {
            if n != x_axis && !filter.iter().any(|(k, w)| k == n && w.len() == 1) {
                parts.push(match exp.axis(n) {
                    Some(a) => format!("{} = {v}{}", a.label, unit_after(a)),
                    None => format!("{n} = {v}"),
                });
            }
        }
        if parts.is_empty() {
            metric.name().to_string()
        } else {
            parts.join(", ")
        }
    };
    let relative = plot.relative_to.as_ref().map(|r| r.get_ref().as_str());
    let mut by_key: BTreeMap<(usize, String), Series> = BTreeMap::new();
    for r in results
        .points
        .iter()
        .filter(|r| r.status == Status::Ok && matches(r, filter))
    {
        let Some(x) = r.var(x_axis).and_then(|v| x_of(exp, x_axis, v)) else {
            continue;
        };
        let Some(s) = r.summary.get(&metric) else {
            continue;
        };
        let mut scale = 1.0;
        if let Some(server) = relative.filter(|s| *s != "first") {
            // The reference server at the same axis values.
            let Some(base) = results
                .points
                .iter()
                .find(|b| {
                    b.status == Status::Ok
                        && b.server.as_deref() == Some(server)
                        && b.vars == r.vars
                })
                .and_then(|b| b.summary.get(&metric))
            else {
                continue;
            };
            if base.mean <= 0.0 {
                continue;
            }
            scale = 1.0 / base.mean;
        }
        let k = key(r);
        // Series keep the order in which their first point appears in the run.
        let order = by_key
            .keys()
            .find(|(_, n)| *n == k)
            .map_or(by_key.len(), |(o, _)| *o);
        let e = by_key.entry((order, k.clone())).or_insert_with(|| Series {
            label: k,
            ..Series::default()
        });
        let x = x / div;
        // The mean and its 95% interval (the protocol's; never min..max).
        e.points
            .push((x, s.mean * scale, s.ci95_lo * scale, s.ci95_hi * scale));
        // A prediction is drawn only where its model applies (the accuracy
        // table scores the same points).
        if relative.is_none()
            && plot.predicted != Some(false)
            && applicability::why_not(exp, r).is_none()
        {
            if let Some(p) = r.predicted.get(&metric) {
                e.predicted.push((x, p.mean, p.ci95_lo, p.ci95_hi));
            }
            if let Some(v) = r.exact.get(&metric) {
                e.exact.push((x, *v));
            }
            if x_axis == "users" {
                e.saturation = r.exact.get(&Metric::SaturationUsers).copied();
            }
        }
    }
    let mut out: Vec<Series> = by_key.into_values().collect();
    for s in &mut out {
        s.points.sort_by(|a, b| a.0.total_cmp(&b.0));
        s.predicted.sort_by(|a, b| a.0.total_cmp(&b.0));
        s.exact.sort_by(|a, b| a.0.total_cmp(&b.0));
        if relative == Some("first")
            && let Some(&(_, base, _, _)) = s.points.first()
            && base > 0.0
        {
            for p in &mut s.points {
                *p = (p.0, p.1 / base, p.2 / base, p.3 / base);
            }
        }
    }
    out
}

/// Builds the series of a plot from a run, with the plot's own filter.
pub fn series(plot: &PlotSpec, exp: &Experiment, results: &RunResults) -> Vec<Series> {
    series_with(plot, exp, results, &filter_of(plot))
}

/// Builds the figure of a plot from a run.
pub fn figure(plot: &PlotSpec, exp: &Experiment, results: &RunResults) -> Figure {
    let x_axis = plot.x.get_ref();
    let metric = *plot.y.get_ref();
    let wanted = filter_of(plot);
    let (filter, substituted) = substitute(&wanted, results);
    let series = series_with(plot, exp, results, &filter);
    let categorical = is_category(exp, x_axis);
    let div = exp
        .axis(x_axis)
        .and_then(|a| a.display_divisor)
        .unwrap_or(1.0);
    let x_names = exp.axis(x_axis).map_or_else(Vec::new, |a| {
        a.values
            .get_ref()
            .iter()
            .filter_map(|v| Some((x_of(exp, x_axis, v)? / div, v.to_string())))
            .collect()
    });
    // A series drawn at a substituted value says that value in its legend too.
    let mut series = series;
    if let Some(sub) = &substituted {
        let at: Vec<String> = sub
            .drawn
            .iter()
            .map(|(n, v)| match exp.axis(n) {
                Some(a) => format!("{} = {v}{}", a.label, unit_after(a)),
                None => format!("{n} = {v}"),
            })
            .collect();
        for s in &mut series {
            s.label = format!("{}, {}", s.label, at.join(", "));
        }
    }
    let mut fig = Figure {
        title: plot.title.clone(),
        x_label: x_label(plot, exp),
        y_label: y_label(plot),
        log_x: exp.axis(x_axis).is_some_and(|a| a.log) && !categorical,
        log_y: plot.log_y,
        categorical,
        x_names,
        simulated: exp.is_simulated(),
        series,
        styles: Vec::new(),
        drawn_instead: substituted.as_ref().map(|s| s.note.clone()),
        notes: Vec::new(),
        empty: None,
    };
    let here: Vec<&PointRecord> = results
        .points
        .iter()
        .filter(|r| matches(r, &filter))
        .collect();
    // Servers with no figure on this plot, and other points without figures.
    let drawn = |server: &str| {
        here.iter()
            .any(|r| r.status == Status::Ok && r.server.as_deref() == Some(server))
    };
    let mut absent: BTreeMap<&'static str, Vec<&str>> = BTreeMap::new();
    let mut missing: BTreeMap<&'static str, usize> = BTreeMap::new();
    for r in here.iter().filter(|r| r.status != Status::Ok) {
        match r.server.as_deref() {
            Some(s) if !drawn(s) => {
                let names = absent.entry(r.status.as_str()).or_default();
                if !names.contains(&s) {
                    names.push(s);
                }
            }
            _ => *missing.entry(r.status.as_str()).or_default() += 1,
        }
    }
    let mut parts: Vec<String> = absent
        .iter()
        .map(|(status, names)| format!("{} ({status} here)", names.join(", ")))
        .collect();
    parts.extend(
        missing
            .iter()
            .map(|(status, n)| format!("{n} {status} point{}", if *n == 1 { "" } else { "s" })),
    );
    let label = metric.label();
    // Points that ran but could not measure this metric (too short for the
    // clock that measures it, say): never drawn as 0, and the reason the run
    // recorded is named.
    let unmeasurable: Vec<(String, &String)> = here
        .iter()
        .filter(|r| r.status == Status::Ok && !r.summary.contains_key(&metric))
        .filter_map(|r| Some((r.label(), r.unmeasurable.get(&metric)?)))
        .collect();
    let unmeasured = here
        .iter()
        .filter(|r| {
            r.status == Status::Ok
                && !r.summary.contains_key(&metric)
                && !r.unmeasurable.contains_key(&metric)
        })
        .count();
    if let Some((point, why)) = unmeasurable.first() {
        let n = unmeasurable.len();
        let others: Vec<&str> = unmeasurable[1..].iter().map(|(p, _)| p.as_str()).collect();
        parts.push(format!(
            "{n} point{} where {label} is unmeasurable ({point}: {why}{})",
            if n == 1 { "" } else { "s" },
            match others.len() {
                0 => String::new(),
                1..=3 => format!("; alike at {}", others.join("; ")),
                k => format!("; alike at {} and {} more", others[..2].join("; "), k - 2),
            }
        ));
    }
    if unmeasured > 0 {
        parts.push(format!(
            "{unmeasured} point{} with no measured {label}",
            if unmeasured == 1 { "" } else { "s" }
        ));
    }
    if !parts.is_empty() {
        fig.notes.push(format!(
            "Not drawn: {}; see the table of figures.",
            parts.join("; ")
        ));
    }
    // Points drawn although a validity check failed: flagged, never dropped.
    let flagged: Vec<String> = here
        .iter()
        .filter(|r| r.status == Status::Ok && r.summary.contains_key(&metric))
        .filter_map(|r| {
            let failed: Vec<&str> = r
                .checks
                .iter()
                .filter(|c| !c.passed && c.kind != crate::check::CheckKind::Window)
                .map(|c| c.kind.label())
                .collect();
            (!failed.is_empty()).then(|| format!("{} ({})", r.label(), failed.join(", ")))
        })
        .collect();
    if !flagged.is_empty() {
        let n = flagged.len();
        let shown = if n > 4 {
            format!("{} and {} more", flagged[..4].join("; "), n - 4)
        } else {
            flagged.join("; ")
        };
        fig.notes.push(format!(
            "⚑ {n} drawn point{} failed a validity check: {shown}; see the table of figures.",
            if n == 1 { "" } else { "s" }
        ));
    }
    if fig.series.is_empty() {
        let ok = here.iter().filter(|r| r.status == Status::Ok).count();
        fig.empty = Some(if here.is_empty() {
            let want: Vec<String> = wanted
                .iter()
                .map(|(a, v)| format!("{a} = {}", v.join(" or ")))
                .collect();
            let has: Vec<String> = wanted
                .iter()
                .map(|(a, _)| {
                    let mut values: Vec<String> = Vec::new();
                    for v in results.points.iter().filter_map(|r| r.var(a)) {
                        let v = v.to_string();
                        if !values.contains(&v) {
                            values.push(v);
                        }
                    }
                    format!("{a} = {}", values.join(", "))
                })
                .collect();
            let ok_all = results
                .points
                .iter()
                .filter(|r| r.status == Status::Ok)
                .count();
            format!(
                "No point of this run has {}, which this plot is for (it has {}){}.",
                want.join(" and "),
                has.join("; "),
                if ok_all == 0 {
                    format!(
                        ", and none of its {} points produced figures",
                        results.points.len()
                    )
                } else {
                    String::new()
                }
            )
        } else if ok == 0 {
            format!(
                "None of the {} points this plot needs produced figures; the table of figures says why.",
                here.len()
            )
        } else if let Some((_, why)) = unmeasurable.first().filter(|_| unmeasured == 0) {
            format!(
                "At every point of this plot, {label} is unmeasurable, so nothing is drawn (never 0): {why}."
            )
        } else {
            format!("No point of this run has a measured {label}; the table of figures says why.")
        });
        fig.notes.retain(|n| !n.starts_with("Not drawn"));
    } else if !categorical && fig.series.iter().any(|s| s.points.len() < 3) {
        let values = fig.series.iter().map(|s| s.points.len()).max().unwrap_or(0);
        fig.notes.push(if values < 3 {
            format!(
                "Only {values} value{} of {} with figures in this run: points are not joined, since a straight line between them could hide a knee in the curve.",
                if values == 1 { "" } else { "s" },
                fig.x_label
            )
        } else {
            "Series with fewer than 3 points are drawn as points only, not joined by a line.".into()
        });
    }
    let withheld = if plot.predicted == Some(false) || plot.relative_to.is_some() {
        0
    } else {
        here.iter()
            .filter(|r| r.status == Status::Ok && r.predicted.contains_key(&metric))
            .filter(|r| applicability::why_not(exp, r).is_some())
            .count()
    };
    if withheld > 0 && fig.empty.is_none() {
        fig.notes.push(format!(
            "No prediction is drawn at {withheld} point{}, where the model does not apply \
             (the table of figures says why).",
            if withheld == 1 { "" } else { "s" }
        ));
    }
    if !categorical && fig.empty.is_none() && fig.has_unjoined_gaps() {
        fig.notes.push(format!(
            "Neighbouring points are not joined where another series was measured between them, \
             or where they are more than {:.0}% of the axis apart: the curve there was not measured.",
            WIDEST_JOIN * 100.0
        ));
    }
    fig
}

/// The y-axis label of a plot.
pub fn y_label(plot: &PlotSpec) -> String {
    match plot.relative_to.as_ref().map(|r| r.get_ref().as_str()) {
        Some("first") => format!(
            "{} relative to the first point (x)",
            plot.y.get_ref().label()
        ),
        Some(server) => format!("{} relative to {server} (x)", plot.y.get_ref().label()),
        None => plot.y.get_ref().axis_label(),
    }
}

/// Whether an axis' unit only repeats its label ("client users", unit "users").
fn unit_repeats_label(a: &Axis) -> bool {
    a.unit.as_deref().is_none_or(|u| {
        // The unit as the label's last word, singular or plural ("1 user").
        let last = a.label.rsplit(' ').next().unwrap_or("");
        let u = u.trim();
        last == u || last.trim_end_matches('s') == u.trim_end_matches('s') && u.len() > 2
    })
}

/// The unit written after a value of an axis (" s"), or nothing when the unit
/// only repeats the label or is missing.
fn unit_after(a: &Axis) -> String {
    match &a.unit {
        Some(u) if !unit_repeats_label(a) && !u.contains(';') => format!(" {u}"),
        _ => String::new(),
    }
}

/// The x-axis label of a plot: the axis' label, and its unit in parentheses
/// unless the label already says it ("client users", not "client users (users)").
pub fn x_label(plot: &PlotSpec, exp: &Experiment) -> String {
    match exp.axis(plot.x.get_ref()) {
        Some(a) => match &a.unit {
            Some(u) if !unit_repeats_label(a) => format!("{} ({u})", a.label),
            _ => a.label.clone(),
        },
        None => plot.x.get_ref().clone(),
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::store::results::Stat;

    pub(crate) const EXP: &str = r#"
name = "t"
title = "T"
question = "Q?"
[[axis]]
name = "workers"
label = "server workers"
values = [1, 2, 4, 8, 16]
quick = [1, 4]
log = true
[[axis]]
name = "users"
label = "client users"
unit = "users"
values = [1, 8, 32]
quick = [1, 8]
log = true
[[server]]
label = "pool"
engine = "pool"
[[server]]
label = "nginx"
peer = "nginx"
[load]
users = "{users}"
path = "/"
duration = "1s"
[[plot]]
title = "Throughput (32 users)"
x = "workers"
y = "throughput"
where = { users = 32 }
[[plot]]
title = "Throughput"
x = "users"
y = "throughput"
"#;

    /// A quick run of `EXP`: pool measured at every point, nginx unavailable.
    pub(crate) fn quick_run(exp: &Experiment) -> RunResults {
        let mut points = Vec::new();
        let plan = exp
            .plan(
                &crate::experiment::PlanOptions::sweep(true),
                std::path::Path::new("/tmp/servelab-lab"),
            )
            .unwrap();
        for p in &plan.points {
            let server = p.server_label().unwrap().to_string();
            let ok = server == "pool";
            let mut summary = BTreeMap::new();
            if ok {
                let w = p.var("workers").unwrap().as_f64().unwrap();
                let u = p.var("users").unwrap().as_f64().unwrap();
                summary.insert(Metric::Throughput, Stat::exact(25.0 * w.min(u)));
            }
            points.push(PointRecord {
                index: p.index,
                server: Some(server),
                vars: p.vars.clone(),
                status: if ok { Status::Ok } else { Status::Unavailable },
                reason: (!ok).then(|| "nginx is not installed".into()),
                command: None,
                repeats: Vec::new(),
                windows: Vec::new(),
                stopped: None,
                checks: Vec::new(),
                summary,
                unmeasurable: BTreeMap::new(),
                predicted: BTreeMap::new(),
                exact: BTreeMap::new(),
                notes: Vec::new(),
            });
        }
        RunResults {
            schema: crate::store::results::SCHEMA.into(),
            experiment: "t".into(),
            source_file: "t.toml".into(),
            source: EXP.into(),
            command: String::new(),
            quick: true,
            repeats: 1,
            protocol: None,
            started_utc: String::new(),
            duration_s: 0.0,
            machine: crate::store::machine::Machine {
                cpu_model: String::new(),
                cores: 1,
                kernel: String::new(),
                version: String::new(),
                git_commit: String::new(),
            },
            placement: String::new(),
            interrupted: false,
            kernel: None,
            points,
        }
    }

    /// Regression: lines drawn across ground no point of the series tested.
    /// The rule of `crate::report::applicability` holds in figures too: `tls` drew one
    /// FCFS loop's prediction beside thread, pool and prefork.
    #[test]
    fn a_prediction_is_drawn_only_where_its_model_applies() {
        use crate::report::applicability::tests::{experiment, point};
        let exp = experiment(
            "[predict.applies]\nservers = [\"epoll\"]\nbecause = \"it is one FCFS loop\"\n",
        );
        let plot: PlotSpec =
            toml::from_str("title = \"X\"\nx = \"users\"\ny = \"throughput\"\n").unwrap();
        let mut points = Vec::new();
        for server in ["epoll", "thread"] {
            for users in [1, 2, 4] {
                let mut p = point(server, true);
                p.vars = vec![("users".into(), Scalar::Int(users))];
                p.summary = p.predicted.clone();
                points.push(p);
            }
        }
        let results = RunResults {
            points,
            ..quick_run(&toml::from_str(EXP).unwrap())
        };
        let fig = figure(&plot, &exp, &results);
        let by = |l: &str| fig.series.iter().find(|s| s.label == l).unwrap();
        assert_eq!(by("epoll").predicted.len(), 3);
        assert!(by("thread").predicted.is_empty());
        assert_eq!(by("thread").points.len(), 3, "the measurement is drawn");
        assert!(
            fig.notes
                .iter()
                .any(|n| n.starts_with("No prediction is drawn at 3 points")),
            "{:?}",
            fig.notes
        );
    }

    #[test]
    fn lines_join_only_neighbours_with_no_tested_ground_between_them() {
        let series = |label: &str, xs: &[f64]| Series {
            label: label.into(),
            points: xs.iter().map(|&x| (x, x, x, x)).collect(),
            ..Series::default()
        };
        // handlers: 4 workers measured at 1, 4 and 32 users, 1 worker also at
        // 8 and 16: the 4-worker line may not cross 8 and 16.
        let fig = Figure {
            log_x: true,
            series: vec![
                series("4 workers", &[1.0, 2.0, 4.0, 32.0]),
                series("1 worker", &[1.0, 2.0, 4.0, 8.0, 16.0, 32.0]),
            ],
            ..Figure::default()
        };
        assert_eq!(
            fig.joined_runs(0),
            vec![vec![(1.0, 1.0), (2.0, 2.0), (4.0, 4.0)]]
        );
        assert_eq!(fig.joined_runs(1).len(), 1);
        assert_eq!(fig.joined_runs(1)[0].len(), 6);
        assert!(fig.has_unjoined_gaps());
        // overload: 40, 130, 360 users on a linear axis: 230 of a 320 span is
        // too wide to draw as a line.
        let fig = Figure {
            series: vec![series("finish", &[40.0, 130.0, 360.0])],
            ..Figure::default()
        };
        assert_eq!(fig.joined_runs(0), vec![vec![(40.0, 40.0), (130.0, 130.0)]]);
        // Evenly and densely sampled: one run, nothing said.
        let fig = Figure {
            series: vec![series("a", &[1.0, 2.0, 3.0, 4.0, 5.0])],
            ..Figure::default()
        };
        assert_eq!(fig.joined_runs(0).len(), 1);
        assert!(!fig.has_unjoined_gaps());
        // Two points are never joined.
        let fig = Figure {
            series: vec![series("a", &[1.0, 2.0])],
            ..Figure::default()
        };
        assert!(fig.joined_runs(0).is_empty());
    }

    #[test]
    fn a_filter_the_run_lacks_is_drawn_at_the_nearest_value_and_said() {
        let exp = Experiment::parse(EXP, "t.toml").unwrap();
        let run = quick_run(&exp);
        let fig = figure(&exp.plots[0], &exp, &run);
        assert!(fig.empty.is_none(), "{:?}", fig.empty);
        assert_eq!(fig.series.len(), 1);
        // The banner names the value wanted, the values the run has, and the
        // value drawn; the legend names the value drawn too.
        let banner = fig.drawn_instead.clone().unwrap();
        assert_eq!(
            banner,
            "Not at users = 32: this run has no point there (it has users = 1, 8), \
             so this figure is drawn at users = 8."
        );
        assert_eq!(fig.series[0].label, "pool, client users = 8");
        let all = fig.notes.join(" ");
        assert!(all.contains("nginx (unavailable here)"), "{all}");
        assert!(all.contains("points are not joined"), "{all}");
        let svg = fig.svg().unwrap();
        for inside in ["drawn at users = 8.", "pool, client users = 8 (measured)"] {
            assert!(svg.contains(inside), "not inside the SVG: {inside}");
        }
        // A plot whose filter the run has is drawn as asked, with no banner.
        let full = figure(&exp.plots[1], &exp, &run);
        assert!(full.drawn_instead.is_none());
    }

    #[test]
    fn a_figure_with_no_data_says_why_in_words() {
        let exp = Experiment::parse(EXP, "t.toml").unwrap();
        let mut run = quick_run(&exp);
        for p in &mut run.points {
            p.status = Status::Failed;
        }
        let fig = figure(&exp.plots[1], &exp, &run);
        let why = fig.empty.clone().unwrap();
        assert!(why.contains("produced figures"), "{why}");
        assert_eq!(fig.marks(), 0);
        assert!(fig.svg().unwrap().contains("produced figures"));
        // A filter on a value the sweep lacks, in a run where nothing worked.
        let why = figure(&exp.plots[0], &exp, &run).empty.unwrap();
        assert!(why.contains("No point of this run has users = 32"), "{why}");
        assert!(
            why.contains("it has users = 1, 8") && why.contains("none of its 8 points"),
            "{why}"
        );
    }

    #[test]
    fn points_without_figures_are_counted_in_the_figure() {
        let exp = Experiment::parse(EXP, "t.toml").unwrap();
        let mut run = quick_run(&exp);
        let p = run
            .points
            .iter_mut()
            .find(|p| {
                p.server.as_deref() == Some("pool") && p.var("users").unwrap().to_string() == "8"
            })
            .unwrap();
        p.status = Status::Failed;
        let fig = figure(&exp.plots[1], &exp, &run);
        let all = fig.notes.join(" ");
        assert!(
            all.contains("nginx (unavailable here); 1 failed point"),
            "{all}"
        );
        assert!(
            all.contains("Only 2 values of client users with figures"),
            "{all}"
        );
    }

    #[test]
    fn a_metric_a_point_could_not_measure_is_said_not_drawn_as_zero() {
        let exp = Experiment::parse(EXP, "t.toml").unwrap();
        let mut run = quick_run(&exp);
        run.points[0].summary.clear();
        let fig = figure(&exp.plots[1], &exp, &run);
        let all = fig.notes.join(" ");
        assert!(all.contains("1 point with no measured throughput"), "{all}");
        assert!(
            fig.series
                .iter()
                .all(|s| s.points.iter().all(|p| p.1 > 0.0))
        );
    }

    #[test]
    fn an_unmeasurable_metric_is_named_with_its_reason_never_drawn() {
        let exp = Experiment::parse(EXP, "t.toml").unwrap();
        let mut run = quick_run(&exp);
        let why = "repeat 1: server CPU was 1 tick of 10 ms over 400 requests";
        let ok: Vec<usize> = (0..run.points.len())
            .filter(|i| run.points[*i].status == Status::Ok)
            .collect();
        run.points[ok[0]].summary.clear();
        run.points[ok[0]]
            .unmeasurable
            .insert(Metric::Throughput, why.into());
        let fig = figure(&exp.plots[1], &exp, &run);
        let all = fig.notes.join(" ");
        assert!(
            all.contains(&format!(
                "1 point where throughput is unmeasurable ({}: {why})",
                run.points[ok[0]].label()
            )),
            "{all}"
        );
        assert_eq!(fig.marks(), ok.len() - 1);
        // Unmeasurable everywhere: the figure says so instead of drawing.
        for &i in &ok {
            run.points[i].summary.clear();
            run.points[i]
                .unmeasurable
                .insert(Metric::Throughput, why.into());
        }
        let fig = figure(&exp.plots[1], &exp, &run);
        let empty = fig.empty.clone().unwrap();
        assert!(
            empty.contains("throughput is unmeasurable") && empty.contains(why),
            "{empty}"
        );
        assert_eq!(fig.marks(), 0);
        assert!(fig.svg().unwrap().contains("unmeasurable"));
    }

    #[test]
    fn a_unit_is_written_once() {
        let exp = Experiment::parse(EXP, "t.toml").unwrap();
        let run = quick_run(&exp);
        // "client users (users)" reads twice; "server workers" has no unit.
        assert_eq!(x_label(&exp.plots[1], &exp), "client users");
        let fig = figure(&exp.plots[1], &exp, &run);
        assert_eq!(fig.series[0].label, "pool, server workers = 1");
        let exp =
            Experiment::parse(&EXP.replace("unit = \"users\"", "unit = \"s\""), "t.toml").unwrap();
        assert_eq!(x_label(&exp.plots[1], &exp), "client users (s)");
    }

    #[test]
    fn an_axis_of_two_values_is_a_category() {
        let exp = Experiment::parse(
            &EXP.replace("values = [1, 8, 32]", "values = [1, 8]"),
            "t.toml",
        )
        .unwrap();
        let run = quick_run(&exp);
        let fig = figure(&exp.plots[1], &exp, &run);
        assert!(fig.categorical && !fig.log_x);
        assert_eq!(fig.x_names.len(), 2);
        let svg = fig.svg().unwrap();
        assert!(
            svg.contains("client users = 8 (measured)"),
            "bars name the x value"
        );
        assert!(!svg.contains("n/a"));
        // A bar with no figure is marked where it would stand, never drawn as 0.
        let mut run = run;
        let p = run
            .points
            .iter_mut()
            .find(|p| p.status == Status::Ok && p.var("users").unwrap().to_string() == "8")
            .unwrap();
        p.summary.clear();
        let svg = figure(&exp.plots[1], &exp, &run).svg().unwrap();
        assert!(svg.contains("n/a"), "a missing bar is marked");
    }
}
