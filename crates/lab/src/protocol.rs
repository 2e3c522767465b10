//! The measurement protocol, as recorded: warm-up, then repeats of a fixed
//! window of time (never a fixed number of requests), at least a few of them,
//! and more until the headline metric's 95% interval is narrow enough or a cap
//! is reached.
//!
//! Why a window of time: on this machine a keep-alive server answers 100k
//! requests per second, so a repeat of 80 requests ends before the first timer
//! tick and measures start-up, the scheduler and luck. Why repeats until a
//! precision: three repeats give an interval; whether it is narrow enough
//! depends on the point, so the run says which happened ([`Stopped`]).

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::metric::Metric;
use crate::sample::Sample;

/// Measured time of every repeat of a full run, unless the experiment asks for more.
pub const FULL_WINDOW: Duration = Duration::from_secs(10);
/// Warm-up at the point's full load before its first repeat (full run).
pub const FULL_WARMUP: Duration = Duration::from_secs(2);
/// Measured time of a `--quick` repeat: enough to exercise every step, short
/// enough that CI runs every built-in experiment (about 70 points) in a minute.
pub const QUICK_WINDOW: Duration = Duration::from_millis(250);
/// Warm-up of a `--quick` point.
pub const QUICK_WARMUP: Duration = Duration::from_millis(100);
/// Fewest repeats of a full run: one repeat is an anecdote, two have an
/// interval too wide to use (t(0.975, 1) = 12.7).
pub const MIN_REPEATS: u32 = 3;
/// Most repeats of a point unless the experiment says otherwise: with 6, a
/// ±2% interval needs a spread (standard deviation) under 1.9% of the mean,
/// which a quiet machine gives; a noisy one hits the cap and the report says
/// so. More would cost the reference set an hour per extra repeat-round.
pub const MAX_REPEATS: u32 = 6;
/// Target half-width of the headline metric's 95% interval, relative to its mean.
pub const PRECISION: f64 = 0.02;

/// The protocol of a run, stored in `results.json` and stated in the report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Protocol {
    /// Whether this is a `--quick` run (shorter windows, fewer repeats).
    pub quick: bool,
    /// Shortest measured window of any point, seconds.
    pub window_s: f64,
    /// Shortest warm-up of any point, seconds.
    pub warmup_s: f64,
    /// Fewest repeats per point.
    pub min_repeats: u32,
    /// Most repeats per point.
    pub max_repeats: u32,
    /// Target relative half-width of the headline metric's 95% interval.
    pub precision: f64,
    /// The metric whose interval decides when a point has enough repeats.
    pub headline: Metric,
    /// Set when `servelab lab ab` measured this run interleaved with another
    /// (each point with both binaries, their repeats alternating); absent for a run of its
    /// own. Added within schema 2: older readers ignore it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interleaved: Option<Interleaved>,
}

/// One side of a pair that `servelab lab ab` measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Side {
    /// The binary given as `--a` (before).
    A,
    /// The binary given as `--b` (after).
    B,
}

impl Side {
    /// The other side.
    pub fn other(self) -> Side {
        match self {
            Side::A => Side::B,
            Side::B => Side::A,
        }
    }

    /// "a" or "b": the side's directory under the pair's `--out`.
    pub fn dir_name(self) -> &'static str {
        match self {
            Side::A => "a",
            Side::B => "b",
        }
    }
}

/// How a run was measured interleaved with another by `servelab lab ab`: every
/// point with binary A and binary B, in ABBA order ([`Alternation`]), so that
/// drift hits both runs alike. Stored in the run's
/// [`Protocol`]; both runs of a pair hold the same record but
/// for `side`, `started_s`, `repeat_started_s` and `server_pid`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Interleaved {
    /// This run's side of the pair.
    pub side: Side,
    /// The pair's identity (its start time, UTC, and the lab's process id):
    /// `lab compare` treats two runs as a pair only when it matches.
    pub pair: String,
    /// The `servelab` binary that served side A (absolute path).
    pub exe_a: String,
    /// The `servelab` binary that served side B (absolute path).
    pub exe_b: String,
    /// What the order alternates by. Runs written before it was recorded
    /// alternated by point.
    #[serde(default)]
    pub by: Alternation,
    /// The side measured first at each point, in point order (A, B, B, A, ...);
    /// by repeat, the side that leads the point's first repeat.
    pub first: Vec<Side>,
    /// When this side began each point (its server's start), in seconds after
    /// the pair's first point began: the order as it happened.
    pub started_s: Vec<f64>,
    /// When this side began each of its measured repeats, per point, in seconds
    /// after the pair's first point began (by repeat; empty in older runs).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub repeat_started_s: Vec<Vec<f64>>,
    /// The process id of this side's server at each point (`None` when it did
    /// not start), by repeat; empty in older runs. With the times above, it
    /// shows that both sides' servers were alive at once.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub server_pid: Vec<Option<u32>>,
}

/// What the ABBA order of an interleaved pair alternates by.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Alternation {
    /// A and B measured each point one after the other, each with its own
    /// server and all its repeats, and the side that went first alternated
    /// by point (A B, B A, B A, A B, ...). The first `lab ab` did this.
    #[default]
    Point,
    /// At each point both servers ran side by side, and the repeats alternated
    /// A B, B A, A B, ... (the point's leader first in odd repeats), until both
    /// sides had the same number.
    Repeat,
}

impl Interleaved {
    /// Whether `self` and `other` are the two sides of one pair.
    pub fn pairs_with(&self, other: &Interleaved) -> bool {
        self.pair == other.pair
            && self.side == other.side.other()
            && self.by == other.by
            && self.first == other.first
    }
}

/// What a validity check tests (computed by `crate::check`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CheckKind {
    /// N = X·(R + Z) for closed users.
    LittlesLaw,
    /// The load generator had CPU to spare.
    Client,
    /// No request ended in an error.
    Errors,
    /// Few requests were left unfinished at the end of the window.
    Unfinished,
    /// Every window was the full protocol's length.
    Window,
    /// Server CPU per request agrees with U/X, its floor and the answers.
    Cpu,
    /// No other process took a share of a CPU during the windows.
    Machine,
}

impl CheckKind {
    /// Short name for tables.
    pub fn label(self) -> &'static str {
        match self {
            CheckKind::LittlesLaw => "Little's law",
            CheckKind::Client => "client",
            CheckKind::Errors => "errors",
            CheckKind::Unfinished => "unfinished",
            CheckKind::Window => "window",
            CheckKind::Cpu => "CPU per request",
            CheckKind::Machine => "quiet machine",
        }
    }
}

/// One check of one point.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Check {
    /// What was checked.
    pub kind: CheckKind,
    /// Whether the point passed.
    pub passed: bool,
    /// What was found, in words with the numbers.
    pub detail: String,
}

/// Why a point's repeats stopped where they did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum StopReason {
    /// The headline metric's interval reached the target.
    Precision,
    /// The most repeats allowed were run without reaching the target.
    Cap,
    /// Fewest and most repeats are the same (a `--quick` run, or `--repeats`).
    Fixed,
    /// The headline metric could not be measured, so only the fewest were run.
    Unmeasurable,
}

/// How many repeats a point took, and why it stopped there.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Stopped {
    /// Repeats run.
    pub n: u32,
    /// Why no more were run.
    pub why: StopReason,
    /// The headline metric's 95% half-width relative to its mean (`null`
    /// below 2 repeats or when it was unmeasurable).
    pub relative_half_width: Option<f64>,
}

impl Stopped {
    /// In words, for tables: "3 repeats, ±1.2% (target reached)".
    pub fn describe(&self, precision: f64) -> String {
        let hw = self
            .relative_half_width
            .map_or(String::new(), |h| format!(", ±{:.1}%", h * 100.0));
        let why = match self.why {
            StopReason::Precision => format!("within the ±{:.0}% target", precision * 100.0),
            StopReason::Cap => format!("cap reached before ±{:.0}%", precision * 100.0),
            StopReason::Fixed => "fixed count".into(),
            StopReason::Unmeasurable => "headline unmeasurable".into(),
        };
        format!("{} repeats{hw} ({why})", self.n)
    }
}

/// Whether a point with these headline values (one per repeat so far) needs
/// another repeat; `Some(stop)` when it does not.
pub fn decide(values: &[Option<f64>], min: u32, max: u32, precision: f64) -> Option<Stopped> {
    let n = values.len() as u32;
    if n < min {
        return None;
    }
    let measured: Vec<f64> = values.iter().flatten().copied().collect();
    if measured.len() < values.len() {
        return Some(Stopped {
            n,
            why: StopReason::Unmeasurable,
            relative_half_width: None,
        });
    }
    let rel = Sample::of(&measured).and_then(|s| {
        // All repeats at exactly zero (a collapse): as precise as it gets.
        if s.mean == 0.0 && s.sd == 0.0 && s.n >= 2 {
            Some(0.0)
        } else {
            s.relative_half_width()
        }
    });
    if min == max {
        return (n >= max).then_some(Stopped {
            n,
            why: StopReason::Fixed,
            relative_half_width: rel,
        });
    }
    if rel.is_some_and(|h| h <= precision) {
        return Some(Stopped {
            n,
            why: StopReason::Precision,
            relative_half_width: rel,
        });
    }
    (n >= max).then_some(Stopped {
        n,
        why: StopReason::Cap,
        relative_half_width: rel,
    })
}

/// What the load generator saw in one repeat: the facts behind the point's
/// figures and its validity checks, and the per-second series for timelines.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Window {
    /// Measured time of the repeat, seconds (the load generator's own clock).
    pub window_s: f64,
    /// Closed users.
    pub users: u32,
    /// Mean think time, seconds: the load generator's measured mean (end of
    /// an answer to the next send) when it measured thinks, else the asked
    /// mean. Little's law is checked with the think the users really took.
    pub think_s: f64,
    /// Requests that started (finished or not).
    pub scheduled: u64,
    /// Requests finished: answered, failed or given up.
    pub completed: u64,
    /// Of which answered with a 2xx within their timeout.
    pub ok: u64,
    /// Of which ended in an error.
    pub failed: u64,
    /// Attempts abandoned on their timeout.
    pub timeouts: u64,
    /// Requests not finished when the window ended. Since `servelab-lab/4`
    /// they are outside `mean_response_s`, with their ages in
    /// `unfinished_age_s`; before, their latency counted to the end of the
    /// window, as lower bounds, inside the mean.
    pub unfinished: u64,
    /// TCP connections the load generator opened.
    pub connections: u64,
    /// Seconds the users spent in TCP connects, all connects added (the
    /// load's connect histogram: mean times count). The latency R does not
    /// hold all of it, so Little's law counts it apart. `0` in a run stored
    /// before this field.
    #[serde(default)]
    pub connect_total_s: f64,
    /// Mean time from a request's intended start to its outcome, seconds:
    /// over the finished requests (`servelab-lab/4`, from `servelab-load/5`);
    /// in a run stored before, over every started request, the unfinished
    /// ones counted to the end of the window.
    pub mean_response_s: f64,
    /// The ages of the requests unfinished at the window's end, added up
    /// (the end less each one's intended start), seconds; `None` in a run
    /// stored before `servelab-lab/4`, whose mean holds them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unfinished_age_s: Option<f64>,
    /// Thinks measured as Z (those that ended in a request); `None` without
    /// think time or in a run stored before `servelab-lab/4`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thinks: Option<u64>,
    /// The users' time in thinks that are no draw of Z, seconds: each user's
    /// first (a residual) and the thinks cut by the window's end. `None` as
    /// `thinks`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub think_uncounted_s: Option<f64>,
    /// CPU seconds the load generator's threads used.
    pub client_cpu_s: f64,
    /// The load generator's event-loop threads.
    pub client_threads: u32,
    /// CPU seconds that processes other than the server and the lab used on
    /// the machine during the window ([`crate::process::others`]); absent in
    /// files from before it was measured, or where `/proc/stat` is not read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub others_cpu_s: Option<f64>,
    /// Per second of the window: finished, ok, errors, timeouts, bytes.
    pub series: Vec<servelab_load::Second>,
}

impl Window {
    /// The facts of a load report.
    pub fn of(report: &servelab_load::Report, users: u32, think_s: f64) -> Window {
        let c = &report.counts;
        Window {
            window_s: report.duration_s,
            users,
            think_s: report
                .think
                .as_ref()
                .filter(|t| t.count > 0)
                .map_or(think_s, |t| t.measured_mean_us / 1e6),
            scheduled: c.scheduled,
            completed: c.completed,
            ok: c.ok,
            failed: c.failed,
            timeouts: c.timeouts,
            unfinished: c.in_flight + c.never_sent,
            connections: c.connections,
            connect_total_s: report.connect.mean * report.connect.count as f64 / 1e6,
            mean_response_s: report.latency.mean / 1e6,
            unfinished_age_s: Some(
                report.unfinished_age.mean * report.unfinished_age.count as f64 / 1e6,
            ),
            thinks: report.think.as_ref().map(|t| t.count),
            think_uncounted_s: report.think.as_ref().map(|t| t.uncounted_total_s),
            client_cpu_s: report.client_cpu_s,
            client_threads: u32::try_from(report.threads).unwrap_or(u32::MAX),
            others_cpu_s: None,
            series: report.series.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repeats_go_on_until_the_interval_is_narrow_or_the_cap() {
        // Fewer than the minimum: go on, however tight.
        assert_eq!(decide(&[Some(100.0), Some(100.0)], 3, 10, 0.02), None);
        // Three tight repeats: the target is reached.
        let s = decide(&[Some(100.0), Some(100.5), Some(99.5)], 3, 10, 0.02).unwrap();
        assert_eq!((s.n, s.why), (3, StopReason::Precision));
        assert!(s.relative_half_width.unwrap() < 0.02);
        // Three noisy ones: another repeat.
        assert_eq!(
            decide(&[Some(100.0), Some(120.0), Some(80.0)], 3, 10, 0.02),
            None
        );
        // Noisy at the cap: stop, and say so.
        let noisy: Vec<Option<f64>> = (0..10)
            .map(|i| Some(f64::from(i % 2) * 50.0 + 50.0))
            .collect();
        let s = decide(&noisy, 3, 10, 0.02).unwrap();
        assert_eq!((s.n, s.why), (10, StopReason::Cap));
        // A fixed count (quick) stops at it whatever the spread.
        let s = decide(&[Some(1.0), Some(9.0)], 2, 2, 0.02).unwrap();
        assert_eq!(s.why, StopReason::Fixed);
        // A headline that some repeat could not measure: stop at the minimum.
        let s = decide(&[Some(1.0), None, Some(1.0)], 3, 10, 0.02).unwrap();
        assert_eq!(s.why, StopReason::Unmeasurable);
        // Goodput of zero in every repeat (a collapse) is precise.
        let s = decide(&[Some(0.0), Some(0.0), Some(0.0)], 3, 10, 0.02).unwrap();
        assert_eq!(s.why, StopReason::Precision);
    }

    #[test]
    fn a_stop_reads_as_a_sentence() {
        let s = Stopped {
            n: 4,
            why: StopReason::Precision,
            relative_half_width: Some(0.012),
        };
        assert_eq!(s.describe(0.02), "4 repeats, ±1.2% (within the ±2% target)");
    }
}
