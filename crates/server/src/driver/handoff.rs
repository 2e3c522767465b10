//! Handing a connection with a complete request from an event loop to a worker
//! thread and back: the half-sync half of the `event` engine.
//!
//! The event loop (the half-async half, [`super::evloop`]) owns every
//! connection while it is idle or while its head arrives. When the connection
//! has a complete request ([`Interest::Work`]), the loop puts the whole
//! connection (socket and [`crate::conn::Conn`]) on a bounded queue; a worker
//! takes it, runs the handler ([`crate::conn::Conn::work`], with `--work` and
//! `--delay`), writes the response, file included, and puts the connection on
//! the way back, then wakes the loop through an eventfd. The loop takes it back
//! and watches it for the next request. A worker therefore holds a connection
//! for one request, never for its keep-alive life or while a slow client sends
//! its head.
//!
//! The socket stays non-blocking and stays in the loop's epoll set while it is
//! away; the loop notes its read edges meanwhile (in its own thread, nothing
//! shared), so that on its return it is read only if bytes may be waiting: a
//! keep-alive request costs no `recv` that finds nothing. A worker that meets a
//! full socket buffer waits with `poll` for at most `--write-timeout`, in
//! slices short enough to notice that the grace period is over.
//!
//! The way back wakes the loop with one eventfd write per batch of returns, not
//! per return (see [`WorkerEnd::run`]), and the loop never reads the eventfd
//! (edge triggered), so under load a request costs the two hand-offs and
//! little more.
//!
//! Pace: while every worker has a request and more wait in the queue, the
//! loop waits for the queue to empty, not for its sockets
//! ([`LoopEnd::all_busy`]): reading the next requests sooner would only make
//! the queue longer, and on the one CPU the loop shares with a worker each
//! wake-up for one client's next request costs an `epoll_wait` and two
//! context switches. The worker that takes the last queued request wakes the
//! loop (the eventfd again), which then takes every edge that came meanwhile
//! with one `epoll_wait` and fills the queue in one go while that worker
//! serves. Without a queue (a single client, light load) nothing of this runs,
//! so a lone request costs no extra wake-up. The wait is capped at
//! [`super::evloop`]'s `BUSY_CAP`, so that new connections, heads of slow
//! clients, timers and the 503 of a full queue are never later than that;
//! idle and slow clients still take no worker.
//!
//! While the connection is away its events do not drive it, so the worker watches for the client leaving itself: a `--delay` hold waits in
//! `poll(POLLRDHUP)` ([`policy::hold`], as on the blocking driver), and
//! `--work` is burnt by [`policy::work`], as on every driver.

use std::os::fd::{AsFd, OwnedFd};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Instant;

use crossbeam_channel::{Receiver, Sender};
use rustix::event::{PollFd, PollFlags};
use rustix::io::Errno;

use super::connection::Connection;
use super::dispatch::{Carry, carry};
use super::policy;
use super::step::{self, Moved};
use crate::conn::{Event, Interest};
use crate::runtime::shared::{Local, Shared};

/// A connection on its way to a worker or back, with its place in the loop.
#[derive(Debug)]
pub(crate) struct Job {
    pub(super) index: u32,
    pub(super) conn: Connection,
}

/// The event loop's end: the queue it fills and the way back it drains.
#[derive(Debug)]
pub(crate) struct LoopEnd {
    pub(super) queue: Sender<Job>,
    pub(super) back: Receiver<Job>,
    /// Raises an edge when a connection has come back (an eventfd, watched
    /// edge-triggered and never read: every write is an edge).
    pub(super) wake: Arc<OwnedFd>,
    /// Connections sent back since the loop last looked (see [`WorkerEnd::run`]).
    returned: Arc<AtomicUsize>,
    pace: Arc<Pace>,
}

/// How busy the workers are, shared by the loop and the workers (see "Pace"
/// above).
#[derive(Debug)]
struct Pace {
    /// Worker threads.
    workers: usize,
    /// Requests sent to the workers and not yet served: queued, or with a
    /// worker.
    in_flight: AtomicUsize,
    /// The loop waits for a free worker rather than for its sockets; the
    /// first worker that becomes free clears it and wakes the loop.
    waiting: AtomicBool,
}

/// The workers' end.
#[derive(Debug, Clone)]
pub(crate) struct WorkerEnd {
    queue: Receiver<Job>,
    back: Sender<Job>,
    wake: Arc<OwnedFd>,
    returned: Arc<AtomicUsize>,
    pace: Arc<Pace>,
}

/// A queue of `len` requests for `workers` threads, and the way back.
pub(crate) fn channel(len: usize, workers: usize) -> std::io::Result<(LoopEnd, WorkerEnd)> {
    let (queue_tx, queue_rx) = crossbeam_channel::bounded(len);
    // Unbounded, but never longer than the connections the loop has sent away.
    let (back_tx, back_rx) = crossbeam_channel::unbounded();
    let wake = Arc::new(rustix::event::eventfd(
        0,
        rustix::event::EventfdFlags::CLOEXEC | rustix::event::EventfdFlags::NONBLOCK,
    )?);
    let returned = Arc::new(AtomicUsize::new(0));
    let pace = Arc::new(Pace {
        workers,
        in_flight: AtomicUsize::new(0),
        waiting: AtomicBool::new(false),
    });
    Ok((
        LoopEnd {
            queue: queue_tx,
            back: back_rx,
            wake: wake.clone(),
            returned: returned.clone(),
            pace: pace.clone(),
        },
        WorkerEnd {
            queue: queue_rx,
            back: back_tx,
            wake,
            returned,
            pace,
        },
    ))
}

impl LoopEnd {
    /// Takes note that the loop is about to drain the way back, before it
    /// does: a worker that returns a connection after this wakes the loop
    /// again.
    pub(super) fn clear_wake(&self) {
        self.returned.swap(0, Ordering::AcqRel);
    }

    /// Sends `job` to the workers; gives it back (`Some`) if the queue is
    /// full or the workers have gone.
    pub(super) fn send(&self, job: Job) -> Option<Job> {
        self.pace.in_flight.fetch_add(1, Ordering::SeqCst);
        let refused = self.queue.try_send(job).err()?;
        self.pace.in_flight.fetch_sub(1, Ordering::SeqCst);
        Some(refused.into_inner())
    }

    /// True when every worker has a request and more are queued: the loop
    /// may then wait for the eventfd alone, since the worker that leaves the
    /// queue empty writes it. Call [`LoopEnd::done_waiting`] after that wait.
    pub(super) fn all_busy(&self) -> bool {
        // Said before the count is read, and the worker lowers the count
        // before it reads this (both SeqCst): either the loop sees the queue
        // empty, or the worker that emptied it sees the loop waiting and
        // wakes it.
        self.pace.waiting.store(true, Ordering::SeqCst);
        let busy = self.pace.in_flight.load(Ordering::SeqCst) > self.pace.workers;
        if !busy {
            self.pace.waiting.store(false, Ordering::SeqCst);
        }
        busy
    }

    /// The wait that [`LoopEnd::all_busy`] allowed is over.
    pub(super) fn done_waiting(&self) {
        self.pace.waiting.store(false, Ordering::SeqCst);
    }
}

impl WorkerEnd {
    /// Serves connections from the queue until the loop has gone.
    pub(crate) fn run(&self, site: &Shared, w: &mut Local) {
        for mut job in &self.queue {
            serve(&mut job.conn, site, w);
            // A keep-alive connection goes back quietly: the client's next
            // request wakes the loop (see `Handover`). Anything else (a close,
            // shutdown) needs the loop now.
            // Only one the loop watches (registered, with a timer entry) and
            // whose next bytes will raise an edge (the socket was drained, the
            // client has not closed) can.
            let c = &job.conn;
            let quiet = c.interest == Interest::Read
                && c.registered
                && c.armed.is_some()
                && !c.readable
                && !c.fin
                && !site.shutdown.is_requested();
            let handover = job.conn.handover.clone();
            if self.back.send(job).is_err() {
                return; // the loop has gone; the socket closes with the job
            }
            let missed = handover.is_some_and(|h| h.returned());
            // Only the first return since the loop last looked wakes it: the
            // ones after it are drained by the same look, since the loop
            // clears `returned` before it drains. So under load one eventfd
            // write (and one wake-up) serves several returns. The counter of
            // the eventfd only grows (it is never read: each write is an
            // edge); 2^64 writes are centuries away.
            let mut wake = (!quiet || missed) && self.returned.fetch_add(1, Ordering::AcqRel) == 0;
            // The queue is (about to be) empty: wake a loop that waits for
            // that (see "Pace"); `left` counts the requests the workers hold
            // and the queued ones.
            let left = self.pace.in_flight.fetch_sub(1, Ordering::SeqCst) - 1;
            if left <= self.pace.workers && self.pace.waiting.swap(false, Ordering::SeqCst) {
                wake = true;
            }
            if wake {
                let _ = rustix::io::write(&*self.wake, &1u64.to_ne_bytes());
            }
        }
    }
}

/// Runs the request the connection holds, and every pipelined one after it,
/// until the connection wants to read (or close): then it goes back.
fn serve(c: &mut Connection, site: &Shared, w: &mut Local) {
    let mut interest = c.interest;
    if site.shutdown.is_forced() {
        interest = c.conn.on(Event::Forced, site, w);
    }
    let mut worker = Worker {
        c: &mut *c,
        site,
        w,
    };
    let stopped = carry(&mut worker, interest);
    c.interest = stopped;
}

/// How a worker carries out each [`Interest`] ([`carry`]): the CPU, the
/// hold and the writes on its own thread; reading and closing are the
/// loop's, so the connection goes back for them.
struct Worker<'a> {
    c: &'a mut Connection,
    site: &'a Shared,
    w: &'a mut Local,
}

impl Carry for Worker<'_> {
    fn read(&mut self) -> Option<Interest> {
        None
    }

    fn write(&mut self) -> Option<Interest> {
        let (c, site) = (&mut *self.c, self.site);
        let moved = step::write(&c.sock, &mut c.conn, &mut c.wire, site, self.w);
        Some(match moved {
            Moved::Told { next, .. } => next,
            Moved::Retry => Interest::Write,
            Moved::Again if writable(&c.sock, site) => Interest::Write,
            // No room within the write timeout, or the grace period is over.
            Moved::Again => c.conn.on(Event::WriteFailed, site, self.w),
        })
    }

    fn work(&mut self) -> Option<Interest> {
        let c = &mut *self.c;
        Some(policy::work(&c.sock, &mut c.conn, self.site, self.w))
    }

    fn hold(&mut self) -> Option<Interest> {
        let c = &mut *self.c;
        let event = policy::hold(&c.sock, c.conn.held_until(), &c.conn, self.site);
        Some(c.conn.on(event, self.site, self.w))
    }

    /// The loop carries out the close.
    fn close(&mut self, _linger: bool) {}
}

/// Waits until the socket takes more bytes; false after `--write-timeout`
/// without room, or when shutdown was forced.
fn writable(sock: impl AsFd, site: &Shared) -> bool {
    let until = Instant::now() + site.config.write_timeout;
    loop {
        if site.shutdown.is_forced() {
            return false;
        }
        let left = until.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return false;
        }
        let mut fds = [PollFd::new(&sock, PollFlags::OUT)];
        match rustix::event::poll(
            &mut fds,
            Some(&policy::timespec(left.min(policy::FORCE_CHECK))),
        ) {
            Ok(0) | Err(Errno::INTR) => {}
            Ok(_) => return true,
            Err(_) => return false,
        }
    }
}
