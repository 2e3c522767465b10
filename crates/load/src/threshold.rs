//! Pass/fail thresholds on a report, as k6 has them: `p99>200ms`, `errors>1%`.
//!
//! A [`Threshold`] says when a run *fails*: `METRIC OP VALUE`, with `OP` one of
//! `>`, `>=`, `<`, `<=`, and `METRIC` a name of the report's catalogue
//! ([`Metric`], in `metric.rs`, which lists the names and their units).
//!
//! A latency is written with its unit (`200ms`, `1.5s`, `250us`): a bare
//! number is refused with the fix (`p99>200ms`), since k6 reads `200` as
//! milliseconds and servelab's durations read it as seconds, and a threshold
//! that silently means 200 s never fails. A threshold that no run could cross
//! (`errors>100%`, `p99<0ms`) or that every run crosses (`errors>=0%`) is
//! refused when it is parsed, before anything runs: it is a mistake, not a
//! check. A threshold whose metric a run did not measure (a latency percentile
//! when no request was answered or left unfinished) is reported as unmeasured,
//! never as held.

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
}

/// `METRIC OP VALUE`: the run fails when the report's metric compares so.
#[derive(Debug, Clone, PartialEq)]
pub struct Threshold {
    /// What is measured.
    pub metric: Metric,
    /// How it is compared.
    pub op: Op,
    /// The limit, in the metric's unit (microseconds, a share, per second).
    pub value: f64,
    /// The threshold as written.
    text: String,
}

/// What checking a threshold against a report found.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    /// The threshold was not crossed.
    Held,
    /// The threshold was crossed; the measured value, formatted in its unit.
    Crossed(String),
    /// The report does not measure the metric (why); the run fails, since
    /// nothing shows that it held.
    Unmeasured(&'static str),
}

impl Threshold {
    /// Checks the threshold against a report.
    pub fn check(&self, report: &Report) -> Verdict {
        match report.metric(self.metric) {
            Err(why) => Verdict::Unmeasured(why),
            Ok(v) if self.op.holds(v, self.value) => Verdict::Crossed(self.metric.format(v)),
            Ok(_) => Verdict::Held,
        }
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

impl FromStr for Threshold {
    type Err = LoadError;
    fn from_str(s: &str) -> Result<Threshold, LoadError> {
        let bad = |why: String| LoadError::Threshold {
            input: s.to_string(),
            why,
        };
        let at = s
            .find(['<', '>'])
            .ok_or_else(|| bad("expected METRIC OP VALUE, e.g. p99>200ms".to_string()))?;
        let (name, rest) = s.split_at(at);
        let (op, value) = match rest.as_bytes() {
            [b'>', b'=', ..] => (Op::AtLeast, &rest[2..]),
            [b'<', b'=', ..] => (Op::AtMost, &rest[2..]),
            [b'>', ..] => (Op::Above, &rest[1..]),
            _ => (Op::Below, &rest[1..]),
        };
        let metric: Metric = name.trim().parse().map_err(bad)?;
        let value = value.trim();
        let v = match metric.unit() {
            Unit::Micros => {
                // A duration: no sign, no share; `servelab_dist` says what is wrong.
                if value.starts_with('-') {
                    return Err(bad(format!("`{value}`: a latency is never negative")));
                }
                if value.parse::<f64>().is_ok() {
                    return Err(bad(format!(
                        "a latency needs a unit: write `{}{}{value}ms` (or us, s)",
                        metric.name(),
                        op.as_str()
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
        if never {
            return Err(bad(format!("{} can never be {}", metric.name(), {
                let o = op.as_str();
                format!("{o} {}", metric.format(v))
            })));
        }
        if always {
            return Err(bad(format!(
                "every run has {} {} {}: the threshold could never hold",
                metric.name(),
                op.as_str(),
                metric.format(v)
            )));
        }
        Ok(Threshold {
            metric,
            op,
            value: v,
            text: s.to_string(),
        })
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

    fn err(s: &str) -> String {
        s.parse::<Threshold>().unwrap_err().to_string()
    }

    #[test]
    fn parses_the_k6_like_forms() {
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
    }

    #[test]
    fn unparseable_and_impossible_thresholds_say_why() {
        assert!(err("p99").contains("METRIC OP VALUE"), "{}", err("p99"));
        assert!(
            err("p98>1s").contains("unknown metric `p98`"),
            "{}",
            err("p98>1s")
        );
        assert!(err("p98>1s").contains("p99.9"), "lists the metrics");
        assert!(err("p99>fast").contains("fast"), "{}", err("p99>fast"));
        assert!(
            err("p99>-1ms").contains("never negative"),
            "{}",
            err("p99>-1ms")
        );
        assert!(err("errors>1ms").contains("share"), "{}", err("errors>1ms"));
        assert!(
            err("errors>150%").contains("can never be"),
            "{}",
            err("errors>150%")
        );
        assert!(err("errors>100%").contains("can never be"));
        assert!(
            err("p99<0ms").contains("can never be"),
            "{}",
            err("p99<0ms")
        );
        assert!(err("errors>=0%").contains("could never hold"));
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
        assert!(err("errors<=100%").contains("could never hold"));
        assert!(err("rps>=0").contains("could never hold"));
        // The input is named once, in the message.
        assert_eq!(
            err("p98>1s").matches("p98>1s").count(),
            1,
            "{}",
            err("p98>1s")
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
        assert_eq!(t("p99>200ms").check(&r), Verdict::Held);
        assert!(matches!(t("max>200ms").check(&r), Verdict::Crossed(v) if v.starts_with("500.")));
        assert_eq!(t("errors>1%").check(&r), Verdict::Held);
        assert!(matches!(t("rps<1000").check(&r), Verdict::Crossed(v) if v == "100.0/s"));
        // 2 failures in 102 outcomes: 1.96%.
        let r = report(&ms, 2);
        assert!(matches!(t("errors>1%").check(&r), Verdict::Crossed(v) if v == "1.961%"));
        // Nothing measured: a latency threshold cannot say it held.
        let r = report(&[], 0);
        assert_eq!(
            t("p99>200ms").check(&r),
            Verdict::Unmeasured("no latency was measured")
        );
        assert!(matches!(t("errors>1%").check(&r), Verdict::Unmeasured(_)));
    }

    #[test]
    fn shares() {
        assert_eq!(parse_share("1%").unwrap(), 0.01);
        assert_eq!(parse_share("0.25").unwrap(), 0.25);
        assert!(parse_share("lots").is_err());
        assert!(parse_share("nan").is_err());
    }
}
