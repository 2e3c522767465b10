//! Predicting: the fitted model simulated at the loads the user asks about
//! (and solved exactly where it is product-form), its knee N*, and the
//! largest load that meets an objective.
//!
//! Why the simulator and not only the exact model: timeouts, retries and a
//! service distribution that is not exponential have no product form, and
//! percentiles come only from the simulator.

use std::time::Duration;

use serde::Serialize;
use servelab_sim::{Length, RunSpec, Warmup};

use crate::architecture::Architecture;
use crate::fit::{Estimate, Fit};
use crate::past_workers::PastWorkers;
use crate::slo::{Slo, SloStat};
use crate::staircase::Load;
use servelab_lab::{LabError, Result};

/// Replications and length of every prediction: seed 002's default sweep.
const SPEC: RunSpec = RunSpec {
    reps: 10,
    length: Length::Requests(20_000),
    warmup: Warmup::Mser5,
    seed: 1,
};
/// Replications of a validation load simulated as measured
/// ([`as_measured`]): each is one window of simulated time, a few thousand
/// requests at most, so forty cost milliseconds and put the interval of a
/// window's mean well inside the targets.
const AS_MEASURED_REPS: u32 = 40;
/// Most models the objective's search simulates.
const MAX_SEARCH_STEPS: u32 = 24;
/// Most users the objective's search tries.
const MAX_SEARCH_USERS: u32 = 1_000_000;

/// The prediction at one load.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Forecast {
    /// The load.
    pub load: Load,
    /// Requests the server completes per second (badput included).
    pub throughput: Estimate,
    /// Answers in time per second.
    pub goodput: Estimate,
    /// Requests finished for users who had gone, per second.
    pub badput: Estimate,
    /// The user's mean response time, ms, over every response period that
    /// ended: answered, given up after the last retry, or refused by a full
    /// buffer (the simulator's `user_cycle_time`). `load`'s latency holds
    /// the same periods (a failed request with the time to its error, the
    /// failed attempts and retry waits of a retried one), so the two are
    /// compared like with like; without timeouts or refusals it equals the
    /// mean over answers (`user_response_time`).
    pub mean_ms: Option<Estimate>,
    /// The user's median response time over the answers, ms (a histogram
    /// of the simulator holds answers only; where users give up, `load`'s
    /// percentiles also hold the given-up requests: p99 has no target).
    pub p50_ms: Option<Estimate>,
    /// 90th percentile, ms.
    pub p90_ms: Option<Estimate>,
    /// 99th percentile, ms.
    pub p99_ms: Option<Estimate>,
    /// Server utilisation, percent.
    pub utilisation_pct: Estimate,
    /// Requests dropped per second (full buffer).
    pub drop_rate: Estimate,
    /// Attempts timed out per second.
    pub timeout_rate: Estimate,
    /// The exact model's throughput, where it exists.
    pub exact_throughput: Option<f64>,
    /// The exact model's mean response time, ms.
    pub exact_mean_ms: Option<f64>,
    /// The knee N* of this think time.
    pub knee_users: f64,
    /// Whether the load has more closed users than the W workers that the
    /// probes found connections to hold: users past W wait for a connection
    /// to close (the model holds the workers: `fit.connections`).
    pub past_held_workers: bool,
    /// Users still waiting for an answer when the run ended (in service, or
    /// at the accept queue behind held workers), mean over replications: in
    /// no mean above. In steady state with held workers and no close, the
    /// N − W starved users; in a validation window, comparable with the
    /// requests `load` counted unfinished at its end.
    pub users_waiting_at_end: Estimate,
}

fn est(e: &servelab_sim::estimate::Estimate, scale: f64) -> Option<Estimate> {
    shifted(e, scale, 0.0)
}

/// A response time: the simulator's, plus the fit's delay outside the server.
fn shifted(e: &servelab_sim::estimate::Estimate, scale: f64, delay_s: f64) -> Option<Estimate> {
    e.mean.is_finite().then(|| Estimate {
        value: (e.mean + delay_s) * scale,
        half_width: e.half_width.is_finite().then_some(e.half_width * scale),
    })
}

/// A forecast of `goodput`/s with mean R `mean_ms` at `load`, each with a
/// ±0.5% interval: the fixture of the judging tests.
#[cfg(test)]
pub(crate) fn fixture(load: Load, goodput: f64, mean_ms: f64) -> Forecast {
    let e = |v: f64| Estimate {
        value: v,
        half_width: Some(v * 0.005),
    };
    Forecast {
        load,
        throughput: e(goodput),
        goodput: e(goodput),
        badput: zero(),
        mean_ms: Some(e(mean_ms)),
        p50_ms: None,
        p90_ms: None,
        p99_ms: None,
        utilisation_pct: e(50.0),
        drop_rate: zero(),
        timeout_rate: zero(),
        exact_throughput: None,
        exact_mean_ms: None,
        knee_users: 10.0,
        past_held_workers: false,
        users_waiting_at_end: zero(),
    }
}

fn zero() -> Estimate {
    Estimate {
        value: 0.0,
        half_width: None,
    }
}

/// The model to simulate at a load: the fit's, which holds the workers the
/// probes found (`held::apply`).
fn model(fit: &Fit, load: &Load) -> servelab_sim::Model {
    fit.model(load)
}

/// What a reader must know before the figures: a worker limit found by the
/// probes that the model does not have (and why: the step past W, `past`,
/// can deny it under load), and a wait at one user that is not CPU.
pub(crate) fn warnings(
    fit: &Fit,
    arch: &Architecture,
    past: Option<&PastWorkers>,
    knee_users: f64,
    base: &Load,
) -> Vec<String> {
    let mut w = Vec::new();
    // Held workers whose users come back before the keep-alive timeout:
    // the first W users keep their connections, the others wait for ever
    // (or until the client reconnects), and no mean covers both.
    if let (Some(workers), Some(h)) = (arch.held_workers(), fit.connections.held())
        && h.keepalive_timeout
            .is_none_or(|t| base.think.mean() + fit.delay_s < t)
        && h.max_requests.is_none()
    {
        w.push(format!(
            "past N = {workers} users the users beyond the {workers} held workers may never be \
             served: a user who thinks \
             {:.0} ms on average comes back well within the keep-alive timeout ({}), so a held \
             connection is never closed for idleness and no request limit closes it; the \
             first {workers} users to connect keep the {workers} workers, and the others wait \
             at the accept queue for as long as those users stay. The mean and percentiles of \
             R past N = {workers} (predicted and measured) are over the answered requests: \
             the {workers} served users'. The starved users are counted apart (`unfinished` \
             in the validation, `users_waiting_at_end` in the predictions); a real client \
             would time out.",
            base.think.mean() * 1e3,
            h.keepalive_timeout
                .map_or("never".into(), |t| format!("{t:.2} s"))
        ));
    }
    if let Some(p) = past.filter(|p| p.denies_held()) {
        w.push(p.not_modelled());
    } else if let Some(workers) = arch.held_workers()
        && fit.connections.held().is_none()
    {
        w.push(format!(
            "connections hold workers (W = {workers}, found by the probes), and this prediction \
             ignores that limit: the model does not hold them. It is not to be \
             trusted past N = {workers} users: there a user waits for a connection to close \
             (the keep-alive timeout), not for a CPU, and the measured throughput and response \
             times are worse than predicted."
        ));
    }
    if let Some(d) = &fit.non_cpu_delay {
        w.push(d.warning(knee_users));
    }
    w
}

/// Simulates the fit at each load, in steady state.
pub(crate) fn forecast(fit: &Fit, arch: &Architecture, loads: &[Load]) -> Result<Vec<Forecast>> {
    simulate(fit, arch, loads, &SPEC)
}

/// Simulates the fit at each validation load as the validation measures it:
/// one window of `window` that starts from an empty server and fresh
/// connections (every user in the middle of a think time, as `load` starts
/// them; nothing deleted as warm-up), its R over the requests answered in
/// the window, the users still waiting at its end apart.
///
/// Why not the steady state: each repeat of a validation step is a run of
/// `load` of its own, which opens its connections anew and (after
/// `Bench::drain`) finds the server empty. With held workers that is not a
/// detail: the first W users to connect keep their workers for the whole
/// window (a think shorter than the keep-alive timeout never lets one go),
/// the others wait at the accept queue, unanswered, until a connection
/// closes. In steady state a connection closed by a request limit (Apache's
/// `MaxKeepAliveRequests 100`) passes its worker on every 100 requests, and
/// a starved user's mean R counts the whole wait (seconds at 39 users); a
/// window of 2 s sees almost none of that close, and the answers in it are
/// the W lucky users'. Past the knee of a free model the window's queue
/// also starts empty. The simulator runs exactly that protocol here, so the
/// error measured is the model's, not the protocol's; the steady-state
/// forecast at the same loads is kept beside it (`Point::steady`).
pub(crate) fn as_measured(
    fit: &Fit,
    arch: &Architecture,
    loads: &[Load],
    window: Duration,
) -> Result<Vec<Forecast>> {
    let spec = RunSpec {
        reps: AS_MEASURED_REPS,
        length: Length::Horizon(window.as_secs_f64()),
        warmup: Warmup::Fixed(0.0),
        seed: SPEC.seed,
    };
    simulate(fit, arch, loads, &spec)
}

/// Simulates the fit at each load under `spec`.
fn simulate(
    fit: &Fit,
    arch: &Architecture,
    loads: &[Load],
    spec: &RunSpec,
) -> Result<Vec<Forecast>> {
    let models: Vec<_> = loads.iter().map(|l| model(fit, l)).collect();
    // Past W only where the model holds the workers (the step past W can
    // deny them under load: `PastWorkers::denies_held`).
    let held = arch
        .held_workers()
        .filter(|_| fit.connections.held().is_some());
    let results = servelab_sim::run_models(&models, spec)
        .map_err(|e| LabError::Other(format!("simulation: {e}")))?;
    loads
        .iter()
        .zip(results)
        .map(|(load, r)| {
            let s = r
                .sim
                .ok_or_else(|| LabError::Other("the simulator measured nothing".into()))?;
            Ok(Forecast {
                load: load.clone(),
                throughput: est(&s.throughput, 1.0).unwrap_or_else(zero),
                goodput: est(&s.goodput, 1.0).unwrap_or_else(zero),
                badput: est(&s.badput, 1.0).unwrap_or_else(zero),
                mean_ms: shifted(&s.user_cycle_time, 1e3, fit.delay_s),
                p50_ms: shifted(&s.user_p50, 1e3, fit.delay_s),
                p90_ms: shifted(&s.user_p90, 1e3, fit.delay_s),
                p99_ms: shifted(&s.user_p99, 1e3, fit.delay_s),
                utilisation_pct: est(&s.utilisation, 100.0).unwrap_or_else(zero),
                drop_rate: est(&s.drop_rate, 1.0).unwrap_or_else(zero),
                timeout_rate: est(&s.timeout_rate, 1.0).unwrap_or_else(zero),
                exact_throughput: r.exact.as_ref().map(|x| x.throughput),
                exact_mean_ms: r
                    .exact
                    .as_ref()
                    .map(|x| (x.response_time + fit.delay_s) * 1e3),
                knee_users: r.bounds.saturation_users,
                past_held_workers: held.is_some_and(|w| load.rate.is_none() && load.users > w),
                users_waiting_at_end: est(&s.users_waiting_at_end, 1.0).unwrap_or_else(zero),
            })
        })
        .collect()
}

/// The knee N* = c (D + Z) / D of the fit at a think time.
pub(crate) fn knee(fit: &Fit, load: &Load) -> f64 {
    servelab_sim::bounds::bounds(&fit.model(load)).saturation_users
}

/// The largest number of users (with `load`'s think time, timeouts and
/// retries) whose predicted statistic meets `slo`; `None` when one user
/// already misses it. Assumes the statistic grows with the users.
pub(crate) fn largest_meeting(fit: &Fit, load: &Load, slo: Slo) -> Result<Option<u32>> {
    let meets = |users: u32| -> Result<bool> {
        let m = fit.model(&Load {
            users,
            rate: None,
            ..load.clone()
        });
        let r = servelab_sim::run_point(&m, &SPEC)
            .map_err(|e| LabError::Other(format!("simulation: {e}")))?;
        let Some(s) = r.sim else { return Ok(false) };
        let v = match slo.stat {
            SloStat::Mean => s.user_response_time.mean,
            SloStat::P50 => s.user_p50.mean,
            SloStat::P90 => s.user_p90.mean,
            SloStat::P99 => s.user_p99.mean,
        };
        Ok(v.is_finite() && v + fit.delay_s < slo.limit_s)
    };
    if !meets(1)? {
        return Ok(None);
    }
    // Double from the knee's neighbourhood until the objective fails, then bisect.
    let (mut good, mut bad) = (1u32, (knee(fit, load).ceil() as u32).max(2));
    let mut steps = 0;
    while meets(bad)? {
        good = bad;
        bad = bad.saturating_mul(2);
        steps += 1;
        if bad > MAX_SEARCH_USERS || steps > MAX_SEARCH_STEPS {
            return Ok(Some(good));
        }
    }
    while bad - good > 1 && steps < MAX_SEARCH_STEPS {
        let mid = good + (bad - good) / 2;
        if meets(mid)? {
            good = mid;
        } else {
            bad = mid;
        }
        steps += 1;
    }
    Ok(Some(good))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::architecture::{KeepAlive, MaxRequests, Workers};
    use servelab_dist::Dist;

    /// A fit of one 5 ms core, holding 4 workers with the given request
    /// limit (keep-alive 5 s).
    fn held_fit(max: Option<MaxRequests>) -> (Fit, Architecture) {
        let mut fit = crate::held::one_core();
        let arch = Architecture {
            workers: Workers::Held { workers: 4 },
            keepalive: KeepAlive::Closes { after_s: 5.0 },
            max_requests: max,
            answer_ms: Some(5.0),
            answer_wait_ms: 250.0,
            how: vec![],
            probe_s: 3.0,
        };
        crate::held::apply(&mut fit, &arch).expect("held");
        (fit, arch)
    }

    fn users(n: u32, think_s: f64) -> Load {
        Load {
            users: n,
            rate: None,
            think: Dist::exp(think_s),
            timeout: None,
            retries: None,
        }
    }

    #[test]
    fn starved_users_are_waiting_at_the_end_and_in_no_mean() {
        // 16 users thinking 20 ms on 4 held workers: 4 are served, 12 starve,
        // in a 2 s window as in steady state.
        let (fit, arch) = held_fit(None);
        let loads = [users(16, 0.02)];
        let window = as_measured(&fit, &arch, &loads, Duration::from_secs(2)).unwrap();
        let steady = forecast(&fit, &arch, &loads).unwrap();
        let w = &window[0];
        assert!(w.past_held_workers);
        // 12 starved, plus the served users' requests in flight.
        let waiting = w.users_waiting_at_end.value;
        assert!((12.0..=16.0).contains(&waiting), "{waiting}");
        // Four users thinking 20 ms on one 5 ms core: under 4/(20 ms + 5 ms).
        assert!(w.goodput.value < 160.0, "{}", w.goodput.value);
        let rel = (w.goodput.value - steady[0].goodput.value) / steady[0].goodput.value;
        assert!(
            rel.abs() < 0.05,
            "window {} steady {}",
            w.goodput.value,
            steady[0].goodput.value
        );
        let (rw, rs) = (w.mean_ms.unwrap().value, steady[0].mean_ms.unwrap().value);
        assert!(rw < 20.0 && rs < 20.0, "the served users' R: {rw} {rs} ms");
    }

    #[test]
    fn a_window_shorter_than_a_connection_s_life_sees_none_of_its_close() {
        // A request limit of 20 at 200 ms thinks: a connection lives about
        // 4 s. In steady state the starved users get a worker in turn and
        // their mean R counts that wait (seconds); a 1 s window from fresh
        // connections sees almost no close, and its answers are the served
        // users' (tens of ms).
        let (fit, arch) = held_fit(Some(MaxRequests::Closes { after: 20 }));
        let loads = [users(12, 0.2)];
        let window = as_measured(&fit, &arch, &loads, Duration::from_secs(1)).unwrap();
        let steady = forecast(&fit, &arch, &loads).unwrap();
        let (rw, rs) = (
            window[0].mean_ms.unwrap().value,
            steady[0].mean_ms.unwrap().value,
        );
        assert!(rs > 10.0 * rw, "steady {rs} ms, window {rw} ms");
    }
    #[test]
    fn a_limit_the_step_past_w_denies_is_not_modelled_and_the_warning_says_why() {
        use crate::staircase::{Repeat, closed_step};
        // As Apache event with keep-alive: the probes found idle connections
        // held (here W = 4); under load 8 busy users were all served.
        let (_, arch) = held_fit(None);
        let busy: Vec<Repeat> = [7.0, 7.4, 7.8]
            .iter()
            .map(|served| Repeat {
                goodput: 180.0,
                mean_ms: Some(served / 180.0 * 1e3),
                ..Default::default()
            })
            .collect();
        let past = PastWorkers::of(closed_step(8, busy), 4, &[]);
        assert!(past.denies_held(), "{}", past.summary);
        // The model then holds nothing (run.rs skips held::apply), and past
        // W the validation does not read the answers as the lucky users'.
        let fit = crate::held::one_core();
        let w = warnings(&fit, &arch, Some(&past), 1.0, &users(16, 0.02));
        assert!(
            w.iter().any(|w| w.starts_with("held workers not modelled")),
            "{w:?}"
        );
        assert!(!w.iter().any(|w| w.contains("ignores that limit")), "{w:?}");
        let f = as_measured(&fit, &arch, &[users(16, 0.02)], Duration::from_secs(1)).unwrap();
        assert!(!f[0].past_held_workers);
        // Without the step's evidence the same unheld model is the one that
        // ignores the probes' limit, and says so.
        let w = warnings(&fit, &arch, None, 1.0, &users(16, 0.02));
        assert!(w.iter().any(|w| w.contains("ignores that limit")), "{w:?}");
        // A step that confirms W, or has no X·R, does not deny it.
        let held = closed_step(
            8,
            vec![
                Repeat {
                    goodput: 190.0,
                    mean_ms: Some(21.0),
                    ..Default::default()
                };
                3
            ],
        );
        assert!(!PastWorkers::of(held, 4, &[]).denies_held());
        let blind = closed_step(8, vec![Repeat::default(); 3]);
        assert!(!PastWorkers::of(blind, 4, &[]).denies_held());
    }

    #[test]
    fn the_mean_keeps_little_s_law_when_users_give_up() {
        // 6 users thinking 5 ms on one 5 ms core, each attempt timed out at
        // 30 ms and never retried: about half the periods end in a give-up.
        // `load`'s latency holds the given-up requests with the time to
        // their timeout, so the forecast's mean must too; then Little's law
        // holds over the periods: N = (answers + give-ups)/s x (R + Z). A
        // mean over the answers alone breaks it by a sixth (4.9 users).
        let fit = crate::held::one_core();
        let arch = Architecture {
            workers: Workers::NotHeld { held: 8 },
            keepalive: KeepAlive::LongerThan { wait_s: 5.0 },
            max_requests: None,
            answer_ms: Some(5.0),
            answer_wait_ms: 250.0,
            how: vec![],
            probe_s: 3.0,
        };
        let load = Load {
            timeout: Some(Dist::constant(0.03)),
            retries: Some(0),
            ..users(6, 0.005)
        };
        let f = &forecast(&fit, &arch, &[load]).unwrap()[0];
        let periods = f.goodput.value + f.timeout_rate.value;
        assert!(
            f.goodput.value > 20.0 && f.timeout_rate.value > 20.0,
            "{f:?}"
        );
        let n = periods * (f.mean_ms.unwrap().value / 1e3 + 0.005);
        assert!((n - 6.0).abs() < 0.3, "Little: {periods}/s x R = {n} users");
    }
}
