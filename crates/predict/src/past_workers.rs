//! The calibration step past the W workers that the probes found, and what
//! it says about W.
//!
//! Why a step past W: a staircase that never exceeds the worker count cannot
//! see the limit, and the probes' idle connections are not load. With closed
//! users and no think time a held connection is never idle, so the W users
//! that hold a worker are served back to back and the others wait at the
//! accept queue, unanswered for the whole window. By Little's law over the
//! users being served, X·R (R over the answered requests) is then the number
//! holding a worker: W, whatever N is, where a server without the limit
//! gives N. The step is kept out of the fit of the demand and of k, which
//! read steps where every user is served.

use serde::Serialize;

use crate::fit::Estimate;
use crate::staircase::Step;
use servelab_lab::sample::Sample;

/// The step past W and its reading.
#[derive(Debug, Clone, Serialize)]
pub struct PastWorkers {
    /// W, as the probes found it.
    pub workers: u32,
    /// The step: closed users with no think time, more than W.
    pub step: Step,
    /// X·R over the repeats (goodput times the mean R of the answers): the
    /// users being served. W when connections hold workers; N otherwise.
    pub served_users: Option<Estimate>,
    /// Goodput of the highest closed step at or below W, for comparison.
    pub goodput_at_w: Option<f64>,
    /// Whether X·R is nearer W than N. The two readings the step tells
    /// apart are W (held) and N = 2W (not held); X·R sits a little below
    /// W when the client takes time between an answer and its next request
    /// (on a busy machine: 3.32 for W = 4 at a load average of 10), which
    /// Little's law over the whole cycle would count and R does not.
    pub confirms: bool,
    /// The reading in words, as in the output and the report.
    pub summary: String,
}

impl PastWorkers {
    /// Reads `step` (more than `workers` closed users, no think time) against
    /// the W the probes found; `steps` are the staircase's other steps.
    pub(crate) fn of(step: Step, workers: u32, steps: &[Step]) -> PastWorkers {
        let served: Vec<f64> = step
            .repeats
            .iter()
            .filter_map(|r| Some(r.goodput * r.mean_ms? / 1e3))
            .collect();
        let served_users = Sample::of(&served).map(|s| Estimate {
            value: s.mean,
            half_width: s.half_width(),
        });
        let goodput_at_w = steps
            .iter()
            .filter(|s| !s.is_open() && s.load.users <= workers)
            .max_by_key(|s| s.load.users)
            .map(Step::goodput);
        let w = f64::from(workers);
        let n = f64::from(step.load.users);
        let confirms = served_users.is_some_and(|e| (e.value - w).abs() < (e.value - n).abs());
        let summary = format!(
            "calibration past W: {} users with no think time gave {:.1}/s{} and R {} ms over \
             the answers, so X·R = {} users were being served (W = {workers} if connections \
             hold workers, {} if not): {}",
            step.load.users,
            step.goodput(),
            goodput_at_w.map_or(String::new(), |x| format!(" ({x:.1}/s at or below W)")),
            step.sample(|r| r.mean_ms)
                .map_or("-".into(), |s| format!("{:.2}", s.mean)),
            served_users.map_or("-".into(), |e| format!(
                "{:.2}{}",
                e.value,
                e.half_width.map_or(String::new(), |h| format!(" ± {h:.2}"))
            )),
            step.load.users,
            if confirms {
                format!(
                    "W = {workers} confirmed under load (the other {} waited at the accept \
                     queue, unanswered)",
                    step.load.users.saturating_sub(workers)
                )
            } else {
                format!("this does not confirm W = {workers}")
            }
        );
        PastWorkers {
            workers,
            step,
            served_users,
            goodput_at_w,
            confirms,
            summary,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::staircase::{Repeat, closed_step};

    fn step(users: u32, x: f64, r_ms: f64) -> Step {
        let repeats = [0.98, 1.0, 1.02]
            .iter()
            .map(|j| Repeat {
                goodput: x * j,
                mean_ms: Some(r_ms / j),
                ..Default::default()
            })
            .collect();
        closed_step(users, repeats)
    }

    #[test]
    fn served_users_read_w_when_workers_are_held_and_n_when_they_are_not() {
        let below = [step(4, 190.0, 21.0)];
        // Held: 4 users served at 190/s, R = 4/190 s over the answers.
        let held = PastWorkers::of(step(8, 190.0, 21.05), 4, &below);
        assert!(held.confirms, "{}", held.summary);
        assert!((held.served_users.unwrap().value - 4.0).abs() < 0.05);
        assert_eq!(held.goodput_at_w, Some(190.0));
        assert!(held.summary.contains("W = 4 confirmed"), "{}", held.summary);
        // A slow client's turn-around between answer and request: X·R a
        // little below W, still nearer W than N.
        let slow = PastWorkers::of(step(8, 17.0, 195.0), 4, &below);
        assert!(slow.confirms, "{}", slow.summary);
        // Not held: all 8 served, R = 8/190 s.
        let free = PastWorkers::of(step(8, 190.0, 42.1), 4, &below);
        assert!(!free.confirms, "{}", free.summary);
        assert!(
            free.summary.contains("does not confirm"),
            "{}",
            free.summary
        );
    }
}
