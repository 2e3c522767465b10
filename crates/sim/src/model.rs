//! The model of seed 002: a closed population of users and a multithreaded server.
//!
//! Users think, send one request, and wait for the answer or for their timeout. The
//! server has `cores` cores, `threads_per_core` threads on each (a thread serves one
//! request at a time: thread per request), and one shared buffer of `buffer` waiting
//! requests. A request that finds every thread taken waits in the buffer.
//!
//! The words mean what they mean to `servelab serve` and `servelab load`:
//! - A request that finds the buffer full is *dropped*. [`OnFull::Silent`]: its user
//!   only learns of it at the timeout (or, with no timeout, goes straight back to
//!   thinking: a blocked arrival, as in the exact model). [`OnFull::Reject`]: the
//!   server answers at once, as the real pool answers 503, and the user waits
//!   `retry_wait` and retries.
//! - A user whose timeout fires *abandons* its attempt, waits `retry_wait` and
//!   retries (up to `retries` times, then thinks again). [`OnAbandon::Finish`]: the
//!   server does not notice and serves the abandoned request anyway (badput).
//!   [`OnAbandon::Cancel`]: the server notices and removes it from the buffer, or
//!   stops it on its core, as `serve --on-abandon cancel` does.
//! - A user's *response time* (R_user) runs from the end of its think time to the
//!   answer, timeouts, rejections, retry waits and retries included, as `load`
//!   measures it; an *attempt's* response time (R_attempt) runs from the send of the
//!   attempt that got the answer.
//!
//! Which core runs a thread is the [`Affinity`]: `Pinned` is seed 002's thread-to-core
//! affinity (a new request takes a free thread on the least-loaded core, ties to the
//! lowest index, and stays on that core); `Shared` lets any idle core run any ready
//! thread (one global run queue). The distinction matters for exactness: see
//! [`crate::exact`].
//!
//! How a core shares itself among its ready threads is the [`Policy`]: `Fcfs` runs each
//! to completion in arrival order; `RoundRobin` gives each a quantum and, when the
//! quantum expires while another thread is ready, preempts it and spends
//! `context_switch` seconds switching. Switching is busy-but-useless time: it is not
//! counted as utilisation. Starting a thread on an idle core and starting the next
//! thread after a completion cost nothing; only preemption pays the switch (seed 002
//! charges it on the round-robin rotation).
//!
//! Connections: a user sends `session` requests on one connection, then opens a
//! new one (`load --session`; `None`: one connection for the whole run). The
//! first request on each connection pays `first_demand` on top of its service
//! draw, as a TLS handshake's CPU lands on the request that opens the
//! connection; every attempt of that request pays it (a retry reconnects). The
//! handshake is CPU on the same core queue as the requests, so an event-loop
//! engine modelled as one thread serves it in line and every request behind it
//! waits. With an extra demand and sessions the exact solution no longer
//! applies; the bounds use the mean demand per request, `S + E[first_demand] / session`.
//!
//! A request that starts on a core which has idled for at least `idle_gap` pays
//! `idle_demand` on top of its service draw (issue 27: the servers of the predict zoo
//! answered one user thinking 20 ms 13–53% slower than one user back to back, and Apache
//! spent more CPU per request between Poisson arrivals than back to back). A request that
//! a core takes at once after finishing another never pays it. It is CPU on the core:
//! utilisation counts it. No exact solution applies with it (the service depends on the
//! state); the bounds keep the busy demand, which the saturation bound is right to use (a
//! saturated server never idles) and which makes the low-load bound optimistic.
//!
//! Workers held by connections ([`Connections::Held`], issue 27): the `c * k` threads
//! are then the server's W workers (threads or processes: `pool`, `prefork`, Apache's
//! prefork and worker MPMs, gunicorn's gthread), and a connection holds one from
//! accept until it closes, its requests running on that worker (so on that worker's
//! core when pinned). A connection closes when the server's keep-alive timeout
//! passes with no request on it (`keepalive_timeout`, measured from the answer), after
//! the server's `max_requests` on it, when the client closes it after `session`
//! requests, or when its client times out (the retry reconnects). A user without a
//! connection connects: it takes a free worker, or waits with its request in the
//! listen backlog (`backlog`, FCFS, taking the place of the buffer, which has no
//! effect here), or finds the backlog full and is refused: a failed attempt, handled
//! as a full buffer's drop (`on_full`: `Reject` answers at once and the user retries
//! after `retry_wait`; `Silent` is learnt at the timeout). A user keeps its connection
//! across its think time unless the keep-alive timeout closes it during the think.
//! The default, [`Connections::Free`], is the event-driven case above: any number of
//! connections, and requests (not connections) queue for threads.

use std::fmt;
use std::str::FromStr;

use serde::Serialize;
use servelab_dist::Dist;

use crate::error::{Result, SimError};

/// How a core shares itself among the threads ready to run on it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Policy {
    /// Run each thread to completion, in the order the threads became ready.
    Fcfs,
    /// Round robin with a quantum; preemption costs the context-switch time.
    #[serde(rename = "rr")]
    RoundRobin,
}

impl FromStr for Policy {
    type Err = SimError;
    fn from_str(s: &str) -> Result<Policy> {
        match s {
            "fcfs" => Ok(Policy::Fcfs),
            "rr" | "round-robin" => Ok(Policy::RoundRobin),
            _ => Err(SimError::UnknownName {
                what: "policy",
                input: s.to_string(),
                expected: "fcfs or rr",
            }),
        }
    }
}

impl fmt::Display for Policy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Policy::Fcfs => "fcfs",
            Policy::RoundRobin => "rr",
        })
    }
}

/// Which cores may run a thread.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Affinity {
    /// Each thread belongs to one core (seed 002): a core with an empty run queue idles
    /// even when a neighbour has several ready threads.
    Pinned,
    /// Any idle core runs any ready thread: one global run queue, work-conserving.
    Shared,
}

impl FromStr for Affinity {
    type Err = SimError;
    fn from_str(s: &str) -> Result<Affinity> {
        match s {
            "pinned" => Ok(Affinity::Pinned),
            "shared" => Ok(Affinity::Shared),
            _ => Err(SimError::UnknownName {
                what: "affinity",
                input: s.to_string(),
                expected: "pinned or shared",
            }),
        }
    }
}

impl fmt::Display for Affinity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Affinity::Pinned => "pinned",
            Affinity::Shared => "shared",
        })
    }
}

/// What a full buffer does to a request that does not fit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum OnFull {
    /// Answers at once (a real pool's 503): the user waits `retry_wait` and retries.
    Reject,
    /// Says nothing: the user learns of it at its timeout, or with no timeout goes
    /// back to thinking (the exact model's blocked arrival).
    Silent,
}

impl FromStr for OnFull {
    type Err = SimError;
    fn from_str(s: &str) -> Result<OnFull> {
        match s {
            "reject" => Ok(OnFull::Reject),
            "silent" => Ok(OnFull::Silent),
            _ => Err(SimError::UnknownName {
                what: "on-full policy",
                input: s.to_string(),
                expected: "reject or silent",
            }),
        }
    }
}

impl fmt::Display for OnFull {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            OnFull::Reject => "reject",
            OnFull::Silent => "silent",
        })
    }
}

/// What the server does with a request whose user has timed out.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum OnAbandon {
    /// Serves it to the end anyway: the work is badput (seed 002).
    Finish,
    /// Removes it from the buffer, or stops it on its core and frees its thread.
    Cancel,
}

impl FromStr for OnAbandon {
    type Err = SimError;
    fn from_str(s: &str) -> Result<OnAbandon> {
        match s {
            "finish" => Ok(OnAbandon::Finish),
            "cancel" => Ok(OnAbandon::Cancel),
            _ => Err(SimError::UnknownName {
                what: "on-abandon policy",
                input: s.to_string(),
                expected: "finish or cancel",
            }),
        }
    }
}

impl fmt::Display for OnAbandon {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            OnAbandon::Finish => "finish",
            OnAbandon::Cancel => "cancel",
        })
    }
}

/// How the server's threads meet connections.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Connections {
    /// Any number of connections; each request queues for a thread in the buffer
    /// (an event-driven server, or a pool fed by one: the default, seed 002's model).
    #[default]
    Free,
    /// Each connection holds one of the `c * k` threads (the W workers) from accept
    /// until it closes; connections beyond W wait in the listen backlog.
    Held(HeldWorkers),
}

impl Connections {
    /// The held-worker settings, when workers are held.
    pub fn held(&self) -> Option<&HeldWorkers> {
        match self {
            Connections::Free => None,
            Connections::Held(h) => Some(h),
        }
    }
}

/// When a server whose connections hold workers closes them, and how many wait.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct HeldWorkers {
    /// Seconds a kept-alive connection may stay idle after an answer before the
    /// server closes it and frees its worker (`serve --keepalive-timeout`, Apache's
    /// `KeepAliveTimeout`); `None`: never.
    pub keepalive_timeout: Option<f64>,
    /// Requests after which the server closes a connection (`serve
    /// --max-requests-per-conn`, Apache's `MaxKeepAliveRequests`); `None`: no limit.
    pub max_requests: Option<u32>,
    /// Connections accepted by the kernel and waiting for a worker (the listen
    /// backlog); a connection that finds it full is refused.
    pub backlog: u32,
}

impl Default for HeldWorkers {
    /// `servelab serve`'s keep-alive: a 5 s idle timeout, no request limit; a backlog
    /// of 511 (Apache's and nginx's `listen` default).
    fn default() -> HeldWorkers {
        HeldWorkers {
            keepalive_timeout: Some(5.0),
            max_requests: None,
            backlog: 511,
        }
    }
}

impl HeldWorkers {
    /// Checks the settings; one line that names the setting.
    pub fn validate(&self) -> Result<()> {
        let bad = |m: &str| Err(SimError::InvalidModel(m.to_string()));
        if let Some(t) = self.keepalive_timeout {
            if !(t >= 0.0 && t.is_finite()) {
                return bad("the keep-alive timeout must be finite and non-negative (or none)");
            }
        }
        if self.max_requests == Some(0) {
            return bad(
                "a connection must carry at least one request (max requests per connection 0)",
            );
        }
        Ok(())
    }

    /// Parses a keep-alive timeout as `sim --keepalive-timeout` and the lab take it: a
    /// duration (`5s`, `500ms`), or `none` (never).
    pub fn parse_keepalive(text: &str) -> Result<Option<f64>> {
        match text.trim() {
            "none" => Ok(None),
            t => Ok(Some(servelab_dist::parse_secs_f64(t)?)),
        }
    }

    /// Parses a request limit per connection: a number of requests (at least 1), or
    /// `none` (no limit).
    pub fn parse_request_limit(text: &str) -> Result<Option<u32>> {
        match text.trim() {
            "none" => Ok(None),
            t => match t.parse::<u32>() {
                Ok(n) if n > 0 => Ok(Some(n)),
                _ => Err(SimError::InvalidModel(format!(
                    "`{t}` is not a request limit: a number of requests (at least 1) or none"
                ))),
            },
        }
    }

    /// Whether every connection carries one request (the server closes it after one,
    /// or at once when idle): then holding a worker is per-request queueing with the
    /// backlog as the buffer.
    pub fn one_request_per_connection(&self) -> bool {
        self.max_requests == Some(1) || self.keepalive_timeout == Some(0.0)
    }
}

/// Most users one point may have.
pub const MAX_USERS: u32 = 10_000_000;

/// One configuration of the closed system. Times are in seconds.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Model {
    /// Number of users N (the closed population).
    pub users: u32,
    /// Think time between an answer and the next request.
    pub think: Dist,
    /// Service demand of one request (CPU time on one core).
    pub service: Dist,
    /// Time a user waits for an answer before giving up and retrying; `None`: forever.
    pub timeout: Option<Dist>,
    /// Retries after a timeout or a rejection before the user gives up and thinks
    /// again; `None`: unbounded (seed 002).
    pub retries: Option<u32>,
    /// Wait between a timeout or a rejection and the retry (`load --retry-wait`).
    pub retry_wait: Dist,
    /// What a full buffer does to a request that does not fit.
    pub on_full: OnFull,
    /// What the server does with a request whose user has timed out.
    pub on_abandon: OnAbandon,
    /// Number of cores c.
    pub cores: u32,
    /// Threads per core k.
    pub threads_per_core: u32,
    /// Capacity B of the shared buffer of requests waiting for a thread.
    pub buffer: u32,
    /// Scheduling of ready threads on a core.
    pub policy: Policy,
    /// Round-robin quantum (ignored by FCFS).
    pub quantum: f64,
    /// Cost of one round-robin preemption (ignored by FCFS).
    pub context_switch: f64,
    /// Whether threads are pinned to cores.
    pub affinity: Affinity,
    /// Requests a user sends on one connection before it opens a new one
    /// (`load`'s `--session`); `None`: one connection for the whole run. Only
    /// `first_demand` makes it matter.
    pub session: Option<u32>,
    /// Extra service demand of a connection's first request (a TLS handshake's
    /// CPU, say), added to its `service` draw; every attempt of that request
    /// (retries included) pays it, as each retry's new connection would.
    pub first_demand: Dist,
    /// Whether connections hold threads ([`Connections::Held`]: W = `cores *
    /// threads_per_core` workers) or requests queue for them (the default). Left out
    /// of the JSON when free, so earlier outputs are unchanged.
    #[serde(skip_serializing_if = "Connections::is_free")]
    pub connections: Connections,
    /// Extra demand of a request that starts on a core idle for at least `idle_gap`
    /// seconds, added to its `service` draw: a server slower after an idle gap than back
    /// to back (caches gone cold, a core's clock slowed down, a worker woken up). `ZERO`:
    /// none (seed 002). Left out of the JSON when zero.
    #[serde(skip_serializing_if = "Dist::is_zero")]
    pub idle_demand: Dist,
    /// How long a core must have idled for a request started on it to pay
    /// `idle_demand`, seconds (a request that follows another back to back does not).
    #[serde(skip_serializing_if = "is_default_idle_gap")]
    pub idle_gap: f64,
}

/// [`Model::idle_gap`]'s default, seconds: longer than the gap a back-to-back client
/// leaves (the network and the client's turn-around: 0.05–1.3 ms in the predict zoo's
/// fits), shorter than a think time.
pub const DEFAULT_IDLE_GAP: f64 = 0.001;

fn is_default_idle_gap(g: &f64) -> bool {
    *g == DEFAULT_IDLE_GAP
}

impl Connections {
    fn is_free(&self) -> bool {
        *self == Connections::Free
    }
}

impl Default for Model {
    /// Seed 002's first configuration without timeouts: 100 users thinking uniform
    /// 4..10 s, 4 cores with 1 thread each, buffer 500, FCFS, service exp 0.2 s.
    fn default() -> Model {
        Model {
            users: 100,
            think: Dist::uniform(4.0, 10.0),
            service: Dist::exp(0.2),
            timeout: None,
            retries: None,
            retry_wait: Dist::ZERO,
            on_full: OnFull::Silent,
            on_abandon: OnAbandon::Finish,
            cores: 4,
            threads_per_core: 1,
            buffer: 500,
            policy: Policy::Fcfs,
            quantum: 0.5,
            context_switch: 0.0,
            affinity: Affinity::Pinned,
            session: None,
            first_demand: Dist::ZERO,
            connections: Connections::Free,
            idle_demand: Dist::ZERO,
            idle_gap: DEFAULT_IDLE_GAP,
        }
    }
}

impl Model {
    /// Total number of threads, c * k.
    pub fn threads(&self) -> u64 {
        u64::from(self.cores) * u64::from(self.threads_per_core)
    }

    /// Most requests the server can hold, K = c * k + B (with held workers, the
    /// backlog instead of the buffer: W + backlog connections); more are dropped.
    pub fn capacity(&self) -> u64 {
        self.threads() + u64::from(self.queue_limit())
    }

    /// Most requests waiting for a thread: the buffer B, or with held workers the
    /// listen backlog.
    pub fn queue_limit(&self) -> u32 {
        match self.connections {
            Connections::Free => self.buffer,
            Connections::Held(h) => h.backlog,
        }
    }

    /// Workers W: the threads, c * k (with held workers, each a connection's).
    pub fn workers(&self) -> u64 {
        self.threads()
    }

    /// The per-request model this one behaves as, when there is one: itself when
    /// workers are free; with held workers, the free model with the backlog as its
    /// buffer when every connection carries one request
    /// ([`HeldWorkers::one_request_per_connection`], or `session` 1), or when nobody
    /// can ever wait for a worker (N <= W) and any core runs any thread
    /// ([`Affinity::Shared`]), so which worker a user holds does not matter. `None`:
    /// connections holding workers across think times change the model (see
    /// `docs/sim-model.md`).
    pub fn per_request(&self) -> Option<Model> {
        let Connections::Held(h) = self.connections else {
            return Some(self.clone());
        };
        let one = h.one_request_per_connection() || self.session == Some(1);
        let free = Model {
            buffer: h.backlog,
            connections: Connections::Free,
            // Every request opens its connection, and pays `first_demand`.
            session: if one { Some(1) } else { self.session },
            ..self.clone()
        };
        let never_wait = u64::from(self.users) <= self.workers()
            && self.affinity == Affinity::Shared
            && self.first_demand.is_zero();
        if self.starves_past_workers() {
            // The answers are a closed system of the W users that hold a worker.
            return Some(Model {
                users: u32::try_from(self.workers()).unwrap_or(u32::MAX),
                ..free
            });
        }
        (one || never_wait).then_some(free)
    }

    /// Whether, with held workers, N > W users share connections that never
    /// close: no keep-alive timeout, no request limit, no client session and
    /// no timeout. The first W users to connect keep their workers for good
    /// and the other N − W wait at the backlog for ever (all of them fit in
    /// it), so the answers are those of a closed system of W users, whose
    /// chain is exact when it is product-form and any core runs any worker
    /// (`shared`; no first demand). The starved users are in no mean, and
    /// Little's law over N fails by (N − W)/N.
    pub fn starves_past_workers(&self) -> bool {
        let Connections::Held(h) = self.connections else {
            return false;
        };
        let (n, w) = (u64::from(self.users), self.workers());
        n > w
            && n - w <= u64::from(h.backlog)
            && h.keepalive_timeout.is_none()
            && h.max_requests.is_none()
            && self.session.is_none()
            && self.timeout.is_none()
            && self.affinity == Affinity::Shared
            && self.first_demand.is_zero()
    }

    /// Mean CPU demand of one request: the service's mean, plus the first
    /// request's extra demand spread over the `session` requests of a
    /// connection (nothing when a connection lasts the whole run).
    pub fn mean_demand(&self) -> f64 {
        let extra = match self.session {
            Some(s) => self.first_demand.mean() / f64::from(s.max(1)),
            None => 0.0,
        };
        self.service.mean() + extra
    }

    /// Checks that the model makes sense and that simulated time can always advance.
    pub fn validate(&self) -> Result<()> {
        let bad = |m: String| Err(SimError::InvalidModel(m));
        if self.users == 0 {
            return bad("need at least one user".into());
        }
        if self.users > MAX_USERS {
            // Every user holds an entry in the event list: 10M users is about 0.5 GB.
            return bad(format!("at most {MAX_USERS} users per point"));
        }
        if self.cores == 0 || self.threads_per_core == 0 {
            return bad("need at least one core and one thread per core".into());
        }
        if self.threads() > 1 << 24 {
            return bad(format!(
                "{} threads is more than this simulator supports (16M)",
                self.threads()
            ));
        }
        if self.service.mean() <= 0.0 {
            return bad("the mean service time must be positive".into());
        }
        if self.session == Some(0) {
            return bad("a session needs at least one request".into());
        }
        if self.first_demand.mean() < 0.0 {
            return bad("the first request's extra demand must be non-negative".into());
        }
        if self.idle_demand.mean() < 0.0 {
            return bad("the extra demand after an idle gap must be non-negative".into());
        }
        if !(self.idle_gap > 0.0 && self.idle_gap.is_finite()) {
            return bad(
                "the idle gap must be positive: with 0 a request that follows another at once \
                 would pay the idle demand too"
                    .into(),
            );
        }
        if self.policy == Policy::RoundRobin && !(self.quantum > 0.0 && self.quantum.is_finite()) {
            return bad("the round-robin quantum must be positive".into());
        }
        if self.policy == Policy::RoundRobin && self.service.mean() / self.quantum > 1e5 {
            // Under contention every quantum is an event: a run would take hours.
            return bad(format!(
                "a quantum of {}s is more than 100,000 slices per mean service time; \
                 use a larger quantum (processor sharing is approximated well by 1/100 of it)",
                self.quantum
            ));
        }
        if !(self.context_switch >= 0.0 && self.context_switch.is_finite()) {
            return bad("the context-switch time must be finite and non-negative".into());
        }
        if let Connections::Held(h) = &self.connections {
            h.validate()?;
        }
        if self.on_full == OnFull::Reject && self.retry_wait.is_zero() && self.retries.is_none() {
            return bad(
                "on-full reject with a zero retry wait and unbounded retries: a \
                 rejected user would retry forever at the same instant; give --retry-wait"
                    .into(),
            );
        }
        if let Some(t) = &self.timeout {
            if t.is_zero() {
                return bad("a zero timeout would retry forever at the same instant".into());
            }
        } else if self.on_full == OnFull::Silent
            && self.think.is_zero()
            && u64::from(self.users) > self.capacity()
        {
            return bad(format!(
                "zero think time with {} users, capacity {} and no timeout: dropped users \
                 would retry forever at the same instant",
                self.users,
                self.capacity()
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_is_valid_and_capacity_is_ck_plus_b() {
        let m = Model::default();
        m.validate().unwrap();
        assert_eq!(m.capacity(), 504);
        let m = Model {
            threads_per_core: 4,
            ..m
        };
        assert_eq!(m.capacity(), 516);
    }

    #[test]
    fn nonsense_is_rejected() {
        let base = Model::default();
        let cases = [
            Model {
                users: 0,
                ..base.clone()
            },
            Model {
                cores: 0,
                ..base.clone()
            },
            Model {
                users: MAX_USERS + 1,
                ..base.clone()
            },
            Model {
                service: Dist::constant(0.0),
                ..base.clone()
            },
            Model {
                policy: Policy::RoundRobin,
                quantum: 0.0,
                ..base.clone()
            },
            Model {
                policy: Policy::RoundRobin,
                quantum: 1e-7,
                ..base.clone()
            },
            Model {
                context_switch: -1.0,
                ..base.clone()
            },
            Model {
                timeout: Some(Dist::constant(0.0)),
                ..base.clone()
            },
            Model {
                session: Some(0),
                ..base.clone()
            },
            Model {
                think: Dist::constant(0.0),
                users: 600,
                ..base.clone()
            },
        ];
        for m in cases {
            assert!(m.validate().is_err(), "{m:?}");
        }
    }

    #[test]
    fn rejecting_needs_a_retry_wait_or_a_retry_limit() {
        let reject = Model {
            on_full: OnFull::Reject,
            ..Model::default()
        };
        assert!(reject.validate().is_err());
        Model {
            retry_wait: Dist::exp(1.0),
            ..reject.clone()
        }
        .validate()
        .unwrap();
        Model {
            retries: Some(3),
            ..reject
        }
        .validate()
        .unwrap();
    }

    #[test]
    fn the_first_request_demand_is_spread_over_a_session() {
        let m = Model {
            service: Dist::constant(0.001),
            first_demand: Dist::constant(0.009),
            session: Some(10),
            ..Model::default()
        };
        assert!((m.mean_demand() - 0.0019).abs() < 1e-12);
        let one = Model {
            session: Some(1),
            ..m.clone()
        };
        assert!((one.mean_demand() - 0.010).abs() < 1e-12);
        let forever = Model { session: None, ..m };
        assert!((forever.mean_demand() - 0.001).abs() < 1e-12);
    }

    #[test]
    fn held_worker_settings_parse_and_validate() {
        assert_eq!(HeldWorkers::parse_keepalive("none").unwrap(), None);
        assert_eq!(HeldWorkers::parse_keepalive("500ms").unwrap(), Some(0.5));
        assert!(HeldWorkers::parse_keepalive("-1s").is_err());
        assert_eq!(HeldWorkers::parse_request_limit("100").unwrap(), Some(100));
        assert_eq!(HeldWorkers::parse_request_limit("none").unwrap(), None);
        for bad in ["0", "-3", "many"] {
            let e = HeldWorkers::parse_request_limit(bad)
                .unwrap_err()
                .to_string();
            assert!(e.contains("request limit") && e.contains(bad), "{e}");
        }
        let held = |h: HeldWorkers| Model {
            connections: Connections::Held(h),
            ..Model::default()
        };
        held(HeldWorkers::default()).validate().unwrap();
        for bad in [
            HeldWorkers {
                max_requests: Some(0),
                ..HeldWorkers::default()
            },
            HeldWorkers {
                keepalive_timeout: Some(f64::NAN),
                ..HeldWorkers::default()
            },
        ] {
            assert!(held(bad).validate().is_err(), "{bad:?}");
        }
        // One request per connection: every request opens one, and pays the first
        // demand, in the per-request model too.
        let one = Model {
            first_demand: Dist::constant(0.01),
            ..held(HeldWorkers {
                max_requests: Some(1),
                ..HeldWorkers::default()
            })
        };
        let free = one.per_request().unwrap();
        assert_eq!((free.session, free.buffer), (Some(1), 511));
        assert!((free.mean_demand() - 0.21).abs() < 1e-12);
        // The default is the free model, and it has no held settings.
        assert_eq!(Model::default().connections, Connections::Free);
        assert_eq!(Model::default().per_request(), Some(Model::default()));
    }

    #[test]
    fn names_parse() {
        assert_eq!("reject".parse::<OnFull>().unwrap(), OnFull::Reject);
        assert_eq!("silent".parse::<OnFull>().unwrap(), OnFull::Silent);
        assert!("drop".parse::<OnFull>().is_err());
        assert_eq!("cancel".parse::<OnAbandon>().unwrap(), OnAbandon::Cancel);
        assert_eq!("finish".parse::<OnAbandon>().unwrap(), OnAbandon::Finish);
        assert!("maybe".parse::<OnAbandon>().is_err());
        assert_eq!("rr".parse::<Policy>().unwrap(), Policy::RoundRobin);
        assert_eq!("fcfs".parse::<Policy>().unwrap(), Policy::Fcfs);
        assert!("lifo".parse::<Policy>().is_err());
        assert_eq!("shared".parse::<Affinity>().unwrap(), Affinity::Shared);
        assert!("loose".parse::<Affinity>().is_err());
    }
}
