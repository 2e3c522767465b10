//! The seed's claims, tested: each built-in experiment declares the claims of
//! its seed report that it tests (`[[claim]]`), and the report opens with a
//! table of verdicts: reproduced, contradicted, or not testable here, each
//! with its reason and the numbers behind it.
//!
//! A verdict is decided by Welch's t-test at 95% on the repeats (or the
//! simulator's replications), never by eye: "higher" needs a significant
//! difference in that direction; "equal" and "flat" need the 95% interval of
//! the difference inside ±`within_pct` (an equivalence, which a test of
//! difference cannot give), and a difference the interval puts beyond it
//! contradicts them. Where the interval is too wide to decide either way, or
//! the points are missing (a `--quick` sweep), or one repeat has no spread, the
//! claim is not testable here and the reason says so, instead of a guess.

use crate::experiment::{ClaimSpec, ClaimTest, Expect, Experiment};
use crate::metric::{self, Metric};
use crate::results::{PointRecord, RunResults, Stat, Status};
use crate::stats::Welch;

/// "Equal" and "flat" by default: within 10% of each other.
const WITHIN_PCT: f64 = 10.0;

/// What the run says about a claim.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// The run shows what the seed claims.
    Reproduced,
    /// The run shows the opposite, or no such effect.
    Contradicted,
    /// This experiment cannot decide it here.
    NotTestable,
}

impl Verdict {
    /// The word in the table.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Reproduced => "reproduced",
            Verdict::Contradicted => "contradicted",
            Verdict::NotTestable => "not testable here",
        }
    }
}

/// A claim with its verdict and reason.
#[derive(Debug, Clone, PartialEq)]
pub struct Tested {
    /// The claim, as the seed makes it.
    pub text: String,
    /// The verdict.
    pub verdict: Verdict,
    /// Why, with the numbers.
    pub reason: String,
}

/// Every claim of the experiment, tested on the run.
pub fn test_all(exp: &Experiment, results: &RunResults) -> Vec<Tested> {
    exp.claims.iter().map(|c| test(exp, c, results)).collect()
}

fn test(exp: &Experiment, c: &ClaimSpec, results: &RunResults) -> Tested {
    let context = c.reason.clone().unwrap_or_default();
    let done = |verdict, reason: String| Tested {
        text: c.text.clone(),
        verdict,
        reason: if context.is_empty() || *c.test.get_ref() == ClaimTest::Untestable {
            reason
        } else {
            format!("{reason} ({context})")
        },
    };
    let untestable = |why: String| done(Verdict::NotTestable, why);
    let metric = c.metric.as_ref().map(|m| *m.get_ref());
    let expect = c.expect.as_ref().map(|e| *e.get_ref());
    let within = c.within_pct.unwrap_or(WITHIN_PCT);
    match (*c.test.get_ref(), metric, expect) {
        (ClaimTest::Untestable, _, _) => untestable(if context.is_empty() {
            "this experiment does not measure it".into()
        } else {
            context.clone()
        }),
        (ClaimTest::Compare, Some(m), Some(e)) => {
            let pick = |own: &Option<toml::Spanned<toml::Table>>| {
                let sel = merged(c, own);
                // Named by its own values ("comparison, RR"), the shared `at` said once.
                let name = own.as_ref().map_or_else(String::new, |t| {
                    t.get_ref()
                        .iter()
                        .map(|(k, v)| match v {
                            toml::Value::String(s) => s.clone(),
                            other => format!("{k} {other}"),
                        })
                        .collect::<Vec<_>>()
                        .join(", ")
                });
                one(results, &sel).and_then(|p| {
                    p.summary
                        .get(&m)
                        .copied()
                        .map(|s| {
                            (
                                if name.is_empty() {
                                    p.label()
                                } else {
                                    name.clone()
                                },
                                s,
                            )
                        })
                        .ok_or_else(|| format!("{} has no {}", p.label(), m.label()))
                })
            };
            match (pick(&c.a), pick(&c.b)) {
                (Ok((an, a)), Ok((bn, b))) => {
                    let (v, why) = decide(m, (&an, a), (&bn, b), e, within);
                    let at = c
                        .at
                        .as_ref()
                        .map_or_else(String::new, |t| format!("at {}: ", describe(t.get_ref())));
                    done(v, at + &why)
                }
                (Err(e), _) | (_, Err(e)) => untestable(e),
            }
        }
        (ClaimTest::Trend, Some(m), Some(e)) => {
            let Some(x) = c.x.as_ref().map(|x| x.get_ref().as_str()) else {
                return untestable("the claim names no axis".into());
            };
            let sel = merged(c, &c.a);
            let mut pts: Vec<(f64, &PointRecord)> = results
                .points
                .iter()
                .filter(|p| p.status == Status::Ok && selects(p, &sel))
                .filter_map(|p| Some((p.var(x)?.as_f64()?, p)))
                .collect();
            pts.sort_by(|a, b| a.0.total_cmp(&b.0));
            let (Some(first), Some(last)) = (pts.first(), pts.last()) else {
                return untestable(format!("no point of this run has {}", describe(&sel)));
            };
            if pts.len() < 2 {
                return untestable(format!("only one value of {x} in this run"));
            }
            let axis = exp.axis(x).map_or(x.to_string(), |a| a.label.clone());
            let name = |p: &(f64, &PointRecord)| format!("{axis} {}", metric::fmt_tick(p.0));
            match (first.1.summary.get(&m), last.1.summary.get(&m)) {
                (Some(f), Some(l)) => {
                    let (v, why) = decide(m, (&name(last), *l), (&name(first), *f), e, within);
                    done(v, why)
                }
                _ => untestable(format!("{} is unmeasurable at an end of {axis}", m.label())),
            }
        }
        _ => untestable("the claim's check is incomplete (metric and expect)".into()),
    }
}

/// `a` against `b` as the claim expects; the reason gives both means with
/// their intervals and the test.
fn decide(
    m: Metric,
    a: (&str, Stat),
    b: (&str, Stat),
    e: Expect,
    within: f64,
) -> (Verdict, String) {
    let fig = |s: &Stat| {
        if s.n >= 2 {
            format!("{} ± {}", metric::fmt(s.mean), metric::fmt(s.half_width()))
        } else {
            metric::fmt(s.mean)
        }
    };
    let figures = format!(
        "{}: {} {} against {} {} {}",
        m.label(),
        a.0,
        fig(&a.1),
        b.0,
        fig(&b.1),
        m.unit()
    );
    let rel = if b.1.mean != 0.0 {
        (a.1.mean - b.1.mean) / b.1.mean.abs() * 100.0
    } else {
        f64::INFINITY
    };
    // diff = a - b
    let test = Welch::test(&b.1.sample(), &a.1.sample());
    let Some(w) = test else {
        return (
            Verdict::NotTestable,
            format!("{figures}; one repeat, so no test of the difference"),
        );
    };
    let p = if w.p < 0.001 {
        "p < 0.001".to_string()
    } else {
        format!("p = {:.3}", w.p)
    };
    let sig = w.significant();
    let change = if rel.is_finite() {
        format!("{rel:+.1}%")
    } else {
        "from 0".into()
    };
    let said = format!("{figures} ({change}, Welch {p})");
    // The difference's 95% interval against the margin that counts as "no
    // effect" (an equivalence test: TOST at 95% is the same as the 90%
    // interval inside the margin; this stricter 95% one errs on the side
    // of "not testable").
    let margin = within / 100.0 * b.1.mean.abs();
    let inside = w.diff.abs() + w.half_width <= margin;
    let beyond = w.diff.abs() - w.half_width > margin;
    // Undecided: an interval wider than the margin is noise; a narrower one
    // that crosses the margin's edge is a difference measured well enough
    // whose size sits at the margin, which is not the same thing to a reader.
    let noisy = || {
        let difference = format!(
            "{} ± {} {}",
            metric::fmt(w.diff),
            metric::fmt(w.half_width),
            m.unit()
        );
        let why = if w.half_width < margin {
            format!(
                "{said}: the difference's 95% interval, {difference}, straddles the ±{within}% \
                 margin, so it is neither inside nor beyond it"
            )
        } else {
            format!("{said}: too noisy to decide (the difference is {difference})")
        };
        (Verdict::NotTestable, why)
    };
    match e {
        Expect::Higher | Expect::Rises | Expect::Lower | Expect::Falls => {
            let up = matches!(e, Expect::Higher | Expect::Rises);
            if sig && (w.diff > 0.0) == up {
                (Verdict::Reproduced, format!("{said}: significant"))
            } else if sig {
                (
                    Verdict::Contradicted,
                    format!("{said}: significant, the other way"),
                )
            } else if inside {
                (
                    Verdict::Contradicted,
                    format!("{said}: no difference beyond ±{within}% at 95%"),
                )
            } else {
                noisy()
            }
        }
        Expect::Equal | Expect::Flat => {
            if inside {
                (
                    Verdict::Reproduced,
                    format!("{said}: the difference's 95% interval is within ±{within}%"),
                )
            } else if beyond {
                (
                    Verdict::Contradicted,
                    format!("{said}: the difference's 95% interval is beyond ±{within}%"),
                )
            } else {
                noisy()
            }
        }
    }
}

/// The claim's `at` and a selector, merged.
fn merged(c: &ClaimSpec, sel: &Option<toml::Spanned<toml::Table>>) -> toml::Table {
    let mut t =
        c.at.as_ref()
            .map(|a| a.get_ref().clone())
            .unwrap_or_default();
    if let Some(s) = sel {
        t.extend(s.get_ref().clone());
    }
    t
}

fn value_text(v: &toml::Value) -> String {
    match v {
        toml::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Whether a point has every value of a selector (`server` names its server).
fn selects(p: &PointRecord, sel: &toml::Table) -> bool {
    sel.iter().all(|(k, v)| {
        let want = value_text(v);
        if k == "server" {
            return p.server.as_deref() == Some(want.as_str());
        }
        p.var(k).is_some_and(|x| {
            x.to_string() == want
                || x.as_f64()
                    .zip(want.parse::<f64>().ok())
                    .is_some_and(|(a, b)| a == b)
        })
    })
}

fn describe(sel: &toml::Table) -> String {
    let parts: Vec<String> = sel
        .iter()
        .map(|(k, v)| format!("{k} = {}", value_text(v)))
        .collect();
    parts.join(", ")
}

/// The one point with figures that a selector picks, or why there is none.
fn one<'a>(results: &'a RunResults, sel: &toml::Table) -> Result<&'a PointRecord, String> {
    let found: Vec<&PointRecord> = results.points.iter().filter(|p| selects(p, sel)).collect();
    match found.as_slice() {
        [] => Err(format!("no point of this run has {}", describe(sel))),
        [p] if p.status == Status::Ok => Ok(p),
        [p] => Err(format!("{} is {}", p.label(), p.status.as_str())),
        _ => Err(format!(
            "{} points have {}; the claim must pick one",
            found.len(),
            describe(sel)
        )),
    }
}

/// The table at the top of a report; empty when the experiment has no claims.
pub(crate) fn html(exp: &Experiment, results: &RunResults) -> String {
    use crate::html::esc;
    use std::fmt::Write as _;
    let tested = test_all(exp, results);
    if tested.is_empty() {
        return String::new();
    }
    let mut h = String::new();
    // An experiment of no seed states its own claims (hypotheses written
    // before the run, and what it expects of the mechanism).
    let heading = match exp.seed.as_deref() {
        Some(seed) => format!("Seed {} claims", esc(seed)),
        None => "Claims".to_string(),
    };
    let _ = writeln!(
        h,
        "<h2>{heading}</h2><div class=\"wide\"><table><thead><tr><th class=\"l\">claim</th>\
         <th class=\"l\">verdict</th><th class=\"l\">why</th></tr></thead><tbody>"
    );
    for t in &tested {
        let class = match t.verdict {
            Verdict::Reproduced => "ok",
            Verdict::Contradicted => "failed",
            Verdict::NotTestable => "unavailable",
        };
        let _ = writeln!(
            h,
            "<tr class=\"{class}\"><td class=\"l\">{}</td><td class=\"l\"><strong>{}</strong></td><td class=\"l notes\">{}</td></tr>",
            esc(&t.text),
            t.verdict.as_str(),
            esc(&t.reason)
        );
    }
    if results.quick {
        h.push_str("</tbody></table></div><p>A <code>--quick</code> run has few points and short windows: its verdicts check the machinery, not the claims.</p>\n");
    } else {
        h.push_str("</tbody></table></div>\n");
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plot::figure::tests::{EXP, quick_run};

    fn claims(text: &str) -> Vec<Tested> {
        let exp = Experiment::parse(&(EXP.to_string() + text), "t.toml").unwrap();
        let mut r = quick_run(&exp);
        // Three repeats of 5% spread around each synthetic figure.
        for p in &mut r.points {
            for s in p.summary.values_mut() {
                let v = s.mean;
                *s = Stat::of(&[v * 0.95, v, v * 1.05]).unwrap();
            }
        }
        test_all(&exp, &r)
    }

    #[test]
    fn a_trend_a_comparison_and_an_untestable_claim_get_their_verdicts() {
        let t = claims(
            r#"
[[claim]]
text = "Throughput rises with users."
test = "trend"
metric = "throughput"
x = "users"
a = { server = "pool", workers = 4 }
expect = "rises"

[[claim]]
text = "Throughput is flat in users."
test = "trend"
metric = "throughput"
x = "users"
a = { server = "pool", workers = 4 }
expect = "flat"

[[claim]]
text = "More workers are slower."
test = "compare"
metric = "throughput"
at = { server = "pool", users = 8 }
a = { workers = 4 }
b = { workers = 1 }
expect = "lower"

[[claim]]
text = "Ethernet saturates."
test = "untestable"
reason = "loopback only"

[[claim]]
text = "At 1000 users."
test = "compare"
metric = "throughput"
a = { users = 1000 }
b = { users = 1 }
expect = "higher"
"#,
        );
        assert_eq!(t[0].verdict, Verdict::Reproduced, "{:?}", t[0]);
        assert!(t[0].reason.contains("significant"), "{}", t[0].reason);
        assert_eq!(t[1].verdict, Verdict::Contradicted, "{:?}", t[1]);
        assert_eq!(t[2].verdict, Verdict::Contradicted, "{:?}", t[2]);
        assert!(t[2].reason.contains("the other way"), "{}", t[2].reason);
        assert_eq!(
            (t[3].verdict, t[3].reason.as_str()),
            (Verdict::NotTestable, "loopback only")
        );
        assert_eq!(t[4].verdict, Verdict::NotTestable);
        assert!(
            t[4].reason.starts_with("no point of this run"),
            "{}",
            t[4].reason
        );
    }

    /// Regression: two noisy quick repeats read as "contradicted" for a claim
    /// of equality; an interval too wide to decide is not a verdict.
    #[test]
    fn too_noisy_to_decide_is_not_testable_and_a_tight_equality_is_reproduced() {
        let noisy_a = Stat::of(&[1000.0, 9000.0]).unwrap();
        let noisy_b = Stat::of(&[2000.0, 4000.0]).unwrap();
        for e in [Expect::Equal, Expect::Higher] {
            let (v, why) = decide(Metric::Throughput, ("a", noisy_a), ("b", noisy_b), e, 10.0);
            assert_eq!(v, Verdict::NotTestable, "{why}");
            assert!(why.contains("too noisy to decide"), "{why}");
        }
        let a = Stat::of(&[100.0, 101.0, 99.0, 100.5]).unwrap();
        let b = Stat::of(&[100.2, 99.8, 100.0, 100.4]).unwrap();
        let (v, _) = decide(Metric::Throughput, ("a", a), ("b", b), Expect::Equal, 10.0);
        assert_eq!(v, Verdict::Reproduced);
        // A tight difference of about -10% against a 10% margin: measured
        // well, but on the margin's edge, and said so rather than "noisy".
        let edge = Stat::of(&[90.0, 90.4, 89.6, 90.2]).unwrap();
        let (v, why) = decide(
            Metric::Throughput,
            ("a", edge),
            ("b", b),
            Expect::Equal,
            10.0,
        );
        assert_eq!(v, Verdict::NotTestable, "{why}");
        assert!(why.contains("straddles the ±10% margin"), "{why}");
        // No effect beyond the margin contradicts "higher".
        let (v, why) = decide(Metric::Throughput, ("a", a), ("b", b), Expect::Higher, 10.0);
        assert_eq!(v, Verdict::Contradicted, "{why}");
    }
}
