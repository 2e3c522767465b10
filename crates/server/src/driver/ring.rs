//! Driving many [`Conn`]s from one thread with io_uring, for the `uring`
//! engine: completion I/O, where the kernel does the reading and writing and
//! the loop learns what was done, instead of being told what could be done.
//!
//! One [`Ring`] per worker thread (as `reactor` has one epoll loop per
//! thread), each with its own submission and completion queues and its own
//! pool of receive buffers. Per turn of the loop there is one
//! `io_uring_enter`: it submits every request the turn made (sends, re-armed
//! receives, cancels) and waits for the next completions, bounded by the
//! earliest deadline (the enter's own timeout, `IORING_ENTER_EXT_ARG`, so no
//! timer requests and no timerfd).
//!
//! - *Accept*: one multishot accept per listener (all rings of a server arm
//!   one on the shared listeners; the kernel gives each connection to one).
//!   A failed accept goes to [`Accepting`], the one accept policy: retried,
//!   or re-armed after a back-off when descriptors run out. The listener
//!   defers accepting until the client's first bytes arrive
//!   (`TCP_DEFER_ACCEPT`, as the epoll loops' does, see [`super::evloop`]),
//!   so the first receive finds the request already there, and completes
//!   inside the `io_uring_enter` that submits it (no poll is armed). One
//!   that sends nothing is handed over when the kernel stops deferring it,
//!   [`DEFER`] after the connect: its first receive, submitted by an enter,
//!   has heard nothing when that enter returns, and the connection is dated
//!   back by [`DEFER`] then (see "Deadlines" in [`super::policy`]). A
//!   multishot accept gives no peer address, and only the log prints it: a
//!   `getpeername` per connection asks for it when there is a log, none
//!   without.
//! - *Receive*: the first receive of a connection is one-shot (a
//!   `Connection: close` request is then answered and closed with no
//!   receive left to cancel); after it, one multishot receive per
//!   connection. Either lands its bytes in a buffer the kernel picks from a
//!   provided-buffer ring ([`BufRing`]), so an idle connection holds no
//!   buffer of its own. When nothing waits in the connection's inbox ahead
//!   of them, `Conn` reads the bytes where the kernel put them (one copy,
//!   into its read buffer), and only what it does not take (the rest of a
//!   pipelined batch, bytes that come while it writes) is copied to the
//!   inbox; the buffer goes back to the ring in the same turn, once `Conn`
//!   has read it. A client that sends faster than its requests are
//!   answered (a pipelining flood) has its receive cancelled once its inbox
//!   holds [`INBOX_MOST`], and re-armed when the inbox is read. A close
//!   that does not linger arms no receive. The receive's end (the client's close) is told to `Conn` once, with
//!   whether request bytes wait in the inbox ahead of it, which the ring
//!   knows without a `MSG_PEEK`.
//! - *Send*: what [`Conn::next_write`] offers is sealed by the [`Wire`]
//!   (copied, or encrypted for TLS) into the connection's outbox, and told to
//!   `Conn` as written; the outbox goes out with one send per turn, and no
//!   more is sealed while [`OUT_MOST`] waits, so a slow reader holds that
//!   much memory, no more. The bytes in flight sit in a second buffer that
//!   nothing touches until the kernel reports the send (the kernel reads
//!   them while the socket has no room). A plaintext file range goes out as
//!   on the epoll loops, by `sendfile` on the non-blocking socket (after
//!   what is owed before it, in `send`s of its own), and a full socket is
//!   waited for with a `POLLOUT` poll on the ring: io_uring has no
//!   `sendfile`, and reading the file into the outbox to send it (what this
//!   loop did first) copies every byte twice (measured: 0.56x reactor's
//!   requests/s for 1 MiB files). `TCP_NOTSENT_LOWAT` is set on the
//!   listeners for this, as on the epoll loops. Over TLS a range is read
//!   ([`FILE_CHUNK`] at a time) and sealed. The completion of a send that
//!   leaves nothing owed, on a connection that waits for nothing but its
//!   client's next bytes (the usual keep-alive response), is noted and
//!   nothing more: no `Conn` event, no request, no timer ([`quiet`]).
//! - *Deadlines*: [`Conn::deadline`] as in every driver (see "Deadlines" in
//!   [`super::policy`]), and while bytes wait to go, the write timeout from
//!   the last send that made progress, dated by the turn's clock (read once
//!   per turn, as its enter returns).
//! - *Timers*: one heap ([`Timers`], lazy deletion). A connection whose
//!   timer would be pushed just as a send or its first receive is queued
//!   has it put off until after the enter that submits them: most such
//!   requests complete inside that enter, and a `Connection: close`
//!   connection is then answered and closed before it has a timer (the
//!   epoll loops arm none for it either), where it cost a push and, a read
//!   timeout later, a pop from a heap as large as the connections of those
//!   seconds. That enter waits no longer than the deadlines put off (for
//!   a first receive, the deadline as if the connection came without bytes).
//! - *Close*: the outbox is sent (with a TLS `close_notify`), then for a
//!   lingering close the write side is shut and the receive goes on,
//!   dropping what comes, within [`policy::LINGER`]. A connection's slot and
//!   buffers are freed only once the kernel has reported every request that
//!   named them (its receive is cancelled), never while one may still write
//!   into them.
//! - *Shutdown*: a poll on the shutdown pipe; then the accepts are cancelled,
//!   idle connections closed, busy ones finished within the grace period.

use std::net::{SocketAddr, TcpListener};
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, FromRawFd, IntoRawFd, OwnedFd};
use std::time::{Duration, Instant};

use io_uring::{IoUring, cqueue, opcode, squeue, types};
use rustix::io::Errno;
use rustix::net::SendFlags;

use super::accept::{self, Accepting, Step};
use super::bufring::{BUFFER, BufRing, GROUP};
use super::dispatch::{Carry, carry};
use super::evloop::{self, DEFER};
use super::grace::{Grace, Turn};
use super::places::Places;
use super::policy::{self, Linger};
use super::spares::Spares;
use super::step;
use super::timers::Timers;
use super::wire::{Unsealed, Wire};
use crate::conn::{Chunk, Conn, Event, Interest};
use crate::error::ServerError;
use crate::runtime::shared::{Local, Shared};

/// Submission queue entries; the completion queue is [`CQ`]. A turn that
/// fills the submission queue submits it and goes on (see [`Ring::push`]).
const SQ: u32 = 1024;
/// Completion queue entries: multishot requests post many completions each,
/// so it is larger than the submission queue.
const CQ: u32 = 8192;
/// Bytes received and not yet read by `Conn` past which the receive is
/// cancelled (see "Receive" above).
const INBOX_MOST: usize = 256 * 1024;
/// Bytes sealed and not yet sent past which no more are taken from `Conn`.
const OUT_MOST: usize = 256 * 1024;
/// Bytes of a file read per `pread` for a TLS connection.
const FILE_CHUNK: usize = 128 * 1024;
/// Spare buffer pairs kept for connections that become busy again.
const POOL: usize = 256;

/// What a completion is about: the low byte of its `user_data`.
const RECV: u64 = 1;
const SEND: u64 = 2;
const CANCEL: u64 = 3;
const ACCEPT: u64 = 4;
const WAKE: u64 = 5;
const ROOM: u64 = 6;

fn token(op: u64, index: usize, gen_: u32) -> u64 {
    (u64::from(gen_) << 32) | ((index as u64) << 8) | op
}

/// Where a connection's close is.
#[derive(Debug, Clone, Copy)]
enum Closing {
    /// Sending what is owed (and a TLS `close_notify`) before the end.
    Flushing { linger: bool },
    /// The write side is shut; what comes is dropped until the end.
    Lingering(Linger),
    /// Told and counted closed; waiting for the kernel to report its last
    /// requests before the slot is freed.
    Dead,
}

/// How the receive of a connection ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ended {
    /// The client's end (a FIN).
    Eof,
    /// A reset, or another error.
    Failed,
}

/// Where a connection's first receive is (see "Accept" above).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum First {
    /// Not armed yet.
    Unarmed,
    /// Armed (one-shot), and not judged yet: it either completes inside the
    /// `io_uring_enter` that submits it (the bytes came with the connection)
    /// or the connection came without bytes.
    Pending,
    /// Completed, or judged after that enter.
    Judged,
}

/// One connection of a ring.
#[derive(Debug)]
struct Slot {
    sock: OwnedFd,
    conn: Conn,
    wire: Wire,
    interest: Interest,
    /// Bytes received (ciphertext, over TLS) that `Conn` has not read yet,
    /// from `in_pos`.
    inbox: Vec<u8>,
    in_pos: usize,
    ended: Option<Ended>,
    /// A receive is armed (its last completion not yet seen): one-shot for
    /// the first (see "Receive" above), multishot after.
    receiving: bool,
    /// The first receive: armed, and judged.
    first: First,
    /// The enter after which this connection's timer is to be armed (see
    /// "Timers" above), if one is put off.
    later: Option<u64>,
    /// A cancel of the receive was submitted.
    cancelled: bool,
    /// Sealed bytes waiting for the next send.
    out: Vec<u8>,
    /// The bytes of the send in flight, from `flight_pos`: untouched until
    /// its completion.
    flight: Vec<u8>,
    flight_pos: usize,
    sending: bool,
    /// A file's `sendfile` (or the bytes before it) found the socket full:
    /// the connection waits for room ([`ROOM`], a `POLLOUT` poll).
    wants_room: bool,
    /// That poll is armed (its completion not yet seen).
    polling: bool,
    /// The last send that made progress (or when the bytes began to wait).
    progress: Instant,
    closing: Option<Closing>,
    /// The earliest timer entry in the heap for this slot.
    armed: Option<Instant>,
}

impl Slot {
    fn inflight(&self) -> bool {
        self.receiving || self.sending || self.polling
    }

    /// Bytes are owed: a send in flight, the rest of one that went out in
    /// part (the socket's `TCP_NOTSENT_LOWAT` makes that common for big
    /// responses), the outbox, or a file waiting for room.
    fn owes_bytes(&self) -> bool {
        self.sending || !self.flight.is_empty() || !self.out.is_empty() || self.wants_room
    }
}

/// An io_uring loop serving connections from its listeners.
pub(crate) struct Ring<'s> {
    /// Dropped before `bufs` (fields drop in order): the kernel lets go of
    /// the buffers with the ring.
    ring: IoUring,
    bufs: BufRing,
    site: &'s Shared,
    w: Local,
    listeners: Vec<BorrowedFd<'s>>,
    /// Each listener's multishot accept is armed.
    accepting: Vec<bool>,
    /// The accept policy's memory: the back-off, and a pause (descriptors
    /// exhausted) while it lasts.
    policy: Accepting,
    /// The connections; a place is taken until the connection is freed
    /// (a dead one waits there for the kernel's last reports).
    slots: Places<Slot>,
    timers: Timers,
    pool: Spares,
    grace: Grace,
    /// Completions of this turn, copied out of the queue.
    done: Vec<(u64, i32, u32)>,
    /// A file range read for a TLS connection, before it is sealed.
    scratch: Vec<u8>,
    /// The `io_uring_enter`s so far: a connection's `later` names one.
    enters: u64,
    /// Connections whose timer (and first receive's judgement) is put off
    /// until after the next enter (see "Timers" above), and the earliest
    /// of their deadlines, which that enter waits no longer than.
    later: Vec<(usize, u32)>,
    later_by: Option<Instant>,
    /// Those of the enter just made, judged after its completions.
    judging: Vec<(usize, u32)>,
    /// The clock, read once per turn as its enter returns: a send's
    /// progress is dated by it (the write timeout runs from there, early
    /// by at most the turn's work), and the turn's timers are judged by it.
    now: Instant,
}

impl std::fmt::Debug for Ring<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Ring")
            .field("open", &self.slots.open())
            .finish()
    }
}

impl<'s> Ring<'s> {
    /// A ring over `listeners` (shared with the other rings of the server).
    pub(crate) fn new(
        site: &'s Shared,
        listeners: &'s [TcpListener],
    ) -> Result<Ring<'s>, ServerError> {
        let ring = IoUring::builder()
            .setup_cqsize(CQ)
            .setup_single_issuer()
            .setup_defer_taskrun()
            .build(SQ)
            .map_err(ServerError::io("creating an io_uring"))?;
        let bufs = BufRing::new(&ring).map_err(ServerError::io("registering receive buffers"))?;
        let mut r = Ring {
            ring,
            bufs,
            site,
            w: site.local(),
            listeners: listeners.iter().map(|l| l.as_fd()).collect(),
            accepting: vec![false; listeners.len()],
            policy: Accepting::default(),
            slots: Places::default(),
            timers: Timers::default(),
            pool: Spares::new(POOL),
            grace: Grace::default(),
            done: Vec::with_capacity(CQ as usize),
            scratch: Vec::new(),
            enters: 0,
            later: Vec::new(),
            later_by: None,
            judging: Vec::new(),
            now: Instant::now(),
        };
        // Big files go out in `sendfile`s of at most the mark, as on the
        // epoll loops (see "Large files" in `super::evloop`).
        for l in &r.listeners {
            evloop::send_low_water(*l);
        }
        let wake = opcode::PollAdd::new(
            types::Fd(site.shutdown.wake_fd().as_raw_fd()),
            libc::POLLIN as u32,
        )
        .build()
        .user_data(WAKE);
        r.push(wake);
        Ok(r)
    }

    /// Queues a request; a full submission queue is submitted first.
    fn push(&mut self, e: squeue::Entry) {
        push_on(&mut self.ring, e);
    }

    fn arm_accept(&mut self, i: usize) {
        if self.accepting[i] || self.grace.begun() || self.policy.paused_until().is_some() {
            return;
        }
        let fd = self.listeners[i].as_raw_fd();
        let e = opcode::AcceptMulti::new(types::Fd(fd))
            // Non-blocking for the `sendfile`s made outside the ring; the
            // ring's own requests do not look at the flag.
            .flags(libc::SOCK_CLOEXEC | libc::SOCK_NONBLOCK)
            .build()
            .user_data(token(ACCEPT, i, 0));
        self.push(e);
        self.accepting[i] = true;
    }

    /// Serves until shutdown has been asked for and every connection is done
    /// (or the grace period is over).
    pub(crate) fn run(mut self) -> Result<(), ServerError> {
        for i in 0..self.listeners.len() {
            self.arm_accept(i);
        }
        if self.site.shutdown.is_requested() {
            self.begin_shutdown();
        }
        loop {
            match self.grace.at(Instant::now(), self.slots.open()) {
                Turn::Serve => {}
                Turn::Force => {
                    self.site.shutdown.force();
                    self.close_all();
                    continue;
                }
                Turn::Stop => break,
            }
            let next = self.next_deadline();
            self.turn(next)?;
        }
        // What is left (the grace period and `AFTER_FORCE` are over) is given
        // up, and the kernel's reports of the cancels are waited for, a
        // little, before the memory their requests name goes with the loop.
        self.close_all();
        let until = Instant::now() + Duration::from_millis(100);
        while self.slots.open() > 0 && Instant::now() < until {
            self.turn(Some(until))?;
        }
        let _ = self.ring.submit();
        Ok(())
    }

    /// One turn: submits what the last turn queued and waits, at most until
    /// `next`, for completions; handles them and the timers that came due.
    fn turn(&mut self, next: Option<Instant>) -> Result<(), ServerError> {
        std::mem::swap(&mut self.judging, &mut self.later);
        let by = self.later_by.take();
        let next = [next, by].into_iter().flatten().min();
        let this = self.enters;
        self.enters += 1;
        let waited = match next {
            Some(t) => {
                let ts = types::Timespec::from(t.saturating_duration_since(Instant::now()));
                let args = types::SubmitArgs::new().timespec(&ts);
                self.ring.submitter().submit_with_args(1, &args)
            }
            None => self.ring.submit_and_wait(1),
        };
        match waited {
            Ok(_) => {}
            Err(e)
                if matches!(
                    e.raw_os_error(),
                    Some(libc::ETIME | libc::EINTR | libc::EBUSY)
                ) => {}
            Err(e) => {
                eprintln!("servelab: io_uring_enter failed: {e}; stopping");
                self.site.shutdown.trigger();
                return Err(ServerError::io("waiting for completions")(e));
            }
        }
        if !self.judging.is_empty() && !self.ring.submission().is_empty() {
            // Not all submitted (the completion queue was full): judged
            // after the next enter.
            for &(index, gen_) in &self.judging {
                if self.slots.is_current(index, gen_)
                    && let Some(slot) = &mut self.slots[index]
                    && slot.later == Some(this)
                {
                    slot.later = Some(self.enters);
                }
            }
            self.later.append(&mut self.judging);
            self.later_by = [self.later_by, by].into_iter().flatten().min();
        }
        self.now = Instant::now();
        self.done.clear();
        self.done.extend(
            self.ring
                .completion()
                .map(|c| (c.user_data(), c.result(), c.flags())),
        );
        let mut gave = false;
        for k in 0..self.done.len() {
            let (ud, res, flags) = self.done[k];
            gave |= self.complete(ud, res, flags);
        }
        if gave {
            self.bufs.publish();
        }
        self.judge(this);
        self.fire_timers();
        Ok(())
    }

    /// After enter `this` and its completions: each connection whose timer
    /// was put off until then has it armed, unless it was put off again
    /// since. One whose first receive that enter submitted and which is
    /// still pending came without bytes: the kernel stopped deferring it,
    /// [`DEFER`] after the connect, and it is dated back by that much (see
    /// "Accept" above).
    fn judge(&mut self, this: u64) {
        for k in 0..self.judging.len() {
            let (index, gen_) = self.judging[k];
            if !self.slots.is_current(index, gen_) {
                continue;
            }
            let Some(slot) = &mut self.slots[index] else {
                continue;
            };
            if slot.first == First::Pending {
                slot.first = First::Judged;
                if slot.closing.is_none() {
                    slot.conn.connected_earlier(DEFER);
                }
            }
            if slot.later == Some(this) {
                slot.later = None;
                if let Some(t) = deadline(slot, self.site) {
                    self.timers.arm(&mut slot.armed, t, index, gen_);
                }
            }
        }
        self.judging.clear();
    }

    fn next_deadline(&self) -> Option<Instant> {
        let timer = self.timers.next();
        [timer, self.policy.paused_until(), self.grace.next()]
            .into_iter()
            .flatten()
            .min()
    }

    /// Handles one completion; true when a receive buffer was given back.
    fn complete(&mut self, ud: u64, res: i32, flags: u32) -> bool {
        match ud & 0xff {
            WAKE => {
                self.begin_shutdown();
                false
            }
            ACCEPT => {
                self.accepted(((ud >> 8) & 0xff_ffff) as usize, res, flags);
                false
            }
            CANCEL => false,
            op => {
                let index = ((ud >> 8) & 0xff_ffff) as usize;
                if !self.slots.is_current(index, (ud >> 32) as u32) {
                    return false;
                }
                let (gave, moved) = match op {
                    RECV => (self.received(index, res, flags), true),
                    SEND => (false, self.sent(index, res)),
                    _ => {
                        self.roomy(index);
                        (false, true)
                    }
                };
                if moved {
                    self.settle(index);
                }
                gave
            }
        }
    }

    fn accepted(&mut self, i: usize, res: i32, flags: u32) {
        if !cqueue::more(flags) {
            self.accepting[i] = false;
        }
        if res >= 0 {
            self.policy.took();
            // SAFETY: the kernel gave us this new descriptor; we own it now.
            #[allow(unsafe_code)]
            let sock = unsafe { OwnedFd::from_raw_fd(res) };
            if self.grace.begun() {
                return;
            }
            // Only the log prints the peer (the access log's client, and
            // `--log-connections`, which needs a log): without one, no
            // `getpeername`.
            let addr = if self.w.log.enabled() {
                rustix::net::getpeername(&sock).ok().flatten()
            } else {
                None
            };
            self.add(sock, accept::peer(addr));
        } else {
            match self.policy.failed(Errno::from_raw_os_error(-res)) {
                Step::Retry | Step::Wait => {}
                Step::Pause(_) => {
                    // Stop the multishot accept that is still armed, if any.
                    if self.accepting[i] {
                        let e = opcode::AsyncCancel::new(token(ACCEPT, i, 0))
                            .build()
                            .user_data(CANCEL);
                        self.push(e);
                    }
                    return;
                }
            }
        }
        if !self.accepting[i] {
            self.arm_accept(i);
        }
    }

    fn add(&mut self, sock: OwnedFd, peer: SocketAddr) {
        let conn = Conn::bare(peer);
        if !policy::opened(self.site, &mut self.w, &conn) {
            return;
        }
        let index = self.slots.insert(Slot {
            sock,
            conn,
            wire: Wire::new(self.site),
            interest: Interest::Read,
            inbox: Vec::new(),
            in_pos: 0,
            ended: None,
            receiving: false,
            first: First::Unarmed,
            later: None,
            cancelled: false,
            out: Vec::new(),
            flight: Vec::new(),
            flight_pos: 0,
            sending: false,
            wants_room: false,
            polling: false,
            progress: self.now,
            closing: None,
            armed: None,
        });
        self.drive(index);
        self.settle(index);
    }

    /// A receive completion: bytes to the inbox, or the end.
    fn received(&mut self, index: usize, res: i32, flags: u32) -> bool {
        let Some(slot) = &mut self.slots[index] else {
            return false;
        };
        if !cqueue::more(flags) {
            slot.receiving = false;
        }
        slot.first = First::Judged;
        let mut gave = false;
        // The receive's end, if it is one.
        let mut end = None;
        // Bytes `Conn` reads from the buffer they were received into.
        let mut fresh = None;
        if res > 0 {
            if let Some(bid) = cqueue::buffer_select(flags) {
                let bytes = self.bufs.bytes(bid, res as usize);
                match slot.closing {
                    Some(Closing::Lingering(ref mut l)) => l.drained(bytes.len()),
                    Some(Closing::Dead) => {}
                    // Nothing waits ahead of them: read where they are.
                    None if slot.in_pos == slot.inbox.len() => fresh = Some((bid, bytes.len())),
                    _ => {
                        if slot.in_pos == slot.inbox.len() {
                            slot.inbox.clear();
                            slot.in_pos = 0;
                        }
                        slot.inbox.extend_from_slice(bytes);
                    }
                }
                if fresh.is_none() {
                    self.bufs.give(bid);
                }
                gave = true;
            }
        } else if res == 0 {
            end = Some(Ended::Eof);
        } else if res == -libc::ENOBUFS || res == -libc::ECANCELED {
            // Out of buffers this turn (re-armed in `settle`), or cancelled.
        } else {
            end = Some(Ended::Failed);
        }
        if let Some(end) = end
            && slot.ended.is_none()
        {
            slot.ended = Some(end);
            if slot.closing.is_none() {
                // The client's close, told once, with whether request bytes
                // wait ahead of it in the inbox; `Conn` judges it.
                let unread = slot.in_pos < slot.inbox.len();
                slot.interest = slot
                    .conn
                    .on(Event::PeerGone { unread }, self.site, &mut self.w);
            }
        }
        self.drive_with(index, fresh);
        if let Some((bid, _)) = fresh {
            self.bufs.give(bid);
        }
        gave
    }

    /// A send completion; false when the connection has nothing to do
    /// about it (then it needs no [`Ring::settle`] either).
    fn sent(&mut self, index: usize, res: i32) -> bool {
        let Some(slot) = &mut self.slots[index] else {
            return false;
        };
        slot.sending = false;
        if res < 0 {
            slot.flight.clear();
            slot.flight_pos = 0;
            slot.out.clear();
            if slot.closing.is_none() {
                slot.interest = slot.conn.on(Event::WriteFailed, self.site, &mut self.w);
            } else if !matches!(slot.closing, Some(Closing::Dead)) {
                slot.closing = Some(Closing::Flushing { linger: false });
            }
        } else {
            slot.flight_pos += res as usize;
            if slot.flight_pos >= slot.flight.len() {
                slot.flight.clear();
                slot.flight_pos = 0;
                if slot.out.is_empty() && quiet(slot) && !self.grace.begun() {
                    return false;
                }
            }
            // Progress matters only while bytes still wait (the write
            // timeout counts from it); when none do, the next bytes to
            // wait are dated as they begin to (in `seal_next`).
            if !slot.flight.is_empty() || !slot.out.is_empty() {
                slot.progress = self.now;
            }
        }
        self.drive(index);
        true
    }

    /// The `POLLOUT` poll of a connection that waits for room completed
    /// (room, or the socket's end, which the next `sendfile` tells).
    fn roomy(&mut self, index: usize) {
        let Some(slot) = &mut self.slots[index] else {
            return;
        };
        slot.polling = false;
        slot.wants_room = false;
        self.drive(index);
    }

    /// Moves a connection as far as it goes without waiting ([`carry`],
    /// with what the kernel delivered and room for what is to be sent:
    /// [`Completions`]).
    fn drive(&mut self, index: usize) {
        self.drive_with(index, None);
    }

    /// [`Ring::drive`], with the bytes of a receive still in buffer `bid`
    /// of the ring (`fresh`, with their length; none wait in the inbox
    /// ahead of them): `Conn` reads them from there, and only what it does
    /// not take is copied to the inbox.
    fn drive_with(&mut self, index: usize, fresh: Option<(u16, usize)>) {
        let Some(slot) = &mut self.slots[index] else {
            return;
        };
        if slot.closing.is_some() {
            self.close_step(index);
            return;
        }
        let start = slot.interest;
        let mut done = Completions {
            slot: &mut *slot,
            fresh: fresh.map_or(&[][..], |(bid, len)| self.bufs.bytes(bid, len)),
            pool: &mut self.pool,
            scratch: &mut self.scratch,
            site: self.site,
            w: &mut self.w,
            now: self.now,
        };
        let interest = carry(&mut done, start);
        let rest = done.fresh;
        if !rest.is_empty() {
            // The inbox was empty (so `Completions` read none of it).
            slot.inbox.clear();
            slot.in_pos = 0;
            slot.inbox.extend_from_slice(rest);
        }
        slot.interest = interest;
        if let Interest::Close { .. } = interest {
            self.close_step(index);
        }
    }

    /// Takes a close as far as it goes (see "Close" above).
    fn close_step(&mut self, index: usize) {
        let Some(slot) = &mut self.slots[index] else {
            return;
        };
        loop {
            match slot.closing {
                Some(Closing::Flushing { linger }) => {
                    if slot.owes_bytes() {
                        return;
                    }
                    if !linger || slot.ended.is_some() {
                        break;
                    }
                    let _ = rustix::net::shutdown(&slot.sock, rustix::net::Shutdown::Write);
                    slot.closing = Some(Closing::Lingering(Linger::start()));
                }
                Some(Closing::Lingering(l)) => {
                    if slot.ended.is_some() || l.is_over() {
                        break;
                    }
                    return;
                }
                Some(Closing::Dead) => return,
                None => return,
            }
        }
        policy::closed(self.site, &mut self.w, &slot.conn, slot.wire.resumed());
        slot.closing = Some(Closing::Dead);
        slot.out.clear();
    }

    /// After a connection moved: submits its send, re-arms or cancels its
    /// receive, arms its timer, or frees a dead one.
    fn settle(&mut self, index: usize) {
        let gen_ = self.slots.gens()[index];
        let Some(slot) = &mut self.slots[index] else {
            return;
        };
        let dead = matches!(slot.closing, Some(Closing::Dead));
        if dead {
            if slot.receiving && !slot.cancelled {
                slot.cancelled = true;
                let e = opcode::AsyncCancel::new(token(RECV, index, gen_))
                    .build()
                    .user_data(CANCEL);
                self.push(e);
                return;
            }
            if !slot.inflight() {
                self.free(index);
            }
            return;
        }
        // Each request is pushed as it is made (the ring is a field apart
        // from the slots). Gathered into an array of three `Option`s of
        // 64-byte entries and pushed after, they were moved and iterated
        // over: `bench/callgrind.sh --engine uring` counted 680 instructions
        // per keep-alive request in `settle` (inclusive), 455 this way.
        // Sends go first, then the receive, then the poll for room.
        let ring = &mut self.ring;
        // A send or a first receive queued now: what the next enter makes of
        // it decides the timer (see "Timers" above).
        let mut queued = false;
        if !slot.sending && slot.flight.is_empty() && !slot.out.is_empty() {
            std::mem::swap(&mut slot.flight, &mut slot.out);
            slot.flight_pos = 0;
        }
        if !slot.sending && slot.flight_pos < slot.flight.len() {
            let rest = &slot.flight[slot.flight_pos..];
            let send = opcode::Send::new(
                types::Fd(slot.sock.as_raw_fd()),
                rest.as_ptr(),
                rest.len() as u32,
            )
            .flags(libc::MSG_NOSIGNAL)
            .build()
            .user_data(token(SEND, index, gen_));
            push_on(ring, send);
            slot.sending = true;
            queued = true;
        }
        let backlog = slot.inbox.len() - slot.in_pos;
        // A close that does not linger has nothing more to hear.
        let deaf = matches!(slot.closing, Some(Closing::Flushing { linger: false }));
        if !slot.receiving && !deaf && slot.ended.is_none() && backlog < INBOX_MOST {
            slot.cancelled = false;
            let fd = types::Fd(slot.sock.as_raw_fd());
            let recv = if slot.first != First::Unarmed {
                opcode::RecvMulti::new(fd, GROUP).build()
            } else {
                // The first receive is one-shot: the request came with the
                // connection, and a `Connection: close` one then needs no
                // cancel of a multishot receive before its close.
                slot.first = First::Pending;
                queued = true;
                opcode::Recv::new(fd, std::ptr::null_mut(), BUFFER as u32)
                    .buf_group(GROUP)
                    .build()
                    .flags(squeue::Flags::BUFFER_SELECT)
            };
            push_on(ring, recv.user_data(token(RECV, index, gen_)));
            slot.receiving = true;
        } else if slot.receiving && !slot.cancelled && backlog >= INBOX_MOST {
            slot.cancelled = true;
            let cancel = opcode::AsyncCancel::new(token(RECV, index, gen_))
                .build()
                .user_data(CANCEL);
            push_on(ring, cancel);
        }
        if slot.wants_room && !slot.polling {
            let poll = opcode::PollAdd::new(types::Fd(slot.sock.as_raw_fd()), libc::POLLOUT as u32)
                .build()
                .user_data(token(ROOM, index, gen_));
            push_on(ring, poll);
            slot.polling = true;
        }
        let pending = slot.first == First::Pending;
        let t = deadline(slot, self.site);
        let pushes = t.is_some_and(|t| slot.armed.is_none_or(|a| t < a));
        if queued && (pending || pushes) {
            // Put off: a connection that is answered and closed within a
            // few turns then costs the timer heap nothing. One that may have
            // come without bytes waits no longer than its deadline as if it
            // had.
            let by = t.map(|t| {
                if pending {
                    t.checked_sub(DEFER).unwrap_or(t)
                } else {
                    t
                }
            });
            self.later_by = [self.later_by, by].into_iter().flatten().min();
            if slot.later != Some(self.enters) {
                slot.later = Some(self.enters);
                self.later.push((index, gen_));
            }
        } else if let Some(t) = t {
            self.timers.arm(&mut slot.armed, t, index, gen_);
        }
    }

    fn free(&mut self, index: usize) {
        let Some(slot) = self.slots.remove(index) else {
            return;
        };
        // Its buffers go to the next connection, closed or not (a
        // `Connection: close` connection is never idle to give them back,
        // and new ones cost an allocation, its page faults and a memset of
        // the read buffer).
        if let Some(b) = slot.conn.into_buffers() {
            self.pool.keep(b);
        }
        // The close goes with the turn's other requests (no `close` call of
        // its own); its number stays taken until the kernel closes it.
        let fd = slot.sock.into_raw_fd();
        self.push(opcode::Close::new(types::Fd(fd)).build().user_data(CANCEL));
    }

    fn fire_timers(&mut self) {
        let now = self.now;
        if self.policy.resumes(now) {
            for i in 0..self.listeners.len() {
                self.arm_accept(i);
            }
        }
        while let Some(due) = self.timers.due(now, self.slots.gens()) {
            let index = due.index;
            let site = self.site;
            let Some(slot) = &mut self.slots[index] else {
                continue;
            };
            if !due.fires(&mut slot.armed) {
                continue;
            }
            if slot.owes_bytes() && now >= slot.progress + site.config.write_timeout {
                // No send made progress for the write timeout: the client
                // stopped reading. What is owed is given up.
                slot.out.clear();
                if slot.closing.is_none() {
                    slot.interest = slot.conn.on(Event::WriteFailed, site, &mut self.w);
                    if let Interest::Close { .. } = slot.interest {
                        slot.interest = Interest::Close { linger: false };
                    }
                }
                slot.closing = Some(Closing::Flushing { linger: false });
                self.cut(index);
            } else if slot.closing.is_none() {
                slot.interest = slot.conn.on(Event::Deadline, site, &mut self.w);
                self.drive(index);
            } else {
                self.close_step(index);
            }
            self.settle(index);
        }
    }

    /// Ends a connection whose send cannot finish: counted closed now, its
    /// requests in flight cancelled.
    fn cut(&mut self, index: usize) {
        let gen_ = self.slots.gens()[index];
        let Some(slot) = &mut self.slots[index] else {
            return;
        };
        if !matches!(slot.closing, Some(Closing::Dead)) {
            policy::closed(self.site, &mut self.w, &slot.conn, slot.wire.resumed());
            slot.closing = Some(Closing::Dead);
        }
        slot.out.clear();
        // A send stuck on a full socket ends when the socket does.
        let _ = rustix::net::shutdown(&slot.sock, rustix::net::Shutdown::Both);
        if slot.sending {
            let e = opcode::AsyncCancel::new(token(SEND, index, gen_))
                .build()
                .user_data(CANCEL);
            self.push(e);
        }
    }

    fn begin_shutdown(&mut self) {
        if !self.grace.begin(self.site.config.grace) {
            return;
        }
        self.policy.stop();
        for i in 0..self.listeners.len() {
            if self.accepting[i] {
                let e = opcode::AsyncCancel::new(token(ACCEPT, i, 0))
                    .build()
                    .user_data(CANCEL);
                self.push(e);
            }
        }
        for i in 0..self.slots.len() {
            if self.slots[i].as_ref().is_some_and(|s| s.closing.is_none()) {
                self.drive(i);
                self.settle(i);
            }
        }
    }

    /// The grace period is over (or the loop stops): everything is given up.
    fn close_all(&mut self) {
        for i in 0..self.slots.len() {
            let Some(slot) = &mut self.slots[i] else {
                continue;
            };
            if slot.closing.is_none() {
                slot.conn.on(Event::Forced, self.site, &mut self.w);
            }
            self.cut(i);
            self.settle(i);
        }
    }
}

/// [`Ring::push`] on the ring alone, for a caller that holds a slot.
#[allow(unsafe_code)] // the request's memory is the caller's promise
fn push_on(ring: &mut IoUring, e: squeue::Entry) {
    loop {
        // SAFETY: every request pushed names memory that outlives it:
        // a slot's `flight` (kept, untouched, until the send's
        // completion) or nothing at all (receives use the buffer ring,
        // accepts and polls no memory, cancels a token).
        if unsafe { ring.submission().push(&e) }.is_ok() {
            return;
        }
        let _ = ring.submit();
    }
}

/// Does the connection wait for its client's next bytes and nothing else
/// (its receive armed and not ended, nothing unread, no close begun, no
/// room waited for)?
/// Then a send completion that leaves nothing owed changes nothing for it
/// (the usual keep-alive response): `Conn` is not waiting on that send,
/// there is no request to submit, and the timer stands, as the entry armed
/// is no later than the deadline, which only moves later once no bytes are
/// owed (shutdown, which brings it forward, is the caller's to rule out).
fn quiet(slot: &Slot) -> bool {
    slot.interest == Interest::Read
        && slot.closing.is_none()
        && slot.receiving
        && slot.ended.is_none()
        && !slot.wants_room
        && slot.in_pos == slot.inbox.len()
}

/// A connection's deadline: its lingering close's end, or what `Conn` waits
/// for and, while bytes wait to go, the write timeout from the last send
/// that made progress.
fn deadline(slot: &Slot, site: &Shared) -> Option<Instant> {
    match slot.closing {
        Some(Closing::Lingering(l)) => Some(l.until()),
        _ => {
            let conn = slot.conn.deadline(site);
            let write = slot
                .owes_bytes()
                .then(|| slot.progress + site.config.write_timeout);
            [conn, write].into_iter().flatten().min()
        }
    }
}

/// How the ring carries out each [`Interest`] ([`carry`]): `Conn` reads
/// what the kernel delivered to the inbox and writes into the outbox; the
/// loop stops when the inbox is empty or the outbox full, and
/// [`Ring::settle`] submits the send and the receive. A hold waits for the
/// timer or for the receive to see the client's close.
struct Completions<'a, 'b> {
    slot: &'a mut Slot,
    /// Received bytes not yet read, still in the ring's buffer; only when
    /// the inbox holds none (they come after the inbox's).
    fresh: &'b [u8],
    pool: &'a mut Spares,
    scratch: &'a mut Vec<u8>,
    site: &'a Shared,
    w: &'a mut Local,
    /// The turn's clock (see [`Ring::now`]).
    now: Instant,
}

impl Carry for Completions<'_, '_> {
    #[inline(always)]
    fn read(&mut self) -> Option<Interest> {
        let (slot, site) = (&mut *self.slot, self.site);
        let queued = slot.in_pos < slot.inbox.len();
        if queued || !self.fresh.is_empty() {
            self.pool.lend_to(&mut slot.conn);
            let mut input = if queued {
                &slot.inbox[slot.in_pos..]
            } else {
                self.fresh
            };
            let before = input.len();
            let space = slot.conn.read_space();
            let got = slot.wire.unseal(&mut input, space, &mut slot.out, site);
            let used = before - input.len();
            if queued {
                slot.in_pos += used;
            } else {
                self.fresh = &self.fresh[used..];
            }
            return match got {
                Ok(Unsealed::Plain(n)) => {
                    Some(step::tell_read(&mut slot.conn, &slot.wire, n, site, self.w))
                }
                // A TLS record not whole yet: more bytes are needed, unless
                // some were taken (then look again).
                Ok(Unsealed::More) => (used > 0).then_some(Interest::Read),
                Ok(Unsealed::End) => Some(slot.conn.on(Event::Read(0), site, self.w)),
                Err(_) => Some(slot.conn.on(Event::ReadFailed, site, self.w)),
            };
        }
        match slot.ended {
            Some(Ended::Eof) => Some(slot.conn.on(Event::Read(0), site, self.w)),
            Some(Ended::Failed) => Some(slot.conn.on(Event::ReadFailed, site, self.w)),
            None => {
                self.pool.reclaim(&mut slot.conn);
                None
            }
        }
    }

    #[inline(always)]
    fn write(&mut self) -> Option<Interest> {
        let slot = &mut *self.slot;
        if slot.out.len() >= OUT_MOST {
            return None;
        }
        let n = seal_next(slot, self.scratch, self.now)?;
        Some(match n {
            Ok(n) => slot.conn.on(Event::Wrote(n), self.site, self.w),
            Err(_) => slot.conn.on(Event::WriteFailed, self.site, self.w),
        })
    }

    #[inline(always)]
    fn work(&mut self) -> Option<Interest> {
        let slot = &mut *self.slot;
        Some(policy::work(&slot.sock, &mut slot.conn, self.site, self.w))
    }

    /// The `close_notify` (TLS) joins what is owed; [`Ring::close_step`]
    /// takes it from there.
    #[inline(always)]
    fn close(&mut self, linger: bool) {
        let slot = &mut *self.slot;
        slot.wire.finish(&mut slot.out, self.site);
        slot.closing = Some(Closing::Flushing { linger });
    }
}

/// Seals the next chunk `Conn` offers into the slot's outbox, or sends a
/// plaintext file range itself ([`send_file`]); the plaintext bytes taken
/// (0: nothing to write, or a file that ended early), or `None` to wait (for
/// room, or for the send in flight).
fn seal_next(
    slot: &mut Slot,
    scratch: &mut Vec<u8>,
    now: Instant,
) -> Option<rustix::io::Result<usize>> {
    let plain = matches!(slot.wire, Wire::Plain);
    if slot.out.is_empty() && !slot.sending {
        slot.progress = now;
    }
    Some(match slot.conn.next_write() {
        None => Ok(0),
        Some(Chunk::Bytes(bytes)) => slot.wire.seal(bytes, &mut slot.out),
        Some(Chunk::File { file, offset, len }) if plain => {
            let sent = send_file(
                &slot.sock,
                file,
                offset,
                len,
                &mut slot.flight,
                &mut slot.flight_pos,
                &mut slot.out,
                slot.sending,
            );
            match sent {
                Some(Ok(n)) if n > 0 => slot.progress = Instant::now(),
                Some(Err(_)) => {
                    slot.out.clear();
                    slot.flight.clear();
                    slot.flight_pos = 0;
                }
                None if !slot.sending => slot.wants_room = true,
                _ => {}
            }
            return sent;
        }
        Some(Chunk::File { file, offset, len }) => {
            // TLS: read, then sealed (encrypted) into the outbox.
            let want = len.min(FILE_CHUNK);
            scratch.resize(want, 0);
            let mut got = 0;
            while got < want {
                match rustix::io::pread(file, &mut scratch[got..], offset + got as u64) {
                    Ok(0) => break,
                    Ok(k) => got += k,
                    Err(Errno::INTR) => {}
                    Err(e) => return Some(Err(e)),
                }
            }
            let mut taken = 0;
            while taken < got {
                match slot.wire.seal(&scratch[taken..got], &mut slot.out) {
                    Ok(0) => return Some(Err(Errno::NOBUFS)),
                    Ok(n) => taken += n,
                    Err(e) => return Some(Err(e)),
                }
            }
            Ok(got)
        }
    })
}

/// Sends a plaintext file range the way the epoll loops do, with
/// `sendfile` on the (non-blocking) socket: the ring has no request that
/// sends from the page cache without a copy (see "Send" above). What the
/// ring owes before it (the response head, and responses before it) goes
/// first, in `send`s of its own with `MSG_MORE`. `None` to wait: for the
/// send in flight (`sending`), or for room (the socket is full).
#[allow(clippy::too_many_arguments)]
fn send_file(
    sock: &OwnedFd,
    file: &std::fs::File,
    offset: u64,
    len: usize,
    flight: &mut Vec<u8>,
    flight_pos: &mut usize,
    out: &mut Vec<u8>,
    sending: bool,
) -> Option<rustix::io::Result<usize>> {
    if sending {
        return None;
    }
    loop {
        if *flight_pos >= flight.len() {
            flight.clear();
            *flight_pos = 0;
            if out.is_empty() {
                break;
            }
            std::mem::swap(flight, out);
        }
        let flags = SendFlags::NOSIGNAL | SendFlags::DONTWAIT | SendFlags::MORE;
        match rustix::net::send(sock, &flight[*flight_pos..], flags) {
            Ok(n) => *flight_pos += n,
            Err(Errno::AGAIN) => return None,
            Err(Errno::INTR) => {}
            Err(e) => return Some(Err(e)),
        }
    }
    let mut at = offset;
    loop {
        return match rustix::fs::sendfile(sock, file, Some(&mut at), len) {
            Err(Errno::AGAIN) => None,
            Err(Errno::INTR) => continue,
            r => Some(r),
        };
    }
}
