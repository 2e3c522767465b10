//! A measured point, step by step: start its server, warm it up, measure each
//! repeat, record the figures. Each step returns a [`PointFailure`] that says
//! how the point ended when it cannot go on; the run records it and moves on.
//!
//! A [`PointRun`] is one server measuring one point; an [`Arm`] is the binary
//! and records of one side of a run. `lab run` measures with one arm; `lab ab`
//! with two, which at each point start a server each and alternate repeats in
//! the order `ab.rs` gives, through the same loop ([`measure_point`]).

use std::ffi::OsString;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use indicatif::ProgressBar;
use servelab_load::LoadSpec;

use super::counters::{self, Wire};
use super::record::{error_classes, failures, record_repeat, record_tls};
use super::simulate::{add_model_error, predict};
use crate::error::{LabError, Result};
use crate::experiment::{Measure, Plan, PointTls, ResolvedLoad, Server, Work};
use crate::process::cpu::{CpuReading, Placement};
use crate::process::others::MachineReading;
use crate::process::peer;
use crate::process::server::{self, ServerProcess, StartError};
use crate::protocol::{Stopped, Window};
use crate::store::results::{Figures, PointRecord, Status};

/// What every point of a measured run shares, whichever arm measures it.
struct Ctx<'a> {
    plan: &'a Plan,
    placement: &'a Placement,
    stop: &'a Arc<AtomicBool>,
    bar: &'a ProgressBar,
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

/// One arm of a measured run: the `servelab` binary whose servers it starts,
/// its records, and when its servers and repeats began. `lab run` measures
/// with one arm; `lab ab` with two (sides A and B), whose servers at a point
/// run side by side while their repeats alternate.
pub(super) struct Arm<'a> {
    /// The `servelab` binary that serves this arm's points.
    exe: &'a Path,
    /// One record per planned point.
    pub(super) records: Vec<PointRecord>,
    /// One entry per planned point: what happened when.
    pub(super) times: Vec<PointTimes>,
    /// Time spent starting, warming up, measuring and stopping this arm's
    /// servers.
    pub(super) busy: Duration,
}

impl<'a> Arm<'a> {
    /// An arm served by `exe`, with the planned records of `plan`.
    pub(super) fn new(exe: &'a Path, plan: &Plan) -> Arm<'a> {
        Arm {
            exe,
            records: plan.points.iter().map(PointRecord::planned).collect(),
            times: Vec::with_capacity(plan.points.len()),
            busy: Duration::ZERO,
        }
    }
}

/// When one arm began a point (its server's start, or when it skipped the
/// point), its server's process id, and when each of its measured repeats
/// began: the order as it happened.
#[derive(Debug, Clone)]
pub(super) struct PointTimes {
    /// When the arm began the point.
    pub(super) started: Instant,
    /// The server's process id, when it started.
    pub(super) pid: Option<u32>,
    /// When each measured repeat began, in order.
    pub(super) repeats: Vec<Instant>,
}

/// The arms (indices into the run's arms) in the order in which they measure
/// repeat `r` (from 1) of point `i`. The order of repeat 1 is also the order
/// in which they start their servers and warm them up.
pub(super) type Order<'o> = &'o dyn Fn(usize, u32) -> Vec<usize>;

/// Predicts, then measures every point with the load generator pinned to its
/// CPUs, with every arm in `arms`; see [`measure_point`].
pub(super) fn measure_all(
    plan: &Plan,
    arms: &mut [Arm<'_>],
    order: Order<'_>,
    placement: &Placement,
    stop: &Arc<AtomicBool>,
    bar: &ProgressBar,
) -> Result<()> {
    // Predictions first, on every CPU, before the measurements pin this thread.
    if plan
        .points
        .iter()
        .any(|p| matches!(&p.work, Work::Measure(m) if m.predict.is_some()))
    {
        bar.set_message("simulating the predictions");
        for arm in arms.iter_mut() {
            predict(plan, &mut arm.records);
        }
    }
    let original = crate::process::cpu::allowed_cpus();
    crate::process::cpu::pin_current_thread(&placement.load)
        .map_err(|e| LabError::Other(format!("pinning the load generator: {e}")))?;
    let ctx = Ctx {
        plan,
        placement,
        stop,
        bar,
    };
    for (i, p) in plan.points.iter().enumerate() {
        for arm in arms.iter_mut() {
            arm.times.push(PointTimes {
                started: Instant::now(),
                pid: None,
                repeats: Vec::new(),
            });
        }
        let Work::Measure(m) = &p.work else {
            continue;
        };
        if stop.load(Ordering::Relaxed) {
            for arm in arms.iter_mut() {
                let rec = &mut arm.records[i];
                rec.status = Status::Skipped;
                rec.reason = Some("interrupted before this point".into());
            }
            continue;
        }
        if let Some(arm) = arms.first() {
            bar.set_message(arm.records[i].label());
        }
        measure_point(&ctx, arms, order, i, m);
    }
    let _ = crate::process::cpu::pin_current_thread(&original);
    for arm in arms.iter_mut() {
        add_model_error(&mut arm.records);
    }
    Ok(())
}

/// Measures point `i` with every arm. Each arm starts its server and warms it
/// up, in the order of the first repeat; then, round after round, every arm
/// still measuring takes one repeat, in `order`, until the protocol stops all
/// of them at the same count (so that every arm has as many repeats), or the
/// cap does. Each arm then summarises its repeats, checks the point and stops
/// its server. An arm whose point fails records why and stops its server at
/// once; the others go on without it, and their records say so.
fn measure_point(ctx: &Ctx<'_>, arms: &mut [Arm<'_>], order: Order<'_>, i: usize, m: &Measure) {
    let mut runs: Vec<Option<PointRun<'_>>> = arms.iter().map(|_| None).collect();
    let mut failed = Vec::new();
    for k in order(i, 1) {
        let arm = &mut arms[k];
        let t0 = Instant::now();
        arm.times[i].started = t0;
        match PointRun::start(ctx, arm.exe, m, &mut arm.records[i]) {
            Ok(run) => {
                arm.times[i].pid = Some(run.srv.pid());
                runs[k] = Some(run);
            }
            Err(f) => failed.push(fail(ctx, &mut arm.records[i], f)),
        }
        arm.busy += t0.elapsed();
    }
    note_alone(arms, &runs, i, &failed, "did not start", "every repeat was");
    let mut r = 0;
    while runs.iter().any(Option::is_some) {
        r += 1;
        let mut failed = Vec::new();
        for k in order(i, r) {
            let Some(run) = runs[k].as_mut() else {
                continue;
            };
            let arm = &mut arms[k];
            let t0 = Instant::now();
            arm.times[i].repeats.push(t0);
            if let Err(f) = run.repeat(ctx, &mut arm.records[i]) {
                // Dropping the run stops its server now.
                runs[k] = None;
                failed.push(fail(ctx, &mut arm.records[i], f));
            }
            arm.busy += t0.elapsed();
        }
        note_alone(
            arms,
            &runs,
            i,
            &failed,
            &format!("ended at its repeat {r}"),
            "the later repeats were",
        );
        // Per arm: `None` when it no longer measures, `Some(None)` when it
        // needs another repeat.
        let decided: Vec<Option<Option<Stopped>>> = runs
            .iter()
            .zip(arms.iter())
            .map(|(run, arm)| {
                run.as_ref()
                    .map(|run| run.decide(ctx.plan, &arm.records[i]))
            })
            .collect();
        if decided.iter().flatten().all(Option::is_some) {
            // Every arm still measuring is done at this count.
            for ((run, arm), stopped) in runs.iter_mut().zip(arms.iter_mut()).zip(decided) {
                if let (Some(run), Some(Some(stopped))) = (run.take(), stopped) {
                    let t0 = Instant::now();
                    run.finish(ctx, &mut arm.records[i], stopped);
                    arm.busy += t0.elapsed();
                }
            }
        }
    }
}

/// Records a point's failure, and returns its status for the other arms'
/// notes.
fn fail(ctx: &Ctx<'_>, rec: &mut PointRecord, f: PointFailure) -> Status {
    ctx.bar.println(format!(
        "{}: {} ({})",
        rec.label(),
        f.status.as_str(),
        f.reason
    ));
    rec.status = f.status;
    rec.reason = Some(f.reason);
    // The bar counts the fewest repeats; a point that ended early skips the
    // rest.
    let done = rec.repeats.len() as u64;
    ctx.bar
        .inc(u64::from(ctx.plan.repeats).saturating_sub(done));
    rec.checks = crate::check::of_point(&rec.windows, ctx.plan.quick);
    f.status
}

/// Notes on the record of every arm still measuring point `i` that another
/// arm's point ended (`what`, with the statuses in `failed`), and that
/// `which` of its repeats were measured without that arm. An interruption
/// needs no note: it stops every arm.
fn note_alone(
    arms: &mut [Arm<'_>],
    runs: &[Option<PointRun<'_>>],
    i: usize,
    failed: &[Status],
    what: &str,
    which: &str,
) {
    if !failed.iter().any(|s| *s != Status::Skipped) {
        return;
    }
    let statuses: Vec<&str> = failed.iter().map(|s| s.as_str()).collect();
    for (arm, run) in arms.iter_mut().zip(runs) {
        if run.is_some() {
            arm.records[i].notes.push(format!(
                "the other side of the pair {what} ({}): {which} measured without it",
                statuses.join(", ")
            ));
        }
    }
}

/// A point measured by one server: [`start`](PointRun::start) it, measure
/// [`repeat`](PointRun::repeat)s until [`decide`](PointRun::decide) says
/// enough, then [`finish`](PointRun::finish). Dropping it stops the server.
struct PointRun<'m> {
    m: &'m Measure,
    srv: ServerProcess,
    url: String,
    wire: Wire,
    /// Whether the server is drained after the warm-up and each repeat.
    drains: bool,
    /// Whether the server's counters are read, and if so whether it finishes
    /// abandoned requests.
    counted: Option<bool>,
    /// Repeats measured so far.
    r: u32,
}

impl<'m> PointRun<'m> {
    /// Starts the point's server with `exe` (a peer starts its own), warms it
    /// up and drains it.
    fn start(
        ctx: &Ctx<'_>,
        exe: &Path,
        m: &'m Measure,
        rec: &mut PointRecord,
    ) -> Result<PointRun<'m>, PointFailure> {
        let srv = start_server(ctx, exe, &m.server, m.tls.is_some())?;
        rec.command = Some(srv.command.clone());
        let (url, wire) = match &m.tls {
            None => (format!("http://{}{}", srv.addr, m.load.path), Wire::plain()),
            Some(tls) => {
                rec.notes.push(format!(
                    "{}; sessions {}",
                    tls.trust.describe(),
                    if tls.resume {
                        "resumed (load --tls-resume on)"
                    } else {
                        "not resumed: a full handshake per connection (load --tls-resume off)"
                    }
                ));
                let wire = Wire::tls(&tls.trust)
                    .map_err(|e| PointFailure::failed(format!("TLS client: {e}")))?;
                (format!("https://{}{}", srv.addr, m.load.path), wire)
            }
        };
        if m.load.protocol.is_h2() {
            rec.notes.push(format!(
                "{}: {} connections carry {} closed users (load --h2 --streams)",
                m.load.describe_protocol(),
                m.load.connections(),
                m.load.users()
            ));
        }
        let run = PointRun {
            m,
            srv,
            url,
            wire,
            // With client timeouts the backlog a run leaves behind is part of
            // the overloaded state being measured: draining it would restart
            // every repeat from an empty server, and a collapse takes seconds
            // to come back.
            drains: !m.load.times_out(),
            counted: match &m.server {
                Server::Servelab(a) if a.status => Some(finishes(a)),
                _ => None,
            },
            r: 0,
        };
        warm_up(ctx, &run.load())?;
        run.drain();
        Ok(run)
    }

    /// The point's load, sent to this server.
    fn load(&self) -> Load<'_> {
        Load {
            spec: &self.m.load,
            url: &self.url,
            tls: self.m.tls.as_ref(),
        }
    }

    /// Waits for the server to work off what the last run left behind, when
    /// the point drains.
    fn drain(&self) {
        if self.drains {
            drain(self.srv.addr, &self.wire, &self.m.load.path);
        }
    }

    /// Measures the next repeat and records it into `rec`.
    fn repeat(&mut self, ctx: &Ctx<'_>, rec: &mut PointRecord) -> Result<(), PointFailure> {
        self.r += 1;
        let r = self.r;
        let load = &self.m.load;
        let reader = self
            .counted
            .map(|finish| spawn_reader(self.srv.addr, self.wire.clone(), load.duration, finish));
        let l = Load {
            spec: load,
            url: &self.url,
            tls: self.m.tls.as_ref(),
        };
        let Repeat {
            report,
            server_cpu_s: cpu,
            others_cpu_s: others,
        } = measure_repeat(ctx, &l, &mut self.srv, r)?;
        let server_rates = reader.map(|h| {
            h.join()
                .unwrap_or_else(|_| Err("the counter reader panicked".into()))
        });
        record_repeat(rec, r, &report, cpu, server_rates);
        let allowed = report.h2.as_ref().and_then(|h| h.server_max_streams);
        if let Some(note) = stream_limit(load.protocol.streams(), allowed)
            && !rec.notes.contains(&note)
        {
            rec.notes.push(note);
        }
        if self.wire.is_tls() {
            record_tls(rec, r, &report);
        }
        rec.windows.push(Window {
            others_cpu_s: others,
            ..Window::of(&report, load.users(), load.think_s())
        });
        if r <= ctx.plan.repeats {
            ctx.bar.inc(1);
        } else {
            // A repeat beyond the fewest: the bar grows with it.
            ctx.bar.inc_length(1);
            ctx.bar.inc(1);
        }
        self.drain();
        Ok(())
    }

    /// Whether the headline metric of `rec`'s repeats is known to the plan's
    /// precision (or the cap is reached): `Some` when no repeat is needed.
    fn decide(&self, plan: &Plan, rec: &PointRecord) -> Option<Stopped> {
        let headline: Vec<Option<f64>> = rec
            .repeats
            .iter()
            .map(|f| {
                f.get(&plan.headline)
                    .copied()
                    .filter(|_| !rec.unmeasurable.contains_key(&plan.headline))
            })
            .collect();
        crate::protocol::decide(&headline, plan.repeats, plan.max_repeats, plan.precision)
    }

    /// Summarises the repeats, checks the point and stops the server.
    fn finish(mut self, ctx: &Ctx<'_>, rec: &mut PointRecord, stopped: Stopped) {
        rec.stopped = Some(stopped);
        rec.summarise();
        rec.checks = crate::check::of_point(&rec.windows, ctx.plan.quick);
        let work_us = match &self.m.server {
            crate::experiment::Server::Servelab(args) => args.work.map(|w| w.mean() * 1e6),
            crate::experiment::Server::Peer(_) => None,
        };
        rec.checks
            .extend(crate::check::cpu_per_request(rec, work_us));
        self.srv.stop();
    }
}

/// Starts `servelab serve` with the planned flags on a free port, or a peer from
/// a configuration written into the temporary directory.
/// A peer with `tls` serves HTTPS with the run's one certificate
/// ([`peer::certificate`]), made by the first point that needs it. `exe` is
/// the `servelab` binary that serves.
fn start_server(
    ctx: &Ctx<'_>,
    exe: &Path,
    server: &Server,
    tls: bool,
) -> Result<ServerProcess, PointFailure> {
    let port =
        server::free_port().map_err(|e| PointFailure::failed(format!("no free port: {e}")))?;
    let tmp = &ctx.plan.tmp;
    let argv: Vec<OsString> = match server {
        Server::Servelab(args) => {
            // An engine that needs what this kernel refuses (uring without
            // io_uring) is not here, as a peer that is not installed.
            args.engine
                .available()
                .map_err(|u| PointFailure::unavailable(u.to_string()))?;
            let mut args = (**args).clone();
            args.port = Some(port);
            [exe.as_os_str().to_owned(), "serve".into()]
                .into_iter()
                .chain(args.to_args())
                .collect()
        }
        Server::Peer(p) => {
            let exe = peer::find(*p)
                .ok_or_else(|| PointFailure::unavailable(format!("{p} is not installed")))?;
            let dir = tmp.join(format!("{p}-{port}"));
            let cert = tls
                .then(|| peer::certificate(tmp))
                .transpose()
                .map_err(|e| PointFailure::failed(format!("the run's TLS certificate: {e}")))?;
            std::fs::create_dir_all(&dir)
                .and_then(|()| peer::command(*p, &exe, &tmp.join("www"), port, &dir, cert.as_ref()))
                .map_err(|e| PointFailure::failed(format!("{p} configuration: {e}")))?
        }
    };
    ServerProcess::start(&argv, port, tmp, ctx.placement, ctx.stop).map_err(|e| match e {
        StartError::Unavailable(m) => PointFailure::unavailable(m),
        StartError::Failed(m) => PointFailure::failed(m),
        StartError::Interrupted => PointFailure::interrupted(),
    })
}

/// What a point must say when the server allows fewer streams per
/// connection (`allowed`, its SETTINGS_MAX_CONCURRENT_STREAMS) than the load
/// asks for: the extra requests wait at their connection for a stream (`load`
/// counts them in `waited_for_stream`), so fewer requests are in flight at the
/// server than the point is labelled with.
fn stream_limit(asked: u32, allowed: Option<u32>) -> Option<String> {
    let allowed = allowed?;
    (allowed < asked).then(|| {
        format!(
            "the server allows {allowed} concurrent streams per connection (its \
             SETTINGS_MAX_CONCURRENT_STREAMS), fewer than the {asked} asked: the others \
             waited at their connection"
        )
    })
}

/// The point's load, where it is sent, and how over TLS.
struct Load<'a> {
    spec: &'a ResolvedLoad,
    url: &'a str,
    tls: Option<&'a PointTls>,
}

/// The load of one run of `duration`: the point's settings (closed users,
/// sessions, think, timeouts, protocol), over TLS with the point's trust and
/// resumption when the server serves TLS, on the load's CPUs.
fn load_spec(
    ctx: &Ctx<'_>,
    l: &Load<'_>,
    duration: Duration,
    seed: u64,
) -> Result<LoadSpec, PointFailure> {
    let load = l.spec;
    // Checked when the point was planned: an error here is a bug, said as a
    // failed point rather than a panic.
    let mut s = load
        .spec(l.url, duration)
        .map_err(|e| PointFailure::failed(format!("load: {e}")))?;
    if let Some(tls) = l.tls {
        s.tls = tls.trust.tls_options(tls.resume);
    }
    s.threads = ctx
        .placement
        .load
        .len()
        .clamp(1, load.connections().max(1) as usize);
    s.seed = seed;
    s.stop = Some(Arc::clone(ctx.stop));
    Ok(s)
}

/// The point's whole load for its warm-up time, thrown away: connections,
/// caches, the scheduler and any overloaded state settle before the first
/// repeat.
fn warm_up(ctx: &Ctx<'_>, load: &Load<'_>) -> Result<(), PointFailure> {
    let spec = load_spec(ctx, load, load.spec.warmup, 999)?;
    servelab_load::run(&spec)
        .map(drop)
        .map_err(|e| PointFailure::failed(format!("warm-up: {e}")))
}

/// What one repeat measured.
struct Repeat {
    /// The load generator's report.
    report: servelab_load::Report,
    /// The server's CPU seconds over it, or why they could not be measured.
    server_cpu_s: Result<f64, String>,
    /// CPU seconds other processes used on the machine meanwhile (`None`
    /// where that cannot be read, or the server's CPU was not).
    others_cpu_s: Option<f64>,
}

/// One measured repeat (number `r`, from 1).
fn measure_repeat(
    ctx: &Ctx<'_>,
    l: &Load<'_>,
    srv: &mut ServerProcess,
    r: u32,
) -> Result<Repeat, PointFailure> {
    if ctx.stop.load(Ordering::Relaxed) {
        return Err(PointFailure::interrupted());
    }
    let load = l.spec;
    let spec = load_spec(ctx, l, load.duration, u64::from(r))?;
    let machine0 = MachineReading::now();
    let cpu0 = CpuReading::of_tree(srv.pid());
    let report = servelab_load::run(&spec)
        .map_err(|e| PointFailure::failed(format!("repeat {r}: load: {e}")))?;
    let cpu1 = CpuReading::of_tree(srv.pid());
    let machine1 = MachineReading::now();
    if ctx.stop.load(Ordering::Relaxed) {
        return Err(PointFailure::interrupted());
    }
    let answered = report.status.values().sum::<u64>();
    let collapse = is_collapse(
        load.times_out(),
        answered,
        report.counts.timeouts,
        srv.alive(),
    );
    if report.counts.ok == 0 && !collapse {
        let died = if srv.alive() {
            String::new()
        } else {
            format!("; the server died: {}", srv.stderr_tail())
        };
        let what = failures(&report.counts, &report.errors)
            .unwrap_or_else(|| format!("none of {} sent finished", report.counts.sent));
        return Err(PointFailure::failed(format!(
            "repeat {r}: no request succeeded ({what}{}){died}",
            error_classes(&report),
        )));
    }
    let server_cpu_s = cpu0.seconds(cpu1);
    let others_cpu_s = match (machine0, machine1, &server_cpu_s) {
        (Some(a), Some(b), Ok(server_s)) => Some(a.others_s(b, *server_s)),
        _ => None,
    };
    Ok(Repeat {
        report,
        server_cpu_s,
        others_cpu_s,
    })
}

/// Whether a repeat in which no request succeeded is a measured collapse
/// (goodput 0, its throughput and badput as measured) rather than a broken
/// server: the clients had timeouts, the server is alive, and it answered
/// something or the clients gave up on their timeouts. A total collapse
/// (overload-cpu, policy finish, 63 users) answers every request after its
/// client has gone, so the clients see timeouts and no status at all.
/// `answered` counts the responses of any status, `timeouts` the attempts
/// the clients abandoned.
fn is_collapse(has_timeout: bool, answered: u64, timeouts: u64, alive: bool) -> bool {
    has_timeout && alive && (answered > 0 || timeouts > 0)
}

/// Reads the server's counters twice during a repeat of length `d` (sent at
/// 0.15 and 0.55 of it) and returns its rates in between; see
/// [`counters`](super::counters). A reading may wait in a full buffer for
/// seconds, so each may take until 3 s after the repeat's end.
fn spawn_reader(
    addr: std::net::SocketAddr,
    wire: Wire,
    d: Duration,
    finishes: bool,
) -> std::thread::JoinHandle<Result<Figures, String>> {
    std::thread::spawn(move || {
        let t0 = std::time::Instant::now();
        let end = t0 + d + Duration::from_secs(3);
        std::thread::sleep(d.mul_f64(0.15));
        let a = counters::read(addr, &wire, end)?;
        let second = (t0 + d.mul_f64(0.55)).saturating_duration_since(std::time::Instant::now());
        std::thread::sleep(second);
        let b = counters::read(addr, &wire, end)?;
        counters::rates(&a, &b, finishes).ok_or_else(|| "the two readings coincide".to_string())
    })
}

/// Whether the server serves a request whose client has gone to its end.
fn finishes(args: &servelab_server::ServeArgs) -> bool {
    args.on_abandon == servelab_server::OnAbandon::Finish
}

/// Waits until the server has worked off what a time-bounded repeat left behind.
///
/// A repeat that ends on time abandons the requests in flight, but a server that
/// has already accepted them still serves them (seed 002's badput): with one
/// worker and a 40 ms delay, 31 abandoned requests steal the first 1.2 s of the
/// next repeat (measured: 24.5/s in the first repeat, 9/s in the next ones). One
/// request sent now queues behind them (FIFO in the pool's queue and in the listen
/// backlog), so its answer means the server is free again.
///
/// Over TLS the request is sent over TLS (`wire`): the port answers nothing
/// else. Its answer is thrown away, and a failure only means the next repeat
/// starts without waiting.
fn drain(addr: std::net::SocketAddr, wire: &Wire, path: &str) {
    let _ = counters::get(
        wire,
        addr,
        path,
        std::time::Instant::now() + Duration::from_secs(30),
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Regression: overload-cpu's policy finish at 63 users finished no
    /// request in time and got no answer of any status before its clients
    /// gave up, and the point was recorded as failed; it is a measured
    /// collapse (goodput 0).
    #[test]
    fn a_total_collapse_is_a_measured_point_and_a_broken_server_is_not() {
        // Every attempt timed out, no status seen: a collapse.
        assert!(is_collapse(true, 0, 640, true));
        // Some 503s and no success: a collapse too.
        assert!(is_collapse(true, 12, 0, true));
        // No timeouts configured: nothing succeeding means a broken server.
        assert!(!is_collapse(false, 0, 0, true));
        assert!(!is_collapse(false, 12, 0, true));
        // A dead server is a failure, whatever the clients saw.
        assert!(!is_collapse(true, 0, 640, false));
        // Timeouts configured, but nothing answered and nothing timed out
        // (every connect refused): broken.
        assert!(!is_collapse(true, 0, 0, true));
    }

    /// An HTTP/2 point whose server caps the streams below what it asks
    /// measures fewer requests in flight than its label says, and says so.
    #[test]
    fn a_server_that_allows_fewer_streams_is_said() {
        let note = stream_limit(200, Some(128)).unwrap();
        assert!(
            note.starts_with("the server allows 128 concurrent streams"),
            "{note}"
        );
        assert!(note.contains("fewer than the 200 asked"), "{note}");
        assert_eq!(stream_limit(100, Some(100)), None);
        assert_eq!(stream_limit(100, None), None, "no limit announced");
        assert_eq!(stream_limit(1, Some(100)), None);
    }
}
