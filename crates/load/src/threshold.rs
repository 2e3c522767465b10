//! Pass/fail thresholds on a report, in two spellings: servelab's fail
//! conditions (`--fail-if 'p99>200ms'`, `errors>1%`) and k6's pass conditions
//! (`--threshold 'p(95)<200ms'`, `avg<50ms`, `http_req_failed:rate<1%`).
//!
//! A [`Threshold`] holds the condition under which a run *fails*: `METRIC OP
//! VALUE`, with `OP` one of `>`, `>=`, `<`, `<=`, and `METRIC` a name of the
//! report's catalogue ([`Metric`], in `metric.rs`: `p50`, any `pNN` or
//! `pNN.N`, `max`, `mean`, `errors`, `unfinished`, `rps`, `goodput`). A pass
//! condition is kept as its negation (`p(95)<200ms` fails when `p95>=200ms`), so
//! both spellings are checked, refused and worded the same way.
//!
//! k6's spelling ([`Threshold::pass_condition`]): `p(N)` is `pN`, `avg` is
//! `mean`, `med` is `p50`, `max` is `max`; an optional k6 metric name before
//! a colon selects the figure: `http_req_duration:` (the latency, the
//! default), `http_req_failed:rate` (servelab's `errors`: errors over ok plus
//! errors, failed connects included, where k6 counts failed requests over all
//! requests) and `http_reqs:rate` (`rps`). servelab's own names are accepted
//! too (`p99<1ms`, `errors<1%`).
//!
//! A latency is written with its unit (`200ms`, `1.5s`, `250us`) in both
//! spellings: a bare number is refused with the fix (`p99>200ms`), since k6
//! reads `200` as milliseconds and servelab's durations read it as seconds, and
//! a threshold that silently means 200 s never fails. A threshold that no run
//! could cross (`errors>100%`, `p99<0ms`) or that every run crosses
//! (`errors>=0%`) is refused when it is parsed, before anything runs: it is a
//! mistake, not a check. A threshold whose metric a run did not measure (a
//! latency percentile when no request was answered or left unfinished) is
//! reported as unmeasured, never as held.
//!
//! Each checked threshold is worded as what was measured, the limit (the pass
//! condition) and the outcome: `p99 was 431 µs, limit < 1 ms: failed`.

use std::fmt;
use std::str::FromStr;

use crate::error::LoadError;
pub use crate::metric::{Metric, Unit};
use crate::report::Report;

/// A comparison; the threshold is crossed when `measured OP value` holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// `>`
    Above,
    /// `>=`
    AtLeast,
    /// `<`
    Below,
    /// `<=`
    AtMost,
}

impl Op {
    fn as_str(self) -> &'static str {
        match self {
            Op::Above => ">",
            Op::AtLeast => ">=",
            Op::Below => "<",
            Op::AtMost => "<=",
        }
    }

    fn holds(self, measured: f64, value: f64) -> bool {
        match self {
            Op::Above => measured > value,
            Op::AtLeast => measured >= value,
            Op::Below => measured < value,
            Op::AtMost => measured <= value,
        }
    }

    /// The comparison that holds exactly when this one does not.
    fn negated(self) -> Op {
        match self {
            Op::Above => Op::AtMost,
            Op::AtLeast => Op::Below,
            Op::Below => Op::AtLeast,
            Op::AtMost => Op::Above,
        }
    }

    /// Splits `p99 > 200ms` into (`p99 `, the operator, ` 200ms`).
    fn split(s: &str) -> Option<(&str, Op, &str)> {
        let at = s.find(['<', '>'])?;
        let (name, rest) = s.split_at(at);
        let (op, value) = match rest.as_bytes() {
            [b'>', b'=', ..] => (Op::AtLeast, &rest[2..]),
            [b'<', b'=', ..] => (Op::AtMost, &rest[2..]),
            [b'>', ..] => (Op::Above, &rest[1..]),
            _ => (Op::Below, &rest[1..]),
        };
        Some((name, op, value))
    }
}

/// Which flag a threshold came from, and so how it is spelled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Spelling {
    /// `--fail-if`: the condition under which the run fails.
    FailIf,
    /// `--threshold`: k6's pass condition.
    PassIf,
}

/// `METRIC OP VALUE`: the run fails when the report's metric compares so.
#[derive(Debug, Clone, PartialEq)]
pub struct Threshold {
    /// What is measured.
    pub metric: Metric,
    /// How it is compared: the run fails when `measured op value`.
    pub op: Op,
    /// The limit, in the metric's unit (microseconds, a share, per second).
    pub value: f64,
    /// How it was written.
    pub spelling: Spelling,
    /// The threshold as written.
    text: String,
}

/// What checking a threshold against a report found.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    /// The threshold held; the measured value, formatted in its unit.
    Held(String),
    /// The threshold was crossed; the measured value, formatted in its unit.
    Crossed(String),
    /// The report does not measure the metric (why); the run fails, since
    /// nothing shows that it held.
    Unmeasured(&'static str),
}

impl Verdict {
    /// Whether the run fails on it.
    pub fn failed(&self) -> bool {
        !matches!(self, Verdict::Held(_))
    }
}

impl Threshold {
    /// Checks the threshold against a report.
    pub fn check(&self, report: &Report) -> Verdict {
        match report.metric(self.metric) {
            Err(why) => Verdict::Unmeasured(why),
            Ok(v) if self.op.holds(v, self.value) => Verdict::Crossed(self.metric.readable(v)),
            Ok(v) => Verdict::Held(self.metric.readable(v)),
        }
    }

    /// The verdict in words: what was measured, the limit (the condition
    /// that passes) and the outcome, e.g. `p99 was 431 µs, limit < 1 ms:
    /// failed`.
    pub fn describe(&self, verdict: &Verdict) -> String {
        let limit = format!(
            "limit {} {}",
            self.op.negated().as_str(),
            self.metric.readable(self.value)
        );
        match verdict {
            Verdict::Held(v) => format!("{} was {v}, {limit}: passed", self.metric),
            Verdict::Crossed(v) => format!("{} was {v}, {limit}: failed", self.metric),
            Verdict::Unmeasured(why) => {
                format!("{} was not measured ({why}), {limit}: failed", self.metric)
            }
        }
    }

    /// Parses k6's spelling of a pass condition (`p(95)<200ms`, `avg<50ms`,
    /// `http_req_failed:rate<1%`); see the module's docs.
    pub fn pass_condition(s: &str) -> Result<Threshold, LoadError> {
        let bad = |why: String| LoadError::Threshold {
            input: s.to_string(),
            why,
        };
        let (name, op, value) = Op::split(s).ok_or_else(|| {
            bad("expected a pass condition like p(95)<200ms, avg<50ms or \
                 http_req_failed:rate<1%"
                .to_string())
        })?;
        let name = name.trim();
        let (k6_metric, stat) = match name.split_once(':') {
            Some((m, stat)) => (Some(m.trim()), stat.trim()),
            None => (None, name),
        };
        let ours = match (k6_metric, stat) {
            (None | Some("http_req_duration"), "avg") => "mean".to_string(),
            (None | Some("http_req_duration"), "med") => "p50".to_string(),
            (None | Some("http_req_duration"), "min") => {
                return Err(bad("servelab has no threshold on the smallest latency \
                     (use avg, med, max or p(N))"
                    .to_string()));
            }
            (None | Some("http_req_duration"), stat) => {
                match stat.strip_prefix("p(").and_then(|p| p.strip_suffix(')')) {
                    Some(p) => format!("p{}", p.trim()),
                    None if k6_metric.is_some() && stat.starts_with('p') => stat.to_string(),
                    None if k6_metric.is_some() => {
                        return Err(bad(format!(
                            "http_req_duration takes avg, med, max or p(N), not `{stat}`"
                        )));
                    }
                    None => stat.to_string(),
                }
            }
            (Some("http_req_failed"), "rate") => "errors".to_string(),
            (Some("http_reqs"), "rate") => "rps".to_string(),
            (Some(m @ ("http_req_failed" | "http_reqs")), stat) => {
                return Err(bad(format!("{m} takes `rate`, not `{stat}`")));
            }
            (Some(m), _) => {
                return Err(bad(format!(
                    "k6 metric `{m}` has no servelab figure (http_req_duration, \
                     http_req_failed and http_reqs have)"
                )));
            }
        };
        // The negation, checked and refused as a fail condition would be.
        build(s, &ours, op.negated(), value, Spelling::PassIf)
    }
}

/// Parses a share: `1%`, `0.5%` or a fraction `0.01`. Not checked against 0..1
/// (a threshold says itself what is impossible).
pub fn parse_share(s: &str) -> Result<f64, String> {
    let (number, scale) = match s.strip_suffix('%') {
        Some(n) => (n, 0.01),
        None => (s, 1.0),
    };
    match number.trim().parse::<f64>() {
        Ok(x) if x.is_finite() => Ok(x * scale),
        _ => Err(format!(
            "`{s}` is not a share (a percentage like 1% or a fraction like 0.01)"
        )),
    }
}

/// A threshold on `name` that fails when `measured op value`; `s` is the
/// whole text as written, for messages.
fn build(
    s: &str,
    name: &str,
    op: Op,
    value: &str,
    spelling: Spelling,
) -> Result<Threshold, LoadError> {
    let bad = |why: String| LoadError::Threshold {
        input: s.to_string(),
        why,
    };
    let metric: Metric = name.trim().parse().map_err(bad)?;
    let value = value.trim();
    // As the user wrote it: the fix for a bare latency keeps their spelling.
    let written_op = match spelling {
        Spelling::FailIf => op,
        Spelling::PassIf => op.negated(),
    };
    let v = match metric.unit() {
        Unit::Micros => {
            // A duration: no sign, no share; `servelab_dist` says what is wrong.
            if value.starts_with('-') {
                return Err(bad(format!("`{value}`: a latency is never negative")));
            }
            if value.parse::<f64>().is_ok() {
                let name = s.split(['<', '>']).next().unwrap_or("").trim();
                return Err(bad(format!(
                    "a latency needs a unit: write `{name}{}{value}ms` (or us, s)",
                    written_op.as_str()
                )));
            }
            servelab_dist::parse_duration(value)
                .map_err(|e| bad(e.to_string()))?
                .as_secs_f64()
                * 1e6
        }
        Unit::Share => parse_share(value).map_err(bad)?,
        Unit::PerSecond => match value.strip_suffix("/s").unwrap_or(value).parse::<f64>() {
            Ok(x) if x.is_finite() => x,
            _ => return Err(bad(format!("`{value}` is not a number per second"))),
        },
    };
    let (lo, hi) = match metric.unit() {
        Unit::Share => (0.0, 1.0),
        Unit::Micros | Unit::PerSecond => (0.0, f64::INFINITY),
    };
    let never = match op {
        Op::Above => v >= hi,
        Op::AtLeast => v > hi,
        Op::Below => v <= lo,
        Op::AtMost => v < lo,
    };
    let always = match op {
        Op::Above => v < lo,
        Op::AtLeast => v <= lo,
        Op::Below => v > hi,
        Op::AtMost => v >= hi,
    };
    // Said in the spelling of the flag: what was written can never happen
    // or always does, and what that does to every run.
    let shown = format!("{} {} {}", metric, written_op.as_str(), metric.readable(v));
    let (can_never, every_run) = (
        format!("{shown} can never happen"),
        format!("every run has {shown}"),
    );
    if never {
        let why = match spelling {
            Spelling::FailIf => can_never,
            Spelling::PassIf => every_run,
        };
        return Err(bad(format!("{why}: the threshold would never fail a run")));
    }
    if always {
        let why = match spelling {
            Spelling::FailIf => every_run,
            Spelling::PassIf => can_never,
        };
        return Err(bad(format!("{why}: the threshold would fail every run")));
    }
    Ok(Threshold {
        metric,
        op,
        value: v,
        spelling,
        text: s.to_string(),
    })
}

impl FromStr for Threshold {
    type Err = LoadError;
    /// Parses servelab's fail condition (`--fail-if`): `p99>200ms`.
    fn from_str(s: &str) -> Result<Threshold, LoadError> {
        let (name, op, value) = Op::split(s).ok_or_else(|| LoadError::Threshold {
            input: s.to_string(),
            why: "expected METRIC OP VALUE, e.g. p99>200ms".to_string(),
        })?;
        build(s, name, op, value, Spelling::FailIf)
    }
}

impl fmt::Display for Threshold {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: &str) -> Threshold {
        s.parse().unwrap()
    }

    fn k6(s: &str) -> Threshold {
        Threshold::pass_condition(s).unwrap()
    }

    fn err(s: &str) -> String {
        s.parse::<Threshold>().unwrap_err().to_string()
    }

    fn k6_err(s: &str) -> String {
        Threshold::pass_condition(s).unwrap_err().to_string()
    }

    #[test]
    fn parses_the_fail_conditions() {
        assert_eq!(
            (
                t("p99>200ms").metric,
                t("p99>200ms").op,
                t("p99>200ms").value
            ),
            (Metric::P99, Op::Above, 200_000.0)
        );
        assert_eq!(t("errors>1%").value, 0.01);
        assert_eq!(t("errors > 0.05").value, 0.05);
        assert_eq!(t("p99.9>=1.5s").op, Op::AtLeast);
        assert_eq!(t("rps<1000").value, 1000.0);
        assert_eq!(t("goodput<=50/s").op, Op::AtMost);
        assert_eq!(t("unfinished>0%").metric, Metric::Unfinished);
        assert_eq!(t("mean>250us").value, 250.0);
        assert_eq!(t("p99 > 0.2s").value, 200_000.0);
        assert_eq!(t("p99>200ms").to_string(), "p99>200ms");
        // Any percentile (issue 30).
        assert_eq!(t("p95>10ms").metric.to_string(), "p95");
        assert_eq!(t("p99.99>1s").metric.to_string(), "p99.99");
    }

    #[test]
    fn parses_k6_pass_conditions_as_their_negation() {
        let p = k6("p(95)<200ms");
        assert_eq!(
            (p.metric.to_string(), p.op, p.value),
            ("p95".into(), Op::AtLeast, 200_000.0)
        );
        assert_eq!(p.spelling, Spelling::PassIf);
        assert_eq!(k6("p(99.9)<1s").metric.to_string(), "p99.9");
        assert_eq!(k6("avg<50ms").metric, Metric::Mean);
        assert_eq!(k6("med<=5ms").metric, Metric::P50);
        assert_eq!(k6("med<=5ms").op, Op::Above);
        assert_eq!(k6("max<1s").metric, Metric::Max);
        assert_eq!(k6("http_req_duration:p(99)<300ms").metric, Metric::P99);
        let f = k6("http_req_failed:rate<1%");
        assert_eq!(
            (f.metric, f.op, f.value),
            (Metric::Errors, Op::AtLeast, 0.01)
        );
        assert_eq!(k6("http_reqs:rate>100").metric, Metric::Rps);
        assert_eq!(k6("p99<1ms").metric, Metric::P99, "servelab's names too");
        for bad in [
            "p(95)",
            "min<1ms",
            "http_req_failed:count<3",
            "vus:value<3",
            "http_req_duration:rate<1",
            "p(95)<200",
            "p(101)<1s",
        ] {
            assert!(Threshold::pass_condition(bad).is_err(), "{bad}");
        }
        // A bare latency gets the fix in the spelling written.
        assert!(
            k6_err("p(95)<200").contains("write `p(95)<200ms`"),
            "{}",
            k6_err("p(95)<200")
        );
        assert!(
            k6_err("errors<=100%").contains("every run has errors <= 100%"),
            "{}",
            k6_err("errors<=100%")
        );
        assert!(
            k6_err("p(99)<0ms").contains("can never happen: the threshold would fail every run"),
            "{}",
            k6_err("p(99)<0ms")
        );
    }

    #[test]
    fn unparseable_and_impossible_thresholds_say_why() {
        assert!(err("p99").contains("METRIC OP VALUE"), "{}", err("p99"));
        assert!(
            err("latency>1s").contains("unknown metric `latency`"),
            "{}",
            err("latency>1s")
        );
        assert!(err("latency>1s").contains("p99.9"), "lists the metrics");
        assert!(err("p99>fast").contains("fast"), "{}", err("p99>fast"));
        assert!(
            err("p99>-1ms").contains("never negative"),
            "{}",
            err("p99>-1ms")
        );
        assert!(err("errors>1ms").contains("share"), "{}", err("errors>1ms"));
        assert!(
            err("errors>150%").contains("can never happen"),
            "{}",
            err("errors>150%")
        );
        assert!(err("errors>100%").contains("would never fail a run"));
        assert!(
            err("p99<0ms").contains("can never happen"),
            "{}",
            err("p99<0ms")
        );
        assert!(err("errors>=0%").contains("would fail every run"));
        // Regression (issue 19): `p99>200` meant 200 seconds and never failed.
        assert_eq!(
            err("p99>200"),
            "bad threshold `p99>200`: a latency needs a unit: write `p99>200ms` (or us, s)"
        );
        assert!(
            err("max<=1.5").contains("`max<=1.5ms`"),
            "{}",
            err("max<=1.5")
        );
        assert!(err("errors<=100%").contains("every run has"));
        assert!(err("rps>=0").contains("every run has"));
        // The input is named once, in the message.
        assert_eq!(
            err("latency>1s").matches("latency>1s").count(),
            1,
            "{}",
            err("latency>1s")
        );
    }

    fn report(latencies_ms: &[u64], failures: u64) -> Report {
        use crate::metrics::{ErrorClass, Recorder};
        use crate::spec::LoadSpec;
        use crate::target::Target;
        use std::time::{Duration, Instant};
        let t0 = Instant::now();
        let mut rec = Recorder::new(t0);
        for &ms in latencies_ms {
            let end = t0 + Duration::from_millis(ms);
            rec.response(end, t0, (t0, end), 200, true);
        }
        for _ in 0..failures {
            rec.failure(t0, t0, ErrorClass::Reset);
        }
        rec.close();
        let spec = LoadSpec::new(vec![Target::new("http://127.0.0.1:1/")]);
        Report::build(&spec, &rec, 1, 0, Duration::from_secs(1), Duration::ZERO)
    }

    #[test]
    fn checks_against_a_report() {
        // 99 answers at 1 ms and one at 500 ms: p99 is 1 ms, max 500 ms.
        let mut ms = vec![1; 99];
        ms.push(500);
        let r = report(&ms, 0);
        assert!(matches!(t("p99>200ms").check(&r), Verdict::Held(_)));
        assert!(matches!(t("max>200ms").check(&r), Verdict::Crossed(v) if v.starts_with("500")));
        assert!(matches!(t("errors>1%").check(&r), Verdict::Held(_)));
        assert!(matches!(t("rps<1000").check(&r), Verdict::Crossed(v) if v == "100/s"));
        // Any percentile is read from the histogram (p95 is 1 ms here).
        assert!(matches!(t("p95>2ms").check(&r), Verdict::Held(_)));
        assert!(matches!(t("p99.5>2ms").check(&r), Verdict::Crossed(v) if v.starts_with("500")));
        // k6's pass condition fails when it does not hold.
        assert!(k6("p(95)<2ms").check(&r) == t("p95>=2ms").check(&r));
        assert!(k6("p(99.9)<2ms").check(&r).failed());
        // 2 failures in 102 outcomes: 1.96%.
        let r = report(&ms, 2);
        assert!(matches!(t("errors>1%").check(&r), Verdict::Crossed(v) if v == "1.961%"));
        // Nothing measured: a latency threshold cannot say it held.
        let r = report(&[], 0);
        assert_eq!(
            t("p99>200ms").check(&r),
            Verdict::Unmeasured("no request finished, so no latency was measured")
        );
        assert!(matches!(t("errors>1%").check(&r), Verdict::Unmeasured(_)));
    }

    #[test]
    fn verdicts_say_what_was_measured_the_limit_and_the_outcome() {
        let th = k6("p(99)<1ms");
        assert_eq!(
            th.describe(&Verdict::Crossed("431 µs".into())),
            "p99 was 431 µs, limit < 1 ms: failed"
        );
        assert_eq!(
            t("p99>200ms").describe(&Verdict::Held("1 ms".into())),
            "p99 was 1 ms, limit <= 200 ms: passed"
        );
        assert_eq!(
            t("errors>1%").describe(&Verdict::Unmeasured("no request finished and none failed")),
            "errors was not measured (no request finished and none failed), limit <= 1%: failed"
        );
    }

    #[test]
    fn shares() {
        assert_eq!(parse_share("1%").unwrap(), 0.01);
        assert_eq!(parse_share("0.25").unwrap(), 0.25);
        assert!(parse_share("lots").is_err());
        assert!(parse_share("nan").is_err());
    }
}
