//! The report's one-sentence conclusion, computed from the data rather than
//! written in advance: the experiment file says what to compare (`[conclusion]`),
//! the numbers decide what the sentence says.
//!
//! A sentence is put together from typed parts, so that it reads as English
//! whatever the experiment: an axis value becomes a phrase ("8 client users",
//! "a file size of 1000 KB"), a figure is a number with its metric's unit
//! written once ("300 against 100 requests/s"), and every comparison says which
//! side is better (the metric knows its direction), by how much (a factor), and
//! whether the difference is larger than the noise: Welch's t-test at 95% on
//! the repeats (or the simulator's replications), with the size of the
//! difference and its 95% interval. Overlapping ranges are not a test.
//!
//! A point flagged by a check that disqualifies it (a busy client, Little's
//! law failed: see `claim::disqualified`) is left out, as the claims leave it
//! out: a conclusion about the servers drawn from a client-bound pair would
//! be a conclusion about the load generator. The sentence names what it left
//! out, and when nothing is left to compare it says so instead of concluding.

use crate::experiment::{Axis, ConclusionKind, ConclusionSpec, Experiment, Scalar};
use crate::metric::{self, Better, Metric};
use crate::sample::Welch;
use crate::store::results::{PointRecord, RunResults, Stat, Status};

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
        ConclusionKind::Prediction => crate::report::accuracy::table(exp, results)
            .and_then(|t| crate::report::accuracy::sentence(&t)),
    };
    // A sentence about the model's accuracy says when that is by construction.
    let sentence = match (c.kind.get_ref(), crate::report::construction::note(exp)) {
        (ConclusionKind::Model | ConclusionKind::Prediction, Some(note)) => {
            sentence.map(|s| format!("{s} {note}"))
        }
        _ => sentence,
    };
    // The flagged points among those the sentence compares: a ratio's two
    // servers, a best-of's servers, a scaling's curves. The model's sentences
    // score points by the applicability rule, which says itself what it
    // withholds.
    let whole = target(&ctx, None);
    let along = c.x.as_ref().map(|x| target(&ctx, Some(x.get_ref())));
    let flagged: Vec<&PointRecord> = match (c.kind.get_ref(), &along) {
        (ConclusionKind::Ratio, _) => {
            let pair = [&c.a, &c.b].map(|s| s.as_ref().map(|s| s.get_ref().as_str()));
            ctx.flagged(&whole)
                .filter(|p| pair.contains(&p.server.as_deref()))
                .collect()
        }
        (ConclusionKind::Best, _) => ctx.flagged(&whole).collect(),
        (ConclusionKind::Scaling, Some(at)) => ctx.flagged(at).collect(),
        (ConclusionKind::Scaling, None)
        | (ConclusionKind::Model | ConclusionKind::Prediction, _) => Vec::new(),
    };
    let flagged: Vec<String> = flagged.into_iter().map(PointRecord::label).collect();
    match (sentence, flagged.is_empty()) {
        (Some(s), true) => s,
        (Some(s), false) => format!("{s} {}", left_out(&flagged)),
        (None, false) => format!(
            "No conclusion about the servers: the points it compares have no figures that are evidence about them. {}",
            left_out(&flagged)
        ),
        (None, true) => {
            let failed = results
                .points
                .iter()
                .filter(|p| p.status != Status::Ok)
                .count();
            format!(
                "Not enough points produced figures to conclude ({failed} of {} points did not).",
                results.points.len()
            )
        }
    }
}

/// "Left out as evidence about the servers, flagged by their checks (…): A;
/// B." At most four names (a point's label has commas of its own, hence the
/// semicolons), then how many more.
fn left_out(flagged: &[String]) -> String {
    const NAMED: usize = 4;
    let mut names: Vec<String> = flagged.iter().take(NAMED).cloned().collect();
    if flagged.len() > NAMED {
        names.push(format!("{} more", flagged.len() - NAMED));
    }
    format!(
        "Left out as evidence about the servers, flagged by their checks (a busy load generator, Little's law or a machine shared with other processes; see the tables): {}.",
        names.join("; ")
    )
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
    /// The points with figures that are evidence about the server, within
    /// any list of values `at` gives an axis (`at = { case = ["a", "b"] }`
    /// compares those cases only).
    fn ok(&self) -> impl Iterator<Item = &PointRecord> {
        self.within()
            .filter(|p| crate::report::claim::disqualified(p).is_none())
    }

    /// The points at `at` with figures that `ok` leaves out because a check
    /// disqualifies them as evidence about the server.
    fn flagged<'a>(&'a self, at: &'a [(String, String)]) -> impl Iterator<Item = &'a PointRecord> {
        self.within()
            .filter(move |p| matches(p, at) && crate::report::claim::disqualified(p).is_some())
    }

    /// The points with figures within `at`'s lists, flagged or not.
    fn within(&self) -> impl Iterator<Item = &PointRecord> {
        let lists: Vec<(String, Vec<String>)> = self
            .spec
            .at
            .iter()
            .flat_map(|t| t.get_ref().iter())
            .filter_map(|(k, v)| match v {
                toml::Value::Array(a) => Some((
                    k.clone(),
                    a.iter()
                        .map(|v| match v {
                            toml::Value::String(s) => s.clone(),
                            other => other.to_string(),
                        })
                        .collect(),
                )),
                _ => None,
            })
            .collect();
        self.results.points.iter().filter(move |p| {
            p.status == Status::Ok
                && lists
                    .iter()
                    .all(|(k, vs)| vs.iter().any(|v| matches(p, &[(k.clone(), v.clone())])))
        })
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

    /// How two figures' difference compares with the noise: Welch's t-test
    /// on the repeats (or replications) at 95%.
    fn noise(&self, a: Stat, b: Stat) -> Noise {
        match Welch::test(&a.sample(), &b.sample()) {
            None => Noise::Unknown,
            Some(w) if w.significant() => Noise::Larger(w),
            Some(w) => Noise::Within(w),
        }
    }

    /// The clause that says so, with the size of the difference in `unit`.
    fn noise_clause(&self, noise: Noise, unit: &str) -> String {
        let what = if self.simulated {
            "replications"
        } else {
            "repeats"
        };
        let size = |w: &Welch| {
            format!(
                "{} ± {}{}",
                metric::fmt(w.diff.abs()),
                metric::fmt(w.half_width),
                if unit.is_empty() {
                    String::new()
                } else {
                    format!(" {unit}")
                }
            )
        };
        match noise {
            Noise::Larger(w) => format!(
                "significant by Welch's t-test on the {what} at 95% ({}, difference {})",
                fmt_p(w.p),
                size(&w)
            ),
            Noise::Within(w) => format!(
                "within the noise: not significant by Welch's t-test on the {what} at 95% ({})",
                fmt_p(w.p)
            ),
            Noise::Unknown => {
                "of unknown weight against the noise (one repeat, so no spread)".into()
            }
        }
    }

    /// A sentence tail comparing two named figures: which is better, by what
    /// factor, and against the noise.
    fn compare(&self, (an, a): (&str, Stat), (bn, b): (&str, Stat)) -> String {
        let m = self.metric;
        // Order so that the first is the better (or, without a direction, higher).
        let a_first = match m.better() {
            Better::Lower => a.mean <= b.mean,
            Better::Higher | Better::Neither => a.mean >= b.mean,
        };
        let ((first, f), (second, s)) = if a_first {
            ((an, a), (bn, b))
        } else {
            ((bn, b), (an, a))
        };
        let figures = format!(
            "{} against {} {}",
            metric::fmt(f.mean),
            metric::fmt(s.mean),
            m.unit()
        );
        let noise = self.noise_clause(self.noise(f, s), m.unit());
        if f.mean == s.mean {
            return format!(
                "{first} and {second} had the same {} ({figures}), a difference {noise}",
                m.label()
            );
        }
        let factor = factor(f.mean, s.mean);
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
#[derive(Debug, Clone, Copy, PartialEq)]
enum Noise {
    /// Welch's test finds a difference.
    Larger(Welch),
    /// It does not.
    Within(Welch),
    /// One repeat: no spread to compare with.
    Unknown,
}

/// A p-value as a reader wants it: "p = 0.003", "p < 0.001".
fn fmt_p(p: f64) -> String {
    if p < 0.001 {
        "p < 0.001".into()
    } else {
        format!("p = {p:.3}")
    }
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
    axis_range_phrase(axis, value, None)
}

/// "8" or "8 to 64" followed or preceded by the axis's words: "8 to 64
/// parallel connections", "a concurrency of 1 to 8 connections".
fn axis_range_phrase(axis: &Axis, value: &str, to: Option<&str>) -> String {
    // A yes/no axis reads "with TLS session resumption", "without ...".
    match (value, to) {
        ("true", None) => return format!("with {}", axis.label),
        ("false", None) => return format!("without {}", axis.label),
        _ => {}
    }
    let show = |v: &str| match (axis.display_divisor, v.parse::<f64>()) {
        (Some(d), Ok(x)) => metric::fmt_value(x / d),
        _ => v.to_string(),
    };
    let shown = match to {
        Some(to) => format!("{} to {}", show(value), show(to)),
        None => show(value),
    };
    let label = axis.label.as_str();
    let unit = axis
        .unit
        .as_deref()
        .map(|u| u.split(';').next().unwrap_or("").trim())
        .filter(|u| !u.is_empty());
    match unit {
        Some(u) if label.split(' ').any(|w| w == u) => {
            let last = to.unwrap_or(value);
            let one = last.parse::<f64>().is_ok_and(|x| x == 1.0);
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
        // A list of values leaves the axis free among them (see `Ctx::ok`).
        if matches!(given, Some(toml::Value::Array(_))) {
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
        Better::Lower => x.1.mean.total_cmp(&y.1.mean),
        Better::Higher | Better::Neither => y.1.mean.total_cmp(&x.1.mean),
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
            "{at_phrase}only {only} has figures that are evidence about the server{tail}: its {} was {} {}.",
            m.label(),
            metric::fmt(s.mean),
            m.unit()
        )));
    };
    let of = if ctx.simulated { "settings" } else { "servers" };
    let figures = format!(
        "{} against {} {}",
        metric::fmt(b.mean),
        metric::fmt(w.mean),
        m.unit()
    );
    let noise = ctx.noise_clause(ctx.noise(*b, *w), m.unit());
    let n = pts.len();
    if let Some(tied) = tied_with_best(ctx, &pts) {
        let what = match m.better() {
            Better::Higher | Better::Neither => "highest",
            Better::Lower => "lowest",
        };
        let what_of_worst = match m.better() {
            Better::Higher | Better::Lower => "the worst",
            Better::Neither => "the lowest",
        };
        return Some(capitalise_first(&format!(
            "{at_phrase}{best} had the {what} {} of {n} {of}{tail}, but not significantly: {tied}. Its {} was {} that of {what_of_worst}, {worst} ({figures}), a difference {noise}.",
            m.label(),
            m.label(),
            factor(b.mean, w.mean)
        )));
    }
    let sentence = match m.better() {
        Better::Higher | Better::Lower => format!(
            "{at_phrase}{best} was the best of {n} {of}{tail}: its {} was {} that of the worst, {worst} ({figures}), a difference {noise}.",
            m.label(),
            factor(b.mean, w.mean)
        ),
        Better::Neither => format!(
            "{at_phrase}{best} had the highest {} of {n} {of}{tail}: {} that of the lowest, {worst} ({figures}), a difference {noise}.",
            m.label(),
            factor(b.mean, w.mean)
        ),
    };
    Some(capitalise_first(&sentence))
}

/// The clause naming every other entry that Welch's test cannot tell apart
/// from the first (the best) of `pts`, or `None` when the best stands alone.
/// Regression: `engines` called reactor "the best of 10 servers" while the
/// repeats did not separate it from epoll, h2o or lighttpd.
fn tied_with_best(ctx: &Ctx<'_>, pts: &[(String, Stat)]) -> Option<String> {
    let (_, best) = pts.first()?;
    let what = if ctx.simulated {
        "replications"
    } else {
        "repeats"
    };
    let tied: Vec<String> = pts[1..]
        .iter()
        .filter_map(|(name, s)| match ctx.noise(*best, *s) {
            Noise::Within(w) => Some(format!("{name} ({})", fmt_p(w.p))),
            Noise::Larger(_) | Noise::Unknown => None,
        })
        .collect();
    (!tied.is_empty()).then(|| {
        format!(
            "Welch's t-test on the {what} at 95% does not tell it apart from {}",
            join(&tied)
        )
    })
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
            && f.1.mean > 0.0
        {
            changes.push((n.clone(), f.1, l.1));
            range = Some((f.0, l.0));
        }
    }
    let (x0, x1) = range?;
    let m = ctx.metric;
    let range = axis_range_phrase(axis, &x0.to_string(), Some(&x1.to_string()));
    // One verb when every change goes the same way: "rose 2x for a and 3x for b".
    let rose = |(_, f, l): &(String, Stat, Stat)| l.mean >= f.mean;
    let same_way = changes.iter().all(rose) || !changes.iter().any(rose);
    let step = |(i, c): (usize, &(String, Stat, Stat))| {
        let (n, f, l) = c;
        let who = if n.is_empty() {
            String::new()
        } else {
            format!(" for {n}")
        };
        let verb = match (rose(c), same_way && i > 0) {
            (_, true) => "",
            (true, false) => "rose ",
            (false, false) => "fell to ",
        };
        format!("{verb}{}x{who}", metric::fmt(l.mean / f.mean))
    };
    let steps: Vec<String> = changes.iter().enumerate().map(step).collect();
    let mut sentence = format!(
        "{}going from {range}, the {} {}",
        ctx.at_phrase(&at),
        m.label(),
        join(&steps)
    );
    // The factor of a change, last over first, with its spread by the delta
    // method (relative standard deviations add in quadrature).
    let span = |(_, f, l): &(String, Stat, Stat)| {
        let ratio = l.mean / f.mean;
        let rel = |s: &Stat| s.sd.unwrap_or(0.0) / s.mean.abs().max(f64::MIN_POSITIVE);
        let n = f.n.min(l.n);
        let sd = ratio * (rel(f).powi(2) + rel(l).powi(2)).sqrt();
        let h = crate::sample::Sample { n, mean: ratio, sd }
            .half_width()
            .unwrap_or(0.0);
        Stat {
            n,
            mean: ratio,
            sd: (n >= 2).then_some(sd),
            ci95_lo: ratio - h,
            ci95_hi: ratio + h,
            median: None,
            min: None,
            max: None,
        }
    };
    if changes.len() >= 2 {
        let mut ranked: Vec<(&String, Stat)> = changes.iter().map(|c| (&c.0, span(c))).collect();
        ranked.sort_by(|a, b| match m.better() {
            Better::Lower => a.1.mean.total_cmp(&b.1.mean),
            Better::Higher | Better::Neither => b.1.mean.total_cmp(&a.1.mean),
        });
        let ((bn, b), (wn, w)) = (ranked[0], ranked[ranked.len() - 1]);
        let (best, worst) = match m.better() {
            Better::Higher | Better::Lower => ("scaled best", "worst"),
            Better::Neither => ("changed most", "least"),
        };
        if metric::fmt(b.mean) == metric::fmt(w.mean) {
            sentence += &format!(": all {} alike", changes.len());
        } else {
            sentence += &format!(
                ": {bn} {best} and {wn} {worst} ({}x against {}x), a difference {}",
                metric::fmt(b.mean),
                metric::fmt(w.mean),
                ctx.noise_clause(ctx.noise(b, w), "")
            );
        }
    } else if let Some(c) = changes.first() {
        sentence += &format!(
            " (from {} to {} {}), a change {}",
            metric::fmt(c.1.mean),
            metric::fmt(c.2.mean),
            m.unit(),
            ctx.noise_clause(ctx.noise(c.1, c.2), m.unit())
        );
    }
    Some(capitalise_first(&(sentence + ".")))
}

/// Measured (or simulated) figures against the exact model.
fn model(ctx: &Ctx<'_>) -> Option<String> {
    let m = ctx.metric;
    // (error in percent, point name, exact value inside the range)
    let mut errs: Vec<(f64, String, bool)> = Vec::new();
    let mut withheld = 0;
    // Every point with figures: the applicability rule below withholds
    // client-bound ones and the accuracy table counts them.
    for p in ctx.within() {
        let (Some(v), Some(&x)) = (ctx.stat(p), p.exact.get(&m)) else {
            continue;
        };
        // Scored only where the model applies, as in the accuracy table.
        if crate::report::applicability::why_not(ctx.exp, p).is_some() {
            withheld += 1;
            continue;
        }
        if x > 0.0 {
            let name = match &p.server {
                Some(s) => format!("{s} at {}", vars_phrase(ctx.exp, p)),
                None => vars_phrase(ctx.exp, p),
            };
            if v.mean <= 0.0 {
                continue;
            }
            // The lab's one convention: (model − measured) / measured.
            errs.push((
                (x - v.mean) / v.mean * 100.0,
                name,
                v.ci95_lo <= x && x <= v.ci95_hi,
            ));
        }
    }
    if errs.is_empty() {
        return None;
    }
    let max = errs.iter().max_by(|a, b| a.0.abs().total_cmp(&b.0.abs()))?;
    let mean = errs.iter().map(|e| e.0.abs()).sum::<f64>() / errs.len() as f64;
    let inside = errs.iter().filter(|e| e.2).count();
    let what = if ctx.simulated {
        "simulated"
    } else {
        "measured"
    };
    let noise = match (ctx.simulated, ctx.results.repeats) {
        (false, r) if r < 2 => "one repeat per point, so the noise is unknown".to_string(),
        (false, r) => format!(
            "the exact value lies within the 95% interval of the mean of {r} or more repeats at {inside} of {} points",
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
    let scored = if withheld == 0 {
        "every point".to_string()
    } else {
        format!("every point where it applies ({withheld} left out: the table of figures says why)")
    };
    Some(format!(
        "The exact model's {} was within {}% of the {what} at {scored} (error (exact − {what}) / {what}: mean absolute {}%, largest {}{}% at {}); {noise}{nstar}.",
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
mod tests {
    use super::*;
    use crate::experiment::Work;
    use crate::experiment::builtin::{self, BUILTIN};
    use std::collections::BTreeMap;

    /// Fixed synthetic results of an experiment's quick sweep: every figure a
    /// function of the server's position and the point's position, with a
    /// spread of 5% (measured, 3 repeats) or a 95% interval of 2% (simulated).
    fn synthetic(exp: &Experiment) -> RunResults {
        let plan = exp
            .plan(
                &crate::experiment::PlanOptions::sweep(true),
                std::path::Path::new("/tmp/servelab-lab"),
            )
            .unwrap();
        let simulated = exp.is_simulated();
        let points = plan
            .points
            .iter()
            .map(|p| {
                let server = exp
                    .servers
                    .iter()
                    .position(|s| Some(s.label.get_ref().as_str()) == p.server_label())
                    .unwrap_or(0);
                let combo = p.index / exp.servers.len().max(1);
                let scale =
                    (1.0 + server as f64) * (1.0 + combo as f64).powf(1.0 + server as f64 / 4.0);
                let spread = if simulated { 0.02 } else { 0.05 };
                let summary: BTreeMap<Metric, Stat> = Metric::ALL
                    .iter()
                    .filter(|m| m.recorded_by(simulated))
                    .map(|m| {
                        let v = 10.0 * scale;
                        let s = if simulated {
                            Stat::interval(v, v * spread, 5)
                        } else {
                            Stat::of(&[v * (1.0 - spread), v, v * (1.0 + spread)]).unwrap()
                        };
                        (*m, s)
                    })
                    .collect();
                let exact = match &p.work {
                    Work::Measure(m) if m.predict.is_some() => BTreeMap::from([
                        (Metric::Throughput, 10.0 * scale * 1.02),
                        (Metric::SaturationUsers, 24.0),
                        (Metric::ThroughputMax, 100.0),
                    ]),
                    _ => BTreeMap::new(),
                };
                // The simulator 4% above every measured figure, 2% interval.
                let predicted: BTreeMap<Metric, Stat> = match &p.work {
                    Work::Measure(m) if m.predict.is_some() => summary
                        .iter()
                        .map(|(k, s)| {
                            let v = s.mean * 1.04;
                            (*k, Stat::interval(v, v * 0.02, 5))
                        })
                        .collect(),
                    _ => BTreeMap::new(),
                };
                PointRecord {
                    summary,
                    predicted,
                    exact,
                    ..PointRecord::planned(p)
                }
            })
            .collect();
        RunResults {
            schema: crate::store::results::SCHEMA.into(),
            experiment: exp.name().into(),
            source_file: exp.source.file.clone(),
            source: exp.source.text.clone(),
            command: String::new(),
            quick: true,
            repeats: if simulated { 1 } else { 3 },
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

    /// Every built-in experiment's conclusion, rendered from fixed synthetic
    /// results, against the sentence it must be. Regression: some read "At
    /// client users 8 users ... server workers (workers)" and "users 150
    /// users", and seed002's named the highest response time without saying
    /// which policy was better or by how much.
    #[test]
    fn every_builtin_concludes_with_the_expected_sentence() {
        let expected: &[(&str, &str)] = &[
            (
                "filesize",
                "At a file size of 3300 KB, pool, no log was better: its throughput was 2.38x that of serial (47.6 against 20.0 requests/s), a difference significant by Welch's t-test on the repeats at 95% (p < 0.001, difference 27.6 ± 5.07 requests/s).",
            ),
            (
                "session",
                "At a session length of 100 requests per connection, pool, buffered log was better: its throughput was 1.78x that of pool, sync log (84.9 against 47.6 requests/s), a difference significant by Welch's t-test on the repeats at 95% (p < 0.001, difference 37.3 ± 8.71 requests/s).",
            ),
            (
                "connections",
                "Going from 8 to 64 parallel connections, the throughput rose 2.00x for thread and 2.38x for epoll: epoll scaled best and thread worst (2.38x against 2.00x), a difference significant by Welch's t-test on the repeats at 95% (p = 0.042, difference 0.378 ± 0.356).",
            ),
            (
                "handlers",
                "At 16 client users, going from 1 to 4 server workers, the throughput rose 2.00x for pool (from 20.0 to 40.0 requests/s), a change significant by Welch's t-test on the repeats at 95% (p < 0.001, difference 20.0 ± 4.16 requests/s).",
            ),
            (
                "fork-thread-pool",
                "At a concurrency of 16 connections, pool was the best of 3 servers: its throughput was 4.24x that of the worst, fork (84.9 against 20.0 requests/s), a difference significant by Welch's t-test on the repeats at 95% (p < 0.001, difference 64.9 ± 9.86 requests/s).",
            ),
            (
                "model",
                "The exact model's throughput was within 2.00% of the measured at every point (error (exact − measured) / measured: mean absolute 2.00%, largest +2.00% at pool at 24 users); the exact value lies within the 95% interval of the mean of 3 or more repeats at 2 of 2 points; the model saturates at N* = 24 users. Agreement with the model here is by construction: a check of the instruments, not of the model. The server sleeps a draw of --delay exp:20ms per request and does no work, and the model is given that distribution as its service time (exp:20ms); the model's accuracy on work a kernel schedules is in model-cpu, overload-cpu and apache.",
            ),
            (
                "seed002",
                "At 150 users, configuration comparison, FCFS was the best of 3 settings: its mean user response time was 0.143x that of the worst, configuration 4x4, RR (10.0 against 70.0 ms), a difference significant by Welch's t-test on the replications at 95% (p < 0.001, difference 60.0 ± 1.39 ms).",
            ),
            (
                "engines",
                "At 100 requests per connection, h2o was the best of 11 servers: its throughput was 62.2x that of the worst, pool (1245 against 20.0 requests/s), a difference significant by Welch's t-test on the repeats at 95% (p < 0.001, difference 1225 ± 155 requests/s).",
            ),
            (
                "overload",
                "The model holds: all 3 targets met over 2 points. Largest errors: throughput +4.00% (mean 4.00%), goodput +4.00% (mean 4.00%), badput +4.00% (mean 4.00%), abandoned at the server +4.00% (mean 4.00%), dropped requests +4.00% (mean 4.00%), mean user response time +4.00% (mean 4.00%), mean response time per attempt +4.00% (mean 4.00%). Agreement with the model here is by construction: a check of the instruments, not of the model. The server sleeps a draw of --delay exp:20ms per request and does no work, and the model is given that distribution as its service time (exp:20ms); the model's accuracy on work a kernel schedules is in model-cpu, overload-cpu and apache.",
            ),
            (
                "timeslice",
                "The model holds: all 3 targets met over 2 points. Largest errors: throughput +4.00% (mean 4.00%), mean user response time +4.00% (mean 4.00%), median response time +4.00% (mean 4.00%), 99th percentile response time +4.00% (mean 4.00%).",
            ),
            (
                "model-cpu",
                "The model holds: all 2 targets met over 2 points. Largest errors: throughput +4.00% (mean 4.00%), mean user response time +4.00% (mean 4.00%), 99th percentile response time +4.00% (mean 4.00%).",
            ),
            (
                "overload-cpu",
                "The model holds: all 3 targets met over 2 points. Largest errors: throughput +4.00% (mean 4.00%), goodput +4.00% (mean 4.00%), badput +4.00% (mean 4.00%), mean user response time +4.00% (mean 4.00%), mean response time per attempt +4.00% (mean 4.00%), 99th percentile response time +4.00% (mean 4.00%).",
            ),
            (
                "tls",
                "At 1 request per connection and without TLS session resumption, epoll was the best of 7 servers: its 99th percentile response time was 0.143x that of the worst, prefork (10.0 against 70.0 ms), a difference significant by Welch's t-test on the repeats at 95% (p < 0.001, difference 60.0 ± 8.46 ms).",
            ),
            (
                "apache",
                "The model holds: all 3 targets met over 6 points. Largest errors: throughput +4.00% (mean 4.00%), goodput +4.00% (mean 4.00%), mean user response time +4.00% (mean 4.00%), mean response time per attempt +4.00% (mean 4.00%), 99th percentile response time +4.00% (mean 4.00%).",
            ),
            (
                "h2",
                "At a protocol of h2 and 100 streams per connection, h2o was the best of 7 servers: its throughput was 36.4x that of the worst, epoll (1091 against 30.0 requests/s), a difference significant by Welch's t-test on the repeats at 95% (p < 0.001, difference 1061 ± 135 requests/s).",
            ),
        ];
        assert_eq!(expected.len(), BUILTIN.len());
        let wrong: Vec<String> = expected
            .iter()
            .filter_map(|(name, want)| {
                let exp = builtin::load(name).unwrap();
                let got = conclude(&exp, &synthetic(&exp));
                (got != *want).then(|| format!("{name}:\n  got:  {got}\n  want: {want}"))
            })
            .collect();
        assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    }

    /// A point flagged for a busy client (or Little's law) is not evidence
    /// about the servers: the sentence leaves it out and names it, and with
    /// nothing left to compare it does not conclude. Regression: filesize's
    /// reference concluded "pool, no log was better: 1.17x" from a pair whose
    /// load generator was at 99% of its CPU.
    #[test]
    fn a_flagged_point_carries_no_conclusion_and_is_named() {
        let flag = |p: &mut PointRecord, kind| {
            p.checks.push(crate::check::Check {
                kind,
                passed: false,
                detail: "load generator on CPU 99% of the window".into(),
            })
        };
        let at = |r: &mut RunResults, server: &str, size: f64| -> usize {
            r.points
                .iter()
                .position(|p| {
                    p.server.as_deref() == Some(server)
                        && p.var("size").and_then(|v| v.as_f64()) == Some(size)
                })
                .unwrap()
        };
        let exp = builtin::load("filesize").unwrap();
        let clean = synthetic(&exp);
        let before = conclude(&exp, &clean);
        assert!(before.starts_with("At a file size of 3300 KB, pool, no log was better"));

        // A failed check that says nothing of the client, or a flagged point
        // the sentence does not compare, changes nothing.
        let mut r = clean.clone();
        let i = at(&mut r, "pool, no log", 3_300_000.0);
        flag(&mut r.points[i], crate::check::CheckKind::Errors);
        let j = at(&mut r, "pool, no log", 5000.0);
        flag(&mut r.points[j], crate::check::CheckKind::Client);
        assert_eq!(conclude(&exp, &r), before);

        let mut r = clean.clone();
        let i = at(&mut r, "pool, no log", 3_300_000.0);
        flag(&mut r.points[i], crate::check::CheckKind::Client);
        let got = conclude(&exp, &r);
        assert!(got.starts_with("No conclusion about the servers"), "{got}");
        assert!(got.contains("pool, no log, size=3300000"), "{got}");
        assert!(!got.contains("was better"), "{got}");

        // A flagged server the ratio does not compare is neither left out
        // nor named: pool with a log, at the same size, is not in the pair.
        let mut r = clean.clone();
        let k = at(&mut r, "pool, sync log", 3_300_000.0);
        flag(&mut r.points[k], crate::check::CheckKind::Client);
        assert_eq!(conclude(&exp, &r), before);

        // A best-of sentence goes on without the flagged server and names it.
        let exp = builtin::load("fork-thread-pool").unwrap();
        let mut r = synthetic(&exp);
        let last = r.points.len() - 1;
        let best = r.points[last].server.clone().unwrap();
        assert!(conclude(&exp, &r).contains(&format!("{best} was the best")));
        flag(&mut r.points[last], crate::check::CheckKind::LittlesLaw);
        let got = conclude(&exp, &r);
        assert!(!got.contains(&format!("{best} was the best")), "{got}");
        assert!(got.contains("was the best of 2 servers"), "{got}");
        assert!(
            got.ends_with(&format!("{}.", r.points[last].label())),
            "{got}"
        );
    }

    fn axis(label: &str, unit: Option<&str>, divisor: Option<f64>) -> Axis {
        let text = format!(
            "name = \"a\"\nlabel = \"{label}\"\nvalues = [1]\n{}{}",
            unit.map_or(String::new(), |u| format!("unit = \"{u}\"\n")),
            divisor.map_or(String::new(), |d| format!("display_divisor = {d}\n"))
        );
        toml::from_str(&text).unwrap()
    }

    #[test]
    fn axis_values_read_as_phrases_with_the_unit_once() {
        let users = axis("client users", Some("users"), None);
        assert_eq!(axis_phrase(&users, "8"), "8 client users");
        assert_eq!(axis_phrase(&users, "1"), "1 client user");
        let per = axis(
            "requests per connection",
            Some("requests; 1 is Connection: close"),
            None,
        );
        assert_eq!(axis_phrase(&per, "1"), "1 request per connection");
        let size = axis("file size", Some("KB"), Some(1000.0));
        assert_eq!(axis_phrase(&size, "5000"), "a file size of 5 KB");
        assert_eq!(
            axis_range_phrase(&size, "5000", Some("1000000")),
            "a file size of 5 to 1000 KB"
        );
        let timeout = axis("client timeout", None, None);
        assert_eq!(
            axis_phrase(&timeout, "5s+exp:5s"),
            "a client timeout of 5s+exp:5s"
        );
        assert_eq!(
            axis_phrase(&axis("interval", Some("s"), None), "2"),
            "an interval of 2 s"
        );
    }

    #[test]
    fn a_lower_is_better_metric_names_the_lower_side_better() {
        let text = builtin::BUILTIN
            .iter()
            .find(|(n, _)| *n == "filesize")
            .unwrap()
            .1
            .replace("metric = \"throughput\"", "metric = \"mean_ms\"");
        let exp = Experiment::parse(&text, "t").unwrap();
        let s = conclude(&exp, &synthetic(&exp));
        assert!(
            s.contains("serial was better: its mean user response time was 0.420x that of pool, no log (20.0 against 47.6 ms)"),
            "{s}"
        );
    }

    /// The engines' regression: a "best" that the repeats do not separate
    /// from the runner-up names the runner-up, and one they do separate
    /// stands alone.
    #[test]
    fn a_best_the_repeats_cannot_separate_names_its_ties() {
        let exp = builtin::load("engines").unwrap();
        let mut r = synthetic(&exp);
        let at_100 = |p: &PointRecord| matches(p, &[("session".into(), "100".into())]);
        let best = |r: &RunResults| {
            r.points
                .iter()
                .filter(|p| at_100(p))
                .max_by(|a, b| {
                    a.summary[&Metric::Throughput]
                        .mean
                        .total_cmp(&b.summary[&Metric::Throughput].mean)
                })
                .map(|p| p.index)
                .unwrap()
        };
        let top = best(&r);
        let alone = conclude(&exp, &r);
        assert!(!alone.contains("not significantly"), "{alone}");
        // A runner-up 1% below the best, with the same 5% spread.
        let v = r.points[top].summary[&Metric::Throughput].mean * 0.99;
        let runner = r
            .points
            .iter_mut()
            .find(|p| at_100(p) && p.index != top)
            .unwrap();
        let name = runner.server.clone().unwrap();
        runner.summary.insert(
            Metric::Throughput,
            Stat::of(&[v * 0.95, v, v * 1.05]).unwrap(),
        );
        let tied = conclude(&exp, &r);
        assert!(tied.contains("but not significantly: Welch's t-test on the repeats at 95% does not tell it apart from"), "{tied}");
        assert!(tied.contains(&format!("{name} (p = ")), "{tied}");
    }

    #[test]
    fn one_repeat_says_the_noise_is_unknown_and_no_data_says_so() {
        let exp = builtin::load("filesize").unwrap();
        let mut r = synthetic(&exp);
        r.repeats = 1;
        for p in &mut r.points {
            for s in p.summary.values_mut() {
                *s = Stat::exact(s.mean);
            }
        }
        let s = conclude(&exp, &r);
        assert!(
            s.ends_with(
                "a difference of unknown weight against the noise (one repeat, so no spread)."
            ),
            "{s}"
        );
        for p in &mut r.points {
            p.status = Status::Failed;
        }
        let s = conclude(&exp, &r);
        assert!(s.starts_with("Not enough points produced figures"), "{s}");
    }
}
