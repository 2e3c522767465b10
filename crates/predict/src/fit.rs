//! Fitting seed 002's model to a staircase: the demand D (from the service
//! demand law D = U/X when the server's CPU is measured, per step and pooled,
//! cross-checked against the response time at one user and against c/X_max;
//! else from the plateau or the response time at one user), its
//! variability, the servers c from the plateau (c ≈ X_max·D), each with a 95%
//! interval, and the model as a `servelab sim` command line. The threads per
//! core k are fitted afterwards by simulation (`threads`).
//!
//! Where the data identify them, also the buffer (from the first step at
//! which requests were refused: with closed users and no think time at most N
//! requests are in the server, so refusals at N users and none at the step
//! before bound it) and a demand that changes with the load (the slope of the
//! CPU per request over the users, when its 95% interval excludes 0). Where
//! they do not, the notes say so and why, and the model keeps a value that
//! changes nothing rather than a made-up one.
//!
//! Why the model's demand is U/X when the CPU is measured: it is the
//! server's own CPU per request, measured at every step, and its interval is
//! a few times tighter than the plateau's (Apache, 2026-11-25: 22.8 ± 1.1 ms
//! against X_max 47.2 ± 5.4/s); taking c/X_max instead put the Apache model's
//! plateau 7% above the 43.5-44/s measured past the knee. c/X_max is used
//! only when the plateau c/D that U/X implies falls outside the measured
//! plateau's interval: the machine did not give the server c whole cores
//! (the load generator, the kernel or other work took part), and then the
//! measured plateau is what holds past the knee. All three demands are
//! reported, with the one used and why.

use serde::Serialize;
use servelab_dist::Dist;
use servelab_sim::{Connections, Model, OnFull, Policy};

use crate::delay::NonCpuDelay;
use crate::staircase::{Load, Repeat, Step};
use servelab_lab::sample::Sample;
use servelab_lab::{LabError, Result};

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
/// The round-robin quantum of a model with k > 1: the Apache
/// prototype matched with 4 ms, the order of Linux's scheduling slice (3 ms
/// base slice). With a demand of several quanta the mean response time
/// hardly depends on it (round robin is then close to processor sharing).
pub const RR_QUANTUM_S: f64 = 0.004;

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
    /// The server's CPU per request (service demand law D = U/X).
    Cpu,
    /// c/X_max: the measured plateau divided among the c servers.
    Plateau,
    /// The response time at one user (network time included).
    ResponseTime,
}

/// The CPU per request of one step (service demand law D = U/X).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StepDemand {
    /// The step's load in words (`8 users`, `120/s`).
    pub load: String,
    /// Its CPU per request over the repeats, seconds.
    pub cpu_s: Estimate,
}

/// Seed 002's model fitted to a staircase.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Fit {
    /// Where the model's demand came from.
    pub demand_from: DemandFrom,
    /// The server's CPU per request over the whole staircase (all its CPU over
    /// all its requests), seconds, with the 95% interval of the repeats.
    pub cpu_demand_s: Option<Estimate>,
    /// The server's CPU per request of each step, seconds.
    pub demand_per_step: Vec<StepDemand>,
    /// The response time at one user, seconds.
    pub low_load_response_s: Estimate,
    /// CPU demand over the low-load response time: near 1 when the server's
    /// CPU is all of the response time.
    pub cpu_share_of_response: Option<f64>,
    /// c/X_max, seconds, when the staircase reached the plateau.
    pub plateau_demand_s: Option<Estimate>,
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
    /// Scheduling of the k threads on a core: FCFS when k = 1, else round robin.
    pub policy: Policy,
    /// Round-robin quantum, seconds (unused with FCFS).
    pub quantum_s: f64,
    /// How k was fitted: every candidate's residuals (`None`: not fitted).
    pub threads_fit: Option<crate::kfit::ThreadsFit>,
    /// The model's demand per request, seconds.
    pub demand_s: f64,
    /// Time of a request outside the server at one user (network, kernel,
    /// client): the response time there minus the model's demand, at least 0.
    /// The model adds it to every response time, and the user spends it
    /// outside the server as it spends a think (a delay station).
    pub delay_s: f64,
    /// A response time at one user far above the CPU per request, and its
    /// likely cause (`None`: not seen, or the CPU was not measured).
    pub non_cpu_delay: Option<NonCpuDelay>,
    /// The model's service distribution.
    pub service: Dist,
    /// The model's buffer.
    pub buffer: u32,
    /// Whether connections hold the c·k threads (the W workers the probes
    /// found), with the keep-alive timeout and request limit; `free` when
    /// requests, not connections, queue for threads.
    pub connections: Connections,
    /// Extra demand of a request after an idle gap (the simulator's
    /// `idle_demand`): what the idle step's CPU per request has beyond the
    /// model's demand, when the server is slower after a gap (`crate::idle`);
    /// zero otherwise.
    pub idle_demand: Dist,
    /// The idle gap past which it is paid, seconds (the simulator's default,
    /// or twice the time outside the server when that is longer).
    pub idle_gap_s: f64,
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
            policy: self.policy,
            quantum: self.quantum_s,
            connections: self.connections,
            idle_demand: self.idle_demand,
            idle_gap: self.idle_gap_s,
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
        if self.policy == Policy::RoundRobin {
            s.push_str(&format!(
                " --policy rr --quantum {}ms",
                (self.quantum_s * 1e6).round() / 1e3
            ));
        }
        if !self.idle_demand.is_zero() {
            s.push_str(&format!(
                " --idle-demand {} --idle-gap {}ms",
                self.idle_demand,
                (self.idle_gap_s * 1e6).round() / 1e3
            ));
        }
        if let Some(h) = self.connections.held() {
            s.push_str(" --hold-workers");
            match h.keepalive_timeout {
                Some(t) => s.push_str(&format!(" --keepalive-timeout {}ms", (t * 1e3).round())),
                None => s.push_str(" --keepalive-timeout none"),
            }
            if let Some(n) = h.max_requests {
                s.push_str(&format!(" --max-requests-per-conn {n}"));
            }
        }
        s
    }
}

/// Fits the model to the staircase (first closed step: one user); the open
/// steps after the closed ones add to the CPU per request, and the threads
/// per core are fitted from them afterwards (`threads::fit`).
pub(crate) fn fit(all_steps: &[Step], cpu_measured: bool) -> Result<Fit> {
    let steps: Vec<Step> = all_steps.iter().filter(|s| !s.is_open()).cloned().collect();
    let steps = &steps[..];
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
    let cpu_of = |r: &Repeat| r.cpu_ms.map(|m| m / 1e3);
    let cpu_all: Vec<f64> = all_steps
        .iter()
        .flat_map(|s| s.repeats.iter().filter_map(cpu_of))
        .collect();
    // The service demand law over the whole staircase: all the CPU over all
    // the requests, so that a repeat in which the server stalled (a few
    // requests, its idle CPU divided among them) weighs as little as the
    // requests it finished; every window of the staircase is equally long.
    // The interval stays the one of the repeats' own figures.
    let (busy, done) = all_steps
        .iter()
        .flat_map(|s| s.repeats.iter())
        .filter_map(|r| Some((cpu_of(r)? * r.completed_per_s, r.completed_per_s)))
        .fold((0.0, 0.0), |(b, d), (rb, rd)| (b + rb, d + rd));
    let cpu = Sample::of(&cpu_all)
        .filter(|_| cpu_measured)
        .map(|s| Sample {
            mean: if done > 0.0 { busy / done } else { s.mean },
            ..s
        });
    let demand_per_step: Vec<StepDemand> = all_steps
        .iter()
        .filter(|_| cpu_measured)
        .filter_map(|s| {
            Some(StepDemand {
                load: s.load.describe(),
                cpu_s: Estimate::of(&s.sample(cpu_of)?),
            })
        })
        .collect();
    if cpu.is_none() {
        notes.push(
            "the server's CPU was not measured (no --pid or --cgroup): the demand is not known \
             from the service demand law; it comes from the plateau (c/X_max) or, before one, \
             from the response time at one user, which includes the network and the client"
                .into(),
        );
    }
    let non_cpu_delay = cpu.as_ref().and_then(|c| NonCpuDelay::of(c.mean, r1.mean));
    if let Some(d) = &non_cpu_delay {
        notes.push(format!(
            "the server's CPU is {:.0}% of the response time at one user ({:.3} of {:.3} ms): a \
             request waits for something else, likely {}; the model adds the gap as a constant \
             delay, so its response times below the knee are not to be trusted",
            d.cpu_s / d.response_s * 100.0,
            d.cpu_s * 1e3,
            d.response_s * 1e3,
            d.cause_in_words()
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
    let plateau = crate::staircase::on_plateau(steps);
    // The servers come from the best demand there is: the CPU's, else the
    // response time at one user.
    let d = cpu.as_ref().map_or_else(|| Estimate::of(&r1), Estimate::of);
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
    let plateau_demand_s = plateau.then(|| Estimate {
        value: f64::from(cores) / xmax.value,
        half_width: xmax.relative().map(|r| r * f64::from(cores) / xmax.value),
    });
    if !plateau {
        notes.push(format!(
            "the throughput still grew at {} users, the last step the budget allowed: c is a \
             lower bound",
            steps[n - 1].load.users
        ));
    }
    let (demand_from, demand, why) = choose_demand(cpu.as_ref(), &xmax, cores, plateau, &r1);
    // Microseconds are finer than any interval of the fit, and keep the
    // printed command readable.
    let demand_s = (demand * 1e6).round().max(1.0) / 1e6;
    notes.push(demand_note(
        cpu.as_ref(),
        &r1,
        plateau_demand_s.as_ref(),
        demand_from,
        &why,
    ));
    notes.push(format!(
        "c = X_max·D = {raw:.2} ± {:.2}, rounded to {cores}",
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
    let (buffer, buffer_bounds) = buffer_of(steps, cores, &mut notes);
    Ok(Fit {
        demand_from,
        cpu_demand_s: cpu.as_ref().map(Estimate::of),
        demand_per_step,
        low_load_response_s: Estimate::of(&r1),
        cpu_share_of_response: cpu.as_ref().map(|c| c.mean / r1.mean),
        plateau_demand_s,
        cv: Estimate::of(&cv),
        throughput_max: xmax,
        plateau,
        servers_raw,
        cores,
        threads_per_core: 1,
        policy: Policy::Fcfs,
        quantum_s: RR_QUANTUM_S,
        threads_fit: None,
        demand_s,
        delay_s,
        non_cpu_delay,
        service,
        buffer,
        connections: Connections::Free,
        idle_demand: Dist::ZERO,
        idle_gap_s: servelab_sim::DEFAULT_IDLE_GAP,
        buffer_bounds,
        demand_slope_s_per_user,
        notes,
    })
}

/// The model's demand, where it comes from, and why: the service demand law
/// when the server's CPU is measured and the plateau c/D it implies agrees
/// with the measured one; c/X_max when it does not (the server did not get c
/// whole cores) or when no CPU was measured; the response time at one user
/// when there is neither.
fn choose_demand(
    cpu: Option<&Sample>,
    xmax: &Estimate,
    cores: u32,
    plateau: bool,
    r1: &Sample,
) -> (DemandFrom, f64, String) {
    let c = f64::from(cores);
    match (cpu, plateau) {
        (Some(d), true) => {
            let implied = c / d.mean;
            let rel_d = d.relative_half_width().unwrap_or(0.0);
            // Both intervals count: the plateau's and the one c/D inherits.
            let slack = xmax
                .half_width
                .unwrap_or(crate::staircase::PRECISION * xmax.value)
                .hypot(implied * rel_d);
            if (implied - xmax.value).abs() <= slack {
                (
                    DemandFrom::Cpu,
                    d.mean,
                    format!(
                        "it is the server's own CPU per request, and the plateau c/D = {implied:.1}/s \
                         it implies agrees with the measured X_max = {:.1} ± {:.1}/s",
                        xmax.value,
                        xmax.half_width.unwrap_or(f64::NAN)
                    ),
                )
            } else {
                (
                    DemandFrom::Plateau,
                    c / xmax.value,
                    format!(
                        "the plateau c/D = {implied:.1}/s that U/X implies is outside the \
                         measured X_max = {:.1} ± {:.1}/s: the server did not get {cores} whole \
                         core(s) (other work or the load generator took part), so the measured \
                         plateau is kept",
                        xmax.value,
                        xmax.half_width.unwrap_or(f64::NAN)
                    ),
                )
            }
        }
        (Some(d), false) => (
            DemandFrom::Cpu,
            d.mean,
            "it is the server's own CPU per request, and with no plateau c/X_max is only a bound"
                .into(),
        ),
        (None, true) => (
            DemandFrom::Plateau,
            c / xmax.value,
            "no CPU was measured, and the response time at one user holds the network too".into(),
        ),
        (None, false) => (
            DemandFrom::ResponseTime,
            r1.mean,
            "no CPU was measured and no plateau was reached".into(),
        ),
    }
}

/// The three demands side by side, and which one the model uses.
fn demand_note(
    cpu: Option<&Sample>,
    r1: &Sample,
    plateau: Option<&Estimate>,
    from: DemandFrom,
    why: &str,
) -> String {
    let ms = |v: f64, h: Option<f64>| match h {
        Some(h) => format!("{:.3} ± {:.3} ms", v * 1e3, h * 1e3),
        None => format!("{:.3} ms", v * 1e3),
    };
    let law = cpu.map_or("not measured".into(), |c| ms(c.mean, c.half_width()));
    let at_one = ms(r1.mean, r1.half_width());
    let top = plateau.map_or("no plateau".into(), |p| ms(p.value, p.half_width));
    let used = match from {
        DemandFrom::Cpu => "U/X",
        DemandFrom::Plateau => "c/X_max",
        DemandFrom::ResponseTime => "R at one user",
    };
    format!(
        "demand: U/X = {law}, R at one user = {at_one}, c/X_max = {top}; the model uses {used} \
         because {why}"
    )
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
    use crate::staircase::Repeat;

    /// A step of `users` whose repeats saw throughputs `xs`, response time
    /// `r_ms` (CV 1) and `cpu_ms` per request.
    fn step(users: u32, xs: &[f64], r_ms: f64, cpu_ms: Option<f64>) -> Step {
        let repeats = xs
            .iter()
            .map(|&x| Repeat {
                completed_per_s: x,
                goodput: x,
                mean_ms: Some(r_ms),
                stdev_ms: Some(r_ms),
                p50_ms: Some(r_ms * 0.7),
                p99_ms: Some(r_ms * 4.6),
                cpu_ms,
                ..Default::default()
            })
            .collect();
        crate::staircase::closed_step(users, repeats)
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
        // c/D = 200/s lies in X_max's interval (199 ± 2.5): the model keeps
        // the service demand law's 10 ms: all the CPU over all the requests
        // (8698.2 ms over 870 requests a second of window).
        assert!((f.demand_s - 8.6982 / 870.0).abs() < 1e-6, "{}", f.demand_s);
        let p = f.plateau_demand_s.expect("c/X_max on a plateau");
        assert!((p.value - 2.0 / 199.0).abs() < 1e-9, "{p:?}");
        assert_eq!(f.demand_per_step.len(), 5);
        assert_eq!(f.demand_per_step[1].load, "2 users");
        assert!((f.demand_per_step[1].cpu_s.value - 0.0101).abs() < 1e-9);
        assert!(
            f.notes
                .iter()
                .any(|n| n.contains("the model uses U/X because")),
            "{:?}",
            f.notes
        );
        assert!(f.service.is_exponential());
        assert!(f.servers_raw.half_width.is_some());
        assert!(f.sim_command("4", &steps[0].load).contains("--cores 2 "));
        // 10.5 ms at one user, of which about 10 ms is the model's demand.
        assert!(
            (f.delay_s - (0.0105 - f.demand_s)).abs() < 2e-6,
            "{}",
            f.delay_s
        );
        assert!((f.model(&steps[0].load).think.mean() - f.delay_s).abs() < 1e-12);
    }

    /// Regression: gunicorn on a busy machine (2026-11-25 23:21) stalled in
    /// some repeats: 5.6 requests/s at 9.6 ms of CPU each against 5.7 ms at
    /// 140/s. The mean over repeats gave D = 6.8 ms; all the CPU over all the
    /// requests stays near 5.7 ms.
    #[test]
    fn a_stalled_repeat_weighs_as_little_as_the_requests_it_finished() {
        let mut stalled = step(8, &[140.0, 5.6, 140.0], 60.0, Some(5.7));
        stalled.repeats[1].cpu_ms = Some(9.6);
        let steps = [
            step(1, &[120.0, 130.0, 125.0], 8.0, Some(5.7)),
            step(2, &[140.0, 141.0, 139.0], 14.0, Some(5.7)),
            step(4, &[140.0, 139.0, 141.0], 28.0, Some(5.7)),
            stalled,
        ];
        let f = fit(&steps, true).unwrap();
        let d = f.cpu_demand_s.unwrap().value * 1e3;
        // (5.7 · Σx + 3.9 · 5.6) / Σx, Σx = 1,500.6 requests per second of window.
        assert!((d - (5.7 + 3.9 * 5.6 / 1500.6)).abs() < 1e-9, "{d}");
        assert!(d < 5.72, "{d}");
    }

    /// A server given part of a core: 8 ms of CPU per request, but a plateau
    /// of 100/s, not the 125/s that one whole core would give. The measured
    /// plateau holds past the knee, so the model takes c/X_max, and says why.
    #[test]
    fn a_plateau_the_cpu_cannot_explain_keeps_c_over_x_max_and_says_why() {
        let steps = [
            step(1, &[90.0, 91.0, 89.0], 11.0, Some(8.0)),
            step(2, &[99.0, 100.0, 101.0], 20.0, Some(8.0)),
            step(4, &[100.0, 101.0, 99.0], 40.0, Some(8.0)),
            step(8, &[100.0, 99.0, 101.0], 80.0, Some(8.0)),
        ];
        let f = fit(&steps, true).unwrap();
        assert_eq!(f.cores, 1);
        assert_eq!(f.demand_from, DemandFrom::Plateau);
        assert!((f.demand_s - 0.010).abs() < 1e-6, "{}", f.demand_s);
        assert!(
            f.notes
                .iter()
                .any(|n| n.contains("the model uses c/X_max") && n.contains("whole core")),
            "{:?}",
            f.notes
        );
    }

    #[test]
    fn without_cpu_the_demand_is_the_low_load_response_and_the_fit_says_so() {
        let steps = [
            step(1, &[95.0, 96.0, 94.0], 10.5, None),
            step(2, &[180.0, 182.0, 181.0], 11.0, None),
        ];
        let f = fit(&steps, false).unwrap();
        assert_eq!(f.demand_from, DemandFrom::ResponseTime);
        assert!(f.demand_per_step.is_empty());
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
            f.notes
                .iter()
                .any(|n| n.contains("a CPU that other work holds")),
            "{:?}",
            f.notes
        );
        assert_eq!(
            f.non_cpu_delay.map(|d| d.cause),
            Some(crate::delay::DelayCause::Wait)
        );
        let calm = [
            step(1, &[190.0, 191.0], 5.2, Some(4.9)),
            step(2, &[199.0, 198.0], 10.0, Some(4.9)),
        ];
        let f = fit(&calm, true).unwrap();
        assert!(!f.notes.iter().any(|n| n.contains("other work holds")));
        assert_eq!(f.non_cpu_delay, None);
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
