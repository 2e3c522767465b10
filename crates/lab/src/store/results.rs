//! What a run records: every point, every repeat, the configuration and the
//! machine, as `results.json` (the source `lab report` and `lab compare` read back)
//! and `results.csv` (one row per repeat, for spreadsheets and scripts).
//!
//! Schema `servelab-lab/4`: within version 4 fields may be added, never renamed,
//! and a field never changes what it holds. Version 3 differs in what the
//! measured response times hold: `mean_ms`, `p50_ms`, `p99_ms` and each
//! window's `mean_response_s` were over every started request, the requests
//! unfinished at a window's end counted to that end (lower bounds, which bias
//! a mean low); since version 4 (from `servelab-load/5`) they are over the
//! finished requests, and each window keeps the unfinished requests' ages
//! apart (`unfinished_age_s`) with the thinks that are no draw of Z (`thinks`,
//! `think_uncounted_s`), which Little's law over a window needs. A version-3
//! file is read as it is (its figures cannot be split after the fact), keeps
//! its schema in memory so that `lab compare` can say that two runs' response
//! times differ in kind, and its stored checks stay as they were made.
//! Version 2 differs from 3 in one field:
//! `error_pct` was the measured throughput against the exact model's,
//! (measured − exact) / exact; since version 3 it is the model's error in the
//! one convention of the lab and `predict`, (exact − measured) / measured. A
//! version-2 file is read and its `error_pct` recomputed from the throughputs
//! it stores beside it ([`PointRecord::set_model_error`]); and its simulated
//! `p50_ms`/`p99_ms`, which were the attempt's percentiles also where users
//! retried, are dropped where the simulated user and attempt means differ
//! ([`attempt_is_user_time`]). Added within version 3: a simulated point's
//! `p50_ms`/`p99_ms` are the simulator's percentiles of the user's response
//! time (timeouts and retries included, as `load` measures them), present at
//! every simulated point. Before, they were the attempt's percentiles, written
//! only where the user and attempt means agreed within 1%, where the two are
//! the same figure; so an earlier version-3 file lacks them where users
//! retried, and a new one adds them there. Version 1 (fixed request counts,
//! medians of 2-3 repeats, simulated means stored under `median`/`min`/`max`,
//! `mean_ms` once per attempt and later per user) is refused with one line that
//! says why ([`RunResults::read`]): its figures cannot be read with this
//! version's meaning.
//!
//! A figure that could not be measured is never written as a number: it is
//! absent from the repeat and from the summary, and named with the reason in the
//! point's `unmeasurable` map (`results.json`); in `results.csv` its cell reads
//! `unmeasurable`.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::error::{LabError, Result};
use crate::experiment::Scalar;
use crate::metric::Metric;
use crate::store::machine::Machine;

/// Whether a simulated attempt's response time stands for the user's: their
/// means agree within 1% (nobody timed out and retried). Version 2 stored the
/// simulator's percentiles of the attempt's time, `load`'s being of the user's;
/// its migration keeps them only where this holds.
pub fn attempt_is_user_time(user_mean: f64, attempt_mean: f64) -> bool {
    user_mean.is_finite()
        && attempt_mean.is_finite()
        && (user_mean - attempt_mean).abs() <= 0.01 * attempt_mean.abs()
}

/// The figures of one repeat.
pub type Figures = BTreeMap<Metric, f64>;

/// The word written in place of a figure that could not be measured.
pub const UNMEASURABLE: &str = "unmeasurable";

/// The `schema` field of `results.json`.
pub const SCHEMA: &str = "servelab-lab/4";
/// The previous schema, read as it is (see the module's docs).
pub const SCHEMA_V3: &str = "servelab-lab/3";

/// A metric over repeats (or simulated replications): the mean with its 95%
/// Student-t interval, and, for measured repeats, their median, smallest and
/// largest. Each field holds what its name says.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Stat {
    /// Repeats (or replications) behind it.
    pub n: u32,
    /// Their mean.
    pub mean: f64,
    /// Their sample standard deviation (`null` for one repeat).
    pub sd: Option<f64>,
    /// Low end of the mean's 95% interval (the mean itself for one repeat).
    pub ci95_lo: f64,
    /// High end of the mean's 95% interval (the mean itself for one repeat).
    pub ci95_hi: f64,
    /// Median of the repeats (`null` for simulated figures, whose replications
    /// are not stored).
    pub median: Option<f64>,
    /// Smallest repeat (`null` for simulated figures).
    pub min: Option<f64>,
    /// Largest repeat (`null` for simulated figures).
    pub max: Option<f64>,
}

impl Stat {
    /// Mean, interval, median and range of some values; `None` when none is finite.
    pub fn of(values: &[f64]) -> Option<Stat> {
        let mut v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
        let s = crate::sample::Sample::of(&v)?;
        v.sort_by(f64::total_cmp);
        let n = v.len();
        let median = if n % 2 == 1 {
            v[n / 2]
        } else {
            (v[n / 2 - 1] + v[n / 2]) / 2.0
        };
        let h = s.half_width().unwrap_or(0.0);
        Some(Stat {
            n: s.n,
            mean: s.mean,
            sd: (s.n >= 2).then_some(s.sd),
            ci95_lo: s.mean - h,
            ci95_hi: s.mean + h,
            median: Some(median),
            min: Some(v[0]),
            max: Some(v[n - 1]),
        })
    }

    /// A simulated mean over `n` replications with its 95% half-width.
    pub fn interval(mean: f64, half_width: f64, n: u32) -> Stat {
        let t = crate::sample::t_quantile(0.975, f64::from(n.max(2) - 1));
        Stat {
            n,
            mean,
            sd: (n >= 2).then(|| half_width * f64::from(n).sqrt() / t),
            ci95_lo: mean - half_width,
            ci95_hi: mean + half_width,
            median: None,
            min: None,
            max: None,
        }
    }

    /// One value, no spread.
    pub fn exact(v: f64) -> Stat {
        Stat {
            n: 1,
            mean: v,
            sd: None,
            ci95_lo: v,
            ci95_hi: v,
            median: Some(v),
            min: Some(v),
            max: Some(v),
        }
    }

    /// Half-width of the 95% interval.
    pub fn half_width(&self) -> f64 {
        (self.ci95_hi - self.ci95_lo) / 2.0
    }

    /// The sample behind it, for a test.
    pub(crate) fn sample(&self) -> crate::sample::Sample {
        crate::sample::Sample {
            n: self.n,
            mean: self.mean,
            sd: self.sd.unwrap_or(0.0),
        }
    }
}

// The record of an interleaved pair is part of the run's protocol, and lives
// there; these names are kept for the modules that read them from here.
pub use crate::protocol::{Alternation, Interleaved, Side};

/// How a point ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// Every repeat produced figures.
    Ok,
    /// Something went wrong (the reason says what); the run went on.
    Failed,
    /// The server or peer does not exist on this machine or in this build.
    Unavailable,
    /// Not run: the run was interrupted first.
    Skipped,
}

impl Status {
    /// Lowercase name.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::Failed => "failed",
            Status::Unavailable => "unavailable",
            Status::Skipped => "skipped",
        }
    }
}

/// One point of a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PointRecord {
    /// Position in the run.
    pub index: usize,
    /// Server label (measured experiments).
    pub server: Option<String>,
    /// Axis values.
    pub vars: Vec<(String, Scalar)>,
    /// How it ended.
    pub status: Status,
    /// Why it failed or was unavailable.
    pub reason: Option<String>,
    /// The server's command line.
    pub command: Option<String>,
    /// Metrics of every repeat.
    pub repeats: Vec<Figures>,
    /// What the load generator saw in every repeat (measured points): window,
    /// counts, client CPU, and the per-second series.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub windows: Vec<crate::protocol::Window>,
    /// How many repeats were run, and why they stopped there (measured points).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopped: Option<crate::protocol::Stopped>,
    /// The validity checks of the point (Little's law, the client, errors and
    /// unfinished requests); a failed one flags the point, never drops it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub checks: Vec<crate::protocol::Check>,
    /// Mean with its 95% interval, and median and range, of every metric.
    pub summary: BTreeMap<Metric, Stat>,
    /// Metrics that could not be measured at this point, with the reason; they
    /// have no summary (and are absent from the repeats that could not measure
    /// them).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub unmeasurable: BTreeMap<Metric, String>,
    /// The simulator's prediction (mean and 95% interval over replications).
    pub predicted: BTreeMap<Metric, Stat>,
    /// The exact model's values (and bounds), where it applies.
    pub exact: BTreeMap<Metric, f64>,
    /// Remarks (why there is no exact solution, how many requests failed).
    pub notes: Vec<String>,
}

impl PointRecord {
    /// The record of a planned point before it runs: status ok, no figures yet.
    pub fn planned(p: &crate::experiment::PlannedPoint) -> PointRecord {
        PointRecord {
            index: p.index,
            server: p.server_label().map(String::from),
            vars: p.vars.clone(),
            status: Status::Ok,
            reason: None,
            command: None,
            repeats: Vec::new(),
            windows: Vec::new(),
            stopped: None,
            checks: Vec::new(),
            summary: BTreeMap::new(),
            unmeasurable: BTreeMap::new(),
            predicted: BTreeMap::new(),
            exact: BTreeMap::new(),
            notes: Vec::new(),
        }
    }

    /// The value of axis `name`.
    pub fn var(&self, name: &str) -> Option<&Scalar> {
        self.vars.iter().find(|(n, _)| n == name).map(|(_, v)| v)
    }

    /// The exact model's error at every repeat, `error_pct` = (exact −
    /// measured) / measured throughput in percent, and the summary again; no
    /// change at a point without an exact throughput or repeats.
    pub fn set_model_error(&mut self) {
        let Some(&x) = self.exact.get(&Metric::Throughput) else {
            return;
        };
        if x <= 0.0 || self.repeats.is_empty() {
            return;
        }
        for r in &mut self.repeats {
            match r.get(&Metric::Throughput) {
                Some(&m) if m > 0.0 => {
                    r.insert(Metric::ErrorPct, (x - m) / m * 100.0);
                }
                _ => {
                    r.remove(&Metric::ErrorPct);
                }
            }
        }
        self.summary.clear();
        self.summarise();
    }

    /// Mean, interval, median and range of every metric over the repeats; a metric that some
    /// repeat could not measure gets no summary (see [`PointRecord::unmeasurable`]).
    pub fn summarise(&mut self) {
        let mut keys: Vec<Metric> = self
            .repeats
            .iter()
            .flat_map(|r| r.keys().copied())
            .collect();
        keys.sort();
        keys.dedup();
        for k in keys {
            if self.unmeasurable.contains_key(&k) {
                continue;
            }
            let vals: Vec<f64> = self
                .repeats
                .iter()
                .filter_map(|r| r.get(&k).copied())
                .collect();
            if let Some(s) = Stat::of(&vals) {
                self.summary.insert(k, s);
            }
        }
    }

    /// "server, axis=value, ..." for progress lines and tables.
    pub fn label(&self) -> String {
        let mut parts: Vec<String> = self.server.iter().cloned().collect();
        parts.extend(self.vars.iter().map(|(n, v)| format!("{n}={v}")));
        parts.join(", ")
    }
}

/// A whole run: `results.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunResults {
    /// [`SCHEMA`].
    pub schema: String,
    /// Experiment name.
    pub experiment: String,
    /// Where the experiment came from (`builtin:NAME` or a path).
    pub source_file: String,
    /// The experiment file's text, so a report can be rebuilt from the results alone.
    pub source: String,
    /// The exact command that reruns it.
    pub command: String,
    /// Whether `--quick` was on.
    pub quick: bool,
    /// Fewest measured repeats per point.
    pub repeats: u32,
    /// The measurement protocol every measured point followed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protocol: Option<crate::protocol::Protocol>,
    /// Start time, UTC (`2026-11-22T03:04:05Z`).
    pub started_utc: String,
    /// Wall time of the run.
    pub duration_s: f64,
    /// The machine.
    pub machine: Machine,
    /// How server and load were placed on CPUs.
    pub placement: String,
    /// True when Ctrl-C or SIGTERM ended the run early.
    pub interrupted: bool,
    /// The kernel scheduler's slice and switch cost, when the experiment
    /// used them (`{kernel_quantum}`, `{kernel_switch}`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kernel: Option<crate::process::sched::KernelSched>,
    /// Every point.
    pub points: Vec<PointRecord>,
}

impl RunResults {
    /// Writes `results.json` into `dir`.
    pub fn write_json(&self, dir: &Path) -> Result<()> {
        let path = dir.join("results.json");
        let text =
            serde_json::to_string_pretty(self).map_err(|e| LabError::Other(e.to_string()))?;
        std::fs::write(&path, text + "\n").map_err(|e| LabError::io(path, e))
    }

    /// Reads `results.json` from a results directory (or the file itself).
    pub fn read(path: &Path) -> Result<RunResults> {
        let file = if path.is_dir() {
            path.join("results.json")
        } else {
            path.to_path_buf()
        };
        let text = std::fs::read_to_string(&file).map_err(|e| LabError::io(&file, e))?;
        let value: serde_json::Value =
            serde_json::from_str(&text).map_err(|e| LabError::Results {
                path: file.clone(),
                message: format!("not JSON: {e}"),
            })?;
        let mut migrate = false;
        match value.get("schema").and_then(|s| s.as_str()) {
            Some(SCHEMA | SCHEMA_V3) => {}
            Some("servelab-lab/2") => migrate = true,
            Some("servelab-lab/1") => {
                return Err(LabError::Results {
                    path: file,
                    message: format!(
                        "schema servelab-lab/1 is not read by this lab ({SCHEMA}): its repeats were \
                         fixed request counts and its `median` fields hold simulated means, so \
                         rerun the experiment (its command is in the file's `command`)"
                    ),
                });
            }
            _ => {
                return Err(LabError::Results {
                    path: file,
                    message: format!("not a servelab lab results file (schema is not {SCHEMA})"),
                });
            }
        }
        let mut results: RunResults =
            serde_json::from_value(value).map_err(|e| LabError::Results {
                path: file,
                message: e.to_string(),
            })?;
        if migrate {
            for p in &mut results.points {
                p.set_model_error();
                // Version 2 predicted the percentiles of the attempt's
                // response time beside `load`'s of the user's, also where
                // they differ.
                let mean = |m: Metric| p.predicted.get(&m).map(|s| s.mean);
                if let (Some(user), Some(attempt)) = (mean(Metric::MeanMs), mean(Metric::AttemptMs))
                    && !attempt_is_user_time(user, attempt)
                {
                    p.predicted.remove(&Metric::P50Ms);
                    p.predicted.remove(&Metric::P99Ms);
                }
            }
            results.schema = SCHEMA_V3.into();
        }
        Ok(results)
    }

    /// Writes `results.csv` into `dir`: one row per repeat (one row for a point
    /// without repeats), every metric a column, predicted values beside them.
    pub fn write_csv(&self, dir: &Path) -> Result<()> {
        let path = dir.join("results.csv");
        std::fs::write(&path, self.to_csv()).map_err(|e| LabError::io(path, e))
    }

    /// The CSV text of [`RunResults::write_csv`].
    pub fn to_csv(&self) -> String {
        let axes: Vec<String> = self.points.first().map_or_else(Vec::new, |p| {
            p.vars.iter().map(|(n, _)| n.clone()).collect()
        });
        let mut metrics: Vec<Metric> = Vec::new();
        let mut predicted: Vec<Metric> = Vec::new();
        let mut exact: Vec<Metric> = Vec::new();
        let add = |list: &mut Vec<Metric>, k: &Metric| {
            if !list.contains(k) {
                list.push(*k);
            }
        };
        for p in &self.points {
            for k in p.repeats.iter().flat_map(|r| r.keys()) {
                add(&mut metrics, k);
            }
            for k in p.unmeasurable.keys() {
                add(&mut metrics, k);
            }
            for k in p.predicted.keys() {
                add(&mut predicted, k);
            }
            for k in p.exact.keys() {
                add(&mut exact, k);
            }
        }
        metrics.sort();
        let mut out = String::new();
        let mut head = vec!["point".to_string(), "server".to_string()];
        head.extend(axes.iter().cloned());
        head.extend(["status".into(), "repeat".into()]);
        head.extend(metrics.iter().map(|m| m.name().to_string()));
        for k in &predicted {
            head.extend([
                format!("predicted_{k}"),
                format!("predicted_{k}_ci95_lo"),
                format!("predicted_{k}_ci95_hi"),
            ]);
        }
        head.extend(exact.iter().map(|k| format!("exact_{k}")));
        head.push("reason".into());
        out.push_str(&head.join(","));
        out.push('\n');
        for p in &self.points {
            let rows: Vec<Option<&Figures>> = if p.repeats.is_empty() {
                vec![None]
            } else {
                p.repeats.iter().map(Some).collect()
            };
            for (i, r) in rows.into_iter().enumerate() {
                let mut cells = vec![
                    p.index.to_string(),
                    csv_cell(p.server.as_deref().unwrap_or("")),
                ];
                for a in &axes {
                    cells.push(csv_cell(
                        &p.var(a).map(|v| v.to_string()).unwrap_or_default(),
                    ));
                }
                cells.push(p.status.as_str().into());
                cells.push(if r.is_some() {
                    (i + 1).to_string()
                } else {
                    String::new()
                });
                for k in &metrics {
                    cells.push(match r.and_then(|r| r.get(k)) {
                        Some(v) => num(*v),
                        None if r.is_some() && p.unmeasurable.contains_key(k) => {
                            UNMEASURABLE.to_string()
                        }
                        None => String::new(),
                    });
                }
                for k in &predicted {
                    match p.predicted.get(k) {
                        Some(s) => cells.extend([num(s.mean), num(s.ci95_lo), num(s.ci95_hi)]),
                        None => cells.extend([String::new(), String::new(), String::new()]),
                    }
                }
                for k in &exact {
                    cells.push(p.exact.get(k).map_or_else(String::new, |v| num(*v)));
                }
                cells.push(csv_cell(p.reason.as_deref().unwrap_or("")));
                out.push_str(&cells.join(","));
                out.push('\n');
            }
        }
        out
    }
}

fn num(v: f64) -> String {
    let mut s = String::new();
    let _ = write!(s, "{v}");
    s
}

/// Quotes a CSV cell when it needs it (RFC 4180).
pub(crate) fn csv_cell(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A point with nothing in it, for other modules' tests.
    pub(crate) fn empty_point() -> PointRecord {
        PointRecord {
            index: 0,
            server: None,
            vars: vec![],
            status: Status::Ok,
            reason: None,
            command: None,
            repeats: vec![],
            windows: vec![],
            stopped: None,
            checks: vec![],
            summary: BTreeMap::new(),
            unmeasurable: BTreeMap::new(),
            predicted: BTreeMap::new(),
            exact: BTreeMap::new(),
            notes: vec![],
        }
    }

    /// A pair's record written before `by` existed (the first `lab ab`, which
    /// alternated by point) still reads, and says so.
    #[test]
    fn an_interleaved_record_without_its_order_reads_as_by_point() {
        let old = r#"{"side":"b","pair":"p","exe_a":"/a","exe_b":"/b","first":["a","b"],"started_s":[0.0,1.5]}"#;
        let i: Interleaved = serde_json::from_str(old).unwrap();
        assert_eq!(i.by, Alternation::Point);
        assert!(i.repeat_started_s.is_empty() && i.server_pid.is_empty());
        let new = Interleaved {
            by: Alternation::Repeat,
            repeat_started_s: vec![vec![0.5, 2.0]],
            server_pid: vec![Some(7), None],
            ..i.clone()
        };
        let text = serde_json::to_string(&new).unwrap();
        assert!(text.contains(r#""by":"repeat""#), "{text}");
        assert_eq!(serde_json::from_str::<Interleaved>(&text).unwrap(), new);
        // The two sides of one pair must agree on the order.
        let a = Interleaved {
            side: Side::A,
            ..new.clone()
        };
        assert!(a.pairs_with(&new));
        assert!(!a.pairs_with(&i), "by point and by repeat are not one pair");
    }

    #[test]
    fn stat_is_mean_with_interval_and_median_with_range() {
        let s = Stat::of(&[3.0, 1.0, 2.0]).unwrap();
        assert_eq!((s.median, s.min, s.max), (Some(2.0), Some(1.0), Some(3.0)));
        assert_eq!((s.n, s.mean, s.sd), (3, 2.0, Some(1.0)));
        // t(0.975, 2) / sqrt(3) = 2.484
        assert!((s.half_width() - 2.484_1).abs() < 1e-3, "{s:?}");
        assert_eq!(Stat::of(&[1.0, 4.0]).unwrap().median, Some(2.5));
        assert!(Stat::of(&[f64::NAN]).is_none());
        let one = Stat::of(&[7.0]).unwrap();
        assert_eq!((one.ci95_lo, one.ci95_hi, one.sd), (7.0, 7.0, None));
        // A simulated interval keeps its mean and half-width, and no median.
        let sim = Stat::interval(10.0, 1.0, 5);
        assert_eq!((sim.ci95_lo, sim.ci95_hi, sim.median), (9.0, 11.0, None));
        let back = sim.sample().half_width().unwrap();
        assert!((back - 1.0).abs() < 1e-9, "{back}");
    }

    #[test]
    fn a_version_1_results_file_is_refused_with_one_line_that_says_why() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("results.json");
        std::fs::write(&path, r#"{"schema": "servelab-lab/1", "points": []}"#).unwrap();
        let e = RunResults::read(dir.path()).unwrap_err().to_string();
        assert!(
            e.contains("servelab-lab/1 is not read") && e.contains("rerun"),
            "{e}"
        );
        assert_eq!(e.lines().count(), 1, "{e}");
    }

    /// Version 2 stored `error_pct` as (measured − exact) / exact; read back,
    /// it is the model's error against the measured, as version 3 writes it.
    #[test]
    fn a_version_2_file_is_read_with_its_model_error_in_the_current_convention() {
        let mut point = PointRecord {
            index: 0,
            server: Some("pool".into()),
            vars: vec![],
            status: Status::Ok,
            reason: None,
            command: None,
            // Version 2's error_pct: (90 - 100) / 100 and (125 - 100) / 100.
            repeats: [(90.0, -10.0), (125.0, 25.0)]
                .iter()
                .map(|&(x, e)| BTreeMap::from([(Metric::Throughput, x), (Metric::ErrorPct, e)]))
                .collect(),
            windows: vec![],
            stopped: None,
            checks: vec![],
            summary: BTreeMap::new(),
            unmeasurable: BTreeMap::new(),
            // Users retried: their mean is 1.5 times the attempt's, so the
            // attempt's p99 is not what `load` measured.
            predicted: BTreeMap::from([
                (Metric::MeanMs, Stat::interval(150.0, 1.0, 5)),
                (Metric::AttemptMs, Stat::interval(100.0, 1.0, 5)),
                (Metric::P99Ms, Stat::interval(300.0, 1.0, 5)),
            ]),
            exact: BTreeMap::from([(Metric::Throughput, 100.0)]),
            notes: vec![],
        };
        point.summarise();
        let results = RunResults {
            schema: "servelab-lab/2".into(),
            experiment: "t".into(),
            source_file: "t".into(),
            source: String::new(),
            command: String::new(),
            quick: true,
            repeats: 2,
            protocol: None,
            started_utc: String::new(),
            duration_s: 0.0,
            machine: Machine::detect("0", None),
            placement: String::new(),
            interrupted: false,
            kernel: None,
            points: vec![point],
        };
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("results.json"),
            serde_json::to_string(&results).unwrap(),
        )
        .unwrap();
        let back = RunResults::read(dir.path()).unwrap();
        assert_eq!(back.schema, SCHEMA_V3);
        let e: Vec<f64> = back.points[0]
            .repeats
            .iter()
            .map(|r| r[&Metric::ErrorPct])
            .collect();
        assert!((e[0] - 100.0 * 10.0 / 90.0).abs() < 1e-9, "{e:?}");
        assert!((e[1] + 20.0).abs() < 1e-9, "{e:?}");
        let mean = back.points[0].summary[&Metric::ErrorPct].mean;
        assert!((mean - (e[0] + e[1]) / 2.0).abs() < 1e-9, "{mean}");
        let predicted = &back.points[0].predicted;
        assert!(!predicted.contains_key(&Metric::P99Ms), "{predicted:?}");
        assert!(predicted.contains_key(&Metric::MeanMs));
        assert!(attempt_is_user_time(100.5, 100.0) && !attempt_is_user_time(150.0, 100.0));
    }

    #[test]
    fn an_unmeasurable_figure_is_a_word_in_the_csv_and_absent_from_the_json_figures() {
        let point = PointRecord {
            index: 0,
            server: Some("serial".into()),
            vars: vec![],
            status: Status::Ok,
            reason: None,
            command: None,
            repeats: vec![BTreeMap::from([(Metric::Throughput, 21000.0)])],
            windows: vec![],
            stopped: None,
            checks: vec![],
            summary: BTreeMap::from([(Metric::Throughput, Stat::exact(21000.0))]),
            unmeasurable: BTreeMap::from([(Metric::CpuUs, "2 ticks".to_string())]),
            predicted: BTreeMap::new(),
            exact: BTreeMap::new(),
            notes: vec![],
        };
        let results = RunResults {
            schema: SCHEMA.into(),
            experiment: "t".into(),
            source_file: "t".into(),
            source: String::new(),
            command: String::new(),
            quick: true,
            repeats: 1,
            protocol: None,
            started_utc: String::new(),
            duration_s: 0.0,
            machine: Machine::detect("0", None),
            placement: String::new(),
            interrupted: false,
            kernel: None,
            points: vec![point],
        };
        let csv = results.to_csv();
        let mut lines = csv.lines();
        assert_eq!(
            lines.next().unwrap(),
            "point,server,status,repeat,throughput,cpu_us,reason"
        );
        assert_eq!(lines.next().unwrap(), "0,serial,ok,1,21000,unmeasurable,");
        let json = serde_json::to_value(&results.points[0]).unwrap();
        assert_eq!(json["unmeasurable"]["cpu_us"], "2 ticks");
        assert!(json["summary"].get("cpu_us").is_none());
        assert!(json["repeats"][0].get("cpu_us").is_none());
    }

    fn point(throughput: &[f64]) -> PointRecord {
        PointRecord {
            index: 0,
            server: None,
            vars: vec![],
            status: Status::Ok,
            reason: None,
            command: None,
            windows: vec![],
            stopped: None,
            checks: vec![],
            repeats: throughput
                .iter()
                .map(|v| Figures::from([(Metric::Throughput, *v), (Metric::CpuUs, 3.0)]))
                .collect(),
            summary: BTreeMap::new(),
            unmeasurable: BTreeMap::new(),
            predicted: BTreeMap::new(),
            exact: BTreeMap::new(),
            notes: vec![],
        }
    }

    #[test]
    fn summarise_takes_median_and_range_per_metric_but_not_the_unmeasurable() {
        let mut p = point(&[1.0, 5.0, 2.0]);
        p.summarise();
        let t = p.summary[&Metric::Throughput];
        assert_eq!((t.median, t.min, t.max), (Some(2.0), Some(1.0), Some(5.0)));
        assert!((t.mean - 8.0 / 3.0).abs() < 1e-12);
        let mut p = point(&[1.0, 2.0]);
        p.unmeasurable.insert(Metric::CpuUs, "too short".into());
        p.summarise();
        assert!(p.summary.contains_key(&Metric::Throughput));
        assert!(!p.summary.contains_key(&Metric::CpuUs));
    }

    #[test]
    fn csv_cells_are_quoted_when_needed() {
        assert_eq!(csv_cell("pool, sync log"), "\"pool, sync log\"");
        assert_eq!(csv_cell("a\"b"), "\"a\"\"b\"");
        assert_eq!(csv_cell("pool"), "pool");
    }
}
