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
//!   or re-armed after a back-off when descriptors run out. A multishot
//!   accept gives no peer address: one `getpeername` per connection asks for
//!   it (the access log and `--log-connections` print it).
//! - *Receive*: one multishot receive per connection, its bytes landing in a
//!   buffer the kernel picks from a provided-buffer ring ([`BufRing`]), so an
//!   idle connection holds no buffer of its own. The bytes are copied to the
//!   connection's inbox and the buffer goes straight back to the ring. A
//!   client that sends faster than its requests are answered (a pipelining
//!   flood) has its receive cancelled once its inbox holds [`INBOX_MOST`],
//!   and re-armed when the inbox is read.
//! - *Send*: what [`Conn::next_write`] offers is sealed by the [`Wire`]
//!   (copied, or encrypted for TLS) into the connection's outbox, and told to
//!   `Conn` as written; the outbox goes out with one send per turn. A file
//!   range is read into the outbox (`pread`: the ring has no `sendfile`),
//!   [`FILE_CHUNK`] at a time, and no more is sealed while [`OUT_MOST`]
//!   waits, so a slow reader holds that much memory, no more. The bytes in
//!   flight sit in a second buffer that nothing touches until the kernel
//!   reports the send (the kernel reads them while the socket has no room).
//! - *Deadlines*: [`Conn::deadline`] as in every driver (see "Deadlines" in
//!   [`super::policy`]), and while bytes wait to go, the write timeout from
//!   the last send that made progress. This listener does not defer accepts
//!   (`TCP_DEFER_ACCEPT`): a connection is dated from its accept, which is
//!   its connect, so no dating back is needed.
//! - *Close*: the outbox is sent (with a TLS `close_notify`), then for a
//!   lingering close the write side is shut and the receive goes on,
//!   dropping what comes, within [`policy::LINGER`]. A connection's slot and
//!   buffers are freed only once the kernel has reported every request that
//!   named them (its receive is cancelled), never while one may still write
//!   into them.
//! - *Shutdown*: a poll on the shutdown pipe; then the accepts are cancelled,
//!   idle connections closed, busy ones finished within the grace period.

use std::net::{Ipv4Addr, SocketAddr, TcpListener};
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, FromRawFd, IntoRawFd, OwnedFd};
use std::time::{Duration, Instant};

use io_uring::{IoUring, cqueue, opcode, squeue, types};
use rustix::io::Errno;

use super::accept::{Accepting, Step};
use super::bufring::{BufRing, GROUP};
use super::dispatch::{Carry, carry};
use super::grace::{Grace, Turn};
use super::places::Places;
use super::policy::{self, Linger};
use super::spares::Spares;
use super::timers::Timers;
use super::wire::{Unsealed, Wire};
use crate::conn::{Chunk, Conn, Event, Interest};
use crate::error::ServerError;
use crate::shared::{Local, Shared};

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
/// Bytes of a file read per `pread` into the outbox.
const FILE_CHUNK: usize = 128 * 1024;
/// Spare buffer pairs kept for connections that become busy again.
const POOL: usize = 256;

/// What a completion is about: the low byte of its `user_data`.
const RECV: u64 = 1;
const SEND: u64 = 2;
const CANCEL: u64 = 3;
const ACCEPT: u64 = 4;
const WAKE: u64 = 5;

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
    /// A multishot receive is armed (its last completion not yet seen).
    receiving: bool,
    /// A cancel of the receive was submitted.
    cancelled: bool,
    /// Sealed bytes waiting for the next send.
    out: Vec<u8>,
    /// The bytes of the send in flight, from `flight_pos`: untouched until
    /// its completion.
    flight: Vec<u8>,
    flight_pos: usize,
    sending: bool,
    /// The last send that made progress (or when the bytes began to wait).
    progress: Instant,
    closing: Option<Closing>,
    /// The earliest timer entry in the heap for this slot.
    armed: Option<Instant>,
}

impl Slot {
    fn inflight(&self) -> bool {
        self.receiving || self.sending
    }

    fn owes_bytes(&self) -> bool {
        self.sending || !self.out.is_empty()
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
    accept_paused: Option<Instant>,
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
            accept_paused: None,
            policy: Accepting::default(),
            slots: Places::default(),
            timers: Timers::default(),
            pool: Spares::new(POOL),
            grace: Grace::default(),
            done: Vec::with_capacity(CQ as usize),
            scratch: Vec::new(),
        };
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
    #[allow(unsafe_code)] // the request's memory is the caller's promise
    fn push(&mut self, e: squeue::Entry) {
        loop {
            // SAFETY: every request pushed names memory that outlives it:
            // a slot's `flight` (kept, untouched, until the send's
            // completion) or nothing at all (receives use the buffer ring,
            // accepts and polls no memory, cancels a token).
            if unsafe { self.ring.submission().push(&e) }.is_ok() {
                return;
            }
            let _ = self.ring.submit();
        }
    }

    fn arm_accept(&mut self, i: usize) {
        if self.accepting[i] || self.grace.begun() || self.accept_paused.is_some() {
            return;
        }
        let fd = self.listeners[i].as_raw_fd();
        let e = opcode::AcceptMulti::new(types::Fd(fd))
            .flags(libc::SOCK_CLOEXEC)
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
        self.fire_timers();
        Ok(())
    }

    fn next_deadline(&self) -> Option<Instant> {
        let timer = self.timers.next();
        [timer, self.accept_paused, self.grace.next()]
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
                let gave = if op == RECV {
                    self.received(index, res, flags)
                } else {
                    self.sent(index, res);
                    false
                };
                self.settle(index);
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
            let peer = rustix::net::getpeername(&sock)
                .ok()
                .flatten()
                .and_then(|a| SocketAddr::try_from(a).ok())
                .unwrap_or_else(|| SocketAddr::from((Ipv4Addr::UNSPECIFIED, 0)));
            self.add(sock, peer);
        } else {
            match self.policy.failed(Errno::from_raw_os_error(-res)) {
                Step::Retry | Step::Wait => {}
                Step::Pause(d) => {
                    self.accept_paused = Some(Instant::now() + d);
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
            cancelled: false,
            out: Vec::new(),
            flight: Vec::new(),
            flight_pos: 0,
            sending: false,
            progress: Instant::now(),
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
        let mut gave = false;
        if res > 0 {
            if let Some(bid) = cqueue::buffer_select(flags) {
                let bytes = self.bufs.bytes(bid, res as usize);
                match slot.closing {
                    Some(Closing::Lingering(ref mut l)) => l.drained(bytes.len()),
                    Some(Closing::Dead) => {}
                    _ => {
                        if slot.in_pos == slot.inbox.len() {
                            slot.inbox.clear();
                            slot.in_pos = 0;
                        }
                        slot.inbox.extend_from_slice(bytes);
                    }
                }
                self.bufs.give(bid);
                gave = true;
            }
        } else if res == 0 {
            slot.ended.get_or_insert(Ended::Eof);
        } else if res == -libc::ENOBUFS || res == -libc::ECANCELED {
            // Out of buffers this turn (re-armed in `settle`), or cancelled.
        } else {
            slot.ended.get_or_insert(Ended::Failed);
        }
        if slot.ended.is_some()
            && matches!(slot.interest, Interest::Hold)
            && slot.closing.is_none()
            && slot.conn.watches_peer()
        {
            // The client's close while a response is held: judged now, with
            // what came before it still unread (a half-close).
            let unread = slot.in_pos < slot.inbox.len();
            slot.interest = slot
                .conn
                .on(Event::PeerGone { unread }, self.site, &mut self.w);
        }
        self.drive(index);
        gave
    }

    /// A send completion.
    fn sent(&mut self, index: usize, res: i32) {
        let Some(slot) = &mut self.slots[index] else {
            return;
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
            slot.progress = Instant::now();
            slot.flight_pos += res as usize;
            if slot.flight_pos >= slot.flight.len() {
                slot.flight.clear();
                slot.flight_pos = 0;
            }
        }
        self.drive(index);
    }

    /// Moves a connection as far as it goes without waiting ([`carry`],
    /// with what the kernel delivered and room for what is to be sent:
    /// [`Completions`]).
    fn drive(&mut self, index: usize) {
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
            pool: &mut self.pool,
            scratch: &mut self.scratch,
            site: self.site,
            w: &mut self.w,
        };
        let interest = carry(&mut done, start);
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
        policy::closed(self.site, &mut self.w, &slot.conn, &slot.wire);
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
        let mut sqes: [Option<squeue::Entry>; 2] = [None, None];
        if !slot.sending && slot.flight.is_empty() && !slot.out.is_empty() {
            std::mem::swap(&mut slot.flight, &mut slot.out);
            slot.flight_pos = 0;
        }
        if !slot.sending && slot.flight_pos < slot.flight.len() {
            let rest = &slot.flight[slot.flight_pos..];
            sqes[0] = Some(
                opcode::Send::new(
                    types::Fd(slot.sock.as_raw_fd()),
                    rest.as_ptr(),
                    rest.len() as u32,
                )
                .flags(libc::MSG_NOSIGNAL)
                .build()
                .user_data(token(SEND, index, gen_)),
            );
            slot.sending = true;
        }
        let backlog = slot.inbox.len() - slot.in_pos;
        if !slot.receiving && slot.ended.is_none() && backlog < INBOX_MOST {
            slot.cancelled = false;
            sqes[1] = Some(
                opcode::RecvMulti::new(types::Fd(slot.sock.as_raw_fd()), GROUP)
                    .build()
                    .user_data(token(RECV, index, gen_)),
            );
            slot.receiving = true;
        } else if slot.receiving && !slot.cancelled && backlog >= INBOX_MOST {
            slot.cancelled = true;
            sqes[1] = Some(
                opcode::AsyncCancel::new(token(RECV, index, gen_))
                    .build()
                    .user_data(CANCEL),
            );
        }
        let deadline = match slot.closing {
            Some(Closing::Lingering(l)) => Some(l.until()),
            _ => {
                let conn = slot.conn.deadline(self.site);
                let write = slot
                    .owes_bytes()
                    .then(|| slot.progress + self.site.config.write_timeout);
                [conn, write].into_iter().flatten().min()
            }
        };
        if let Some(t) = deadline {
            self.timers.arm(&mut slot.armed, t, index, gen_);
        }
        for e in sqes.into_iter().flatten() {
            self.push(e);
        }
    }

    fn free(&mut self, index: usize) {
        let Some(mut slot) = self.slots.remove(index) else {
            return;
        };
        if let Some(b) = slot.conn.detach() {
            self.pool.keep(b);
        }
        // The close goes with the turn's other requests (no `close` call of
        // its own); its number stays taken until the kernel closes it.
        let fd = slot.sock.into_raw_fd();
        self.push(opcode::Close::new(types::Fd(fd)).build().user_data(CANCEL));
    }

    fn fire_timers(&mut self) {
        let now = Instant::now();
        if let Some(t) = self.accept_paused
            && now >= t
        {
            self.accept_paused = None;
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
            policy::closed(self.site, &mut self.w, &slot.conn, &slot.wire);
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
        self.accept_paused = None;
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

/// How the ring carries out each [`Interest`] ([`carry`]): `Conn` reads
/// what the kernel delivered to the inbox and writes into the outbox; the
/// loop stops when the inbox is empty or the outbox full, and
/// [`Ring::settle`] submits the send and the receive. A hold waits for the
/// timer or for the receive to see the client's close.
struct Completions<'a> {
    slot: &'a mut Slot,
    pool: &'a mut Spares,
    scratch: &'a mut Vec<u8>,
    site: &'a Shared,
    w: &'a mut Local,
}

impl Carry for Completions<'_> {
    #[inline(always)]
    fn read(&mut self) -> Option<Interest> {
        let (slot, site) = (&mut *self.slot, self.site);
        if slot.in_pos < slot.inbox.len() {
            self.pool.lend_to(&mut slot.conn);
            let mut input = &slot.inbox[slot.in_pos..];
            let before = input.len();
            let space = slot.conn.read_space();
            let got = slot.wire.unseal(&mut input, space, &mut slot.out, site);
            let used = before - input.len();
            slot.in_pos += used;
            return match got {
                Ok(Unsealed::Plain(n)) => {
                    if slot.ended.is_some() {
                        slot.conn.closed_with_requests();
                    }
                    if n > 0 && slot.conn.alpn_unknown() {
                        slot.conn.set_alpn(slot.wire.alpn_h2());
                    }
                    Some(slot.conn.on(Event::Read(n), site, self.w))
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
        let n = seal_next(slot, self.scratch);
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

/// Seals the next chunk `Conn` offers into the slot's outbox; the plaintext
/// bytes taken (0: nothing to write, or a file that ended early).
fn seal_next(slot: &mut Slot, scratch: &mut Vec<u8>) -> rustix::io::Result<usize> {
    let plain = matches!(slot.wire, Wire::Plain);
    if slot.out.is_empty() && !slot.sending {
        slot.progress = Instant::now();
    }
    match slot.conn.next_write() {
        None => Ok(0),
        Some(Chunk::Bytes(bytes)) => slot.wire.seal(bytes, &mut slot.out),
        Some(Chunk::File { file, offset, len }) => {
            let want = len.min(FILE_CHUNK);
            // Plaintext is read straight into the outbox; TLS through scratch.
            let buf = if plain { &mut slot.out } else { &mut *scratch };
            let at = if plain { buf.len() } else { 0 };
            buf.resize(at + want, 0);
            let mut got = 0;
            while got < want {
                match rustix::io::pread(file, &mut buf[at + got..], offset + got as u64) {
                    Ok(0) => break,
                    Ok(k) => got += k,
                    Err(Errno::INTR) => {}
                    Err(e) => {
                        buf.truncate(at);
                        return Err(e);
                    }
                }
            }
            buf.truncate(at + got);
            if plain || got == 0 {
                return Ok(got);
            }
            let mut taken = 0;
            while taken < got {
                match slot.wire.seal(&scratch[taken..got], &mut slot.out)? {
                    0 => return Err(Errno::NOBUFS),
                    n => taken += n,
                }
            }
            Ok(got)
        }
    }
}
