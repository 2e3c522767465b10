//! The HTTP/2 event loop (`--h2`): connections that each carry up to
//! `--streams` requests at once, and the stream slots that use them.
//!
//! How users map onto streams, as h2load's clients × max concurrent streams:
//! - Closed: `users` connections, each with `streams` slots; a slot is a
//!   closed user (request, answer, think, next request), so the run has
//!   `users × streams` users and that many requests in flight at most.
//! - Open: `connections` connections with `streams` slots each; an arrival
//!   takes a free slot (slots are dealt to the connections in turn, so load
//!   spreads over them); when every slot is busy it waits in the schedule,
//!   as with HTTP/1.1 (its latency runs from its intended start), and is
//!   counted in `h2.waited_for_stream`.
//! - A slot's request waits at its connection while no stream can open:
//!   before the server's SETTINGS, while the server's
//!   SETTINGS_MAX_CONCURRENT_STREAMS is reached (it caps `--streams`), and
//!   after a GOAWAY until the connection is replaced.
//! - A timeout resets the stream (RST_STREAM CANCEL), not the connection;
//!   the retry goes out on the same connection after `retry_wait`. An open
//!   request keeps its slot during the wait.
//! - A stream the server refuses (REFUSED_STREAM, or above a GOAWAY's last
//!   stream) was not processed: it goes out again once, with no error.
//!
//! Per loop turn: handle every ready socket (feed the bytes, handle the
//! events, open the streams that became possible), then write each
//! connection's output once ([`H2Loop::flush`]).
//!
//! Layout: this file (the loop, timers, the workloads), [`link`] (a
//! connection and its I/O), [`slot`] (a stream slot), `stream` (a stream's
//! life: open, response, body, end).

mod link;
mod slot;
mod stream;

use std::collections::VecDeque;
use std::os::fd::OwnedFd;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use rustix::event::epoll;

use super::open::Arrivals;
use super::waker::{Waker, is_timer, poll_then_wait};
use super::{EVENTS, LoopConfig, LoopResult, READ_BUF, ThreadShare, seeded, thread_cpu};
use crate::arrival::Schedule;
use crate::client_conn::Request;
use crate::connect_failure::ConnectFailure;
use crate::control::RunControl;
use crate::metrics::Recorder;
use crate::timer::{Kind, Timers};
use link::Link;
use slot::{Slot, SlotState};

pub(super) struct H2Loop {
    cfg: LoopConfig,
    control: Arc<RunControl>,
    epoll: OwnedFd,
    links: Vec<Link>,
    slots: Vec<Slot>,
    /// `--streams`: slots per connection.
    streams: u32,
    timers: Timers,
    rec: Recorder,
    buf: Vec<u8>,
    /// Links with output to write at the end of the turn.
    dirty: Vec<usize>,
    /// Closed: slots to start at the next turn.
    ready: VecDeque<usize>,
    /// Closed: slots not stopped.
    active: usize,
    /// Open: slots without a request.
    free: Vec<usize>,
    /// Open: slots holding a request.
    in_flight: usize,
    /// Open: the last time an arrival was due and no slot was free.
    full_at: Option<Instant>,
    /// The address that last accepted a connect (the run has one server).
    preferred: usize,
    last_connected: Instant,
    backing_off: usize,
    gave_up: bool,
    connected: bool,
    sampled_second: Option<u64>,
    last_connect_failure: Option<ConnectFailure>,
    schedule: Schedule,
    arrival_rng: rand_pcg::Pcg64Mcg,
    arrivals_done: bool,
    waker: Waker,
}

/// Runs one HTTP/2 event loop to the end of the run.
pub(super) fn run(cfg: LoopConfig, control: Arc<RunControl>) -> std::io::Result<LoopResult> {
    let cpu0 = thread_cpu();
    let mut w = H2Loop::new(cfg, control)?;
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

impl H2Loop {
    fn new(cfg: LoopConfig, control: Arc<RunControl>) -> std::io::Result<H2Loop> {
        let epoll = epoll::create(epoll::CreateFlags::CLOEXEC)?;
        let now = Instant::now();
        let streams = cfg.streams.unwrap_or(1).max(1);
        let (n_links, first) = match cfg.share {
            ThreadShare::Closed {
                users, first_user, ..
            } => (users as usize, first_user),
            ThreadShare::Open { connections, .. } => (connections as usize, 1 << 40),
        };
        let n_slots = n_links * streams as usize;
        let first_slot = first * u64::from(streams);
        // Link streams are apart from the slots' (1 << 45 up), so no two
        // random streams of the run are the same.
        let links = (0..n_links)
            .map(|i| Link::new(seeded(cfg.seed, (1 << 45) + first + i as u64), now))
            .collect();
        // Slot k on link k mod n: consecutive slots (and arrivals, which take
        // the free slots in turn) spread over the connections.
        let mut slots: Vec<Slot> = (0..n_slots)
            .map(|k| Slot::new(k % n_links, seeded(cfg.seed, first_slot + k as u64), now))
            .collect();
        let open = matches!(cfg.share, ThreadShare::Open { .. });
        if let ThreadShare::Closed { total_users, .. } = cfg.share
            && control.limit != u64::MAX
        {
            // Each closed user (slot) gets its share of the request limit.
            let total = total_users * u64::from(streams);
            for (k, s) in slots.iter_mut().enumerate() {
                let seg = crate::spec::Segment {
                    index: (first_slot + k as u64 + 1) as u32,
                    count: total as u32,
                };
                s.quota = seg.share(control.limit);
            }
        }
        let arrival_rng = seeded(cfg.seed, (1 << 50) + cfg.index as u64);
        let schedule = match &cfg.share {
            ThreadShare::Open { rate, arrival, .. } => Schedule::new(cfg.start, *rate, *arrival),
            ThreadShare::Closed { .. } => {
                Schedule::new(cfg.start, 1.0, crate::spec::Arrival::Uniform)
            }
        };
        let waker = Waker::new(&epoll)?;
        let mut l = H2Loop {
            epoll,
            links,
            slots,
            streams,
            timers: Timers::default(),
            rec: Recorder::new(cfg.start),
            buf: vec![0; READ_BUF],
            dirty: Vec::new(),
            ready: if open {
                VecDeque::new()
            } else {
                (0..n_slots).collect()
            },
            active: if open { 0 } else { n_slots },
            free: if open {
                (0..n_slots).rev().collect()
            } else {
                Vec::new()
            },
            in_flight: 0,
            full_at: None,
            preferred: 0,
            last_connected: now,
            backing_off: 0,
            gave_up: false,
            connected: false,
            sampled_second: None,
            last_connect_failure: None,
            schedule,
            arrival_rng,
            arrivals_done: !open,
            waker,
            cfg,
            control,
        };
        l.stagger(now);
        Ok(l)
    }

    fn open(&self) -> bool {
        matches!(self.cfg.share, ThreadShare::Open { .. })
    }

    /// Closed users with a think time start inside one, at its stationary
    /// residual (as the HTTP/1.1 loop's users do).
    fn stagger(&mut self, now: Instant) {
        let ThreadShare::Closed { think, .. } = self.cfg.share else {
            return;
        };
        if think.is_zero() {
            return;
        }
        // From the run's start, not this thread's: the time the thread took
        // to start is the users' too, and N·T counts it.
        let start = self.cfg.start.min(now);
        for k in self.ready.drain(..) {
            let s = &mut self.slots[k];
            s.state = SlotState::Thinking;
            let d = Duration::from_secs_f64(think.sample_residual(&mut s.rng));
            s.think_from = Some((start, None));
            s.timer.arm(start + d, k, &mut self.timers);
        }
    }

    fn finished(&self) -> bool {
        if self.open() {
            self.arrivals_done && self.in_flight == 0
        } else {
            self.active == 0
        }
    }

    fn run(&mut self) -> std::io::Result<Instant> {
        let mut events = vec![
            epoll::Event {
                flags: epoll::EventFlags::empty(),
                data: epoll::EventData::new_u64(0),
            };
            EVENTS
        ];
        loop {
            let now = Instant::now();
            if let Some(gave_up) =
                self.cfg
                    .stops_at(&self.control, now, self.backing_off, self.last_connected)
            {
                self.gave_up = gave_up;
                break;
            }
            self.each_second(now);
            self.fire_timers(now);
            if self.open() {
                self.dispatch(now);
            } else {
                while let Some(k) = self.ready.pop_front() {
                    self.start_request(k, now);
                }
            }
            self.flush();
            self.control.progress[self.cfg.index]
                .store(self.rec.counts.completed, Ordering::Relaxed);
            if self.finished() {
                break;
            }
            let wait = if self.ready.is_empty() {
                let mut timed = self.timers.next_deadline();
                if self.open() && !self.arrivals_done && !self.free.is_empty() {
                    let next = self.schedule.next();
                    timed = Some(timed.map_or(next, |t| t.min(next)));
                }
                let until = self.cfg.sleep_until(now, timed);
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
                let (l, generation) = crate::client_conn::ClientConn::untoken(ev.data.u64());
                if self.links[l].generation != generation || self.links[l].sock.is_none() {
                    continue; // a socket closed earlier in this batch
                }
                self.on_event(l, ev.flags, woke);
            }
            self.flush();
        }
        Ok(Instant::now())
    }

    /// Once per second of the run: the requests in flight for the series,
    /// and the end of each connection's flood-counting window.
    fn each_second(&mut self, now: Instant) {
        let t = now.saturating_duration_since(self.cfg.start).as_secs();
        if self.sampled_second == Some(t) {
            return;
        }
        self.sampled_second = Some(t);
        let n = if self.open() {
            self.in_flight
        } else {
            self.slots.iter().filter(|s| s.has_request()).count()
        };
        self.rec.in_flight_at(now, n as u64);
        for link in &mut self.links {
            if let Some(h2) = link.h2.as_deref_mut() {
                h2.tick();
            }
        }
    }

    fn fire_timers(&mut self, now: Instant) {
        while let Some((at, kind)) = self.timers.pop_due(now) {
            match kind {
                Kind::Conn(k) => {
                    if self.slots[k].timer.fire(at, now, k, &mut self.timers) {
                        self.on_slot_timer(k, now);
                    }
                }
                Kind::Link(l) => {
                    if self.links[l]
                        .timer
                        .fire_as(at, now, Kind::Link(l), &mut self.timers)
                    {
                        self.on_link_timer(l, now);
                    }
                }
                Kind::Retry { .. } => {}
            }
        }
    }

    fn on_slot_timer(&mut self, k: usize, now: Instant) {
        match self.slots[k].state {
            SlotState::Thinking => self.start_request(k, now),
            SlotState::RetryWait => self.attempt(k, now),
            SlotState::Waiting | SlotState::Streaming => self.timed_out(k, now),
            SlotState::Idle | SlotState::Stopped => {}
        }
    }

    /// Closed user `k` begins its next request, if its quota allows.
    fn start_request(&mut self, k: usize, now: Instant) {
        let think = self.slots[k].think_from.take();
        let goes_on = self.slots[k].quota != 0;
        self.rec.thinks.end(think, now, goes_on);
        let s = &mut self.slots[k];
        if s.quota == 0 {
            s.state = SlotState::Stopped;
            s.timer.disarm();
            self.active -= 1;
            return;
        }
        s.quota = s.quota.saturating_sub(u64::from(s.quota != u64::MAX));
        self.rec.counts.sent += 1;
        let target = self.cfg.picker.pick(&mut s.rng);
        s.req = Request::new(now, target);
        s.waited = false;
        self.attempt(k, now);
    }

    /// Open workload: gives due arrivals to free slots.
    fn dispatch(&mut self, now: Instant) {
        while !self.arrivals_done && self.schedule.next() <= now {
            let Some(&k) = self.free.last() else {
                // Every slot busy: the arrival waits in the schedule.
                self.full_at = Some(now);
                return;
            };
            if !self.control.take_ticket() {
                self.arrivals_done = true;
                return;
            }
            let Some(intended) = self.schedule.take_due(now, &mut self.arrival_rng) else {
                return;
            };
            self.free.pop();
            self.rec.counts.sent += 1;
            self.in_flight += 1;
            let target = self.cfg.picker.pick(&mut self.arrival_rng);
            let waited = self.full_at.is_some_and(|t| intended <= t);
            let s = &mut self.slots[k];
            s.req = Request::new(intended, target);
            s.waited = waited;
            if waited {
                self.rec.h2.waited_for_stream += 1;
            }
            self.attempt(k, now);
        }
    }

    /// Slot `k`'s request has ended: a closed user thinks or goes on; an
    /// open slot is free again.
    fn after(&mut self, k: usize, now: Instant) {
        if self.open() {
            let s = &mut self.slots[k];
            s.state = SlotState::Idle;
            self.in_flight -= 1;
            self.free.push(k);
            return self.dispatch(now);
        }
        let ThreadShare::Closed { think, .. } = self.cfg.share else {
            return;
        };
        let s = &mut self.slots[k];
        s.state = SlotState::Thinking;
        if think.is_zero() {
            self.start_request(k, now);
        } else {
            let d = think.sample_duration(&mut s.rng);
            s.think_from = Some((now, Some(d)));
            s.timer.arm(now + d, k, &mut self.timers);
        }
    }

    /// At the end: every request started (closed) or due (open) and not
    /// finished is counted with its age, as in the HTTP/1.1 loop.
    fn count_unfinished(&mut self, end: Instant) {
        for s in &self.slots {
            if let Some((from, _)) = s.think_from {
                self.rec
                    .thinks
                    .uncounted(end.saturating_duration_since(from));
            }
            if s.has_request() {
                if !s.req.written {
                    self.rec.counts.sent -= 1;
                }
                self.rec.unfinished(end, s.req.intended, s.req.written);
            }
        }
        if self.open() {
            let until = self.cfg.deadline.map_or(end, |d| d.min(end));
            Arrivals {
                schedule: &mut self.schedule,
                rng: &mut self.arrival_rng,
                control: &self.control,
                done: self.arrivals_done,
            }
            .count_never_sent(&mut self.rec, until, end);
        }
        self.rec.close();
    }
}
