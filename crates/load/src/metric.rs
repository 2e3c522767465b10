//! The figures of a report that a check can name, as one enum with one
//! catalogue: the name (the same in `--fail-if`, in the summary and in these
//! docs) and the unit. A report reads its figure (`Report::metric`): the
//! report knows its figures, this catalogue only names them.
//!
//! Everything that names a figure (thresholds, the summary's latency labels,
//! `--help`) takes a [`Metric`], so that a name a user writes is certain to be
//! a figure the report shows, in the unit it shows it in.
//!
//! | name | what | value |
//! |------|------|-------|
//! | `p50`, `p90`, `p99`, `p99.9`, `max`, `mean` | corrected latency (intended start to the outcome; unfinished requests to the end of the run) | a duration with its unit: `200ms`, `1.5s`, `250us` |
//! | `errors` | error rate: `errors / (ok + errors)`, failed connects included | a share: `1%` or `0.01` |
//! | `unfinished` | requests unfinished at the end (in flight or never sent) per scheduled request | a share |
//! | `rps` | completed requests per second (the achieved rate) | a number |
//! | `goodput` | ok requests per second | a number |

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A figure of a report.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Metric {
    /// Median corrected latency.
    P50,
    /// 90th percentile of the corrected latency.
    P90,
    /// 99th percentile of the corrected latency.
    P99,
    /// 99.9th percentile of the corrected latency.
    P999,
    /// Largest corrected latency.
    Max,
    /// Mean corrected latency.
    Mean,
    /// Share of outcomes that were errors (`Report::error_rate`).
    Errors,
    /// Share of scheduled requests unfinished at the end.
    Unfinished,
    /// Completed requests per second.
    Rps,
    /// Ok requests per second.
    Goodput,
}

/// The kind of value a metric takes, which decides how a value is written
/// and what range it lies in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    /// A duration, held in microseconds, written with its unit (`200ms`).
    Micros,
    /// A share: `1%` or `0.01`; 0 to 1.
    Share,
    /// Per second.
    PerSecond,
}

/// One metric's line in the catalogue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Entry {
    /// The name written in a threshold and shown in the summary.
    pub name: &'static str,
    /// Its unit.
    pub unit: Unit,
    /// What it is, in a few words.
    pub what: &'static str,
}

impl Metric {
    /// Every metric, in the order of the documentation.
    pub const ALL: [Metric; 10] = [
        Metric::P50,
        Metric::P90,
        Metric::P99,
        Metric::P999,
        Metric::Max,
        Metric::Mean,
        Metric::Errors,
        Metric::Unfinished,
        Metric::Rps,
        Metric::Goodput,
    ];

    /// The catalogue: everything about a metric, in one place.
    pub fn entry(self) -> Entry {
        let (name, unit, what) = match self {
            Metric::P50 => ("p50", Unit::Micros, "median corrected latency"),
            Metric::P90 => ("p90", Unit::Micros, "90th percentile latency"),
            Metric::P99 => ("p99", Unit::Micros, "99th percentile latency"),
            Metric::P999 => ("p99.9", Unit::Micros, "99.9th percentile latency"),
            Metric::Max => ("max", Unit::Micros, "largest latency"),
            Metric::Mean => ("mean", Unit::Micros, "mean latency"),
            Metric::Errors => ("errors", Unit::Share, "errors / (ok + errors)"),
            Metric::Unfinished => ("unfinished", Unit::Share, "unfinished / scheduled"),
            Metric::Rps => ("rps", Unit::PerSecond, "completed requests per second"),
            Metric::Goodput => ("goodput", Unit::PerSecond, "ok requests per second"),
        };
        Entry { name, unit, what }
    }

    /// The name written in a threshold and shown in the summary.
    pub fn name(self) -> &'static str {
        self.entry().name
    }

    /// The metric's unit.
    pub fn unit(self) -> Unit {
        self.entry().unit
    }

    /// A value of this metric, written in its unit (`1.250ms`, `1.961%`, `100.0/s`).
    pub fn format(self, v: f64) -> String {
        match self.unit() {
            Unit::Micros if v >= 1e6 => format!("{:.3}s", v / 1e6),
            Unit::Micros if v >= 1e3 => format!("{:.3}ms", v / 1e3),
            Unit::Micros => format!("{v:.0}us"),
            Unit::Share => format!("{:.3}%", v * 100.0),
            Unit::PerSecond => format!("{v:.1}/s"),
        }
    }
}

impl fmt::Display for Metric {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Metric {
    type Err = String;
    fn from_str(s: &str) -> Result<Metric, String> {
        Metric::ALL
            .into_iter()
            .find(|m| m.name() == s)
            .ok_or_else(|| {
                let names: Vec<&str> = Metric::ALL.iter().map(|m| m.name()).collect();
                format!("unknown metric `{s}` (one of {})", names.join(", "))
            })
    }
}

impl Serialize for Metric {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl<'de> Deserialize<'de> for Metric {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Metric, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_round_trip() {
        for m in Metric::ALL {
            assert_eq!(m.name().parse::<Metric>(), Ok(m));
            assert_eq!(
                Metric::ALL.iter().filter(|n| n.name() == m.name()).count(),
                1
            );
            let json = serde_json::to_string(&m).unwrap();
            assert_eq!(serde_json::from_str::<Metric>(&json).unwrap(), m);
        }
        assert!("p98".parse::<Metric>().unwrap_err().contains("p99.9"));
    }

    #[test]
    fn values_are_written_in_their_unit() {
        assert_eq!(Metric::P99.format(1250.0), "1.250ms");
        assert_eq!(Metric::Errors.format(0.019_61), "1.961%");
        assert_eq!(Metric::Rps.format(100.0), "100.0/s");
    }
}
