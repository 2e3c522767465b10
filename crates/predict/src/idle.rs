//! The cost of an idle gap: whether the server answers a request that
//! follows an idle gap (a user's think) more slowly, or with more CPU, than
//! one that follows another request back to back.
//!
//! Why a step of its own: the staircase's closed steps have no think time,
//! so the server never idles between a user's requests, and the fit's one
//! demand is the busy server's. The quiet zoo (2026-12-03,
//! `bench/results/2026-12-03/zoo-quiet`) showed the servers people run
//! answering more slowly after an idle gap: at one user thinking 20 ms,
//! Apache event without keep-alive took 7.42 ± 2.45 ms against 5.57 ± 0.06
//! back to back, Apache worker with keep-alive 7.32 ± 0.83 against
//! 5.20 ± 0.45, gunicorn gthread 12.22 ± 4.86 against 7.98 ± 0.98; and
//! Apache event's CPU per request was 7.46 ± 1.20 ms in an open step (idle
//! between arrivals) against 5.58 back to back. A model with the busy
//! demand then predicts too little time at low loads and too much
//! throughput below the knee, and every one of those servers missed its
//! targets there. The step measures one user thinking the asked think time
//! (as the validation will), which every request meets idle, and sets its
//! CPU per request and response time beside the back-to-back ones. It is
//! kept out of the demand's fit. Where the gap costs more than its interval,
//! the output says so first, and where that cost is CPU (the step's CPU per
//! request above the model's demand beyond its interval) the model takes it
//! in: the simulator's `idle_demand`, paid by a request that starts on a core
//! idle for longer than `idle_gap` ([`IdleGap::apply`]).

use serde::Serialize;

use servelab_dist::Dist;

use crate::fit::{Estimate, Fit};
use crate::staircase::Step;
use servelab_lab::sample::Sample;

/// A difference smaller than this share of the back-to-back figure is not
/// worth a warning even when the intervals tell it apart.
const WORTH: f64 = 0.05;

/// The idle step and what it says.
#[derive(Debug, Clone, Serialize)]
pub struct IdleGap {
    /// The step: one closed user thinking between requests.
    pub step: Step,
    /// CPU per request after an idle gap (U/X over the step's repeats), ms.
    pub idle_cpu_ms: Option<Estimate>,
    /// CPU per request back to back (the closed steps with no think time,
    /// their repeats pooled), ms.
    pub busy_cpu_ms: Option<Estimate>,
    /// Mean response time after an idle gap, ms.
    pub idle_r_ms: Option<Estimate>,
    /// Mean response time of one user back to back, ms.
    pub busy_r_ms: Option<Estimate>,
    /// Idle minus busy CPU per request, ms, with the half-width of the
    /// difference (the two half-widths in quadrature).
    pub extra_cpu_ms: Option<Estimate>,
    /// Idle minus busy response time, ms, likewise.
    pub extra_r_ms: Option<Estimate>,
    /// Whether either difference is positive beyond its interval and larger
    /// than 5% of the back-to-back figure: the model's one demand will be
    /// optimistic below the knee.
    pub costs_more: bool,
    /// The reading in words.
    pub summary: String,
}

impl IdleGap {
    /// Reads `step` (one user thinking) against the closed no-think `steps`.
    pub(crate) fn of(step: Step, steps: &[Step]) -> IdleGap {
        let busy: Vec<&Step> = steps
            .iter()
            .filter(|s| !s.is_open() && s.load.think.is_zero())
            .collect();
        let pooled: Vec<f64> = busy
            .iter()
            .flat_map(|s| s.repeats.iter().filter_map(|r| r.cpu_ms))
            .collect();
        let est = |s: Option<Sample>| {
            s.map(|s| Estimate {
                value: s.mean,
                half_width: s.half_width(),
            })
        };
        let idle_cpu_ms = est(step.sample(|r| r.cpu_ms));
        let busy_cpu_ms = est(Sample::of(&pooled));
        let idle_r_ms = est(step.sample(|r| r.mean_ms));
        let busy_r_ms = est(busy
            .iter()
            .find(|s| s.load.users == 1)
            .and_then(|s| s.sample(|r| r.mean_ms)));
        let extra_cpu_ms = difference(idle_cpu_ms, busy_cpu_ms);
        let extra_r_ms = difference(idle_r_ms, busy_r_ms);
        let worse = |d: Option<Estimate>, base: Option<Estimate>| {
            d.zip(base).is_some_and(|(d, b)| {
                d.half_width.is_some_and(|h| d.value - h > 0.0) && d.value > WORTH * b.value
            })
        };
        let costs_more = worse(extra_cpu_ms, busy_cpu_ms) || worse(extra_r_ms, busy_r_ms);
        let mut gap = IdleGap {
            step,
            idle_cpu_ms,
            busy_cpu_ms,
            idle_r_ms,
            busy_r_ms,
            extra_cpu_ms,
            extra_r_ms,
            costs_more,
            summary: String::new(),
        };
        gap.summary = gap.words();
        gap
    }

    /// Gives the model the idle step's cost: the extra demand its CPU per
    /// request has beyond the model's demand, when the server is slower after
    /// a gap and that extra is positive beyond the step's interval. The note
    /// says what was set, or why nothing was.
    pub(crate) fn apply(&self, fit: &mut Fit) -> Option<String> {
        if !self.costs_more {
            return None;
        }
        let d_ms = fit.demand_s * 1e3;
        let note = match self.idle_cpu_ms {
            Some(c) if c.value - c.half_width.unwrap_or(f64::INFINITY) > d_ms => {
                let extra_s = (c.value - d_ms) / 1e3;
                fit.idle_demand = Dist::constant(extra_s);
                // Back to back the server idles for the time outside it; the
                // gap must be longer than that.
                fit.idle_gap_s = servelab_sim::DEFAULT_IDLE_GAP.max(2.0 * fit.delay_s);
                format!(
                    "idle gap: a request after the server idled {:.1} ms or more pays {:.3} ms \
                     more CPU in the model (the idle step's {:.3} ± {:.3} ms per request \
                     against the model's demand {d_ms:.3} ms)",
                    fit.idle_gap_s * 1e3,
                    extra_s * 1e3,
                    c.value,
                    c.half_width.unwrap_or(0.0)
                )
            }
            _ => "idle gap: the server is slower after an idle gap, but its CPU per request \
                  there is not above the model's demand beyond its interval (a wait, not CPU, or \
                  too few repeats): the model does not take it in"
                .to_string(),
        };
        fit.notes.push(note.clone());
        Some(note)
    }

    fn words(&self) -> String {
        let f = |e: Option<Estimate>| {
            e.map_or("not measured".into(), |e| {
                format!(
                    "{:.3}{}",
                    e.value,
                    e.half_width.map_or(String::new(), |h| format!(" ± {h:.3}"))
                )
            })
        };
        let head = format!(
            "idle gap: one user thinking {} between requests: CPU per request {} ms against \
             {} back to back (difference {}); response time {} ms against {} (difference {})",
            self.step.load.think,
            f(self.idle_cpu_ms),
            f(self.busy_cpu_ms),
            f(self.extra_cpu_ms),
            f(self.idle_r_ms),
            f(self.busy_r_ms),
            f(self.extra_r_ms),
        );
        if self.costs_more {
            format!(
                "{head}: this server is slower after an idle gap than back to back; a model \
                 with the busy server's demand alone predicts too little time and too much \
                 throughput below the knee"
            )
        } else {
            format!("{head}: no cost of an idle gap beyond the intervals")
        }
    }
}

/// `a − b` with the half-widths in quadrature; `None` without both values.
fn difference(a: Option<Estimate>, b: Option<Estimate>) -> Option<Estimate> {
    let (a, b) = a.zip(b)?;
    Some(Estimate {
        value: a.value - b.value,
        half_width: a
            .half_width
            .zip(b.half_width)
            .map(|(x, y)| (x * x + y * y).sqrt()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::staircase::{Load, Repeat, closed_step, fixture_step};
    use servelab_dist::Dist;

    /// Three repeats of `r_ms` and `cpu_ms` (±2%).
    fn repeats(r_ms: f64, cpu_ms: f64) -> Vec<Repeat> {
        [0.98, 1.0, 1.02]
            .iter()
            .map(|j| Repeat {
                goodput: 100.0,
                mean_ms: Some(r_ms * j),
                cpu_ms: Some(cpu_ms * j),
                ..Default::default()
            })
            .collect()
    }

    fn thinking(r_ms: f64, cpu_ms: f64) -> Step {
        let load = Load {
            think: Dist::exp(0.02),
            ..Load::closed(1)
        };
        fixture_step(load, repeats(r_ms, cpu_ms))
    }

    #[test]
    fn a_server_slower_after_an_idle_gap_is_told_from_one_that_is_not() {
        let busy = [
            closed_step(1, repeats(5.6, 5.6)),
            closed_step(2, repeats(11.0, 5.5)),
        ];
        // Apache event without keep-alive: 7.4 ms after a think, 5.6 back to back.
        let slow = IdleGap::of(thinking(7.4, 7.4), &busy);
        assert!(slow.costs_more, "{}", slow.summary);
        let extra = slow.extra_cpu_ms.unwrap();
        assert!((extra.value - 1.85).abs() < 0.01, "{extra:?}");
        assert!(
            slow.summary.contains("slower after an idle gap"),
            "{}",
            slow.summary
        );
        // The model takes the CPU the gap costs beyond its own demand.
        let mut fit = crate::held::one_core();
        fit.demand_s = 0.0056;
        let note = slow.apply(&mut fit).unwrap();
        assert!((fit.idle_demand.mean() - 0.0018).abs() < 1e-9, "{note}");
        assert!(
            fit.sim_command("1", &Load::closed(1))
                .contains("--idle-demand")
        );

        // The same figures after a think: nothing to say.
        let same = IdleGap::of(thinking(5.6, 5.55), &busy);
        assert!(!same.costs_more, "{}", same.summary);
        assert!(
            same.summary.contains("no cost of an idle gap"),
            "{}",
            same.summary
        );
        // Nothing to take from a server that is not slower.
        let mut plain = crate::held::one_core();
        assert_eq!(same.apply(&mut plain), None);
        assert!(plain.idle_demand.is_zero());
        // Faster after a gap is not a warning either.
        let faster = IdleGap::of(thinking(4.0, 4.0), &busy);
        assert!(!faster.costs_more, "{}", faster.summary);
    }
}
