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
//! | `pNN`, `pNN.N` (`p50`, `p95`, `p99.9`, `p99.99`...), `max`, `mean` | corrected latency (intended start to the outcome; unfinished requests to the end of the run) | a duration with its unit: `200ms`, `1.5s`, `250us` |
//! | `errors` | error rate: `errors / (ok + errors)`, failed connects included | a share: `1%` or `0.01` |
//! | `unfinished` | requests unfinished at the end (in flight or never sent) per scheduled request | a share |
//! | `rps` | completed requests per second (the achieved rate) | a number |
//! | `goodput` | ok requests per second | a number |

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A percentile, held exactly in thousandths of a percent (`p99.9` is
/// 99,900): any `pNN` or `pNN.N` with at most three decimals, above 0 and at
/// most 100. Written without trailing zeros (`p99.9`, `p50`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Percentile(u32);

impl Percentile {
    /// The percentile of `milli` thousandths of a percent (`99_900`: p99.9).
    pub const fn from_milli(milli: u32) -> Percentile {
        Percentile(milli)
    }

    /// The percentile, 0 to 100 (`99.9`).
    pub fn value(self) -> f64 {
        f64::from(self.0) / 1000.0
    }

    /// Parses the number of a percentile (`99.9`, `50`), without the `p`.
    pub fn parse_number(s: &str) -> Result<Percentile, String> {
        let bad = |why: &str| format!("percentile `{s}`: {why}");
        let (whole, frac) = s.split_once('.').unwrap_or((s, ""));
        if whole.is_empty()
            || !whole.bytes().all(|b| b.is_ascii_digit())
            || !frac.bytes().all(|b| b.is_ascii_digit())
            || (s.contains('.') && frac.is_empty())
        {
            return Err(bad("expected a number like 95 or 99.9"));
        }
        if frac.len() > 3 {
            return Err(bad("at most three decimals (p99.999)"));
        }
        let whole: u32 = whole
            .parse()
            .ok()
            .filter(|w| *w <= 100)
            .ok_or_else(|| bad("a percentile is at most 100"))?;
        let frac: u32 = format!("{frac:0<3}").parse().unwrap_or(0);
        let milli = whole * 1000 + frac;
        if milli == 0 || milli > 100_000 {
            return Err(bad("a percentile is above 0 and at most 100"));
        }
        Ok(Percentile(milli))
    }
}

impl fmt::Display for Percentile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (whole, frac) = (self.0 / 1000, self.0 % 1000);
        if frac == 0 {
            write!(f, "{whole}")
        } else {
            let frac = format!("{frac:03}");
            write!(f, "{whole}.{}", frac.trim_end_matches('0'))
        }
    }
}

impl FromStr for Percentile {
    type Err = String;
    fn from_str(s: &str) -> Result<Percentile, String> {
        Percentile::parse_number(s.trim().strip_prefix('p').unwrap_or(s.trim()))
    }
}

/// A choice of percentiles, as `--percentiles 50,90,95,99,99.9` writes it:
/// ascending, each once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Percentiles(Vec<Percentile>);

impl Percentiles {
    /// The report's set unless asked otherwise: p50, p90, p99, p99.9.
    pub fn standard() -> Percentiles {
        Percentiles(vec![
            Percentile(50_000),
            Percentile(90_000),
            Percentile(99_000),
            Percentile(99_900),
        ])
    }

    /// The percentiles, ascending.
    pub fn iter(&self) -> impl Iterator<Item = Percentile> + '_ {
        self.0.iter().copied()
    }
}

impl Default for Percentiles {
    fn default() -> Percentiles {
        Percentiles::standard()
    }
}

impl fmt::Display for Percentiles {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<String> = self.0.iter().map(|p| p.to_string()).collect();
        f.write_str(&names.join(","))
    }
}

impl FromStr for Percentiles {
    type Err = String;
    fn from_str(s: &str) -> Result<Percentiles, String> {
        let mut v = s
            .split(',')
            .map(str::parse::<Percentile>)
            .collect::<Result<Vec<_>, _>>()?;
        v.sort();
        v.dedup();
        Ok(Percentiles(v))
    }
}

impl Serialize for Percentiles {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.0.iter().map(|p| p.value()))
    }
}

impl<'de> Deserialize<'de> for Percentiles {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Percentiles, D::Error> {
        let v = Vec::<f64>::deserialize(d)?;
        let mut ps = Vec::with_capacity(v.len());
        for x in v {
            let milli = (x * 1000.0).round();
            if !(1.0..=100_000.0).contains(&milli) {
                return Err(serde::de::Error::custom(format!(
                    "percentile {x} is out of range"
                )));
            }
            ps.push(Percentile(milli as u32));
        }
        Ok(Percentiles(ps))
    }
}

/// A figure of a report.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Metric {
    /// A percentile of the corrected latency (`p50`, `p95`, `p99.9`...).
    Percentile(Percentile),
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
    /// Median corrected latency.
    pub const P50: Metric = Metric::Percentile(Percentile(50_000));
    /// 90th percentile of the corrected latency.
    pub const P90: Metric = Metric::Percentile(Percentile(90_000));
    /// 99th percentile of the corrected latency.
    pub const P99: Metric = Metric::Percentile(Percentile(99_000));
    /// 99.9th percentile of the corrected latency.
    pub const P999: Metric = Metric::Percentile(Percentile(99_900));

    /// Every kind of metric, in the order of the documentation, with the
    /// standard percentiles standing for any `pNN`.
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

    /// The catalogue: everything about a metric, in one place (a
    /// percentile's name is built: see [`Metric::name`]).
    pub fn entry(self) -> Entry {
        let (name, unit, what) = match self {
            Metric::Percentile(_) => ("pNN", Unit::Micros, "a percentile of the latency"),
            Metric::Max => ("max", Unit::Micros, "largest latency"),
            Metric::Mean => ("mean", Unit::Micros, "mean latency"),
            Metric::Errors => ("errors", Unit::Share, "errors / (ok + errors)"),
            Metric::Unfinished => ("unfinished", Unit::Share, "unfinished / scheduled"),
            Metric::Rps => ("rps", Unit::PerSecond, "completed requests per second"),
            Metric::Goodput => ("goodput", Unit::PerSecond, "ok requests per second"),
        };
        Entry { name, unit, what }
    }

    /// The name written in a threshold and shown in the summary (`p99.9`).
    pub fn name(self) -> std::borrow::Cow<'static, str> {
        match self {
            Metric::Percentile(p) => format!("p{p}").into(),
            _ => self.entry().name.into(),
        }
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

impl Metric {
    /// A value of this metric for a sentence: `431 µs`, `1 ms`, `1.25 s`,
    /// `1.96%`, `100.5/s` (trailing zeros dropped).
    pub fn readable(self, v: f64) -> String {
        fn trim(x: f64, decimals: usize) -> String {
            let s = format!("{x:.decimals$}");
            if s.contains('.') {
                s.trim_end_matches('0').trim_end_matches('.').to_string()
            } else {
                s
            }
        }
        match self.unit() {
            Unit::Micros if v >= 1e6 => format!("{} s", trim(v / 1e6, 3)),
            Unit::Micros if v >= 1e3 => format!("{} ms", trim(v / 1e3, 3)),
            Unit::Micros => format!("{} µs", trim(v, 0)),
            Unit::Share => format!("{}%", trim(v * 100.0, 3)),
            Unit::PerSecond => format!("{}/s", trim(v, 1)),
        }
    }
}

impl fmt::Display for Metric {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name())
    }
}

impl FromStr for Metric {
    type Err = String;
    fn from_str(s: &str) -> Result<Metric, String> {
        if let Some(number) = s.strip_prefix('p') {
            if number.starts_with(|c: char| c.is_ascii_digit()) {
                return Percentile::parse_number(number).map(Metric::Percentile);
            }
        }
        Metric::ALL
            .into_iter()
            .filter(|m| !matches!(m, Metric::Percentile(_)))
            .find(|m| m.name() == s)
            .ok_or_else(|| {
                let names: Vec<String> = Metric::ALL.iter().map(|m| m.name().into()).collect();
                format!(
                    "unknown metric `{s}` (one of {}, or any pNN like p95 or p99.99)",
                    names.join(", ")
                )
            })
    }
}

impl Serialize for Metric {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.name())
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
        assert!("latency".parse::<Metric>().unwrap_err().contains("p99.9"));
    }

    #[test]
    fn any_percentile_is_a_metric() {
        let p = |s: &str| match s.parse::<Metric>() {
            Ok(Metric::Percentile(p)) => p,
            other => panic!("{s}: {other:?}"),
        };
        assert_eq!(p("p95").value(), 95.0);
        assert_eq!(p("p99.99").value(), 99.99);
        assert_eq!(p("p99.999").to_string(), "99.999");
        assert_eq!(p("p99.90").to_string(), "99.9");
        assert_eq!(p("p100").value(), 100.0);
        assert_eq!("p99.9".parse::<Metric>(), Ok(Metric::P999));
        for bad in ["p0", "p101", "p99.9999", "p9x", "p99.", "p.5"] {
            assert!(bad.parse::<Metric>().is_err(), "{bad}");
        }
        let all: Percentiles = "99.9,50, 95,50".parse().unwrap();
        assert_eq!(all.to_string(), "50,95,99.9");
        let json = serde_json::to_string(&all).unwrap();
        assert_eq!(json, "[50.0,95.0,99.9]");
        assert_eq!(serde_json::from_str::<Percentiles>(&json).unwrap(), all);
        assert_eq!(Percentiles::default().to_string(), "50,90,99,99.9");
    }

    #[test]
    fn values_are_written_in_their_unit() {
        assert_eq!(Metric::P99.format(1250.0), "1.250ms");
        assert_eq!(Metric::Errors.format(0.019_61), "1.961%");
        assert_eq!(Metric::Rps.format(100.0), "100.0/s");
        assert_eq!(Metric::P99.readable(431.0), "431 µs");
        assert_eq!(Metric::P99.readable(1000.0), "1 ms");
        assert_eq!(Metric::Max.readable(1_250_000.0), "1.25 s");
        assert_eq!(Metric::Errors.readable(0.019_61), "1.961%");
        assert_eq!(Metric::Rps.readable(100.0), "100/s");
    }
}
