//! The figures an experiment records at each point, as one enum with one
//! catalogue: the name used in experiment files and results, the label and unit
//! shown on axes and in tables and sentences, which kind of experiment records
//! it, and which direction is better.
//!
//! Everything else (validation, results, plots, tables, conclusions) takes a
//! [`Metric`], so a metric that an experiment file names is certain to have a
//! label, a unit and a direction; nothing matches metric names as strings.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A figure recorded at a point.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Metric {
    /// Requests served to the end per second: goodput plus badput.
    Throughput,
    /// Mean user response time: from the intended send time (the end of the
    /// think time) to the answer, timeouts and retries included.
    MeanMs,
    /// Mean response time of the attempt that got the answer, from its send.
    AttemptMs,
    /// Median response time.
    P50Ms,
    /// 99th percentile response time.
    P99Ms,
    /// Wall time of a repeat.
    TotalS,
    /// Response bytes per second.
    MbPerS,
    /// Server CPU (user + system, whole process tree) per completed request.
    CpuUs,
    /// Failed requests of a repeat.
    Errors,
    /// Measured throughput against the exact model's, in percent.
    ErrorPct,
    /// Busy fraction of the simulated cores.
    Utilisation,
    /// Requests dropped because the buffer was full.
    DropRate,
    /// Completed requests that the client still waited for.
    Goodput,
    /// Requests served to the end after their client gave up (wasted work).
    Badput,
    /// Requests whose client left before the answer, at the server: served for
    /// nobody (badput) or cancelled.
    Abandoned,
    /// Server CPU time per second of wall time, in percent of one CPU.
    CpuPct,
    /// Requests whose client gave up.
    TimeoutRate,
    /// Share of core time spent switching context.
    SwitchPct,
    /// The exact model's saturation population N* (a bound, not a measurement).
    SaturationUsers,
    /// The asymptotic throughput bound min(N / (S + Z), c / S).
    ThroughputMax,
    /// Mean TLS handshake time seen by the client, from the TCP connect's end
    /// to the handshake's (`load`'s `tls_handshake` histogram).
    HandshakeMs,
    /// 99th percentile of the TLS handshake time seen by the client.
    HandshakeP99Ms,
    /// Full TLS handshakes completed per second.
    FullHandshakes,
    /// Resumed TLS handshakes completed per second.
    ResumedHandshakes,
    /// The load generator's CPU per completed TLS handshake (its own cost, so
    /// that a client bottleneck shows).
    ClientHandshakeUs,
}

/// Which runs record a metric.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// Measured experiments only.
    Measured,
    /// Simulated experiments and predictions only.
    Simulated,
    /// Both.
    Both,
    /// The exact model's bounds: recorded beside the figures, never plotted on y.
    Bound,
}

/// Which direction of a metric is better, for conclusions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Better {
    /// More is better (throughput).
    Higher,
    /// Less is better (response time, CPU, errors).
    Lower,
    /// Neither (utilisation describes, it does not rank).
    Neither,
}

/// One line of the catalogue.
#[derive(Debug, Clone, Copy)]
struct Entry {
    name: &'static str,
    label: &'static str,
    unit: &'static str,
    source: Source,
    better: Better,
}

const fn e(
    name: &'static str,
    label: &'static str,
    unit: &'static str,
    source: Source,
    better: Better,
) -> Entry {
    Entry {
        name,
        label,
        unit,
        source,
        better,
    }
}

impl Metric {
    /// Every metric, in the order of tables and of `results.json`.
    pub const ALL: &'static [Metric] = &[
        Metric::Throughput,
        Metric::MeanMs,
        Metric::AttemptMs,
        Metric::P50Ms,
        Metric::P99Ms,
        Metric::TotalS,
        Metric::MbPerS,
        Metric::CpuUs,
        Metric::Errors,
        Metric::ErrorPct,
        Metric::Utilisation,
        Metric::DropRate,
        Metric::Goodput,
        Metric::Badput,
        Metric::Abandoned,
        Metric::TimeoutRate,
        Metric::CpuPct,
        Metric::SwitchPct,
        Metric::SaturationUsers,
        Metric::ThroughputMax,
        Metric::HandshakeMs,
        Metric::HandshakeP99Ms,
        Metric::FullHandshakes,
        Metric::ResumedHandshakes,
        Metric::ClientHandshakeUs,
    ];

    /// The catalogue: the one place a metric's words live.
    const fn entry(self) -> Entry {
        use Better::{Higher, Lower, Neither};
        use Source::{Both, Bound, Measured, Simulated};
        match self {
            Metric::Throughput => e("throughput", "throughput", "requests/s", Both, Higher),
            Metric::MeanMs => e("mean_ms", "mean user response time", "ms", Both, Lower),
            Metric::AttemptMs => e(
                "attempt_ms",
                "mean response time per attempt",
                "ms",
                Both,
                Lower,
            ),
            Metric::P50Ms => e("p50_ms", "median response time", "ms", Both, Lower),
            Metric::P99Ms => e("p99_ms", "99th percentile response time", "ms", Both, Lower),
            Metric::TotalS => e("total_s", "total time", "s", Measured, Lower),
            Metric::MbPerS => e("mb_per_s", "transfer rate", "MB/s", Measured, Higher),
            Metric::CpuUs => e("cpu_us", "server CPU per request", "us", Measured, Lower),
            Metric::Errors => e("errors", "failed requests", "requests", Measured, Lower),
            Metric::ErrorPct => e(
                "error_pct",
                "measured vs exact model throughput",
                "%",
                Measured,
                Neither,
            ),
            Metric::Utilisation => e("utilisation", "core utilisation", "%", Simulated, Neither),
            Metric::DropRate => e("drop_rate", "dropped requests", "requests/s", Both, Lower),
            Metric::Goodput => e("goodput", "goodput", "requests/s", Both, Higher),
            Metric::Badput => e("badput", "badput", "requests/s", Both, Lower),
            Metric::Abandoned => e(
                "abandoned",
                "abandoned at the server",
                "requests/s",
                Both,
                Lower,
            ),
            Metric::TimeoutRate => e("timeout_rate", "timeouts", "requests/s", Both, Lower),
            Metric::CpuPct => e("cpu_pct", "server CPU share", "%", Measured, Neither),
            Metric::SwitchPct => e(
                "switch_pct",
                "time spent switching context",
                "%",
                Simulated,
                Lower,
            ),
            Metric::SaturationUsers => e(
                "saturation_users",
                "saturation population N*",
                "users",
                Bound,
                Neither,
            ),
            Metric::ThroughputMax => e(
                "throughput_max",
                "throughput bound",
                "requests/s",
                Bound,
                Neither,
            ),
            Metric::HandshakeMs => e(
                "tls_handshake_ms",
                "mean TLS handshake time",
                "ms",
                Measured,
                Lower,
            ),
            Metric::HandshakeP99Ms => e(
                "tls_handshake_p99_ms",
                "99th percentile TLS handshake time",
                "ms",
                Measured,
                Lower,
            ),
            Metric::FullHandshakes => e(
                "tls_full",
                "full TLS handshakes",
                "handshakes/s",
                Measured,
                Neither,
            ),
            Metric::ResumedHandshakes => e(
                "tls_resumed",
                "resumed TLS handshakes",
                "handshakes/s",
                Measured,
                Neither,
            ),
            Metric::ClientHandshakeUs => e(
                "tls_client_cpu_us",
                "load generator CPU per TLS handshake",
                "us",
                Measured,
                Lower,
            ),
        }
    }

    /// Name used in experiment files, `results.json` and `results.csv`.
    pub fn name(self) -> &'static str {
        self.entry().name
    }

    /// Label on axes, in tables and in sentences.
    pub fn label(self) -> &'static str {
        self.entry().label
    }

    /// Unit (never empty: counts say what they count).
    pub fn unit(self) -> &'static str {
        self.entry().unit
    }

    /// Which runs record it.
    pub fn source(self) -> Source {
        self.entry().source
    }

    /// Which direction is better.
    pub fn better(self) -> Better {
        self.entry().better
    }

    /// Whether an experiment of this kind may plot or conclude on it.
    pub fn recorded_by(self, simulated: bool) -> bool {
        match self.source() {
            Source::Both => true,
            Source::Measured => !simulated,
            Source::Simulated => simulated,
            Source::Bound => false,
        }
    }

    /// The metrics an experiment of this kind may name.
    pub fn names(simulated: bool) -> Vec<&'static str> {
        Metric::ALL
            .iter()
            .filter(|m| m.recorded_by(simulated))
            .map(|m| m.name())
            .collect()
    }

    /// "label (unit)" for an axis or a table heading.
    pub fn axis_label(self) -> String {
        format!("{} ({})", self.label(), self.unit())
    }
}

impl fmt::Display for Metric {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.name())
    }
}

/// A metric name that is not in the catalogue.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownMetric(pub String);

impl fmt::Display for UnknownMetric {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let known: Vec<&str> = Metric::ALL
            .iter()
            .filter(|m| m.source() != Source::Bound)
            .map(|m| m.name())
            .collect();
        write!(
            f,
            "unknown metric `{}` (known: {})",
            self.0,
            known.join(", ")
        )
    }
}

impl std::error::Error for UnknownMetric {}

impl FromStr for Metric {
    type Err = UnknownMetric;
    fn from_str(s: &str) -> Result<Metric, UnknownMetric> {
        Metric::ALL
            .iter()
            .copied()
            .find(|m| m.name() == s)
            .ok_or_else(|| UnknownMetric(s.to_owned()))
    }
}

impl Serialize for Metric {
    /// As its name, also as a map key, so `results.json` reads `"throughput": ...`.
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl<'de> Deserialize<'de> for Metric {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Metric, D::Error> {
        let name = String::deserialize(d)?;
        name.parse().map_err(serde::de::Error::custom)
    }
}

/// An axis value: whole numbers without decimals, others as [`fmt()`].
pub fn fmt_value(v: f64) -> String {
    if v.is_finite() && v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{v:.0}")
    } else {
        fmt(v)
    }
}

/// A tick label: whole numbers plainly, others without trailing zeros.
pub fn fmt_tick(v: f64) -> String {
    let s = fmt_value(v);
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// A number with about three significant figures, for tables and sentences.
pub fn fmt(v: f64) -> String {
    if !v.is_finite() {
        return "-".into();
    }
    let a = v.abs();
    if a >= 100.0 || a == 0.0 {
        format!("{v:.0}")
    } else if a >= 10.0 {
        format!("{v:.1}")
    } else if a >= 1.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.3}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    #[test]
    fn every_metric_has_a_unique_name_that_parses_back() {
        for (i, a) in Metric::ALL.iter().enumerate() {
            assert_eq!(a.name().parse::<Metric>().unwrap(), *a);
            assert!(!a.unit().is_empty() && !a.label().is_empty(), "{a}");
            assert!(Metric::ALL[i + 1..].iter().all(|b| b.name() != a.name()));
        }
        assert!(Metric::names(true).contains(&"utilisation"));
        assert!(!Metric::names(false).contains(&"utilisation"));
        assert!(!Metric::names(false).contains(&"saturation_users"));
        let e = "thruput".parse::<Metric>().unwrap_err().to_string();
        assert!(
            e.starts_with("unknown metric `thruput` (known: throughput, mean_ms"),
            "{e}"
        );
        assert_eq!(e.matches("throughput,").count(), 1, "{e}");
    }

    #[test]
    fn metrics_are_json_map_keys_by_name() {
        let m = BTreeMap::from([(Metric::CpuUs, 1.5), (Metric::Throughput, 2.0)]);
        let text = serde_json::to_string(&m).unwrap();
        assert_eq!(text, r#"{"throughput":2.0,"cpu_us":1.5}"#);
        let back: BTreeMap<Metric, f64> = serde_json::from_str(&text).unwrap();
        assert_eq!(back, m);
    }

    #[test]
    fn numbers_keep_three_figures() {
        assert_eq!(fmt(1234.4), "1234");
        assert_eq!(fmt(12.34), "12.3");
        assert_eq!(fmt(1.234), "1.23");
        assert_eq!(fmt(0.01234), "0.012");
        assert_eq!(fmt_value(8.0), "8");
        assert_eq!(fmt_tick(2.50), "2.5");
        assert_eq!(fmt_tick(40.0), "40");
        assert_eq!(fmt_value(0.5), "0.500");
        assert_eq!(Metric::Throughput.axis_label(), "throughput (requests/s)");
    }
}
