//! The four steps in order: check the URL and the `--pid`, probe the
//! architecture, measure the staircase, fit, predict, validate, and write the
//! results.

use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use servelab_lab::{LabError, Result};

use crate::architecture::{self, Architecture};
use crate::cpu_source::CpuSource;
use crate::fit::{self, Fit};
use crate::forecast;
use crate::held;
use crate::idle;
use crate::listener;
use crate::outcome::{Outcome, PredictOptions, Validation};
use crate::past_workers;
use crate::probe;
use crate::progress;
use crate::report;
use crate::staircase::{self, Load};
use crate::threads;
use crate::validate;

/// Default measurement time of the fit's staircase.
pub const DEFAULT_BUDGET: Duration = Duration::from_secs(60);
/// Longest measurement time of the staircase or of the validation: an hour
/// of load on someone's server is already more than a typing slip should cost.
pub const MAX_BUDGET: Duration = Duration::from_secs(3600);

/// Probes, measures the staircase, fits, predicts, validates and writes the
/// results; the error says why any step could not go on. Ctrl-C stops the
/// measurement at the end of the request in flight.
pub fn run(opts: &PredictOptions) -> Result<Outcome> {
    for b in [Some(opts.budget), opts.validate_budget]
        .into_iter()
        .flatten()
    {
        if b > MAX_BUDGET || b.is_zero() {
            return Err(LabError::Other(format!(
                "a budget of {b:?} is outside 0 s < budget <= {} s",
                MAX_BUDGET.as_secs()
            )));
        }
    }
    let stop = Arc::new(AtomicBool::new(false));
    let _signals = servelab_lab::run::Signals::register(&stop)?;
    let stop = &stop;
    let port = url_port(&opts.url)?;
    if let CpuSource::Pids(pids) = &opts.cpu {
        for &pid in pids {
            if let Some(why) = listener::not_listening(pid, port) {
                return Err(LabError::Other(why));
            }
        }
    }
    opts.cpu.read_ns()?;
    probe::probe(&opts.url)?;
    let (started_utc, stamp) = servelab_lab::machine::utc_now();
    let dir = report::make_dir(opts.out.as_deref(), &stamp)?;
    let total = opts.budget + opts.validate_budget.unwrap_or_default();
    let progress = progress::Progress::new(opts.progress, total);
    let bench = staircase::Bench {
        url: &opts.url,
        cpu: &opts.cpu,
        stop,
        progress: &progress,
        phase: "calibration",
    };
    progress
        .step("probes: holding idle connections to find the workers and the keep-alive timeout");
    let architecture = architecture::find(&opts.url, port, opts.budget, &|l| progress.step(l))?;
    // The probes are part of the calibration's budget; the staircase keeps
    // at least a quarter of it.
    let probed = Duration::from_secs_f64(architecture.probe_s);
    let staircase_budget = opts.budget.saturating_sub(probed).max(opts.budget / 4);
    let asked = (!opts.load.think.is_zero()).then_some(opts.load.think);
    let staircase::Staircase { steps, past, idle } =
        bench.staircase(staircase_budget, architecture.held_workers(), asked)?;
    let idle = idle.map(|step| idle::IdleGap::of(step, &steps));
    if let Some(g) = &idle {
        progress.step(g.summary.clone());
    }
    // The evidence past W: the extra step, or a closed step of the
    // staircase that already went past W (W = 1, say).
    let mut past_workers = architecture.held_workers().and_then(|w| {
        let step = past.or_else(|| {
            steps
                .iter()
                .find(|s| !s.is_open() && s.load.users > w)
                .cloned()
        })?;
        Some(past_workers::PastWorkers::of(step, w, &steps))
    });
    let mut fit = fit::fit(&steps, opts.cpu.measured())?;
    progress.step("fit: fitting the threads per core by simulation");
    threads::fit(&mut fit, &steps)?;
    // The probes' W is seen on idle connections; the step past W is the
    // evidence under load. Where that step served every user (Apache event
    // stopped answering at 12 idle kept-alive connections, ThreadsPerChild ×
    // (1 + AsyncRequestWorkerFactor), and served 21 ± 2 of 24 busy ones),
    // holding W would put a limit in the model that the server did not show.
    match past_workers.as_ref().filter(|p| p.denies_held()) {
        // The reason is the warning's (`forecast::warnings`), said once.
        Some(p) => fit.notes.push(format!(
            "held workers not modelled: the step past W = {} served every user (see the warning)",
            p.workers
        )),
        None => {
            held::apply(&mut fit, &architecture);
        }
    }
    let idle_note = idle.as_ref().and_then(|g| g.apply(&mut fit));
    if let Some(note) = &idle_note {
        progress.step(note.clone());
    }
    // The step past W against the fitted model (W held, the keep-alive
    // timeout and the request limit), simulated as the step was measured.
    if let Some(p) = &mut past_workers
        && let Some(window) = p.step.window_s
    {
        let f = forecast::as_measured(
            &fit,
            &architecture,
            std::slice::from_ref(&p.step.load),
            Duration::from_secs_f64(window),
        )?;
        if let Some(f) = f.first() {
            p.expect(f.goodput, f.mean_ms);
        }
    }
    let mut architecture = architecture;
    if let Some(p) = &past_workers {
        architecture.how.push(p.summary.clone());
        progress.step(p.summary.clone());
    }
    progress.step(format!(
        "fit: c = {}, k = {}, D = {:.3} ms; simulating the predictions",
        fit.cores,
        fit.threads_per_core,
        fit.demand_s * 1e3
    ));
    let mut loads: Vec<Load> = opts
        .users
        .iter()
        .map(|&users| Load {
            users,
            ..opts.load.clone()
        })
        .collect();
    let open = validate::open_loads(&opts.rates, &opts.load);
    loads.extend(open.iter().cloned());
    let forecasts = forecast::forecast(&fit, &architecture, &loads)?;
    let knee_users = forecast::knee(&fit, &opts.load);
    let slo_users = match opts.slo {
        Some(slo) => forecast::largest_meeting(&fit, &opts.load, slo)?,
        None => None,
    };
    let user_list: Vec<String> = opts.users.iter().map(u32::to_string).collect();
    let sim_command = fit.sim_command(&user_list.join(","), &opts.load);
    let validation = match opts.validate_budget {
        None => None,
        Some(budget) => {
            let bench = staircase::Bench {
                phase: "validation",
                ..bench
            };
            Some(validation(
                &bench,
                &fit,
                &architecture,
                &opts.load,
                &open,
                budget,
                idle.as_ref(),
            )?)
        }
    };
    progress.finish();
    let mut warnings = forecast::warnings(
        &fit,
        &architecture,
        past_workers.as_ref(),
        knee_users,
        &opts.load,
    );
    if let Some(g) = idle.as_ref().filter(|g| g.costs_more) {
        warnings.push(match &idle_note {
            Some(note) => format!("{}. {note}", g.summary),
            None => g.summary.clone(),
        });
    }
    let outcome = Outcome {
        warnings,
        architecture,
        url: opts.url.clone(),
        command: opts.command.clone(),
        started_utc,
        cpu: opts.cpu.clone(),
        staircase: steps,
        past_workers,
        idle,
        fit,
        sim_command,
        forecasts,
        knee_users,
        slo: opts.slo,
        slo_users,
        validation,
        dir: dir.clone(),
    };
    report::write(&dir, &outcome)?;
    Ok(outcome)
}

/// Measures the validation loads within `budget` and sets them against the fit.
fn validation(
    bench: &staircase::Bench<'_>,
    fit: &Fit,
    arch: &Architecture,
    base: &Load,
    open: &[Load],
    budget: Duration,
    idle: Option<&idle::IdleGap>,
) -> Result<Validation> {
    let mut loads = validate::loads(fit, base);
    if let Some(w) = arch.held_workers() {
        validate::straddle(&mut loads, w);
    }
    loads.extend(open.iter().cloned());
    let t = staircase::Timing::for_budget(budget, loads.len() as u32);
    let predicted = forecast::as_measured(fit, arch, &loads, t.window)?;
    let steady = forecast::forecast(fit, arch, &loads)?;
    let deadline = Instant::now() + budget;
    let mut points = Vec::new();
    for ((load, p), s) in loads.iter().zip(predicted).zip(steady) {
        let step = bench.step(load, t, deadline)?;
        points.push(validate::point(&step, p, s));
    }
    let table = validate::table(&points, fit, t.window.as_secs_f64(), idle);
    Ok(Validation {
        points,
        table,
        window_s: t.window.as_secs_f64(),
    })
}

/// The TCP port of an `http://` URL (80 when it names none).
fn url_port(url: &str) -> Result<u16> {
    let rest = url
        .strip_prefix("http://")
        .ok_or_else(|| LabError::Other(format!("`{url}` is not an http:// URL")))?;
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    let host_port = authority.rsplit('@').next().unwrap_or(authority);
    // [::1]:8080, host:8080, or no port.
    let port = match host_port.rsplit_once(':') {
        Some((host, p)) if !host.ends_with(':') && !p.contains(']') => Some(p),
        _ => None,
    };
    match port {
        None | Some("") => Ok(80),
        Some(p) => p
            .parse()
            .map_err(|_| LabError::Other(format!("`{url}`: the port `{p}` is not a number"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_port_is_read_from_the_url() {
        assert_eq!(url_port("http://127.0.0.1:8080/x").unwrap(), 8080);
        assert_eq!(url_port("http://example.org/").unwrap(), 80);
        assert_eq!(url_port("http://[::1]:9000/").unwrap(), 9000);
        assert_eq!(url_port("http://[::1]/").unwrap(), 80);
        assert!(url_port("https://x/").is_err());
        assert!(url_port("http://x:99999/").is_err());
    }
}
