//! Driving many [`Conn`]s from one thread with non-blocking sockets and epoll,
//! for the `epoll` and `reactor` engines.
//!
//! One [`EventLoop`] owns an epoll instance watching the listener (level
//! triggered, so a connection left in the backlog is offered again), the
//! shutdown pipe, and every connection it accepted that had to wait (edge
//! triggered for `IN`, `OUT` and `RDHUP`, registered once, the first time the
//! connection has to wait, and never modified). A connection whose request
//! came with the handshake is read at once after `accept`; with
//! `Connection: close` it is answered and closed without an `epoll_ctl`.
//!
//! Syscalls per keep-alive request are the point of this file: with edge
//! triggering the loop remembers, per connection, whether the socket may still
//! have bytes to read and room to write. A read that returns less than the space
//! offered drained the socket (Linux raises a new edge for any later data), so
//! no read ever ends in `EAGAIN` just to learn that; a write is tried at once
//! after the request is parsed. So a request costs one `recv`, one `send` (head
//! and small body from the cache in one buffer) and a share of one
//! `epoll_wait`; no `epoll_ctl` per request, no `setsockopt` per connection
//! (`TCP_NODELAY` is inherited from the listener).
//!
//! A client that leaves: `RDHUP` (with `HUP`/`ERR` for a reset) comes in the
//! readiness the loop already gets, so knowing costs nothing per request.
//! The loop tells `Conn` once ([`crate::conn::Event::PeerGone`]), which
//! judges it; on a connection whose response is held (`--delay`), one
//! `MSG_PEEK` says whether unread requests wait ahead of the close
//! ([`policy::peer_gone`]). After it the socket is read to its end rather
//! than left waiting for an edge that already came.
//!
//! Timers: each connection has one deadline (read, keep-alive, write progress,
//! `--delay` hold, or lingering close), kept in the heap of [`Timers`] (shared
//! with the ring), with lazy deletion: about one push per connection per
//! keep-alive period, not per request.
//!
//! Memory: an idle connection gives its read and output buffers back to the
//! loop's pool ([`Conn::detach`]), so 10,000 idle keep-alive connections cost
//! their `Conn` and the kernel's socket, not 16 KiB of buffers each.
//!
//! Accept: `TCP_DEFER_ACCEPT` on the listener (nginx's `listen ... deferred`),
//! so the kernel hands a connection over only once its first bytes have
//! arrived: the read right after `accept` then finds the request, and a
//! `Connection: close` request costs `accept4`, `recv`, `send`, `close` and a
//! share of an `epoll_wait`. Measured on the shared machine: 17 us instead of
//! 28 us of server CPU per connection. The price: a client that connects and
//! says nothing is seen by the server only when it sends, or when the kernel
//! gives up deferring ([`DEFER`] after the connect), so the `open` counter
//! leaves such connections out until then. Its read timeout still counts from
//! the connect: a connection whose first read finds nothing was handed over
//! at the end of the deferral, and is dated back by [`DEFER`] (see
//! "Deadlines" in [`super::policy`]). The option is set when the listener is
//! bound ([`defer_accept`]), so no connection escapes it. `accept4` with `SOCK_NONBLOCK | SOCK_CLOEXEC` (no `fcntl` after).
//! On `EMFILE`/`ENFILE`/`ENOBUFS`/`ENOMEM` the listener is taken out of the
//! epoll set for a back-off (10 ms doubling to 500 ms), so the loop neither
//! spins on a listener that stays readable nor stops serving the connections it
//! has.
//!
//! Large files: `TCP_NOTSENT_LOWAT` of [`NOTSENT_LOWAT`] on each listener
//! (accepted sockets inherit it, so no `setsockopt` per connection). Without
//! it the send buffer autotunes to about 4 MiB, and one `sendfile` queues a
//! whole 1 MiB body; the kernel then sends most of it later, while it processes
//! the client's ACKs, which on loopback happens on the client's CPU. Measured
//! with `bench/peers.py --scenario 1m` (50 connections, server on CPU 0, wrk on
//! CPU 1): wrk spent 191 to 411 us of CPU per response (145 to 176 with the
//! mark), tail-loss probes resent a segment for 0.2 to 0.7 of the responses
//! when wrk was descheduled (under 0.1 with the mark), and requests/s swung by
//! a factor of two between rounds. With the mark, `sendfile` stops once 64 KiB
//! wait unsent, the data goes out in the server's own call, and the loop waits
//! for `EPOLLOUT`, which the kernel raises when less than half the mark is
//! left. Small responses never reach the mark, so keep-alive requests cost
//! what they did. A loop that hands requests to workers (`event`) leaves the
//! mark off: there a worker sends a whole response and moves on, and with the
//! mark it waits on one slow reader while requests queue (measured in one
//! 5-round run: 142 to 245 us of server CPU per 1 MiB response).
//!
//! Hand-off (the `event` engine, [`EventLoop::with_handoff`]): connections
//! defer their answers, and one with a complete request leaves the loop for a
//! worker thread ([`super::handoff`]); its place (index and generation) stays
//! reserved until it comes back, and `open` still counts it. With a full queue
//! the loop answers 503 itself. A keep-alive connection comes back without a
//! wake-up: the loop notes the read edges of a connection that is away and
//! takes it back when the client's next request raises one (see
//! [`super::connection::Handover`]). While requests wait in the queue behind
//! busy workers, the loop waits on a second epoll that holds only the
//! workers' eventfd and the shutdown pipe (for at most [`BUSY_CAP`]), and then
//! takes every socket edge that came meanwhile with one `epoll_wait` (see
//! "Pace" in [`super::handoff`]). Without a hand-off nothing of this runs.
//!
//! Shutdown: the wake pipe becomes readable; the loop stops accepting, closes
//! idle connections, lets busy ones finish (their responses say
//! `Connection: close`), and after the grace period closes whatever is left
//! (and what workers give back after it).

use std::net::{SocketAddr, TcpListener};
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rustix::event::epoll::{self, EventData, EventFlags};
use rustix::io::Errno;
use rustix::net::SocketFlags;

use super::accept::{self, Accepting, Step};
use super::closing::{Close, Closing};
use super::connection::{Away, Connection, Handover};
use super::dispatch::{Carry, carry};
use super::grace::{Grace, Turn};
use super::handoff::{Job, LoopEnd};
use super::places::Places;
use super::policy;
use super::spares::Spares;
use super::step::{self, Moved};
use super::timers::Timers;
use super::wire::Wire;
use crate::conn::{Conn, Event, Interest};
use crate::error::ServerError;
use crate::runtime::shared::{Local, Shared};

/// Unsent bytes a connection's socket may hold before a write stops
/// (`TCP_NOTSENT_LOWAT`; see "Large files" above). Between 8 KiB and 64 KiB
/// the measured client CPU per 1 MiB response was the same; the larger mark
/// means fewer wake-ups per response on a network whose window is the limit.
const NOTSENT_LOWAT: u32 = 64 * 1024;

/// epoll token of the first listener; listener `i` has `LISTENERS + i`, below
/// [`BACK`].
const LISTENERS: u64 = u64::MAX - 2 - MAX_LISTENERS;
/// Most listeners one loop watches (`--addr` given this many times).
pub(crate) const MAX_LISTENERS: u64 = 1024;
/// epoll token of the shutdown pipe.
const WAKE: u64 = u64::MAX - 1;
/// epoll token of the eventfd that says connections came back from workers.
const BACK: u64 = u64::MAX - 2;
/// Events taken per `epoll_wait`.
const EVENTS: usize = 512;
/// Connections accepted per readiness of the listener before serving others:
/// bounds the time a connect storm can keep the loop from its connections.
const ACCEPT_BATCH: usize = 128;
/// Spare buffer pairs kept for connections that become busy again.
const POOL: usize = 256;
/// Longest a hand-off loop waits for a free worker without looking at its
/// sockets (see "Pace" in [`super::handoff`]): what that wait delays (a new
/// connection, a slow client's head, the 503 of a full queue) is never later
/// than this. It only ends a wait when a request takes a worker this long;
/// the keep-alive requests of a benchmark take microseconds each.
const BUSY_CAP: Duration = Duration::from_millis(1);

/// An epoll event loop serving connections from its listeners.
#[derive(Debug)]
pub(crate) struct EventLoop<'s> {
    site: &'s Shared,
    w: Local,
    epoll: OwnedFd,
    listeners: Vec<BorrowedFd<'s>>,
    /// Register the listeners with `EPOLLEXCLUSIVE` (several loops share them).
    exclusive: bool,
    listening: bool,
    /// The connections, each in a place whose generation a stale event or
    /// timer entry is checked against.
    slots: Places<Connection>,
    /// What happened to each slot's connection while a worker had it
    /// ([`super::handoff`]): its events and timer still reach this loop.
    away: Vec<Away>,
    /// Each slot's [`Handover`], kept while its connection is with a worker.
    handovers: Vec<Option<Arc<Handover>>>,
    timers: Timers,
    pool: Spares,
    /// The accept policy's memory: the back-off, and a pause (descriptors
    /// exhausted) while it lasts.
    accepting: Accepting,
    /// Shutdown: when it began to drain, and whether the grace period is
    /// over (then only connections still with workers remain).
    grace: Grace,
    /// Complete requests go to worker threads through this (the `event`
    /// engine); without it they are answered on the loop's thread.
    handoff: Option<LoopEnd>,
    /// With a hand-off: an epoll watching only the workers' eventfd and the
    /// shutdown pipe, waited on while every worker is busy.
    busy: Option<OwnedFd>,
}

impl<'s> EventLoop<'s> {
    /// A loop over `listeners` (non-blocking already). `exclusive` when other
    /// loops watch the same listeners, so one connection wakes one loop.
    pub(crate) fn new(
        site: &'s Shared,
        listeners: &'s [TcpListener],
        exclusive: bool,
    ) -> Result<EventLoop<'s>, ServerError> {
        let epoll = epoll::create(epoll::CreateFlags::CLOEXEC)
            .map_err(|e| ServerError::io("creating an epoll instance")(e.into()))?;
        // Edge triggered: the pipe stays readable once shutdown is asked for,
        // and one wake-up is all this loop needs.
        epoll::add(
            &epoll,
            site.shutdown.wake_fd(),
            EventData::new_u64(WAKE),
            EventFlags::IN | EventFlags::ET,
        )
        .map_err(|e| ServerError::io("watching the shutdown pipe")(e.into()))?;
        let mut ev = EventLoop {
            site,
            w: site.local(),
            epoll,
            listeners: listeners.iter().map(|l| l.as_fd()).collect(),
            exclusive,
            listening: false,
            slots: Places::default(),
            away: Vec::new(),
            handovers: Vec::new(),
            timers: Timers::default(),
            pool: Spares::new(POOL),
            accepting: Accepting::default(),
            grace: Grace::default(),
            handoff: None,
            busy: None,
        };
        ev.listen(true)
            .map_err(|e| ServerError::io("watching the listener")(e.into()))?;
        Ok(ev)
    }

    /// Sends each complete request to the workers at the other end of
    /// `handoff`, which give the connection back when it wants to read again.
    /// `log` is the workers' log writer, shared, so that the loop's lines
    /// (`--log-connections`) keep their order with the workers' lines.
    pub(crate) fn with_handoff(
        mut self,
        handoff: LoopEnd,
        log: crate::log::LogWriter,
    ) -> Result<EventLoop<'s>, ServerError> {
        self.w.log = log;
        // Edge triggered and never read: each worker's write is one edge.
        epoll::add(
            &self.epoll,
            &*handoff.wake,
            EventData::new_u64(BACK),
            EventFlags::IN | EventFlags::ET,
        )
        .map_err(|e| ServerError::io("watching the workers' wake-up")(e.into()))?;
        let busy = epoll::create(epoll::CreateFlags::CLOEXEC)
            .map_err(|e| ServerError::io("creating an epoll instance")(e.into()))?;
        for (fd, token) in [
            (handoff.wake.as_fd(), BACK),
            (self.site.shutdown.wake_fd(), WAKE),
        ] {
            epoll::add(
                &busy,
                fd,
                EventData::new_u64(token),
                EventFlags::IN | EventFlags::ET,
            )
            .map_err(|e| ServerError::io("watching the workers' wake-up")(e.into()))?;
        }
        self.handoff = Some(handoff);
        self.busy = Some(busy);
        Ok(self)
    }

    fn listen(&mut self, on: bool) -> rustix::io::Result<()> {
        if on == self.listening {
            return Ok(());
        }
        if on {
            let mut flags = EventFlags::IN;
            if self.exclusive {
                flags |= EventFlags::EXCLUSIVE;
            }
            for (i, &l) in self.listeners.iter().enumerate() {
                epoll::add(
                    &self.epoll,
                    l,
                    EventData::new_u64(LISTENERS + i as u64),
                    flags,
                )?;
            }
        } else {
            for &l in &self.listeners {
                epoll::delete(&self.epoll, l)?;
            }
        }
        self.listening = on;
        Ok(())
    }

    /// Serves until shutdown has been asked for and every connection is done
    /// (or the grace period is over).
    pub(crate) fn run(mut self) -> Result<(), ServerError> {
        let mut events = vec![
            epoll::Event {
                flags: EventFlags::empty(),
                data: EventData::new_u64(0),
            };
            EVENTS
        ];
        if self.handoff.is_none() {
            // Only a loop that sends its own responses (see "Large files").
            for &l in &self.listeners {
                send_low_water(l);
            }
        }
        if self.site.shutdown.is_requested() {
            self.begin_shutdown();
        }
        loop {
            let now = Instant::now();
            match self.grace.at(now, self.slots.open()) {
                Turn::Serve => {}
                Turn::Force => {
                    self.site.shutdown.force();
                    // What is left after this is with workers, who give up
                    // at once now.
                    self.close_all();
                    continue;
                }
                Turn::Stop => break,
            }
            let next = self.next_deadline();
            let mut ts = next.map(|t| policy::timespec(t.saturating_duration_since(now)));
            if self.wait_for_workers(next, now, &mut events) {
                // Take what came meanwhile, without waiting.
                ts = Some(policy::timespec(Duration::ZERO));
            }
            let n = match epoll::wait(&self.epoll, &mut events[..], ts.as_ref()) {
                Ok(n) => n,
                Err(Errno::INTR) => continue,
                Err(e) => {
                    eprintln!("servelab: epoll_wait failed: {e}; stopping");
                    self.site.shutdown.trigger();
                    self.close_all();
                    return Err(ServerError::io("waiting for events")(e.into()));
                }
            };
            for ev in &events[..n] {
                let flags = ev.flags;
                match ev.data.u64() {
                    WAKE => self.begin_shutdown(),
                    BACK => self.take_back(),
                    t if (LISTENERS..BACK).contains(&t) => self.accept((t - LISTENERS) as usize),
                    token => self.on_event(token, flags),
                }
            }
            self.fire_timers();
        }
        Ok(())
    }

    /// While every worker has a request and more are queued, waits until the
    /// queue is empty (or a
    /// connection comes back unasked, or shutdown, or `next`, or
    /// [`BUSY_CAP`]), leaving the edges of the sockets to be taken together
    /// afterwards (see "Pace" in [`super::handoff`]). True if it waited.
    fn wait_for_workers(
        &self,
        next: Option<Instant>,
        now: Instant,
        events: &mut [epoll::Event],
    ) -> bool {
        let (Some(handoff), Some(busy)) = (&self.handoff, &self.busy) else {
            return false;
        };
        if self.grace.begun() || !handoff.all_busy() {
            return false;
        }
        let until = next.map_or(now + BUSY_CAP, |t| t.min(now + BUSY_CAP));
        let ts = policy::timespec(until.saturating_duration_since(now));
        // What woke it does not matter: every edge it reports is also
        // reported by the loop's own epoll, read next.
        let waited = epoll::wait(busy, events, Some(&ts));
        handoff.done_waiting();
        waited.is_ok()
    }

    fn next_deadline(&mut self) -> Option<Instant> {
        let timer = self.timers.next();
        let accept = self.accepting.paused_until();
        [timer, accept, self.grace.next()]
            .into_iter()
            .flatten()
            .min()
    }

    fn begin_shutdown(&mut self) {
        if self.grace.begun() {
            return;
        }
        // Connections given back quietly are closed with the rest if idle.
        self.take_back();
        self.grace.begin(self.site.config.grace);
        let _ = self.listen(false);
        self.accepting.stop();
        for i in 0..self.slots.len() {
            if self.slots[i].is_some() {
                self.drive(i);
            }
        }
    }

    fn close_all(&mut self) {
        for i in 0..self.slots.len() {
            if let Some(slot) = &mut self.slots[i] {
                slot.conn.on(Event::Forced, self.site, &mut self.w);
                self.close(i);
            }
        }
    }

    /// Accepts what is waiting on listener `which` (up to a batch).
    fn accept(&mut self, which: usize) {
        if self.grace.begun() || self.accepting.paused_until().is_some() {
            return;
        }
        let Some(&listener) = self.listeners.get(which) else {
            return;
        };
        for _ in 0..ACCEPT_BATCH {
            let flags = SocketFlags::NONBLOCK | SocketFlags::CLOEXEC;
            match rustix::net::acceptfrom_with(listener, flags) {
                Ok((sock, addr)) => {
                    self.accepting.took();
                    self.add(sock, accept::peer(addr));
                }
                Err(e) => match self.accepting.failed(e) {
                    Step::Retry => {}
                    Step::Wait => return,
                    Step::Pause(_) => {
                        let _ = self.listen(false);
                        return;
                    }
                },
            }
        }
    }

    fn add(&mut self, sock: OwnedFd, peer: SocketAddr) {
        let mut conn = Conn::bare(peer);
        if !policy::opened(self.site, &mut self.w, &conn) {
            return;
        }
        if self.handoff.is_some() {
            conn.defer_answers();
        }
        let mut c = Connection::accepted(sock, conn, Wire::new(self.site));
        let handover = self.handoff.is_some().then(Arc::<Handover>::default);
        c.handover.clone_from(&handover);
        let index = self.slots.insert(c);
        if index == self.away.len() {
            self.away.push(Away::default());
            self.handovers.push(None);
        }
        self.handovers[index] = handover;
        self.drive(index);
    }

    fn on_event(&mut self, token: u64, flags: EventFlags) {
        let index = (token & 0xffff_ffff) as usize;
        if !self.slots.is_current(index, (token >> 32) as u32) {
            return;
        }
        let Some(slot) = &mut self.slots[index] else {
            // With a worker: remembered for its return, so that it comes back
            // knowing whether a read can find anything (no read just to learn
            // that the socket is empty).
            let away = &mut self.away[index];
            away.readable |= flags
                .intersects(EventFlags::IN | EventFlags::RDHUP | EventFlags::HUP | EventFlags::ERR);
            away.fin |= flags.intersects(EventFlags::RDHUP | EventFlags::HUP | EventFlags::ERR);
            if self.handovers[index]
                .as_ref()
                .is_some_and(|h| !h.edge_while_away())
            {
                // Given back quietly (a keep-alive connection): take it now.
                self.take_back();
            }
            return;
        };
        if flags.intersects(EventFlags::IN | EventFlags::RDHUP | EventFlags::HUP | EventFlags::ERR)
        {
            slot.readable = true;
        }
        if flags.intersects(EventFlags::OUT | EventFlags::HUP | EventFlags::ERR) {
            slot.writable = true;
        }
        if flags.intersects(EventFlags::RDHUP | EventFlags::HUP | EventFlags::ERR) && !slot.fin {
            // The client's close, told once: `Conn` judges it (one peek,
            // only while a response is held).
            slot.fin = true;
            let event = policy::peer_gone(&slot.sock, &slot.conn);
            slot.interest = slot.conn.on(event, self.site, &mut self.w);
        }
        self.drive(index);
    }

    /// Moves a connection as far as its socket allows ([`carry`], with the
    /// socket's last known readiness: [`Edges`]), then arms its timer.
    fn drive(&mut self, index: usize) {
        let site = self.site;
        let gen_ = self.slots.gens()[index];
        let Some(slot) = &mut self.slots[index] else {
            return;
        };
        let start = slot.interest;
        let mut edges = Edges {
            slot: &mut *slot,
            pool: &mut self.pool,
            site,
            w: &mut self.w,
            handoff: self.handoff.is_some(),
            closed: false,
        };
        let interest = carry(&mut edges, start);
        let closed = edges.closed;
        slot.interest = interest;
        if closed {
            self.close(index);
            return;
        }
        if interest == Interest::Work {
            // Only with a hand-off does `Edges` stop at `Work`.
            self.dispatch(index);
            return;
        }
        if !slot.registered {
            // Edge triggered, and epoll_ctl(ADD) reports readiness that is
            // already there, so nothing that happened before this is lost.
            let token = (u64::from(gen_) << 32) | index as u64;
            let flags = EventFlags::IN | EventFlags::OUT | EventFlags::RDHUP | EventFlags::ET;
            if epoll::add(&self.epoll, &slot.sock, EventData::new_u64(token), flags).is_err() {
                slot.conn.on(Event::ReadFailed, site, &mut self.w);
                self.close(index);
                return;
            }
            slot.registered = true;
        }
        let deadline = match slot.conn.deadline(site) {
            Some(t) => t,
            None => slot
                .closing
                .and_then(|c| c.until())
                .unwrap_or_else(Instant::now),
        };
        self.timers.arm(&mut slot.armed, deadline, index, gen_);
    }

    /// Handles every timer entry that has come due.
    fn fire_timers(&mut self) {
        let now = Instant::now();
        if self.accepting.resumes(now) && !self.grace.begun() {
            let _ = self.listen(true);
            for i in 0..self.listeners.len() {
                self.accept(i);
            }
        }
        while let Some(due) = self.timers.due(now, self.slots.gens()) {
            let index = due.index;
            let site = self.site;
            let Some(slot) = &mut self.slots[index] else {
                // With a worker: armed afresh when it comes back. One given
                // back quietly whose client says nothing more is taken back
                // now, so that its keep-alive timeout runs.
                self.away[index].timer_lost = true;
                if self.handovers[index]
                    .as_ref()
                    .is_some_and(|h| !h.edge_while_away())
                {
                    self.take_back();
                }
                continue;
            };
            if !due.fires(&mut slot.armed) {
                continue; // superseded by an earlier entry that already fired
            }
            // A deadline that moved on (another request came) changes nothing
            // and the timer is armed again; a lingering close that is over
            // ends in `drive`.
            slot.interest = slot.conn.on(Event::Deadline, site, &mut self.w);
            self.drive(index);
        }
    }

    /// Sends connection `index`, which holds a complete request, to a worker;
    /// with the queue full, answers 503 (with `Retry-After`) and counts the
    /// request dropped, as `pool` does with a connection.
    fn dispatch(&mut self, index: usize) {
        let (Some(handoff), Some(conn)) = (&self.handoff, self.slots.lend(index)) else {
            return;
        };
        self.away[index] = Away::default();
        if let Some(h) = &conn.handover {
            h.sent();
        }
        let job = Job {
            index: index as u32,
            conn,
        };
        let Some(refused) = handoff.send(job) else {
            return;
        };
        let mut back = refused.conn;
        if let Some(h) = &back.handover {
            h.returned();
        }
        self.site.stats.dropped();
        back.interest = back.conn.refuse(self.site, &mut self.w);
        self.slots.put(index, back);
        self.drive(index);
    }

    /// Takes back the connections workers have finished with.
    fn take_back(&mut self) {
        let Some(handoff) = &self.handoff else {
            return;
        };
        handoff.clear_wake();
        while let Some(job) = self.handoff.as_ref().and_then(|h| h.back.try_recv().ok()) {
            let index = job.index as usize;
            let mut conn = job.conn;
            let away = self.away[index];
            if away.fin && !conn.fin {
                // The client's close came while a worker had it.
                let event = policy::peer_gone(&conn.sock, &conn.conn);
                conn.interest = conn.conn.on(event, self.site, &mut self.w);
            }
            conn.came_back(away);
            self.slots.put(index, conn);
            if self.grace.forced()
                && let Some(slot) = &mut self.slots[index]
            {
                slot.conn.on(Event::Forced, self.site, &mut self.w);
                self.close(index);
                continue;
            }
            self.drive(index);
        }
    }

    fn close(&mut self, index: usize) {
        let Some(mut slot) = self.slots.remove(index) else {
            return;
        };
        if let Some(b) = slot.conn.detach() {
            self.pool.keep(b);
        }
        self.handovers[index] = None;
        policy::closed(self.site, &mut self.w, &slot.conn, slot.wire.resumed());
        // Closing the descriptor removes it from the epoll set.
        drop(slot.sock);
    }
}

/// How the loop carries out each [`Interest`] ([`carry`]): as far as the
/// socket's last known readiness allows (see the module docs), then the loop
/// waits for the next edge or the timer. A hold waits for the timer
/// ([`Event::Deadline`]) or the client's close.
struct Edges<'a> {
    slot: &'a mut Connection,
    pool: &'a mut Spares,
    site: &'a Shared,
    w: &'a mut Local,
    /// Complete requests go to workers (`event`): stop at `Work`.
    handoff: bool,
    /// The close is over: the loop closes the socket.
    closed: bool,
}

impl Carry for Edges<'_> {
    #[inline(always)]
    fn read(&mut self) -> Option<Interest> {
        let slot = &mut *self.slot;
        if !slot.readable {
            // Idle: the buffers go back to the pool meanwhile.
            self.pool.reclaim(&mut slot.conn);
            return None;
        }
        self.pool.lend_to(&mut slot.conn);
        let (sock, conn, wire) = (&slot.sock, &mut slot.conn, &mut slot.wire);
        let next = match step::read(sock, conn, wire, self.site, self.w) {
            Moved::Told { next, short } => {
                // After the close was signalled the next read is its end (0)
                // or more bytes: no edge would come.
                if short && !slot.fin {
                    slot.readable = false;
                }
                next
            }
            Moved::Again => {
                slot.readable = false;
                if slot.fresh && slot.wire.heard_nothing() {
                    // Nothing came with it: the kernel stopped deferring it,
                    // DEFER after the connect. (A TLS read that took a
                    // ClientHello says EAGAIN too: not this.)
                    slot.conn.connected_earlier(DEFER);
                }
                Interest::Read
            }
            Moved::Retry => Interest::Read,
        };
        slot.fresh = false;
        Some(next)
    }

    #[inline(always)]
    fn write(&mut self) -> Option<Interest> {
        let slot = &mut *self.slot;
        if !slot.writable {
            return None;
        }
        let (sock, conn, wire) = (&slot.sock, &mut slot.conn, &mut slot.wire);
        Some(match step::write(sock, conn, wire, self.site, self.w) {
            Moved::Told { next, short } => {
                if short {
                    slot.writable = false;
                }
                next
            }
            Moved::Again => {
                slot.writable = false;
                Interest::Write
            }
            Moved::Retry => Interest::Write,
        })
    }

    #[inline(always)]
    fn work(&mut self) -> Option<Interest> {
        if self.handoff {
            return None; // the loop sends it to a worker
        }
        // --work burns this loop's CPU, as a handler would.
        let slot = &mut *self.slot;
        Some(policy::work(&slot.sock, &mut slot.conn, self.site, self.w))
    }

    /// The close (see `closing.rs`): until an edge or the timer when it has
    /// to wait.
    #[inline(always)]
    fn close(&mut self, linger: bool) {
        let slot = &mut *self.slot;
        let closing = slot.closing.get_or_insert_with(|| Closing::new(linger));
        self.closed = closing.step(&slot.sock, &mut slot.wire, self.site) == Close::Done;
    }
}

/// Sets `TCP_NOTSENT_LOWAT` to [`NOTSENT_LOWAT`] on the listener, for every
/// connection accepted from it; best effort: without it the loop is correct,
/// and large files cost the client more CPU.
pub(crate) fn send_low_water(listener: BorrowedFd<'_>) {
    let _ = socket2::SockRef::from(&listener).set_tcp_notsent_lowat(NOTSENT_LOWAT);
}

/// How long the kernel defers a connection that sends nothing: the
/// `TCP_DEFER_ACCEPT` asked for ([`defer_accept`]) is a number of seconds,
/// which Linux turns into SYN-ACK retransmissions (one, sent after its initial
/// retransmission timeout of one second); the client's answer to it makes the
/// connection. Measured: a silent connection was accepted 1.00 to 1.03 s after
/// the connect (`tests/server/deadlines.rs` sees the close).
pub(crate) const DEFER: Duration = Duration::from_secs(1);

/// Sets `TCP_DEFER_ACCEPT` ([`DEFER`]) on a listener (see "Accept" above); at
/// bind time, before `listen`, so that every connection is deferred, which is
/// what lets the loop date back one that comes without bytes (see
/// "Deadlines" in [`super::policy`]).
#[allow(unsafe_code)] // setsockopt with an option rustix and socket2 do not wrap
pub(crate) fn defer_accept(listener: impl AsFd) -> std::io::Result<()> {
    use std::os::fd::AsRawFd;
    let secs = DEFER.as_secs() as libc::c_int;
    // SAFETY: the descriptor is the open listener we borrow for the call; the
    // option value is a live c_int on our stack and its exact size is passed,
    // so the kernel reads only those bytes.
    let r = unsafe {
        libc::setsockopt(
            listener.as_fd().as_raw_fd(),
            libc::IPPROTO_TCP,
            libc::TCP_DEFER_ACCEPT,
            (&secs as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    if r == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The loop sets the mark once, on the listener: this checks that an
    /// accepted socket carries it, which is what saves a setsockopt per
    /// connection.
    #[test]
    fn accepted_sockets_inherit_the_send_low_water_mark() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        send_low_water(listener.as_fd());
        let _client = std::net::TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let (accepted, _) = listener.accept().unwrap();
        let mark = socket2::SockRef::from(&accepted)
            .tcp_notsent_lowat()
            .unwrap();
        assert_eq!(mark, NOTSENT_LOWAT);
    }
}
