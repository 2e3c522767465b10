//! The exact solution where queueing theory has one: a birth-death chain solved in
//! log space.
//!
//! # When the model is product-form
//!
//! With `n` requests on the server, the users think independently, so requests arrive
//! at rate `(N - n)/Z`. The chain on `n` is a birth-death process, and this module
//! solves it exactly, when the departure rate depends on `n` alone and equals
//! `mu * min(n, c)` (`mu = 1/S`). That holds exactly when all of these are true:
//!
//! - Service is exponential (a memoryless service makes the order of service and
//!   any preemption irrelevant to *how many* leave).
//! - There are no timeouts (abandonment and badput break the birth-death structure),
//!   and a full buffer drops silently: a blocked user goes back to thinking, which
//!   the insensitive think stage absorbs. A rejected user who waits `retry_wait`
//!   and retries (`OnFull::Reject`) spends that wait in a different state.
//! - The server is work-conserving over cores: some core is busy whenever fewer than
//!   `c` requests hold threads that could run. This is true with one thread per core
//!   (`k = 1`: the n threads sit on n different cores, since a new request takes a free
//!   thread, and free threads sit on idle cores), and with shared affinity (a global
//!   run queue, any idle core runs any ready thread) for any `k`. It is *false* with
//!   pinned threads and `k > 1`: departures happen on random cores, so states like
//!   "core 0 runs one thread and has a second ready, core 1 idle" occur, the rate is
//!   `mu * (cores with work)` < `mu * min(n, c)`, and the chain on `n` is not Markov.
//!   Seed 002's pinned 4x4 configuration is therefore not exact; the simulator shows
//!   how far it is from the shared bound.
//! - Round robin has zero context-switch cost, or one thread per core. Under
//!   exponential service the quantum does not matter to the number in system (each
//!   running thread completes at rate mu whatever it did before), so FCFS and RR share
//!   the same chain: same mean response time by Little's law (only the response-time
//!   *distribution* differs). With `k = 1` a thread never waits for its core, so round
//!   robin never preempts and the switch cost never arises: RR is FCFS. (Seed 002
//!   reports RR below FCFS at k = 1, 18 against 19 requests/s: its implementation must
//!   have charged a switch even with no other thread to switch to.)
//!
//! The think-time distribution may be anything: the think stage is an
//! infinite-server station, which is insensitive (BCMP; Engset for the loss case), so
//! only its mean `Z` enters. The integration tests check this with uniform think time.
//!
//! # Finite buffer
//!
//! The server holds at most `K = c*k + B` requests. An arrival in state `K` is dropped
//! and, in this exact model with no timeouts, the user returns to thinking (a blocked
//! arrival); the simulator does the same when no timeout is set. The chain is the
//! truncation of the infinite-buffer one to `0..=min(N, K)`.
//!
//! # Why log space
//!
//! `p_n` is proportional to `prod_{i<n} lambda_i / mu_{i+1}`; for N in the thousands
//! the products over- or underflow, and the classical recursions suffer: plain
//! load-dependent MVA computes `p_0` as `1 - sum p_n`, which cancels catastrophically
//! and goes negative for large N. Summing `ln p_n` terms and normalising with
//! log-sum-exp has no subtraction of nearly equal numbers, so every N is stable.

use serde::Serialize;

use crate::model::{Affinity, Model, OnFull, Policy};

/// The exact stationary metrics of a product-form configuration. Rates per second.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Exact {
    /// Completions per second (equal to goodput: no timeouts in the exact model).
    pub throughput: f64,
    /// Mean time on the server of an accepted request (Little: L / X).
    pub response_time: f64,
    /// Mean fraction of cores busy, X * S / c.
    pub utilisation: f64,
    /// Mean number of requests on the server.
    pub mean_in_system: f64,
    /// Mean number waiting in the buffer (requests without a thread).
    pub mean_buffer: f64,
    /// Blocked arrivals per second.
    pub drop_rate: f64,
    /// Fraction of arrivals blocked.
    pub drop_fraction: f64,
    /// The cap K = c*k + B used.
    pub capacity: u64,
}

/// Why the model has no exact solution here, or `None` when it has one.
pub fn not_exact_because(m: &Model) -> Option<&'static str> {
    if m.connections.held().is_some() {
        // A held worker's time is its connection's, think times included: see
        // `docs/sim-model.md` (a machine-repairman over connections, no product form).
        return match m.per_request() {
            Some(free) => not_exact_because(&free),
            None => Some("workers are held by kept-alive connections across think times"),
        };
    }
    if !m.service.is_exponential() {
        Some("service is not exponential")
    } else if !m.first_demand.is_zero() {
        // Even with one connection for the whole run, each user's first
        // request pays it: a transient the chain does not have.
        Some("a connection's first request has an extra demand")
    } else if !m.idle_demand.is_zero() {
        Some("a request after an idle gap has an extra demand (the service depends on the state)")
    } else if m.timeout.is_some() {
        Some("timeouts are on")
    } else if m.on_full == OnFull::Reject {
        Some("a full buffer rejects and users retry")
    } else if m.threads_per_core > 1 && m.affinity == Affinity::Pinned {
        Some("pinned threads with k > 1 are not work-conserving")
    } else if m.policy == Policy::RoundRobin && m.context_switch > 0.0 && m.threads_per_core > 1 {
        Some("round robin with a context-switch cost")
    } else if m.think.mean() <= 0.0 {
        Some("zero think time")
    } else {
        None
    }
}

/// Solves the machine-repairman chain of a product-form model; `None` otherwise (see
/// [`not_exact_because`]).
///
/// With held workers the chain is the one of the per-request model it behaves as
/// ([`Model::per_request`]: one request per connection, the backlog as the buffer; or
/// nobody ever waiting for a worker), and there is none otherwise.
pub fn solve(m: &Model) -> Option<Exact> {
    if not_exact_because(m).is_some() || m.validate().is_err() {
        return None;
    }
    let free = m.per_request()?;
    let m = &free;
    let n_users = u64::from(m.users);
    let top = n_users.min(m.capacity()) as usize;
    let (s, z, c) = (m.service.mean(), m.think.mean(), f64::from(m.cores));
    let lambda = |n: usize| (n_users as f64 - n as f64) / z;
    let busy = |n: usize| (n as f64).min(c);
    let mut logp = Vec::with_capacity(top + 1);
    logp.push(0.0);
    for n in 1..=top {
        let prev = logp[n - 1];
        logp.push(prev + lambda(n - 1).ln() - (busy(n) / s).ln());
    }
    let max = logp.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let norm = max + logp.iter().map(|l| (l - max).exp()).sum::<f64>().ln();
    let threads = m.threads() as f64;
    let (mut x, mut l, mut buf, mut attempts) = (0.0, 0.0, 0.0, 0.0);
    for (n, lp) in logp.iter().enumerate() {
        let p = (lp - norm).exp();
        x += p * busy(n) / s;
        l += p * n as f64;
        buf += p * (n as f64 - threads).max(0.0);
        attempts += p * lambda(n);
    }
    let drop_rate = if (top as u64) < n_users {
        (logp[top] - norm).exp() * lambda(top)
    } else {
        0.0
    };
    Some(Exact {
        throughput: x,
        response_time: l / x,
        utilisation: x * s / c,
        mean_in_system: l,
        mean_buffer: buf,
        drop_rate,
        drop_fraction: drop_rate / attempts,
        capacity: m.capacity(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use servelab_dist::Dist;

    fn model(users: u32, cores: u32, s: f64, z: f64) -> Model {
        Model {
            users,
            cores,
            service: Dist::exp(s),
            think: Dist::exp(z),
            ..Model::default()
        }
    }

    #[test]
    fn one_user_never_queues() {
        let e = solve(&model(1, 4, 0.2, 7.0)).unwrap();
        assert!((e.response_time - 0.2).abs() < 1e-12);
        assert!((e.throughput - 1.0 / 7.2).abs() < 1e-12);
    }

    #[test]
    fn two_users_one_core_matches_hand_computation() {
        // States 0,1,2: p1 = p0 * (2/Z) S, p2 = p1 * (1/Z) S. With S=1, Z=1: p = (1,2,2)/5.
        // X = (p1+p2)/S = 4/5, L = (2+4)/5 = 6/5, R = L/X = 1.5.
        let e = solve(&model(2, 1, 1.0, 1.0)).unwrap();
        assert!((e.throughput - 0.8).abs() < 1e-12);
        assert!((e.response_time - 1.5).abs() < 1e-12);
        assert!((e.mean_buffer - 0.4).abs() < 1e-12);
    }

    #[test]
    fn erlang_loss_engset_with_no_buffer() {
        // N=2, c=1, B=0: K=1, blocked arrivals think again. p1/p0 = 2 S/Z; S=Z=1: p=(1,2)/3.
        // Drop rate = lambda_1 p1 = 1 * 2/3; attempts = 2/3 + 2/3 = 4/3; drop fraction 1/2.
        let m = Model {
            buffer: 0,
            ..model(2, 1, 1.0, 1.0)
        };
        let e = solve(&m).unwrap();
        assert!((e.throughput - 2.0 / 3.0).abs() < 1e-12);
        assert!((e.drop_rate - 2.0 / 3.0).abs() < 1e-12);
        assert!((e.drop_fraction - 0.5).abs() < 1e-12);
        assert!((e.response_time - 1.0).abs() < 1e-12);
    }

    #[test]
    fn huge_populations_stay_finite_and_saturate() {
        for users in [10_000u32, 1_000_000] {
            let m = Model {
                buffer: 2_000_000,
                ..model(users, 4, 0.2, 7.0)
            };
            let e = solve(&m).unwrap();
            assert!(e.throughput.is_finite() && e.response_time.is_finite());
            assert!((e.throughput - 20.0).abs() < 1e-6, "{e:?}");
            // Saturated: R = N/X - Z.
            let r = f64::from(users) / 20.0 - 7.0;
            assert!((e.response_time - r).abs() / r < 1e-6);
        }
    }

    #[test]
    fn only_product_form_configurations_are_solved() {
        let base = model(50, 4, 0.2, 7.0);
        assert!(solve(&base).is_some());
        // A session alone changes nothing; a first-request demand does.
        assert!(
            solve(&Model {
                session: Some(10),
                ..base.clone()
            })
            .is_some()
        );
        let handshake = Model {
            session: Some(10),
            first_demand: servelab_dist::Dist::constant(0.01),
            ..base.clone()
        };
        assert!(solve(&handshake).is_none());
        assert_eq!(
            not_exact_because(&handshake),
            Some("a connection's first request has an extra demand")
        );
        assert!(
            solve(&Model {
                threads_per_core: 4,
                affinity: Affinity::Shared,
                ..base.clone()
            })
            .is_some()
        );
        assert!(
            solve(&Model {
                policy: Policy::RoundRobin,
                ..base.clone()
            })
            .is_some()
        );
        assert!(
            solve(&Model {
                think: Dist::uniform(4.0, 10.0),
                ..base.clone()
            })
            .is_some()
        );
        assert!(
            solve(&Model {
                threads_per_core: 4,
                ..base.clone()
            })
            .is_none()
        );
        assert!(
            solve(&Model {
                service: Dist::constant(0.2),
                ..base.clone()
            })
            .is_none()
        );
        assert!(
            solve(&Model {
                timeout: Some(Dist::exp(5.0)),
                ..base.clone()
            })
            .is_none()
        );
        let rr = Model {
            policy: Policy::RoundRobin,
            context_switch: 0.01,
            ..base
        };
        assert!(solve(&rr).is_some(), "k = 1: round robin never preempts");
        let rr4 = Model {
            threads_per_core: 4,
            affinity: Affinity::Shared,
            ..rr
        };
        assert_eq!(
            not_exact_because(&rr4),
            Some("round robin with a context-switch cost")
        );
    }
}
