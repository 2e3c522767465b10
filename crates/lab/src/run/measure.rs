//! A measured point, step by step: start its server, warm it up, measure each
//! repeat, record the figures. Each step returns a [`PointFailure`] that says
//! how the point ended when it cannot go on; the run records it and moves on.

use std::ffi::OsString;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use indicatif::ProgressBar;
use servelab_load::{LoadSpec, Target, Workload};

use super::RunOptions;
use super::counters::{self, Wire};
use super::simulate::{add_model_error, predict};
use crate::cpu::{CpuReading, Placement};
use crate::error::{LabError, Result};
use crate::experiment::{Measure, Plan, PointTls, ResolvedLoad, Server, Work};
use crate::metric::Metric;
use crate::peer;
use crate::protocol::Window;
use crate::results::{Figures, PointRecord, Status};
use crate::server::{self, ServerProcess, StartError};

/// What every point of a measured run shares.
struct Ctx<'a> {
    plan: &'a Plan,
    opts: &'a RunOptions,
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

/// Predicts, then measures every point with the load generator pinned to its
/// CPUs.
pub(super) fn measure_all(
    plan: &Plan,
    opts: &RunOptions,
    placement: &Placement,
    stop: &Arc<AtomicBool>,
    bar: &ProgressBar,
    records: &mut [PointRecord],
) -> Result<()> {
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
            // The bar counts the fewest repeats; a point that ended early
            // skips the rest.
            let done = rec.repeats.len() as u64;
            bar.inc(u64::from(plan.repeats).saturating_sub(done));
            rec.checks = crate::check::of_point(&rec.windows, plan.quick);
        }
    }
    let _ = crate::cpu::pin_current_thread(&original);
    add_model_error(records);
    Ok(())
}

/// Starts the point's server, warms it up, measures repeats of its window
/// until the headline metric is known to the plan's precision (or the cap),
/// summarises the repeats and checks the point.
fn measure_point(ctx: &Ctx<'_>, m: &Measure, rec: &mut PointRecord) -> Result<(), PointFailure> {
    let mut srv = start_server(ctx, &m.server, m.tls.is_some())?;
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
    let load = Load {
        spec: &m.load,
        url: &url,
        tls: m.tls.as_ref(),
    };
    warm_up(ctx, &load)?;
    // With client timeouts the backlog a run leaves behind is part of the
    // overloaded state being measured: draining it would restart every repeat
    // from an empty server, and a collapse takes seconds to come back.
    let drains = m.load.timeout.is_none();
    if drains {
        drain(srv.addr, &wire, &m.load.path);
    }
    // (whether the server's counters are read, whether it finishes abandoned
    // requests)
    let counted = match &m.server {
        Server::Servelab(a) if a.status => Some(finishes(a)),
        _ => None,
    };
    let plan = ctx.plan;
    let mut r = 0;
    let stopped = loop {
        r += 1;
        let reader =
            counted.map(|finish| spawn_reader(srv.addr, wire.clone(), m.load.duration, finish));
        let (report, cpu) = measure_repeat(ctx, &load, &mut srv, r)?;
        let server_rates = reader.map(|h| {
            h.join()
                .unwrap_or_else(|_| Err("the counter reader panicked".into()))
        });
        record_repeat(rec, r, &report, cpu, server_rates);
        if wire.is_tls() {
            record_tls(rec, r, &report);
        }
        rec.windows
            .push(Window::of(&report, m.load.users, m.load.think.mean()));
        if r <= plan.repeats {
            ctx.bar.inc(1);
        } else {
            // A repeat beyond the fewest: the bar grows with it.
            ctx.bar.inc_length(1);
            ctx.bar.inc(1);
        }
        if drains {
            drain(srv.addr, &wire, &m.load.path);
        }
        let headline: Vec<Option<f64>> = rec
            .repeats
            .iter()
            .map(|f| {
                f.get(&plan.headline)
                    .copied()
                    .filter(|_| !rec.unmeasurable.contains_key(&plan.headline))
            })
            .collect();
        if let Some(s) =
            crate::protocol::decide(&headline, plan.repeats, plan.max_repeats, plan.precision)
        {
            break s;
        }
    };
    rec.stopped = Some(stopped);
    rec.summarise();
    rec.checks = crate::check::of_point(&rec.windows, plan.quick);
    srv.stop();
    Ok(())
}

/// Starts `servelab serve` with the planned flags on a free port, or a peer from
/// a configuration written into the temporary directory.
/// A peer with `tls` serves HTTPS with the run's one certificate
/// ([`peer::certificate`]), made by the first point that needs it.
fn start_server(ctx: &Ctx<'_>, server: &Server, tls: bool) -> Result<ServerProcess, PointFailure> {
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

/// The point's load, where it is sent, and how over TLS.
struct Load<'a> {
    spec: &'a ResolvedLoad,
    url: &'a str,
    tls: Option<&'a PointTls>,
}

/// The load of one run of `duration`: the point's closed users, each on a
/// connection that it replaces every `session` requests, over TLS with the
/// point's trust and resumption when the server serves TLS.
fn load_spec(ctx: &Ctx<'_>, l: &Load<'_>, duration: Duration, seed: u64) -> LoadSpec {
    let load = l.spec;
    let mut s = LoadSpec::new(vec![Target::new(l.url.to_string())]);
    if let Some(tls) = l.tls {
        s.tls = tls.trust.tls_options(tls.resume);
    }
    s.workload = Workload::Closed {
        users: load.users,
        session: load.session,
        think: load.think,
    };
    s.timeout = load.timeout;
    s.retries = load.retries;
    s.retry_wait = load.retry_wait;
    s.requests = None;
    s.duration = Some(duration);
    s.threads = ctx
        .placement
        .load
        .len()
        .clamp(1, load.users.max(1) as usize);
    s.seed = seed;
    s.stop = Some(Arc::clone(ctx.stop));
    s
}

/// The point's whole load for its warm-up time, thrown away: connections,
/// caches, the scheduler and any overloaded state settle before the first
/// repeat.
fn warm_up(ctx: &Ctx<'_>, load: &Load<'_>) -> Result<(), PointFailure> {
    let spec = load_spec(ctx, load, load.spec.warmup, 999);
    servelab_load::run(&spec)
        .map(drop)
        .map_err(|e| PointFailure::failed(format!("warm-up: {e}")))
}

/// One measured repeat (number `r`, from 1): the load generator's report and
/// the server's CPU seconds over it, or why they could not be measured.
fn measure_repeat(
    ctx: &Ctx<'_>,
    l: &Load<'_>,
    srv: &mut ServerProcess,
    r: u32,
) -> Result<(servelab_load::Report, Result<f64, String>), PointFailure> {
    if ctx.stop.load(Ordering::Relaxed) {
        return Err(PointFailure::interrupted());
    }
    let load = l.spec;
    let spec = load_spec(ctx, l, load.duration, u64::from(r));
    let cpu0 = CpuReading::of_tree(srv.pid());
    let report = servelab_load::run(&spec)
        .map_err(|e| PointFailure::failed(format!("repeat {r}: load: {e}")))?;
    let cpu1 = CpuReading::of_tree(srv.pid());
    if ctx.stop.load(Ordering::Relaxed) {
        return Err(PointFailure::interrupted());
    }
    let answered = report.status.values().sum::<u64>();
    let collapse = is_collapse(
        load.timeout.is_some(),
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
    Ok((report, cpu0.seconds(cpu1)))
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

/// The figures of repeat `r` into the point's record; `server` holds the
/// server's own rates when its counters were read.
fn record_repeat(
    rec: &mut PointRecord,
    r: u32,
    report: &servelab_load::Report,
    cpu_s: Result<f64, String>,
    server: Option<Result<Figures, String>>,
) {
    if let Some(what) = failures(&report.counts, &report.errors) {
        rec.notes
            .push(format!("repeat {r}: {what}{}", error_classes(report)));
    }
    let mut m = Figures::new();
    let secs = report.duration_s.max(1e-9);
    // Without the server's counters, what the load generator saw: every ok
    // answer was served to the end, and no abandoned request can be seen.
    m.insert(Metric::Throughput, report.throughput.ok_per_s);
    m.insert(Metric::Goodput, report.throughput.ok_per_s);
    let refused = report.status.get("503").copied().unwrap_or(0);
    m.insert(Metric::DropRate, refused as f64 / secs);
    m.insert(Metric::TimeoutRate, report.counts.timeouts as f64 / secs);
    let unmeasurable = |rec: &mut PointRecord, m: &mut Figures, why: String| {
        for k in [Metric::Throughput, Metric::Badput, Metric::Abandoned] {
            m.remove(&k);
            rec.unmeasurable
                .entry(k)
                .or_insert_with(|| format!("repeat {r}: {why}"));
        }
    };
    match server {
        Some(Ok(f)) => {
            if !f.contains_key(&Metric::Badput) {
                rec.unmeasurable.entry(Metric::Badput).or_insert_with(|| {
                    "the server cancels abandoned requests and counts them with the few \
                     abandoned while being written, so what it finished for nobody is unknown"
                        .into()
                });
            }
            m.extend(f);
        }
        Some(Err(why)) => unmeasurable(rec, &mut m, why),
        // With client timeouts the server also finishes requests nobody waits
        // for; only its own counters see them.
        None if report.counts.timeouts > 0 => unmeasurable(
            rec,
            &mut m,
            "clients timed out, and only the server counts the requests it finished for them \
             (serve --status, with a duration-bound load)"
                .into(),
        ),
        None => {}
    }
    if report.counts.ok > 0 {
        m.insert(Metric::MeanMs, report.latency.mean / 1000.0);
        m.insert(Metric::AttemptMs, report.latency_uncorrected.mean / 1000.0);
        m.insert(Metric::P50Ms, report.latency.p50 as f64 / 1000.0);
        m.insert(Metric::P99Ms, report.latency.p99 as f64 / 1000.0);
    } else {
        // Under a collapse no user gets an answer: the load's times would be
        // those of its refusals (503s), not response times.
        for k in [
            Metric::MeanMs,
            Metric::AttemptMs,
            Metric::P50Ms,
            Metric::P99Ms,
        ] {
            rec.unmeasurable
                .entry(k)
                .or_insert_with(|| format!("repeat {r}: no request got a 2xx answer"));
        }
    }
    m.insert(Metric::TotalS, report.duration_s);
    m.insert(Metric::MbPerS, report.throughput.bytes_per_s / 1e6);
    // Failed requests only: a failed connect (counted in `errors` since
    // servelab-load/2) finishes no request and is said in the note.
    m.insert(Metric::Errors, report.counts.failed as f64);
    // U = server CPU s / window s, measured even in a collapse where no
    // request finished; D = server CPU s / finished requests, so U = X·D.
    match cpu_s {
        Ok(cpu_s) => {
            m.insert(Metric::CpuPct, cpu_s / secs * 100.0);
            if report.counts.completed > 0 {
                m.insert(Metric::CpuUs, cpu_s * 1e6 / report.counts.completed as f64);
            } else {
                rec.unmeasurable
                    .entry(Metric::CpuUs)
                    .or_insert_with(|| format!("repeat {r}: no request completed"));
            }
        }
        Err(why) => {
            for k in [Metric::CpuUs, Metric::CpuPct] {
                rec.unmeasurable
                    .entry(k)
                    .or_insert_with(|| format!("repeat {r}: {why}"));
            }
        }
    }
    rec.repeats.push(m);
}

/// The TLS figures of repeat `r` (its last repeat in `rec`): handshakes per
/// second, full and resumed, as the load generator completed them; the mean
/// and 99th percentile handshake time and the client's CPU per handshake
/// when a handshake completed, and otherwise unmeasurable (never 0: a
/// session that outlasts the window makes no handshake in it).
fn record_tls(rec: &mut PointRecord, r: u32, report: &servelab_load::Report) {
    let secs = report.duration_s.max(1e-9);
    let c = &report.counts;
    let Some(m) = rec.repeats.last_mut() else {
        return;
    };
    m.insert(Metric::FullHandshakes, c.tls_full as f64 / secs);
    m.insert(Metric::ResumedHandshakes, c.tls_resumed as f64 / secs);
    let h = &report.tls_handshake;
    if h.count > 0 {
        m.insert(Metric::HandshakeMs, h.mean / 1000.0);
        m.insert(Metric::HandshakeP99Ms, h.p99 as f64 / 1000.0);
    }
    if let Some(us) = report.throughput.cpu_us_per_handshake {
        m.insert(Metric::ClientHandshakeUs, us);
    }
    for k in [
        Metric::HandshakeMs,
        Metric::HandshakeP99Ms,
        Metric::ClientHandshakeUs,
    ] {
        if !m.contains_key(&k) {
            rec.unmeasurable
                .entry(k)
                .or_insert_with(|| format!("repeat {r}: no TLS handshake completed"));
        }
    }
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

/// What failed in a repeat, in words, or `None` when nothing did: the requests
/// that ended in an error out of those that finished (`failed` of `completed`;
/// since servelab-load/2 a failed connect finishes no request), and the failed
/// connects apart, since each is retried for the same request.
fn failures(counts: &servelab_load::Counts, errors: &servelab_load::Errors) -> Option<String> {
    let connects = errors.connect_refused + errors.connect_other;
    let mut parts = Vec::new();
    if counts.failed > 0 {
        parts.push(format!(
            "{} of {} finished requests failed",
            counts.failed, counts.completed
        ));
    }
    if connects > 0 {
        parts.push(format!(
            "{connects} connect{} failed (each retried for the same request)",
            if connects == 1 { "" } else { "s" }
        ));
    }
    if errors.tls_handshake > 0 {
        parts.push(format!(
            "{} TLS handshake{} failed",
            errors.tls_handshake,
            if errors.tls_handshake == 1 { "" } else { "s" }
        ));
    }
    (!parts.is_empty()).then(|| parts.join(", and "))
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

#[cfg(test)]
mod tests {
    use super::*;
    use servelab_load::{Counts, Errors};

    /// Regression: with servelab-load/2 `errors` counts failed connects too, and
    /// the note "N of M requests failed" divided them by the finished requests
    /// (a run with 3 refused connects and 2 failed requests of 10 said "5 of 10").
    #[test]
    fn failed_requests_are_counted_out_of_finished_ones_and_connects_apart() {
        let counts = Counts {
            scheduled: 11,
            sent: 11,
            completed: 10,
            ok: 8,
            failed: 2,
            errors: 5,
            in_flight: 1,
            ..Counts::default()
        };
        let errors = Errors {
            connect_refused: 3,
            reset: 2,
            ..Errors::default()
        };
        assert_eq!(
            failures(&counts, &errors).unwrap(),
            "2 of 10 finished requests failed, and 3 connects failed (each retried for the same request)"
        );
        let only_connects = Counts {
            failed: 0,
            ok: 10,
            ..counts
        };
        let one = Errors {
            connect_other: 1,
            ..Errors::default()
        };
        assert_eq!(
            failures(&only_connects, &one).unwrap(),
            "1 connect failed (each retried for the same request)"
        );
        assert_eq!(failures(&only_connects, &Errors::default()), None);
    }

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
}
