//! Settings that cannot change a run, found before it starts.
//!
//! A setting with no effect is a silent mistake: seed 002's example `--policy rr
//! --context-switch 0.1` with one thread per core printed output bit-identical to
//! FCFS, because round robin has nothing to preempt when a core has one thread, and
//! a reader took the identical figures for a finding. [`no_effect`] lists every such
//! setting of a model, each with one line that says why and what to do instead;
//! `servelab sim` prints them as warnings. A setting left at its default is never
//! reported (the defaults are FCFS, no timeout, a silent full buffer, pinned
//! threads, no switch cost), except the quantum, whose default cannot be told
//! from a given value here: the front end reports [`NoEffect::QuantumWithoutRoundRobin`]
//! itself when it was given.

use std::fmt;

use servelab_dist::Dist;

use crate::model::{Affinity, Model, OnAbandon, OnFull, Policy};

/// A setting that cannot change the run of a model.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum NoEffect {
    /// Round robin where no run queue ever holds more threads than it has cores:
    /// nothing is preempted, the run is FCFS's, bit for bit.
    RoundRobinAlone,
    /// Round robin with a constant service no longer than the quantum: every slice
    /// completes its request, nothing is preempted.
    QuantumCoversService {
        /// The quantum, seconds.
        quantum: f64,
        /// The constant service demand, seconds.
        service: f64,
    },
    /// A context-switch cost with FCFS, which never preempts: it is never paid.
    SwitchWithoutRoundRobin,
    /// A quantum with FCFS, which runs every request to completion.
    QuantumWithoutRoundRobin,
    /// A retry limit or retry wait where nobody ever retries: no timeout, and a full
    /// buffer drops silently (or is never full).
    RetryWithoutTimeout,
    /// `--on-abandon cancel` without a timeout: no user abandons a request.
    CancelWithoutTimeout,
    /// Shared affinity with one core: its threads share one run queue either way.
    SharedOneCore,
    /// `--on-full reject` where the buffer never fills: the server holds every user's
    /// request at once.
    RejectNeverFull {
        /// Requests the server holds, K = c k + B.
        capacity: u64,
        /// The most users of any point.
        users: u32,
    },
    /// A session length with no first-request demand: opening a connection
    /// costs nothing in the model, so how often it happens changes nothing.
    SessionWithoutFirstDemand,
    /// A held-worker setting (keep-alive timeout, request limit, backlog) given
    /// without held workers: the front end reports it, naming its flag.
    WithoutHeldWorkers(&'static str),
}

impl fmt::Display for NoEffect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NoEffect::RoundRobinAlone => write!(
                f,
                "--policy rr has no effect with 1 thread per core: round robin has nothing \
                 to preempt, so the run is FCFS's and --quantum and --context-switch change \
                 nothing; use --threads-per-core 2 or more"
            ),
            NoEffect::QuantumCoversService { quantum, service } => write!(
                f,
                "--policy rr has no effect: every service demand ({service} s) fits in one \
                 quantum ({quantum} s), so nothing is preempted; use a shorter --quantum"
            ),
            NoEffect::SwitchWithoutRoundRobin => write!(
                f,
                "--context-switch has no effect with --policy fcfs, which never preempts; \
                 use --policy rr"
            ),
            NoEffect::QuantumWithoutRoundRobin => write!(
                f,
                "--quantum has no effect with --policy fcfs, which runs every request to \
                 completion; use --policy rr"
            ),
            NoEffect::RetryWithoutTimeout => write!(
                f,
                "--retries and --retry-wait have no effect: without --timeout, and with a \
                 full buffer that drops silently, nobody ever retries"
            ),
            NoEffect::CancelWithoutTimeout => write!(
                f,
                "--on-abandon cancel has no effect without --timeout: no user abandons a request"
            ),
            NoEffect::SharedOneCore => write!(
                f,
                "--affinity shared has no effect with 1 core: its threads share one run queue \
                 either way"
            ),
            NoEffect::RejectNeverFull { capacity, users } => write!(
                f,
                "--on-full reject has no effect: the server holds K = c*k+B = {capacity} \
                 requests and there are at most {users} users, so the buffer is never full"
            ),
            NoEffect::SessionWithoutFirstDemand => write!(
                f,
                "--session has no effect without --first-demand: opening a connection costs \
                 nothing in the model; give the first request's extra demand"
            ),
            NoEffect::WithoutHeldWorkers(flag) => write!(
                f,
                "{flag} has no effect without --hold-workers: connections hold no worker, \
                 requests queue for threads"
            ),
        }
    }
}

/// The settings of `model` that cannot change its run, at every user count up to
/// `max_users` (a sweep's largest point). Retry settings count as set when they differ
/// from the defaults (no limit, no wait).
pub fn no_effect(model: &Model, max_users: u32) -> Vec<NoEffect> {
    let mut out = Vec::new();
    let never_full = model.capacity() >= u64::from(max_users);
    if model.policy == Policy::RoundRobin {
        if model.threads_per_core == 1 {
            out.push(NoEffect::RoundRobinAlone);
        } else if let Dist::Const(d) = model.service {
            if d.as_secs_f64() <= model.quantum {
                out.push(NoEffect::QuantumCoversService {
                    quantum: model.quantum,
                    service: d.as_secs_f64(),
                });
            }
        }
    } else if model.context_switch > 0.0 {
        out.push(NoEffect::SwitchWithoutRoundRobin);
    }
    let retries_set = model.retries.is_some() || !model.retry_wait.is_zero();
    if model.timeout.is_none() && retries_set && (model.on_full == OnFull::Silent || never_full) {
        out.push(NoEffect::RetryWithoutTimeout);
    }
    if model.timeout.is_none() && model.on_abandon == OnAbandon::Cancel {
        out.push(NoEffect::CancelWithoutTimeout);
    }
    if model.affinity == Affinity::Shared && model.cores == 1 {
        out.push(NoEffect::SharedOneCore);
    }
    if model.on_full == OnFull::Reject && never_full {
        out.push(NoEffect::RejectNeverFull {
            capacity: model.capacity(),
            users: max_users,
        });
    }
    // With held workers a session closes the client's connection, which frees its
    // worker: it matters without any first-request demand.
    if model.session.is_some() && model.first_demand.is_zero() && model.connections.held().is_none()
    {
        out.push(NoEffect::SessionWithoutFirstDemand);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_have_no_warning() {
        assert_eq!(no_effect(&Model::default(), 800), []);
    }

    #[test]
    fn each_setting_without_effect_is_found() {
        let rr = Model {
            policy: Policy::RoundRobin,
            context_switch: 0.1,
            ..Model::default()
        };
        assert_eq!(no_effect(&rr, 100), [NoEffect::RoundRobinAlone]);
        let rr_k4 = Model {
            threads_per_core: 4,
            ..rr.clone()
        };
        assert_eq!(no_effect(&rr_k4, 100), []);
        let session = Model {
            session: Some(10),
            ..Model::default()
        };
        assert_eq!(
            no_effect(&session, 100),
            [NoEffect::SessionWithoutFirstDemand]
        );
        let handshake = Model {
            first_demand: Dist::constant(130e-6),
            ..session
        };
        assert_eq!(no_effect(&handshake, 100), []);
        let short = Model {
            service: Dist::constant(0.2),
            ..rr_k4
        };
        assert!(matches!(
            no_effect(&short, 100)[..],
            [NoEffect::QuantumCoversService { .. }]
        ));
        let fcfs = Model {
            context_switch: 0.01,
            retries: Some(3),
            on_abandon: OnAbandon::Cancel,
            affinity: Affinity::Shared,
            cores: 1,
            ..Model::default()
        };
        assert_eq!(
            no_effect(&fcfs, 100),
            [
                NoEffect::SwitchWithoutRoundRobin,
                NoEffect::RetryWithoutTimeout,
                NoEffect::CancelWithoutTimeout,
                NoEffect::SharedOneCore
            ]
        );
        let reject = Model {
            on_full: OnFull::Reject,
            retry_wait: Dist::exp(1.0),
            ..Model::default()
        };
        assert!(matches!(
            no_effect(&reject, 200)[..],
            [
                NoEffect::RetryWithoutTimeout,
                NoEffect::RejectNeverFull {
                    capacity: 504,
                    users: 200
                }
            ]
        ));
        assert_eq!(no_effect(&reject, 800), []);
    }
}
