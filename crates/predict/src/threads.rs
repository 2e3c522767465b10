//! Fitting the threads per core k (and with it the policy) from the response
//! times of the staircase: below saturation, the mean response time depends on
//! how many requests share a core. k threads taking turns (round robin) make a
//! short request wait behind a long one for a few quanta only; one thread (or
//! FCFS) makes it wait for the whole of it.
//!
//! How: the fitted model is simulated at every measured step with k = 1
//! (FCFS) and k = 2, 4, 8, ... (round robin) up to the most requests the
//! staircase had in the server, and the k whose mean response times are
//! closest to the measured ones (smallest root mean square of the relative
//! errors) wins. k threads under FCFS run each request to completion, so they
//! serve as one thread does: FCFS is only tried with k = 1.
//!
//! When the data cannot tell: with an exponential demand FCFS and round robin
//! give the same mean response time, and with closed users and no think time
//! every policy gives N/X. Candidates whose predictions differ from the best
//! one's, at every step, by no more than the measurement's and the
//! simulations' intervals (or [`MIN_DISCERN`]) are not told apart; the model
//! then takes the smallest k among them, and the note says so.

use servelab_sim::{Length, Policy, RunSpec, Warmup};

use crate::fit::Fit;
use crate::kfit::{Candidate, ThreadsFit};
use crate::staircase::Step;
use servelab_lab::{LabError, Result};

/// Replications and length of each candidate's simulation in steady state:
/// half the prediction's, since only mean response times are compared.
const SPEC: RunSpec = RunSpec {
    reps: 8,
    length: Length::Requests(10_000),
    warmup: Warmup::Mser5,
    seed: 17,
};
/// Replications of a window simulated as measured: a window holds a few
/// hundred requests where the steady state holds 10,000, so more of them.
const WINDOW_REPS: u32 = 24;

/// How each candidate is simulated: as the steps were measured, when they
/// say how (windows of the step's length from an empty server and fresh
/// connections, nothing deleted as warm-up, R over the answers in the
/// window), else in steady state. A window from empty holds the first
/// requests' short waits: at 32 users with no think time on one 10 ms core
/// and 0.5 s windows the mean R is 219 ms against the steady state's 320 ms,
/// so steady-state candidates miss the truth by 20% RMS and the fit can
/// pick a k that is not there
/// (`tests::windows_from_an_empty_server_are_compared_with_windows`).
fn spec_for(steps: &[Step]) -> RunSpec {
    let windows: Vec<f64> = steps.iter().filter_map(|s| s.window_s).collect();
    if windows.is_empty() || windows.len() < steps.len() {
        return SPEC;
    }
    RunSpec {
        reps: WINDOW_REPS,
        length: Length::Horizon(windows.iter().sum::<f64>() / windows.len() as f64),
        warmup: Warmup::Fixed(0.0),
        seed: SPEC.seed,
    }
}
/// Most threads per core tried: 64 covers every engine and server seen here,
/// and each candidate costs one simulation per step.
const MAX_K: u32 = 64;
/// Relative difference below which two candidates' predictions count as the
/// same even when every interval is narrower: the staircase's own precision.
const MIN_DISCERN: f64 = crate::staircase::PRECISION;

/// The candidate k values: 1, 2, 4, ... while c·k requests could have been in
/// the server together at some step, at most [`MAX_K`].
fn candidates(cores: u32, most_in_server: u32) -> Vec<u32> {
    let mut ks = vec![1];
    let mut k = 2;
    while k <= MAX_K && cores.saturating_mul(k) <= most_in_server.max(1) {
        ks.push(k);
        k *= 2;
    }
    ks
}

/// The most requests a step could have had in the server: a closed step's
/// users; an open step's are not known to the client, so it adds none.
fn most_in_server(steps: &[Step]) -> u32 {
    steps
        .iter()
        .filter(|s| !s.is_open())
        .map(|s| s.load.users)
        .max()
        .unwrap_or(1)
}

/// The fit at threads per core `k`: FCFS with one thread, else round robin.
fn with_k(fit: &Fit, k: u32) -> Fit {
    let mut f = fit.clone();
    f.threads_per_core = k;
    f.policy = if k == 1 {
        Policy::Fcfs
    } else {
        Policy::RoundRobin
    };
    f.threads_fit = None;
    f
}

/// Fits k to the staircase's mean response times and sets it (with the
/// policy, and a fitted buffer shifted by the added threads) in `fit`; the
/// notes say what won, by how much, and whether the data could tell.
pub(crate) fn fit(fit: &mut Fit, steps: &[Step]) -> Result<()> {
    let measured: Vec<Option<(f64, f64)>> = steps
        .iter()
        .map(|s| {
            let m = s.sample(|r| r.mean_ms)?;
            Some((m.mean, m.half_width().unwrap_or(0.0)))
        })
        .collect();
    let ks = candidates(fit.cores, most_in_server(steps));
    if ks.len() == 1 {
        fit.notes.push(format!(
            "threads per core k = 1 (fcfs): no step had more than {} request(s) per core, so \
             no larger k could show",
            most_in_server(steps) / fit.cores.max(1)
        ));
        return Ok(());
    }
    let models: Vec<_> = ks
        .iter()
        .flat_map(|&k| {
            let f = with_k(fit, k);
            steps.iter().map(move |s| f.model(&s.load))
        })
        .collect();
    let results = servelab_sim::run_models(&models, &spec_for(steps))
        .map_err(|e| LabError::Other(format!("simulation of the threads per core: {e}")))?;
    // (mean, half-width) of each candidate's response time, ms, with the delay.
    let predicted: Vec<Vec<Option<(f64, f64)>>> = results
        .chunks(steps.len())
        .map(|rs| {
            rs.iter()
                .map(|r| {
                    let e = &r.sim.as_ref()?.user_response_time;
                    let hw = if e.half_width.is_finite() {
                        e.half_width
                    } else {
                        0.0
                    };
                    e.mean
                        .is_finite()
                        .then_some(((e.mean + fit.delay_s) * 1e3, hw * 1e3))
                })
                .collect()
        })
        .collect();
    let cands: Vec<Candidate> = ks
        .iter()
        .zip(&predicted)
        .map(|(&k, p)| candidate(k, p, &measured))
        .collect();
    let best_i = (0..cands.len())
        .min_by(|&a, &b| cands[a].rms_pct.total_cmp(&cands[b].rms_pct))
        .unwrap_or(0);
    let together: Vec<u32> = (0..cands.len())
        .filter(|&j| same(&predicted[best_i], &predicted[j], &measured))
        .map(|j| ks[j])
        .collect();
    let chosen = together.iter().copied().min().unwrap_or(ks[best_i]);
    let tf = ThreadsFit {
        steps: steps.iter().map(|s| s.load.describe()).collect(),
        measured_ms: measured.iter().map(|m| m.map(|m| m.0)).collect(),
        candidates: cands,
        best: ks[best_i],
        not_told_apart: together,
        chosen,
    };
    apply(fit, &tf);
    Ok(())
}

/// A candidate's errors against the measured means.
fn candidate(
    k: u32,
    predicted: &[Option<(f64, f64)>],
    measured: &[Option<(f64, f64)>],
) -> Candidate {
    let errors_pct: Vec<Option<f64>> = predicted
        .iter()
        .zip(measured)
        .map(|(p, m)| match (p, m) {
            (Some(p), Some(m)) if m.0 > 0.0 => Some((p.0 - m.0) / m.0 * 100.0),
            _ => None,
        })
        .collect();
    let e: Vec<f64> = errors_pct.iter().flatten().copied().collect();
    let rms_pct = if e.is_empty() {
        f64::INFINITY
    } else {
        (e.iter().map(|x| x * x).sum::<f64>() / e.len() as f64).sqrt()
    };
    Candidate {
        threads_per_core: k,
        policy: if k == 1 {
            Policy::Fcfs
        } else {
            Policy::RoundRobin
        },
        predicted_ms: predicted.iter().map(|p| p.map(|p| p.0)).collect(),
        errors_pct,
        rms_pct,
    }
}

/// Whether two candidates' predictions differ at no step by more than the
/// measurement's and both simulations' 95% intervals together (at least
/// [`MIN_DISCERN`] of the measured value).
fn same(
    a: &[Option<(f64, f64)>],
    b: &[Option<(f64, f64)>],
    measured: &[Option<(f64, f64)>],
) -> bool {
    a.iter()
        .zip(b)
        .zip(measured)
        .all(|((a, b), m)| match (a, b, m) {
            (Some(a), Some(b), Some(m)) => {
                let noise = (m.1 * m.1 + a.1 * a.1 + b.1 * b.1).sqrt();
                (a.0 - b.0).abs() <= noise.max(MIN_DISCERN * m.0)
            }
            _ => true,
        })
}

/// Sets the chosen k in the fit, shifts a fitted buffer by the threads it
/// adds (requests on a thread are not in the buffer), and writes the notes.
fn apply(fit: &mut Fit, tf: &ThreadsFit) {
    let k = tf.chosen;
    let added = fit.cores.saturating_mul(k - 1);
    *fit = Fit {
        threads_fit: None,
        ..with_k(fit, k)
    };
    if let Some((lo, hi)) = fit.buffer_bounds
        && added > 0
    {
        let (lo, hi) = (lo.saturating_sub(added), hi.saturating_sub(added));
        fit.buffer_bounds = Some((lo, hi));
        fit.buffer = hi;
        fit.notes.push(format!(
            "with k = {k} threads per core, {added} more requests are on a thread and not in \
             the buffer: its bounds become {lo}..={hi}"
        ));
    }
    let rms = |k: u32| {
        tf.candidates
            .iter()
            .find(|c| c.threads_per_core == k)
            .map_or(f64::NAN, |c| c.rms_pct)
    };
    let others: Vec<String> = tf
        .candidates
        .iter()
        .filter(|c| c.threads_per_core != k)
        .map(|c| {
            format!(
                "k = {} ({}) {:.1}%",
                c.threads_per_core, c.policy, c.rms_pct
            )
        })
        .collect();
    let policy = if k == 1 { "fcfs" } else { "rr" };
    if tf.identified() {
        fit.notes.push(format!(
            "threads per core k = {k} ({policy}) fits the mean response times of the {} steps \
             best: RMS error {:.1}%, against {}",
            tf.steps.len(),
            rms(k),
            others.join(", ")
        ));
    } else {
        let list: Vec<String> = tf.not_told_apart.iter().map(u32::to_string).collect();
        fit.notes.push(format!(
            "the data cannot tell k = {} apart (their mean response times differ at no step by \
             more than the intervals; the smallest RMS error, {:.1}%, is k = {}): the model \
             takes the smallest, k = {k} ({policy}); others: {}",
            list.join(", "),
            rms(tf.best),
            tf.best,
            others.join(", ")
        ));
    }
    fit.threads_fit = Some(tf.clone());
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::staircase::{Load, Repeat};
    use servelab_dist::Dist;

    /// A step whose three repeats saw throughput `x`, mean response time
    /// `r_ms` (±1% across the repeats), CV `cv` and 10 ms of CPU per request.
    fn step(load: Load, x: f64, r_ms: f64, cv: f64) -> Step {
        let repeats = [0.99, 1.0, 1.01]
            .iter()
            .map(|j| Repeat {
                completed_per_s: x,
                goodput: x * j,
                mean_ms: Some(r_ms * j),
                stdev_ms: Some(r_ms * j * cv),
                p50_ms: Some(r_ms),
                p99_ms: Some(r_ms * 3.0),
                cpu_ms: Some(10.0),
                ..Default::default()
            })
            .collect();
        crate::staircase::fixture_step(load, repeats)
    }

    fn open(rate: f64) -> Load {
        Load {
            users: 0,
            rate: Some(rate),
            ..Load::closed(1)
        }
    }

    /// A staircase measured on a server that is exactly `truth` (one core,
    /// 10 ms of constant CPU, k threads): the response times are the
    /// simulator's own at another seed, so only the policy tells them apart.
    /// `window`: each repeat measured as a window of that many seconds from
    /// an empty server (as `predict` measures); `None`: the steady state.
    fn staircase(k: u32, service: Dist, open_steps: bool, window: Option<f64>) -> Vec<Step> {
        staircase_of(k, service, open_steps, &[1, 2, 4, 8], window)
    }

    fn staircase_of(
        k: u32,
        service: Dist,
        open_steps: bool,
        users: &[u32],
        window: Option<f64>,
    ) -> Vec<Step> {
        let policy = if k == 1 {
            Policy::Fcfs
        } else {
            Policy::RoundRobin
        };
        let mut loads: Vec<Load> = users.iter().map(|&n| Load::closed(n)).collect();
        if open_steps {
            loads.extend([40.0, 70.0].map(open));
        }
        let cv = if service.is_exponential() { 1.0 } else { 0.0 };
        loads
            .into_iter()
            .map(|load| {
                let (users, think) = match load.rate {
                    Some(r) => (crate::fit::OPEN_POPULATION, Dist::exp(10_000.0 / r)),
                    None => (load.users, Dist::ZERO),
                };
                let m = servelab_sim::Model {
                    users,
                    think,
                    service,
                    cores: 1,
                    threads_per_core: k,
                    buffer: 100_000,
                    policy,
                    quantum: crate::fit::RR_QUANTUM_S,
                    ..servelab_sim::Model::default()
                };
                let spec = match window {
                    Some(w) => RunSpec {
                        reps: 40,
                        length: Length::Horizon(w),
                        warmup: Warmup::Fixed(0.0),
                        seed: 99,
                    },
                    None => RunSpec {
                        reps: 10,
                        length: Length::Requests(20_000),
                        warmup: Warmup::Mser5,
                        seed: 99,
                    },
                };
                let s = servelab_sim::run_point(&m, &spec).unwrap().sim.unwrap();
                let r_ms = s.user_response_time.mean * 1e3;
                // The one-user step's CV picks the fit's service distribution.
                let mut st = step(load, s.throughput.mean, r_ms, cv);
                st.window_s = window;
                st
            })
            .collect()
    }

    fn fitted(steps: &[Step]) -> Fit {
        let mut f = crate::fit::fit(steps, true).unwrap();
        fit(&mut f, steps).unwrap();
        f
    }

    #[test]
    fn the_candidates_stop_at_the_most_requests_per_core_seen() {
        assert_eq!(candidates(1, 8), [1, 2, 4, 8]);
        assert_eq!(candidates(2, 8), [1, 2, 4]);
        assert_eq!(candidates(1, 1), [1]);
        assert_eq!(candidates(1, 1024).last(), Some(&MAX_K));
    }

    #[test]
    fn two_threads_sharing_a_core_are_found_from_the_open_steps() {
        let f = fitted(&staircase(2, Dist::constant(0.010), true, None));
        let tf = f.threads_fit.as_ref().expect("k was fitted");
        assert_eq!(tf.best, 2, "{tf:?}");
        assert_eq!(f.threads_per_core, 2, "{:?}", f.notes);
        assert_eq!(f.policy, Policy::RoundRobin);
        assert!(
            f.sim_command("4", &Load::closed(4))
                .contains("--threads-per-core 2 ")
        );
        assert!(
            f.sim_command("4", &Load::closed(4))
                .contains("--policy rr --quantum 4ms")
        );
        // FCFS is clearly worse: its RMS error is several times the best's.
        let fcfs = &tf.candidates[0];
        assert_eq!(fcfs.policy, Policy::Fcfs);
        assert!(fcfs.rms_pct > 3.0 * tf.candidates[1].rms_pct, "{tf:?}");
        assert!(!tf.not_told_apart.contains(&1), "{tf:?}");
    }

    #[test]
    fn one_thread_run_to_completion_is_found_from_the_open_steps() {
        let f = fitted(&staircase(1, Dist::constant(0.010), true, None));
        let tf = f.threads_fit.as_ref().expect("k was fitted");
        assert_eq!(tf.best, 1, "{tf:?}");
        assert_eq!((f.threads_per_core, f.policy), (1, Policy::Fcfs));
        assert!(tf.identified(), "{tf:?}");
        assert!(!f.sim_command("4", &Load::closed(4)).contains("--policy"));
    }

    /// Closed users with no think time and an exponential demand: every k
    /// gives the same mean response time, N·D. The fit must say it cannot tell.
    #[test]
    fn a_staircase_that_cannot_tell_k_says_so_and_keeps_the_smallest() {
        let f = fitted(&staircase(4, Dist::exp(0.010), false, None));
        let tf = f.threads_fit.as_ref().expect("k was fitted");
        assert!(!tf.identified(), "{tf:?}");
        assert!(tf.not_told_apart.len() >= 2, "{tf:?}");
        assert_eq!(tf.chosen, 1);
        assert_eq!(f.threads_per_core, 1);
        assert!(
            f.notes.iter().any(|n| n.contains("cannot tell k = 1, ")),
            "{:?}",
            f.notes
        );
    }
    /// Each repeat of a step is a window from an empty server: its first
    /// requests wait behind fewer others than in steady state. Compared
    /// with steady-state simulations, one thread run to completion at 32
    /// users reads 219 ms where its k = 1 candidate predicts 320 ms (20% RMS
    /// over the steps); compared with windows simulated the same way, k = 1
    /// fits within a few percent (3.6%: the open steps' noise).
    #[test]
    fn windows_from_an_empty_server_are_compared_with_windows() {
        let steps = staircase_of(1, Dist::constant(0.010), true, &[1, 4, 16, 32], Some(0.5));
        let f = fitted(&steps);
        let tf = f.threads_fit.as_ref().expect("k was fitted");
        assert_eq!(tf.chosen, 1, "{tf:?}");
        let k1 = &tf.candidates[0];
        assert!(k1.rms_pct < 5.0, "{tf:?}");
    }
}
