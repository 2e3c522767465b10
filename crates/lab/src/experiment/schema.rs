//! The experiment file format (TOML): the serde types, typed where a value is
//! not a template (engines, peers, metrics, conclusion kinds), so that a wrong
//! word is reported by the TOML reader itself with its line and column.
//!
//! An experiment is data, not code, so that a user can write their own: which
//! servers to start, which load to drive them with, which axes to sweep, what to
//! predict with the simulator, what to plot and what sentence to conclude with.
//! Any value in `[[server]] args`, `[load]`, `[predict]`, `[simulate]` and
//! `[[file]]` may contain `{AXIS}` placeholders, replaced by the point's value of
//! that axis; `{tmp}` is the run's temporary directory. Templates are expanded
//! and resolved once, into a [`Plan`](super::Plan), before anything runs.
//!
//! ```toml
//! name = "session"
//! title = "Session length and the shared logger"
//! question = "What does a shared access log cost as sessions get longer?"
//! repeats = 3
//!
//! [[axis]]
//! name = "session"
//! label = "session length"
//! unit = "requests"
//! values = [1, 10, 100]
//! quick = [1, 100]
//! log = true
//!
//! [[file]]
//! name = "5k.bin"
//! size = 5000
//!
//! [[server]]
//! label = "pool, sync log"
//! engine = "pool"
//! args = ["--log", "{tmp}/access.log", "--log-mode", "sync"]
//!
//! [load]
//! users = 8
//! session = "{session}"  # each user opens a new connection every {session} requests
//! duration = "10s"       # measured window of every repeat (the default)
//! warmup = "2s"          # at full load, before the first repeat (the default)
//! path = "/5k.bin"
//!
//! [[plot]]
//! title = "Throughput"
//! x = "session"
//! y = "throughput"
//!
//! [conclusion]
//! kind = "best"
//! metric = "throughput"
//!
//! [quick]
//! repeats = 2
//! duration = "0.25s"
//! ```
//!
//! Over TLS: a servelab server given `--tls-self-signed` or `--tls-cert` and
//! `--tls-key` in its `args` is loaded over `https://` (its warm-up, drain and
//! status reader too); `[load] tls_resume = true|false` (or an axis of such
//! values) says whether new connections resume a session, and
//! `[predict]`/`[simulate]` take `session` and `first_demand` to give a
//! connection's first request the handshake's extra CPU (see `experiments/tls.toml`).

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Deserializer, Serialize};
use servelab_load::LoadSettings;
use servelab_server::Engine;
use toml::Spanned;

use crate::error::{LabError, Result};
use crate::metric::Metric;
use crate::process::peer::Peer;

/// A TOML scalar as written: the value of an axis or of a templated field.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(untagged)]
pub enum Scalar {
    /// An integer (`8`).
    Int(i64),
    /// A float (`0.5`).
    Float(f64),
    /// A string (`"exp:20ms"`, `"{users}"`).
    Str(String),
    /// A boolean (`true`, as `[load] tls_resume` or an axis of such values).
    Bool(bool),
}

impl Scalar {
    /// The value as a number, when it is one (strings that parse count).
    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Scalar::Int(i) => Some(*i as f64),
            Scalar::Float(f) => Some(*f),
            Scalar::Str(s) => s.trim().parse().ok(),
            Scalar::Bool(_) => None,
        }
    }
}

impl fmt::Display for Scalar {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Scalar::Int(i) => write!(f, "{i}"),
            Scalar::Float(x) => write!(f, "{x}"),
            Scalar::Str(s) => f.write_str(s),
            Scalar::Bool(b) => write!(f, "{b}"),
        }
    }
}

/// A field that may hold `{AXIS}` placeholders; the span points into the file.
pub type Template = Spanned<Scalar>;

/// Where an experiment came from: named in error messages, stored in results.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Source {
    /// `experiments/NAME.toml` for a built-in experiment, or the file's path.
    pub file: String,
    /// The TOML text.
    pub text: String,
}

impl Source {
    /// The error of a field at byte `span` of this file: `file:line:column: message`.
    pub(crate) fn error_at(&self, span: std::ops::Range<usize>, message: String) -> LabError {
        let (line, column) = line_col(&self.text, span.start);
        LabError::Experiment {
            file: self.file.clone(),
            line,
            column,
            message,
        }
    }
}

/// A whole experiment file.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Experiment {
    /// Short name: the `lab run NAME` argument and the results directory prefix.
    pub name: Spanned<String>,
    /// One-line title of the report.
    pub title: String,
    /// The question the experiment asks, shown at the top of the report.
    pub question: String,
    /// Which seed report it reproduces, if any (`"000"`).
    #[serde(default)]
    pub seed: Option<String>,
    /// Fewest measured repeats per point (default and least 3; `--repeats`
    /// sets a fixed count instead).
    #[serde(default)]
    pub repeats: Option<Spanned<u32>>,
    /// Most repeats per point (default 6).
    #[serde(default)]
    pub max_repeats: Option<Spanned<u32>>,
    /// Target half-width of the headline metric's 95% interval, in percent of
    /// its mean (default 2): repeats go on until it is reached or the cap.
    #[serde(default)]
    pub precision_pct: Option<Spanned<f64>>,
    /// The metric whose interval decides when a point has enough repeats
    /// (default: the conclusion's metric, else throughput).
    #[serde(default)]
    pub headline: Option<Spanned<Metric>>,
    /// Sweep axes; the points are their cartesian product (first axis outermost).
    #[serde(default, rename = "axis")]
    pub axes: Vec<Axis>,
    /// Combinations of the product that are not points: each a table of axis
    /// values (a value, or a list of them), skipping every combination that
    /// has one of them on each axis named. HTTP/1.1 has no streams to sweep:
    /// `skip = [{ protocol = "http/1.1", streams = [10, 100] }]`.
    #[serde(default)]
    pub skip: Vec<Spanned<toml::Table>>,
    /// Files created in the served directory (expanded for every axis value).
    #[serde(default, rename = "file")]
    pub files: Vec<FileSpec>,
    /// Servers measured at every point.
    #[serde(default, rename = "server")]
    pub servers: Vec<ServerSpec>,
    /// The load driven at every point (measured experiments).
    #[serde(default)]
    pub load: Option<LoadSection>,
    /// A queueing model predicting every measured point with the simulator.
    #[serde(default)]
    pub predict: Option<ModelSpec>,
    /// The simulator alone: no servers, one simulated point per axis combination.
    #[serde(default)]
    pub simulate: Option<ModelSpec>,
    /// The report's plots.
    #[serde(default, rename = "plot")]
    pub plots: Vec<PlotSpec>,
    /// How the report's one-sentence conclusion is computed.
    #[serde(default)]
    pub conclusion: Option<ConclusionSpec>,
    /// Measured against simulated: the metrics whose error is tabled, and the
    /// targets they are held to.
    #[serde(default)]
    pub accuracy: Option<AccuracySpec>,
    /// The claims of the seed report that this experiment tests, each a
    /// sentence and a check on the results; the report opens with their verdicts.
    #[serde(default, rename = "claim")]
    pub claims: Vec<ClaimSpec>,
    /// What `--quick` changes.
    #[serde(default)]
    pub quick: Option<QuickSpec>,
    /// The file it was read from (not a TOML field).
    #[serde(skip)]
    pub source: Source,
}

/// One sweep axis.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Axis {
    /// Placeholder name (`{users}`).
    pub name: Spanned<String>,
    /// Axis label in plots and tables.
    pub label: String,
    /// Unit shown after the label (`KB`, `requests`).
    #[serde(default)]
    pub unit: Option<String>,
    /// Values of the full sweep.
    pub values: Spanned<Vec<Scalar>>,
    /// Values under `--quick` (default: the first and last full values).
    #[serde(default)]
    pub quick: Option<Spanned<Vec<Scalar>>>,
    /// Plot this axis on a logarithmic scale.
    #[serde(default)]
    pub log: bool,
    /// Divide values by this for display (1000 shows bytes as KB).
    #[serde(default)]
    pub display_divisor: Option<f64>,
    /// Cases: for each value of this axis, more placeholders it sets (a table
    /// per value, the same keys in each), so that one axis can sweep whole
    /// configurations (seed 002's experiments differ in cores, threads,
    /// service and policy at once) without a product of every setting.
    #[serde(default)]
    pub set: Option<Spanned<toml::Table>>,
}

/// A file created in the served directory.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileSpec {
    /// File name (templated), relative to the served root.
    pub name: Template,
    /// Size in bytes (templated).
    pub size: Template,
}

/// A server measured at every point: a servelab engine or a peer.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ServerSpec {
    /// Name in plots, tables and conclusions.
    pub label: Spanned<String>,
    /// A `servelab serve --engine` name.
    #[serde(default)]
    pub engine: Option<Spanned<EngineName>>,
    /// A peer server instead: `nginx`, `lighttpd`, `h2o`, `apache-event`,
    /// `apache-worker` or `apache-prefork` (unavailable when absent).
    #[serde(default)]
    pub peer: Option<Spanned<Peer>>,
    /// More `servelab serve` flags (templated).
    #[serde(default)]
    pub args: Vec<Template>,
    /// A peer (nginx, lighttpd or h2o) serves HTTPS only, TLS 1.3, with the
    /// run's one certificate (ECDSA P-256, made once per run), as
    /// `bench/peers.py --scenario tls` configures them. A servelab engine
    /// takes `--tls-self-signed` (or `--tls-cert` and `--tls-key`) in `args`
    /// instead.
    #[serde(default)]
    pub tls: Option<Spanned<bool>>,
}

/// The `[load]` of a measured point: the lab's own keys, `path` and
/// `warmup`, and the load's settings, every other key.
///
/// The settings are [`servelab_load::LoadSettings`], the type that `servelab
/// load`'s flags build: `users` (closed users; with HTTP/2, connections),
/// `session`, `think`, `timeout`, `retries`, `retry_wait`, `duration` (the
/// measured window of every repeat: default 10 s, and a full run may not
/// measure less; never a request count, which ends in milliseconds on a fast
/// server), `tls_resume`, `protocol` (`http/1.1` or `h2`), `streams` and
/// `poll_before_sleep` (the client's poll before it blocks; HTTP/2's default
/// 3 µs, 4 µs over TLS, HTTP/1.1's off) and `nap` (the client's nap on its own
/// timer before that; off). Each
/// value is a template until its point is planned, and then read by that
/// type's own parser, so a setting added to `load` is a key here too. The lab
/// gives two defaults of its own: retries without end (seed 002's users) and
/// no think time; and it drives closed users only (`rate` is refused).
#[derive(Debug, Clone)]
pub struct LoadSection {
    /// Path requested.
    pub path: Template,
    /// The warm-up at the point's full load before its first repeat (default
    /// 2 s; longer for states that take time to build, such as a collapse).
    pub warmup: Option<Template>,
    /// The load's settings as written: key and templated value.
    pub settings: BTreeMap<String, Template>,
}

impl LoadSection {
    /// The templated value of setting `key`.
    pub fn get(&self, key: &str) -> Option<&Template> {
        self.settings.get(key)
    }
}

/// The keys of `[load]` that are the lab's, not the load's settings.
const LAB_KEYS: &[&str] = &["path", "warmup"];

impl<'de> Deserialize<'de> for LoadSection {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<LoadSection, D::Error> {
        let mut settings = BTreeMap::<String, Template>::deserialize(d)?;
        // The values wait for their points; a key can be checked now.
        if let Some(key) = settings
            .keys()
            .find(|k| !LAB_KEYS.contains(&k.as_str()) && !LoadSettings::KEYS.contains(&k.as_str()))
        {
            return Err(serde::de::Error::custom(format!(
                "unknown field `{key}` in [load], expected {} or one of the load's settings: {}",
                LAB_KEYS.join(", "),
                LoadSettings::KEYS.join(", ")
            )));
        }
        let path = settings
            .remove("path")
            .ok_or_else(|| serde::de::Error::missing_field("path"))?;
        // Closed users are what the lab measures: say so where the section is.
        if !settings.contains_key("users") {
            return Err(serde::de::Error::missing_field("users"));
        }
        Ok(LoadSection {
            path,
            warmup: settings.remove("warmup"),
            settings,
        })
    }
}

/// A queueing model for `servelab-sim` (templated fields, sim DIST syntax).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelSpec {
    /// Users in the closed population.
    pub users: Template,
    /// Service time distribution.
    pub service: Template,
    /// Think time distribution.
    pub think: Template,
    /// Cores (servers of the queue).
    #[serde(default)]
    pub cores: Option<Template>,
    /// Threads per core.
    #[serde(default)]
    pub threads_per_core: Option<Template>,
    /// Shared buffer slots.
    #[serde(default)]
    pub buffer: Option<Template>,
    /// `fcfs` or `rr`.
    #[serde(default)]
    pub policy: Option<Template>,
    /// Round-robin quantum (duration).
    #[serde(default)]
    pub quantum: Option<Template>,
    /// Context-switch cost (duration).
    #[serde(default)]
    pub context_switch: Option<Template>,
    /// Client timeout distribution.
    #[serde(default)]
    pub timeout: Option<Template>,
    /// Retries after a timeout (absent: forever).
    #[serde(default)]
    pub retries: Option<Template>,
    /// Wait between a timeout (or a rejection) and the retry.
    #[serde(default)]
    pub retry_wait: Option<Template>,
    /// A full buffer: `reject` (answered at once, as a 503) or `silent`.
    #[serde(default)]
    pub on_full: Option<Template>,
    /// A request whose user timed out: `finish` (badput) or `cancel`.
    #[serde(default)]
    pub on_abandon: Option<Template>,
    /// Requests per connection (`none` or absent: one connection per user for
    /// the whole run); only `first_demand` makes it matter.
    #[serde(default)]
    pub session: Option<Template>,
    /// Extra CPU demand of a connection's first request (sim DIST syntax,
    /// e.g. a TLS handshake's `const:130us`; default 0).
    #[serde(default)]
    pub first_demand: Option<Template>,
    /// Whether connections hold workers (`true`: the `cores ×
    /// threads_per_core` threads are W workers, each held by a connection
    /// from accept until it closes, as servelab's `pool` and `prefork`,
    /// Apache's prefork and worker MPMs with `KeepAlive On`; `sim
    /// --hold-workers`). Absent or `false`: requests queue for threads, the
    /// event-driven case and seed 002's model.
    #[serde(default)]
    pub hold_workers: Option<Template>,
    /// With `hold_workers`: idle time after an answer before the server closes
    /// a kept-alive connection (`5s`, `none`; default 5 s, `serve
    /// --keepalive-timeout`, Apache's `KeepAliveTimeout`).
    #[serde(default)]
    pub keepalive_timeout: Option<Template>,
    /// With `hold_workers`: requests after which the server closes a
    /// connection (a number, or `none`: the default; Apache's
    /// `MaxKeepAliveRequests`).
    #[serde(default)]
    pub max_requests_per_conn: Option<Template>,
    /// With `hold_workers`: connections waiting for a worker (the listen
    /// backlog; default 511).
    #[serde(default)]
    pub backlog: Option<Template>,
    /// Replications per point (default 5).
    #[serde(default)]
    pub reps: Option<u32>,
    /// Completed requests per replication (default 20000).
    #[serde(default)]
    pub requests: Option<u64>,
    /// Where the model applies (`[predict]` only): the servers whose
    /// architecture it describes. Absent: every server.
    #[serde(default)]
    pub applies: Option<AppliesSpec>,
}

/// The servers a prediction describes, and why the others are left out: a
/// prediction is drawn and scored only where its model's assumptions hold.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AppliesSpec {
    /// Labels of the `[[server]]`s whose architecture the model describes.
    pub servers: Vec<Spanned<String>>,
    /// Why the others are not described, shown in the report where a
    /// prediction is withheld ("the model is one FCFS loop on one core").
    pub because: String,
    /// The model's CPU demand per request (its utilisation over its
    /// throughput) must lie within this many percent of the interval of the
    /// measured CPU per request (`cpu_us`): a model given one demand for
    /// servers that spend another predicts a different server. Absent: not
    /// checked (a server that sleeps its service time spends no CPU on it).
    #[serde(default)]
    pub cpu_within_pct: Option<f64>,
}

/// A plot of the report.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PlotSpec {
    /// Title above the plot.
    pub title: String,
    /// The axis on the x axis.
    pub x: Spanned<String>,
    /// The metric on the y axis (see "Metrics" in docs/lab.md).
    pub y: Spanned<Metric>,
    /// Divide by this server's value at the same point (`"serial"`), or by the
    /// series' value at the first x (`"first"`).
    #[serde(default)]
    pub relative_to: Option<Spanned<String>>,
    /// Only points with these axis values.
    #[serde(default, rename = "where")]
    pub filter: Option<Spanned<toml::Table>>,
    /// Overlay the prediction (default true when there is one).
    #[serde(default)]
    pub predicted: Option<bool>,
    /// Log scale on y.
    #[serde(default)]
    pub log_y: bool,
}

/// How the conclusion sentence is computed from the data.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConclusionSpec {
    /// What is compared.
    pub kind: Spanned<ConclusionKind>,
    /// The metric compared.
    pub metric: Spanned<Metric>,
    /// First server (for `ratio`).
    #[serde(default)]
    pub a: Option<Spanned<String>>,
    /// Second server (for `ratio`).
    #[serde(default)]
    pub b: Option<Spanned<String>>,
    /// The x axis (for `scaling`).
    #[serde(default)]
    pub x: Option<Spanned<String>>,
    /// Points considered (axis = value); default: the last value of every axis.
    #[serde(default)]
    pub at: Option<Spanned<toml::Table>>,
}

/// The error table of a measured experiment with a prediction.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AccuracySpec {
    /// The metrics compared, in table order.
    pub metrics: Vec<Spanned<Metric>>,
    /// A rate whose simulated value is under this share of the point's
    /// throughput bound is compared against that share instead (a relative
    /// error of a near-zero rate says nothing). Default 0.05.
    #[serde(default)]
    pub floor: Option<f64>,
    /// What each metric must meet.
    #[serde(default, rename = "target")]
    pub targets: Vec<TargetSpec>,
}

/// A target: the metrics within `within_pct` of the simulation at the points
/// whose users lie in `nstar` (in units of the saturation population N*).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TargetSpec {
    /// The metrics held to it.
    pub metrics: Vec<Spanned<Metric>>,
    /// Largest relative error allowed, in percent.
    pub within_pct: f64,
    /// `[from, to)` in units of N*; absent: every point.
    #[serde(default)]
    pub nstar: Option<[f64; 2]>,
    /// Why the model may miss it, shown beside the verdict when it does.
    #[serde(default)]
    pub caveat: Option<String>,
}

/// A claim of the seed report and how the results test it.
///
/// `a` and `b` pick one point each (or, for `trend`, `a` picks a series): a
/// table of axis values, plus `server` for a measured experiment, merged with
/// `at`. The verdict is decided by Welch's t-test at 95% on the repeats.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClaimSpec {
    /// The claim, as the seed makes it.
    pub text: String,
    /// How it is tested.
    pub test: Spanned<ClaimTest>,
    /// The metric compared (`compare` and `trend`).
    #[serde(default)]
    pub metric: Option<Spanned<Metric>>,
    /// The first point (`compare`) or the series (`trend`).
    #[serde(default)]
    pub a: Option<Spanned<toml::Table>>,
    /// The second point (`compare`).
    #[serde(default)]
    pub b: Option<Spanned<toml::Table>>,
    /// The axis along which a `trend` goes, first value to last; for a
    /// `compare`, the axis at every value of which `a` and `b` are compared
    /// (a claim "for all user values"), judged on every pair.
    #[serde(default)]
    pub x: Option<Spanned<String>>,
    /// Axis values both points share.
    #[serde(default)]
    pub at: Option<Spanned<toml::Table>>,
    /// What the seed says: `a` is `higher`, `lower` or `equal` to `b`; the
    /// trend `rises`, `falls` or is `flat`.
    #[serde(default)]
    pub expect: Option<Spanned<Expect>>,
    /// "Equal" and "flat" mean within this many percent (default 10).
    #[serde(default)]
    pub within_pct: Option<f64>,
    /// Why the claim cannot be tested here (`untestable`), or what the seed's
    /// setting was that this one differs from (shown with any verdict).
    #[serde(default)]
    pub reason: Option<String>,
}

/// How a claim is tested.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ClaimTest {
    /// Point `a` against point `b`.
    Compare,
    /// Series `a` from the first to the last value of axis `x`.
    Trend,
    /// The model's prediction against the measurement, by the experiment's
    /// `[accuracy]` targets ("the simulation matches the measurements").
    Prediction,
    /// Not testable with this experiment; `reason` says why.
    Untestable,
}

/// What a claim expects.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Expect {
    /// `a` above `b`.
    Higher,
    /// `a` below `b`.
    Lower,
    /// `a` within `within_pct` of `b`.
    Equal,
    /// The last value above the first.
    Rises,
    /// The last value below the first.
    Falls,
    /// The last value within `within_pct` of the first.
    Flat,
}

/// What a conclusion compares.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ConclusionKind {
    /// Server `a` against server `b`.
    Ratio,
    /// The best and the worst of the servers (or, simulated, of the axis values
    /// that `at` leaves free).
    Best,
    /// Last x against first x of axis `x`, per server.
    Scaling,
    /// Measured or simulated figures against the exact model.
    Model,
    /// Measured figures against the simulator, by the `[accuracy]` targets.
    Prediction,
}

/// A `servelab serve --engine` name, read with the server crate's own parser.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EngineName(pub Engine);

impl<'de> Deserialize<'de> for EngineName {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<EngineName, D::Error> {
        let name = String::deserialize(d)?;
        name.parse().map(EngineName).map_err(|_| {
            let known: Vec<&str> = Engine::ALL.iter().map(|e| e.name()).collect();
            serde::de::Error::custom(format!(
                "unknown engine `{name}` (known: {})",
                known.join(", ")
            ))
        })
    }
}

/// Overrides applied by `--quick`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct QuickSpec {
    /// Repeats per point, a fixed count (default 2).
    #[serde(default)]
    pub repeats: Option<u32>,
    /// `load.duration` (default 0.25 s).
    #[serde(default)]
    pub duration: Option<Template>,
    /// `load.warmup` (default 0.1 s).
    #[serde(default)]
    pub load_warmup: Option<Template>,
    /// Simulator replications.
    #[serde(default)]
    pub reps: Option<u32>,
    /// Simulator requests per replication.
    #[serde(default)]
    pub sim_requests: Option<u64>,
}

impl Experiment {
    /// The experiment's name.
    pub fn name(&self) -> &str {
        self.name.get_ref()
    }

    /// True when the experiment only runs the simulator.
    pub fn is_simulated(&self) -> bool {
        self.simulate.is_some()
    }

    /// The axis called `name`.
    pub fn axis(&self, name: &str) -> Option<&Axis> {
        self.axes.iter().find(|a| a.name.get_ref() == name)
    }

    /// Fewest and most repeats per point, after `--quick` and `--repeats`: a
    /// full run takes at least [`MIN_REPEATS`](crate::protocol::MIN_REPEATS)
    /// and more up to its cap; `--quick` and `--repeats N` a fixed count.
    pub fn repeats(&self, quick: bool, override_: Option<u32>) -> (u32, u32) {
        if let Some(r) = override_ {
            return (r.max(1), r.max(1));
        }
        if quick {
            let q = self
                .quick
                .as_ref()
                .and_then(|q| q.repeats)
                .unwrap_or(2)
                .max(1);
            return (q, q);
        }
        let min = self
            .repeats
            .as_ref()
            .map_or(crate::protocol::MIN_REPEATS, |r| *r.get_ref())
            .max(1);
        let max = self
            .max_repeats
            .as_ref()
            .map_or(crate::protocol::MAX_REPEATS, |r| *r.get_ref())
            .max(min);
        (min, max)
    }

    /// Target relative half-width of the headline metric (0.02 is ±2%).
    pub fn precision(&self) -> f64 {
        self.precision_pct
            .as_ref()
            .map_or(crate::protocol::PRECISION, |p| *p.get_ref() / 100.0)
    }

    /// The metric whose interval decides when a point has enough repeats.
    pub fn headline(&self) -> Metric {
        self.headline
            .as_ref()
            .map(|h| *h.get_ref())
            .or_else(|| self.conclusion.as_ref().map(|c| *c.metric.get_ref()))
            .unwrap_or(Metric::Throughput)
    }

    /// The values of an axis in the full or quick sweep.
    pub fn axis_values(&self, axis: &Axis, quick: bool) -> Vec<Scalar> {
        let full = axis.values.get_ref();
        if !quick {
            return full.clone();
        }
        match &axis.quick {
            Some(q) => q.get_ref().clone(),
            None if full.len() > 2 => vec![full[0].clone(), full[full.len() - 1].clone()],
            None => full.clone(),
        }
    }
}

/// 1-based line and column of a byte offset.
pub(crate) fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let column = before
        .rfind('\n')
        .map_or(before.len(), |i| before.len() - i - 1)
        + 1;
    (line, column)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_col_counts_from_one() {
        assert_eq!(line_col("ab\ncd", 0), (1, 1));
        assert_eq!(line_col("ab\ncd", 4), (2, 2));
    }

    #[test]
    fn engines_peers_metrics_and_kinds_are_read_as_types() {
        let text = |field: &str| {
            format!(
                "name = \"t\"\ntitle = \"T\"\nquestion = \"Q\"\n{field}\n[load]\nusers = 1\npath = \"/\"\n"
            )
        };
        let e = Experiment::parse(
            &text("[[server]]\nlabel = \"w\"\nengine = \"warp\""),
            "t.toml",
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.starts_with("t.toml:6:10: unknown engine `warp` (known: serial, thread"),
            "{e}"
        );
        let e = Experiment::parse(
            &text("[[server]]\nlabel = \"w\"\npeer = \"apache\""),
            "t.toml",
        )
        .unwrap_err()
        .to_string();
        assert!(e.starts_with("t.toml:6:8: unknown peer `apache`"), "{e}");
        let ok = Experiment::parse(
            &text("[[server]]\nlabel = \"w\"\nengine = \"pool\""),
            "t.toml",
        )
        .unwrap();
        assert_eq!(
            ok.servers[0].engine.as_ref().map(|e| e.get_ref().0),
            Some(Engine::Pool)
        );
    }
}
