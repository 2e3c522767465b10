//! One replication of the model: the event loop and the server's state.
//!
//! State: users (thinking or waiting, with a timeout token), requests (a slab with a
//! free list, so the loop allocates nothing in steady state), free threads, run queues
//! (one per core when pinned, one shared otherwise), the shared buffer, and the cores
//! (idle, running a slice, or switching).
//!
//! A user's pending timeout is cancelled lazily, by bumping its token (the stale event
//! is skipped when popped); a core's single pending event is simply moved (see
//! `queue`).
//!
//! Held workers ([`Connections::Held`]): a user's connection is the thread it holds
//! (`User::held`); its requests go straight to that thread's run queue, and the
//! thread goes back to the free list (and to the oldest connection in the backlog,
//! which is the buffer) only when the connection closes: at the keep-alive timeout
//! (an `Idle` event, cancelled lazily by its own token like a timeout), at the
//! server's or the client's request limit, or when the client times out. Nothing of
//! it runs, and no random number is drawn for it, in the default free model, so that
//! model's runs are unchanged.
//!
//! Round robin without waste: a thread running alone on its core gets one slice to
//! completion instead of one event per quantum; when another thread becomes ready on
//! that run queue, the slice is cut at the next quantum boundary, counted from when
//! the thread got the core. This yields exactly the preemptions of a quantum-by-quantum
//! loop, and makes a tiny quantum cost events only under contention.
//!
//! Remaining work is exact: every slice that does not complete its request runs a
//! whole number of quanta, so a request keeps its demand and the count of quanta it
//! has received, and its remaining work is `demand - quanta * quantum`, one rounding,
//! never a running difference of clock readings. Whether the rest fits in a slice is
//! decided with a tolerance of [`FIT`] quanta. Without both, a constant 1 s demand cut
//! into 0.1 s quanta left a residue of about 1e-13 s after ten slices (or
//! `1.1 - 10 * 0.1 = 1e-16` above a quantum), which paid an eleventh context switch:
//! X 3.644/s instead of 3.670/s (see `round_robin_charges_no_switch_for_a_float_residue`).
//!
//! Statistics: the loop keeps cumulative counters and time integrals (`Cum`) and
//! hands every completion to the replication's `Window`, which turns them into
//! metrics after the warm-up cut (see `window`).

use std::collections::VecDeque;

use rand::SeedableRng;
use rand_pcg::Pcg64Mcg;

use crate::error::{Result, SimError};
use crate::model::{Affinity, Connections, Model, OnAbandon, OnFull, Policy};
use crate::queue::{Event, EventQueue};
use crate::spec::{Length, RunSpec, Warmup};
use crate::trace::{NoTrace, TraceLine, Tracer};
use crate::window::{Again, Cum, Obs, Prefix, Replication, Window};

const NONE: u32 = u32::MAX;
/// Events allowed between two completions before the run is declared stuck.
const STALL_EVENTS: u64 = 50_000_000;
/// Work left below this many quanta counts as none: far less than any context
/// switch, and far more than the rounding of `demand - quanta * quantum` (about
/// `demand / quantum * 1e-16` quanta, and validation keeps `demand / quantum` near
/// 1e5 at most). Relative to the quantum, so it holds at every time scale.
const FIT: f64 = 1e-6;

#[derive(Clone, Copy, Debug)]
struct Request {
    user: u32,
    thread: u32,
    sent: f64,
    /// Service demand, seconds of CPU.
    demand: f64,
    /// Whole quanta of CPU received in slices that did not complete it.
    quanta: u64,
    abandoned: bool,
}

impl Request {
    /// Work left, in seconds: exact up to one rounding (see the module doc).
    #[inline]
    fn remaining(&self, quantum: f64) -> f64 {
        self.demand - self.quanta as f64 * quantum
    }
}

#[derive(Clone, Copy, Debug, Default)]
struct User {
    token: u32,
    live: u32,
    retries: u32,
    /// Whether the user is in a response period (sent, waiting or about to retry)
    /// rather than thinking.
    waiting: bool,
    /// When the current request began for the user: the end of its think time (the
    /// start of R_user, which retries do not reset).
    since: f64,
    /// Requests sent on the user's current connection (first attempts only).
    on_conn: u32,
    /// Whether the current request is its connection's first, and so pays
    /// `first_demand` on every attempt.
    opens: bool,
    /// Held workers: the thread the user's connection holds, `NONE` without one (or
    /// while it waits in the backlog).
    held: u32,
    /// Held workers: requests answered on the current connection.
    served: u32,
    /// Held workers: token of the pending keep-alive close.
    idle: u32,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum CoreState {
    Idle,
    Running,
    Switching,
}

#[derive(Clone, Copy, Debug)]
struct Core {
    state: CoreState,
    req: u32,
    /// Start of the current slice (when the thread got the core).
    started: f64,
    /// Whether the current slice ends at a quantum boundary rather than at completion.
    bounded: bool,
    /// Whether the pending slice end is the request's completion.
    completes: bool,
    /// Quanta the pending slice runs when it does not complete.
    quanta: u64,
    /// When the core last became idle (`Model::idle_demand`).
    idle_since: f64,
}

/// Derives the seed of one (point, replication) stream: independent of the order in
/// which rayon runs them.
pub(crate) fn stream_seed(seed: u64, point: usize, rep: u32) -> u64 {
    fn mix(mut z: u64) -> u64 {
        // splitmix64 finaliser
        z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    mix(mix(mix(seed) ^ point as u64) ^ u64::from(rep))
}

struct Sim<'a, T: Tracer> {
    m: &'a Model,
    rng: Pcg64Mcg,
    q: EventQueue,
    now: f64,
    users: Vec<User>,
    reqs: Vec<Request>,
    free_reqs: Vec<u32>,
    /// Free thread ids per core group: a group is the cores that share their threads
    /// and one run queue, each core alone when pinned, all cores when shared. (Not
    /// "pool": that is an engine of `servelab serve`.)
    free_threads: Vec<Vec<u32>>,
    /// Ready threads (by request id) per run queue, same indexing as the groups.
    ready: Vec<VecDeque<u32>>,
    buffer: VecDeque<u32>,
    cores: Vec<Core>,
    running: u32,
    switching: u32,
    in_system: usize,
    cum: Cum,
    tracer: &'a mut T,
}

impl<T: Tracer> Sim<'_, T> {
    #[inline]
    fn group_of(&self, core: u32) -> usize {
        match self.m.affinity {
            Affinity::Pinned => core as usize,
            Affinity::Shared => 0,
        }
    }

    /// The group of thread `thread` (threads are numbered core by core).
    #[inline]
    fn group_of_thread(&self, thread: u32) -> usize {
        match self.m.affinity {
            Affinity::Pinned => (thread / self.m.threads_per_core) as usize,
            Affinity::Shared => 0,
        }
    }

    #[inline]
    fn trace(&mut self, event: &'static str, user: u32, core: u32, thread: u32) -> Result<()> {
        if T::ENABLED {
            let some = |v: u32| (v != NONE).then_some(v);
            let line = TraceLine {
                time: self.now,
                event,
                user: some(user),
                core: some(core),
                thread: some(thread),
                buffer: self.buffer.len(),
                in_system: self.in_system,
                cores_running: self.running,
            };
            self.tracer.record(&line)?;
        }
        Ok(())
    }

    /// Advances the time integrals to `t`.
    #[inline]
    fn advance(&mut self, t: f64) {
        let dt = t - self.now;
        self.cum.busy += f64::from(self.running) * dt;
        self.cum.switching += f64::from(self.switching) * dt;
        self.cum.buffer += self.buffer.len() as f64 * dt;
        self.cum.in_system += self.in_system as f64 * dt;
        self.now = t;
        self.cum.t = t;
    }

    /// The user's response period ends (answered, given up, or blocked without a
    /// timeout): one user cycle for Little's law, and the user thinks next.
    fn end_period(&mut self, user: u32) {
        let u = &mut self.users[user as usize];
        self.cum.cycles += 1;
        self.cum.cycle_rt += self.now - u.since;
        u.retries = 0;
        u.waiting = false;
    }

    /// Users still in a response period now, and the sum of their waits so far
    /// (reported apart from R_user, which is over the answers: see `window`).
    fn censored(&self) -> (u64, f64) {
        self.users
            .iter()
            .filter(|u| u.waiting)
            .fold((0, 0.0), |(n, sum), u| (n + 1, sum + (self.now - u.since)))
    }

    fn think(&mut self, user: u32) {
        let t = self.now + self.m.think.sample(&mut self.rng);
        self.q.push(t, Event::Send { user });
    }

    fn send(&mut self, user: u32) -> Result<()> {
        self.cum.arrivals += 1;
        let mut demand = self.m.service.sample(&mut self.rng);
        let session = self.m.session;
        let u = &mut self.users[user as usize];
        u.token = u.token.wrapping_add(1);
        let token = u.token;
        let first = u.retries == 0;
        let held = matches!(self.m.connections, Connections::Held(_));
        if first {
            u.since = self.now;
            u.waiting = true;
            if !held {
                u.opens = u.on_conn == 0;
                u.on_conn += 1;
                if session == Some(u.on_conn) {
                    u.on_conn = 0;
                }
            }
        }
        // A held worker's connection opens with the attempt that finds none (a retry
        // after a timeout reconnects: the client closed it).
        if held {
            u.opens = u.held == NONE;
        }
        let kept = (held && u.held != NONE).then_some(u.held);
        // Drawn only when it can be paid, so a model without sessions draws
        // the same stream as before they existed.
        if u.opens && !self.m.first_demand.is_zero() {
            demand += self.m.first_demand.sample(&mut self.rng);
        }
        self.trace(if first { "send" } else { "retry" }, user, NONE, NONE)?;
        // A free thread: on the least-loaded core when pinned (ties to the lowest index).
        let group = match self.m.affinity {
            _ if kept.is_some() => None,
            Affinity::Shared => (!self.free_threads[0].is_empty()).then_some(0),
            Affinity::Pinned => {
                let mut best = None;
                let mut most = 0;
                for (i, f) in self.free_threads.iter().enumerate() {
                    if f.len() > most {
                        most = f.len();
                        best = Some(i);
                    }
                }
                best
            }
        };
        let full =
            kept.is_none() && group.is_none() && self.buffer.len() >= self.m.queue_limit() as usize;
        if full && self.m.on_full == OnFull::Reject {
            // Answered at once: no timeout to wait for.
            self.cum.drops += 1;
            self.users[user as usize].live = NONE;
            self.trace("reject", user, NONE, NONE)?;
            return self.retry_or_give_up(user, false);
        }
        if let Some(timeout) = &self.m.timeout {
            let t = self.now + timeout.sample(&mut self.rng);
            self.q.push(t, Event::Timeout { user, token });
        }
        if full {
            self.cum.drops += 1;
            self.users[user as usize].live = NONE;
            self.trace("drop", user, NONE, NONE)?;
            if self.m.timeout.is_none() {
                // A blocked arrival returns to thinking (the exact model's convention):
                // its response period ends, at length 0 if it was a first attempt.
                self.end_period(user);
                self.think(user);
            }
            return Ok(());
        }
        let req = Request {
            user,
            thread: NONE,
            sent: self.now,
            demand,
            quanta: 0,
            abandoned: false,
        };
        let id = match self.free_reqs.pop() {
            Some(id) => {
                self.reqs[id as usize] = req;
                id
            }
            None => {
                self.reqs.push(req);
                (self.reqs.len() - 1) as u32
            }
        };
        self.users[user as usize].live = id;
        self.in_system += 1;
        match (kept, group) {
            (Some(thread), _) => {
                // The kept-alive connection's worker takes it; its close is off.
                let u = &mut self.users[user as usize];
                u.idle = u.idle.wrapping_add(1);
                self.make_ready(id, thread)
            }
            (None, Some(group)) => self.give_thread(id, group),
            (None, None) => {
                self.buffer.push_back(id);
                self.trace("buffer", user, NONE, NONE)
            }
        }
    }

    /// Gives request `id` a free thread from `group` and makes it ready; with held
    /// workers, its connection now holds the thread (unless its user has gone).
    fn give_thread(&mut self, id: u32, group: usize) -> Result<()> {
        let thread = self.free_threads[group]
            .pop()
            .expect("caller checked for a free thread");
        if matches!(self.m.connections, Connections::Held(_)) {
            let r = self.reqs[id as usize];
            if !r.abandoned {
                let u = &mut self.users[r.user as usize];
                u.held = thread;
                u.served = 0;
            }
        }
        self.make_ready(id, thread)
    }

    /// Makes request `id` ready on thread `thread` (its own now).
    fn make_ready(&mut self, id: u32, thread: u32) -> Result<()> {
        let group = self.group_of_thread(thread);
        self.reqs[id as usize].thread = thread;
        let was_empty = self.ready[group].is_empty();
        self.ready[group].push_back(id);
        let user = self.reqs[id as usize].user;
        let core_hint = if self.m.affinity == Affinity::Pinned {
            group as u32
        } else {
            NONE
        };
        self.trace("ready", user, core_hint, thread)?;
        // An idle core of this run queue takes it at once.
        let idle = match self.m.affinity {
            Affinity::Pinned => (self.cores[group].state == CoreState::Idle).then_some(group),
            Affinity::Shared => self.cores.iter().position(|c| c.state == CoreState::Idle),
        };
        if let Some(core) = idle {
            return self.dispatch(core as u32);
        }
        if was_empty && self.m.policy == Policy::RoundRobin {
            // Somebody now waits: cores running unbounded slices must stop at their next
            // quantum boundary.
            let range = match self.m.affinity {
                Affinity::Pinned => group..group + 1,
                Affinity::Shared => 0..self.cores.len(),
            };
            for core in range {
                let c = self.cores[core];
                if c.state == CoreState::Running && !c.bounded {
                    self.bound_slice(core as u32);
                }
            }
        }
        Ok(())
    }

    /// Cuts core `core`'s unbounded slice at its next quantum boundary.
    fn bound_slice(&mut self, core: u32) {
        let qn = self.m.quantum;
        let c = &mut self.cores[core as usize];
        let remaining = self.reqs[c.req as usize].remaining(qn);
        let quanta = ((self.now - c.started) / qn).floor() + 1.0;
        c.bounded = true;
        if remaining > (quanta + FIT) * qn {
            c.completes = false;
            c.quanta = quanta as u64;
            // Never before now: `floor` of a rounded quotient may land on it.
            self.q
                .set_core(core, (c.started + quanta * qn).max(self.now));
        }
        // Otherwise the pending completion comes first (or within a residue of the
        // boundary) and stays valid.
    }

    /// Core `core` (idle) takes the next ready thread of its run queue, if any.
    fn dispatch(&mut self, core: u32) -> Result<()> {
        let group = self.group_of(core);
        match self.ready[group].pop_front() {
            Some(id) => {
                let c = self.cores[core as usize];
                // Drawn only when it can be paid, so a model without it draws the
                // same stream as before it existed.
                if !self.m.idle_demand.is_zero()
                    && c.state == CoreState::Idle
                    && self.now - c.idle_since >= self.m.idle_gap
                {
                    self.reqs[id as usize].demand += self.m.idle_demand.sample(&mut self.rng);
                }
                self.running += 1;
                self.start_slice(core, id)
            }
            None => {
                let c = &mut self.cores[core as usize];
                if c.state != CoreState::Idle {
                    c.idle_since = self.now;
                }
                c.state = CoreState::Idle;
                Ok(())
            }
        }
    }

    /// Starts (or resumes) request `id` on core `core`, already counted as running.
    fn start_slice(&mut self, core: u32, id: u32) -> Result<()> {
        let group = self.group_of(core);
        let qn = self.m.quantum;
        let remaining = self.reqs[id as usize].remaining(qn);
        let bounded = self.m.policy == Policy::RoundRobin && !self.ready[group].is_empty();
        let (len, completes) = if bounded && remaining > (1.0 + FIT) * qn {
            (qn, false)
        } else {
            (remaining.max(0.0), true)
        };
        let c = &mut self.cores[core as usize];
        c.state = CoreState::Running;
        c.req = id;
        c.started = self.now;
        c.bounded = bounded;
        c.completes = completes;
        c.quanta = 1;
        self.q.set_core(core, self.now + len);
        let r = self.reqs[id as usize];
        self.trace("run", r.user, core, r.thread)
    }

    /// Core `core`'s pending event: the end of a slice or of a context switch.
    fn core_event(&mut self, core: u32) -> Result<Option<Obs>> {
        match self.cores[core as usize].state {
            CoreState::Running => self.slice_end(core),
            CoreState::Switching => self.switch_end(core).map(|_| None),
            CoreState::Idle => unreachable!("an idle core has no pending event"),
        }
    }

    fn slice_end(&mut self, core: u32) -> Result<Option<Obs>> {
        let c = self.cores[core as usize];
        let id = c.req;
        if c.completes {
            return self.complete(core, id).map(Some);
        }
        // A slice that does not complete runs whole quanta, and leaves more than FIT
        // of one (checked when it was set).
        self.reqs[id as usize].quanta += c.quanta;
        let group = self.group_of(core);
        if self.ready[group].is_empty() {
            // Nobody waits: keep the core, no switch.
            return self.start_slice(core, id).map(|_| None);
        }
        self.ready[group].push_back(id);
        let (user, thread) = (self.reqs[id as usize].user, self.reqs[id as usize].thread);
        self.trace("preempt", user, core, thread)?;
        let next = self.ready[group].pop_front().expect("checked non-empty");
        if self.m.context_switch > 0.0 {
            let c = &mut self.cores[core as usize];
            c.state = CoreState::Switching;
            c.req = next;
            self.running -= 1;
            self.switching += 1;
            self.q.set_core(core, self.now + self.m.context_switch);
            Ok(None)
        } else {
            self.start_slice(core, next).map(|_| None)
        }
    }

    fn switch_end(&mut self, core: u32) -> Result<()> {
        self.switching -= 1;
        self.running += 1;
        let id = self.cores[core as usize].req;
        let r = self.reqs[id as usize];
        self.trace("switch_end", r.user, core, r.thread)?;
        self.start_slice(core, id)
    }

    fn complete(&mut self, core: u32, id: u32) -> Result<Obs> {
        let r = self.reqs[id as usize];
        let rt = self.now - r.sent;
        self.cum.completions += 1;
        self.in_system -= 1;
        self.running -= 1;
        self.cores[core as usize].state = CoreState::Idle;
        self.cores[core as usize].idle_since = self.now;
        self.free_reqs.push(id);
        let good = !r.abandoned;
        // A badput's user has gone: its user time is not recorded (0).
        let mut user_rt = 0.0;
        if good {
            user_rt = self.now - self.users[r.user as usize].since;
            self.cum.good += 1;
            self.cum.good_rt += rt;
            self.cum.good_user_rt += user_rt;
            self.end_period(r.user);
            let u = &mut self.users[r.user as usize];
            u.token = u.token.wrapping_add(1); // cancels the pending timeout
            u.live = NONE;
            self.think(r.user);
            self.trace("done", r.user, core, r.thread)?;
            if self.keep_alive(r.user) {
                // The connection stays open and its worker with it: only the core
                // moves on.
                self.dispatch(core)?;
                return Ok(Obs::new(rt, user_rt, good));
            }
        } else {
            self.cum.bad += 1;
            self.trace("badput", r.user, core, r.thread)?;
        }
        self.release_thread(r.thread, Some(core))?;
        Ok(Obs::new(rt, user_rt, good))
    }

    /// Held workers, after an answer on `user`'s connection: true when it stays open
    /// (its worker held, the keep-alive close set), false when the server's or the
    /// client's request limit closes it (or workers are not held).
    fn keep_alive(&mut self, user: u32) -> bool {
        let Connections::Held(h) = self.m.connections else {
            return false;
        };
        let session = self.m.session;
        let u = &mut self.users[user as usize];
        u.served += 1;
        let limit = |max: Option<u32>| max.is_some_and(|m| u.served >= m);
        if limit(h.max_requests) || limit(session) {
            u.held = NONE;
            return false;
        }
        u.idle = u.idle.wrapping_add(1);
        if let Some(ka) = h.keepalive_timeout {
            let token = u.idle;
            self.q.push(self.now + ka, Event::Idle { user, token });
        }
        true
    }

    /// Held workers: the keep-alive timeout of `user`'s idle connection, unless a
    /// request came since: the server closes it and frees its worker.
    fn idle_close(&mut self, user: u32, token: u32) -> Result<()> {
        let u = self.users[user as usize];
        if u.idle != token || u.held == NONE {
            return Ok(());
        }
        self.users[user as usize].held = NONE;
        self.trace("close", user, NONE, u.held)?;
        self.release_thread(u.held, None)
    }

    /// Returns a request's thread to its group: the oldest buffered request takes it,
    /// and `core`, when the request was on one (now idle), runs the next ready thread.
    fn release_thread(&mut self, thread: u32, core: Option<u32>) -> Result<()> {
        let group = self.group_of_thread(thread);
        self.free_threads[group].push(thread);
        if let Some(next) = self.buffer.pop_front() {
            self.give_thread(next, group)?;
        }
        if let Some(core) = core {
            if self.cores[core as usize].state == CoreState::Idle {
                self.dispatch(core)?;
            }
        }
        Ok(())
    }

    /// `--on-abandon cancel`: request `id`'s user has gone, so the server drops it
    /// wherever it is: in the buffer, ready for a core, or on one (running, or being
    /// switched to; the switch stops too).
    fn cancel(&mut self, id: u32) -> Result<()> {
        let r = self.reqs[id as usize];
        self.cum.cancelled += 1;
        self.in_system -= 1;
        self.free_reqs.push(id);
        if r.thread == NONE {
            let at = self.buffer.iter().position(|&b| b == id);
            self.buffer
                .remove(at.expect("a request without a thread waits in the buffer"));
            return self.trace("cancel", r.user, NONE, NONE);
        }
        let group = self.group_of_thread(r.thread);
        if let Some(at) = self.ready[group].iter().position(|&q| q == id) {
            self.ready[group].remove(at);
            self.trace("cancel", r.user, NONE, r.thread)?;
            return self.release_thread(r.thread, None);
        }
        let core = match self.m.affinity {
            Affinity::Pinned => group,
            Affinity::Shared => self
                .cores
                .iter()
                .position(|c| c.state != CoreState::Idle && c.req == id)
                .expect("a request with a thread that is not ready is on a core"),
        };
        match self.cores[core].state {
            CoreState::Running => self.running -= 1,
            CoreState::Switching => self.switching -= 1,
            CoreState::Idle => unreachable!("the request is on this core"),
        }
        self.cores[core].state = CoreState::Idle;
        self.cores[core].idle_since = self.now;
        self.q.clear_core(core as u32);
        self.trace("cancel", r.user, core as u32, r.thread)?;
        self.release_thread(r.thread, Some(core as u32))
    }

    /// After a timeout or a rejection: retry after `retry_wait`, or give up and think
    /// again once the retries are used up. `at_once` sends a zero-wait retry now
    /// rather than through the event list (a timeout's retry always did).
    fn retry_or_give_up(&mut self, user: u32, at_once: bool) -> Result<()> {
        let u = self.users[user as usize];
        if self.m.retries.is_none_or(|max| u.retries < max) {
            self.users[user as usize].retries += 1;
            if at_once && self.m.retry_wait.is_zero() {
                return self.send(user);
            }
            let t = self.now + self.m.retry_wait.sample(&mut self.rng);
            self.q.push(t, Event::Send { user });
            Ok(())
        } else {
            self.cum.gave_up += 1;
            self.end_period(user);
            self.trace("give_up", user, NONE, NONE)?;
            self.think(user);
            Ok(())
        }
    }

    fn timeout(&mut self, user: u32, token: u32) -> Result<()> {
        let u = self.users[user as usize];
        if u.token != token {
            return Ok(()); // answered or re-sent since
        }
        self.cum.timeouts += 1;
        self.users[user as usize].live = NONE;
        // The client closes its connection: a held worker stays with the request
        // until it is finished or cancelled, then is freed.
        self.users[user as usize].held = NONE;
        self.trace("timeout", user, NONE, NONE)?;
        if u.live != NONE {
            match self.m.on_abandon {
                // The server does not know: the request still runs, as badput.
                OnAbandon::Finish => self.reqs[u.live as usize].abandoned = true,
                OnAbandon::Cancel => self.cancel(u.live)?,
            }
        }
        self.retry_or_give_up(user, true)
    }
}

/// Runs replication `rep` of sweep point `point`.
pub(crate) fn run_replication<T: Tracer>(
    model: &Model,
    spec: &RunSpec,
    point: usize,
    rep: u32,
    tracer: &mut T,
) -> Result<Replication> {
    simulate(model, spec, point, rep, tracer, None)
}

/// Runs replication `rep` of sweep point `point` again, to its `kept`-th kept
/// completion: the warm-up cut, chosen after the first run (see `window`). The same
/// seed and the same code give the same events, so it stops in the state the first
/// run was in there.
pub(crate) fn run_to(
    model: &Model,
    spec: &RunSpec,
    point: usize,
    rep: u32,
    kept: u64,
) -> Result<Prefix> {
    simulate(model, spec, point, rep, &mut NoTrace, Some(kept)).map(Replication::into_prefix)
}

/// The event loop: the whole run, or up to `to` kept completions.
fn simulate<T: Tracer>(
    model: &Model,
    spec: &RunSpec,
    point: usize,
    rep: u32,
    tracer: &mut T,
    to: Option<u64>,
) -> Result<Replication> {
    model.validate()?;
    spec.validate()?;
    let c = model.cores as usize;
    let k = model.threads_per_core;
    let (free_threads, ready) = match model.affinity {
        Affinity::Pinned => (
            // Pop order gives thread 0 of a core first: a readable trace.
            (0..model.cores)
                .map(|core| (0..k).rev().map(|t| core * k + t).collect())
                .collect(),
            vec![VecDeque::new(); c],
        ),
        Affinity::Shared => (
            vec![(0..model.cores * k).rev().collect()],
            vec![VecDeque::new()],
        ),
    };
    let n = model.users as usize;
    let idle = Core {
        state: CoreState::Idle,
        req: NONE,
        started: 0.0,
        bounded: false,
        completes: false,
        quanta: 0,
        idle_since: 0.0,
    };
    let mut sim = Sim {
        m: model,
        rng: Pcg64Mcg::seed_from_u64(stream_seed(spec.seed, point, rep)),
        q: EventQueue::new(c, (2 * n + 8).min(1 << 20)),
        now: 0.0,
        users: vec![
            User {
                token: 0,
                live: NONE,
                retries: 0,
                waiting: false,
                since: 0.0,
                on_conn: 0,
                opens: false,
                held: NONE,
                served: 0,
                idle: 0,
            };
            n
        ],
        reqs: Vec::with_capacity(n.min(model.capacity() as usize) + 1),
        free_reqs: Vec::new(),
        free_threads,
        ready,
        buffer: VecDeque::new(),
        cores: vec![idle; c],
        running: 0,
        switching: 0,
        in_system: 0,
        cum: Cum::default(),
        tracer,
    };
    // Every user starts in the middle of a think time, at the stationary residual
    // (see `Dist::sample_residual`): no burst of arrivals at the start. Regressions:
    // started together, users with a constant think time and a full buffer arrive and
    // are dropped together forever (X 16.6/s against 19.9/s); started at a uniformly
    // scaled think time, they overload a small buffer at first (drops +12% at 4,000
    // requests).
    for user in 0..model.users {
        let t = model.think.sample_residual(&mut sim.rng);
        sim.q.push(t, Event::Send { user });
    }

    let (warm, mut recording) = match spec.warmup {
        Warmup::Fixed(w) if w > 0.0 => {
            sim.q.push(w, Event::WarmupEnd);
            (w, false)
        }
        _ => (0.0, true),
    };
    let (target, stop_at) = match spec.length {
        Length::Requests(r) => (r.div_ceil(5) * 5, f64::INFINITY),
        Length::Horizon(h) => (u64::MAX, warm + h),
    };
    let mser = matches!(spec.warmup, Warmup::Mser5 | Warmup::Mser5Each);
    let mut window = match to {
        None => Window::new(target, mser),
        Some(kept) => Window::new(kept.min(target), false),
    };
    if recording {
        window.open(sim.cum);
    }
    let mut events = 0u64;
    let mut since_completion = 0u64;

    loop {
        let Some((t, event)) = sim.q.pop_until(stop_at) else {
            if stop_at.is_finite() {
                sim.advance(stop_at);
            }
            break;
        };
        sim.advance(t);
        events += 1;
        since_completion += 1;
        let done = match event {
            Event::Send { user } => sim.send(user).map(|_| None)?,
            Event::Timeout { user, token } => sim.timeout(user, token).map(|_| None)?,
            Event::Idle { user, token } => sim.idle_close(user, token).map(|_| None)?,
            Event::Core { core } => sim.core_event(core)?,
            Event::WarmupEnd => {
                recording = true;
                window.open(sim.cum);
                sim.trace("warmup_end", NONE, NONE, NONE)?;
                None
            }
        };
        if let Some(o) = done {
            since_completion = 0;
            if recording && window.record(o, &sim.cum)? {
                break;
            }
        } else if since_completion > STALL_EVENTS {
            return Err(SimError::NoProgress {
                point,
                rep,
                events,
                completions: sim.cum.completions,
            });
        }
    }
    let again = Again {
        model: model.clone(),
        spec: *spec,
        point,
        rep,
        run_to,
    };
    Ok(window.finish(sim.cum, sim.censored(), model.cores, events, Some(again)))
}

#[cfg(test)]
mod tests {
    use servelab_dist::Dist;

    use super::*;
    use crate::trace::TextTrace;
    use crate::window::RepOutput;

    /// One replication, cut on its own.
    fn run_replication(
        m: &Model,
        s: &RunSpec,
        point: usize,
        rep: u32,
        t: &mut impl Tracer,
    ) -> Result<RepOutput> {
        let r = super::run_replication(m, s, point, rep, t)?;
        Ok(crate::warmup::close_point(vec![r], s.warmup)?.remove(0))
    }

    fn spec(requests: u64) -> RunSpec {
        RunSpec {
            reps: 1,
            length: Length::Requests(requests),
            warmup: Warmup::Mser5,
            seed: 3,
        }
    }

    /// One user and constant demands: after a think far longer than the idle gap
    /// every request meets an idle core and pays the idle demand (R = S + e); back to
    /// back (no think) none does (R = S); with two users on one core the requests
    /// that find it busy do not, so the mean demand lies between.
    #[test]
    fn a_request_after_an_idle_gap_pays_the_idle_demand_and_one_back_to_back_does_not() {
        let (s, e) = (0.005, 0.002);
        let run = |users: u32, think: Dist| {
            let m = Model {
                users,
                think,
                service: Dist::constant(s),
                idle_demand: Dist::constant(e),
                cores: 1,
                ..Model::default()
            };
            m.validate().unwrap();
            run_replication(&m, &spec(20_000), 0, 0, &mut NoTrace)
                .unwrap()
                .metrics
        };
        let thinking = run(1, Dist::constant(0.02));
        assert!(
            (thinking.attempt_response_time - (s + e)).abs() < 1e-9,
            "{}",
            thinking.attempt_response_time
        );
        let back_to_back = run(1, Dist::ZERO);
        assert!(
            (back_to_back.attempt_response_time - s).abs() < 1e-9,
            "{}",
            back_to_back.attempt_response_time
        );
        // 2 users thinking 20 ms on one core: some requests find it busy or just
        // freed, so U = X·D with D between S and S + e.
        let busy = run(2, Dist::exp(0.02));
        let demand = busy.utilisation / busy.throughput;
        assert!(demand > s * 1.01 && demand < (s + e) * 0.99, "{demand}");
        // Without an idle demand the draw stream is untouched: the same run as before it
        // existed (seed 002's numbers do not move).
        let none = Model {
            users: 8,
            think: Dist::exp(0.02),
            service: Dist::exp(s),
            cores: 1,
            ..Model::default()
        };
        let a = run_replication(&none, &spec(5_000), 0, 0, &mut NoTrace).unwrap();
        let b = run_replication(
            &Model {
                idle_gap: 0.5,
                ..none.clone()
            },
            &spec(5_000),
            0,
            0,
            &mut NoTrace,
        )
        .unwrap();
        assert_eq!(
            a.metrics.attempt_response_time,
            b.metrics.attempt_response_time
        );
    }

    /// A saturated server (zero think) with deterministic demands runs at its
    /// bound c/D, where D is a request's mean demand: with a session of one
    /// request every request pays the first demand d, so X = c/(S+d); with a
    /// session of s requests X = c/(S+d/s); with one connection for the whole
    /// run the one handshake per user fades and X = c/S.
    #[test]
    fn a_connection_s_first_request_pays_the_first_demand() {
        let (c, s, d) = (2.0, 0.001, 0.004);
        let base = Model {
            users: 20,
            think: Dist::ZERO,
            service: Dist::constant(s),
            first_demand: Dist::constant(d),
            cores: 2,
            affinity: Affinity::Shared,
            ..Model::default()
        };
        let x = |session: Option<u32>| {
            let m = Model {
                session,
                ..base.clone()
            };
            m.validate().unwrap();
            run_replication(&m, &spec(40_000), 0, 0, &mut NoTrace)
                .unwrap()
                .metrics
                .throughput
        };
        let close = |got: f64, want: f64| (got - want).abs() / want < 0.01;
        let one = x(Some(1));
        assert!(
            close(one, c / (s + d)),
            "session 1: {one} vs {}",
            c / (s + d)
        );
        let ten = x(Some(10));
        assert!(close(ten, c / (s + d / 10.0)), "session 10: {ten}");
        let forever = x(None);
        assert!(
            close(forever, c / s),
            "one connection: {forever} vs {}",
            c / s
        );
        // And the bound says the same.
        let b = crate::bounds::bounds(&Model {
            session: Some(1),
            ..base.clone()
        });
        assert!(close(b.throughput_max, c / (s + d)), "{b:?}");
    }

    #[test]
    fn conservation_laws_hold() {
        // Little's law on the server and the response-time law on the whole loop, with
        // FCFS and no drops: N = X (R + Z) up to edge effects of the window.
        let m = Model {
            users: 40,
            think: Dist::exp(1.0),
            service: Dist::exp(0.1),
            ..Model::default()
        };
        let out = run_replication(&m, &spec(50_000), 0, 0, &mut NoTrace).unwrap();
        let r = out.metrics;
        let little = r.throughput * r.attempt_response_time;
        assert!(
            (little - r.mean_in_system).abs() / r.mean_in_system < 0.02,
            "{r:?}"
        );
        let n = r.throughput * (r.attempt_response_time + 1.0);
        assert!((n - 40.0).abs() < 1.0, "{n}");
        assert!(
            (r.utilisation - r.throughput * 0.1 / 4.0).abs() < 0.02,
            "{r:?}"
        );
        assert_eq!(r.drop_rate, 0.0);
        assert_eq!(out.kept + out.warmup_deleted, 50_000);
    }

    #[test]
    fn same_seed_same_result_other_seed_other_result() {
        let m = Model {
            users: 30,
            ..Model::default()
        };
        let a = run_replication(&m, &spec(2000), 0, 0, &mut NoTrace).unwrap();
        let b = run_replication(&m, &spec(2000), 0, 0, &mut NoTrace).unwrap();
        let c = run_replication(&m, &spec(2000), 0, 1, &mut NoTrace).unwrap();
        assert_eq!(
            a.metrics.attempt_response_time,
            b.metrics.attempt_response_time
        );
        assert_eq!(a.events, b.events);
        assert_ne!(
            a.metrics.attempt_response_time,
            c.metrics.attempt_response_time
        );
    }

    #[test]
    fn full_buffer_drops_and_blocked_users_think_again() {
        // 1 core, 1 thread, buffer 2: at most 3 requests on the server.
        let m = Model {
            users: 20,
            cores: 1,
            buffer: 2,
            think: Dist::exp(0.5),
            service: Dist::exp(0.2),
            ..Model::default()
        };
        let r = run_replication(&m, &spec(5000), 0, 0, &mut NoTrace)
            .unwrap()
            .metrics;
        assert!(r.drop_rate > 0.0 && r.drop_fraction > 0.0);
        assert!(r.mean_in_system <= 3.0 && r.mean_buffer <= 2.0);
        assert!(r.utilisation > 0.9 && r.utilisation <= 1.0);
    }

    #[test]
    fn timeouts_make_badput_and_retries() {
        // Overloaded: timeouts of about 1 s while responses take far longer.
        let m = Model {
            users: 60,
            cores: 1,
            buffer: 1000,
            think: Dist::exp(1.0),
            service: Dist::exp(0.1),
            timeout: Some(Dist::exp(0.5).shifted(0.5)),
            ..Model::default()
        };
        let r = run_replication(&m, &spec(5000), 0, 0, &mut NoTrace)
            .unwrap()
            .metrics;
        assert!(r.timeout_rate > 0.0 && r.badput > 0.0, "{r:?}");
        assert!((r.goodput + r.badput - r.throughput).abs() < 1e-9);
        assert!(r.throughput <= 10.5, "one core at 0.1 s: {r:?}");
    }

    #[test]
    fn bounded_retries_give_up() {
        let m = Model {
            users: 30,
            cores: 1,
            think: Dist::exp(1.0),
            service: Dist::exp(0.2),
            timeout: Some(Dist::constant(0.3)),
            retries: Some(1),
            ..Model::default()
        };
        let r = run_replication(&m, &spec(2000), 0, 0, &mut NoTrace)
            .unwrap()
            .metrics;
        assert!(r.give_up_rate > 0.0, "{r:?}");
    }

    #[test]
    fn round_robin_switch_time_is_not_utilisation() {
        let m = Model {
            users: 200,
            threads_per_core: 4,
            policy: Policy::RoundRobin,
            quantum: 0.05,
            context_switch: 0.01,
            service: Dist::exp(0.2),
            ..Model::default()
        };
        let r = run_replication(&m, &spec(5000), 0, 0, &mut NoTrace)
            .unwrap()
            .metrics;
        assert!(r.switch_fraction > 0.01, "{r:?}");
        assert!(r.utilisation + r.switch_fraction <= 1.0 + 1e-9);
        assert!(r.utilisation < 0.95, "{r:?}");
    }

    #[test]
    fn fixed_warmup_and_horizon() {
        let m = Model {
            users: 10,
            ..Model::default()
        };
        let s = RunSpec {
            reps: 1,
            length: Length::Horizon(500.0),
            warmup: Warmup::Fixed(100.0),
            seed: 1,
        };
        let out = run_replication(&m, &s, 0, 0, &mut NoTrace).unwrap();
        assert_eq!(out.warmup_time, 100.0);
        assert!((out.metrics.duration - 500.0).abs() < 1e-9);
        assert_eq!(out.warmup_deleted, 0);
    }

    /// Checks the server's bookkeeping at every event, and counts where cancelled
    /// requests were found.
    struct Invariants {
        cores: u32,
        threads: usize,
        buffer: usize,
        /// Cancels in the buffer, in a run queue, on a core.
        cancels: [u64; 3],
        /// Held workers: a thread may idle, held, while connections wait.
        held: bool,
        /// Keep-alive closes seen.
        closes: u64,
    }

    impl Tracer for Invariants {
        fn record(&mut self, l: &TraceLine) -> std::io::Result<()> {
            let holding = l.in_system - l.buffer;
            assert!(l.cores_running <= self.cores, "{l:?}");
            assert!(l.buffer <= self.buffer, "{l:?}");
            assert!(holding <= self.threads, "{l:?}");
            // Nobody waits in the buffer while a thread is free (checked after the
            // events that free a thread are done: they are traced before the
            // buffered request takes it).
            let frees = matches!(l.event, "done" | "badput" | "cancel" | "close");
            assert!(
                self.held || frees || l.buffer == 0 || holding == self.threads,
                "{l:?}"
            );
            self.closes += u64::from(l.event == "close");
            if l.event == "cancel" {
                let at = match (l.thread, l.core) {
                    (None, _) => 0,
                    (Some(_), None) => 1,
                    (Some(_), Some(_)) => 2,
                };
                self.cancels[at] += 1;
            }
            Ok(())
        }
    }

    #[test]
    fn cancelling_keeps_the_books_wherever_the_request_is() {
        for affinity in [Affinity::Pinned, Affinity::Shared] {
            let m = Model {
                users: 300,
                threads_per_core: 4,
                affinity,
                buffer: 30,
                policy: Policy::RoundRobin,
                quantum: 0.05,
                context_switch: 0.01,
                think: Dist::exp(3.0),
                service: Dist::exp(0.2),
                timeout: Some(Dist::exp(0.5).shifted(0.5)),
                retry_wait: Dist::exp(0.2),
                on_full: OnFull::Reject,
                on_abandon: OnAbandon::Cancel,
                ..Model::default()
            };
            let mut t = Invariants {
                cores: m.cores,
                threads: m.threads() as usize,
                buffer: m.buffer as usize,
                cancels: [0; 3],
                held: false,
                closes: 0,
            };
            run_replication(&m, &spec(5000), 0, 0, &mut t).unwrap();
            assert!(
                t.cancels.iter().all(|&n| n > 0),
                "{affinity}: cancels in buffer, run queue, on a core: {:?}",
                t.cancels
            );
        }
    }

    /// Held workers with everything that closes a connection at once (keep-alive
    /// timeouts, a request limit, sessions, client timeouts with cancel, refusals at
    /// a small backlog): the books stay straight (no more requests on threads than
    /// threads, the backlog within its bound) and every kind of close happens.
    #[test]
    fn held_workers_keep_the_books_through_every_kind_of_close() {
        use crate::model::{Connections, HeldWorkers};
        for affinity in [Affinity::Pinned, Affinity::Shared] {
            let m = Model {
                users: 60,
                cores: 2,
                threads_per_core: 4,
                affinity,
                think: Dist::exp(0.3),
                service: Dist::exp(0.05),
                timeout: Some(Dist::exp(0.5).shifted(0.2)),
                retry_wait: Dist::exp(0.1),
                on_full: OnFull::Reject,
                on_abandon: OnAbandon::Cancel,
                session: Some(7),
                connections: Connections::Held(HeldWorkers {
                    keepalive_timeout: Some(0.25),
                    max_requests: Some(5),
                    backlog: 6,
                }),
                ..Model::default()
            };
            let mut t = Invariants {
                cores: m.cores,
                threads: m.threads() as usize,
                buffer: 6,
                cancels: [0; 3],
                held: true,
                closes: 0,
            };
            let out = run_replication(&m, &spec(5000), 0, 0, &mut t).unwrap();
            let r = out.metrics;
            assert!(t.closes > 0, "{affinity}: no keep-alive close");
            assert!(t.cancels.iter().sum::<u64>() > 0, "{affinity}: no cancel");
            assert!(
                r.drop_rate > 0.0 && r.timeout_rate > 0.0,
                "{affinity}: {r:?}"
            );
            assert!(r.mean_buffer <= 6.0, "{affinity}: {r:?}");
        }
    }

    #[test]
    fn trace_has_a_line_per_event_kind() {
        let m = Model {
            users: 3,
            cores: 1,
            buffer: 0,
            think: Dist::exp(0.1),
            ..Model::default()
        };
        let mut t = TextTrace::new(Vec::new());
        run_replication(&m, &spec(20), 0, 0, &mut t).unwrap();
        let text = String::from_utf8(t.finish().unwrap()).unwrap();
        for kind in ["\tsend\t", "\tready\t", "\trun\t", "\tdone\t", "\tdrop\t"] {
            assert!(text.contains(kind), "{kind} missing from\n{text}");
        }
    }
}
