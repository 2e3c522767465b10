//! A service-level objective such as `p99<200ms`: a response-time statistic
//! and the limit it must stay under. `predict --slo` finds the largest load
//! whose predicted statistic meets it.

use std::fmt;
use std::str::FromStr;

use serde::Serialize;

/// The response-time statistic an objective bounds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum SloStat {
    /// The mean response time.
    Mean,
    /// The median.
    P50,
    /// The 90th percentile.
    P90,
    /// The 99th percentile.
    P99,
}

impl SloStat {
    /// Every statistic, with its name in the syntax.
    pub const ALL: [(SloStat, &'static str); 4] = [
        (SloStat::Mean, "mean"),
        (SloStat::P50, "p50"),
        (SloStat::P90, "p90"),
        (SloStat::P99, "p99"),
    ];

    /// Its name in the syntax.
    pub fn name(self) -> &'static str {
        Self::ALL
            .iter()
            .find(|(s, _)| *s == self)
            .map_or("?", |(_, n)| n)
    }
}

/// `STAT<DURATION`: the statistic must stay below the limit.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Slo {
    /// What is bounded.
    pub stat: SloStat,
    /// The bound, seconds.
    pub limit_s: f64,
}

impl FromStr for Slo {
    type Err = String;

    fn from_str(s: &str) -> Result<Slo, String> {
        let (name, limit) = s
            .split_once('<')
            .ok_or_else(|| format!("`{s}` is not STAT<DURATION (for example p99<200ms)"))?;
        let name = name.trim();
        let stat = SloStat::ALL
            .iter()
            .find(|(_, n)| *n == name)
            .map(|(s, _)| *s)
            .ok_or_else(|| format!("unknown statistic `{name}`: use mean, p50, p90 or p99"))?;
        let limit_s = servelab_dist::parse_secs_f64(limit.trim()).map_err(|e| e.to_string())?;
        if !(limit_s > 0.0 && limit_s.is_finite()) {
            return Err(format!("the limit of `{s}` must be a positive duration"));
        }
        Ok(Slo { stat, limit_s })
    }
}

impl fmt::Display for Slo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}<{}ms", self.stat.name(), self.limit_s * 1e3)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_objective_parses_and_prints_back() {
        let s: Slo = "p99<200ms".parse().unwrap();
        assert_eq!(s.stat, SloStat::P99);
        assert!((s.limit_s - 0.2).abs() < 1e-12);
        assert_eq!(s.to_string(), "p99<200ms");
        assert_eq!("mean < 1s".parse::<Slo>().unwrap().stat, SloStat::Mean);
        assert!("p98<1s".parse::<Slo>().is_err());
        assert!("p99>1s".parse::<Slo>().is_err());
        assert!("p99<0s".parse::<Slo>().is_err());
    }
}
