//! The seed's claims, tested: each built-in experiment declares the claims of
//! its seed report that it tests (`[[claim]]`), and the report opens with a
//! table of verdicts, each with its reason and the numbers behind it.
//!
//! Five verdicts, kept apart because a reader acts on each differently:
//! - **reproduced** and **contradicted**: the run decides, by a test at 95%.
//! - **inconclusive**: measured, but the interval cannot decide; the reason says
//!   how many repeats would (at the spread measured).
//! - **not testable**: this setup cannot express the claim (the reason says
//!   why); a claim the model cannot represent is not contradicted by it.
//! - **no evidence**: the points the claim rests on were not measured in this
//!   run (a `--quick` sweep, a failed point, a figure that could not be
//!   measured), or were flagged by a check that makes them say nothing about
//!   the server: a saturated client, or a failed Little's law check. Such a
//!   point never carries a verdict.
//!
//! A comparison is decided by Welch's t-test on the repeats (or the
//! simulator's replications), never by eye: "higher" needs a significant
//! difference in that direction; "equal" needs the 95% interval of the
//! difference inside ±`within_pct` (an equivalence, which a test of difference
//! cannot give), and a difference the interval puts beyond it contradicts it.
//! A trend is judged on every point of its curve, not on its two ends: the
//! slope of the points' means against the axis (its logarithm on a log axis),
//! with its 95% interval, and every step between neighbours, so that a curve
//! that rises and then falls is not "rising".

use crate::check::CheckKind;
use crate::experiment::{ClaimSpec, ClaimTest, Expect, Experiment};
use crate::metric::{self, Metric};
use crate::sample::{CONFIDENCE, Welch, t_cdf, t_quantile};
use crate::store::results::{PointRecord, RunResults, Stat, Status};

/// "Equal" and "flat" by default: within 10% of each other.
const WITHIN_PCT: f64 = 10.0;

/// What the run says about a claim.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// The run shows what the seed claims.
    Reproduced,
    /// The run shows the opposite, or no such effect.
    Contradicted,
    /// Measured, but the interval cannot decide; the reason says what would.
    Inconclusive,
    /// This setup cannot express the claim; the reason says why.
    NotTestable,
    /// The points it rests on are missing, failed or flagged (a saturated
    /// client, a failed Little's law check): nothing to judge the server on.
    NoEvidence,
}

impl Verdict {
    /// The word in the table.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Reproduced => "reproduced",
            Verdict::Contradicted => "contradicted",
            Verdict::Inconclusive => "inconclusive",
            Verdict::NotTestable => "not testable",
            Verdict::NoEvidence => "no evidence",
        }
    }
}

/// Why a point cannot be evidence about the server, if it cannot (the claims
/// and the conclusion both ask), with what judging it would need.
pub(crate) fn disqualified(p: &PointRecord) -> Option<String> {
    let (why, needs) = flagged(p)?;
    Some(format!("{why}; judging it needs {}", needs.join(", and ")))
}

/// Which disqualifying checks `p` failed (`"epoll, conns=512 is flagged
/// (client check failed: …)"`), and what judging it would need, one entry
/// per kind of failure: apart, so that a claim resting on several points can
/// say the need once.
fn flagged(p: &PointRecord) -> Option<(String, Vec<&'static str>)> {
    let failing: Vec<_> = p
        .checks
        .iter()
        .filter(|c| !c.passed && to_judge_it(c.kind).is_some())
        .collect();
    if failing.is_empty() {
        return None;
    }
    let failed: Vec<String> = failing
        .iter()
        .map(|c| format!("{} check failed: {}", c.kind.label(), c.detail))
        .collect();
    let mut needs: Vec<&str> = failing.iter().filter_map(|c| to_judge_it(c.kind)).collect();
    needs.dedup();
    Some((
        format!("{} is flagged ({})", p.label(), failed.join("; ")),
        needs,
    ))
}

/// Which checks disqualify a point, and what it would need before it could
/// be judged (METHOD.md: a verdict that cannot decide says what would). A
/// failed check of these means the point says nothing about the server: the
/// client was the bottleneck, the measurement broke Little's law (a client
/// that fell behind, an end-of-run effect), or another process took CPU from
/// the server or the client during a window. `None`: the check's failure is
/// shown beside the point but does not bar it (errors and unfinished requests
/// are part of what a server does under load; a short window or a CPU figure
/// off its floor is said, not disqualifying).
fn to_judge_it(kind: CheckKind) -> Option<&'static str> {
    match kind {
        CheckKind::Client => Some(
            "a load generator with CPU to spare (more CPUs than the server's, or a machine of its own)",
        ),
        CheckKind::LittlesLaw => {
            Some("windows that obey Little's law (the check's terms say which one is off)")
        }
        CheckKind::Machine => Some("a rerun with nothing else running on the machine"),
        CheckKind::Errors | CheckKind::Unfinished | CheckKind::Window | CheckKind::Cpu => None,
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
    let no_evidence = |why: String| {
        done(
            Verdict::NoEvidence,
            if results.quick {
                format!("{why} (a --quick sweep measures few points)")
            } else {
                why
            },
        )
    };
    let metric = c.metric.as_ref().map(|m| *m.get_ref());
    let expect = c.expect.as_ref().map(|e| *e.get_ref());
    let within = c.within_pct.unwrap_or(WITHIN_PCT);
    match (*c.test.get_ref(), metric, expect) {
        (ClaimTest::Untestable, _, _) => untestable(if context.is_empty() {
            "this experiment does not measure it".into()
        } else {
            context.clone()
        }),
        (ClaimTest::Prediction, _, _) => match crate::report::accuracy::table(exp, results) {
            None => no_evidence("no point has both a measurement and a prediction".into()),
            Some(t) if t.verdicts.is_empty() => untestable(
                "the experiment states no accuracy target to judge the prediction by".into(),
            ),
            Some(t) => {
                let missed = t.verdicts.iter().filter(|v| !v.misses.is_empty()).count();
                let mut sentence = crate::report::accuracy::sentence(&t).unwrap_or_default();
                if let Some(note) = crate::report::construction::note(exp) {
                    sentence = format!("{sentence} {note}");
                }
                if missed == 0 {
                    done(
                        Verdict::Reproduced,
                        format!("every accuracy target met: {sentence}"),
                    )
                } else {
                    done(
                        Verdict::Contradicted,
                        format!(
                            "{missed} of {} accuracy targets missed: {sentence}",
                            t.verdicts.len()
                        ),
                    )
                }
            }
        },
        (ClaimTest::Compare, Some(m), Some(e)) if c.x.is_some() => {
            let x = c.x.as_ref().map_or("", |x| x.get_ref().as_str());
            let (v, why) = compare_over(exp, c, results, m, e, x, within);
            if v == Verdict::NoEvidence {
                no_evidence(why)
            } else {
                done(v, why)
            }
        }
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
                    if let Some(why) = disqualified(p) {
                        return Err(why);
                    }
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
                        .ok_or_else(|| match p.unmeasurable.get(&m) {
                            Some(why) => {
                                format!("{} has no {} figure: {why}", p.label(), m.label())
                            }
                            None => format!("{} has no {} figure", p.label(), m.label()),
                        })
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
                (Err(e), _) | (_, Err(e)) => no_evidence(e),
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
            if pts.is_empty() {
                return no_evidence(format!("no point of this run has {}", describe(&sel)));
            }
            let axis_def = exp.axis(x);
            let axis = axis_def.map_or(x.to_string(), |a| a.label.clone());
            let log = axis_def.is_some_and(|a| a.log);
            let mut left_out = Vec::new();
            let mut needs: Vec<&str> = Vec::new();
            let mut curve = Vec::new();
            for (v, p) in &pts {
                if let Some((why, need)) = flagged(p) {
                    left_out.push(why);
                    for n in need {
                        if !needs.contains(&n) {
                            needs.push(n);
                        }
                    }
                } else if let Some(s) = p.summary.get(&m) {
                    curve.push((*v, format!("{axis} {}", metric::fmt_tick(*v)), *s));
                } else {
                    left_out.push(format!("{} has no {} figure", p.label(), m.label()));
                }
            }
            let (v, why) = if curve.len() < 2 {
                (
                    Verdict::NoEvidence,
                    format!(
                        "{} point(s) of the curve can be judged; a trend needs two",
                        curve.len()
                    ),
                )
            } else {
                trend(m, &curve, log, e, within)
            };
            let why = if left_out.is_empty() {
                why
            } else if needs.is_empty() {
                format!("{why}; left out: {}", left_out.join("; "))
            } else {
                format!(
                    "{why}; left out: {}; judging them needs {}",
                    left_out.join("; "),
                    needs.join(", and ")
                )
            };
            if v == Verdict::NoEvidence {
                no_evidence(why)
            } else {
                done(v, why)
            }
        }
        _ => untestable("the claim's check is incomplete (metric and expect)".into()),
    }
}

/// `a` against `b` at every value of axis `x` ("for all user values"): each
/// pair by Welch's test, and the curve as a whole by the relative differences
/// (a − b) / b of its pairs, their mean with a Student-t interval across the
/// pairs. A claim about every value is not judged at one of them: a small
/// difference that no single pair can tell from noise, but that has the same
/// sign at nearly every pair, is a difference.
///
/// `higher`/`lower` is contradicted by a pair significantly the other way, or
/// by a mean difference whose interval lies within ±`within`%; reproduced by a
/// mean difference significantly in the claim's direction with no pair
/// against it; inconclusive otherwise. `equal` is reproduced when every pair
/// is equal within the margin, contradicted when one is beyond it.
fn compare_over(
    exp: &Experiment,
    c: &ClaimSpec,
    results: &RunResults,
    m: Metric,
    e: Expect,
    x: &str,
    within: f64,
) -> (Verdict, String) {
    let axis = exp.axis(x).map_or(x.to_string(), |a| a.label.clone());
    let (sel_a, sel_b) = (merged(c, &c.a), merged(c, &c.b));
    let mut left_out = Vec::new();
    // (x, a's figure, b's figure)
    let mut pairs: Vec<(f64, String, Stat, Stat)> = Vec::new();
    for pa in results
        .points
        .iter()
        .filter(|p| p.status == Status::Ok && selects(p, &sel_a))
    {
        let Some(v) = pa.var(x) else { continue };
        let mut sel = sel_b.clone();
        sel.insert(x.to_string(), toml::Value::String(v.to_string()));
        let pb = match one(results, &sel) {
            Ok(pb) => pb,
            Err(why) => {
                left_out.push(why);
                continue;
            }
        };
        if let Some(why) = disqualified(pa).or_else(|| disqualified(pb)) {
            left_out.push(why);
            continue;
        }
        match (pa.summary.get(&m), pb.summary.get(&m), v.as_f64()) {
            (Some(a), Some(b), Some(xv)) => pairs.push((xv, metric::fmt_tick(xv), *a, *b)),
            _ => left_out.push(format!(
                "{} or its pair has no {} figure",
                pa.label(),
                m.label()
            )),
        }
    }
    pairs.sort_by(|p, q| p.0.total_cmp(&q.0));
    let left = if left_out.is_empty() {
        String::new()
    } else {
        format!("; left out: {}", left_out.join("; "))
    };
    if pairs.len() < 2 {
        return (
            Verdict::NoEvidence,
            format!(
                "{} pair(s) of points can be judged across {axis}; a claim about every value \
                 needs two{left}",
                pairs.len()
            ),
        );
    }
    let (an, bn) = (
        c.a.as_ref()
            .map_or(String::new(), |t| describe(t.get_ref())),
        c.b.as_ref()
            .map_or(String::new(), |t| describe(t.get_ref())),
    );
    let mut above = Vec::new();
    let mut below = Vec::new();
    let mut sig_above = Vec::new();
    let mut sig_below = Vec::new();
    let mut beyond = Vec::new();
    let mut rels = Vec::new();
    for (_, name, a, b) in &pairs {
        if b.mean != 0.0 {
            rels.push((a.mean - b.mean) / b.mean.abs() * 100.0);
        }
        if a.mean > b.mean {
            above.push(name.clone());
        } else if a.mean < b.mean {
            below.push(name.clone());
        }
        if let Some(w) = Welch::test(&b.sample(), &a.sample())
            && w.significant()
        {
            if w.diff > 0.0 {
                sig_above.push(name.clone());
            } else {
                sig_below.push(name.clone());
            }
            if w.diff.abs() - w.half_width > within / 100.0 * b.mean.abs() {
                beyond.push(name.clone());
            }
        }
    }
    let n = rels.len() as f64;
    let mean = rels.iter().sum::<f64>() / n;
    let sd = (rels.iter().map(|r| (r - mean).powi(2)).sum::<f64>() / (n - 1.0).max(1.0)).sqrt();
    let half = t_quantile(1.0 - (1.0 - CONFIDENCE) / 2.0, n - 1.0) * sd / n.sqrt();
    let list = |v: &[String]| {
        if v.is_empty() {
            String::new()
        } else {
            format!(" ({axis} {})", v.join(", "))
        }
    };
    let said = format!(
        "{}: {an} against {bn} at {} values of {axis}: above at {}{}, below at {}{}; \
         significant (Welch at 95%) above at {} and below at {}; across the curve (a − b) / b = \
         {mean:+.2}% ± {half:.2}% (mean of the {} pairs, 95% Student-t)",
        m.label(),
        pairs.len(),
        above.len(),
        list(&above),
        below.len(),
        list(&below),
        sig_above.len(),
        sig_below.len(),
        rels.len(),
    );
    let up = matches!(e, Expect::Higher | Expect::Rises);
    let (against, with) = if up {
        (&sig_below, mean - half > 0.0)
    } else {
        (&sig_above, mean + half < 0.0)
    };
    let verdict = match e {
        Expect::Equal | Expect::Flat => {
            if !beyond.is_empty() {
                (
                    Verdict::Contradicted,
                    format!("{said}: beyond ±{within}% at {axis} {}", beyond.join(", ")),
                )
            } else if mean.abs() + half <= within {
                (
                    Verdict::Reproduced,
                    format!("{said}: within ±{within}% across the curve"),
                )
            } else {
                (
                    Verdict::Inconclusive,
                    format!(
                        "{said}: the interval straddles ±{within}%; more replications or points would decide"
                    ),
                )
            }
        }
        _ if !against.is_empty() => (
            Verdict::Contradicted,
            format!(
                "{said}: significantly the other way at {axis} {}",
                against.join(", ")
            ),
        ),
        _ if with => (
            Verdict::Reproduced,
            format!("{said}: significant across the curve, and at no value the other way"),
        ),
        _ if mean.abs() + half <= within => (
            Verdict::Contradicted,
            format!("{said}: no difference beyond ±{within}% across the curve"),
        ),
        _ => (
            Verdict::Inconclusive,
            format!(
                "{said}: the interval includes 0; more replications at each value would decide"
            ),
        ),
    };
    (verdict.0, verdict.1 + &left)
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
            Verdict::Inconclusive,
            format!(
                "{figures}; one repeat, so no test of the difference (two or more repeats on each side would give one)"
            ),
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
    let repeats = a.1.n.min(b.1.n);
    let noisy = |needed_half_width: f64| {
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
        (
            Verdict::Inconclusive,
            format!(
                "{why}; {}",
                what_would_decide(repeats, w.half_width, needed_half_width)
            ),
        )
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
                // Significant needs the interval inside |diff|; "no effect"
                // needs it inside the margin less |diff|: whichever is nearer.
                noisy(w.diff.abs().max(margin - w.diff.abs()))
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
                noisy((margin - w.diff.abs()).abs())
            }
        }
    }
}

/// What would decide an interval of `half_width` that must shrink to `needed`:
/// the half-width falls as 1/√n, so about n·(half_width/needed)² repeats per
/// side at the spread measured (a little fewer, as the t quantile falls too).
fn what_would_decide(repeats: u32, half_width: f64, needed: f64) -> String {
    let n = f64::from(repeats.max(2));
    if needed <= 0.0 || !needed.is_finite() {
        return "the difference sits on the margin's edge: no number of repeats would decide it"
            .into();
    }
    let more = (n * (half_width / needed).powi(2)).ceil();
    if more > 1000.0 {
        "over 1,000 repeats per side would be needed at this spread: a claim this close to its \
         margin is out of the lab's reach"
            .into()
    } else {
        format!("about {more} repeats per side (now {repeats}) would decide it at this spread")
    }
}

/// A trend over every judged point of a curve: (x, name, figure) in x order.
///
/// The slope of the means against x (ln x on a log axis), by least squares,
/// with its standard error from the points' own intervals (each mean's
/// variance sd²/n) and the pooled degrees of freedom of their repeats; and
/// each step between neighbours by Welch's test. "rises" is reproduced when
/// the slope is significantly positive and no step falls significantly, and
/// contradicted by a significant slope the other way or a significant step
/// against it, or by a change across the curve within ±`within`% ("flat").
/// "flat" is reproduced when the change the slope makes across the curve,
/// with its interval, stays within ±`within`% of the first point.
fn trend(
    m: Metric,
    curve: &[(f64, String, Stat)],
    log: bool,
    e: Expect,
    within: f64,
) -> (Verdict, String) {
    let xs: Vec<f64> = curve
        .iter()
        .map(|(x, _, _)| {
            if log {
                x.max(f64::MIN_POSITIVE).ln()
            } else {
                *x
            }
        })
        .collect();
    let k = xs.len() as f64;
    let x_mean = xs.iter().sum::<f64>() / k;
    let sxx: f64 = xs.iter().map(|x| (x - x_mean).powi(2)).sum();
    let means: Vec<f64> = curve.iter().map(|(_, _, s)| s.mean).collect();
    let y_mean = means.iter().sum::<f64>() / k;
    let slope = xs
        .iter()
        .zip(&means)
        .map(|(x, y)| (x - x_mean) * (y - y_mean))
        .sum::<f64>()
        / sxx;
    let var: f64 = xs
        .iter()
        .zip(curve)
        .map(|(x, (_, _, s))| {
            (x - x_mean).powi(2) * s.sd.unwrap_or(0.0).powi(2) / f64::from(s.n.max(1))
        })
        .sum::<f64>()
        / sxx.powi(2);
    let df: f64 = curve
        .iter()
        .map(|(_, _, s)| f64::from(s.n.saturating_sub(1)))
        .sum();
    let figures = curve
        .iter()
        .map(|(_, name, s)| {
            if s.n >= 2 {
                format!(
                    "{name}: {} ± {}",
                    metric::fmt(s.mean),
                    metric::fmt(s.half_width())
                )
            } else {
                format!("{name}: {}", metric::fmt(s.mean))
            }
        })
        .collect::<Vec<_>>()
        .join(", ");
    let said = format!("{} ({}) along the curve: {figures}", m.label(), m.unit());
    if sxx <= 0.0 || df < 1.0 {
        return (
            Verdict::Inconclusive,
            format!(
                "{said}; one repeat per point, so no test of the trend (two or more would give one)"
            ),
        );
    }
    let se = var.sqrt();
    let t = t_quantile(0.5 + CONFIDENCE / 2.0, df);
    let p = if se > 0.0 {
        2.0 * (1.0 - t_cdf((slope / se).abs(), df))
    } else if slope == 0.0 {
        1.0
    } else {
        0.0
    };
    let significant = p < 1.0 - CONFIDENCE;
    // The change the fitted line makes across the curve, relative to its start.
    let span = xs[xs.len() - 1] - xs[0];
    let base = means[0].abs();
    let change = slope * span;
    let change_hw = t * se * span;
    let margin = within / 100.0 * base;
    let pct = |v: f64| {
        if base > 0.0 {
            format!("{:+.1}%", v / base * 100.0)
        } else {
            "n/a".into()
        }
    };
    let p_text = if p < 0.001 {
        "p < 0.001".to_string()
    } else {
        format!("p = {p:.3}")
    };
    let slope_text = format!(
        "the fitted line changes it by {} ± {} ({}) across the curve, slope {p_text}",
        metric::fmt(change),
        metric::fmt(change_hw),
        pct(change)
    );
    // Steps between neighbours that go significantly up or down.
    let mut ups = Vec::new();
    let mut downs = Vec::new();
    for pair in curve.windows(2) {
        let (a, b) = (&pair[0], &pair[1]);
        if let Some(w) = Welch::test(&a.2.sample(), &b.2.sample()) {
            if w.significant() {
                let step = format!("{} to {}", a.1, b.1);
                if w.diff > 0.0 {
                    ups.push(step)
                } else {
                    downs.push(step)
                }
            }
        }
    }
    match e {
        Expect::Rises | Expect::Falls | Expect::Higher | Expect::Lower => {
            let up = matches!(e, Expect::Rises | Expect::Higher);
            let against = if up { &downs } else { &ups };
            let word = if up { "falls" } else { "rises" };
            if significant && (slope > 0.0) == up && against.is_empty() {
                (
                    Verdict::Reproduced,
                    format!("{said}; {slope_text}: significant, and no step goes against it"),
                )
            } else if significant && (slope > 0.0) != up {
                let steps = if against.is_empty() {
                    String::new()
                } else {
                    format!(
                        "; it {word} significantly from {}",
                        against.join(" and from ")
                    )
                };
                (
                    Verdict::Contradicted,
                    format!("{said}; {slope_text}: significant, the other way{steps}"),
                )
            } else if !against.is_empty() {
                (
                    Verdict::Contradicted,
                    format!(
                        "{said}; {slope_text}, but it {word} significantly from {}",
                        against.join(" and from ")
                    ),
                )
            } else if change.abs() + change_hw <= margin {
                (
                    Verdict::Contradicted,
                    format!("{said}; {slope_text}: no change beyond ±{within}% at 95%"),
                )
            } else {
                (
                    Verdict::Inconclusive,
                    format!(
                        "{said}; {slope_text}: not significant; {}",
                        what_would_decide(
                            min_n(curve),
                            change_hw,
                            change.abs().max(margin - change.abs())
                        )
                    ),
                )
            }
        }
        Expect::Flat | Expect::Equal => {
            if change.abs() + change_hw <= margin && ups.is_empty() && downs.is_empty() {
                (
                    Verdict::Reproduced,
                    format!(
                        "{said}; {slope_text}: within ±{within}% at 95%, and no step is significant"
                    ),
                )
            } else if change.abs() - change_hw > margin {
                (
                    Verdict::Contradicted,
                    format!("{said}; {slope_text}: beyond ±{within}% at 95%"),
                )
            } else if !ups.is_empty() || !downs.is_empty() {
                let steps: Vec<String> = ups.iter().chain(&downs).cloned().collect();
                (
                    Verdict::Contradicted,
                    format!(
                        "{said}; {slope_text}, but it moves significantly from {}",
                        steps.join(" and from ")
                    ),
                )
            } else {
                (
                    Verdict::Inconclusive,
                    format!(
                        "{said}; {slope_text}: neither inside nor beyond ±{within}%; {}",
                        what_would_decide(min_n(curve), change_hw, (margin - change.abs()).abs())
                    ),
                )
            }
        }
    }
}

fn min_n(curve: &[(f64, String, Stat)]) -> u32 {
    curve.iter().map(|(_, _, s)| s.n).min().unwrap_or(0)
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
            Verdict::Inconclusive | Verdict::NotTestable | Verdict::NoEvidence => "unavailable",
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
    use crate::report::plot::figure::tests::{EXP, quick_run};

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

    /// A full (not quick) run of `EXP`'s pool whose throughput at each point
    /// is `f(workers, users)`, three repeats at ±`spread` of it.
    fn full_run(exp: &Experiment, f: impl Fn(f64, f64) -> (f64, f64)) -> RunResults {
        let mut r = quick_run(exp);
        let plan = exp
            .plan(
                &crate::experiment::PlanOptions::sweep(false),
                std::path::Path::new("/tmp/servelab-lab"),
            )
            .unwrap();
        let template = r.points[0].clone();
        r.quick = false;
        r.points = plan
            .points
            .iter()
            .filter(|p| p.server_label() == Some("pool"))
            .map(|p| {
                let w = p.var("workers").unwrap().as_f64().unwrap();
                let u = p.var("users").unwrap().as_f64().unwrap();
                let (v, spread) = f(w, u);
                let mut q = template.clone();
                q.index = p.index;
                q.vars = p.vars.clone();
                q.summary.insert(
                    Metric::Throughput,
                    Stat::of(&[v * (1.0 - spread), v, v * (1.0 + spread)]).unwrap(),
                );
                q
            })
            .collect();
        r
    }

    /// Regression (issue 31, seed 002's 4x4): "round robin's response time is
    /// higher than FCFS's for all user values" was judged at one user count,
    /// where 2% could not be told from noise ("contradicted"), although round
    /// robin was above at 9 of 10. A claim about every value is judged on every
    /// pair and on the curve's mean difference.
    #[test]
    fn a_claim_for_every_value_is_judged_on_every_pair() {
        let claim = r#"
[[claim]]
text = "32 users get more than 8 at every worker count."
test = "compare"
metric = "throughput"
x = "workers"
a = { server = "pool", users = 32 }
b = { server = "pool", users = 8 }
expect = "higher"
"#;
        let text = EXP.replace("duration = \"1s\"", "duration = \"10s\"") + claim;
        let exp = Experiment::parse(&text, "t.toml").unwrap();
        // 2% above at 4 of 5 worker counts, 0.5% below at one, each within a
        // ±5% spread that no single pair can decide.
        let small = full_run(&exp, |w, u| {
            let base = 100.0;
            match (u as u32, w as u32) {
                (32, 16) => (base * 0.995, 0.05),
                (32, _) => (base * 1.02, 0.05),
                _ => (base, 0.05),
            }
        });
        let t = &test_all(&exp, &small)[0];
        assert_eq!(t.verdict, Verdict::Reproduced, "{t:?}");
        assert!(
            t.reason
                .contains("at 5 values of server workers: above at 4")
                && t.reason
                    .contains("significant (Welch at 95%) above at 0 and below at 0"),
            "{}",
            t.reason
        );
        // One pair significantly the other way contradicts "at every value".
        let against = full_run(&exp, |w, u| match (u as u32, w as u32) {
            (32, 16) => (70.0, 0.001),
            (32, _) => (102.0, 0.05),
            _ => (100.0, 0.001),
        });
        let t = &test_all(&exp, &against)[0];
        assert_eq!(t.verdict, Verdict::Contradicted, "{t:?}");
        assert!(
            t.reason
                .contains("significantly the other way at server workers 16"),
            "{}",
            t.reason
        );
        // The same figures everywhere: no difference beyond the margin.
        let same = full_run(&exp, |_, _| (100.0, 0.01));
        let t = &test_all(&exp, &same)[0];
        assert_eq!(t.verdict, Verdict::Contradicted, "{t:?}");
    }

    #[test]
    fn a_trend_left_without_its_points_says_what_they_need_once() {
        let text = r#"
[[claim]]
text = "Throughput rises with users."
test = "trend"
metric = "throughput"
x = "users"
a = { server = "pool", workers = 4 }
expect = "rises"
"#;
        let exp = Experiment::parse(&(EXP.to_string() + text), "t.toml").unwrap();
        let mut r = quick_run(&exp);
        let mut flagged = 0;
        for p in &mut r.points {
            if p.server.as_deref() == Some("pool")
                && p.var("workers").and_then(|v| v.as_f64()) == Some(4.0)
            {
                p.checks.push(crate::check::Check {
                    kind: CheckKind::Client,
                    passed: false,
                    detail: "the load generator was busy 99% of the window".into(),
                });
                flagged += 1;
            }
        }
        assert!(flagged >= 2, "the curve has {flagged} points");
        let t = &test_all(&exp, &r)[0];
        assert_eq!(t.verdict, Verdict::NoEvidence, "{t:?}");
        assert_eq!(
            t.reason.matches("client check failed").count(),
            flagged,
            "{}",
            t.reason
        );
        assert_eq!(
            t.reason
                .matches("a load generator with CPU to spare")
                .count(),
            1,
            "{}",
            t.reason
        );
        assert!(t.reason.contains("judging them needs"), "{}", t.reason);
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
        // A missing point is no evidence, never "not testable".
        assert_eq!(t[4].verdict, Verdict::NoEvidence);
        assert!(
            t[4].reason.starts_with("no point of this run"),
            "{}",
            t[4].reason
        );
    }

    /// A curve of `(x, mean)` points with three repeats of 1% spread each.
    fn curve(points: &[(f64, f64)]) -> Vec<(f64, String, Stat)> {
        points
            .iter()
            .map(|&(x, v)| {
                (
                    x,
                    format!("size {x}"),
                    Stat::of(&[v * 0.99, v, v * 1.01]).unwrap(),
                )
            })
            .collect()
    }

    /// Regression: `filesize` judged "speedups are better for large files" on
    /// one pair of points while the curve ran the other way. A trend is judged
    /// on every point: rising ends with a fall between them is no rise.
    #[test]
    fn a_trend_is_judged_on_every_point_of_its_curve() {
        let rises = curve(&[(1.0, 100.0), (10.0, 150.0), (100.0, 200.0)]);
        let (v, why) = trend(Metric::Throughput, &rises, true, Expect::Rises, 10.0);
        assert_eq!(v, Verdict::Reproduced, "{why}");
        let (v, _) = trend(Metric::Throughput, &rises, true, Expect::Falls, 10.0);
        assert_eq!(v, Verdict::Contradicted);

        // The ends rise (100 -> 120) but the middle collapses: judged on its
        // two ends this read as "rises"; on the curve it is no rise.
        let hump = curve(&[(1.0, 100.0), (10.0, 300.0), (100.0, 40.0), (1000.0, 120.0)]);
        let (v, why) = trend(Metric::Throughput, &hump, true, Expect::Rises, 10.0);
        assert_eq!(v, Verdict::Contradicted, "{why}");
        assert!(
            why.contains("falls significantly from size 10 to size 100"),
            "{why}"
        );

        let flat = curve(&[(1.0, 100.0), (10.0, 100.5), (100.0, 99.8)]);
        let (v, why) = trend(Metric::Throughput, &flat, true, Expect::Flat, 10.0);
        assert_eq!(v, Verdict::Reproduced, "{why}");
        let (v, why) = trend(Metric::Throughput, &rises, true, Expect::Flat, 10.0);
        assert_eq!(v, Verdict::Contradicted, "{why}");
    }

    /// A point whose client was saturated, or that failed Little's law, says
    /// nothing about the server: the claim gets no verdict from it.
    #[test]
    fn a_client_bound_point_is_refused_as_evidence() {
        let text = r#"
[[claim]]
text = "More workers are faster."
test = "compare"
metric = "throughput"
at = { server = "pool", users = 8 }
a = { workers = 4 }
b = { workers = 1 }
expect = "higher"
"#;
        let exp = Experiment::parse(&(EXP.to_string() + text), "t.toml").unwrap();
        let mut r = quick_run(&exp);
        for p in &mut r.points {
            for s in p.summary.values_mut() {
                let v = s.mean;
                *s = Stat::of(&[v * 0.95, v, v * 1.05]).unwrap();
            }
        }
        assert_eq!(test_all(&exp, &r)[0].verdict, Verdict::Reproduced);
        let at = |w: f64| {
            move |p: &&mut PointRecord| {
                p.server.as_deref() == Some("pool")
                    && p.var("workers").and_then(|v| v.as_f64()) == Some(w)
                    && p.var("users").and_then(|v| v.as_f64()) == Some(8.0)
            }
        };
        let p = r.points.iter_mut().find(at(4.0)).unwrap();
        p.checks.push(crate::check::Check {
            kind: CheckKind::Client,
            passed: false,
            detail: "the load generator was busy 99% of the window".into(),
        });
        let t = &test_all(&exp, &r)[0];
        assert_eq!(t.verdict, Verdict::NoEvidence, "{t:?}");
        assert!(t.reason.contains("client check failed"), "{}", t.reason);
        assert!(
            t.reason
                .contains("judging it needs a load generator with CPU to spare"),
            "{}",
            t.reason
        );
        // A passed check, or a failed one that says nothing of the client, is no bar.
        let p = r.points.iter_mut().find(at(4.0)).unwrap();
        p.checks[0].kind = CheckKind::Errors;
        assert_eq!(test_all(&exp, &r)[0].verdict, Verdict::Reproduced);
    }

    #[test]
    fn inconclusive_says_what_would_decide() {
        assert_eq!(
            what_would_decide(3, 20.0, 10.0),
            "about 12 repeats per side (now 3) would decide it at this spread"
        );
        assert!(what_would_decide(3, 20.0, 0.0).contains("no number of repeats"));
        let one = Stat::of(&[100.0]).unwrap();
        let (v, why) = decide(
            Metric::Throughput,
            ("a", one),
            ("b", one),
            Expect::Higher,
            10.0,
        );
        assert_eq!(v, Verdict::Inconclusive, "{why}");
    }

    /// Regression: two noisy quick repeats read as "contradicted" for a claim
    /// of equality; an interval too wide to decide is not a verdict.
    #[test]
    fn too_noisy_to_decide_is_inconclusive_and_a_tight_equality_is_reproduced() {
        let noisy_a = Stat::of(&[1000.0, 9000.0]).unwrap();
        let noisy_b = Stat::of(&[2000.0, 4000.0]).unwrap();
        for e in [Expect::Equal, Expect::Higher] {
            let (v, why) = decide(Metric::Throughput, ("a", noisy_a), ("b", noisy_b), e, 10.0);
            assert_eq!(v, Verdict::Inconclusive, "{why}");
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
        assert_eq!(v, Verdict::Inconclusive, "{why}");
        assert!(why.contains("straddles the ±10% margin"), "{why}");
        // No effect beyond the margin contradicts "higher".
        let (v, why) = decide(Metric::Throughput, ("a", a), ("b", b), Expect::Higher, 10.0);
        assert_eq!(v, Verdict::Contradicted, "{why}");
    }
}
