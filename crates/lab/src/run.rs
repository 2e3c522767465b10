//! Running an experiment end to end: files, predictions, servers, warm-up, repeats,
//! progress, failures, Ctrl-C, and the results directory.
//!
//! Every point gets a freshly started server (so a log file or a cache from one
//! point never favours the next), a warm-up that is thrown away, then `repeats`
//! measured load runs. Servers of one axis combination are measured one after the
//! other, so slow drift of a shared machine hurts them alike. A point that fails
//! is recorded with its reason and the run goes on; Ctrl-C stops the load run in
//! progress, stops the server, and still writes what was measured.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use servelab_load::{LoadSpec, Target, Workload};

use crate::cpu::{self, Placement};
use crate::error::{LabError, Result};
use crate::experiment::{Experiment, Point, Vars};
use crate::machine::{self, Machine};
use crate::peer;
use crate::results::{PointRecord, RunResults, SCHEMA, Stat, Status};
use crate::server::{self, ServerProcess, StartError};

/// How to run an experiment.
#[derive(Debug, Clone)]
pub struct RunOptions {
    /// Shrink every sweep (`--quick`).
    pub quick: bool,
    /// Repeats per point instead of the experiment's (`--repeats`).
    pub repeats: Option<u32>,
    /// Results directory (default `results/<name>-<timestamp>`).
    pub out: Option<PathBuf>,
    /// The `servelab` binary that serves (`servelab serve`).
    pub exe: PathBuf,
    /// servelab version, for the machine record.
    pub version: String,
    /// The command line that reruns this, for the report.
    pub command: String,
    /// Show a progress bar on a terminal.
    pub progress: bool,
}

/// Where an experiment came from.
#[derive(Debug, Clone)]
pub struct Source {
    /// `builtin:NAME` or the file's path.
    pub file: String,
    /// The TOML text.
    pub text: String,
}

/// Longest a repeat bounded by a request count may take before it is cut.
const REPEAT_CAP: Duration = Duration::from_secs(120);

/// Runs an experiment and writes its results directory; returns the directory.
pub fn run(exp: &Experiment, source: &Source, opts: &RunOptions) -> Result<PathBuf> {
    let (started_utc, stamp) = machine::utc_now();
    let dir = opts
        .out
        .clone()
        .unwrap_or_else(|| PathBuf::from("results").join(format!("{}-{stamp}", exp.name())));
    std::fs::create_dir_all(&dir).map_err(|e| LabError::io(&dir, e))?;
    let tmp = TempDir::new(exp.name())?;
    let stop = Arc::new(AtomicBool::new(false));
    let signals = Signals::register(&stop)?;
    let t0 = Instant::now();
    let repeats = exp.repeats(opts.quick, opts.repeats);
    let points = exp.points(opts.quick);
    let placement = if exp.is_simulated() {
        Placement {
            server: vec![],
            load: vec![],
        }
    } else {
        Placement::plan()
    };

    let bar = progress_bar(opts.progress, points.len(), repeats, exp.is_simulated());
    let mut records: Vec<PointRecord> = points.iter().map(|p| blank_record(exp, p)).collect();

    if exp.is_simulated() {
        for (p, rec) in points.iter().zip(&mut records) {
            if stop.load(Ordering::Relaxed) {
                rec.status = Status::Skipped;
                continue;
            }
            bar.set_message(rec.label());
            simulate_point(exp, p, opts.quick, tmp.path_str(), rec);
            bar.inc(1);
        }
    } else {
        write_files(exp, &points, &tmp)?;
        // Predictions first, on every CPU, before the measurements pin this thread.
        if let Some(spec) = &exp.predict {
            bar.set_message("simulating the predictions");
            predict(exp, spec, &points, opts.quick, tmp.path_str(), &mut records);
        }
        let engines = if exp.servers.iter().any(|s| s.engine.is_some()) {
            server::engines(&opts.exe)
        } else {
            Vec::new()
        };
        let original = cpu::allowed_cpus();
        cpu::pin_current_thread(&placement.load)
            .map_err(|e| LabError::Other(format!("pinning the load generator: {e}")))?;
        let ctx = Ctx {
            exp,
            opts,
            tmp: &tmp,
            placement: &placement,
            stop: &stop,
            engines: &engines,
            repeats,
            warmup: exp.warmup(opts.quick),
            bar: &bar,
        };
        for (p, rec) in points.iter().zip(&mut records) {
            if stop.load(Ordering::Relaxed) {
                rec.status = Status::Skipped;
                rec.reason = Some("interrupted before this point".into());
                continue;
            }
            bar.set_message(rec.label());
            measure_point(&ctx, p, rec);
            if rec.status != Status::Ok {
                bar.println(format!(
                    "{}: {} ({})",
                    rec.label(),
                    rec.status.as_str(),
                    rec.reason.as_deref().unwrap_or("")
                ));
                // The bar counts repeats; a point that ended early skips the rest.
                let done = rec.repeats.len() as u64;
                bar.inc(u64::from(repeats).saturating_sub(done));
            }
        }
        let _ = cpu::pin_current_thread(&original);
        add_model_error(&mut records);
    }
    bar.finish_and_clear();
    drop(signals);

    let interrupted = stop.load(Ordering::Relaxed);
    let results = RunResults {
        schema: SCHEMA.into(),
        experiment: exp.name().into(),
        source_file: source.file.clone(),
        source: source.text.clone(),
        command: opts.command.clone(),
        quick: opts.quick,
        repeats,
        started_utc,
        duration_s: t0.elapsed().as_secs_f64(),
        machine: Machine::detect(&opts.version, opts.exe.parent()),
        placement: if exp.is_simulated() {
            "simulation only: no server or load generator".into()
        } else {
            placement.describe()
        },
        interrupted,
        points: records,
    };
    results.write_json(&dir)?;
    results.write_csv(&dir)?;
    crate::report::write(&dir, &results, exp)?;
    if let Some(parent) = dir.parent().filter(|p| !p.as_os_str().is_empty()) {
        // A failure here costs only the listing, not the run.
        let _ = crate::report::write_index(parent);
    }
    if interrupted {
        return Err(LabError::Interrupted(dir));
    }
    Ok(dir)
}

struct Ctx<'a> {
    exp: &'a Experiment,
    opts: &'a RunOptions,
    tmp: &'a TempDir,
    placement: &'a Placement,
    stop: &'a Arc<AtomicBool>,
    engines: &'a [String],
    repeats: u32,
    warmup: u64,
    bar: &'a ProgressBar,
}

fn blank_record(exp: &Experiment, p: &Point) -> PointRecord {
    PointRecord {
        index: p.index,
        server: p.server.map(|s| exp.servers[s].label.get_ref().clone()),
        vars: p.vars.clone(),
        status: Status::Ok,
        reason: None,
        command: None,
        repeats: Vec::new(),
        summary: BTreeMap::new(),
        predicted: BTreeMap::new(),
        exact: BTreeMap::new(),
        notes: Vec::new(),
    }
}

fn fail(rec: &mut PointRecord, status: Status, reason: String) {
    rec.status = status;
    rec.reason = Some(reason);
}

/// Starts the point's server, warms it up and measures it `repeats` times.
fn measure_point(ctx: &Ctx<'_>, p: &Point, rec: &mut PointRecord) {
    let exp = ctx.exp;
    let spec = &exp.servers[p.server.expect("measured points have a server")];
    let vars = Vars {
        point: &p.vars,
        tmp: ctx.tmp.path_str(),
    };
    // The file was validated for every point; these cannot fail, but a clear
    // failure beats a panic if they ever do.
    let load = match exp.resolve_load(&vars, ctx.opts.quick) {
        Ok(l) => l,
        Err((_, m)) => return fail(rec, Status::Failed, m),
    };
    let args = match exp.resolve_args(spec, &vars) {
        Ok(a) => a,
        Err((_, m)) => return fail(rec, Status::Failed, m),
    };
    let port = match server::free_port() {
        Ok(p) => p,
        Err(e) => return fail(rec, Status::Failed, format!("no free port: {e}")),
    };
    let root = ctx.tmp.root();
    let argv: Vec<String> = if let Some(engine) = &spec.engine {
        let engine = engine.get_ref();
        if !ctx.engines.iter().any(|e| e == engine) {
            return fail(
                rec,
                Status::Unavailable,
                format!(
                    "engine `{engine}` is not in this build (`servelab engines` lists {})",
                    ctx.engines.join(", ")
                ),
            );
        }
        let mut v: Vec<String> = vec![
            ctx.opts.exe.display().to_string(),
            "serve".into(),
            "--root".into(),
            root.display().to_string(),
            "--port".into(),
            port.to_string(),
            "--engine".into(),
            engine.clone(),
        ];
        if !args.iter().any(|a| a == "--log") {
            v.extend(["--log".into(), "off".into()]);
        }
        v.extend(args);
        v
    } else {
        let name = spec
            .peer
            .as_ref()
            .expect("validated: engine or peer")
            .get_ref();
        let Some(exe) = peer::find(name) else {
            return fail(rec, Status::Unavailable, format!("{name} is not installed"));
        };
        let dir = ctx.tmp.path().join(format!("{name}-{port}"));
        let made = std::fs::create_dir_all(&dir)
            .and_then(|()| peer::command(name, &exe, &root, port, &dir));
        match made {
            Ok(v) => v,
            Err(e) => return fail(rec, Status::Failed, format!("{name} configuration: {e}")),
        }
    };
    let mut srv = match ServerProcess::start(&argv, port, ctx.tmp.path(), ctx.placement, ctx.stop) {
        Ok(s) => s,
        Err(StartError::Unavailable(m)) => return fail(rec, Status::Unavailable, m),
        Err(StartError::Failed(m)) => return fail(rec, Status::Failed, m),
        Err(StartError::Interrupted) => return fail(rec, Status::Skipped, "interrupted".into()),
    };
    rec.command = Some(srv.command.clone());
    let url = format!("http://{}{}", srv.addr, load.path);
    let threads = ctx.placement.load.len().max(1).min(load.users as usize);
    let make_spec = |users: u32, requests: Option<u64>, duration: Option<Duration>, seed: u64| {
        let mut s = LoadSpec::new(vec![Target::new(url.clone())]);
        s.workload = Workload::Closed {
            users,
            session: load.session,
            think: load.think,
        };
        s.requests = requests;
        // A request-bounded repeat is also time-capped so that a stuck server
        // cannot hang the run.
        s.duration = duration.or(Some(REPEAT_CAP));
        s.threads = threads.min(users as usize).max(1);
        s.seed = seed;
        s.stop = Some(Arc::clone(ctx.stop));
        s
    };
    if ctx.warmup > 0 {
        let users = load
            .users
            .min(u32::try_from(ctx.warmup).unwrap_or(u32::MAX))
            .max(1);
        let warm = make_spec(users, Some(ctx.warmup.max(u64::from(users))), None, 999);
        if let Err(e) = servelab_load::run(&warm) {
            return fail(rec, Status::Failed, format!("warm-up: {e}"));
        }
    }
    if load.duration.is_some() {
        drain(srv.addr, &load.path);
    }
    for r in 0..ctx.repeats {
        if ctx.stop.load(Ordering::Relaxed) {
            return fail(rec, Status::Skipped, "interrupted".into());
        }
        let spec = make_spec(load.users, load.requests, load.duration, 1 + u64::from(r));
        let cpu0 = cpu::tree_cpu_seconds(srv.pid());
        let report = match servelab_load::run(&spec) {
            Ok(rep) => rep,
            Err(e) => return fail(rec, Status::Failed, format!("repeat {}: load: {e}", r + 1)),
        };
        let cpu1 = cpu::tree_cpu_seconds(srv.pid());
        if ctx.stop.load(Ordering::Relaxed) {
            return fail(rec, Status::Skipped, "interrupted".into());
        }
        if report.counts.ok == 0 {
            let alive = srv.alive();
            return fail(
                rec,
                Status::Failed,
                format!(
                    "repeat {}: no request succeeded ({} errors{}){}",
                    r + 1,
                    report.counts.errors,
                    error_classes(&report),
                    if alive {
                        String::new()
                    } else {
                        format!("; the server died: {}", srv.stderr_tail())
                    }
                ),
            );
        }
        if report.counts.errors > 0 {
            rec.notes.push(format!(
                "repeat {}: {} of {} requests failed{}",
                r + 1,
                report.counts.errors,
                report.counts.completed,
                error_classes(&report)
            ));
        }
        let mut m = BTreeMap::new();
        m.insert("throughput".into(), report.throughput.ok_per_s);
        m.insert("mean_ms".into(), report.latency.mean / 1000.0);
        m.insert("p50_ms".into(), report.latency.p50 as f64 / 1000.0);
        m.insert("p99_ms".into(), report.latency.p99 as f64 / 1000.0);
        m.insert("total_s".into(), report.duration_s);
        m.insert("mb_per_s".into(), report.throughput.bytes_per_s / 1e6);
        m.insert("errors".into(), report.counts.errors as f64);
        if report.counts.completed > 0 {
            m.insert(
                "cpu_us".into(),
                (cpu1 - cpu0).max(0.0) / report.counts.completed as f64 * 1e6,
            );
        }
        rec.repeats.push(m);
        ctx.bar.inc(1);
        if load.duration.is_some() {
            drain(srv.addr, &load.path);
        }
    }
    summarise(rec);
    srv.stop();
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

/// Median and range of every metric over the repeats.
fn summarise(rec: &mut PointRecord) {
    let mut keys: Vec<String> = rec.repeats.iter().flat_map(|r| r.keys().cloned()).collect();
    keys.sort();
    keys.dedup();
    for k in keys {
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

/// Sim metrics of a point result as (name, mean, half-width).
fn sim_metrics(r: &servelab_sim::PointResult) -> (BTreeMap<String, Stat>, BTreeMap<String, f64>) {
    let mut pred = BTreeMap::new();
    if let Some(s) = &r.sim {
        let mut put = |k: &str, e: &servelab_sim::Estimate, scale: f64| {
            pred.insert(
                k.to_string(),
                Stat {
                    median: e.mean * scale,
                    min: (e.mean - e.half_width) * scale,
                    max: (e.mean + e.half_width) * scale,
                },
            );
        };
        put("throughput", &s.throughput, 1.0);
        put("goodput", &s.goodput, 1.0);
        put("mean_ms", &s.attempt_response_time, 1000.0);
        put("p50_ms", &s.attempt_p50, 1000.0);
        put("p99_ms", &s.attempt_p99, 1000.0);
        put("utilisation", &s.utilisation, 100.0);
        put("drop_rate", &s.drop_rate, 1.0);
        put("timeout_rate", &s.timeout_rate, 1.0);
        put("switch_pct", &s.switch_fraction, 100.0);
    }
    let mut exact = BTreeMap::new();
    if let Some(x) = &r.exact {
        exact.insert("throughput".into(), x.throughput);
        exact.insert("mean_ms".into(), x.response_time * 1000.0);
        exact.insert("utilisation".into(), x.utilisation * 100.0);
        exact.insert("drop_rate".into(), x.drop_rate);
    }
    exact.insert("saturation_users".into(), r.bounds.saturation_users);
    exact.insert("throughput_max".into(), r.bounds.throughput_max);
    (pred, exact)
}

fn simulate_point(exp: &Experiment, p: &Point, quick: bool, tmp: &str, rec: &mut PointRecord) {
    let spec = exp.simulate.as_ref().expect("simulated experiment");
    let vars = Vars {
        point: &p.vars,
        tmp,
    };
    let (model, run) = match exp.resolve_model(spec, &vars, quick) {
        Ok(x) => x,
        Err((_, m)) => return fail(rec, Status::Failed, m),
    };
    match servelab_sim::run_point(&model, &run) {
        Ok(r) => {
            let (pred, exact) = sim_metrics(&r);
            rec.repeats
                .push(pred.iter().map(|(k, s)| (k.clone(), s.median)).collect());
            rec.summary = pred;
            rec.exact = exact;
            if let Some(why) = &r.not_exact_because {
                rec.notes.push(format!("no exact solution: {why}"));
            }
            rec.command = Some(format!("{} replications of {:?}", run.reps, run.length));
        }
        Err(e) => fail(rec, Status::Failed, format!("simulation: {e}")),
    }
}

/// Simulates the model of every measured point (one simulation per distinct model).
fn predict(
    exp: &Experiment,
    spec: &crate::experiment::ModelSpec,
    points: &[Point],
    quick: bool,
    tmp: &str,
    records: &mut [PointRecord],
) {
    let mut models = Vec::new();
    let mut which = Vec::new();
    let mut run = None;
    for p in points {
        let vars = Vars {
            point: &p.vars,
            tmp,
        };
        match exp.resolve_model(spec, &vars, quick) {
            Ok((m, r)) => {
                let i = models.iter().position(|x| *x == m).unwrap_or_else(|| {
                    models.push(m);
                    models.len() - 1
                });
                which.push(Some(i));
                run = Some(r);
            }
            Err((_, msg)) => {
                records[p.index].notes.push(format!("no prediction: {msg}"));
                which.push(None);
            }
        }
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
        let Some(&x) = rec.exact.get("throughput") else {
            continue;
        };
        if x <= 0.0 || rec.repeats.is_empty() {
            continue;
        }
        for r in &mut rec.repeats {
            if let Some(&m) = r.get("throughput") {
                r.insert("error_pct".into(), (m - x) / x * 100.0);
            }
        }
        rec.summary.clear();
        summarise(rec);
    }
}

/// Creates the served files of every point.
fn write_files(exp: &Experiment, points: &[Point], tmp: &TempDir) -> Result<()> {
    let root = tmp.root();
    std::fs::create_dir_all(&root).map_err(|e| LabError::io(&root, e))?;
    let index = root.join("index.html");
    std::fs::write(
        &index,
        "<!doctype html><title>servelab lab</title><p>lab root</p>\n",
    )
    .map_err(|e| LabError::io(&index, e))?;
    let mut done = std::collections::BTreeSet::new();
    for p in points {
        let vars = Vars {
            point: &p.vars,
            tmp: tmp.path_str(),
        };
        let files = exp
            .resolve_files(&vars)
            .map_err(|(_, m)| LabError::Other(m))?;
        for (name, size) in files {
            if !done.insert(name.clone()) {
                continue;
            }
            let path = root.join(&name);
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent).map_err(|e| LabError::io(parent, e))?;
            }
            std::fs::write(&path, file_bytes(size)).map_err(|e| LabError::io(&path, e))?;
        }
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

fn progress_bar(show: bool, points: usize, repeats: u32, simulated: bool) -> ProgressBar {
    let total = if simulated {
        points as u64
    } else {
        points as u64 * u64::from(repeats)
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

/// The run's temporary directory: served files, server logs, peer configs. Removed
/// when the run ends, however it ends.
struct TempDir {
    path: PathBuf,
    text: String,
}

impl TempDir {
    fn new(name: &str) -> Result<TempDir> {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let path = std::env::temp_dir().join(format!(
            "servelab-lab-{name}-{}-{nanos}",
            std::process::id()
        ));
        std::fs::create_dir_all(&path).map_err(|e| LabError::io(&path, e))?;
        // Peers that drop privileges (h2o as root) must still read the files.
        let _ =
            std::fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o755));
        let text = path.display().to_string();
        Ok(TempDir { path, text })
    }

    fn path(&self) -> &Path {
        &self.path
    }

    fn path_str(&self) -> &str {
        &self.text
    }

    fn root(&self) -> PathBuf {
        self.path.join("www")
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
    }
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

    #[test]
    fn summarise_takes_median_and_range_per_metric() {
        let mut rec = PointRecord {
            index: 0,
            server: None,
            vars: vec![],
            status: Status::Ok,
            reason: None,
            command: None,
            repeats: [1.0, 5.0, 2.0]
                .iter()
                .map(|v| BTreeMap::from([("throughput".to_string(), *v)]))
                .collect(),
            summary: BTreeMap::new(),
            predicted: BTreeMap::new(),
            exact: BTreeMap::from([("throughput".to_string(), 2.0)]),
            notes: vec![],
        };
        summarise(&mut rec);
        assert_eq!(
            rec.summary["throughput"],
            Stat {
                median: 2.0,
                min: 1.0,
                max: 5.0
            }
        );
        add_model_error(&mut [rec.clone()]);
        let mut recs = [rec];
        add_model_error(&mut recs);
        assert_eq!(recs[0].summary["error_pct"].median, 0.0);
        assert_eq!(recs[0].summary["error_pct"].max, 150.0);
    }
}
