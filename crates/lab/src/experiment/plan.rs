//! The plan: an experiment expanded and resolved once into the list of points a
//! run measures or simulates, each with typed values only (the server's
//! [`ServeArgs`], the load, the simulator's model).
//!
//! Planning is where every templated field is checked, for every point, with the
//! parsers that will use it (`servelab serve`'s own flag parser, the load and
//! simulator DIST parsers); a mistake is `file:line:column: message`. A run then
//! reads only the plan: nothing is expanded, parsed or checked a second time.

use std::path::{Path, PathBuf};
use std::time::Duration;

use servelab_server::{LogTarget, ServeArgs};

use super::schema::{Experiment, LoadSection, ModelSpec, Scalar, ServerSpec, Template};
use super::template::{FieldError, Vars, expand, opt_num, parse_num, parse_with, same_value};
use crate::error::Result;
use crate::process::peer::Peer;
use crate::process::sched::KernelSched;

/// What the command line says about a plan (`--quick`, `--repeats`,
/// `--precision`): with the experiment's text, all that a plan is built from.
/// A run, `lab ab` and a rebuilt report each build their one [`Plan`] from
/// these, and nothing patches the plan afterwards.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct PlanOptions {
    /// The `--quick` sweep.
    pub quick: bool,
    /// A fixed number of repeats per point instead of the experiment's
    /// fewest-to-cap (`--repeats`).
    pub repeats: Option<u32>,
    /// Target relative half-width of the headline metric's 95% interval
    /// instead of the experiment's (`--precision`, a fraction: 0.02 is 2%).
    pub precision: Option<f64>,
}

impl PlanOptions {
    /// The full or `--quick` sweep with the experiment's own repeats and
    /// precision.
    pub fn sweep(quick: bool) -> PlanOptions {
        PlanOptions {
            quick,
            ..PlanOptions::default()
        }
    }
}

/// Everything a run does, resolved.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    /// Whether this is the `--quick` sweep.
    pub quick: bool,
    /// Fewest measured repeats per point.
    pub repeats: u32,
    /// Most measured repeats per point (equal to `repeats` for a fixed count).
    pub max_repeats: u32,
    /// Target relative half-width of the headline metric's 95% interval.
    pub precision: f64,
    /// The metric whose interval decides when a point has enough repeats.
    pub headline: crate::metric::Metric,
    /// The run's temporary directory, which `{tmp}` names.
    pub tmp: PathBuf,
    /// Files created in the served directory (`tmp/www`), each once.
    pub files: Vec<ServedFile>,
    /// Every point, in run order.
    pub points: Vec<PlannedPoint>,
}

/// A file of the served directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServedFile {
    /// Path relative to the served root.
    pub name: String,
    /// Size in bytes.
    pub size: u64,
}

/// One point of the sweep.
#[derive(Debug, Clone, PartialEq)]
pub struct PlannedPoint {
    /// Position in the run, from 0.
    pub index: usize,
    /// The axis values, in axis order.
    pub vars: Vec<(String, Scalar)>,
    /// What is done at it.
    pub work: Work,
}

/// What a point does.
#[derive(Debug, Clone, PartialEq)]
pub enum Work {
    /// Start a server, drive it with load, maybe predict it.
    Measure(Box<Measure>),
    /// Run the simulator alone.
    Simulate(Box<Model>),
}

/// A measured point.
#[derive(Debug, Clone, PartialEq)]
pub struct Measure {
    /// The server's label (`[[server]] label`).
    pub label: String,
    /// Which server.
    pub server: Server,
    /// The load driven at it.
    pub load: ResolvedLoad,
    /// The simulator's prediction of it (`[predict]`).
    pub predict: Option<Model>,
    /// How the lab speaks TLS to it; `None`: plain HTTP.
    pub tls: Option<PointTls>,
}

/// How the lab reaches a server that serves TLS: the load, its warm-up, the
/// drain and the status reader all use it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PointTls {
    /// Which certificate the clients trust.
    pub trust: Trust,
    /// Whether a new connection resumes an earlier one's session
    /// (`[load] tls_resume`, default true).
    pub resume: bool,
}

/// Which certificate the lab's clients trust.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Trust {
    /// None is verified: the server made its own certificate
    /// (`--tls-self-signed`) and prints only its fingerprint, which the load
    /// generator cannot pin (`load --insecure`).
    Insecure,
    /// The server's own certificate file (`--tls-cert`), trusted as the only
    /// authority (`load --cacert`).
    CaCert(PathBuf),
}

impl Trust {
    /// What `servelab load` is told: this trust, and whether to resume.
    pub fn tls_options(&self, resume: bool) -> servelab_load::TlsOptions {
        servelab_load::TlsOptions {
            insecure: *self == Trust::Insecure,
            cacert: match self {
                Trust::CaCert(p) => Some(p.clone()),
                Trust::Insecure => None,
            },
            client_cert: None,
            resume,
        }
    }

    /// The trust in words, for the point's notes.
    pub fn describe(&self) -> String {
        match self {
            Trust::Insecure => "https, certificate not verified (the server's --tls-self-signed \
                                certificate; load --insecure)"
                .into(),
            Trust::CaCert(p) => format!("https, certificate verified against {}", p.display()),
        }
    }
}

/// A server to start.
#[derive(Debug, Clone, PartialEq)]
pub enum Server {
    /// `servelab serve` with these flags; the run adds only `--port`.
    Servelab(Box<ServeArgs>),
    /// A peer, configured in the temporary directory.
    Peer(Peer),
}

/// A simulator model and how long to run it.
#[derive(Debug, Clone, PartialEq)]
pub struct Model {
    /// The queueing model.
    pub model: servelab_sim::Model,
    /// Replications and their length.
    pub run: servelab_sim::RunSpec,
}

/// A load resolved for one point.
#[derive(Debug, Clone, PartialEq)]
pub struct ResolvedLoad {
    /// The load's settings (`[load]`, all but the lab's own keys), read by
    /// `servelab load`'s own type and checked on a spec.
    pub settings: servelab_load::LoadSettings,
    /// HTTP/1.1, or HTTP/2 with its streams per connection, as the checked
    /// spec has it.
    pub protocol: servelab_load::Protocol,
    /// The measured window of a repeat.
    pub duration: Duration,
    /// The warm-up at full load before the first repeat.
    pub warmup: Duration,
    /// Path requested.
    pub path: String,
}

impl ResolvedLoad {
    /// The load of one run of `duration` against `url`: the settings written
    /// onto a spec with the lab's own defaults (retries without end, as seed
    /// 002's users; `load`'s default is 0) and no request count.
    pub fn spec(
        &self,
        url: &str,
        duration: Duration,
    ) -> Result<servelab_load::LoadSpec, servelab_load::LoadError> {
        let mut s = servelab_load::LoadSpec::new(vec![servelab_load::Target::new(url)]);
        s.retries = None;
        self.settings.apply(&mut s)?;
        s.requests = None;
        s.duration = Some(duration);
        Ok(s)
    }

    /// Connections the users hold: HTTP/1.1's users, HTTP/2's connections.
    pub fn connections(&self) -> u32 {
        self.settings.users.unwrap_or(1)
    }

    /// Closed users in all (what Little's law counts): with HTTP/2, every
    /// stream slot of every connection is a user.
    pub fn users(&self) -> u32 {
        self.connections().saturating_mul(self.protocol.streams())
    }

    /// Mean think time, seconds.
    pub fn think_s(&self) -> f64 {
        self.settings.think.map_or(0.0, |t| t.mean())
    }

    /// Whether the users time out their requests.
    pub fn times_out(&self) -> bool {
        self.settings.timeout.is_some()
    }

    /// The protocol, in words for a point's notes: `http/1.1`, or `h2, N
    /// streams per connection`.
    pub fn describe_protocol(&self) -> String {
        match self.protocol {
            servelab_load::Protocol::H2 { streams: n } => format!(
                "h2, {n} stream{} per connection",
                if n == 1 { "" } else { "s" }
            ),
            servelab_load::Protocol::Http1 => "http/1.1".into(),
        }
    }
}

impl PlannedPoint {
    /// The value of axis `name`.
    pub fn var(&self, name: &str) -> Option<&Scalar> {
        self.vars.iter().find(|(n, _)| n == name).map(|(_, v)| v)
    }

    /// The server's label, for measured points.
    pub fn server_label(&self) -> Option<&str> {
        match &self.work {
            Work::Measure(m) => Some(&m.label),
            Work::Simulate(_) => None,
        }
    }
}

/// The `servelab serve` flags the lab sets itself; `args` may not.
const LAB_SETS: &str = "--root, --addr, --port and --engine";

impl Experiment {
    /// Expands and resolves every point of the full or `--quick` sweep
    /// (`options`), with `tmp` as the run's temporary directory; the options'
    /// repeats and precision override the file's. `{kernel_quantum}` and
    /// `{kernel_switch}` take the kernel's setting and no switch cost
    /// ([`KernelSched::unmeasured`]); a run measures them and uses
    /// [`Experiment::plan_with`].
    pub fn plan(&self, options: &PlanOptions, tmp: &Path) -> Result<Plan> {
        self.plan_with(options, tmp, &KernelSched::unmeasured())
    }

    /// [`Experiment::plan`] with the kernel's measured quantum and switch cost.
    pub fn plan_with(
        &self,
        options: &PlanOptions,
        tmp: &Path,
        kernel: &KernelSched,
    ) -> Result<Plan> {
        self.plan_fields(options, tmp, (kernel.quantum(), kernel.switch_cost()))
            .map_err(|(span, message)| self.source.error_at(span, message))
    }

    /// Whether a template names the kernel's figures, so a run must measure them.
    pub fn uses_kernel(&self) -> bool {
        self.source.text.contains("{kernel_")
    }

    fn plan_fields(
        &self,
        options: &PlanOptions,
        tmp: &Path,
        kernel: (f64, f64),
    ) -> Result<Plan, FieldError> {
        let quick = options.quick;
        let tmp_text = tmp.to_string_lossy();
        let mut points = Vec::new();
        let mut files: Vec<ServedFile> = Vec::new();
        for vars in self.combinations(quick) {
            let all = self.with_cases(&vars)?;
            let v = Vars {
                point: &all,
                tmp: &tmp_text,
                kernel,
            };
            for file in self.resolve_files(&v)? {
                add_file(&mut files, file)?;
            }
            if let Some(spec) = &self.simulate {
                points.push(PlannedPoint {
                    index: points.len(),
                    vars: vars.clone(),
                    work: Work::Simulate(Box::new(self.resolve_model(spec, &v, quick)?)),
                });
                continue;
            }
            for spec in &self.servers {
                let server = resolve_server(spec, &v, &tmp.join("www"))?;
                let load = self.resolve_load(&v, quick)?;
                let tls = self.resolve_tls(spec, &server, &v, tmp)?;
                let measure = Measure {
                    label: spec.label.get_ref().clone(),
                    server,
                    load,
                    tls,
                    predict: self
                        .predict
                        .as_ref()
                        .map(|m| self.resolve_model(m, &v, quick))
                        .transpose()?,
                };
                points.push(PlannedPoint {
                    index: points.len(),
                    vars: vars.clone(),
                    work: Work::Measure(Box::new(measure)),
                });
            }
        }
        let (min, max) = self.repeats(quick, options.repeats);
        Ok(Plan {
            quick,
            repeats: min,
            max_repeats: max,
            precision: options.precision.unwrap_or_else(|| self.precision()),
            headline: self.headline(),
            tmp: tmp.to_path_buf(),
            files,
            points,
        })
    }

    /// The axis combinations of a sweep, first axis outermost. Servers of one
    /// combination are then measured one after the other, so that slow drift of
    /// a shared machine hurts them alike.
    fn combinations(&self, quick: bool) -> Vec<Vec<(String, Scalar)>> {
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
        combos.retain(|c| !self.skips(c));
        combos
    }

    /// Whether a combination of axis values is one that `skip` names.
    fn skips(&self, combo: &[(String, Scalar)]) -> bool {
        self.skip.iter().any(|t| {
            t.get_ref().iter().all(|(axis, wanted)| {
                let Some((_, v)) = combo.iter().find(|(n, _)| n == axis) else {
                    return false;
                };
                let values = super::template::listed(wanted);
                values.iter().any(|w| same_value(v, w))
            })
        })
    }

    /// A point's axis values and the placeholders its case axes set.
    fn with_cases(&self, vars: &[(String, Scalar)]) -> Result<Vec<(String, Scalar)>, FieldError> {
        let mut all = vars.to_vec();
        let mut keys: Option<Vec<String>> = None;
        for axis in &self.axes {
            let Some(set) = &axis.set else { continue };
            let name = axis.name.get_ref();
            let Some((_, value)) = vars.iter().find(|(n, _)| n == name) else {
                continue;
            };
            let case = set
                .get_ref()
                .get(&value.to_string())
                .and_then(|c| c.as_table())
                .ok_or_else(|| {
                    (
                        set.span(),
                        format!("`{name}` has no case `{value}` in its `set` (a table per value)"),
                    )
                })?;
            let these: Vec<String> = case.keys().cloned().collect();
            if keys.as_ref().is_some_and(|k| *k != these) {
                return Err((
                    set.span(),
                    format!(
                        "every case of `{name}` must set the same placeholders ({})",
                        these.join(", ")
                    ),
                ));
            }
            keys.get_or_insert(these);
            for (k, v) in case {
                if self.axis(k).is_some() {
                    return Err((
                        set.span(),
                        format!("`{k}` is an axis; a case cannot set it"),
                    ));
                }
                let scalar = match v {
                    toml::Value::Integer(i) => Scalar::Int(*i),
                    toml::Value::Float(f) => Scalar::Float(*f),
                    toml::Value::String(s) => Scalar::Str(s.clone()),
                    toml::Value::Boolean(b) => Scalar::Bool(*b),
                    other => {
                        return Err((
                            set.span(),
                            format!("`{k}` = {other}: a case sets numbers or strings"),
                        ));
                    }
                };
                all.push((k.clone(), scalar));
            }
        }
        Ok(all)
    }

    /// The files of the served directory at a point.
    fn resolve_files(&self, vars: &Vars<'_>) -> Result<Vec<(ServedFile, Template)>, FieldError> {
        let mut out = Vec::new();
        for f in &self.files {
            let name = expand(&f.name, vars)?;
            if name.is_empty() || name.split('/').any(|c| c == "..") || name.starts_with('/') {
                return Err((
                    f.name.span(),
                    format!("file name `{name}` must be relative, without `..`"),
                ));
            }
            let size: u64 = parse_num(&f.size, vars, "size")?;
            out.push((ServedFile { name, size }, f.size.clone()));
        }
        Ok(out)
    }

    /// The load of one point: its settings read key by key (a mistake is at
    /// its key's line), the lab's window and warm-up, and the whole checked
    /// on the spec a run would drive.
    fn resolve_load(&self, vars: &Vars<'_>, quick: bool) -> Result<ResolvedLoad, FieldError> {
        let load = self.load.as_ref().ok_or_else(|| {
            (
                self.name.span(),
                "a measured experiment needs [load]".to_string(),
            )
        })?;
        let settings = load_settings(load, vars)?;
        let span_of = |key: &str| load.get(key).map_or(load.path.span(), |t| t.span());
        if let Some(key) = ["rate", "arrival", "connections"]
            .into_iter()
            .find(|k| load.get(k).is_some())
        {
            return Err((
                span_of(key),
                format!(
                    "{key}: the lab measures closed users (`users`); open arrivals are \
                     `servelab load --rate`'s"
                ),
            ));
        }
        let q = self.quick.as_ref().filter(|_| quick);
        let (window, warm) = if quick {
            (crate::protocol::QUICK_WINDOW, crate::protocol::QUICK_WARMUP)
        } else {
            (crate::protocol::FULL_WINDOW, crate::protocol::FULL_WARMUP)
        };
        let warmup = match q
            .and_then(|q| q.load_warmup.as_ref())
            .or(load.warmup.as_ref())
        {
            Some(t) => positive_duration(t, vars, "warmup")?,
            None => warm,
        };
        let duration = match q.and_then(|q| q.duration.as_ref()) {
            Some(t) => positive_duration(t, vars, "duration")?,
            None => match settings.duration {
                Some(d) if d.is_zero() => {
                    return Err((span_of("duration"), "duration must be positive".into()));
                }
                Some(d) => d,
                None => window,
            },
        };
        if !quick && duration < crate::protocol::FULL_WINDOW {
            return Err((
                span_of("duration"),
                format!(
                    "a full run measures at least {} s per repeat (the lab's protocol), not {} s; \
                     shorten it only under [quick]",
                    crate::protocol::FULL_WINDOW.as_secs(),
                    duration.as_secs_f64()
                ),
            ));
        }
        let path = expand(&load.path, vars)?;
        if !path.starts_with('/') {
            return Err((load.path.span(), format!("path `{path}` must start with /")));
        }
        let mut resolved = ResolvedLoad {
            settings,
            protocol: servelab_load::Protocol::Http1,
            duration,
            warmup,
            path,
        };
        // The spec a run drives, checked now with `load`'s own rules (a
        // session with HTTP/2, zero users or streams...), at the key named.
        let spec = resolved
            .spec(&format!("http://127.0.0.1{}", resolved.path), duration)
            .and_then(|s| s.validate().map(|()| s))
            .map_err(|e| blame(load, e))?;
        resolved.protocol = spec.protocol;
        Ok(resolved)
    }

    /// How the lab speaks to `server`: TLS when its flags serve TLS, with the
    /// trust those flags allow and `[load] tls_resume`; a `tls_resume` for a
    /// server without TLS is a mistake.
    fn resolve_tls(
        &self,
        spec: &ServerSpec,
        server: &Server,
        vars: &Vars<'_>,
        tmp: &Path,
    ) -> Result<Option<PointTls>, FieldError> {
        let resume_t = self.load.as_ref().and_then(|l| l.get("tls_resume"));
        let resume = match (self.load.as_ref(), resume_t) {
            (Some(l), Some(_)) => load_settings(l, vars)?.tls_resume,
            _ => None,
        };
        let peer_tls = spec.tls.as_ref().filter(|t| *t.get_ref());
        let trust = match server {
            Server::Servelab(_) if peer_tls.is_some() => {
                return Err((
                    peer_tls.map_or(0..0, |t| t.span()),
                    "tls: only a peer takes `tls = true`; give a servelab engine \
                     --tls-self-signed (or --tls-cert and --tls-key) in its args"
                        .into(),
                ));
            }
            Server::Servelab(a) if a.tls_self_signed => Some(Trust::Insecure),
            Server::Servelab(a) => a.tls_cert.clone().map(Trust::CaCert),
            Server::Peer(p) => match peer_tls {
                Some(t) if !p.serves_tls() => {
                    return Err((
                        t.span(),
                        format!("tls: the lab configures TLS for nginx, lighttpd and h2o, not {p}"),
                    ));
                }
                Some(_) => Some(Trust::CaCert(
                    crate::process::peer::certificate_paths(tmp).0,
                )),
                None => None,
            },
        };
        match (trust, resume_t) {
            (Some(trust), _) => Ok(Some(PointTls {
                trust,
                resume: resume.unwrap_or(true),
            })),
            (None, Some(t)) => Err((
                t.span(),
                format!(
                    "tls_resume: server `{}` does not serve TLS (an engine takes \
                     --tls-self-signed, or --tls-cert and --tls-key, in its args; a peer \
                     takes tls = true)",
                    spec.label.get_ref()
                ),
            )),
            (None, None) => Ok(None),
        }
    }

    /// The simulator model and run spec of one point, from `spec`.
    fn resolve_model(
        &self,
        spec: &ModelSpec,
        vars: &Vars<'_>,
        quick: bool,
    ) -> Result<Model, FieldError> {
        let sim_dist =
            |t: &Template, what: &str| parse_with(t, vars, what, str::parse::<servelab_sim::Dist>);
        let dur =
            |t: &Template, what: &str| parse_with(t, vars, what, servelab_dist::parse_secs_f64);
        let mut m = servelab_sim::Model {
            users: parse_num(&spec.users, vars, "users")?,
            service: sim_dist(&spec.service, "service")?,
            think: sim_dist(&spec.think, "think")?,
            ..servelab_sim::Model::default()
        };
        if let Some(v) = opt_num(&spec.cores, vars, "cores")? {
            m.cores = v;
        }
        if let Some(v) = opt_num(&spec.threads_per_core, vars, "threads_per_core")? {
            m.threads_per_core = v;
        }
        if let Some(v) = opt_num(&spec.buffer, vars, "buffer")? {
            m.buffer = v;
        }
        if let Some(t) = &spec.policy {
            m.policy = parse_with(t, vars, "policy", str::parse)?;
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
                m.timeout = Some(parse_with(t, vars, "timeout", str::parse)?);
            }
        }
        m.retries = opt_num(&spec.retries, vars, "retries")?;
        if let Some(t) = &spec.retry_wait {
            m.retry_wait = sim_dist(t, "retry_wait")?;
        }
        if let Some(t) = &spec.on_full {
            m.on_full = parse_with(t, vars, "on_full", str::parse)?;
        }
        if let Some(t) = &spec.on_abandon {
            m.on_abandon = parse_with(t, vars, "on_abandon", str::parse)?;
        }
        if let Some(t) = &spec.session {
            let text = expand(t, vars)?;
            if text != "none" {
                let n: u32 = parse_with(t, vars, "session", str::parse)?;
                if n == 0 {
                    return Err((t.span(), "session must be at least 1 (or none)".into()));
                }
                m.session = Some(n);
            }
        }
        if let Some(t) = &spec.first_demand {
            m.first_demand = sim_dist(t, "first_demand")?;
        }
        m.connections = held_workers(spec, vars)?;
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
        Ok(Model { model: m, run })
    }
}

/// The connection model of `[simulate]`/`[predict]`: free (requests queue
/// for threads; the default, so seed 002's model is unchanged) or, with
/// `hold_workers = true`, workers held by connections with the keep-alive
/// timeout, request limit and backlog given (each `sim`'s default when
/// absent). A setting of held workers without `hold_workers` would change
/// nothing: it is refused at its line, as `sim` warns about its flags.
fn held_workers(
    spec: &ModelSpec,
    vars: &Vars<'_>,
) -> Result<servelab_sim::Connections, FieldError> {
    use servelab_sim::{Connections, HeldWorkers};
    let hold = spec
        .hold_workers
        .as_ref()
        .map(|t| {
            parse_with(t, vars, "hold_workers", |s: &str| match s {
                "true" | "on" => Ok(true),
                "false" | "off" => Ok(false),
                _ => Err("expected true or false"),
            })
        })
        .transpose()?
        .unwrap_or(false);
    let settings = [
        ("keepalive_timeout", &spec.keepalive_timeout),
        ("max_requests_per_conn", &spec.max_requests_per_conn),
        ("backlog", &spec.backlog),
    ];
    if !hold {
        if let Some((name, t)) = settings
            .iter()
            .find_map(|(n, t)| t.as_ref().map(|t| (n, t)))
        {
            return Err((
                t.span(),
                format!(
                    "{name} needs hold_workers = true: without workers held by connections \
                     requests queue for threads, and it changes nothing"
                ),
            ));
        }
        return Ok(Connections::Free);
    }
    let d = HeldWorkers::default();
    let mut h = HeldWorkers { ..d };
    if let Some(t) = &spec.keepalive_timeout {
        h.keepalive_timeout =
            parse_with(t, vars, "keepalive_timeout", HeldWorkers::parse_keepalive)?;
    }
    if let Some(t) = &spec.max_requests_per_conn {
        h.max_requests = parse_with(
            t,
            vars,
            "max_requests_per_conn",
            HeldWorkers::parse_request_limit,
        )?;
    }
    if let Some(v) = opt_num(&spec.backlog, vars, "backlog")? {
        h.backlog = v;
    }
    h.validate().map_err(|e| {
        let span = spec.hold_workers.as_ref().map_or(0..0, |t| t.span());
        (span, format!("hold_workers: {e}"))
    })?;
    Ok(Connections::Held(h))
}

/// The settings of `[load]` at a point, each key read alone first, so that
/// a mistake is reported at its key's line, with its key.
fn load_settings(
    load: &LoadSection,
    vars: &Vars<'_>,
) -> Result<servelab_load::LoadSettings, FieldError> {
    let mut texts = Vec::with_capacity(load.settings.len());
    for (key, t) in &load.settings {
        let text = expand(t, vars)?;
        servelab_load::LoadSettings::from_text([(key.as_str(), text.as_str())])
            .map_err(|e| (t.span(), format!("{key}: {e}")))?;
        texts.push((key.as_str(), text));
    }
    servelab_load::LoadSettings::from_text(texts.iter().map(|(k, v)| (*k, v.as_str())))
        .map_err(|e| (load.path.span(), e))
}

/// A load that `servelab load` refuses, at the key its message names, said
/// with the keys of `[load]` where `load` says flags (`--streams must be ...`
/// is `streams must be ...` at `streams`). `LoadError::Spec` carries text,
/// not the setting, so the key is found by its flag's name.
fn blame(load: &LoadSection, e: servelab_load::LoadError) -> FieldError {
    let message = match e {
        servelab_load::LoadError::Spec(m) => m,
        other => other.to_string(),
    }
    .replace("--h2", "protocol h2");
    let mut at = None;
    let mut said = message.clone();
    for (key, t) in &load.settings {
        let flag = format!("--{}", key.replace('_', "-"));
        if message.contains(&flag) || message.starts_with(&format!("{key} ")) {
            at.get_or_insert(t.span());
        }
        said = said.replace(&flag, key);
    }
    let users = load.get("users").map_or(load.path.span(), |t| t.span());
    match at {
        Some(span) => (span, said),
        None => (users, format!("[load]: {said}")),
    }
}

/// A positive constant duration (`2s`).
fn positive_duration(t: &Template, vars: &Vars<'_>, what: &str) -> Result<Duration, FieldError> {
    match parse_with(t, vars, what, str::parse::<servelab_load::Dist>)? {
        servelab_load::Dist::Const(d) if !d.is_zero() => Ok(d),
        _ => Err((
            t.span(),
            format!(
                "{what} `{}` must be a positive constant like 2s",
                expand(t, vars)?
            ),
        )),
    }
}

/// A served file, once: two points may name the same file only with the same size.
fn add_file(
    files: &mut Vec<ServedFile>,
    (file, size_field): (ServedFile, Template),
) -> Result<(), FieldError> {
    match files.iter().find(|f| f.name == file.name) {
        Some(f) if f.size != file.size => Err((
            size_field.span(),
            format!(
                "file `{}` would be {} bytes at one point and {} at another; give each size its own name",
                file.name, f.size, file.size
            ),
        )),
        Some(_) => Ok(()),
        None => {
            files.push(file);
            Ok(())
        }
    }
}

/// The server of a point: an engine's `servelab serve` flags, read with the
/// parser `servelab serve` itself uses, or a peer.
fn resolve_server(spec: &ServerSpec, vars: &Vars<'_>, root: &Path) -> Result<Server, FieldError> {
    let (engine, peer) = (&spec.engine, &spec.peer);
    if let (Some(p), None) = (peer, engine) {
        if let Some(a) = spec.args.first() {
            return Err((
                a.span(),
                "`args` are `servelab serve` flags; a peer takes none".into(),
            ));
        }
        return Ok(Server::Peer(*p.get_ref()));
    }
    let Some(engine) = engine.as_ref().filter(|_| peer.is_none()) else {
        return Err((
            spec.label.span(),
            "a server needs exactly one of `engine` and `peer`".into(),
        ));
    };
    let words = spec
        .args
        .iter()
        .map(|a| expand(a, vars))
        .collect::<Result<Vec<String>, _>>()?;
    let mut args = ServeArgs::try_parse_from(&words).map_err(|e| {
        // clap names the offending word in quotes; point at that element.
        let message = clap_message(&e);
        let span = spec
            .args
            .iter()
            .zip(&words)
            .find(|(_, w)| message.contains(&format!("'{w}'")))
            .or_else(|| spec.args.iter().zip(&words).next())
            .map_or(spec.label.span(), |(a, _)| a.span());
        (span, format!("args: {message}"))
    })?;
    let defaults = ServeArgs::default();
    if args.root.is_some()
        || args.dir.is_some()
        || args.port.is_some()
        || args.addr != defaults.addr
    {
        let span = spec.args.first().map_or(spec.label.span(), |a| a.span());
        return Err((span, format!("args: the lab sets {LAB_SETS} itself")));
    }
    if args.engine != defaults.engine {
        let span = spec.args.first().map_or(spec.label.span(), |a| a.span());
        return Err((
            span,
            format!("args: the lab sets {LAB_SETS} itself; use `engine = ...`"),
        ));
    }
    args.engine = engine.get_ref().0;
    args.root = Some(root.to_path_buf());
    // No access log unless the experiment asks for one: a log on standard
    // output would be measured too.
    args.log.get_or_insert(LogTarget::Off);
    Ok(Server::Servelab(Box::new(args)))
}

/// clap's error as one line, without its `error: ` prefix and usage tail.
fn clap_message(e: &dyn std::fmt::Display) -> String {
    let text = e.to_string();
    let first = text.lines().next().unwrap_or("").trim();
    first.strip_prefix("error: ").unwrap_or(first).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use servelab_server::Engine;

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
path = "/a.bin"
[[plot]]
title = "X"
x = "users"
y = "throughput"
"#;

    fn plan(text: &str) -> Result<Plan> {
        Experiment::parse(text, "t.toml")?.plan(&PlanOptions::sweep(false), Path::new("/tmp/x"))
    }

    fn err(text: &str) -> String {
        plan(text).unwrap_err().to_string()
    }

    const SIMULATED: &str = r#"
name = "s"
title = "S"
question = "Q?"
[[axis]]
name = "users"
label = "users"
values = [4, 8]
[simulate]
users = "{users}"
service = "exp:20ms"
think = "exp:100ms"
cores = 1
threads_per_core = 4
HELD
[[plot]]
title = "X"
x = "users"
y = "throughput"
"#;

    fn simulated_connections(held: &str) -> Result<Vec<servelab_sim::Connections>> {
        let p = plan(&SIMULATED.replace("HELD", held))?;
        Ok(p.points
            .iter()
            .map(|pt| match &pt.work {
                Work::Simulate(m) => m.model.connections,
                Work::Measure(_) => panic!("simulated"),
            })
            .collect())
    }

    /// Issue 27's workers held by connections, as `[simulate]` keys: servelab's
    /// `pool`/`prefork` and Apache with `KeepAlive On` can be modelled, each
    /// setting defaulting to `sim`'s, and without `hold_workers` nothing
    /// changes (seed 002's model stays free).
    #[test]
    fn simulate_keys_model_workers_held_by_connections() {
        use servelab_sim::{Connections, HeldWorkers};
        assert!(
            simulated_connections("")
                .unwrap()
                .iter()
                .all(|c| *c == Connections::Free)
        );
        let held = simulated_connections(
            "hold_workers = true\nkeepalive_timeout = \"2s\"\nmax_requests_per_conn = 100\nbacklog = 64",
        )
        .unwrap();
        assert_eq!(
            held[1],
            Connections::Held(HeldWorkers {
                keepalive_timeout: Some(2.0),
                max_requests: Some(100),
                backlog: 64,
            })
        );
        // Each setting defaults to sim's; `none` turns the timeout off.
        let held = simulated_connections("hold_workers = true").unwrap();
        assert_eq!(held[0], Connections::Held(HeldWorkers::default()));
        let held =
            simulated_connections("hold_workers = true\nkeepalive_timeout = \"none\"").unwrap();
        assert_eq!(held[0].held().unwrap().keepalive_timeout, None);
        // A setting without hold_workers would change nothing: refused at its line.
        let e = simulated_connections("keepalive_timeout = \"5s\"")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("t.toml:15:21") && e.contains("needs hold_workers = true"),
            "{e}"
        );
        let e = simulated_connections("hold_workers = true\nmax_requests_per_conn = 0")
            .unwrap_err()
            .to_string();
        assert!(e.contains("max_requests_per_conn"), "{e}");
        let e = simulated_connections("hold_workers = \"maybe\"")
            .unwrap_err()
            .to_string();
        assert!(e.contains("hold_workers: expected true or false"), "{e}");
        // Seed 002 keeps its model: requests queue for threads at every point.
        // Read from its file, not through `builtin` (which depends on this module).
        let seed = include_str!("../../../../experiments/seed002.toml");
        let exp = Experiment::parse(seed, "seed002.toml").unwrap();
        let p = exp
            .plan(&PlanOptions::sweep(false), Path::new("/tmp/x"))
            .unwrap();
        assert!(p.points.iter().all(|pt| matches!(
            &pt.work,
            Work::Simulate(m) if m.model.connections == Connections::Free
        )));
    }

    /// `--repeats` and `--precision` are both options the plan is built from
    /// (issue 31: `--precision` was patched onto a finished plan, so a plan
    /// built elsewhere, for a report, lacked it).
    #[test]
    fn the_command_lines_repeats_and_precision_are_in_the_plan() {
        let e = Experiment::parse(GOOD, "t.toml").unwrap();
        let tmp = Path::new("/tmp/x");
        let own = e.plan(&PlanOptions::sweep(false), tmp).unwrap();
        assert_eq!(own.precision, e.precision());
        let p = e
            .plan(
                &PlanOptions {
                    quick: false,
                    repeats: Some(5),
                    precision: Some(0.05),
                },
                tmp,
            )
            .unwrap();
        assert_eq!((p.repeats, p.max_repeats, p.precision), (5, 5, 0.05));
        assert_ne!(own.precision, 0.05, "the test must change the precision");
        assert_eq!(p.points.len(), own.points.len());
    }

    #[test]
    fn points_are_the_product_of_axes_and_servers_resolved_to_types() {
        let e = Experiment::parse(GOOD, "t.toml").unwrap();
        let full = e
            .plan(&PlanOptions::sweep(false), Path::new("/tmp/x"))
            .unwrap();
        assert_eq!(full.points.len(), 3);
        let quick = e
            .plan(&PlanOptions::sweep(true), Path::new("/tmp/x"))
            .unwrap();
        assert_eq!(
            quick.points.len(),
            2,
            "quick keeps the first and last value"
        );
        let Work::Measure(m) = &full.points[2].work else {
            panic!("measured")
        };
        assert_eq!(
            (
                m.load.settings.users,
                m.load.settings.session,
                m.load.duration,
                m.load.warmup
            ),
            (
                Some(4),
                Some(2),
                crate::protocol::FULL_WINDOW,
                crate::protocol::FULL_WARMUP
            )
        );
        let Work::Measure(q) = &quick.points[0].work else {
            panic!("measured")
        };
        assert_eq!(q.load.duration, crate::protocol::QUICK_WINDOW);
        assert_eq!((full.repeats, full.max_repeats), (3, 6));
        assert_eq!((quick.repeats, quick.max_repeats), (2, 2));
        let Server::Servelab(args) = &m.server else {
            panic!("servelab")
        };
        assert_eq!(args.engine, Engine::Pool);
        assert_eq!(args.workers, Some(4));
        assert_eq!(args.log, Some(LogTarget::Off));
        assert_eq!(args.root.as_deref(), Some(Path::new("/tmp/x/www")));
    }

    #[test]
    fn server_args_are_checked_by_the_serve_parser_with_their_line() {
        let e = err(&GOOD.replace("\"{users}\"]", "\"{users}\", \"--delay\", \"exp:zz\"]"));
        assert!(
            e.starts_with("t.toml:12:44: args: invalid value 'exp:zz'"),
            "{e}"
        );
        let e = err(&GOOD.replace("\"--workers\"", "\"--wrokers\""));
        assert!(
            e.starts_with("t.toml:12:9: args: unexpected argument '--wrokers'"),
            "{e}"
        );
        let e = err(&GOOD.replace("\"--workers\", \"{users}\"", "\"--port\", \"80\""));
        assert!(
            e.starts_with("t.toml:12:9: args: the lab sets --root"),
            "{e}"
        );
        let e = err(&GOOD.replace("\"{users}\"]", "\"0\"]"));
        assert!(
            e.starts_with("t.toml:12:") && e.contains("at least 1"),
            "{e}"
        );
    }

    #[test]
    fn an_unknown_placeholder_names_its_line() {
        let e = err(&GOOD.replace("\"{users}\"]", "\"{user}\"]"));
        assert!(e.starts_with("t.toml:12:") && e.contains("{user}"), "{e}");
    }

    #[test]
    fn a_full_window_below_ten_seconds_or_two_repeats_are_refused() {
        let e = err(&GOOD.replace("path = \"/a.bin\"", "path = \"/a.bin\"\nduration = \"2s\""));
        assert!(
            e.starts_with("t.toml:17:") && e.contains("at least 10 s per repeat"),
            "{e}"
        );
        let e = err(&GOOD.replace("question = \"Q?\"", "question = \"Q?\"\nrepeats = 2"));
        assert!(e.contains("at least 3 repeats"), "{e}");
        // A seed's "requests" count is no longer a way to end a repeat.
        let e = err(&GOOD.replace("session = 2", "session = 2\nrequests = 100"));
        assert!(e.contains("unknown field `requests`"), "{e}");
    }

    #[test]
    fn a_case_axis_sets_its_placeholders_and_only_the_axis_is_a_point_value() {
        let text = GOOD
            .replace(
                "[[server]]",
                "[[axis]]\nname = \"size\"\nlabel = \"size\"\nvalues = [\"small\", \"big\"]\n\
             set = { small = { w = 1 }, big = { w = 8 } }\n[[server]]",
            )
            .replace("\"{users}\"]", "\"{w}\"]")
            .replace(
                "y = \"throughput\"",
                "y = \"throughput\"\nwhere = { size = [\"small\", \"big\"] }",
            );
        let p = plan(&text).unwrap();
        let workers: Vec<Option<usize>> = p
            .points
            .iter()
            .map(|pt| match &pt.work {
                Work::Measure(m) => match &m.server {
                    Server::Servelab(a) => a.workers,
                    Server::Peer(_) => None,
                },
                Work::Simulate(_) => None,
            })
            .collect();
        assert_eq!(
            workers,
            [Some(1), Some(8), Some(1), Some(8), Some(1), Some(8)]
        );
        assert_eq!(
            p.points[1].vars,
            [
                ("users".to_string(), Scalar::Int(1)),
                ("size".to_string(), Scalar::Str("big".into()))
            ]
        );
        let e = err(&text.replace("big = { w = 8 }", "large = { w = 8 }"));
        assert!(e.contains("has no case `big`"), "{e}");
    }

    /// Issue 31: `[load]` is `servelab load`'s own settings, read by its
    /// parser, so HTTP/2 reaches the lab as keys; a mistake is said once, at
    /// its key.
    #[test]
    fn load_keys_are_the_load_generators_settings() {
        let text = GOOD.replace(
            "session = 2\n",
            "protocol = \"h2\"\nstreams = \"{users}\"\n",
        );
        let p = plan(&text).unwrap();
        let Work::Measure(m) = &p.points[2].work else {
            panic!("measured")
        };
        assert_eq!(m.load.protocol, servelab_load::Protocol::H2 { streams: 4 });
        assert_eq!((m.load.connections(), m.load.users()), (4, 16));
        let spec = m
            .load
            .spec("http://127.0.0.1/a.bin", m.load.duration)
            .unwrap();
        assert_eq!(spec.protocol, servelab_load::Protocol::H2 { streams: 4 });
        assert_eq!(spec.retries, None, "the lab's users retry without end");
        for (line, want) in [
            (
                "streams = \"many\"",
                "t.toml:16:11: streams: `many` is not a whole number",
            ),
            (
                "protocol = \"h3\"",
                "t.toml:16:12: protocol: unknown protocol `h3` (http/1.1 or h2)",
            ),
            (
                "rate = 100",
                "t.toml:16:8: rate: the lab measures closed users",
            ),
        ] {
            let e = err(&GOOD.replace("path = \"/a.bin\"", &format!("{line}\npath = \"/a.bin\"")));
            assert!(e.starts_with(want), "{line}: {e}");
            assert_eq!(e.lines().count(), 1, "{e}");
        }
        // What `load` itself refuses is said with the key it names, at its line.
        let e = err(&GOOD.replace("session = 2", "session = 2\nprotocol = \"h2\""));
        assert!(
            e.starts_with("t.toml:15:11: session is not supported with protocol h2 yet"),
            "{e}"
        );
        let e = err(&GOOD.replace("session = 2", "session = 2\nstreams = 5"));
        assert!(
            e.starts_with("t.toml:16:11: streams above 1 are HTTP/2's"),
            "{e}"
        );
        let e = err(&GOOD.replace("users = \"{users}\"", "users = 0"));
        assert!(
            e.starts_with("t.toml:14:9: users must be at least 1"),
            "{e}"
        );
    }

    #[test]
    fn skip_takes_combinations_out_of_the_product() {
        let text = GOOD
            .replace(
                "[[server]]",
                "[[axis]]\nname = \"size\"\nlabel = \"size\"\nvalues = [\"small\", \"big\"]\n[[server]]",
            )
            .replace(
                "question = \"Q?\"",
                "question = \"Q?\"\nskip = [{ size = \"big\", users = [2, 4] }]",
            );
        let p = plan(&text).unwrap();
        let points: Vec<String> = p
            .points
            .iter()
            .map(|pt| {
                let v: Vec<String> = pt.vars.iter().map(|(_, v)| v.to_string()).collect();
                v.join("/")
            })
            .collect();
        assert_eq!(points, ["1/small", "1/big", "2/small", "4/small"]);
        let e = err(&text.replace("users = [2, 4]", "user = 2"));
        assert!(e.contains("skip: `user` is not an axis"), "{e}");
        let e = err(&text.replace("users = [2, 4]", "users = 3"));
        assert!(e.contains("skip: axis `users` has no value 3"), "{e}");
    }

    #[test]
    fn a_bad_think_time_names_its_line() {
        let e = err(&GOOD.replace("path = \"/a.bin\"", "path = \"/a.bin\"\nthink = \"exp:zz\""));
        assert!(e.starts_with("t.toml:17:") && e.contains("think"), "{e}");
    }

    #[test]
    fn one_file_name_may_not_have_two_sizes() {
        let text = GOOD.to_string() + "[[file]]\nname = \"a.bin\"\nsize = \"{users}\"\n";
        let e = err(&text);
        assert!(
            e.contains("file `a.bin` would be 1 bytes at one point and 2"),
            "{e}"
        );
        let text = GOOD.to_string() + "[[file]]\nname = \"a-{users}.bin\"\nsize = \"{users}\"\n";
        assert_eq!(plan(&text).unwrap().files.len(), 3);
    }
}
