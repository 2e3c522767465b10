//! Measuring: one load step under the lab's protocol (warm-up, repeats of a
//! window of time until throughput is known to a precision, the validity
//! checks), and the staircase of closed-user steps, then open steps, that the
//! fit reads.
//!
//! Why closed users with no think time first: at one user the response time
//! is the demand plus the network (the low-load cross-check), and doubling the
//! users until the throughput stops growing finds the plateau X_max, whose
//! product with the demand is the number of servers.
//!
//! Why open steps after them: with no think time a closed population keeps
//! the server busy from c users on, so its mean response time is N/X whatever
//! the server does inside (k threads sharing a core or one at a time), and
//! the threads per core k cannot be fitted from it. A Poisson stream at
//! [`OPEN_SHARES`] of X_max leaves the server idle part of the time, where
//! sharing a core (round robin) and running to completion (FCFS) give
//! different response times unless the service is exponential.
//!
//! Why one user thinking last: every other step keeps the server busy
//! between a user's requests, and some servers are slower after an idle gap
//! (`crate::idle`); the validation's loads have think times.
//!
//! A budget of time bounds the whole staircase: the window is sized so that
//! [`PLANNED_STEPS`] steps of three repeats and a warm-up each fit into it,
//! and the closed steps leave room for the open ones and the idle step.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use serde::Serialize;
use servelab_dist::Dist;
use servelab_load::{Arrival, LoadSpec, Target, Workload};

use crate::cpu_source::CpuSource;
use crate::progress::Progress;
use servelab_lab::check::Check;
use servelab_lab::protocol::{StopReason, Stopped, Window};
use servelab_lab::sample::Sample;
use servelab_lab::{LabError, Result};

/// Steps the staircase is sized for: 1, 2, 4, ... 32 users, the open
/// steps, and the step of one user thinking (`crate::idle`).
const PLANNED_STEPS: u32 = 6 + OPEN_SHARES.len() as u32 + 1;
/// Open steps after the closed ones, as shares of the closed plateau X_max:
/// below the knee, where k shows (at utilisation 0.7 a constant service waits
/// 1.2 demands in FCFS and 2.3 in processor sharing), yet far enough from
/// X_max that its ±5-10% interval cannot push the stream into overload.
pub const OPEN_SHARES: [f64; 2] = [0.4, 0.7];
/// Most users of a staircase step.
const MAX_STEP_USERS: u32 = 1024;
/// A step whose throughput grows by less than this over the step before (at
/// half its users) has stopped growing; two such steps in a row are the
/// plateau (one alone is too often noise in a short window: a 6 s budget
/// stopped at 4 users with 158/s on a server that gave 194/s at 33).
const PLATEAU_GAIN: f64 = 1.05;

/// Whether the last two steps of a staircase both stopped growing.
pub(crate) fn on_plateau(steps: &[Step]) -> bool {
    let n = steps.len();
    n >= 3 && (n - 2..n).all(|i| steps[i].goodput() < PLATEAU_GAIN * steps[i - 1].goodput())
}
/// The idle step's think time when none was asked, in response times at
/// one user: the validation's default think is ten demands.
const IDLE_THINK_RESPONSES: f64 = 10.0;

/// What the staircase measured.
pub(crate) struct Staircase {
    /// The fit's steps: closed users with no think time, then open streams.
    pub steps: Vec<Step>,
    /// The step past the W held workers, when the probes found them.
    pub past: Option<Step>,
    /// One user thinking between requests (`crate::idle`).
    pub idle: Option<Step>,
}

/// Shortest and longest window of a repeat.
const MIN_WINDOW: Duration = Duration::from_millis(200);
const MAX_WINDOW: Duration = Duration::from_secs(10);
/// Fewest and most repeats of a step, and the throughput precision sought.
pub(crate) const MIN_REPEATS: u32 = 3;
pub(crate) const MAX_REPEATS: u32 = 5;
pub(crate) const PRECISION: f64 = 0.02;

/// Longest wait for the server to finish the previous run's requests before
/// a window ([`Bench::drain`]): Apache prefork with 35 starved connections
/// of 20 ms each needs 0.7 s; past this the window starts anyway.
const DRAIN_LIMIT: Duration = Duration::from_secs(5);

/// Most connections of an open step: a request that finds them all busy
/// waits in the client, its latency counted from its intended start.
const OPEN_CONNECTIONS: u32 = MAX_STEP_USERS;

/// A load: closed users with their think time, or (with `rate`) an open
/// Poisson stream; either with timeouts and retries.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Load {
    /// Closed users (not used when `rate` is set).
    pub users: u32,
    /// Open arrivals: requests per second, Poisson, whatever the server does
    /// (`users` and `think` then unused).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rate: Option<f64>,
    /// Think time between an answer and the next request.
    pub think: Dist,
    /// Client timeout of each attempt.
    pub timeout: Option<Dist>,
    /// Retries after a timeout.
    pub retries: Option<u32>,
}

impl Load {
    /// `users` closed users with no think time, timeouts or retries: a step
    /// of the fit's staircase.
    pub(crate) fn closed(users: u32) -> Load {
        Load {
            users,
            rate: None,
            think: Dist::ZERO,
            timeout: None,
            retries: None,
        }
    }

    /// The load in words: `1 user`, `8 users` or `120/s`.
    pub fn describe(&self) -> String {
        match (self.rate, self.users) {
            (Some(r), _) => format!("{r}/s"),
            (None, 1) => "1 user".into(),
            (None, n) => format!("{n} users"),
        }
    }
}

/// The figures of one repeat, as the load generator (and the CPU source) saw them.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Repeat {
    /// Completed requests per second (answered, failed or timed out).
    pub completed_per_s: f64,
    /// 2xx answers per second.
    pub goodput: f64,
    /// Mean response time of the requests that completed in the window, ms
    /// (`completed_latency`): the same kind of number as the
    /// simulator's R, over the periods that ended.
    pub mean_ms: Option<f64>,
    /// Standard deviation of the response time, ms.
    pub stdev_ms: Option<f64>,
    /// Median, ms.
    pub p50_ms: Option<f64>,
    /// 99th percentile, ms.
    pub p99_ms: Option<f64>,
    /// The server's CPU per completed request, ms (service demand law D = U/X).
    pub cpu_ms: Option<f64>,
    /// Requests that ended in an error or a timeout.
    pub failed: u64,
    /// Timed-out attempts.
    pub timeouts: u64,
    /// Requests unfinished at the window's end (in flight or never sent):
    /// with held workers, the users starved at the accept queue among them.
    /// Not in `mean_ms`.
    pub unfinished: u64,
    /// How long the server took to answer one request on a fresh connection
    /// before the window began, ms (`Bench::drain`): the time it spent
    /// finishing the previous run's requests.
    pub drain_ms: Option<f64>,
}

/// A measured load step.
#[derive(Debug, Clone, Serialize)]
pub struct Step {
    /// The load.
    pub load: Load,
    /// Its repeats.
    pub repeats: Vec<Repeat>,
    /// Why the repeats stopped.
    pub stopped: Stopped,
    /// The validity checks (Little's law, client, end of run).
    pub checks: Vec<Check>,
    /// The length of each repeat's window, seconds, as planned: every
    /// repeat is a run of `load` of its own from an empty server and fresh
    /// connections, so a simulation compared with it runs windows of this
    /// length from empty (`threads::fit`). `None` in a test's fixture.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub window_s: Option<f64>,
    /// What the load generator saw in each repeat.
    #[serde(skip)]
    pub windows: Vec<Window>,
}

impl Step {
    /// The sample of one figure over the repeats.
    pub(crate) fn sample(&self, f: impl Fn(&Repeat) -> Option<f64>) -> Option<Sample> {
        let v: Vec<f64> = self.repeats.iter().filter_map(f).collect();
        (v.len() == self.repeats.len())
            .then(|| Sample::of(&v))
            .flatten()
    }

    /// Whether the step is an open stream (a rate) rather than closed users.
    pub(crate) fn is_open(&self) -> bool {
        self.load.rate.is_some()
    }

    /// The step in one line: load, goodput, mean response time, repeats and
    /// failed checks.
    pub(crate) fn summary(&self) -> String {
        let x = self.sample(|r| Some(r.goodput));
        let r = self.sample(|r| r.mean_ms);
        let failed = self.checks.iter().filter(|c| !c.passed).count();
        format!(
            "{}: {}/s, mean R {} ms, {} repeats{}",
            self.load.describe(),
            x.map_or("-".into(), |x| format!("{:.1}", x.mean)),
            r.map_or("-".into(), |r| format!("{:.2}", r.mean)),
            self.repeats.len(),
            match failed {
                0 => String::new(),
                n => format!(", {n} check(s) failed"),
            }
        )
    }

    /// Mean goodput over the repeats.
    pub(crate) fn goodput(&self) -> f64 {
        self.sample(|r| Some(r.goodput)).map_or(0.0, |s| s.mean)
    }
}

/// Window and warm-up of each repeat.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Timing {
    pub warmup: Duration,
    pub window: Duration,
}

impl Timing {
    /// A window such that `steps` steps of the fewest repeats and a warm-up of
    /// half a window each fit in `budget`.
    pub(crate) fn for_budget(budget: Duration, steps: u32) -> Timing {
        let per = budget.div_f64(f64::from(steps.max(1)) * (f64::from(MIN_REPEATS) + 0.5));
        let window = per.clamp(MIN_WINDOW, MAX_WINDOW);
        Timing {
            warmup: window / 2,
            window,
        }
    }

    /// Measured time of a step with `repeats` repeats.
    fn cost(&self, repeats: u32) -> Duration {
        self.warmup + self.window * repeats
    }
}

/// What every step of a measurement shares.
pub(crate) struct Bench<'a> {
    pub url: &'a str,
    pub cpu: &'a CpuSource,
    pub stop: &'a Arc<AtomicBool>,
    pub progress: &'a Progress,
    /// What the steps are for, in the step lines: `calibration` or `validation`.
    pub phase: &'static str,
}

impl Bench<'_> {
    fn spec(&self, load: &Load, d: Duration, seed: u64) -> LoadSpec {
        let mut s = LoadSpec::new(vec![Target::new(self.url.to_string())]);
        s.workload = match load.rate {
            Some(rate) => Workload::Open {
                rate,
                arrival: Arrival::Poisson,
                connections: OPEN_CONNECTIONS,
                session: None,
            },
            None => Workload::Closed {
                users: load.users,
                session: None,
                think: load.think,
            },
        };
        s.timeout = load.timeout;
        s.retries = load.retries;
        s.requests = None;
        s.duration = Some(d);
        s.threads = 1;
        s.seed = seed;
        s.stop = Some(Arc::clone(self.stop));
        s
    }

    /// Measures `load`: a warm-up, then repeats until the goodput's 95%
    /// interval is within [`PRECISION`], [`MAX_REPEATS`] are run, or
    /// `deadline` would be passed by one more.
    pub(crate) fn step(&self, load: &Load, t: Timing, deadline: Instant) -> Result<Step> {
        let load_err = |e: servelab_load::LoadError| LabError::Other(format!("load: {e}"));
        self.progress
            .doing(format!("{}: {}: warm-up", self.phase, load.describe()));
        self.drain();
        servelab_load::run(&self.spec(load, t.warmup, 999)).map_err(load_err)?;
        let mut repeats = Vec::new();
        let mut windows = Vec::new();
        let stopped = loop {
            if self.stop.load(Ordering::Relaxed) {
                return Err(LabError::Other("interrupted".into()));
            }
            let r = repeats.len() as u64 + 1;
            self.progress
                .doing(format!("{}: {}: repeat {r}", self.phase, load.describe()));
            let drain_ms = self.drain();
            let cpu0 = self.cpu.read_ns()?;
            let report = servelab_load::run(&self.spec(load, t.window, r)).map_err(load_err)?;
            let cpu1 = self.cpu.read_ns()?;
            self.progress.advance(t.window);
            // An open step has no population: Window's users are 0, and
            // Little's check (which needs N) is dropped below.
            let (n, z) = match load.rate {
                Some(_) => (0, 0.0),
                None => (load.users, load.think.mean()),
            };
            windows.push(Window::of(&report, n, z));
            repeats.push(Repeat {
                drain_ms,
                ..repeat_of(&report, load, cpu0.zip(cpu1))
            });
            let goodputs: Vec<Option<f64>> = repeats.iter().map(|r| Some(r.goodput)).collect();
            if let Some(s) =
                servelab_lab::protocol::decide(&goodputs, MIN_REPEATS, MAX_REPEATS, PRECISION)
            {
                break s;
            }
            if Instant::now() + t.window > deadline && repeats.len() as u32 >= MIN_REPEATS {
                let rel = Sample::of(&goodputs.iter().flatten().copied().collect::<Vec<_>>())
                    .and_then(|s| s.relative_half_width());
                break Stopped {
                    n: repeats.len() as u32,
                    why: StopReason::Cap,
                    relative_half_width: rel,
                };
            }
        };
        let mut checks = servelab_lab::check::of_point(&windows, false);
        // Little's law for an open stream needs the number in the system,
        // which a client does not see; the check is for closed users.
        if load.rate.is_some() {
            checks.retain(|c| c.kind != servelab_lab::check::CheckKind::LittlesLaw);
        }
        let step = Step {
            load: load.clone(),
            repeats,
            stopped,
            checks,
            window_s: Some(t.window.as_secs_f64()),
            windows,
        };
        self.progress
            .step(format!("{}: {}", self.phase, step.summary()));
        Ok(step)
    }

    /// Waits until the server has finished the previous run's requests: one
    /// request on a fresh connection, answered (or [`DRAIN_LIMIT`] passed).
    /// Returns how long it took, ms (`None` when it was not answered).
    ///
    /// Why: a run ends by closing its connections, and the requests still in
    /// them stay with the server. A worker-per-connection server accepts the
    /// connections still waiting in its listen backlog, reads their requests
    /// and (Apache's mod_lua, say) serves them for nobody; an event-driven one
    /// finishes the requests in service. Without a wait the next window
    /// begins with that work in front of its own users, which its throughput
    /// does not count: past the knee, or with users starved behind held
    /// workers, up to N requests' worth of demand out of every window. With
    /// it, each window starts from a server with nothing in it and fresh
    /// connections, which the validation's simulation reproduces exactly
    /// (see `forecast::as_measured`).
    fn drain(&self) -> Option<f64> {
        let mut s = LoadSpec::new(vec![Target::new(self.url.to_string())]);
        s.workload = Workload::Closed {
            users: 1,
            session: Some(1),
            think: Dist::ZERO,
        };
        s.requests = Some(1);
        s.duration = None;
        s.timeout = Some(Dist::constant(DRAIN_LIMIT.as_secs_f64()));
        s.retries = Some(0);
        s.threads = 1;
        s.stop = Some(Arc::clone(self.stop));
        let from = Instant::now();
        let report = servelab_load::run(&s).ok()?;
        (report.counts.ok > 0).then(|| from.elapsed().as_secs_f64() * 1e3)
    }

    /// The fit's staircase: 1, 2, 4, ... users with no think time, until the
    /// throughput stops growing, the budget would be passed (keeping room for
    /// the open steps), or [`MAX_STEP_USERS`]; then open Poisson steps at
    /// [`OPEN_SHARES`] of the highest goodput, as far as the budget allows.
    ///
    /// With `held` workers found by the probes and no closed step past them,
    /// one more closed step at 2W users (no think time) follows the closed
    /// steps, and there are no open steps: a staircase that never exceeds
    /// the worker count cannot see the limit. It is returned apart, since
    /// the fit of the demand and of k reads steps where every user is served.
    /// The staircase within `budget`: the closed steps and the open ones
    /// (the fit's), the step past W when the probes found `held` workers,
    /// and one user thinking `think` (ten times the response time at one
    /// user when `None`): the idle step of `crate::idle`.
    pub(crate) fn staircase(
        &self,
        budget: Duration,
        held: Option<u32>,
        think: Option<Dist>,
    ) -> Result<Staircase> {
        let t = Timing::for_budget(budget, PLANNED_STEPS);
        let start = Instant::now();
        let deadline = start + budget;
        // With held workers the open steps are left out: a Poisson stream on
        // a pool of connections opens more than W of them when all are busy,
        // and those wait at the accept queue behind kept-alive ones (at 0.4
        // X_max against servelab's pool the mean R was 19.2 ms against the
        // free model's 10.9 ms), while the held model sets k = W/c, which is
        // what the open steps are there to fit. Their time goes to the step
        // past W.
        let open: &[f64] = if held.is_some() { &[] } else { &OPEN_SHARES };
        let reserve = open.len() as u32 + u32::from(held.is_some()) + 1;
        let mut steps = self.closed_steps(t, deadline, reserve)?;
        let past = match held {
            Some(w)
                if steps.iter().all(|s| s.load.users <= w)
                    && Instant::now() + t.cost(MIN_REPEATS) <= deadline =>
            {
                let load = Load::closed(w.saturating_mul(2).clamp(2, MAX_STEP_USERS));
                Some(self.step(&load, t, deadline)?)
            }
            _ => None,
        };
        let think = think.filter(|d| !d.is_zero()).or_else(|| {
            let r_ms = steps.first()?.sample(|r| r.mean_ms)?.mean;
            Some(Dist::exp(IDLE_THINK_RESPONSES * r_ms / 1e3))
        });
        let idle = match think {
            Some(think) if Instant::now() + t.cost(MIN_REPEATS) <= deadline => {
                let load = Load {
                    think,
                    ..Load::closed(1)
                };
                Some(self.step(&load, t, deadline)?)
            }
            _ => None,
        };
        let xmax = steps.iter().map(Step::goodput).fold(0.0, f64::max);
        for &share in open {
            if xmax <= 0.0 || Instant::now() + t.cost(MIN_REPEATS) > deadline {
                break;
            }
            // A tenth of a request per second is finer than X_max's interval
            // and keeps the rate readable.
            let load = Load {
                users: 0,
                rate: Some(((share * xmax * 10.0).round() / 10.0).max(0.1)),
                think: Dist::ZERO,
                timeout: None,
                retries: None,
            };
            steps.push(self.step(&load, t, deadline)?);
        }
        Ok(Staircase { steps, past, idle })
    }

    /// The closed steps of the staircase, leaving room for `reserve` more
    /// steps (the open ones, the one past W).
    fn closed_steps(&self, t: Timing, deadline: Instant, reserve: u32) -> Result<Vec<Step>> {
        let mut steps: Vec<Step> = Vec::new();
        let mut users = 1;
        let open = reserve;
        loop {
            let step = self.step(&Load::closed(users), t, deadline)?;
            steps.push(step);
            let plateau = on_plateau(&steps);
            let next_fits = Instant::now() + t.cost(MIN_REPEATS) * (1 + open) <= deadline;
            if plateau || !next_fits || users >= MAX_STEP_USERS {
                return Ok(steps);
            }
            users *= 2;
        }
    }
}

/// The latency histogram of the requests that completed in the window.
///
/// `load`'s `latency` holds every scheduled request, those unfinished at the
/// end with their age so far (a lower bound). Mixed into a mean of the
/// answers, they read far too high where users wait whole windows at a
/// held worker's accept queue: `serve --engine pool --workers 4 --work
/// exp:5ms`, 16 users thinking exp 20 ms, 2 s windows, gave a mean of 102 ms
/// over every request against 11 ms over the answers (and 259 ms against
/// 11 ms at 40 users), while the simulator's R is over the periods that
/// ended. For closed users without timeouts a request's intended start is
/// its send, so `latency_uncorrected` (send to answer, completed requests
/// only) is the mean over the answers (a request sent again after a
/// keep-alive close counts from its second send). An open stream's latency
/// counts the client's queue from the intended start, and with timeouts a
/// user's wait spans attempts: for those the corrected histogram is the
/// user's wait. It holds finished requests only (since servelab-load/5 the
/// unfinished ones are counted apart with their ages), a given-up request
/// with the time to its last error: the periods of the simulator's
/// `user_cycle_time`, which the forecast's mean is.
fn completed_latency<'r>(
    report: &'r servelab_load::Report,
    load: &Load,
) -> &'r servelab_load::Histogram {
    if load.rate.is_none() && load.timeout.is_none() {
        &report.latency_uncorrected
    } else {
        &report.latency
    }
}

/// A repeat's figures; `cpu` holds the CPU source's readings before and after.
fn repeat_of(report: &servelab_load::Report, load: &Load, cpu: Option<(f64, f64)>) -> Repeat {
    let secs = report.duration_s.max(1e-9);
    let c = &report.counts;
    let answered = c.ok > 0;
    let ms = |us: f64| answered.then_some(us / 1e3);
    let lat = completed_latency(report, load);
    Repeat {
        completed_per_s: c.completed as f64 / secs,
        goodput: report.throughput.ok_per_s,
        mean_ms: ms(lat.mean),
        stdev_ms: ms(lat.stdev),
        p50_ms: ms(lat.p50 as f64),
        p99_ms: ms(lat.p99 as f64),
        cpu_ms: cpu
            .filter(|_| c.completed > 0)
            .map(|(a, b)| (b - a) / 1e6 / c.completed as f64)
            .filter(|d| *d > 0.0),
        failed: c.failed,
        timeouts: c.timeouts,
        unfinished: c.in_flight + c.never_sent,
        drain_ms: None,
    }
}

/// A step of `load` with the given repeats, stopped at its precision: the
/// fixture of the fit's, the held model's and the forecast's tests.
#[cfg(test)]
pub(crate) fn fixture_step(load: Load, repeats: Vec<Repeat>) -> Step {
    Step {
        load,
        stopped: Stopped {
            n: repeats.len() as u32,
            why: StopReason::Precision,
            relative_half_width: None,
        },
        repeats,
        checks: vec![],
        window_s: None,
        windows: vec![],
    }
}

/// [`fixture_step`] of `users` closed users with no think time.
#[cfg(test)]
pub(crate) fn closed_step(users: u32, repeats: Vec<Repeat>) -> Step {
    fixture_step(Load::closed(users), repeats)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_budget_fits_six_steps_of_three_repeats_and_a_warm_up() {
        assert_eq!(PLANNED_STEPS, 9, "six closed, two open and the idle step");
        let t = Timing::for_budget(Duration::from_secs(63), 6);
        assert_eq!(t.window, Duration::from_secs(3));
        assert_eq!(t.warmup, Duration::from_millis(1500));
        assert!(t.cost(3) * 6 <= Duration::from_secs(63));
        // A tiny budget still measures windows long enough to mean something.
        assert_eq!(
            Timing::for_budget(Duration::from_secs(1), 6).window,
            MIN_WINDOW
        );
    }

    #[test]
    fn an_open_step_sends_a_poisson_stream_and_a_closed_one_users() {
        let stop = Arc::new(AtomicBool::new(false));
        let progress = Progress::off();
        let b = Bench {
            url: "http://127.0.0.1:1/",
            cpu: &CpuSource::None,
            stop: &stop,
            progress: &progress,
            phase: "calibration",
        };
        let closed = Load {
            users: 3,
            rate: None,
            think: Dist::exp(0.1),
            timeout: None,
            retries: None,
        };
        let open = Load {
            rate: Some(120.0),
            ..closed.clone()
        };
        match b.spec(&open, Duration::from_secs(1), 1).workload {
            Workload::Open { rate, arrival, .. } => {
                assert_eq!(rate, 120.0);
                assert_eq!(arrival, Arrival::Poisson);
            }
            w => panic!("not open: {w:?}"),
        }
        assert!(matches!(
            b.spec(&closed, Duration::from_secs(1), 1).workload,
            Workload::Closed { users: 3, .. }
        ));
        assert_eq!(open.describe(), "120/s");
        assert_eq!(closed.describe(), "3 users");
        assert_eq!(
            Load {
                users: 1,
                ..closed.clone()
            }
            .describe(),
            "1 user"
        );
    }
}
