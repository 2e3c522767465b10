//! Running a planned experiment end to end: files, predictions, servers,
//! warm-up, repeats, progress, failures, Ctrl-C, and the results directory.
//!
//! The run follows the experiment's [`Plan`] and nothing else: every field was
//! expanded, parsed and checked when it was planned, before anything ran. Every
//! point gets a freshly started server (so a log file or a cache from one point
//! never favours the next), a warm-up that is thrown away, then `repeats`
//! measured load runs. A point that fails is recorded with its reason and the
//! run goes on; Ctrl-C stops the load run in progress, stops the server, and
//! still writes what was measured. [`Finished::check`] then says whether the
//! run as a whole produced anything.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use servelab_load::{LoadSpec, Target, Workload};

use crate::cpu::{CpuReading, Placement};
use crate::error::{LabError, Result};
use crate::experiment::{
    Experiment, Measure, Model, Plan, PlannedPoint, ResolvedLoad, Server, Work,
};
use crate::index;
use crate::machine::{self, Machine};
use crate::metric::Metric;
use crate::peer;
use crate::results::{Figures, PointRecord, RunResults, SCHEMA, Stat, Status};
use crate::rundir;
use crate::server::{self, ServerProcess, StartError};

/// How to run an experiment.
#[derive(Debug, Clone)]
pub struct RunOptions {
    /// Shrink every sweep (`--quick`).
    pub quick: bool,
    /// Repeats per point instead of the experiment's (`--repeats`).
    pub repeats: Option<u32>,
    /// Results directory (default `results/<name>-<timestamp>`); it must not exist.
    pub out: Option<PathBuf>,
    /// Replace `out` if it holds a previous lab run (`--force`).
    pub force: bool,
    /// The `servelab` binary that serves (`servelab serve`).
    pub exe: PathBuf,
    /// servelab version, for the machine record.
    pub version: String,
    /// The command line that reruns this, for the report.
    pub command: String,
    /// Show a progress bar on a terminal.
    pub progress: bool,
}

/// A run that wrote its results.
#[derive(Debug, Clone)]
pub struct Finished {
    /// The results directory.
    pub dir: PathBuf,
    /// What was written to `results.json`.
    pub results: RunResults,
    /// The directory of runs whose `index.html` was refreshed, if any.
    pub index: Option<PathBuf>,
}

impl Finished {
    /// Each point that produced no figures, as "label: status: reason".
    pub fn problems(&self) -> Vec<String> {
        self.results
            .points
            .iter()
            .filter(|p| matches!(p.status, Status::Failed | Status::Unavailable))
            .map(|p| {
                format!(
                    "{}: {}: {}",
                    p.label(),
                    p.status.as_str(),
                    p.reason.as_deref().unwrap_or("no reason recorded")
                )
            })
            .collect()
    }

    /// An error when the run was interrupted or no point produced figures: a
    /// run that measured nothing must not look like a success.
    pub fn check(&self) -> Result<()> {
        if self.results.interrupted {
            return Err(LabError::Interrupted(self.dir.clone()));
        }
        if !self.results.points.iter().any(|p| p.status == Status::Ok) {
            return Err(LabError::NoFigures(self.dir.clone()));
        }
        Ok(())
    }
}

/// Longest a repeat bounded by a request count may take before it is cut.
const REPEAT_CAP: Duration = Duration::from_secs(120);

/// Plans an experiment, makes its results directory, runs it and writes the
/// results; a mistake in the file or a refused `--out` stops it before anything
/// runs.
pub fn run(exp: &Experiment, opts: &RunOptions) -> Result<Finished> {
    let (started_utc, stamp) = machine::utc_now();
    // Served files, server logs, peer configurations; removed however the run ends.
    let tmp = tempfile::Builder::new()
        .prefix(&format!(
            "servelab-lab-{}-{}-",
            exp.name(),
            std::process::id()
        ))
        .tempdir()
        .map_err(|e| LabError::io(std::env::temp_dir(), e))?;
    // Peers that drop privileges (h2o as root) must still read the files.
    let _ = std::fs::set_permissions(
        tmp.path(),
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    );
    let plan = exp.plan(opts.quick, opts.repeats, tmp.path())?;
    // The other sweep is planned only to report its mistakes now, not on the
    // next run.
    exp.plan(!opts.quick, opts.repeats, tmp.path())?;
    let out = rundir::create(opts.out.as_deref(), exp.name(), &stamp, opts.force)?;

    let stop = Arc::new(AtomicBool::new(false));
    let signals = Signals::register(&stop)?;
    let t0 = Instant::now();
    let placement = if exp.is_simulated() {
        Placement {
            server: vec![],
            load: vec![],
        }
    } else {
        Placement::plan()
    };
    let bar = progress_bar(opts.progress, &plan, exp.is_simulated());
    let mut records: Vec<PointRecord> = plan.points.iter().map(blank_record).collect();
    if exp.is_simulated() {
        simulate_all(&plan, &mut records, &stop, &bar);
    } else {
        measure_all(&plan, opts, &placement, &stop, &bar, &mut records)?;
    }
    bar.finish_and_clear();
    drop(signals);

    let results = RunResults {
        schema: SCHEMA.into(),
        experiment: exp.name().into(),
        source_file: exp.source.file.clone(),
        source: exp.source.text.clone(),
        command: opts.command.clone(),
        quick: opts.quick,
        repeats: plan.repeats,
        started_utc,
        duration_s: t0.elapsed().as_secs_f64(),
        machine: Machine::detect(&opts.version, opts.exe.parent()),
        placement: if exp.is_simulated() {
            "simulation only: no server or load generator".into()
        } else {
            placement.describe()
        },
        interrupted: stop.load(Ordering::Relaxed),
        points: records,
    };
    results.write_json(&out.path)?;
    results.write_csv(&out.path)?;
    crate::report::write(&out.path, &results, exp)?;
    // A failure here costs only the listing, not the run.
    let index = out
        .runs
        .filter(|runs| index::write(runs).is_ok_and(|w| w == index::Written::Yes));
    Ok(Finished {
        dir: out.path,
        results,
        index,
    })
}

/// What every point of a measured run shares.
struct Ctx<'a> {
    plan: &'a Plan,
    opts: &'a RunOptions,
    placement: &'a Placement,
    stop: &'a Arc<AtomicBool>,
    bar: &'a ProgressBar,
}

fn blank_record(p: &PlannedPoint) -> PointRecord {
    PointRecord {
        index: p.index,
        server: p.server_label().map(String::from),
        vars: p.vars.clone(),
        status: Status::Ok,
        reason: None,
        command: None,
        repeats: Vec::new(),
        summary: BTreeMap::new(),
        unmeasurable: BTreeMap::new(),
        predicted: BTreeMap::new(),
        exact: BTreeMap::new(),
        notes: Vec::new(),
    }
}

/// Why a point produced no figures.
#[derive(Debug)]
struct PointFailure {
    status: Status,
    reason: String,
}

impl PointFailure {
    fn failed(reason: impl Into<String>) -> PointFailure {
        PointFailure {
            status: Status::Failed,
            reason: reason.into(),
        }
    }

    fn unavailable(reason: impl Into<String>) -> PointFailure {
        PointFailure {
            status: Status::Unavailable,
            reason: reason.into(),
        }
    }

    fn interrupted() -> PointFailure {
        PointFailure {
            status: Status::Skipped,
            reason: "interrupted".into(),
        }
    }
}

/// Simulates every point of a simulated experiment.
fn simulate_all(plan: &Plan, records: &mut [PointRecord], stop: &AtomicBool, bar: &ProgressBar) {
    for (p, rec) in plan.points.iter().zip(records) {
        let Work::Simulate(model) = &p.work else {
            continue;
        };
        if stop.load(Ordering::Relaxed) {
            rec.status = Status::Skipped;
            rec.reason = Some("interrupted before this point".into());
            continue;
        }
        bar.set_message(rec.label());
        simulate_point(model, rec);
        bar.inc(1);
    }
}

/// Writes the served files, predicts, then measures every point with the load
/// generator pinned to its CPUs.
fn measure_all(
    plan: &Plan,
    opts: &RunOptions,
    placement: &Placement,
    stop: &Arc<AtomicBool>,
    bar: &ProgressBar,
    records: &mut [PointRecord],
) -> Result<()> {
    write_files(plan)?;
    // Predictions first, on every CPU, before the measurements pin this thread.
    if plan
        .points
        .iter()
        .any(|p| matches!(&p.work, Work::Measure(m) if m.predict.is_some()))
    {
        bar.set_message("simulating the predictions");
        predict(plan, records);
    }
    let original = crate::cpu::allowed_cpus();
    crate::cpu::pin_current_thread(&placement.load)
        .map_err(|e| LabError::Other(format!("pinning the load generator: {e}")))?;
    let ctx = Ctx {
        plan,
        opts,
        placement,
        stop,
        bar,
    };
    for (p, rec) in plan.points.iter().zip(records.iter_mut()) {
        let Work::Measure(m) = &p.work else {
            continue;
        };
        if stop.load(Ordering::Relaxed) {
            rec.status = Status::Skipped;
            rec.reason = Some("interrupted before this point".into());
            continue;
        }
        bar.set_message(rec.label());
        if let Err(f) = measure_point(&ctx, m, rec) {
            bar.println(format!(
                "{}: {} ({})",
                rec.label(),
                f.status.as_str(),
                f.reason
            ));
            rec.status = f.status;
            rec.reason = Some(f.reason);
            // The bar counts repeats; a point that ended early skips the rest.
            let done = rec.repeats.len() as u64;
            bar.inc(u64::from(plan.repeats).saturating_sub(done));
        }
    }
    let _ = crate::cpu::pin_current_thread(&original);
    add_model_error(records);
    Ok(())
}

/// Starts the point's server, warms it up, measures it `repeats` times and
/// summarises the repeats.
fn measure_point(ctx: &Ctx<'_>, m: &Measure, rec: &mut PointRecord) -> Result<(), PointFailure> {
    let mut srv = start_server(ctx, &m.server)?;
    rec.command = Some(srv.command.clone());
    let url = format!("http://{}{}", srv.addr, m.load.path);
    warm_up(ctx, &m.load, &url)?;
    if m.load.duration.is_some() {
        drain(srv.addr, &m.load.path);
    }
    for r in 1..=ctx.plan.repeats {
        let (report, cpu) = measure_repeat(ctx, &m.load, &url, &mut srv, r)?;
        record_repeat(rec, r, &report, cpu);
        ctx.bar.inc(1);
        if m.load.duration.is_some() {
            drain(srv.addr, &m.load.path);
        }
    }
    summarise(rec);
    srv.stop();
    Ok(())
}

/// Starts `servelab serve` with the planned flags on a free port, or a peer from
/// a configuration written into the temporary directory.
fn start_server(ctx: &Ctx<'_>, server: &Server) -> Result<ServerProcess, PointFailure> {
    let port =
        server::free_port().map_err(|e| PointFailure::failed(format!("no free port: {e}")))?;
    let tmp = &ctx.plan.tmp;
    let argv: Vec<OsString> = match server {
        Server::Servelab(args) => {
            let mut args = (**args).clone();
            args.port = Some(port);
            [ctx.opts.exe.clone().into_os_string(), "serve".into()]
                .into_iter()
                .chain(args.to_args())
                .collect()
        }
        Server::Peer(p) => {
            let exe = peer::find(*p)
                .ok_or_else(|| PointFailure::unavailable(format!("{p} is not installed")))?;
            let dir = tmp.join(format!("{p}-{port}"));
            std::fs::create_dir_all(&dir)
                .and_then(|()| peer::command(*p, &exe, &tmp.join("www"), port, &dir))
                .map_err(|e| PointFailure::failed(format!("{p} configuration: {e}")))?
        }
    };
    ServerProcess::start(&argv, port, tmp, ctx.placement, ctx.stop).map_err(|e| match e {
        StartError::Unavailable(m) => PointFailure::unavailable(m),
        StartError::Failed(m) => PointFailure::failed(m),
        StartError::Interrupted => PointFailure::interrupted(),
    })
}

/// The load of one run against `url`. A request-bounded run is also time-capped
/// so that a stuck server cannot hang the lab.
fn load_spec(
    ctx: &Ctx<'_>,
    load: &ResolvedLoad,
    url: &str,
    users: u32,
    (requests, duration): (Option<u64>, Option<Duration>),
    seed: u64,
) -> LoadSpec {
    let mut s = LoadSpec::new(vec![Target::new(url.to_string())]);
    s.workload = Workload::Closed {
        users,
        session: load.session,
        think: load.think,
    };
    s.requests = requests;
    s.duration = duration.or(Some(REPEAT_CAP));
    s.threads = ctx.placement.load.len().clamp(1, users.max(1) as usize);
    s.seed = seed;
    s.stop = Some(Arc::clone(ctx.stop));
    s
}

/// Requests whose figures are thrown away: connections, caches and the
/// scheduler settle before the first repeat.
fn warm_up(ctx: &Ctx<'_>, load: &ResolvedLoad, url: &str) -> Result<(), PointFailure> {
    let warmup = ctx.plan.warmup;
    if warmup == 0 {
        return Ok(());
    }
    let users = load
        .users
        .min(u32::try_from(warmup).unwrap_or(u32::MAX))
        .max(1);
    let spec = load_spec(
        ctx,
        load,
        url,
        users,
        (Some(warmup.max(u64::from(users))), None),
        999,
    );
    servelab_load::run(&spec)
        .map(drop)
        .map_err(|e| PointFailure::failed(format!("warm-up: {e}")))
}

/// One measured repeat (number `r`, from 1): the load generator's report and
/// the server's CPU per request, or why that CPU could not be measured.
fn measure_repeat(
    ctx: &Ctx<'_>,
    load: &ResolvedLoad,
    url: &str,
    srv: &mut ServerProcess,
    r: u32,
) -> Result<(servelab_load::Report, Result<f64, String>), PointFailure> {
    if ctx.stop.load(Ordering::Relaxed) {
        return Err(PointFailure::interrupted());
    }
    let spec = load_spec(
        ctx,
        load,
        url,
        load.users,
        (load.requests, load.duration),
        u64::from(r),
    );
    let cpu0 = CpuReading::of_tree(srv.pid());
    let report = servelab_load::run(&spec)
        .map_err(|e| PointFailure::failed(format!("repeat {r}: load: {e}")))?;
    let cpu1 = CpuReading::of_tree(srv.pid());
    if ctx.stop.load(Ordering::Relaxed) {
        return Err(PointFailure::interrupted());
    }
    if report.counts.ok == 0 {
        let died = if srv.alive() {
            String::new()
        } else {
            format!("; the server died: {}", srv.stderr_tail())
        };
        return Err(PointFailure::failed(format!(
            "repeat {r}: no request succeeded ({} errors{}){died}",
            report.counts.errors,
            error_classes(&report),
        )));
    }
    let cpu = cpu0.per_request_us(cpu1, report.counts.completed);
    Ok((report, cpu))
}

/// The figures of repeat `r` into the point's record.
fn record_repeat(
    rec: &mut PointRecord,
    r: u32,
    report: &servelab_load::Report,
    cpu: Result<f64, String>,
) {
    if report.counts.errors > 0 {
        rec.notes.push(format!(
            "repeat {r}: {} of {} requests failed{}",
            report.counts.errors,
            report.counts.completed,
            error_classes(report)
        ));
    }
    let mut m = Figures::new();
    m.insert(Metric::Throughput, report.throughput.ok_per_s);
    m.insert(Metric::MeanMs, report.latency.mean / 1000.0);
    m.insert(Metric::P50Ms, report.latency.p50 as f64 / 1000.0);
    m.insert(Metric::P99Ms, report.latency.p99 as f64 / 1000.0);
    m.insert(Metric::TotalS, report.duration_s);
    m.insert(Metric::MbPerS, report.throughput.bytes_per_s / 1e6);
    m.insert(Metric::Errors, report.counts.errors as f64);
    match cpu {
        Ok(us) => {
            m.insert(Metric::CpuUs, us);
        }
        Err(why) => {
            rec.unmeasurable
                .entry(Metric::CpuUs)
                .or_insert_with(|| format!("repeat {r}: {why}"));
        }
    }
    rec.repeats.push(m);
}

/// Waits until the server has worked off what a time-bounded repeat left behind.
///
/// A repeat that ends on time abandons the requests in flight, but a server that
/// has already accepted them still serves them (seed 002's badput): with one
/// worker and a 40 ms delay, 31 abandoned requests steal the first 1.2 s of the
/// next repeat (measured: 24.5/s in the first repeat, 9/s in the next ones). One
/// request sent now queues behind them (FIFO in the pool's queue and in the listen
/// backlog), so its answer means the server is free again.
fn drain(addr: std::net::SocketAddr, path: &str) {
    use std::io::{Read, Write};
    let Ok(mut s) = std::net::TcpStream::connect_timeout(&addr, Duration::from_secs(5)) else {
        return;
    };
    let _ = s.set_read_timeout(Some(Duration::from_secs(30)));
    let req = format!("GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n");
    if s.write_all(req.as_bytes()).is_ok() {
        let mut sink = [0u8; 16 * 1024];
        while matches!(s.read(&mut sink), Ok(n) if n > 0) {}
    }
}

fn error_classes(report: &servelab_load::Report) -> String {
    let v = serde_json::to_value(report.errors).unwrap_or_default();
    let parts: Vec<String> = v
        .as_object()
        .into_iter()
        .flatten()
        .filter(|(_, n)| n.as_u64().unwrap_or(0) > 0)
        .map(|(k, n)| format!("{k} {n}"))
        .collect();
    if parts.is_empty() {
        String::new()
    } else {
        format!(": {}", parts.join(", "))
    }
}

/// Median and range of every metric over the repeats; a metric that some repeat
/// could not measure gets no summary (see [`PointRecord::unmeasurable`]).
fn summarise(rec: &mut PointRecord) {
    let mut keys: Vec<Metric> = rec.repeats.iter().flat_map(|r| r.keys().copied()).collect();
    keys.sort();
    keys.dedup();
    for k in keys {
        if rec.unmeasurable.contains_key(&k) {
            continue;
        }
        let vals: Vec<f64> = rec
            .repeats
            .iter()
            .filter_map(|r| r.get(&k).copied())
            .collect();
        if let Some(s) = Stat::of(&vals) {
            rec.summary.insert(k, s);
        }
    }
}

/// The simulator's figures of a point (mean and 95% interval) and the exact
/// model's values and bounds.
fn sim_metrics(r: &servelab_sim::PointResult) -> (BTreeMap<Metric, Stat>, BTreeMap<Metric, f64>) {
    let mut pred = BTreeMap::new();
    if let Some(s) = &r.sim {
        let mut put = |k: Metric, e: &servelab_sim::Estimate, scale: f64| {
            pred.insert(
                k,
                Stat {
                    median: e.mean * scale,
                    min: (e.mean - e.half_width) * scale,
                    max: (e.mean + e.half_width) * scale,
                },
            );
        };
        put(Metric::Throughput, &s.throughput, 1.0);
        put(Metric::Goodput, &s.goodput, 1.0);
        put(Metric::MeanMs, &s.response_time, 1000.0);
        put(Metric::P50Ms, &s.response_p50, 1000.0);
        put(Metric::P99Ms, &s.response_p99, 1000.0);
        put(Metric::Utilisation, &s.utilisation, 100.0);
        put(Metric::DropRate, &s.drop_rate, 1.0);
        put(Metric::TimeoutRate, &s.timeout_rate, 1.0);
        put(Metric::SwitchPct, &s.switch_fraction, 100.0);
    }
    let mut exact = BTreeMap::new();
    if let Some(x) = &r.exact {
        exact.insert(Metric::Throughput, x.throughput);
        exact.insert(Metric::MeanMs, x.response_time * 1000.0);
        exact.insert(Metric::Utilisation, x.utilisation * 100.0);
        exact.insert(Metric::DropRate, x.drop_rate);
    }
    exact.insert(Metric::SaturationUsers, r.bounds.saturation_users);
    exact.insert(Metric::ThroughputMax, r.bounds.throughput_max);
    (pred, exact)
}

/// Runs the simulator at one point of a simulated experiment.
fn simulate_point(m: &Model, rec: &mut PointRecord) {
    match servelab_sim::run_point(&m.model, &m.run) {
        Ok(r) => {
            let (pred, exact) = sim_metrics(&r);
            rec.repeats
                .push(pred.iter().map(|(k, s)| (*k, s.median)).collect());
            rec.summary = pred;
            rec.exact = exact;
            if let Some(why) = &r.not_exact_because {
                rec.notes.push(format!("no exact solution: {why}"));
            }
            rec.command = Some(format!("{} replications of {:?}", m.run.reps, m.run.length));
        }
        Err(e) => {
            rec.status = Status::Failed;
            rec.reason = Some(format!("simulation: {e}"));
        }
    }
}

/// Simulates the model of every measured point (one simulation per distinct model).
fn predict(plan: &Plan, records: &mut [PointRecord]) {
    let mut models: Vec<servelab_sim::Model> = Vec::new();
    let mut which = Vec::new();
    let mut run = None;
    for p in &plan.points {
        let Work::Measure(m) = &p.work else {
            which.push(None);
            continue;
        };
        let Some(model) = &m.predict else {
            which.push(None);
            continue;
        };
        let i = models
            .iter()
            .position(|x| *x == model.model)
            .unwrap_or_else(|| {
                models.push(model.model.clone());
                models.len() - 1
            });
        which.push(Some(i));
        run = Some(model.run);
    }
    let Some(run) = run else { return };
    match servelab_sim::run_models(&models, &run) {
        Ok(results) => {
            for (rec, w) in records.iter_mut().zip(which) {
                if let Some(i) = w {
                    let (pred, exact) = sim_metrics(&results[i]);
                    rec.predicted = pred;
                    rec.exact = exact;
                    if let Some(why) = &results[i].not_exact_because {
                        rec.notes.push(format!("no exact solution: {why}"));
                    }
                }
            }
        }
        Err(e) => {
            for rec in records.iter_mut() {
                rec.notes.push(format!("prediction failed: {e}"));
            }
        }
    }
}

/// Relative error of measured throughput against the exact model, in percent.
fn add_model_error(records: &mut [PointRecord]) {
    for rec in records {
        let Some(&x) = rec.exact.get(&Metric::Throughput) else {
            continue;
        };
        if x <= 0.0 || rec.repeats.is_empty() {
            continue;
        }
        for r in &mut rec.repeats {
            if let Some(&m) = r.get(&Metric::Throughput) {
                r.insert(Metric::ErrorPct, (m - x) / x * 100.0);
            }
        }
        rec.summary.clear();
        summarise(rec);
    }
}

/// Creates the served files of the plan under `tmp/www`.
fn write_files(plan: &Plan) -> Result<()> {
    let root = plan.tmp.join("www");
    std::fs::create_dir_all(&root).map_err(|e| LabError::io(&root, e))?;
    let index = root.join("index.html");
    std::fs::write(
        &index,
        "<!doctype html><title>servelab lab</title><p>lab root</p>\n",
    )
    .map_err(|e| LabError::io(&index, e))?;
    for f in &plan.files {
        let path = root.join(&f.name);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|e| LabError::io(parent, e))?;
        }
        std::fs::write(&path, file_bytes(f.size)).map_err(|e| LabError::io(&path, e))?;
    }
    Ok(())
}

/// Printable, non-repeating-looking bytes (lines of 76), so compression or a
/// page-cache trick cannot make one size cheaper than another.
fn file_bytes(size: u64) -> Vec<u8> {
    let mut out = Vec::with_capacity(size as usize);
    let mut x: u32 = 0x9e37_79b9;
    while (out.len() as u64) < size {
        if out.len() % 76 == 75 {
            out.push(b'\n');
        } else {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            out.push(b'a' + (x % 26) as u8);
        }
    }
    out
}

fn progress_bar(show: bool, plan: &Plan, simulated: bool) -> ProgressBar {
    let points = plan.points.len() as u64;
    let total = if simulated {
        points
    } else {
        points * u64::from(plan.repeats)
    };
    let bar = ProgressBar::with_draw_target(
        Some(total),
        if show {
            ProgressDrawTarget::stderr()
        } else {
            ProgressDrawTarget::hidden()
        },
    );
    let style = ProgressStyle::with_template(
        "{elapsed_precise} [{bar:30}] {pos}/{len} {unit} ETA {eta} {msg}",
    )
    .unwrap_or_else(|_| ProgressStyle::default_bar())
    .progress_chars("=> ");
    let unit = if simulated { "points" } else { "repeats" };
    bar.set_style(style.with_key(
        "unit",
        move |_: &indicatif::ProgressState, w: &mut dyn std::fmt::Write| {
            let _ = w.write_str(unit);
        },
    ));
    bar
}

/// SIGINT and SIGTERM set the stop flag while a run is in progress (instead of
/// killing the lab and orphaning its servers); unregistered when dropped.
struct Signals(Vec<signal_hook::SigId>);

impl Signals {
    fn register(stop: &Arc<AtomicBool>) -> Result<Signals> {
        let mut ids = Vec::new();
        for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
            let id = signal_hook::flag::register(sig, Arc::clone(stop))
                .map_err(|e| LabError::Other(format!("cannot handle signal {sig}: {e}")))?;
            ids.push(id);
        }
        Ok(Signals(ids))
    }
}

impl Drop for Signals {
    fn drop(&mut self) {
        for id in self.0.drain(..) {
            signal_hook::low_level::unregister(id);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_bytes_have_the_size_asked() {
        for n in [0, 1, 75, 76, 77, 5000] {
            assert_eq!(file_bytes(n).len() as u64, n);
        }
        assert!(file_bytes(200).iter().all(|b| b.is_ascii()));
    }

    fn record(throughput: &[f64]) -> PointRecord {
        PointRecord {
            repeats: throughput
                .iter()
                .map(|v| Figures::from([(Metric::Throughput, *v), (Metric::CpuUs, 3.0)]))
                .collect(),
            exact: BTreeMap::from([(Metric::Throughput, 2.0)]),
            ..blank_record(&PlannedPoint {
                index: 0,
                vars: vec![],
                work: Work::Simulate(Box::new(Model {
                    model: servelab_sim::Model::default(),
                    run: servelab_sim::RunSpec {
                        reps: 2,
                        length: servelab_sim::Length::Requests(100),
                        warmup: servelab_sim::Warmup::Mser5,
                        seed: 1,
                    },
                })),
            })
        }
    }

    #[test]
    fn summarise_takes_median_and_range_per_metric() {
        let mut rec = record(&[1.0, 5.0, 2.0]);
        summarise(&mut rec);
        assert_eq!(
            rec.summary[&Metric::Throughput],
            Stat {
                median: 2.0,
                min: 1.0,
                max: 5.0
            }
        );
        let mut recs = [rec];
        add_model_error(&mut recs);
        assert_eq!(recs[0].summary[&Metric::ErrorPct].median, 0.0);
        assert_eq!(recs[0].summary[&Metric::ErrorPct].max, 150.0);
    }

    #[test]
    fn an_unmeasurable_metric_gets_no_summary() {
        let mut rec = record(&[1.0, 2.0]);
        rec.unmeasurable.insert(Metric::CpuUs, "too short".into());
        summarise(&mut rec);
        assert!(rec.summary.contains_key(&Metric::Throughput));
        assert!(!rec.summary.contains_key(&Metric::CpuUs));
    }

    #[test]
    fn a_run_with_no_figures_or_an_interruption_is_an_error() {
        let mut rec = record(&[1.0]);
        rec.status = Status::Failed;
        rec.server = Some("pool".into());
        rec.reason = Some("repeat 1: no request succeeded (2 errors: status 2)".into());
        let mut finished = Finished {
            dir: "out".into(),
            results: RunResults {
                schema: SCHEMA.into(),
                experiment: "t".into(),
                source_file: "t".into(),
                source: String::new(),
                command: String::new(),
                quick: true,
                repeats: 1,
                started_utc: String::new(),
                duration_s: 0.0,
                machine: Machine::detect("0", None),
                placement: String::new(),
                interrupted: false,
                points: vec![rec],
            },
            index: None,
        };
        assert!(matches!(finished.check(), Err(LabError::NoFigures(_))));
        assert_eq!(
            finished.problems(),
            ["pool: failed: repeat 1: no request succeeded (2 errors: status 2)"]
        );
        finished.results.points[0].status = Status::Ok;
        assert!(finished.check().is_ok());
        finished.results.interrupted = true;
        assert!(matches!(finished.check(), Err(LabError::Interrupted(_))));
    }
}
