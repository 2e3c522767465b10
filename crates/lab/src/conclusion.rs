//! The report's one-sentence conclusion, computed from the data rather than
//! written in advance: the experiment file says what to compare (`[conclusion]`),
//! the numbers decide what the sentence says.
//!
//! A sentence is put together from typed parts, so that it reads as English
//! whatever the experiment: an axis value becomes a phrase ("8 client users",
//! "a file size of 1000 KB"), a figure is a number with its metric's unit
//! written once ("300 against 100 requests/s"), and every comparison says which
//! side is better (the metric knows its direction), by how much (a factor), and
//! whether the difference is larger than the noise (whether the ranges over
//! repeats, or the simulator's 95% intervals, overlap).

use crate::experiment::{Axis, ConclusionKind, ConclusionSpec, Experiment, Scalar};
use crate::metric::{self, Better, Metric};
use crate::results::{PointRecord, RunResults, Stat, Status};

/// The conclusion of a run (a sentence; never empty).
pub fn conclude(exp: &Experiment, results: &RunResults) -> String {
    let Some(c) = &exp.conclusion else {
        return default_sentence(results);
    };
    let ctx = Ctx {
        exp,
        results,
        spec: c,
        metric: *c.metric.get_ref(),
        simulated: results.points.iter().all(|p| p.server.is_none()),
    };
    let sentence = match c.kind.get_ref() {
        ConclusionKind::Ratio => ratio(&ctx),
        ConclusionKind::Best => best(&ctx),
        ConclusionKind::Scaling => scaling(&ctx),
        ConclusionKind::Model => model(&ctx),
    };
    sentence.unwrap_or_else(|| {
        let failed = results
            .points
            .iter()
            .filter(|p| p.status != Status::Ok)
            .count();
        format!(
            "Not enough points produced figures to conclude ({failed} of {} points did not).",
            results.points.len()
        )
    })
}

fn default_sentence(results: &RunResults) -> String {
    let ok = results
        .points
        .iter()
        .filter(|p| p.status == Status::Ok)
        .count();
    format!(
        "{ok} of {} points produced figures; see the plots.",
        results.points.len()
    )
}

/// What every kind of sentence reads.
struct Ctx<'a> {
    exp: &'a Experiment,
    results: &'a RunResults,
    spec: &'a ConclusionSpec,
    metric: Metric,
    simulated: bool,
}

impl Ctx<'_> {
    fn ok(&self) -> impl Iterator<Item = &PointRecord> {
        self.results
            .points
            .iter()
            .filter(|p| p.status == Status::Ok)
    }

    fn stat(&self, p: &PointRecord) -> Option<Stat> {
        p.summary.get(&self.metric).copied()
    }

    /// "At 8 client users, " for the points compared (empty when none is fixed).
    fn at_phrase(&self, at: &[(String, String)]) -> String {
        if at.is_empty() {
            return String::new();
        }
        let parts: Vec<String> = at
            .iter()
            .map(|(n, v)| match self.exp.axis(n) {
                Some(a) => axis_phrase(a, v),
                None => format!("{n} {v}"),
            })
            .collect();
        format!("At {}, ", join(&parts))
    }

    /// How two figures' difference compares with the noise.
    fn noise(&self, a: Stat, b: Stat) -> Noise {
        if !self.simulated && self.results.repeats < 2 {
            return Noise::Unknown;
        }
        if a.min <= b.max && b.min <= a.max {
            Noise::Within
        } else {
            Noise::Larger
        }
    }

    /// The clause that says so.
    fn noise_clause(&self, noise: Noise) -> String {
        let n = self.results.repeats;
        match (noise, self.simulated) {
            (Noise::Larger, false) => {
                format!("larger than the noise (the ranges of {n} repeats do not overlap)")
            }
            (Noise::Within, false) => {
                format!("within the noise (the ranges of {n} repeats overlap)")
            }
            (Noise::Unknown, _) => {
                "of unknown weight against the noise (one repeat, so no spread)".into()
            }
            (Noise::Larger, true) => {
                "larger than the noise (the 95% intervals do not overlap)".into()
            }
            (Noise::Within, true) => "within the noise (the 95% intervals overlap)".into(),
        }
    }

    /// A sentence tail comparing two named figures: which is better, by what
    /// factor, and against the noise.
    fn compare(&self, (an, a): (&str, Stat), (bn, b): (&str, Stat)) -> String {
        let m = self.metric;
        // Order so that the first is the better (or, without a direction, higher).
        let a_first = match m.better() {
            Better::Lower => a.median <= b.median,
            Better::Higher | Better::Neither => a.median >= b.median,
        };
        let ((first, f), (second, s)) = if a_first {
            ((an, a), (bn, b))
        } else {
            ((bn, b), (an, a))
        };
        let figures = format!(
            "{} against {} {}",
            metric::fmt(f.median),
            metric::fmt(s.median),
            m.unit()
        );
        let noise = self.noise_clause(self.noise(f, s));
        if f.median == s.median {
            return format!(
                "{first} and {second} had the same {} ({figures}), a difference {noise}",
                m.label()
            );
        }
        let factor = factor(f.median, s.median);
        match m.better() {
            Better::Higher | Better::Lower => format!(
                "{first} was better: its {} was {factor} that of {second} ({figures}), a difference {noise}",
                m.label()
            ),
            Better::Neither => format!(
                "{first} had the higher {}: {factor} that of {second} ({figures}), a difference {noise}",
                m.label()
            ),
        }
    }
}

/// Whether a difference stands out from the spread of its figures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Noise {
    /// The ranges (or intervals) are disjoint.
    Larger,
    /// They overlap.
    Within,
    /// One repeat: no spread to compare with.
    Unknown,
}

/// "3.00x" (a over b).
fn factor(a: f64, b: f64) -> String {
    if b == 0.0 {
        return "infinitely many times".into();
    }
    format!("{}x", metric::fmt(a / b))
}

/// "a, b and c".
fn join(parts: &[String]) -> String {
    match parts {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}

/// "a" or "an" before `word`.
fn article(word: &str) -> &'static str {
    if word.starts_with(['a', 'e', 'i', 'o', 'u']) {
        "an"
    } else {
        "a"
    }
}

/// An axis value as a phrase: "8 client users" when the unit counts what the
/// label names (singular for 1), "a file size of 1000 KB" when the unit measures
/// it, "a client timeout of 50s+exp:5s" without a unit. A unit's remark after
/// `;` (`requests; 1 is Connection: close`) is left to the axis label of plots.
fn axis_phrase(axis: &Axis, value: &str) -> String {
    let shown = match (axis.display_divisor, value.parse::<f64>()) {
        (Some(d), Ok(x)) => metric::fmt_value(x / d),
        _ => value.to_string(),
    };
    let label = axis.label.as_str();
    let unit = axis
        .unit
        .as_deref()
        .map(|u| u.split(';').next().unwrap_or("").trim())
        .filter(|u| !u.is_empty());
    match unit {
        Some(u) if label.split(' ').any(|w| w == u) => {
            let one = value.parse::<f64>().is_ok_and(|x| x == 1.0);
            let noun = if one {
                label
                    .split(' ')
                    .map(|w| {
                        if w == u {
                            w.strip_suffix('s').unwrap_or(w)
                        } else {
                            w
                        }
                    })
                    .collect::<Vec<_>>()
                    .join(" ")
            } else {
                label.to_string()
            };
            format!("{shown} {noun}")
        }
        Some(u) => format!("{} {label} of {shown} {u}", article(label)),
        None => format!("{} {label} of {shown}", article(label)),
    }
}

/// A point named by the axes that vary among compared points: "policy rr".
fn point_name(exp: &Experiment, p: &PointRecord, fixed: &[(String, String)]) -> String {
    if let Some(s) = &p.server {
        return s.clone();
    }
    let parts: Vec<String> = p
        .vars
        .iter()
        .filter(|(n, _)| !fixed.iter().any(|(a, _)| a == n))
        .map(|(n, v)| match exp.axis(n) {
            Some(a) => format!("{} {v}", a.label),
            None => format!("{n} {v}"),
        })
        .collect();
    if parts.is_empty() {
        p.label()
    } else {
        parts.join(", ")
    }
}

/// The axis values a conclusion looks at: `at` where given, else the last value
/// each axis took in the run (skipping `except`). In a simulated experiment there
/// are no servers to compare, so the axes `at` leaves out are what varies.
fn target(ctx: &Ctx<'_>, except: Option<&str>) -> Vec<(String, String)> {
    let (c, results) = (ctx.spec, ctx.results);
    let mut out = Vec::new();
    let Some(first) = results.points.first() else {
        return out;
    };
    for (name, _) in &first.vars {
        if Some(name.as_str()) == except {
            continue;
        }
        let given = c.at.as_ref().and_then(|t| t.get_ref().get(name));
        if ctx.simulated && c.at.is_some() && given.is_none() {
            continue;
        }
        let given = given.map(|v| match v {
            toml::Value::String(s) => s.clone(),
            other => other.to_string(),
        });
        let value = given.or_else(|| {
            results
                .points
                .iter()
                .rev()
                .find_map(|p| p.var(name))
                .map(Scalar::to_string)
        });
        if let Some(v) = value {
            out.push((name.clone(), v));
        }
    }
    out
}

fn matches(p: &PointRecord, at: &[(String, String)]) -> bool {
    at.iter().all(|(n, v)| {
        p.var(n).is_some_and(|pv| {
            pv.to_string() == *v
                || pv
                    .as_f64()
                    .zip(v.parse::<f64>().ok())
                    .is_some_and(|(a, b)| a == b)
        })
    })
}

fn capitalise_first(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().collect::<String>() + c.as_str(),
        None => String::new(),
    }
}

/// Server `a` against server `b` at one point.
fn ratio(ctx: &Ctx<'_>) -> Option<String> {
    let (a, b) = (
        ctx.spec.a.as_ref()?.get_ref(),
        ctx.spec.b.as_ref()?.get_ref(),
    );
    let at = target(ctx, None);
    let find = |s: &str| {
        ctx.ok()
            .find(|p| p.server.as_deref() == Some(s) && matches(p, &at))
            .and_then(|p| ctx.stat(p))
    };
    let (sa, sb) = (find(a)?, find(b)?);
    Some(capitalise_first(&format!(
        "{}{}.",
        ctx.at_phrase(&at),
        ctx.compare((a, sa), (b, sb))
    )))
}

/// The best and the worst of the servers (or of the free axis values) at one point.
fn best(ctx: &Ctx<'_>) -> Option<String> {
    let at = target(ctx, None);
    let mut pts: Vec<(String, Stat)> = ctx
        .ok()
        .filter(|p| matches(p, &at))
        .filter_map(|p| Some((point_name(ctx.exp, p, &at), ctx.stat(p)?)))
        .collect();
    if pts.is_empty() {
        return None;
    }
    // Best first; without a direction, highest first.
    pts.sort_by(|x, y| match ctx.metric.better() {
        Better::Lower => x.1.median.total_cmp(&y.1.median),
        Better::Higher | Better::Neither => y.1.median.total_cmp(&x.1.median),
    });
    let missing = ctx
        .results
        .points
        .iter()
        .filter(|p| matches(p, &at) && p.status == Status::Unavailable)
        .count();
    let tail = if missing > 0 {
        format!(" ({missing} unavailable here)")
    } else {
        String::new()
    };
    let m = ctx.metric;
    let at_phrase = ctx.at_phrase(&at);
    let [(best, b), .., (worst, w)] = pts.as_slice() else {
        let (only, s) = &pts[0];
        return Some(capitalise_first(&format!(
            "{at_phrase}only {only} produced figures{tail}: its {} was {} {}.",
            m.label(),
            metric::fmt(s.median),
            m.unit()
        )));
    };
    let of = if ctx.simulated { "settings" } else { "servers" };
    let figures = format!(
        "{} against {} {}",
        metric::fmt(b.median),
        metric::fmt(w.median),
        m.unit()
    );
    let noise = ctx.noise_clause(ctx.noise(*b, *w));
    let n = pts.len();
    let sentence = match m.better() {
        Better::Higher | Better::Lower => format!(
            "{at_phrase}{best} was the best of {n} {of}{tail}: its {} was {} that of the worst, {worst} ({figures}), a difference {noise}.",
            m.label(),
            factor(b.median, w.median)
        ),
        Better::Neither => format!(
            "{at_phrase}{best} had the highest {} of {n} {of}{tail}: {} that of the lowest, {worst} ({figures}), a difference {noise}.",
            m.label(),
            factor(b.median, w.median)
        ),
    };
    Some(capitalise_first(&sentence))
}

/// How a metric changes from the first to the last value of axis `x`, per server.
fn scaling(ctx: &Ctx<'_>) -> Option<String> {
    let x = ctx.spec.x.as_ref()?.get_ref();
    let axis = ctx.exp.axis(x)?;
    let at = target(ctx, Some(x));
    let mut names: Vec<String> = Vec::new();
    for p in ctx.ok() {
        let n = point_name(ctx.exp, p, &at);
        if !names.contains(&n) && p.server.is_some() {
            names.push(n);
        }
    }
    if names.is_empty() && ctx.simulated {
        names.push(String::new());
    }
    // (name, first stat, last stat); the same x range for every server.
    let mut changes: Vec<(String, Stat, Stat)> = Vec::new();
    let mut range = None;
    for n in &names {
        let mut pts: Vec<(f64, Stat)> = ctx
            .ok()
            .filter(|p| p.server.as_deref().unwrap_or("") == n && matches(p, &at))
            .filter_map(|p| Some((p.var(x)?.as_f64()?, ctx.stat(p)?)))
            .collect();
        pts.sort_by(|a, b| a.0.total_cmp(&b.0));
        if let (Some(f), Some(l)) = (pts.first(), pts.last())
            && pts.len() >= 2
            && f.1.median > 0.0
        {
            changes.push((n.clone(), f.1, l.1));
            range = Some((f.0, l.0));
        }
    }
    let (x0, x1) = range?;
    let m = ctx.metric;
    let from = axis_phrase(axis, &x0.to_string());
    let to = axis_phrase(axis, &x1.to_string());
    let step = |(n, f, l): &(String, Stat, Stat)| {
        let k = l.median / f.median;
        let who = if n.is_empty() {
            String::new()
        } else {
            format!(" for {n}")
        };
        if k >= 1.0 {
            format!("rose {}x{who}", metric::fmt(k))
        } else {
            format!("fell to {}x{who}", metric::fmt(k))
        }
    };
    let steps: Vec<String> = changes.iter().map(step).collect();
    let mut sentence = format!(
        "{}going from {from} to {to}, the {} {}",
        ctx.at_phrase(&at),
        m.label(),
        join(&steps)
    );
    // The factor of a change, as a range over repeats: last/first at the extremes.
    let span = |(_, f, l): &(String, Stat, Stat)| Stat {
        median: l.median / f.median,
        min: l.min / f.max,
        max: l.max / f.min,
    };
    if changes.len() >= 2 {
        let mut ranked: Vec<(&String, Stat)> = changes.iter().map(|c| (&c.0, span(c))).collect();
        ranked.sort_by(|a, b| match m.better() {
            Better::Lower => a.1.median.total_cmp(&b.1.median),
            Better::Higher | Better::Neither => b.1.median.total_cmp(&a.1.median),
        });
        let ((bn, b), (wn, w)) = (ranked[0], ranked[ranked.len() - 1]);
        let verb = match m.better() {
            Better::Higher | Better::Lower => "scaled best",
            Better::Neither => "changed most",
        };
        sentence += &format!(
            ": {bn} {verb} and {wn} worst ({}x against {}x), a difference {}",
            metric::fmt(b.median),
            metric::fmt(w.median),
            ctx.noise_clause(ctx.noise(b, w))
        );
    } else if let Some(c) = changes.first() {
        sentence += &format!(
            " (from {} to {} {}), a change {}",
            metric::fmt(c.1.median),
            metric::fmt(c.2.median),
            m.unit(),
            ctx.noise_clause(ctx.noise(c.1, c.2))
        );
    }
    Some(capitalise_first(&(sentence + ".")))
}

/// Measured (or simulated) figures against the exact model.
fn model(ctx: &Ctx<'_>) -> Option<String> {
    let m = ctx.metric;
    // (error in percent, point name, exact value inside the range)
    let mut errs: Vec<(f64, String, bool)> = Vec::new();
    for p in ctx.ok() {
        let (Some(v), Some(&x)) = (ctx.stat(p), p.exact.get(&m)) else {
            continue;
        };
        if x > 0.0 {
            let name = match &p.server {
                Some(s) => format!("{s} at {}", vars_phrase(ctx.exp, p)),
                None => vars_phrase(ctx.exp, p),
            };
            errs.push(((v.median - x) / x * 100.0, name, v.min <= x && x <= v.max));
        }
    }
    if errs.is_empty() {
        return None;
    }
    let max = errs.iter().max_by(|a, b| a.0.abs().total_cmp(&b.0.abs()))?;
    let mean = errs.iter().map(|e| e.0.abs()).sum::<f64>() / errs.len() as f64;
    let inside = errs.iter().filter(|e| e.2).count();
    let what = if ctx.simulated {
        "Simulated"
    } else {
        "Measured"
    };
    let noise = match (ctx.simulated, ctx.results.repeats) {
        (false, r) if r < 2 => "one repeat per point, so the noise is unknown".to_string(),
        (false, r) => format!(
            "the exact value lies within the range of {r} repeats at {inside} of {} points",
            errs.len()
        ),
        (true, _) => format!(
            "the exact value lies within the 95% interval at {inside} of {} points",
            errs.len()
        ),
    };
    let nstar = ctx
        .ok()
        .find_map(|p| p.exact.get(&Metric::SaturationUsers).copied())
        .map_or(String::new(), |n| {
            format!(
                "; the model saturates at N* = {} {}",
                metric::fmt_value(n),
                Metric::SaturationUsers.unit()
            )
        });
    Some(format!(
        "{what} {} was within {}% of the exact model at every point (mean absolute error {}%, largest {}{}% at {}); {noise}{nstar}.",
        m.label(),
        metric::fmt(max.0.abs()),
        metric::fmt(mean),
        if max.0 >= 0.0 { "+" } else { "" },
        metric::fmt(max.0),
        max.1,
    ))
}

/// Every axis value of a point as phrases: "24 users".
fn vars_phrase(exp: &Experiment, p: &PointRecord) -> String {
    let parts: Vec<String> = p
        .vars
        .iter()
        .map(|(n, v)| match exp.axis(n) {
            Some(a) => axis_phrase(a, &v.to_string()),
            None => format!("{n} {v}"),
        })
        .collect();
    join(&parts)
}

#[cfg(test)]
mod tests {}
