//! The report's one-sentence conclusion, computed from the data rather than
//! written in advance: the experiment file says what to compare (`[conclusion]`),
//! the numbers decide what the sentence says.

use crate::experiment::{ConclusionSpec, Experiment, Scalar};
use crate::metric;
use crate::results::{PointRecord, RunResults, Status};

/// The conclusion of a run (a sentence; never empty).
pub fn conclude(exp: &Experiment, results: &RunResults) -> String {
    let Some(c) = &exp.conclusion else {
        return default_sentence(results);
    };
    let sentence = match c.kind.get_ref().as_str() {
        "ratio" => ratio(c, exp, results),
        "best" => best(c, exp, results),
        "scaling" => scaling(c, exp, results),
        "model" => model(c, results),
        _ => None,
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

fn ok(results: &RunResults) -> impl Iterator<Item = &PointRecord> {
    results.points.iter().filter(|p| p.status == Status::Ok)
}

/// The axis values a conclusion looks at: `at` where given, else the last value
/// each axis took in the run (skipping `except`). In a simulated experiment there
/// are no servers to compare, so the axes `at` leaves out are what varies.
fn target(c: &ConclusionSpec, results: &RunResults, except: Option<&str>) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let Some(first) = results.points.first() else {
        return out;
    };
    let simulated = first.server.is_none();
    for (name, _) in &first.vars {
        if Some(name.as_str()) == except {
            continue;
        }
        let in_at =
            c.at.as_ref()
                .is_some_and(|t| t.get_ref().contains_key(name));
        if simulated && c.at.is_some() && !in_at {
            continue;
        }
        let given =
            c.at.as_ref()
                .and_then(|t| t.get_ref().get(name))
                .map(|v| match v {
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

fn describe_at(exp: &Experiment, at: &[(String, String)]) -> String {
    if at.is_empty() {
        return String::new();
    }
    let parts: Vec<String> = at
        .iter()
        .map(|(n, v)| match exp.axis(n) {
            Some(a) => {
                let shown = match (a.display_divisor, v.parse::<f64>()) {
                    (Some(d), Ok(x)) => metric::fmt_value(x / d),
                    _ => v.clone(),
                };
                format!(
                    "{} {shown}{}",
                    a.label,
                    a.unit.as_ref().map_or(String::new(), |u| format!(" {u}"))
                )
            }
            None => format!("{n} {v}"),
        })
        .collect();
    format!("At {}, ", parts.join(" and "))
}

fn unit(m: &str) -> String {
    metric::get(m).map_or(String::new(), |m| format!(" {}", m.unit))
}

fn label(m: &str) -> &'static str {
    metric::get(m).map_or("value", |m| m.label)
}

fn ratio(c: &ConclusionSpec, exp: &Experiment, results: &RunResults) -> Option<String> {
    let (a, b) = (c.a.as_ref()?.get_ref(), c.b.as_ref()?.get_ref());
    let m = c.metric.get_ref();
    let at = target(c, results, None);
    let find = |s: &str| ok(results).find(|p| p.server.as_deref() == Some(s) && matches(p, &at));
    let (pa, pb) = (find(a)?, find(b)?);
    let (va, vb) = (pa.summary.get(m)?.median, pb.summary.get(m)?.median);
    if vb <= 0.0 {
        return None;
    }
    let r = va / vb;
    let verdict = if (0.95..=1.05).contains(&r) {
        format!("about the same {} as", label(m))
    } else {
        format!("{}x the {} of", metric::fmt(r), label(m))
    };
    // A ratio is only news when the repeats do not overlap.
    let (sa, sb) = (pa.summary[m.as_str()], pb.summary[m.as_str()]);
    let overlap = sa.min <= sb.max && sb.min <= sa.max;
    let caveat = if overlap && results.repeats > 1 {
        format!(
            "; but the repeats overlap ({}..{} against {}..{}), so this machine's noise is as large as the difference",
            metric::fmt(sa.min),
            metric::fmt(sa.max),
            metric::fmt(sb.min),
            metric::fmt(sb.max)
        )
    } else {
        String::new()
    };
    Some(format!(
        "{}{a} reached {verdict} {b} ({}{u} against {}{u}; medians of {} repeats{caveat}).",
        capitalise_first(&describe_at(exp, &at)),
        metric::fmt(va),
        metric::fmt(vb),
        results.repeats,
        u = unit(m),
    ))
}

fn best(c: &ConclusionSpec, exp: &Experiment, results: &RunResults) -> Option<String> {
    let m = c.metric.get_ref();
    let at = target(c, results, None);
    let mut pts: Vec<(&PointRecord, f64)> = ok(results)
        .filter(|p| matches(p, &at))
        .filter_map(|p| p.summary.get(m).map(|s| (p, s.median)))
        .collect();
    if pts.is_empty() {
        return None;
    }
    pts.sort_by(|x, y| y.1.total_cmp(&x.1));
    // A simulated point is named by the axes that vary among the compared points.
    let name = |p: &PointRecord| {
        p.server.clone().unwrap_or_else(|| {
            let parts: Vec<String> = p
                .vars
                .iter()
                .filter(|(n, _)| !at.iter().any(|(a, _)| a == n))
                .map(|(n, v)| format!("{n} {v}"))
                .collect();
            if parts.is_empty() {
                p.label()
            } else {
                parts.join(", ")
            }
        })
    };
    let (hi, lo) = (pts[0], pts[pts.len() - 1]);
    let missing = results
        .points
        .iter()
        .filter(|p| matches(p, &at) && p.status == Status::Unavailable)
        .count();
    let tail = if missing > 0 {
        format!(" ({missing} unavailable here)")
    } else {
        String::new()
    };
    if pts.len() == 1 {
        return Some(format!(
            "{}only {} produced figures: {} {}{}{tail}.",
            describe_at(exp, &at),
            name(hi.0),
            label(m),
            metric::fmt(hi.1),
            unit(m)
        ));
    }
    Some(format!(
        "{}the highest {} was {} ({}{u}) and the lowest {} ({}{u}), {}x apart{tail}.",
        capitalise_first(&describe_at(exp, &at)),
        label(m),
        name(hi.0),
        metric::fmt(hi.1),
        name(lo.0),
        metric::fmt(lo.1),
        metric::fmt(if lo.1 > 0.0 {
            hi.1 / lo.1
        } else {
            f64::INFINITY
        }),
        u = unit(m),
    ))
}

fn scaling(c: &ConclusionSpec, exp: &Experiment, results: &RunResults) -> Option<String> {
    let m = c.metric.get_ref();
    let x = c.x.as_ref()?.get_ref();
    let at = target(c, results, Some(x));
    let mut servers: Vec<String> = Vec::new();
    for p in ok(results) {
        let s = p.server.clone().unwrap_or_default();
        if !servers.contains(&s) {
            servers.push(s);
        }
    }
    let mut parts = Vec::new();
    let mut range = None;
    for s in &servers {
        let mut pts: Vec<(f64, f64)> = ok(results)
            .filter(|p| p.server.clone().unwrap_or_default() == *s && matches(p, &at))
            .filter_map(|p| Some((p.var(x)?.as_f64()?, p.summary.get(m)?.median)))
            .collect();
        pts.sort_by(|a, b| a.0.total_cmp(&b.0));
        if let (Some(f), Some(l)) = (pts.first(), pts.last())
            && pts.len() >= 2
            && f.1 > 0.0
        {
            parts.push(format!("{}x for {s}", metric::fmt(l.1 / f.1)));
            range = Some((f.0, l.0));
        }
    }
    let (x0, x1) = range?;
    let axis = exp.axis(x)?;
    let d = axis.display_divisor.unwrap_or(1.0);
    let rest = describe_at(exp, &at);
    Some(capitalise_first(&format!(
        "{rest}going from {} to {} {}{}, the {} changed by {}.",
        metric::fmt_value(x0 / d),
        metric::fmt_value(x1 / d),
        axis.label,
        axis.unit
            .as_ref()
            .map_or(String::new(), |u| format!(" ({u})")),
        label(m),
        parts.join(", ")
    )))
}

fn model(c: &ConclusionSpec, results: &RunResults) -> Option<String> {
    let m = c.metric.get_ref();
    let mut errs: Vec<(f64, String)> = Vec::new();
    for p in ok(results) {
        let (Some(v), Some(x)) = (p.summary.get(m), p.exact.get(m)) else {
            continue;
        };
        if *x > 0.0 {
            errs.push(((v.median - x) / x * 100.0, p.label()));
        }
    }
    if errs.is_empty() {
        return None;
    }
    let max = errs.iter().max_by(|a, b| a.0.abs().total_cmp(&b.0.abs()))?;
    let mean = errs.iter().map(|e| e.0.abs()).sum::<f64>() / errs.len() as f64;
    let nstar = ok(results).find_map(|p| p.exact.get("saturation_users").copied());
    let what = if results.points.iter().any(|p| p.server.is_some()) {
        "Measured"
    } else {
        "Simulated"
    };
    Some(format!(
        "{what} {} was within {}% of the exact model at every point (mean absolute error {}%, largest {}{}% at {}){}.",
        label(m),
        metric::fmt(max.0.abs()),
        metric::fmt(mean),
        if max.0 >= 0.0 { "+" } else { "" },
        metric::fmt(max.0),
        max.1,
        nstar.map_or(String::new(), |n| format!(
            "; the model saturates at N* = {} users",
            metric::fmt(n)
        ))
    ))
}

fn capitalise_first(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().collect::<String>() + c.as_str(),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::Stat;
    use std::collections::BTreeMap;

    const EXP: &str = r#"
name = "t"
title = "T"
question = "Q"
[[axis]]
name = "n"
label = "users"
values = [1, 8]
[[server]]
label = "a"
engine = "pool"
[[server]]
label = "b"
engine = "serial"
[load]
users = "{n}"
requests = 10
path = "/x"
[conclusion]
kind = "ratio"
metric = "throughput"
a = "a"
b = "b"
"#;

    fn rec(server: &str, n: i64, tput: f64) -> PointRecord {
        PointRecord {
            index: 0,
            server: Some(server.into()),
            vars: vec![("n".into(), Scalar::Int(n))],
            status: Status::Ok,
            reason: None,
            command: None,
            repeats: vec![],
            summary: BTreeMap::from([("throughput".to_string(), Stat::exact(tput))]),
            predicted: BTreeMap::new(),
            exact: BTreeMap::new(),
            notes: vec![],
        }
    }

    fn results(points: Vec<PointRecord>) -> RunResults {
        RunResults {
            schema: crate::results::SCHEMA.into(),
            experiment: "t".into(),
            source_file: "t".into(),
            source: EXP.into(),
            command: "x".into(),
            quick: false,
            repeats: 3,
            started_utc: "now".into(),
            duration_s: 1.0,
            machine: crate::machine::Machine::detect("0", None),
            placement: "p".into(),
            interrupted: false,
            points,
        }
    }

    #[test]
    fn ratio_compares_at_the_last_axis_value() {
        let exp = Experiment::parse(EXP, "t").unwrap();
        let r = results(vec![
            rec("a", 1, 10.0),
            rec("b", 1, 10.0),
            rec("a", 8, 300.0),
            rec("b", 8, 100.0),
        ]);
        let s = conclude(&exp, &r);
        assert!(
            s.starts_with("At users 8, a reached 3.00x the throughput of b"),
            "{s}"
        );
    }

    #[test]
    fn best_and_scaling_follow_the_numbers() {
        let text = EXP.replace("kind = \"ratio\"", "kind = \"best\"");
        let exp = Experiment::parse(&text, "t").unwrap();
        let r = results(vec![rec("a", 8, 50.0), rec("b", 8, 200.0)]);
        let s = conclude(&exp, &r);
        assert!(
            s.contains("highest throughput was b (200") && s.contains("lowest a (50"),
            "{s}"
        );
        let text = EXP.replace("kind = \"ratio\"", "kind = \"scaling\"\nx = \"n\"");
        let exp = Experiment::parse(&text, "t").unwrap();
        let r = results(vec![rec("a", 1, 10.0), rec("a", 8, 40.0)]);
        let s = conclude(&exp, &r);
        assert!(
            s.contains("from 1 to 8 users") && s.contains("4.00x for a"),
            "{s}"
        );
    }

    #[test]
    fn no_data_says_so() {
        let exp = Experiment::parse(EXP, "t").unwrap();
        let mut p = rec("a", 8, 1.0);
        p.status = Status::Failed;
        let s = conclude(&exp, &results(vec![p]));
        assert!(s.starts_with("Not enough points"), "{s}");
    }
}
