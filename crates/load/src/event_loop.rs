//! One event-loop thread of the load generator: its client connections, its
//! epoll instance, its timers and its recorder.
//!
//! Why a hand-written loop: the generator must cost the client less CPU per request
//! than wrk, so that the server is what gets measured. Per keep-alive request the
//! loop makes two system calls, one `send` and one `recv`, plus a share of one
//! `epoll_wait`: sockets are registered once, edge-triggered, for input and output,
//! so nothing is re-armed per request (wrk re-arms its write event with
//! `epoll_ctl` twice per request). Request bytes are prebuilt, responses are read
//! into one buffer per thread and parsed without copying, and nothing is allocated
//! per request. All system calls go through `rustix`, whose wrappers are safe:
//! this module has no `unsafe`.
//!
//! Poll before blocking (`--poll-before-sleep`, [`waker::poll_then_wait`]):
//! on loopback the server pays for waking its client. Its `send` delivers the
//! segment and wakes the blocked client thread from the server's own context,
//! with an IPI that on a virtual machine exits to the hypervisor (about 8 us
//! of nginx's CPU each, bench/results/2026-12-04/h2-wakeups). A cheap client
//! sleeps more often than a busy one, and the server looks slower under it:
//! blocking at once, `load --h2` got 0.90 ± 0.03 of h2load's requests/s from
//! nginx at 50x10 over TLS and h2c while it blocked 0.47 and 0.67 times per
//! request against h2load's 0.10 and 0.30. So while a request is in flight the
//! loop first calls `epoll_wait` with a zero timeout until something is ready
//! or a budget has passed (one clock read per poll), and blocks only then. It
//! never polls past its planned wait (timers, thinks, the time limit and the
//! stop flag keep their deadlines), nor while nothing is in flight (users
//! thinking), and a wake found by polling teaches [`WakeLead`] nothing.
//! The budget is a trade, measured against nginx at 50x10
//! (bench/results/2026-12-04/h2-poll): 1-2 us change little over TLS (load
//! still 0.89-0.91 of h2load's rate); 3 us cut load's blocks per request to
//! 0.18 and 0.33 (h2load: 0.11, 0.31), and load got 1.03 ± 0.04 of
//! h2load's rate over TLS and 1.00 ± 0.04 over h2c at 0.89 and 0.98 of its
//! client CPU per request (20 rounds). With 5 us and more load sleeps less
//! than h2load and gets more from nginx (over h2c 1.10 ± 0.07 of h2load's
//! rate at 5 us, over TLS 1.09 ± 0.06 at 10 us), at up to 1.09-1.13x
//! h2load's client CPU over h2c (10-20 us). HTTP/2's default is 3 us in
//! cleartext and 4 us over TLS ([`crate::spec::DEFAULT_POLL_BEFORE_SLEEP_H2_TLS`]):
//! once load's requests carried `:path` as a literal, as h2load's do, it woke
//! 0.23 times per request over TLS against h2load's 0.11 and read nginx at
//! 0.946 ± 0.031 of h2load's rate (48 rounds); 4 us, chosen by a calibration
//! declared beforehand, read 1.013 ± 0.016 on fresh rounds (32) at 50x10 (at
//! 10x10 and 10x100 not settled: docs/load.md), while h2c at 3 us reads
//! 0.99-1.02 at every point (bench/results/2026-12-04/h2-path).
//! HTTP/1.1's is off (not measured here, and load already costs about what
//! wrk does there). The
//! step from 2 to 5 us is steep and was measured on one virtual machine only;
//! it moves with the machine: on a faster one (2026-12-05) nginx wrote a
//! response about every 7 us, load needed 5.2 us of work per response, and
//! the best budget over TLS ranged from none (10x10) to 8 us (50x10, at
//! 1.12x h2load's client CPU), so no fixed budget kept load within 5% of
//! h2load's rate and under its client CPU at every point
//! (bench/results/2026-12-05/h2-tls-diag). Elsewhere `--poll-before-sleep`
//! retunes it, and 0 turns it off.
//!
//! Nap before blocking (`--nap`, off by default): the loop sleeps on its own
//! timer, off the epoll wait queue, so that the server's sends wake nobody.
//! It spares the server the wake-ups for what arrives during a nap, instead
//! of trading them for the client's CPU: against nginx over TLS on that
//! machine no wake-up interrupt reached the client's CPU, and nginx spent
//! 0.81-0.84x the CPU per request it spent under h2load, at 0.70-0.75x
//! h2load's client CPU.
//!
//! Layout (one [`ClientLoop`], its methods split by noun):
//! - this file: the loop itself (wait, events, timers, the wake-up timerfd),
//!   and the count of the requests unfinished when it ends;
//! - [`exchange`]: the life of one request on a connection (connect to each
//!   address in turn, back off after a failed connect, send, read, complete,
//!   fail, time out);
//! - [`closed`]: closed users (quotas, think time, the ready queue);
//! - [`open`]: the open workload (arrivals, the pool of connections, retries);
//! - [`tls_io`]: `https://`: the TLS handshake, and the request and response
//!   through the rustls session.

mod closed;
mod exchange;
mod h2;
mod open;
mod tls_io;
mod waker;

use waker::{Idle, Waker, is_timer, poll_then_wait};

use std::collections::VecDeque;
use std::os::fd::OwnedFd;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use rand::SeedableRng;
use rand_pcg::Pcg64Mcg;
use rustix::event::epoll;
use servelab_dist::Dist;

use crate::arrival::Schedule;
use crate::client_conn::{ClientConn, ConnState};
use crate::connect_failure::ConnectFailure;
use crate::control::RunControl;
use crate::expect_status::ExpectStatus;
use crate::metrics::Recorder;
use crate::spec::Arrival;
use crate::stages::Stages;
use crate::target::{Picker, Prepared};
use crate::timer::{Kind, Timers};

use open::Pending;

/// Size of the per-thread receive buffer.
const READ_BUF: usize = 64 * 1024;
/// Events taken per `epoll_wait`.
const EVENTS: usize = 1024;
/// Most closed users started from the ready queue per loop turn.
const READY_BATCH: usize = 1024;
/// The epoll data word of the arrival timer (no connection has this index).
const TIMER_TOKEN: u64 = u64::MAX;
/// Longest sleep in `epoll_wait`, so that progress and the stop flag are seen.
const MAX_WAIT: Duration = Duration::from_millis(100);
/// Longest sleep while closed users wait for a ramp to reach them: a user
/// joins at most this late (a ramp of 100 users over 30 s adds one every 300 ms).
const STAGE_TICK: Duration = Duration::from_millis(10);
/// A run without a time limit (`--requests` only) stops when connects have
/// failed for this long without one success: otherwise a run against a server
/// that is down would back off and reconnect forever.
pub(crate) const UNREACHABLE: Duration = Duration::from_secs(10);

/// This thread's share of the workload.
#[derive(Debug, Clone)]
pub(crate) enum ThreadShare {
    /// `users` closed users; `first_user` numbers them among the segment's
    /// `total_users`, for seeding and for each user's share of the request limit.
    Closed {
        users: u32,
        first_user: u64,
        total_users: u64,
        think: Dist,
    },
    /// An open stream of `rate` requests/s on up to `connections` connections.
    Open {
        rate: f64,
        arrival: Arrival,
        connections: u32,
    },
}

/// Everything one thread needs.
#[derive(Debug, Clone)]
pub(crate) struct LoopConfig {
    pub index: usize,
    pub targets: Arc<Vec<Prepared>>,
    pub picker: Picker,
    pub share: ThreadShare,
    pub session: Option<u32>,
    pub timeout: Option<Dist>,
    pub retries: Option<u32>,
    pub retry_wait: Dist,
    /// The statuses that count as ok.
    pub expect: ExpectStatus,
    /// Send a request again, once, when the reused connection it went out on
    /// closes before any byte of the answer (the method must be idempotent).
    pub retry_on_close: bool,
    pub seed: u64,
    /// The stages, when the load ramps, and this thread's share of their level
    /// (closed: the segment's share of the users; open: of the rate).
    pub stages: Option<(Arc<Stages>, f64)>,
    /// Event-loop threads of the run, for the order in which users join.
    pub threads: usize,
    pub start: Instant,
    pub deadline: Option<Instant>,
    /// HTTP/2 (`--h2`): the streams per connection; `None` for HTTP/1.1.
    /// Closed users are then `users` connections × `streams` slots.
    pub streams: Option<u32>,
    /// How long the loop polls its sockets before it blocks while requests
    /// are in flight (`--poll-before-sleep`; zero: it blocks at once).
    pub poll_before_sleep: Duration,
    /// How long the loop naps on its own timer before it polls and blocks,
    /// while requests are in flight (`--nap`; zero: never).
    pub nap: Duration,
}

impl LoopConfig {
    /// Whether a loop stops at the top of a turn at `now`: `Some(false)` at
    /// the time limit or when told to stop, `Some(true)` when it gives up on
    /// an unreachable target (see [`UNREACHABLE`] and
    /// [`NEVER_CONNECTED`](crate::connect_failure::NEVER_CONNECTED)), `None`
    /// to go on. `backing_off`: connections waiting out a backoff.
    fn stops_at(
        &self,
        control: &RunControl,
        now: Instant,
        backing_off: usize,
        last_connected: Instant,
    ) -> Option<bool> {
        if self.deadline.is_some_and(|d| now >= d) || control.stop.load(Ordering::Relaxed) {
            return Some(false);
        }
        if self.deadline.is_none()
            && backing_off > 0
            && now.saturating_duration_since(last_connected) >= UNREACHABLE
        {
            return Some(true);
        }
        // Nothing ever connected: the target is down or the address is
        // wrong, and waiting longer would only fill the report with zeros.
        control
            .never_connected(now.saturating_duration_since(self.start))
            .then_some(true)
    }

    /// What a loop does before it blocks (see [`poll_then_wait`]): nap
    /// `nap`, then poll for `poll_before_sleep`, while `sent > completed` (a
    /// request is in flight, so an answer is coming); neither otherwise
    /// (users thinking, nothing to wait for but a timer).
    fn idle(&self, rec: &Recorder) -> Idle {
        let (sent, completed) = (rec.counts.sent, rec.counts.completed);
        Idle {
            nap: budget_in_flight(self.nap, sent, completed),
            poll: budget_in_flight(self.poll_before_sleep, sent, completed),
        }
    }

    /// Until when a loop may sleep: its next timed event `timed`, the run's
    /// time limit, and at most [`MAX_WAIT`] (so that the stop flag is seen).
    fn sleep_until(&self, now: Instant, timed: Option<Instant>) -> Instant {
        let mut until = now + MAX_WAIT;
        if let Some(t) = timed {
            until = until.min(t);
        }
        if let Some(d) = self.deadline {
            until = until.min(d);
        }
        until
    }
}

/// The poll budget of a loop that has sent `sent` requests and finished
/// `completed`: `budget` while one is in flight, zero otherwise.
fn budget_in_flight(budget: Duration, sent: u64, completed: u64) -> Duration {
    if sent > completed {
        budget
    } else {
        Duration::ZERO
    }
}

/// What a thread hands back.
#[derive(Debug)]
pub(crate) struct LoopResult {
    pub recorder: Recorder,
    /// When the loop stopped, before the unfinished requests were counted (at
    /// a very high rate, drawing the never-sent arrivals takes a while, and it
    /// is not part of the run).
    pub ended: Instant,
    /// The thread stopped early: its target was unreachable (see [`UNREACHABLE`]
    /// and [`NEVER_CONNECTED`](crate::connect_failure::NEVER_CONNECTED)).
    pub gave_up: bool,
    /// The last connect that failed on every address (or TLS handshake that
    /// failed).
    pub last_connect_failure: Option<ConnectFailure>,
    /// Whether a connection was ever made (for `https://`, a handshake completed).
    pub connected: bool,
    /// CPU time (user + system) this thread used.
    pub cpu: Duration,
}

/// One event-loop thread: its client connections and everything they share.
struct ClientLoop {
    cfg: LoopConfig,
    control: Arc<RunControl>,
    epoll: OwnedFd,
    conns: Vec<ClientConn>,
    timers: Timers,
    rec: Recorder,
    buf: Vec<u8>,
    /// Closed users ready to start their next request.
    ready: VecDeque<usize>,
    /// Closed users still running.
    active: usize,
    /// Closed users above the stages' level, waiting for the ramp, by index
    /// (the order in which they join).
    parked: std::collections::BTreeSet<usize>,
    /// Per target, the index of the address that last accepted a connect, so
    /// that a host with an address that refuses costs one failed connect per
    /// thread, not one per connection.
    preferred: Vec<usize>,
    /// When a connect last succeeded (the start of the run before the first).
    last_connected: Instant,
    /// Connections waiting out a backoff after a failed connect.
    backing_off: usize,
    /// Set when the run gave up on an unreachable target (see [`UNREACHABLE`]).
    gave_up: bool,
    /// Whether this thread has connected at least once.
    connected: bool,
    /// The last second of the run whose requests in flight were counted.
    sampled_second: Option<u64>,
    /// The last connect that failed on every address (or TLS handshake that
    /// failed).
    last_connect_failure: Option<ConnectFailure>,
    // Open workload only:
    /// Retried requests whose wait is over, waiting for a connection. Fresh
    /// arrivals never wait here: they stay in `schedule` until a connection
    /// takes them, so the client's backlog costs no memory however long the
    /// target is saturated.
    pending: VecDeque<Pending>,
    /// Pool connections with an idle keep-alive socket.
    idle: Vec<usize>,
    /// Pool connections without a socket.
    free: Vec<usize>,
    /// Requests waiting out their retry wait, by id; `None` is a free id.
    retrying: Vec<Option<Pending>>,
    retry_ids: Vec<usize>,
    waiting_retries: usize,
    in_flight: usize,
    schedule: Schedule,
    /// A timerfd armed for the loop's next timed event (a think's end, a
    /// retry wait's, an arrival), in the epoll set: see [`wake_timer`].
    waker: Waker,
    arrivals_done: bool,
    arrival_rng: Pcg64Mcg,
}

/// The loop's wake-up timer: a timerfd in the epoll set, edge-triggered.
///
/// `epoll_wait` sleeps in whole milliseconds, rounded up: a think of 10 ms
/// drawn at a random instant ran 0.6 ms long on average (20 users with a
/// 10 ms think lost 5–6% of their rate), and an open request would start up
/// to 1 ms late, its corrected latency counting the client's oversleeping.
/// `epoll_pwait2` takes nanoseconds but sleeps on a range widened by the
/// thread's timer slack (50 us by default); a timerfd's expiry is set to the
/// nanosecond, so the loop wakes at the deadline plus the wake-up latency of
/// the machine, which it learns and sets the timer ahead by ([`WakeLead`]).
/// It is armed for the loop's next timed event only when that event changes, so a loop
/// whose next deadline stays put makes no extra system call. Edge-triggered:
/// each expiry wakes `epoll_wait` once, and re-arming resets the expiry
/// count, so the expiry count is never read (one system call less per wake).
fn wake_timer(epoll: &OwnedFd) -> std::io::Result<OwnedFd> {
    use rustix::time::{TimerfdClockId, TimerfdFlags, timerfd_create};
    let t = timerfd_create(
        TimerfdClockId::Monotonic,
        TimerfdFlags::NONBLOCK | TimerfdFlags::CLOEXEC,
    )?;
    epoll::add(
        epoll,
        &t,
        epoll::EventData::new_u64(TIMER_TOKEN),
        epoll::EventFlags::IN | epoll::EventFlags::ET,
    )?;
    Ok(t)
}

/// How early the wake-up timer is set before a deadline, learnt as the
/// median of the loop's measured wake-up latencies.
///
/// A timerfd expires on time, but the thread runs some time later: on the
/// machine this was measured on (a shared VM), a bare timerfd in a
/// SCHED_FIFO thread, with no other work, woke 80–115 us after a 10 ms
/// expiry, and the loop's thinks ran 40–110 us long on average. Setting the
/// timer that much early and polling for the rest puts the wake on the
/// deadline: the loop learns the latency from each timer wake that found it
/// asleep (a step of [`WakeLead::STEP`] up or down per wake, which tracks the
/// median) and polls `epoll_wait` without sleeping from the wake to the
/// deadline. The polling costs CPU only for the part of the lead the wake
/// did not use: half the wakes, by the jitter of the latency.
#[derive(Debug, Clone, Copy, Default)]
struct WakeLead(Duration);

impl WakeLead {
    /// The change per wake: the lead reaches a latency of 100 us in 50 wakes.
    const STEP: Duration = Duration::from_micros(2);
    /// The most it may grow: beyond it a wake is a preemption (another
    /// process had the CPU), not the timer, and polling would waste the CPU.
    const MAX: Duration = Duration::from_micros(500);

    fn get(self) -> Duration {
        self.0
    }

    /// A wake `late` after the timer's expiry.
    fn learn(&mut self, late: Duration) {
        self.0 = if late > self.0 {
            (self.0 + Self::STEP).min(Self::MAX)
        } else {
            self.0.saturating_sub(Self::STEP)
        };
    }
}

/// This thread's CPU time (user + system), to the nanosecond.
pub(crate) fn thread_cpu() -> Duration {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
    Duration::new(t.tv_sec as u64, t.tv_nsec as u32)
}

/// Runs one event loop to the end of the run.
pub(crate) fn run(cfg: LoopConfig, control: Arc<RunControl>) -> std::io::Result<LoopResult> {
    if !cfg.nap.is_zero() {
        // A nap of microseconds with the default 50 us of timer slack would
        // last tens of microseconds: this thread's timers fire on time.
        rustix::thread::set_current_timer_slack(std::num::NonZeroU64::new(1))?;
    }
    if cfg.streams.is_some() {
        return h2::run(cfg, control);
    }
    let cpu0 = thread_cpu();
    let mut w = ClientLoop::new(cfg, control)?;
    let ended = w.run()?;
    w.count_unfinished(ended);
    w.control.progress[w.cfg.index].store(w.rec.counts.completed, Ordering::Relaxed);
    Ok(LoopResult {
        ended,
        gave_up: w.gave_up,
        last_connect_failure: w.last_connect_failure,
        connected: w.connected,
        recorder: w.rec,
        cpu: thread_cpu().saturating_sub(cpu0),
    })
}

impl ClientLoop {
    /// Closed users with a think time start in the middle of one, at the
    /// stationary residual of the think distribution, as the simulator's users
    /// do: where a user found thinking in steady state would be. Starting them
    /// all at once (wrk's way, kept when there is no think time) sends a burst
    /// of N requests at the first instant, which under client timeouts turns
    /// into a wave of timeouts and retries that steady state never has.
    fn stagger_closed_users(&mut self, now: Instant) {
        let ThreadShare::Closed { think, .. } = self.cfg.share else {
            return;
        };
        // Users that join a ramp are spread in time by the ramp itself.
        if think.is_zero() || self.cfg.stages.is_some() {
            return;
        }
        for i in self.ready.drain(..) {
            let s = &mut self.conns[i];
            s.state = ConnState::Thinking;
            let d = Duration::from_secs_f64(think.sample_residual(&mut s.rng));
            s.think_from = Some((now, None));
            s.timer.arm(now + d, i, &mut self.timers);
        }
    }
}

fn seeded(seed: u64, stream: u64) -> Pcg64Mcg {
    // Mix so that neighbouring streams are unrelated.
    let mut x = seed ^ stream.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    Pcg64Mcg::seed_from_u64(x ^ (x >> 31))
}

impl ClientLoop {
    fn new(cfg: LoopConfig, control: Arc<RunControl>) -> std::io::Result<ClientLoop> {
        let epoll = epoll::create(epoll::CreateFlags::CLOEXEC)?;
        let now = Instant::now();
        let mut arrival_rng = seeded(cfg.seed, (1 << 50) + cfg.index as u64);
        let (n, first) = match cfg.share {
            ThreadShare::Closed {
                users, first_user, ..
            } => (users as usize, first_user),
            ThreadShare::Open { connections, .. } => (connections as usize, 1 << 40),
        };
        let mut conns: Vec<ClientConn> = (0..n)
            .map(|i| ClientConn::new(seeded(cfg.seed, first + i as u64), now))
            .collect();
        if let ThreadShare::Closed {
            first_user,
            total_users,
            ..
        } = cfg.share
        {
            // Closed users issue a fixed number of requests each (seed 002's model):
            // the limit is cut into per-user quotas, so the total is exact and
            // sessions line up (connections = users x sessions).
            if control.limit != u64::MAX {
                for (i, s) in conns.iter_mut().enumerate() {
                    let seg = crate::spec::Segment {
                        index: (first_user + i as u64 + 1) as u32,
                        count: total_users as u32,
                    };
                    s.quota = seg.share(control.limit);
                }
            }
        }
        let rec = Recorder::new(cfg.start);
        let open = matches!(cfg.share, ThreadShare::Open { .. });
        let waker = Waker::new(&epoll)?;
        let mut l = ClientLoop {
            epoll,
            conns,
            timers: Timers::default(),
            rec,
            buf: vec![0; READ_BUF],
            ready: if open {
                VecDeque::new()
            } else {
                (0..n).collect()
            },
            active: if open { 0 } else { n },
            parked: std::collections::BTreeSet::new(),
            preferred: vec![0; cfg.targets.len()],
            last_connected: now,
            backing_off: 0,
            gave_up: false,
            connected: false,
            sampled_second: None,
            last_connect_failure: None,
            pending: VecDeque::new(),
            idle: Vec::new(),
            free: if open {
                (0..n).rev().collect()
            } else {
                Vec::new()
            },
            retrying: Vec::new(),
            retry_ids: Vec::new(),
            waiting_retries: 0,
            in_flight: 0,
            schedule: match (&cfg.share, &cfg.stages) {
                (ThreadShare::Open { arrival, .. }, Some((stages, scale))) => Schedule::staged(
                    cfg.start,
                    Arc::clone(stages),
                    *scale,
                    *arrival,
                    &mut arrival_rng,
                ),
                (ThreadShare::Open { rate, arrival, .. }, None) => {
                    Schedule::new(cfg.start, *rate, *arrival)
                }
                (ThreadShare::Closed { .. }, _) => Schedule::new(cfg.start, 1.0, Arrival::Uniform),
            },
            waker,
            arrivals_done: !open,
            arrival_rng,
            cfg,
            control,
        };
        l.stagger_closed_users(now);
        Ok(l)
    }

    fn open(&self) -> bool {
        matches!(self.cfg.share, ThreadShare::Open { .. })
    }

    fn finished(&self) -> bool {
        if self.open() {
            self.arrivals_done
                && self.pending.is_empty()
                && self.in_flight == 0
                && self.waiting_retries == 0
        } else {
            self.active == 0
        }
    }

    /// Runs the loop until the run ends; returns when it ended.
    fn run(&mut self) -> std::io::Result<Instant> {
        let mut events = vec![
            epoll::Event {
                flags: epoll::EventFlags::empty(),
                data: epoll::EventData::new_u64(0),
            };
            EVENTS
        ];
        for turn in 0u64.. {
            let now = Instant::now();
            if let Some(gave_up) =
                self.cfg
                    .stops_at(&self.control, now, self.backing_off, self.last_connected)
            {
                self.gave_up = gave_up;
                break;
            }
            self.sample_in_flight(now);
            self.fire_timers(now);
            self.unpark(now);
            if self.open() {
                self.dispatch(now);
            } else {
                // The first turn connects every user at once, as wrk does: the
                // server accepts them all before it is busy answering (later,
                // its accept queue may overflow and SYNs wait for their 1 s
                // retransmission). Later turns start at most READY_BATCH users,
                // so reconnecting users cannot hold the loop for long.
                let batch = if turn == 0 { usize::MAX } else { READY_BATCH };
                for _ in 0..self.ready.len().min(batch) {
                    if let Some(i) = self.ready.pop_front() {
                        self.start_request(i, Instant::now());
                    }
                }
            }
            self.control.progress[self.cfg.index]
                .store(self.rec.counts.completed, Ordering::Relaxed);
            if self.finished() {
                break;
            }
            let wait = if self.ready.is_empty() {
                // The next timed event: a connection's deadline, or the next
                // arrival. The arrival matters only when a connection could
                // take it; otherwise (all busy) it waits in the schedule until
                // one frees, and waking for it would spin.
                let mut timed = self.timers.next_deadline();
                if self.arrival_can_start() {
                    let next = self.schedule.next();
                    timed = Some(timed.map_or(next, |t| t.min(next)));
                }
                let mut until = self.cfg.sleep_until(now, timed);
                if !self.parked.is_empty() {
                    until = until.min(now + STAGE_TICK);
                }
                self.waker.plan(now, until, timed == Some(until))?
            } else {
                Duration::ZERO
            };
            let idle = self.cfg.idle(&self.rec);
            let (got, slept_from) =
                poll_then_wait(&self.epoll, &mut events[..], wait, idle, Instant::now())?;
            let Some(n) = got else {
                continue;
            };
            let woke = Instant::now();
            for ev in &events[..n] {
                if is_timer(ev) {
                    self.waker.woke(woke, slept_from.unwrap_or(woke));
                    continue;
                }
                let (i, generation) = ClientConn::untoken(ev.data.u64());
                if self.conns[i].generation != generation || self.conns[i].sock.is_none() {
                    continue; // an event for a socket closed earlier in this batch
                }
                self.on_event(i, ev.flags, Instant::now());
            }
        }
        Ok(Instant::now())
    }

    /// Counts the requests in flight once per second of the run, at the
    /// first loop turn in it, for the series (a timeline of the client's
    /// concurrency: with the series' latency it checks Little's law second by
    /// second). Closed users are counted one by one, once a second.
    fn sample_in_flight(&mut self, now: Instant) {
        let t = now.saturating_duration_since(self.cfg.start).as_secs();
        if self.sampled_second == Some(t) {
            return;
        }
        self.sampled_second = Some(t);
        let n = if self.open() {
            self.in_flight + self.waiting_retries + self.pending.len()
        } else {
            self.conns.iter().filter(|s| s.has_request()).count()
        };
        self.rec.in_flight_at(now, n as u64);
    }

    fn fire_timers(&mut self, now: Instant) {
        while let Some((at, kind)) = self.timers.pop_due(now) {
            match kind {
                Kind::Conn(i) => {
                    if self.conns[i].timer.fire(at, now, i, &mut self.timers) {
                        self.on_timer(i, now);
                    }
                }
                Kind::Link(_) => {} // the HTTP/2 loop's
                Kind::Retry { id } => {
                    if let Some(p) = self.retrying[id].take() {
                        self.retry_ids.push(id);
                        self.waiting_retries -= 1;
                        self.pending.push_front(p);
                    }
                }
            }
        }
    }

    fn on_timer(&mut self, i: usize, now: Instant) {
        match self.conns[i].state {
            ConnState::Thinking => self.start_request(i, now),
            ConnState::RetryWait => self.attempt(i, now),
            ConnState::Backoff => self.reconnect(i, now),
            ConnState::Connecting
            | ConnState::Handshaking
            | ConnState::Writing
            | ConnState::Reading => self.timed_out(i, now),
            ConnState::Idle | ConnState::Stopped | ConnState::Parked => {}
        }
    }

    /// At the end of the run, counts every request that was started (closed) or
    /// scheduled (open) but not finished, into the corrected latency with
    /// `end - intended start`: a lower bound of what its latency would have been.
    ///
    /// Requests held by a connection (in flight, in a backoff, in a closed
    /// user's retry wait) and the open workload's waiting retries were sent;
    /// arrivals due before the end that no connection took were never sent.
    /// They are drawn from the schedule here, one at a time, so the backlog
    /// needs no memory during the run (this loop is the only cost: at 2,000
    /// requests/s, 6,000 draws for a 3 s run).
    fn count_unfinished(&mut self, end: Instant) {
        for s in &self.conns {
            // A think cut by the end: the users' time, in no measured think.
            if let Some((from, _)) = s.think_from {
                self.rec
                    .thinks
                    .uncounted(end.saturating_duration_since(from));
            }
            if s.has_request() {
                // Held for a connection that never opened: never sent.
                if !s.req.written {
                    self.rec.counts.sent -= 1;
                }
                self.rec.unfinished(end, s.req.intended, s.req.written);
            }
        }
        for p in self.retrying.iter().flatten().chain(&self.pending) {
            self.rec.unfinished(end, p.intended, true);
        }
        if self.open() {
            self.count_never_sent(end);
        }
        self.rec.close();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_wake_lead_tracks_the_median_latency_within_its_bounds() {
        let mut lead = WakeLead::default();
        // Latencies of 80 and 120 us in turn, and a rare preemption of 5 ms:
        // the median is 100 us.
        for i in 0..2_000u64 {
            let us = match i % 10 {
                9 => 5_000,
                k if k % 2 == 0 => 80,
                _ => 120,
            };
            lead.learn(Duration::from_micros(us));
        }
        let got = lead.get().as_micros();
        assert!((80..=130).contains(&got), "{got} us");
        for _ in 0..1_000 {
            lead.learn(Duration::from_millis(50));
        }
        assert_eq!(lead.get(), WakeLead::MAX);
    }

    #[test]
    fn the_loop_polls_only_while_a_request_is_in_flight() {
        let b = Duration::from_micros(20);
        assert_eq!(budget_in_flight(b, 10, 9), b);
        // Every user thinking (or nothing sent yet): block at once.
        assert_eq!(budget_in_flight(b, 10, 10), Duration::ZERO);
        assert_eq!(budget_in_flight(b, 0, 0), Duration::ZERO);
        assert_eq!(budget_in_flight(Duration::ZERO, 10, 9), Duration::ZERO);
    }

    #[test]
    fn user_streams_are_distinct_and_repeatable() {
        use rand::Rng;
        let draw = |seed, stream| seeded(seed, stream).random::<u64>();
        assert_eq!(draw(1, 0), draw(1, 0));
        assert_ne!(draw(1, 0), draw(1, 1));
        assert_ne!(draw(1, 0), draw(2, 0));
    }
}
