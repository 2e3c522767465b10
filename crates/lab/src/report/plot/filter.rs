//! A plot's `where`: which points of a run it draws, and what it draws instead
//! when the run has no point at a wanted value (a quick sweep lacks most values).

use crate::experiment::{PlotSpec, Scalar};
use crate::store::results::{PointRecord, RunResults, Status};

/// A filter: each axis with the values wanted (any of them; usually one).
pub(super) type Filter = Vec<(String, Vec<String>)>;

/// Whether a record's value of `axis` is `want` (numbers compare as numbers).
fn has_value(r: &PointRecord, axis: &str, want: &str) -> bool {
    r.var(axis).is_some_and(|v| {
        v.to_string() == want
            || v.as_f64()
                .zip(want.parse::<f64>().ok())
                .is_some_and(|(a, b)| a == b)
    })
}

pub(super) fn matches(r: &PointRecord, filter: &Filter) -> bool {
    filter
        .iter()
        .all(|(k, wants)| wants.iter().any(|w| has_value(r, k, w)))
}

/// The plot's `where`, as text values.
pub(super) fn filter_of(plot: &PlotSpec) -> Filter {
    plot.filter.as_ref().map_or_else(Vec::new, |f| {
        f.get_ref()
            .iter()
            .map(|(k, v)| {
                let text = |v: &toml::Value| match v {
                    toml::Value::String(s) => s.clone(),
                    other => other.to_string(),
                };
                let wants = match v {
                    toml::Value::Array(a) => a.iter().map(text).collect(),
                    other => vec![text(other)],
                };
                (k.clone(), wants)
            })
            .collect()
    })
}

/// The values a figure is drawn at instead of the ones its plot wants, because
/// the run has no point at those.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Substitution {
    /// The sentence the figure shows, naming the values wanted and drawn.
    pub(super) note: String,
    /// Each substituted axis and the value drawn at.
    pub(super) drawn: Vec<(String, String)>,
}

/// The filter to draw with, and what was substituted when the run lacks a wanted
/// value: each such axis takes the value this run has that is nearest to the one
/// wanted (the first one, for text values), so that a quick sweep still shows the
/// shape.
pub(super) fn substitute(filter: &Filter, results: &RunResults) -> (Filter, Option<Substitution>) {
    let ok: Vec<&PointRecord> = results
        .points
        .iter()
        .filter(|r| r.status == Status::Ok)
        .collect();
    if ok.is_empty() || ok.iter().any(|r| matches(r, filter)) {
        return (filter.clone(), None);
    }
    let mut out = Vec::new();
    let mut missing = Vec::new();
    for (axis, wants) in filter {
        // Several values wanted: the run draws those it has.
        let [want] = wants.as_slice() else {
            out.push((axis.clone(), wants.clone()));
            continue;
        };
        if ok.iter().any(|r| has_value(r, axis, want)) {
            out.push((axis.clone(), wants.clone()));
            continue;
        }
        let mut have: Vec<&Scalar> = Vec::new();
        for r in &ok {
            if let Some(v) = r.var(axis)
                && !have.contains(&v)
            {
                have.push(v);
            }
        }
        let target = want.parse::<f64>().ok();
        let nearest = have
            .iter()
            .min_by(|a, b| {
                let d = |s: &Scalar| match (s.as_f64(), target) {
                    (Some(x), Some(t)) if x > 0.0 && t > 0.0 => (x / t).ln().abs(),
                    (Some(x), Some(t)) => (x - t).abs(),
                    _ => f64::INFINITY,
                };
                d(a).total_cmp(&d(b))
            })
            .map(|s| s.to_string());
        let listed: Vec<String> = have.iter().map(|s| s.to_string()).collect();
        match nearest {
            Some(n) => {
                missing.push((axis.clone(), want.clone(), listed, n.clone()));
                out.push((axis.clone(), vec![n]));
            }
            None => out.push((axis.clone(), wants.clone())),
        }
    }
    if missing.is_empty() || !ok.iter().any(|r| matches(r, &out)) {
        return (filter.clone(), None);
    }
    let wanted: Vec<String> = missing
        .iter()
        .map(|(a, w, _, _)| format!("{a} = {w}"))
        .collect();
    let have: Vec<String> = missing
        .iter()
        .map(|(a, _, l, _)| format!("{a} = {}", l.join(", ")))
        .collect();
    let drawn: Vec<String> = missing
        .iter()
        .map(|(a, _, _, n)| format!("{a} = {n}"))
        .collect();
    let note = format!(
        "Not at {}: this run has no point there (it has {}), so this figure is drawn at {}.",
        wanted.join(" and "),
        have.join("; "),
        drawn.join(" and ")
    );
    let drawn = missing.into_iter().map(|(a, _, _, n)| (a, n)).collect();
    (out, Some(Substitution { note, drawn }))
}
