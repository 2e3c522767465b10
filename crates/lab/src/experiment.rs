//! The experiment file format (TOML), its validation, and the points it expands to.
//!
//! An experiment is data, not code, so that a user can write their own: which
//! servers to start, which load to drive them with, which axes to sweep, what to
//! predict with the simulator, what to plot and what sentence to conclude with.
//! Any value in `[[server]] args`, `[load]`, `[predict]`, `[simulate]` and
//! `[[file]]` may contain `{AXIS}` placeholders, replaced by the point's value of
//! that axis; `{tmp}` is the run's temporary directory. Every field is checked
//! when the file is read, for every point of both the full and the `--quick`
//! sweep, so a typo is reported with its line before anything runs.
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
//! session = "{session}"
//! sessions = 4           # per user: requests = users x session x sessions
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
//! repeats = 1
//! sessions = 1
//! ```

use std::collections::BTreeSet;
use std::fmt;
use std::ops::Range;

use serde::{Deserialize, Serialize};
use toml::Spanned;

use crate::error::{LabError, Result};
use crate::metric;

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
}

impl Scalar {
    /// The value as a number, when it is one (strings that parse count).
    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Scalar::Int(i) => Some(*i as f64),
            Scalar::Float(f) => Some(*f),
            Scalar::Str(s) => s.trim().parse().ok(),
        }
    }
}

impl fmt::Display for Scalar {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Scalar::Int(i) => write!(f, "{i}"),
            Scalar::Float(x) => write!(f, "{x}"),
            Scalar::Str(s) => f.write_str(s),
        }
    }
}

/// A field that may hold `{AXIS}` placeholders; the span points into the file.
pub type Template = Spanned<Scalar>;

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
    /// Measured repeats per point (default 3; `--repeats` overrides).
    #[serde(default)]
    pub repeats: Option<Spanned<u32>>,
    /// Warm-up requests sent before a point's repeats and discarded (default 50).
    #[serde(default)]
    pub warmup: Option<Spanned<u64>>,
    /// Sweep axes; the points are their cartesian product (first axis outermost).
    #[serde(default, rename = "axis")]
    pub axes: Vec<Axis>,
    /// Files created in the served directory (expanded for every axis value).
    #[serde(default, rename = "file")]
    pub files: Vec<FileSpec>,
    /// Servers measured at every point.
    #[serde(default, rename = "server")]
    pub servers: Vec<ServerSpec>,
    /// The load driven at every point (measured experiments).
    #[serde(default)]
    pub load: Option<LoadSpec>,
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
    /// What `--quick` changes.
    #[serde(default)]
    pub quick: Option<QuickSpec>,
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
    pub engine: Option<Spanned<String>>,
    /// A peer server instead: `nginx`, `lighttpd` or `h2o` (skipped when absent).
    #[serde(default)]
    pub peer: Option<Spanned<String>>,
    /// More `servelab serve` flags (templated).
    #[serde(default)]
    pub args: Vec<Template>,
}

/// The load of a measured point (closed users, as in the seeds).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LoadSpec {
    /// Concurrent users (connections).
    pub users: Template,
    /// Requests per connection (absent: one connection per user for the whole run).
    #[serde(default)]
    pub session: Option<Template>,
    /// Sessions per user; sets requests = users x session x sessions.
    #[serde(default)]
    pub sessions: Option<Template>,
    /// Total requests per repeat (instead of `sessions`).
    #[serde(default)]
    pub requests: Option<Template>,
    /// Length of a repeat (instead of a request count), e.g. `"2s"`.
    #[serde(default)]
    pub duration: Option<Template>,
    /// Think time after each answer (load DIST syntax; default none).
    #[serde(default)]
    pub think: Option<Template>,
    /// Path requested.
    pub path: Template,
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
    /// Replications per point (default 5).
    #[serde(default)]
    pub reps: Option<u32>,
    /// Completed requests per replication (default 20000).
    #[serde(default)]
    pub requests: Option<u64>,
}

/// A plot of the report.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PlotSpec {
    /// Title above the plot.
    pub title: String,
    /// The axis on the x axis.
    pub x: Spanned<String>,
    /// The metric on the y axis (see the metric list in the README).
    pub y: Spanned<String>,
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
    /// `ratio` (server a over server b), `best` (highest and lowest server),
    /// `scaling` (last x over first x, per server) or `model` (error against the
    /// exact model).
    pub kind: Spanned<String>,
    /// The metric compared.
    pub metric: Spanned<String>,
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

/// Overrides applied by `--quick`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct QuickSpec {
    /// Repeats per point.
    #[serde(default)]
    pub repeats: Option<u32>,
    /// Warm-up requests.
    #[serde(default)]
    pub warmup: Option<u64>,
    /// `load.sessions`.
    #[serde(default)]
    pub sessions: Option<Template>,
    /// `load.requests`.
    #[serde(default)]
    pub requests: Option<Template>,
    /// `load.duration`.
    #[serde(default)]
    pub duration: Option<Template>,
    /// Simulator replications.
    #[serde(default)]
    pub reps: Option<u32>,
    /// Simulator requests per replication.
    #[serde(default)]
    pub sim_requests: Option<u64>,
}

/// Peers the lab knows how to configure.
pub const PEERS: [&str; 3] = ["nginx", "lighttpd", "h2o"];

/// One point of a sweep: a server (measured experiments) and a value of every axis.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Point {
    /// Position in the run, from 0.
    pub index: usize,
    /// Index into [`Experiment::servers`] (`None` for simulated experiments).
    pub server: Option<usize>,
    /// The axis values, in axis order.
    pub vars: Vec<(String, Scalar)>,
}

impl Point {
    /// The value of axis `name`.
    pub fn var(&self, name: &str) -> Option<&Scalar> {
        self.vars.iter().find(|(n, _)| n == name).map(|(_, v)| v)
    }
}

/// A load resolved for one point.
#[derive(Debug, Clone, PartialEq)]
pub struct ResolvedLoad {
    /// Concurrent users.
    pub users: u32,
    /// Requests per connection.
    pub session: Option<u32>,
    /// Total requests of a repeat.
    pub requests: Option<u64>,
    /// Duration of a repeat.
    pub duration: Option<std::time::Duration>,
    /// Think time.
    pub think: servelab_load::Dist,
    /// Path requested.
    pub path: String,
}

/// A problem with one field: its byte span in the file and the message.
pub(crate) type FieldError = (Range<usize>, String);

/// The substitutions of one point.
pub(crate) struct Vars<'a> {
    pub(crate) point: &'a [(String, Scalar)],
    pub(crate) tmp: &'a str,
}

impl Experiment {
    /// Parses and validates an experiment; `file` names it in error messages.
    pub fn parse(text: &str, file: &str) -> Result<Experiment> {
        let err_at = |span: Option<Range<usize>>, message: String| {
            let (line, column) = span.map_or((1, 1), |s| line_col(text, s.start));
            LabError::Experiment {
                file: file.to_string(),
                line,
                column,
                message,
            }
        };
        let exp: Experiment = toml::from_str(text).map_err(|e| {
            let msg = e.message().trim().to_string();
            err_at(e.span(), msg)
        })?;
        exp.validate()
            .map_err(|(span, message)| err_at(Some(span), message))?;
        Ok(exp)
    }

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

    /// Repeats per point, after `--quick` and `--repeats`.
    pub fn repeats(&self, quick: bool, override_: Option<u32>) -> u32 {
        if let Some(r) = override_ {
            return r.max(1);
        }
        let q = self
            .quick
            .as_ref()
            .and_then(|q| q.repeats)
            .filter(|_| quick);
        q.or(self.repeats.as_ref().map(|r| *r.get_ref()))
            .unwrap_or(3)
            .max(1)
    }

    /// Warm-up requests per point.
    pub fn warmup(&self, quick: bool) -> u64 {
        let q = self.quick.as_ref().and_then(|q| q.warmup).filter(|_| quick);
        q.or(self.warmup.as_ref().map(|w| *w.get_ref()))
            .unwrap_or(50)
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

    /// Every point of the sweep: axis combinations (first axis outermost), and for
    /// measured experiments every server at each combination, so that servers are
    /// measured side by side in time.
    pub fn points(&self, quick: bool) -> Vec<Point> {
        let mut combos: Vec<Vec<(String, Scalar)>> = vec![Vec::new()];
        for axis in &self.axes {
            let values = self.axis_values(axis, quick);
            let mut next = Vec::with_capacity(combos.len() * values.len());
            for c in &combos {
                for v in &values {
                    let mut c = c.clone();
                    c.push((axis.name.get_ref().clone(), v.clone()));
                    next.push(c);
                }
            }
            combos = next;
        }
        let mut points = Vec::new();
        for vars in combos {
            if self.is_simulated() {
                points.push(Point {
                    index: points.len(),
                    server: None,
                    vars,
                });
            } else {
                for s in 0..self.servers.len() {
                    points.push(Point {
                        index: points.len(),
                        server: Some(s),
                        vars: vars.clone(),
                    });
                }
            }
        }
        points
    }

    /// The load of one point.
    pub(crate) fn resolve_load(
        &self,
        vars: &Vars<'_>,
        quick: bool,
    ) -> Result<ResolvedLoad, FieldError> {
        let load = self.load.as_ref().ok_or_else(|| {
            (
                self.name.span(),
                "a measured experiment needs [load]".into(),
            )
        })?;
        let q = self.quick.as_ref().filter(|_| quick);
        let users: u32 = parse_num(&load.users, vars, "users")?;
        if users == 0 {
            return Err((load.users.span(), "users must be at least 1".into()));
        }
        let session: Option<u32> = opt(&load.session, vars, "session")?;
        if session == Some(0) {
            let s = load.session.as_ref().map_or(0..0, |s| s.span());
            return Err((s, "session must be at least 1".into()));
        }
        let pick =
            |quick: Option<&Template>, full: &Option<Template>| quick.or(full.as_ref()).cloned();
        let sessions_t = pick(q.and_then(|q| q.sessions.as_ref()), &load.sessions);
        let requests_t = pick(q.and_then(|q| q.requests.as_ref()), &load.requests);
        let duration_t = pick(q.and_then(|q| q.duration.as_ref()), &load.duration);
        let mut requests: Option<u64> = opt(&requests_t, vars, "requests")?;
        if let Some(t) = &sessions_t {
            let sessions: u64 = parse_num(t, vars, "sessions")?;
            let Some(session) = session else {
                return Err((
                    t.span(),
                    "`sessions` needs `session` (requests per connection)".into(),
                ));
            };
            requests = Some(u64::from(users) * u64::from(session) * sessions.max(1));
        }
        let duration = match &duration_t {
            None => None,
            Some(t) => {
                let text = expand(t, vars)?;
                let d: servelab_load::Dist = text
                    .parse()
                    .map_err(|e| (t.span(), format!("duration: {e}")))?;
                match d {
                    servelab_load::Dist::Const(d) if !d.is_zero() => Some(d),
                    _ => {
                        return Err((
                            t.span(),
                            format!("duration `{text}` must be a positive constant like 2s"),
                        ));
                    }
                }
            }
        };
        if requests.is_none() && duration.is_none() {
            return Err((
                load.users.span(),
                "[load] needs `requests`, `sessions` or `duration` so that a repeat ends".into(),
            ));
        }
        if requests == Some(0) {
            return Err((
                load.users.span(),
                "a repeat of 0 requests measures nothing".into(),
            ));
        }
        let think = match &load.think {
            None => servelab_load::Dist::ZERO,
            Some(t) => {
                let text = expand(t, vars)?;
                text.parse()
                    .map_err(|e| (t.span(), format!("think: {e}")))?
            }
        };
        let path = expand(&load.path, vars)?;
        if !path.starts_with('/') {
            return Err((load.path.span(), format!("path `{path}` must start with /")));
        }
        Ok(ResolvedLoad {
            users,
            session,
            requests,
            duration,
            think,
            path,
        })
    }

    /// The simulator model and run spec of one point, from `spec`.
    pub(crate) fn resolve_model(
        &self,
        spec: &ModelSpec,
        vars: &Vars<'_>,
        quick: bool,
    ) -> Result<(servelab_sim::Model, servelab_sim::RunSpec), FieldError> {
        let sim_dist = |t: &Template, what: &str| -> Result<servelab_sim::Dist, FieldError> {
            let text = expand(t, vars)?;
            text.parse().map_err(|e| (t.span(), format!("{what}: {e}")))
        };
        let dur = |t: &Template, what: &str| -> Result<f64, FieldError> {
            let text = expand(t, vars)?;
            servelab_dist::parse_secs_f64(&text).map_err(|e| (t.span(), format!("{what}: {e}")))
        };
        let mut m = servelab_sim::Model {
            users: parse_num(&spec.users, vars, "users")?,
            service: sim_dist(&spec.service, "service")?,
            think: sim_dist(&spec.think, "think")?,
            ..servelab_sim::Model::default()
        };
        if let Some(v) = opt(&spec.cores, vars, "cores")? {
            m.cores = v;
        }
        if let Some(v) = opt(&spec.threads_per_core, vars, "threads_per_core")? {
            m.threads_per_core = v;
        }
        if let Some(v) = opt(&spec.buffer, vars, "buffer")? {
            m.buffer = v;
        }
        if let Some(t) = &spec.policy {
            let text = expand(t, vars)?;
            m.policy = text
                .parse()
                .map_err(|e| (t.span(), format!("policy: {e}")))?;
        }
        if let Some(t) = &spec.quantum {
            m.quantum = dur(t, "quantum")?;
        }
        if let Some(t) = &spec.context_switch {
            m.context_switch = dur(t, "context_switch")?;
        }
        if let Some(t) = &spec.timeout {
            let text = expand(t, vars)?;
            if text != "none" && text != "off" {
                m.timeout = Some(
                    text.parse()
                        .map_err(|e| (t.span(), format!("timeout: {e}")))?,
                );
            }
        }
        m.retries = opt(&spec.retries, vars, "retries")?;
        m.validate()
            .map_err(|e| (spec.users.span(), format!("model: {e}")))?;
        let q = self.quick.as_ref().filter(|_| quick);
        let reps = q.and_then(|q| q.reps).or(spec.reps).unwrap_or(5).max(2);
        let requests = q
            .and_then(|q| q.sim_requests)
            .or(spec.requests)
            .unwrap_or(20_000)
            .max(100);
        let run = servelab_sim::RunSpec {
            reps,
            length: servelab_sim::Length::Requests(requests),
            warmup: servelab_sim::Warmup::Mser5,
            seed: 42,
        };
        run.validate()
            .map_err(|e| (spec.users.span(), format!("simulation: {e}")))?;
        Ok((m, run))
    }

    /// The `servelab serve` flags of a server at a point (after `--engine`).
    pub(crate) fn resolve_args(
        &self,
        server: &ServerSpec,
        vars: &Vars<'_>,
    ) -> Result<Vec<String>, FieldError> {
        server.args.iter().map(|a| expand(a, vars)).collect()
    }

    /// Files of the served directory for a set of points: (name, size in bytes).
    pub(crate) fn resolve_files(&self, vars: &Vars<'_>) -> Result<Vec<(String, u64)>, FieldError> {
        let mut out = Vec::new();
        for f in &self.files {
            let name = expand(&f.name, vars)?;
            if name.is_empty() || name.contains("..") || name.starts_with('/') {
                return Err((
                    f.name.span(),
                    format!("file name `{name}` must be relative, without `..`"),
                ));
            }
            let size: u64 = parse_num(&f.size, vars, "size")?;
            out.push((name, size));
        }
        Ok(out)
    }

    fn validate(&self) -> Result<(), FieldError> {
        let name = self.name.get_ref();
        if name.is_empty()
            || !name
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_')
        {
            return Err((
                self.name.span(),
                format!("name `{name}` may hold only a-z, 0-9, - and _"),
            ));
        }
        let mut names = BTreeSet::new();
        for a in &self.axes {
            let n = a.name.get_ref();
            if n == "tmp" || !names.insert(n.clone()) {
                return Err((
                    a.name.span(),
                    format!("axis name `{n}` is reserved or used twice"),
                ));
            }
            if a.values.get_ref().is_empty() {
                return Err((a.values.span(), "an axis needs at least one value".into()));
            }
            if let Some(q) = &a.quick
                && q.get_ref().is_empty()
            {
                return Err((q.span(), "quick values may not be empty".into()));
            }
            if a.display_divisor
                .is_some_and(|d| !(d.is_finite() && d > 0.0))
            {
                return Err((a.name.span(), "display_divisor must be positive".into()));
            }
        }
        match (&self.simulate, self.servers.is_empty()) {
            (Some(s), false) => {
                return Err((
                    s.users.span(),
                    "[simulate] experiments have no [[server]]".into(),
                ));
            }
            (None, true) => {
                return Err((
                    self.name.span(),
                    "a measured experiment needs at least one [[server]]".into(),
                ));
            }
            _ => {}
        }
        if self.simulate.is_none() && self.load.is_none() {
            return Err((
                self.name.span(),
                "a measured experiment needs [load]".into(),
            ));
        }
        let mut labels = BTreeSet::new();
        for s in &self.servers {
            if !labels.insert(s.label.get_ref().clone()) {
                return Err((
                    s.label.span(),
                    format!("server label `{}` used twice", s.label.get_ref()),
                ));
            }
            match (&s.engine, &s.peer) {
                (Some(_), None) => {}
                (None, Some(p)) if PEERS.contains(&p.get_ref().as_str()) => {}
                (None, Some(p)) => {
                    return Err((
                        p.span(),
                        format!(
                            "unknown peer `{}` (known: {})",
                            p.get_ref(),
                            PEERS.join(", ")
                        ),
                    ));
                }
                _ => {
                    return Err((
                        s.label.span(),
                        "a server needs exactly one of `engine` and `peer`".into(),
                    ));
                }
            }
        }
        // Every templated field must resolve at every point of both sweeps.
        for quick in [false, true] {
            for p in self.points(quick) {
                let vars = Vars {
                    point: &p.vars,
                    tmp: "/tmp",
                };
                self.resolve_files(&vars)?;
                if let Some(s) = p.server {
                    self.resolve_args(&self.servers[s], &vars)?;
                    self.resolve_load(&vars, quick)?;
                    if let Some(m) = &self.predict {
                        self.resolve_model(m, &vars, quick)?;
                    }
                } else if let Some(m) = &self.simulate {
                    self.resolve_model(m, &vars, quick)?;
                }
            }
        }
        let metrics = metric::names(self.is_simulated());
        let check_metric = |m: &Spanned<String>| {
            if metrics.contains(&m.get_ref().as_str()) {
                Ok(())
            } else {
                Err((
                    m.span(),
                    format!(
                        "unknown metric `{}` (known: {})",
                        m.get_ref(),
                        metrics.join(", ")
                    ),
                ))
            }
        };
        let check_filter = |t: &Option<Spanned<toml::Table>>| {
            if let Some(t) = t {
                for k in t.get_ref().keys() {
                    if self.axis(k).is_none() {
                        return Err((t.span(), format!("`{k}` is not an axis")));
                    }
                }
            }
            Ok(())
        };
        let server_label = |s: &Spanned<String>| {
            if labels.contains(s.get_ref()) {
                Ok(())
            } else {
                Err((s.span(), format!("no server labelled `{}`", s.get_ref())))
            }
        };
        for plot in &self.plots {
            let Some(axis) = self.axis(plot.x.get_ref()) else {
                return Err((
                    plot.x.span(),
                    format!("`{}` is not an axis", plot.x.get_ref()),
                ));
            };
            if axis.values.get_ref().iter().any(|v| v.as_f64().is_none()) {
                return Err((
                    plot.x.span(),
                    format!(
                        "axis `{}` is not numeric, it cannot be an x axis",
                        plot.x.get_ref()
                    ),
                ));
            }
            check_metric(&plot.y)?;
            check_filter(&plot.filter)?;
            if let Some(r) = &plot.relative_to
                && r.get_ref() != "first"
            {
                server_label(r)?;
            }
        }
        if let Some(c) = &self.conclusion {
            check_metric(&c.metric)?;
            check_filter(&c.at)?;
            match c.kind.get_ref().as_str() {
                "ratio" => match (&c.a, &c.b) {
                    (Some(a), Some(b)) => {
                        server_label(a)?;
                        server_label(b)?;
                    }
                    _ => {
                        return Err((
                            c.kind.span(),
                            "a `ratio` conclusion needs `a` and `b`".into(),
                        ));
                    }
                },
                "scaling" => match &c.x {
                    Some(x) if self.axis(x.get_ref()).is_some() => {}
                    Some(x) => return Err((x.span(), format!("`{}` is not an axis", x.get_ref()))),
                    None => return Err((c.kind.span(), "a `scaling` conclusion needs `x`".into())),
                },
                "best" => {}
                "model" if self.predict.is_some() || self.simulate.is_some() => {}
                "model" => {
                    return Err((c.kind.span(), "a `model` conclusion needs [predict]".into()));
                }
                other => {
                    return Err((
                        c.kind.span(),
                        format!("unknown conclusion kind `{other}` (ratio, best, scaling, model)"),
                    ));
                }
            }
        }
        Ok(())
    }
}

/// Replaces `{AXIS}` and `{tmp}` in a templated field.
pub(crate) fn expand(t: &Template, vars: &Vars<'_>) -> Result<String, FieldError> {
    let text = t.get_ref().to_string();
    let mut out = String::with_capacity(text.len());
    let mut rest = text.as_str();
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let Some(close) = rest[open..].find('}') else {
            return Err((t.span(), format!("unclosed `{{` in `{text}`")));
        };
        let key = &rest[open + 1..open + close];
        if key == "tmp" {
            out.push_str(vars.tmp);
        } else if let Some((_, v)) = vars.point.iter().find(|(n, _)| n == key) {
            out.push_str(&v.to_string());
        } else {
            let known: Vec<&str> = vars.point.iter().map(|(n, _)| n.as_str()).collect();
            return Err((
                t.span(),
                format!(
                    "unknown placeholder `{{{key}}}` (axes: {}; and tmp)",
                    known.join(", ")
                ),
            ));
        }
        rest = &rest[open + close + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

fn parse_num<T: std::str::FromStr>(
    t: &Template,
    vars: &Vars<'_>,
    what: &str,
) -> Result<T, FieldError> {
    let text = expand(t, vars)?;
    text.trim().parse().map_err(|_| {
        (
            t.span(),
            format!("{what}: `{text}` is not a non-negative whole number"),
        )
    })
}

fn opt<T: std::str::FromStr>(
    t: &Option<Template>,
    vars: &Vars<'_>,
    what: &str,
) -> Result<Option<T>, FieldError> {
    t.as_ref().map(|t| parse_num(t, vars, what)).transpose()
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

    const GOOD: &str = r#"
name = "t"
title = "T"
question = "Q?"
[[axis]]
name = "users"
label = "users"
values = [1, 2, 4]
[[server]]
label = "pool"
engine = "pool"
args = ["--workers", "{users}"]
[load]
users = "{users}"
session = 2
sessions = 3
path = "/a.bin"
[[plot]]
title = "X"
x = "users"
y = "throughput"
"#;

    fn err(text: &str) -> String {
        Experiment::parse(text, "t.toml").unwrap_err().to_string()
    }

    #[test]
    fn points_are_the_product_of_axes_and_servers() {
        let e = Experiment::parse(GOOD, "t.toml").unwrap();
        assert_eq!(e.points(false).len(), 3);
        assert_eq!(
            e.points(true).len(),
            2,
            "quick keeps the first and last value"
        );
        let p = &e.points(false)[2];
        let vars = Vars {
            point: &p.vars,
            tmp: "/x",
        };
        let load = e.resolve_load(&vars, false).unwrap();
        assert_eq!(
            (load.users, load.session, load.requests),
            (4, Some(2), Some(24))
        );
        assert_eq!(
            e.resolve_args(&e.servers[0], &vars).unwrap(),
            ["--workers", "4"]
        );
    }

    #[test]
    fn a_syntax_error_names_its_line() {
        let bad = GOOD.replace("session = 2", "session = = 2");
        assert!(err(&bad).starts_with("t.toml:15:"), "{}", err(&bad));
    }

    #[test]
    fn an_unknown_placeholder_names_its_line() {
        let bad = GOOD.replace("\"{users}\"]", "\"{user}\"]");
        let e = err(&bad);
        assert!(e.starts_with("t.toml:12:") && e.contains("{user}"), "{e}");
    }

    #[test]
    fn an_unknown_metric_names_its_line() {
        let e = err(&GOOD.replace("\"throughput\"", "\"thruput\""));
        assert!(e.starts_with("t.toml:21:") && e.contains("thruput"), "{e}");
    }

    #[test]
    fn an_unknown_field_and_a_bad_think_time_are_errors() {
        assert!(err(&GOOD.replace("path =", "pth =")).contains("pth"));
        let e = err(&GOOD.replace("path = \"/a.bin\"", "path = \"/a.bin\"\nthink = \"exp:zz\""));
        assert!(e.starts_with("t.toml:18:") && e.contains("think"), "{e}");
    }

    #[test]
    fn line_col_counts_from_one() {
        assert_eq!(line_col("ab\ncd", 0), (1, 1));
        assert_eq!(line_col("ab\ncd", 4), (2, 2));
    }
}
