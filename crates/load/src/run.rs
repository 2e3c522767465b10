//! Running a spec: split the work over threads, start them, add up what they saw.
//!
//! Users (or the open workload's connections and rate) are split as evenly as
//! possible over `min(threads, users)` threads. Each thread numbers its users from
//! a global offset, so a user's random stream does not depend on the thread count.
//! The request limit is exact: closed users each get a fixed quota (the limit cut
//! into equal shares, as seed 002's users issue a fixed number of requests, which
//! also keeps sessions aligned), and open arrivals draw tickets from one atomic
//! counter shared by the threads.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use crate::control::RunControl;
use crate::error::LoadError;
use crate::event_loop::{self, LoopConfig, ThreadShare};
use crate::metrics::Recorder;
use crate::progress::Progress;
use crate::report::Report;
use crate::spec::{LoadSpec, Segment, Workload};
use crate::start_at::StartAt;
use crate::target::{Picker, prepare};

/// Runs the load described by `spec` (its segment's share) and reports.
///
/// Blocks until the run ends: after `spec.requests` requests, after
/// `spec.duration`, or after 10 s when neither is set; or early, when
/// `spec.stop` is set (the report then covers the run so far).
pub fn run(spec: &LoadSpec) -> Result<Report, LoadError> {
    spec.validate()?;
    let seg = spec.segment_share()?;
    let targets = Arc::new(prepare(
        &seg.targets,
        seg.method,
        &seg.headers,
        seg.body.as_ref(),
        &seg.tls,
        seg.tls_pin,
        seg.protocol,
    )?);
    let picker = Picker::new(&seg.targets);
    let units = match seg.workload {
        Workload::Closed { users, .. } => users,
        Workload::Open { connections, .. } => connections,
    };
    let threads = seg.threads.min(units as usize).max(1);
    // Connections: closed HTTP/2 users share them, `streams` to each.
    let want = u64::from(units) + 64;
    let have = raise_fd_limit(want);
    if have < want {
        return Err(LoadError::Spec(format!(
            "{units} connections need about {want} open files, but the limit is {have} \
             (raise the hard limit, e.g. `ulimit -Hn {want}` as root, or use --segment \
             on several processes or machines)"
        )));
    }
    let stop = spec.stop.clone().unwrap_or_default();
    // Every segment of a run spread over machines starts at the same time.
    let start_lag = spec.start_at.map(|at| wait_for(at, &stop));
    let control = Arc::new(RunControl::new(threads, seg.requests, stop));
    let started_unix_ms = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64);
    let start = Instant::now();
    let duration = seg.effective_duration();
    let deadline = duration.map(|d| start + d);
    // Stages give the whole run's level: a thread takes its segment's share of
    // the users (and picks its own among them), or its share of the rate.
    let stages = seg.stages.clone().map(|st| {
        let scale = match (&spec.workload, &seg.workload) {
            (Workload::Closed { users: all, .. }, Workload::Closed { users: mine, .. }) => {
                f64::from(*mine) / f64::from(*all)
            }
            _ => 1.0 / (f64::from(spec.segment.count) * threads as f64),
        };
        (Arc::new(st), scale)
    });
    let mut handles = Vec::with_capacity(threads);
    let mut first_user = 0u64;
    for t in 0..threads {
        let share = |total: u64| {
            Segment {
                index: t as u32 + 1,
                count: threads as u32,
            }
            .share(total)
        };
        let share = match seg.workload {
            Workload::Closed { think, .. } => {
                let users = share(u64::from(units)) as u32;
                let m = ThreadShare::Closed {
                    users,
                    first_user,
                    total_users: u64::from(units),
                    think,
                };
                first_user += u64::from(users);
                m
            }
            Workload::Open { rate, arrival, .. } => ThreadShare::Open {
                rate: rate / threads as f64,
                arrival,
                connections: share(u64::from(units)) as u32,
            },
        };
        let session = match seg.workload {
            Workload::Closed { session, .. } | Workload::Open { session, .. } => session,
        };
        let cfg = LoopConfig {
            index: t,
            targets: Arc::clone(&targets),
            picker: picker.clone(),
            share,
            session,
            timeout: seg.timeout,
            retries: seg.retries,
            retry_wait: seg.retry_wait,
            expect: seg.expect_status,
            retry_on_close: seg.retry_on_close && seg.method.idempotent(),
            seed: seg.seed,
            stages: stages.clone(),
            threads,
            start,
            deadline,
            streams: seg.protocol.is_h2().then(|| seg.protocol.streams()),
            poll_before_sleep: seg.poll_before_sleep(),
            nap: seg.nap,
        };
        let c = Arc::clone(&control);
        let h = std::thread::Builder::new()
            .name(format!("load-{t}"))
            .spawn(move || event_loop::run(cfg, c));
        match h {
            Ok(h) => handles.push(h),
            Err(e) => {
                control.stop.store(true, Ordering::Relaxed);
                for h in handles {
                    let _ = h.join();
                }
                return Err(LoadError::Io(e));
            }
        }
    }
    let progress = Progress::new(spec.progress, seg.requests, duration);
    if progress.visible() {
        while !handles.iter().all(|h| h.is_finished()) {
            progress.update(&control);
            std::thread::sleep(Duration::from_millis(100));
        }
        progress.finish();
    }
    let mut total = Recorder::new(start);
    let mut cpu = Duration::ZERO;
    let mut unreachable = false;
    let mut ended = start;
    let mut first_err = None;
    let mut last_connect_failure = None;
    let mut connected = false;
    for h in handles {
        match h.join() {
            Ok(Ok(r)) => {
                total.absorb(&r.recorder);
                cpu += r.cpu;
                unreachable |= r.gave_up;
                last_connect_failure = last_connect_failure.or(r.last_connect_failure);
                connected |= r.connected;
                ended = ended.max(r.ended);
            }
            Ok(Err(e)) => first_err = first_err.or(Some(LoadError::Io(e))),
            Err(_) => {
                first_err = first_err.or(Some(LoadError::Spec(
                    "an event-loop thread panicked".to_string(),
                )))
            }
        }
    }
    if let Some(e) = first_err {
        return Err(e);
    }
    // The real length, also for a timed run (the threads stop within a
    // millisecond or so of the deadline), as wrk reports it: to the last loop's
    // end, not counting the count of unfinished requests after it.
    let elapsed = ended.saturating_duration_since(start);
    let mut report = Report::build(spec, &total, threads, started_unix_ms, elapsed, cpu);
    report.unreachable = unreachable;
    report.interrupted = control.stop.load(Ordering::Relaxed);
    report.start_lag_ms = start_lag.map(|d| d.as_secs_f64() * 1e3);
    // No connection was ever made (for https, no handshake completed).
    if !connected {
        report.connect_failure = last_connect_failure;
    }
    Ok(report)
}

/// The signal that stopped the run, once one did (see [`stop_signal`]).
static STOP_SIGNAL: std::sync::OnceLock<Arc<AtomicUsize>> = std::sync::OnceLock::new();

/// A flag that the first SIGINT or SIGTERM sets, for [`LoadSpec::stop`]: the run
/// ends at once and still reports (the report says it was cut short:
/// [`Report::interrupted`]). A second signal exits the process (status 130).
///
/// For binaries only (a library should not take over the process's signals), and
/// once per process: every call registers the handlers again.
pub fn stop_on_signals() -> Result<Arc<AtomicBool>, LoadError> {
    use signal_hook::consts::{SIGINT, SIGTERM};
    let flag = Arc::new(AtomicBool::new(false));
    let which = STOP_SIGNAL.get_or_init(|| Arc::new(AtomicUsize::new(0)));
    for sig in [SIGINT, SIGTERM] {
        // Registered first, so it sees the flag as it was before this signal.
        signal_hook::flag::register_conditional_shutdown(sig, 130, Arc::clone(&flag))?;
        signal_hook::flag::register(sig, Arc::clone(&flag))?;
        signal_hook::flag::register_usize(sig, Arc::clone(which), sig as usize)?;
    }
    Ok(flag)
}

/// The signal (SIGINT 2, SIGTERM 15) that set the flag of
/// [`stop_on_signals`], if one did: a binary exits with `128 + signal`, as
/// shells and other tools do (130 for Ctrl-C).
pub fn stop_signal() -> Option<i32> {
    let n = STOP_SIGNAL.get()?.load(Ordering::Relaxed);
    (n != 0).then_some(n as i32)
}

/// Sleeps until `at` (or until `stop` is set); returns how late the run
/// starts: the oversleep, or how long ago `at` had passed already.
fn wait_for(at: StartAt, stop: &AtomicBool) -> Duration {
    loop {
        let now = SystemTime::now();
        if let Ok(late) = now.duration_since(at.0) {
            return late;
        }
        if stop.load(Ordering::Relaxed) {
            return Duration::ZERO;
        }
        let left = at.0.duration_since(now).unwrap_or_default();
        // Short sleeps near the end: the wake-up is then within a millisecond
        // or so; long ones before, so that Ctrl-C is seen within 100 ms.
        std::thread::sleep(left.min(Duration::from_millis(100)));
    }
}

/// Lifts the soft limit on open files towards the hard one, and returns the
/// limit in force: 10,000 connections need 10,000 descriptors, and the usual soft
/// limit is 1024.
fn raise_fd_limit(want: u64) -> u64 {
    use rustix::process::{Resource, Rlimit, getrlimit, setrlimit};
    let lim = getrlimit(Resource::Nofile);
    let current = lim.current.unwrap_or(u64::MAX);
    if current >= want {
        return current;
    }
    let target = lim.maximum.map_or(want, |max| want.min(max));
    let raised = setrlimit(
        Resource::Nofile,
        Rlimit {
            current: Some(target),
            maximum: lim.maximum,
        },
    );
    if raised.is_ok() { target } else { current }
}
