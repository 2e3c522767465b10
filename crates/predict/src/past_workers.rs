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
//!
//! Why three readings and not "nearer W or N": a server that holds workers
//! but closes a connection after a request limit (Apache's
//! `MaxKeepAliveRequests 100`) passes its workers on under load, so more than
//! W users get answers within the window and X·R lands between W and N
//! (5.89 ± 0.85 for W = 4, N = 8): that neither confirms W nor denies it.
//! The reading says so, and once the model is fitted the step is simulated as
//! it was measured ([`PastWorkers::expect`]): the model with W held workers,
//! the keep-alive timeout and the request limit should give the same X·R.

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
    /// What X·R says about W.
    pub reading: Reading,
    /// X·R of the model (W held, the probes' keep-alive timeout and request
    /// limit) simulated as the step was measured, and whether the measured
    /// X·R agrees with it within the two intervals.
    pub model_served_users: Option<Estimate>,
    /// Whether the measured and the model's X·R agree within their intervals.
    pub model_agrees: Option<bool>,
    /// The reading in words, as in the output and the report.
    pub summary: String,
}

/// How far below N an X·R still reads as N: the client's turn-around
/// between an answer and its next request, which R does not count, takes
/// X·R a little below the users it serves (below W, the same allowance is
/// "nearer W than N").
const NEAR_N: f64 = 0.05;

/// What the step's X·R says about the W workers the probes found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Reading {
    /// X·R is W: its interval holds W, or it is a little below W (a client
    /// that takes time between an answer and its next request: 3.32 for
    /// W = 4 at a load average of 10, which Little's law over the whole cycle
    /// counts and R does not) and nearer W than N. W confirmed.
    Held,
    /// X·R is above W (its interval excludes W) and below N (its interval
    /// ends more than 5% below N): workers are held, and passed on under load (a request
    /// limit per connection, or the keep-alive timeout), so more than W users
    /// were answered in the window.
    Passed,
    /// X·R is N (its interval reaches within 5% of N), or above it: every
    /// user was served, which does not confirm W.
    NotHeld,
}

impl Reading {
    /// Reads `served` users against `w` workers and `n` users.
    fn of(served: Estimate, w: f64, n: f64) -> Reading {
        let h = served.half_width.unwrap_or(0.0);
        let (lo, hi) = (served.value - h, served.value + h);
        let holds = |x: f64| lo <= x && x <= hi;
        let nearer_w = (served.value - w).abs() < (served.value - n).abs();
        if holds(w) || (served.value <= w && nearer_w) {
            Reading::Held
        } else if lo > w && hi < n * (1.0 - NEAR_N) {
            Reading::Passed
        } else {
            Reading::NotHeld
        }
    }
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
        let reading = served_users.map_or(Reading::NotHeld, |e| Reading::of(e, w, n));
        let mut past = PastWorkers {
            workers,
            step,
            served_users,
            goodput_at_w,
            reading,
            model_served_users: None,
            model_agrees: None,
            summary: String::new(),
        };
        past.summary = past.words();
        past
    }

    /// Whether the step says that connections do not hold workers under
    /// load: X·R measured (not merely missing) and at or near N.
    pub(crate) fn denies_held(&self) -> bool {
        self.reading == Reading::NotHeld && self.served_users.is_some()
    }

    /// The fit's note when the model does not hold the W workers the probes
    /// found, because this step served every user.
    pub(crate) fn not_modelled(&self) -> String {
        let served = self.served_users.map_or(String::new(), |e| {
            format!(
                "{:.2}{}",
                e.value,
                e.half_width.map_or(String::new(), |h| format!(" ± {h:.2}"))
            )
        });
        format!(
            "held workers not modelled: the probes found W = {w} (idle kept-alive connections \
             held, a fresh one unanswered), but {n} busy users with no think time were all \
             being served (X·R = {served}): the limit the idle probes saw did not hold under \
             load, so the model serves any number of connections. Users who think between \
             requests leave their connections idle part of the time, so past N = {w} such \
             users the server may serve fewer than the model says",
            w = self.workers,
            n = self.step.load.users,
        )
    }

    /// Sets the model's X·R for the step: its goodput and mean R (ms) over
    /// the answers, simulated as the step was measured.
    pub(crate) fn expect(&mut self, goodput: Estimate, mean_ms: Option<Estimate>) {
        let model = mean_ms.map(|r| {
            let value = goodput.value * r.value / 1e3;
            // Both factors' relative intervals, added in quadrature.
            let rel = ((goodput.half_width.unwrap_or(0.0) / goodput.value).powi(2)
                + (r.half_width.unwrap_or(0.0) / r.value).powi(2))
            .sqrt();
            Estimate {
                value,
                half_width: Some(value * rel).filter(|h| h.is_finite()),
            }
        });
        self.model_agrees = model.zip(self.served_users).map(|(m, s)| {
            (m.value - s.value).abs() <= m.half_width.unwrap_or(0.0) + s.half_width.unwrap_or(0.0)
        });
        self.model_served_users = model;
        self.summary = self.words();
    }

    /// The reading in words.
    fn words(&self) -> String {
        let step = &self.step;
        let workers = self.workers;
        let served_users = self.served_users;
        let goodput_at_w = self.goodput_at_w;
        let reading = match self.reading {
            Reading::Held => format!(
                "W = {workers} confirmed under load (the other {} waited at the accept \
                 queue, unanswered)",
                step.load.users.saturating_sub(workers)
            ),
            Reading::Passed => format!(
                "between W and N: connections hold workers and pass them on under load (a \
                 request limit per connection or the keep-alive timeout closes them), so more \
                 than W = {workers} users were answered in the window"
            ),
            Reading::NotHeld if self.denies_held() => {
                format!("this does not confirm W = {workers}: the model does not hold workers")
            }
            Reading::NotHeld => format!("this does not confirm W = {workers}"),
        };
        let held = if self.denies_held() {
            "without held workers".to_string()
        } else {
            format!("with W = {workers} held")
        };
        let model = match (self.model_served_users, self.model_agrees) {
            (Some(m), Some(agrees)) => format!(
                "; the model {held}, simulated as the step was measured, \
                 gives X·R = {:.2}{}: {}",
                m.value,
                m.half_width.map_or(String::new(), |h| format!(" ± {h:.2}")),
                if agrees { "agrees" } else { "does not agree" }
            ),
            _ => String::new(),
        };
        format!(
            "calibration past W: {} users with no think time gave {:.1}/s{} and R {} ms over \
             the answers, so X·R = {} users were being served (W = {workers} if connections \
             hold workers, {} if not): ",
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
        ) + &reading
            + &model
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
        assert_eq!(held.reading, Reading::Held, "{}", held.summary);
        assert!((held.served_users.unwrap().value - 4.0).abs() < 0.05);
        assert_eq!(held.goodput_at_w, Some(190.0));
        assert!(held.summary.contains("W = 4 confirmed"), "{}", held.summary);
        // A slow client's turn-around between answer and request: X·R a
        // little below W, still nearer W than N.
        let slow = PastWorkers::of(step(8, 17.0, 195.0), 4, &below);
        assert_eq!(slow.reading, Reading::Held, "{}", slow.summary);
        // Not held: all 8 served, R = 8/190 s.
        let free = PastWorkers::of(step(8, 190.0, 42.1), 4, &below);
        assert_eq!(free.reading, Reading::NotHeld, "{}", free.summary);
        assert!(
            free.summary.contains("does not confirm"),
            "{}",
            free.summary
        );
    }

    /// Three repeats at 190/s whose R gives X·R = each of `served`.
    fn spread(users: u32, served: [f64; 3]) -> Step {
        let repeats = served
            .iter()
            .map(|s| Repeat {
                goodput: 190.0,
                mean_ms: Some(s / 190.0 * 1e3),
                ..Default::default()
            })
            .collect();
        closed_step(users, repeats)
    }

    #[test]
    fn a_reading_between_w_and_n_is_neither_w_confirmed_nor_denied() {
        // Apache prefork, W = 4, MaxKeepAliveRequests 100, 8 users: 5.89 ±
        // 0.85 was called "confirmed" by the nearer-of-two rule.
        let passed = PastWorkers::of(spread(8, [5.55, 5.89, 6.23]), 4, &[]);
        assert_eq!(passed.reading, Reading::Passed, "{}", passed.summary);
        assert!(
            passed.summary.contains("between W and N"),
            "{}",
            passed.summary
        );
        assert!(!passed.summary.contains("confirmed"), "{}", passed.summary);
        // An interval that reaches W: confirmed.
        let wide = PastWorkers::of(spread(8, [3.0, 4.5, 6.0]), 4, &[]);
        assert_eq!(wide.reading, Reading::Held, "{}", wide.summary);
        // One that reaches N: not confirmed.
        let near_n = PastWorkers::of(spread(8, [6.9, 7.4, 7.9]), 4, &[]);
        assert_eq!(near_n.reading, Reading::NotHeld, "{}", near_n.summary);
    }

    #[test]
    fn the_model_s_own_reading_is_set_beside_the_measured_one() {
        use crate::fit::Estimate as E;
        let mut past = PastWorkers::of(spread(8, [5.55, 5.89, 6.23]), 4, &[]);
        let x = E {
            value: 190.0,
            half_width: Some(1.0),
        };
        let r = |ms: f64| {
            Some(E {
                value: ms,
                half_width: Some(0.1),
            })
        };
        // The model gives 190/s × 31 ms = 5.89: agrees.
        past.expect(x, r(31.0));
        assert_eq!(past.model_agrees, Some(true), "{}", past.summary);
        assert!(past.summary.contains("agrees"), "{}", past.summary);
        // The model gives 190/s × 21 ms = 3.99: does not.
        past.expect(x, r(21.0));
        assert_eq!(past.model_agrees, Some(false), "{}", past.summary);
        assert!(past.summary.contains("does not agree"), "{}", past.summary);
    }
}
