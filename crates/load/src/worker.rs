//! One event-loop thread: its slots, its epoll instance, its timers, its recorder.
//!
//! Why a hand-written loop: the generator must cost the client less CPU per request
//! than wrk, so that the server is what gets measured. Per keep-alive request the
//! loop makes two system calls, one `send` and one `recv`, plus a share of one
//! `epoll_wait`: sockets are registered once, edge-triggered, for input and output,
//! so nothing is re-armed per request (wrk re-arms its write event with
//! `epoll_ctl` twice per request). Request bytes are prebuilt, responses are read
//! into one buffer per thread and parsed without copying, and nothing is allocated
//! per request.
//!
//! Edge-triggered reading stops early on a short read: `recv` returning less than
//! the buffer means the socket was drained, and any later byte raises a new edge.
//! All system calls go through `rustix`, whose wrappers are safe: this module has
//! no `unsafe`.
//!
//! A user whose connection is open sends its next request from the handler of
//! the previous answer; one that must reconnect waits in a queue drained once per
//! loop turn, so a user whose connects fail at once cannot recurse or starve the
//! loop.

use std::collections::VecDeque;
use std::os::fd::OwnedFd;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use rand::SeedableRng;
use rand_pcg::Pcg64Mcg;
use rustix::event::epoll;
use rustix::io::Errno;
use rustix::net::{AddressFamily, RecvFlags, SendFlags, SocketFlags, SocketType};

use crate::arrival::Schedule;
use crate::conn::{ConnState, Request, Slot};
use crate::dist::Dist;
use crate::metrics::{ErrorClass, Recorder};
use crate::response::Feed;
use crate::spec::Arrival;
use crate::target::{Picker, Prepared};
use crate::timer::{Kind, Timers};

/// Size of the per-thread receive buffer.
const READ_BUF: usize = 64 * 1024;
/// Events taken per `epoll_wait`.
const EVENTS: usize = 1024;
/// Most closed users started from the ready queue per loop turn.
const READY_BATCH: usize = 1024;
/// The epoll data word of the arrival timer (no slot has this index).
const TIMER_TOKEN: u64 = u64::MAX;
/// Longest sleep in `epoll_wait`, so that progress and the stop flag are seen.
const MAX_WAIT: Duration = Duration::from_millis(100);

/// State shared by all threads of a run.
#[derive(Debug)]
pub(crate) struct Shared {
    /// Requests handed out so far, when the run is limited by count.
    pub issued: AtomicU64,
    /// The request limit (`u64::MAX`: none).
    pub limit: u64,
    /// Completed requests per thread, for the progress bar.
    pub progress: Vec<AtomicU64>,
    /// Set to stop every thread at its next loop turn (the caller's flag, if any).
    pub stop: Arc<AtomicBool>,
}

impl Shared {
    pub(crate) fn new(threads: usize, limit: Option<u64>, stop: Arc<AtomicBool>) -> Shared {
        Shared {
            issued: AtomicU64::new(0),
            limit: limit.unwrap_or(u64::MAX),
            progress: (0..threads).map(|_| AtomicU64::new(0)).collect(),
            stop,
        }
    }

    /// Takes the right to start one more request; exact across threads.
    #[inline]
    fn take_ticket(&self) -> bool {
        if self.limit == u64::MAX {
            return true;
        }
        self.issued.fetch_add(1, Ordering::Relaxed) < self.limit
    }
}

/// How this thread generates requests.
#[derive(Debug, Clone)]
pub(crate) enum Mode {
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
pub(crate) struct WorkerConfig {
    pub index: usize,
    pub targets: Arc<Vec<Prepared>>,
    pub picker: Picker,
    pub mode: Mode,
    pub session: Option<u32>,
    pub timeout: Option<Dist>,
    pub retries: Option<u32>,
    pub retry_wait: Dist,
    pub seed: u64,
    pub start: Instant,
    pub deadline: Option<Instant>,
}

/// What a thread hands back.
#[derive(Debug)]
pub(crate) struct WorkerResult {
    pub recorder: Recorder,
    /// CPU time (user + system) this thread used.
    pub cpu: Duration,
}

/// An open-workload request waiting for a connection or a retry.
#[derive(Debug, Clone, Copy)]
struct Pending {
    intended: Instant,
    attempts: u32,
    target: usize,
}

struct Worker {
    cfg: WorkerConfig,
    shared: Arc<Shared>,
    epoll: OwnedFd,
    slots: Vec<Slot>,
    timers: Timers,
    rec: Recorder,
    buf: Vec<u8>,
    /// Closed users ready to start their next request.
    ready: VecDeque<usize>,
    /// Closed users still running.
    active: usize,
    // Open workload only:
    pending: VecDeque<Pending>,
    /// Slots holding an idle keep-alive connection.
    idle: Vec<usize>,
    /// Slots without a connection.
    free: Vec<usize>,
    /// Requests waiting out their retry wait, by id; `None` is a free id.
    retrying: Vec<Option<Pending>>,
    retry_ids: Vec<usize>,
    waiting_retries: usize,
    in_flight: usize,
    schedule: Schedule,
    /// Open workload: a timerfd armed for the next arrival, in the epoll set.
    arrival_timer: Option<OwnedFd>,
    /// The arrival the timerfd is armed for, so it is armed once per arrival.
    armed_for: Option<Instant>,
    arrivals_done: bool,
    arrival_rng: Pcg64Mcg,
}

fn thread_cpu() -> Duration {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
    Duration::new(t.tv_sec as u64, t.tv_nsec as u32)
}

/// Runs one event loop to the end of the run.
pub(crate) fn run(cfg: WorkerConfig, shared: Arc<Shared>) -> std::io::Result<WorkerResult> {
    let cpu0 = thread_cpu();
    let mut w = Worker::new(cfg, shared)?;
    w.run()?;
    Ok(WorkerResult {
        recorder: w.rec,
        cpu: thread_cpu().saturating_sub(cpu0),
    })
}

fn seeded(seed: u64, stream: u64) -> Pcg64Mcg {
    // Mix so that neighbouring streams are unrelated.
    let mut x = seed ^ stream.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    Pcg64Mcg::seed_from_u64(x ^ (x >> 31))
}

fn connect_class(e: Errno) -> ErrorClass {
    if e == Errno::CONNREFUSED {
        ErrorClass::ConnectRefused
    } else {
        ErrorClass::ConnectOther
    }
}

fn io_class(e: Errno) -> ErrorClass {
    if e == Errno::CONNRESET || e == Errno::PIPE {
        ErrorClass::Reset
    } else {
        ErrorClass::IoOther
    }
}

impl Worker {
    fn new(cfg: WorkerConfig, shared: Arc<Shared>) -> std::io::Result<Worker> {
        let epoll = epoll::create(epoll::CreateFlags::CLOEXEC)?;
        let now = Instant::now();
        let (n, first) = match cfg.mode {
            Mode::Closed {
                users, first_user, ..
            } => (users as usize, first_user),
            Mode::Open { connections, .. } => (connections as usize, 1 << 40),
        };
        let mut slots: Vec<Slot> = (0..n)
            .map(|i| Slot::new(seeded(cfg.seed, first + i as u64), now))
            .collect();
        if let Mode::Closed {
            first_user,
            total_users,
            ..
        } = cfg.mode
        {
            // Closed users issue a fixed number of requests each (seed 002's model):
            // the limit is cut into per-user quotas, so the total is exact and
            // sessions line up (connections = users x sessions).
            if shared.limit != u64::MAX {
                for (i, s) in slots.iter_mut().enumerate() {
                    let seg = crate::spec::Segment {
                        index: (first_user + i as u64 + 1) as u32,
                        count: total_users as u32,
                    };
                    s.quota = seg.share(shared.limit);
                }
            }
        }
        let arrival_rng = seeded(cfg.seed, (1 << 50) + cfg.index as u64);
        let rec = Recorder::new(cfg.start);
        let open = matches!(cfg.mode, Mode::Open { .. });
        // epoll_wait sleeps in whole milliseconds, rounded up: an open request could
        // start up to 1 ms late, and its corrected latency would count the client's
        // oversleeping. A timerfd wakes the loop at the arrival, to the nanosecond.
        let arrival_timer = if open {
            use rustix::time::{TimerfdClockId, TimerfdFlags, timerfd_create};
            let t = timerfd_create(
                TimerfdClockId::Monotonic,
                TimerfdFlags::NONBLOCK | TimerfdFlags::CLOEXEC,
            )?;
            epoll::add(
                &epoll,
                &t,
                epoll::EventData::new_u64(TIMER_TOKEN),
                epoll::EventFlags::IN,
            )?;
            Some(t)
        } else {
            None
        };
        Ok(Worker {
            epoll,
            slots,
            timers: Timers::default(),
            rec,
            buf: vec![0; READ_BUF],
            ready: if open {
                VecDeque::new()
            } else {
                (0..n).collect()
            },
            active: if open { 0 } else { n },
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
            schedule: match cfg.mode {
                Mode::Open { rate, arrival, .. } => Schedule::new(cfg.start, rate, arrival),
                Mode::Closed { .. } => Schedule::new(cfg.start, 1.0, Arrival::Uniform),
            },
            arrival_timer,
            armed_for: None,
            arrivals_done: !open,
            arrival_rng,
            cfg,
            shared,
        })
    }

    fn open(&self) -> bool {
        matches!(self.cfg.mode, Mode::Open { .. })
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

    fn run(&mut self) -> std::io::Result<()> {
        let mut events = vec![
            epoll::Event {
                flags: epoll::EventFlags::empty(),
                data: epoll::EventData::new_u64(0),
            };
            EVENTS
        ];
        for turn in 0u64.. {
            let now = Instant::now();
            if self.cfg.deadline.is_some_and(|d| now >= d)
                || self.shared.stop.load(Ordering::Relaxed)
            {
                break;
            }
            self.fire_timers(now);
            if self.open() {
                self.arrivals(now);
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
            self.shared.progress[self.cfg.index]
                .store(self.rec.counts.completed, Ordering::Relaxed);
            if self.finished() {
                break;
            }
            let wait = if self.ready.is_empty() {
                let mut until = now + MAX_WAIT;
                if let Some(t) = self.timers.next_deadline() {
                    until = until.min(t);
                }
                if let Some(d) = self.cfg.deadline {
                    until = until.min(d);
                }
                if self.open() && !self.arrivals_done {
                    until = until.min(self.schedule.next());
                }
                let wait = until.saturating_duration_since(now);
                if self.open()
                    && !self.arrivals_done
                    && self.schedule.next() == until
                    && self.armed_for != Some(until)
                {
                    self.arm_arrival_timer(wait)?;
                    self.armed_for = Some(until);
                }
                wait
            } else {
                Duration::ZERO
            };
            let ts = rustix::time::Timespec {
                tv_sec: wait.as_secs() as i64,
                tv_nsec: i64::from(wait.subsec_nanos()),
            };
            let n = match epoll::wait(&self.epoll, &mut events[..], Some(&ts)) {
                Ok(n) => n,
                Err(Errno::INTR) => continue,
                Err(e) => return Err(e.into()),
            };
            for ev in &events[..n] {
                if ev.data.u64() == TIMER_TOKEN {
                    self.clear_arrival_timer();
                    continue;
                }
                let (i, generation) = Slot::untoken(ev.data.u64());
                if self.slots[i].generation != generation || self.slots[i].sock.is_none() {
                    continue; // an event for a socket closed earlier in this batch
                }
                self.on_event(i, ev.flags, Instant::now());
            }
        }
        self.shared.progress[self.cfg.index].store(self.rec.counts.completed, Ordering::Relaxed);
        Ok(())
    }

    // ---- timers and arrivals ----

    /// Arms the arrival timerfd to fire after `wait` (a zero wait needs no timer).
    fn arm_arrival_timer(&self, wait: Duration) -> std::io::Result<()> {
        let Some(t) = &self.arrival_timer else {
            return Ok(());
        };
        if wait.is_zero() {
            return Ok(());
        }
        let spec = rustix::time::Itimerspec {
            it_interval: rustix::time::Timespec {
                tv_sec: 0,
                tv_nsec: 0,
            },
            it_value: rustix::time::Timespec {
                tv_sec: wait.as_secs() as i64,
                tv_nsec: i64::from(wait.subsec_nanos()),
            },
        };
        rustix::time::timerfd_settime(t, rustix::time::TimerfdTimerFlags::empty(), &spec)?;
        Ok(())
    }

    /// Reads the expiry count so that the level-triggered timerfd stops reporting.
    fn clear_arrival_timer(&self) {
        if let Some(t) = &self.arrival_timer {
            let mut buf = [0u8; 8];
            let _ = rustix::io::read(t, &mut buf);
        }
    }

    fn fire_timers(&mut self, now: Instant) {
        while let Some((at, kind)) = self.timers.pop_due(now) {
            match kind {
                Kind::Slot(i) => {
                    if self.slots[i].timer.fire(at, now, i, &mut self.timers) {
                        self.on_timer(i, now);
                    }
                }
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
        match self.slots[i].state {
            ConnState::Thinking => self.start_request(i, now),
            ConnState::RetryWait => self.attempt(i, now),
            ConnState::Connecting | ConnState::Writing | ConnState::Reading => {
                self.timed_out(i, now)
            }
            ConnState::Idle | ConnState::Stopped => {}
        }
    }

    fn arrivals(&mut self, now: Instant) {
        while !self.arrivals_done {
            if self.schedule.next() > now {
                break;
            }
            if !self.shared.take_ticket() {
                self.arrivals_done = true;
                break;
            }
            let Some(intended) = self.schedule.take_due(now, &mut self.arrival_rng) else {
                break;
            };
            let target = self.cfg.picker.pick(&mut self.arrival_rng);
            self.pending.push_back(Pending {
                intended,
                attempts: 0,
                target,
            });
        }
    }

    /// Open workload: gives queued requests to idle connections, then to free slots.
    fn dispatch(&mut self, now: Instant) {
        while let Some(&p) = self.pending.front() {
            let i = if let Some(i) = self.idle.pop() {
                i
            } else if let Some(i) = self.free.pop() {
                i
            } else {
                break;
            };
            self.pending.pop_front();
            self.in_flight += 1;
            let s = &mut self.slots[i];
            s.req = Request::new(p.intended, p.target);
            s.req.attempts = p.attempts;
            self.attempt(i, now);
        }
    }

    // ---- the life of a request ----

    /// Closed user: begins its next request, if the run allows one more.
    fn start_request(&mut self, i: usize, now: Instant) {
        if self.slots[i].quota == 0 {
            self.close_sock(i);
            self.slots[i].state = ConnState::Stopped;
            self.slots[i].timer.disarm();
            self.active -= 1;
            return;
        }
        let s = &mut self.slots[i];
        s.quota = s.quota.saturating_sub(u64::from(s.quota != u64::MAX));
        let target = self.cfg.picker.pick(&mut s.rng);
        s.req = Request::new(now, target);
        self.attempt(i, now);
    }

    /// Starts an attempt of the slot's request: on its connection, or a new one.
    fn attempt(&mut self, i: usize, now: Instant) {
        self.rec.counts.attempts += 1;
        let timeout = self.cfg.timeout;
        let s = &mut self.slots[i];
        s.req.attempts += 1;
        s.req.first_byte = None;
        match timeout {
            Some(t) => {
                let d = t.sample_duration(&mut s.rng);
                s.timer.arm(now + d, i, &mut self.timers);
            }
            None => s.timer.disarm(),
        }
        // Targets may live on different servers: a connection only serves
        // requests for the address it was opened to.
        if s.sock.is_some()
            && self.cfg.targets[s.conn_target].addr != self.cfg.targets[s.req.target].addr
        {
            s.sock = None;
        }
        if s.sock.is_some() {
            self.send(i, now);
        } else {
            self.connect(i, now);
        }
    }

    fn connect(&mut self, i: usize, now: Instant) {
        let addr = self.cfg.targets[self.slots[i].req.target].addr;
        let family = if addr.is_ipv4() {
            AddressFamily::INET
        } else {
            AddressFamily::INET6
        };
        let sock = match rustix::net::socket_with(
            family,
            SocketType::STREAM,
            SocketFlags::NONBLOCK | SocketFlags::CLOEXEC,
            None,
        ) {
            Ok(s) => s,
            Err(e) => return self.fail(i, now, connect_class(e)),
        };
        // Requests are small and answered at once: Nagle would only add delay.
        let _ = rustix::net::sockopt::set_tcp_nodelay(&sock, true);
        let s = &mut self.slots[i];
        s.generation = s.generation.wrapping_add(1);
        let flags = epoll::EventFlags::IN
            | epoll::EventFlags::OUT
            | epoll::EventFlags::RDHUP
            | epoll::EventFlags::ET;
        if let Err(e) = epoll::add(
            &self.epoll,
            &sock,
            epoll::EventData::new_u64(s.token(i)),
            flags,
        ) {
            return self.fail(i, now, connect_class(e));
        }
        s.connect_start = now;
        s.conn_target = s.req.target;
        s.reused = false;
        s.session_left = self.cfg.session.unwrap_or(u32::MAX);
        s.state = ConnState::Connecting;
        let result = rustix::net::connect(&sock, &addr);
        s.sock = Some(sock);
        match result {
            Ok(()) => self.on_connected(i, now),
            Err(Errno::INPROGRESS) | Err(Errno::INTR) => {}
            Err(e) => self.fail(i, now, connect_class(e)),
        }
    }

    fn on_connected(&mut self, i: usize, now: Instant) {
        let took = now.saturating_duration_since(self.slots[i].connect_start);
        self.rec.connected(took);
        self.send(i, now);
    }

    /// Writes the request from the start.
    fn send(&mut self, i: usize, now: Instant) {
        let s = &mut self.slots[i];
        s.closing = s.session_left == 1;
        s.req.sent = now;
        s.written = 0;
        s.parser.reset();
        s.state = ConnState::Writing;
        self.write_more(i, now);
    }

    fn write_more(&mut self, i: usize, now: Instant) {
        let s = &mut self.slots[i];
        let p = &self.cfg.targets[s.req.target];
        let bytes = if s.closing { &p.close } else { &p.keep_alive };
        let Some(sock) = s.sock.as_ref() else {
            return;
        };
        while s.written < bytes.len() {
            match rustix::net::send(sock, &bytes[s.written..], SendFlags::NOSIGNAL) {
                Ok(n) => {
                    s.written += n;
                    self.rec.counts.bytes_sent += n as u64;
                }
                Err(Errno::AGAIN) => return, // an EPOLLOUT edge will call us again
                Err(Errno::INTR) => {}
                Err(e) => {
                    let class = if s.reused && e == Errno::PIPE {
                        ErrorClass::Closed
                    } else {
                        io_class(e)
                    };
                    return self.fail(i, now, class);
                }
            }
        }
        s.state = ConnState::Reading;
    }

    fn on_event(&mut self, i: usize, flags: epoll::EventFlags, now: Instant) {
        use epoll::EventFlags as F;
        let s = &mut self.slots[i];
        match s.state {
            ConnState::Connecting => {
                if !flags.intersects(F::OUT | F::ERR | F::HUP) {
                    return;
                }
                let err = match s.sock.as_ref().map(rustix::net::sockopt::socket_error) {
                    Some(Ok(Ok(()))) => None,
                    Some(Ok(Err(e))) | Some(Err(e)) => Some(e),
                    None => return,
                };
                match err {
                    None => {
                        self.on_connected(i, now);
                        if self.slots[i].state == ConnState::Reading
                            && flags.intersects(F::IN | F::HUP | F::RDHUP)
                        {
                            self.on_readable(i, now, flags);
                        }
                    }
                    Some(e) => self.fail(i, now, connect_class(e)),
                }
            }
            ConnState::Writing => {
                self.write_more(i, now);
                if self.slots[i].state == ConnState::Reading
                    && flags.intersects(F::IN | F::HUP | F::RDHUP | F::ERR)
                {
                    self.on_readable(i, now, flags);
                }
            }
            ConnState::Reading => {
                if flags.intersects(F::IN | F::HUP | F::RDHUP | F::ERR) {
                    self.on_readable(i, now, flags);
                }
            }
            ConnState::Idle | ConnState::Thinking => {
                if flags.intersects(F::IN | F::HUP | F::RDHUP | F::ERR) {
                    // The server closed an idle keep-alive connection (or sent bytes
                    // nobody asked for): drop it; the next request reconnects.
                    self.rec.counts.idle_closed += 1;
                    self.close_sock(i);
                    if self.open() {
                        if let Some(pos) = self.idle.iter().position(|&x| x == i) {
                            self.idle.swap_remove(pos);
                            self.free.push(i);
                        }
                    }
                }
            }
            ConnState::RetryWait | ConnState::Stopped => {}
        }
    }

    /// Reads until the response is complete, the socket is drained, or EOF.
    ///
    /// A FIN that arrived with the data raises no edge of its own, so when the
    /// event says the peer hung up we read on to the EOF instead of stopping at a
    /// short read, and a response completed on such a connection closes it.
    fn on_readable(&mut self, i: usize, now: Instant, flags: epoll::EventFlags) {
        use epoll::EventFlags as F;
        let hup = flags.intersects(F::HUP | F::RDHUP | F::ERR);
        loop {
            let s = &mut self.slots[i];
            let Some(sock) = s.sock.as_ref() else {
                return;
            };
            match rustix::net::recv(sock, &mut self.buf[..], RecvFlags::empty()) {
                Ok((0, _)) => {
                    return match s.parser.eof() {
                        Ok(true) => {
                            // A body delimited by the close: the connection is gone.
                            s.sock = None;
                            self.complete(i, now)
                        }
                        Ok(false) => self.fail(i, now, ErrorClass::Closed),
                        Err(_) => self.fail(i, now, ErrorClass::Malformed),
                    };
                }
                Ok((n, _)) => {
                    if s.req.first_byte.is_none() {
                        s.req.first_byte = Some(now);
                    }
                    let head = self.cfg.targets[s.req.target].head;
                    let fed = s.parser.feed(&self.buf[..n], head);
                    self.rec.bytes(now, n);
                    match fed {
                        Ok(Feed::Complete { used }) if used == n => {
                            if hup {
                                s.sock = None;
                            }
                            return self.complete(i, now);
                        }
                        Ok(Feed::Complete { .. }) | Err(_) => {
                            return self.fail(i, now, ErrorClass::Malformed);
                        }
                        Ok(Feed::Incomplete) if n < self.buf.len() && !hup => return,
                        Ok(Feed::Incomplete) => {}
                    }
                }
                Err(Errno::AGAIN) => return,
                Err(Errno::INTR) => {}
                Err(e) => return self.fail(i, now, io_class(e)),
            }
        }
    }

    /// A complete, valid response arrived.
    fn complete(&mut self, i: usize, now: Instant) {
        let s = &mut self.slots[i];
        let first = s.req.first_byte.unwrap_or(now);
        self.rec
            .response(now, s.req.intended, s.req.sent, first, s.parser.status());
        s.timer.disarm();
        s.reused = true;
        s.session_left = s.session_left.saturating_sub(1);
        let keep = s.parser.keep_alive() && !s.closing && s.session_left > 0 && s.sock.is_some();
        if !keep {
            self.close_sock(i);
        }
        self.after(i, now);
    }

    /// The request ends in error `class`; the connection is closed.
    fn fail(&mut self, i: usize, now: Instant, class: ErrorClass) {
        self.close_sock(i);
        self.slots[i].timer.disarm();
        self.rec.failure(now, class);
        self.after(i, now);
    }

    /// The attempt's timeout expired: abandon it, and retry or give up.
    fn timed_out(&mut self, i: usize, now: Instant) {
        self.rec.timed_out(now);
        self.close_sock(i);
        let retry = self
            .cfg
            .retries
            .is_none_or(|r| self.slots[i].req.attempts <= r);
        if !retry {
            self.rec.failure(now, ErrorClass::Timeout);
            return self.after(i, now);
        }
        self.rec.counts.retries += 1;
        let open = self.open();
        let s = &mut self.slots[i];
        let wait = self.cfg.retry_wait.sample_duration(&mut s.rng);
        if !open {
            s.state = ConnState::RetryWait;
            s.timer.arm(now + wait, i, &mut self.timers);
            return;
        }
        // Open workload: the request leaves the connection and waits on its own.
        let p = Pending {
            intended: s.req.intended,
            attempts: s.req.attempts,
            target: s.req.target,
        };
        s.state = ConnState::Idle;
        s.timer.disarm();
        self.in_flight -= 1;
        self.free.push(i);
        let id = self.retry_ids.pop().unwrap_or_else(|| {
            self.retrying.push(None);
            self.retrying.len() - 1
        });
        self.retrying[id] = Some(p);
        self.waiting_retries += 1;
        self.timers.push(now + wait, Kind::Retry { id });
    }

    /// What a slot does once its request has ended.
    ///
    /// The next request goes out at once when the connection is still open: the
    /// server starts on it while this thread handles the rest of the batch, which
    /// halves the times the thread finds nothing to do and sleeps (wrk does the
    /// same). A slot without a connection waits for the next loop turn instead,
    /// so that a run of immediate connect failures cannot recurse.
    fn after(&mut self, i: usize, now: Instant) {
        if self.open() {
            let s = &mut self.slots[i];
            s.state = ConnState::Idle;
            self.in_flight -= 1;
            if s.sock.is_some() {
                self.idle.push(i);
                if !self.pending.is_empty() {
                    self.dispatch(now);
                }
            } else {
                self.free.push(i);
            }
            return;
        }
        let Mode::Closed { think, .. } = self.cfg.mode else {
            return;
        };
        let s = &mut self.slots[i];
        s.state = ConnState::Thinking;
        if think.is_zero() {
            if s.sock.is_some() {
                self.start_request(i, now);
            } else {
                self.ready.push_back(i);
            }
        } else {
            let d = think.sample_duration(&mut s.rng);
            s.timer.arm(now + d, i, &mut self.timers);
        }
    }

    fn close_sock(&mut self, i: usize) {
        // Dropping the fd closes it, which also removes it from the epoll set.
        self.slots[i].sock = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tickets_are_exact_across_threads() {
        let shared = Arc::new(Shared::new(4, Some(10_007), Arc::default()));
        let taken: u64 = (0..4)
            .map(|_| {
                let sh = Arc::clone(&shared);
                std::thread::spawn(move || (0..).take_while(|_| sh.take_ticket()).count() as u64)
            })
            .collect::<Vec<_>>()
            .into_iter()
            .map(|h| h.join().unwrap())
            .sum();
        assert_eq!(taken, 10_007);
        assert!(Shared::new(1, None, Arc::default()).take_ticket());
    }

    #[test]
    fn user_streams_are_distinct_and_repeatable() {
        use rand::Rng;
        let draw = |seed, stream| seeded(seed, stream).random::<u64>();
        assert_eq!(draw(1, 0), draw(1, 0));
        assert_ne!(draw(1, 0), draw(1, 1));
        assert_ne!(draw(1, 0), draw(2, 0));
    }

    #[test]
    fn error_classes_of_errnos() {
        assert_eq!(
            connect_class(Errno::CONNREFUSED),
            ErrorClass::ConnectRefused
        );
        assert_eq!(connect_class(Errno::NETUNREACH), ErrorClass::ConnectOther);
        assert_eq!(io_class(Errno::CONNRESET), ErrorClass::Reset);
        assert_eq!(io_class(Errno::PIPE), ErrorClass::Reset);
        assert_eq!(io_class(Errno::IO), ErrorClass::IoOther);
    }
}
