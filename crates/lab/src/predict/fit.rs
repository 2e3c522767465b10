//! Fitting seed 002's model to a staircase: the demand D (from the service
//! demand law D = U/X when the server's CPU is measured, else from the
//! response time at one user), its variability, the servers c from the
//! plateau (c ≈ X_max·D), each with a 95% interval, and the model as a
//! `servelab sim` command line.
//!
//! Where the data identify them, also the buffer (from the first step at
//! which requests were refused: with closed users and no think time at most N
//! requests are in the server, so refusals at N users and none at the step
//! before bound it) and a demand that changes with the load (the slope of the
//! CPU per request over the users, when its 95% interval excludes 0). Where
//! they do not, the notes say so and why, and the model keeps a value that
//! changes nothing rather than a made-up one.
//!
//! Why the model's demand is c/X_max on a plateau and not the CPU figure: the
//! servers a machine gives a process are rarely a whole number of cores (the
//! load generator, the kernel and the network share them). Rounding c and
//! keeping the plateau where it was measured keeps the throughput right at
//! every load past the knee; both demands are reported so the difference is
//! visible.

use serde::Serialize;
use servelab_dist::Dist;
use servelab_sim::{Model, OnFull};

use super::staircase::{Load, Step};
use crate::error::{LabError, Result};
use crate::stats::Sample;

/// Response-time CV within this distance of 1 is fitted as exponential.
const EXP_CV_BAND: f64 = 0.2;
/// Below this CV the demand is fitted as constant.
const CONST_CV: f64 = 0.05;
/// The closed population that stands for an open stream in the simulator
/// (which has only closed users): N users thinking exp(N/λ) send at λ·(1 −
/// n/N) with n requests in the server, within 1% of λ while fewer than
/// N/100 are in it.
pub const OPEN_POPULATION: u32 = 10_000;
/// The model's buffer when no drop was seen: larger than any staircase.
const UNBOUNDED_BUFFER: u32 = 100_000;
/// Below this share of the response time at one user, the server's CPU
/// leaves most of that time to something the model does not have: waiting
/// for a CPU that other work holds, or the network.
const LOW_CPU_SHARE: f64 = 0.5;

/// A fitted value and the half-width of its 95% interval (`None`: one value,
/// or not known).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Estimate {
    /// The value.
    pub value: f64,
    /// Half-width of its 95% interval.
    pub half_width: Option<f64>,
}

impl Estimate {
    fn of(s: &Sample) -> Estimate {
        Estimate {
            value: s.mean,
            half_width: s.half_width(),
        }
    }

    fn relative(&self) -> Option<f64> {
        self.half_width.map(|h| h / self.value.abs().max(1e-300))
    }
}

/// Where the demand came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DemandFrom {
    /// The server's CPU per request (service demand law).
    Cpu,
    /// The response time at one user (network time included).
    ResponseTime,
}

/// Seed 002's model fitted to a staircase.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Fit {
    /// Where the demand came from.
    pub demand_from: DemandFrom,
    /// The server's CPU per request over every repeat, seconds.
    pub cpu_demand_s: Option<Estimate>,
    /// The response time at one user, seconds.
    pub low_load_response_s: Estimate,
    /// CPU demand over the low-load response time: near 1 when the server's
    /// CPU is all of the response time.
    pub cpu_share_of_response: Option<f64>,
    /// The coefficient of variation of the response time at one user.
    pub cv: Estimate,
    /// The highest measured throughput, requests/s.
    pub throughput_max: Estimate,
    /// Whether the staircase reached the plateau.
    pub plateau: bool,
    /// X_max·D, before rounding.
    pub servers_raw: Estimate,
    /// Servers c of the model.
    pub cores: u32,
    /// Threads per core k of the model.
    pub threads_per_core: u32,
    /// The model's demand per request, seconds.
    pub demand_s: f64,
    /// Time of a request outside the server at one user (network, kernel,
    /// client): the response time there minus the model's demand, at least 0.
    /// The model adds it to every response time, and the user spends it
    /// outside the server as it spends a think (a delay station).
    pub delay_s: f64,
    /// The model's service distribution.
    pub service: Dist,
    /// The model's buffer.
    pub buffer: u32,
    /// The buffer's bounds when refusals identified it: (smallest, largest)
    /// buffer consistent with the staircase; the model uses the largest.
    pub buffer_bounds: Option<(u32, u32)>,
    /// The change of the CPU per request per added user, seconds, when the
    /// staircase shows one (95% interval excluding 0); the model keeps the
    /// pooled mean, because the simulator's demand does not depend on the load.
    pub demand_slope_s_per_user: Option<Estimate>,
    /// What was fitted how, and what could not be.
    pub notes: Vec<String>,
}

impl Fit {
    /// The model at a load.
    pub fn model(&self, load: &Load) -> Model {
        let (users, think) = self.population(load);
        Model {
            users,
            think,
            service: self.service,
            timeout: load.timeout,
            retries: load.retries,
            cores: self.cores,
            threads_per_core: self.threads_per_core,
            buffer: self.buffer,
            on_full: self.on_full(),
            ..Model::default()
        }
    }

    /// The simulator's users and think time at a load: the closed users
    /// (their think includes the time outside the server), or for an open
    /// rate λ, [`OPEN_POPULATION`] users thinking exp(N/λ).
    fn population(&self, load: &Load) -> (u32, Dist) {
        match load.rate {
            Some(rate) => (
                OPEN_POPULATION,
                Dist::exp(f64::from(OPEN_POPULATION) / rate.max(1e-9)),
            ),
            None => (load.users, load.think.shifted(self.delay_s)),
        }
    }

    /// A fitted buffer refuses at once (the server's 503 or reset); an
    /// unbounded one never fills.
    fn on_full(&self) -> OnFull {
        if self.buffer_bounds.is_some() {
            OnFull::Reject
        } else {
            OnFull::Silent
        }
    }

    /// The `servelab sim` command that predicts `users` at this fit (its
    /// think time includes the delay, and its response times exclude it).
    pub fn sim_command(&self, users: &str, load: &Load) -> String {
        let (n, think) = self.population(load);
        let users = if load.rate.is_some() {
            n.to_string()
        } else {
            users.to_string()
        };
        let mut s = format!(
            "servelab sim --users {users} --think {think} --service {} --cores {} --threads-per-core {} --buffer {}",
            self.service, self.cores, self.threads_per_core, self.buffer
        );
        if let Some(t) = &load.timeout {
            s.push_str(&format!(" --timeout {t}"));
        }
        if let Some(r) = load.retries {
            s.push_str(&format!(" --retries {r}"));
        }
        if self.on_full() == OnFull::Reject {
            s.push_str(" --on-full reject");
        }
        s
    }
}

/// Fits the model to the staircase (first step: one user).
pub(crate) fn fit(steps: &[Step], cpu_measured: bool) -> Result<Fit> {
    let low = steps
        .first()
        .ok_or_else(|| LabError::Other("no step was measured".into()))?;
    let mut notes = Vec::new();
    let r1 = low
        .sample(|r| r.mean_ms.map(|m| m / 1e3))
        .ok_or_else(|| LabError::Other("no request succeeded at one user".into()))?;
    let cv = low
        .sample(|r| Some(r.stdev_ms? / r.mean_ms?))
        .ok_or_else(|| LabError::Other("no response-time spread at one user".into()))?;
    let cpu_all: Vec<f64> = steps
        .iter()
        .flat_map(|s| s.repeats.iter().filter_map(|r| r.cpu_ms.map(|m| m / 1e3)))
        .collect();
    let cpu = Sample::of(&cpu_all).filter(|_| cpu_measured);
    let (demand_from, d) = match &cpu {
        Some(c) => (DemandFrom::Cpu, Estimate::of(c)),
        None => {
            notes.push(
                "the server's CPU was not measured (no --pid or --cgroup): the demand is the \
                 response time at one user, which includes the network and the client"
                    .into(),
            );
            (DemandFrom::ResponseTime, Estimate::of(&r1))
        }
    };
    if let Some(c) = &cpu
        && c.mean < LOW_CPU_SHARE * r1.mean
    {
        notes.push(format!(
            "the server's CPU is {:.0}% of the response time at one user ({:.3} of {:.3} ms): it \
             waits for a CPU that other work holds, or for the network; the model runs a request \
             as soon as a server is free, so its response times will be too short",
            c.mean / r1.mean * 100.0,
            c.mean * 1e3,
            r1.mean * 1e3
        ));
    }
    let demand_slope_s_per_user = cpu.as_ref().and_then(|_| demand_slope(steps));
    if let Some(slope) = &demand_slope_s_per_user {
        notes.push(format!(
            "the CPU per request changes with the load by {:+.4} ± {:.4} ms per user (95%, \
             over {} steps): the demand depends on the load; the model uses the pooled mean",
            slope.value * 1e3,
            slope.half_width.unwrap_or(f64::NAN) * 1e3,
            steps.len()
        ));
    } else if cpu.is_some() {
        notes.push(
            "the CPU per request shows no trend with the load (the slope's 95% interval holds \
             0, or fewer than 3 steps): one demand for every load"
                .into(),
        );
    }
    let best = steps
        .iter()
        .max_by(|a, b| a.goodput().total_cmp(&b.goodput()))
        .ok_or_else(|| LabError::Other("no step was measured".into()))?;
    let xmax = best
        .sample(|r| Some(r.goodput))
        .ok_or_else(|| LabError::Other("no throughput was measured".into()))?;
    let xmax = Estimate::of(&xmax);
    let n = steps.len();
    let plateau = super::staircase::on_plateau(steps);
    let raw = xmax.value * d.value;
    let rel = match (xmax.relative(), d.relative()) {
        (Some(a), Some(b)) => Some((a * a + b * b).sqrt()),
        _ => None,
    };
    let servers_raw = Estimate {
        value: raw,
        half_width: rel.map(|r| r * raw),
    };
    let cores = (raw.round() as u32).max(1);
    // Microseconds are finer than any interval of the fit, and keep the
    // printed command readable.
    let round_us = |s: f64| (s * 1e6).round().max(1.0) / 1e6;
    let demand_s = round_us(if plateau {
        f64::from(cores) / xmax.value
    } else {
        notes.push(format!(
            "the throughput still grew at {} users, the last step the budget allowed: c is a \
             lower bound",
            steps[n - 1].load.users
        ));
        d.value
    });
    let how = if plateau {
        format!(
            "the model's demand is c/X_max = {:.3} ms against {:.3} ms measured, so that the \
             model's plateau is the one measured",
            demand_s * 1e3,
            d.value * 1e3
        )
    } else {
        "the model's demand is the one measured".into()
    };
    notes.push(format!(
        "c = X_max·D = {raw:.2} ± {:.2}, rounded to {cores}; {how}",
        servers_raw.half_width.unwrap_or(f64::NAN),
    ));
    let delay_s = ((r1.mean - demand_s).max(0.0) * 1e6).round() / 1e6;
    if delay_s > 0.0 {
        notes.push(format!(
            "{:.3} ms of the response time at one user is spent outside the model's demand \
             (network, kernel, client): the model adds it to every response time and to the \
             think time of `servelab sim`",
            delay_s * 1e3
        ));
    }
    let cv_value = cv.mean;
    let service = if (cv_value - 1.0).abs() <= EXP_CV_BAND {
        Dist::exp(demand_s)
    } else if cv_value < CONST_CV {
        Dist::constant(demand_s)
    } else {
        Dist::lognormal(demand_s, cv_value)
    };
    notes.push(format!(
        "the response time at one user has CV {cv_value:.2}: service {service}"
    ));
    notes.push(
        "threads per core k = 1 (FCFS): a staircase with no think time cannot tell k threads \
         sharing a core from one; run `servelab lab` on the server's timeslice to fit rr"
            .into(),
    );
    let (buffer, buffer_bounds) = buffer_of(steps, cores, &mut notes);
    Ok(Fit {
        demand_from,
        cpu_demand_s: cpu.as_ref().map(Estimate::of),
        low_load_response_s: Estimate::of(&r1),
        cpu_share_of_response: cpu.as_ref().map(|c| c.mean / r1.mean),
        cv: Estimate::of(&cv),
        throughput_max: xmax,
        plateau,
        servers_raw,
        cores,
        threads_per_core: 1,
        demand_s,
        delay_s,
        service,
        buffer,
        buffer_bounds,
        demand_slope_s_per_user,
        notes,
    })
}

/// The slope of the CPU per request over the step's users, by least squares
/// over every repeat, when its 95% interval excludes 0.
fn demand_slope(steps: &[Step]) -> Option<Estimate> {
    let pts: Vec<(f64, f64)> = steps
        .iter()
        .flat_map(|s| {
            let n = f64::from(s.load.users);
            s.repeats
                .iter()
                .filter_map(move |r| Some((n, r.cpu_ms? / 1e3)))
        })
        .collect();
    let distinct = steps
        .iter()
        .filter(|s| s.repeats.iter().any(|r| r.cpu_ms.is_some()))
        .count();
    if distinct < 3 || pts.len() < 4 {
        return None;
    }
    let m = pts.len() as f64;
    let (mx, my) = (
        pts.iter().map(|p| p.0).sum::<f64>() / m,
        pts.iter().map(|p| p.1).sum::<f64>() / m,
    );
    let sxx: f64 = pts.iter().map(|p| (p.0 - mx).powi(2)).sum();
    let sxy: f64 = pts.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
    if sxx <= 0.0 {
        return None;
    }
    let slope = sxy / sxx;
    let rss: f64 = pts
        .iter()
        .map(|p| (p.1 - my - slope * (p.0 - mx)).powi(2))
        .sum();
    let se = (rss / (m - 2.0) / sxx).sqrt();
    let half = servelab_dist::student::t_quantile(0.975, m - 2.0) * se;
    (slope.abs() > half).then_some(Estimate {
        value: slope,
        half_width: Some(half),
    })
}

/// The buffer from refusals: with closed users and no think time, at most N
/// requests are in the server at N users, so refusals first seen at N_f users
/// mean B < N_f − c, and none at the step before (N_ok users, the server
/// saturated, so about N_ok requests in it) mean B ≥ N_ok − c. Returns the
/// model's buffer and the bounds when identified; the notes say which.
fn buffer_of(steps: &[Step], cores: u32, notes: &mut Vec<String>) -> (u32, Option<(u32, u32)>) {
    let refused = |s: &Step| s.repeats.iter().any(|r| r.failed > r.timeouts);
    let Some(first) = steps.iter().position(refused) else {
        let most = steps.iter().map(|s| s.load.users).max().unwrap_or(1);
        notes.push(format!(
            "no request was refused up to {most} users: the buffer is at least {} and not \
             bounded above by the data (model: {UNBOUNDED_BUFFER})",
            most.saturating_sub(cores)
        ));
        return (UNBOUNDED_BUFFER, None);
    };
    let n_f = steps[first].load.users;
    if first == 0 {
        notes.push(format!(
            "requests failed already at {n_f} user(s): that is an error of the server, not a \
             full buffer; the buffer was not fitted (model: {UNBOUNDED_BUFFER})"
        ));
        return (UNBOUNDED_BUFFER, None);
    }
    let n_ok = steps[first - 1].load.users;
    let lo = n_ok.saturating_sub(cores);
    let hi = n_f.saturating_sub(cores + 1).max(lo);
    notes.push(format!(
        "requests were refused from {n_f} users on and none at {n_ok}: the buffer lies in \
         {lo}..={hi} (steps of doubling users bound it no closer); the model uses {hi} and \
         rejects at once when it is full"
    ));
    (hi, Some((lo, hi)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::predict::staircase::Repeat;
    use crate::protocol::{StopReason, Stopped};

    /// A step of `users` whose repeats saw throughputs `xs`, response time
    /// `r_ms` (CV 1) and `cpu_ms` per request.
    fn step(users: u32, xs: &[f64], r_ms: f64, cpu_ms: Option<f64>) -> Step {
        Step {
            load: Load {
                users,
                rate: None,
                think: Dist::ZERO,
                timeout: None,
                retries: None,
            },
            repeats: xs
                .iter()
                .map(|&x| Repeat {
                    completed_per_s: x,
                    goodput: x,
                    mean_ms: Some(r_ms),
                    stdev_ms: Some(r_ms),
                    p50_ms: Some(r_ms * 0.7),
                    p99_ms: Some(r_ms * 4.6),
                    cpu_ms,
                    failed: 0,
                    timeouts: 0,
                })
                .collect(),
            stopped: Stopped {
                n: xs.len() as u32,
                why: StopReason::Precision,
                relative_half_width: None,
            },
            checks: vec![],
            windows: vec![],
        }
    }

    #[test]
    fn two_servers_of_ten_ms_are_found_from_the_cpu_and_the_plateau() {
        let steps = [
            step(1, &[95.0, 96.0, 94.0], 10.5, Some(10.0)),
            step(2, &[180.0, 182.0, 181.0], 11.0, Some(10.1)),
            step(4, &[196.0, 198.0, 197.0], 20.0, Some(10.0)),
            step(8, &[199.0, 198.0, 200.0], 40.0, Some(9.9)),
            step(16, &[198.0, 199.0, 197.0], 80.0, Some(10.0)),
        ];
        let f = fit(&steps, true).unwrap();
        assert_eq!(f.demand_from, DemandFrom::Cpu);
        assert!(f.plateau);
        assert_eq!(f.cores, 2);
        // c / X_max, with X_max the best step's mean.
        assert!((f.demand_s - 2.0 / 199.0).abs() < 1e-6, "{}", f.demand_s);
        assert!(f.service.is_exponential());
        assert!(f.servers_raw.half_width.is_some());
        assert!(f.sim_command("4", &steps[0].load).contains("--cores 2 "));
        // 10.5 ms at one user, of which 2/199 s is the model's demand.
        assert!(
            (f.delay_s - (0.0105 - 2.0 / 199.0)).abs() < 2e-6,
            "{}",
            f.delay_s
        );
        assert!((f.model(&steps[0].load).think.mean() - f.delay_s).abs() < 1e-12);
    }

    #[test]
    fn without_cpu_the_demand_is_the_low_load_response_and_the_fit_says_so() {
        let steps = [
            step(1, &[95.0, 96.0, 94.0], 10.5, None),
            step(2, &[180.0, 182.0, 181.0], 11.0, None),
        ];
        let f = fit(&steps, false).unwrap();
        assert_eq!(f.demand_from, DemandFrom::ResponseTime);
        assert!(!f.plateau);
        assert!((f.demand_s - 0.0105).abs() < 1e-6);
        assert_eq!(f.delay_s, 0.0);
        assert!(f.notes.iter().any(|n| n.contains("not measured")));
        assert!(f.notes.iter().any(|n| n.contains("lower bound")));
    }

    /// The loaded machine of bench/results/2026-11-25: 4.9 ms of CPU in a
    /// 20.6 ms response at one user. The fit must say the model will be short.
    #[test]
    fn a_server_that_waits_for_its_cpu_is_named_in_the_notes() {
        let steps = [
            step(1, &[50.0, 48.0, 52.0], 20.6, Some(4.9)),
            step(2, &[55.0, 50.0, 60.0], 40.0, Some(4.9)),
        ];
        let f = fit(&steps, true).unwrap();
        assert!(
            f.notes.iter().any(|n| n.contains("waits for a CPU")),
            "{:?}",
            f.notes
        );
        let calm = [
            step(1, &[190.0, 191.0], 5.2, Some(4.9)),
            step(2, &[199.0, 198.0], 10.0, Some(4.9)),
        ];
        let f = fit(&calm, true).unwrap();
        assert!(!f.notes.iter().any(|n| n.contains("waits for a CPU")));
    }

    /// `step` with `failed` refused requests in each repeat.
    fn refusing(mut s: Step, failed: u64) -> Step {
        for r in &mut s.repeats {
            r.failed = failed;
        }
        s
    }

    #[test]
    fn refusals_after_a_clean_step_bound_the_buffer_and_the_model_rejects() {
        let steps = [
            step(1, &[95.0, 96.0, 94.0], 10.5, Some(10.0)),
            step(2, &[99.0, 98.0, 99.0], 20.0, Some(10.0)),
            step(4, &[99.0, 99.0, 98.0], 40.0, Some(10.0)),
            step(8, &[99.0, 98.0, 99.0], 80.0, Some(10.0)),
            refusing(step(16, &[99.0, 98.0, 99.0], 90.0, Some(10.0)), 40),
        ];
        let f = fit(&steps, true).unwrap();
        assert_eq!(f.cores, 1);
        // No refusal at 8 users: B >= 8 - 1; refusals at 16: B <= 16 - 1 - 1.
        assert_eq!(f.buffer_bounds, Some((7, 14)));
        assert_eq!(f.buffer, 14);
        assert_eq!(f.model(&steps[0].load).on_full, OnFull::Reject);
        assert!(
            f.sim_command("4", &steps[0].load)
                .contains("--buffer 14 --on-full reject"),
            "{}",
            f.sim_command("4", &steps[0].load)
        );
    }

    #[test]
    fn without_refusals_the_buffer_is_only_bounded_below_and_says_so() {
        let steps = [
            step(1, &[95.0, 96.0, 94.0], 10.5, Some(10.0)),
            step(2, &[99.0, 98.0, 99.0], 20.0, Some(10.0)),
            step(4, &[99.0, 99.0, 98.0], 40.0, Some(10.0)),
        ];
        let f = fit(&steps, true).unwrap();
        assert_eq!(f.buffer_bounds, None);
        assert_eq!(f.buffer, UNBOUNDED_BUFFER);
        assert_eq!(f.model(&steps[0].load).on_full, OnFull::Silent);
        assert!(
            f.notes.iter().any(|n| n.contains("at least 3")),
            "{:?}",
            f.notes
        );
        // Failures at one user are the server's errors, not a full buffer.
        let broken = [refusing(step(1, &[95.0, 96.0], 10.5, Some(10.0)), 3)];
        let f = fit(&broken, true).unwrap();
        assert_eq!(f.buffer_bounds, None);
        assert!(
            f.notes.iter().any(|n| n.contains("not fitted")),
            "{:?}",
            f.notes
        );
    }

    /// Repeats of `cpu` ms around `ms`, one per jitter.
    fn cpu_step(users: u32, ms: f64) -> Step {
        let mut s = step(users, &[99.0, 98.0, 99.0], 10.0, None);
        for (r, j) in s.repeats.iter_mut().zip([-0.2, 0.0, 0.2]) {
            r.cpu_ms = Some(ms + j);
        }
        s
    }

    #[test]
    fn a_demand_that_rises_with_the_load_is_fitted_and_a_flat_one_is_not() {
        // 10 ms plus 0.25 ms per user, with ±0.2 ms of noise.
        let rising: Vec<Step> = [1, 2, 4, 8, 16]
            .iter()
            .map(|&n| cpu_step(n, 10.0 + 0.25 * f64::from(n)))
            .collect();
        let f = fit(&rising, true).unwrap();
        let slope = f.demand_slope_s_per_user.expect("a slope");
        assert!((slope.value * 1e3 - 0.25).abs() < 0.02, "{slope:?}");
        assert!(slope.half_width.unwrap() < slope.value);
        assert!(f.notes.iter().any(|n| n.contains("depends on the load")));
        let flat: Vec<Step> = [1, 2, 4, 8, 16]
            .iter()
            .map(|&n| cpu_step(n, 10.0))
            .collect();
        let f = fit(&flat, true).unwrap();
        assert_eq!(f.demand_slope_s_per_user, None);
        assert!(
            f.notes.iter().any(|n| n.contains("no trend")),
            "{:?}",
            f.notes
        );
        // Without the server's CPU there is no slope to fit.
        assert_eq!(fit(&rising, false).unwrap().demand_slope_s_per_user, None);
    }

    #[test]
    fn an_open_rate_is_simulated_by_a_large_population_sending_at_that_rate() {
        let steps = [
            step(1, &[95.0, 96.0, 94.0], 10.5, Some(10.0)),
            step(2, &[99.0, 98.0, 99.0], 20.0, Some(10.0)),
        ];
        let f = fit(&steps, true).unwrap();
        let open = Load {
            rate: Some(50.0),
            ..steps[0].load.clone()
        };
        let m = f.model(&open);
        assert_eq!(m.users, OPEN_POPULATION);
        // N users thinking N/λ on average send λ while few are in the server.
        assert!((f64::from(m.users) / m.think.mean() - 50.0).abs() < 1e-9);
        assert!(m.think.is_exponential());
        let cmd = f.sim_command("1,2", &open);
        assert!(
            cmd.contains(&format!("--users {OPEN_POPULATION} ")),
            "{cmd}"
        );
        // A closed load keeps its users and its think time plus the delay.
        assert_eq!(f.model(&steps[1].load).users, 2);
    }
}
