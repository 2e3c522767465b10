//! Driving a [`Conn`] with blocking syscalls, for every engine that dedicates a
//! thread or a process to a connection (serial, pool, thread, fork, prefork):
//! [`serve`] runs one connection to its end, [`accept_loop`] hands accepted
//! connections to an engine, [`refuse`] answers 503 to one it cannot take.
//!
//! Timeouts: `SO_RCVTIMEO` and `SO_SNDTIMEO` are set once on the listening
//! socket and Linux copies them into every accepted socket, so the common case
//! costs no `setsockopt` per connection or per request. They are shorter than
//! the deadlines they stand for ([`policy::socket_timeout`]): the kernel's
//! timer wheel ends such a wait up to an eighth late, so a wait that times
//! out is retried against the connection's real deadline ([`Conn::deadline`]),
//! and once that deadline is nearer than a socket timeout can safely reach,
//! the rest is waited in `poll`, which keeps it to the millisecond (see
//! "Deadlines" in [`policy`]).
//!
//! A `--delay` hold waits in `poll` for the client's close (`POLLRDHUP`)
//! instead of sleeping ([`policy::hold`], shared with `event`'s workers): the
//! same one syscall, and a client that leaves is seen at once.
//!
//! Every outcome goes to [`Conn::on`] as an [`Event`]; what follows it
//! (abandon, 408, idle close at shutdown, linger) is decided there.

use std::io::Write;
use std::net::{Shutdown as Side, SocketAddr, TcpListener, TcpStream};
use std::os::fd::BorrowedFd;
use std::time::{Duration, Instant};

use rustix::event::{PollFd, PollFlags};
use rustix::io::Errno;

use super::accept::{Accepting, Step};
use super::closing::{Close, Closing, Ready};
use super::dispatch::{Carry, carry};
use super::policy;
use super::step::{self, Moved};
use super::wire::Wire;
use crate::conn::{Conn, Event, Interest};
use crate::runtime::shared::{Local, Shared};
use crate::runtime::shutdown::Registration;

/// Serves one connection to the end on the calling thread.
pub(crate) fn serve(stream: TcpStream, peer: SocketAddr, site: &Shared, w: &mut Local) {
    let mut conn = Conn::new(peer);
    if !policy::opened(site, w, &conn) {
        return;
    }
    let reg = site.shutdown.registry.register(&stream);
    let mut wire = Wire::new(site);
    let mut thread = OnThread {
        stream: &stream,
        conn: &mut conn,
        wire: &mut wire,
        reg: &reg,
        timeouts: policy::SocketTimeouts::of(&site.config),
        site,
        w: &mut *w,
    };
    // Nothing here waits for anything but the socket: the loop returns at
    // the close, carried out to its end.
    carry(&mut thread, Interest::Read);
    drop(reg);
    policy::closed(site, w, &conn, wire.resumed());
}

/// How a thread that owns its connection carries out each [`Interest`]
/// ([`carry`]): it waits in the syscall, and never hands back `None`.
struct OnThread<'a, 'r> {
    stream: &'a TcpStream,
    conn: &'a mut Conn,
    wire: &'a mut Wire,
    reg: &'a Registration<'r>,
    timeouts: policy::SocketTimeouts,
    site: &'a Shared,
    w: &'a mut Local,
}

impl OnThread<'_, '_> {
    /// The socket was not ready by the connection's deadline: `Conn`
    /// judges it.
    fn deadline(&mut self) -> Option<Interest> {
        Some(self.conn.on(Event::Deadline, self.site, self.w))
    }
}

impl Carry for OnThread<'_, '_> {
    fn read(&mut self) -> Option<Interest> {
        let site = self.site;
        // Registered idle, shutdown wakes the read (`SHUT_RD`); once it has
        // begun, an idle connection's deadline is now.
        self.reg.set_idle(self.conn.is_idle(), &site.shutdown);
        let deadline = self.conn.deadline(site).unwrap_or_else(Instant::now);
        // SO_RCVTIMEO ends a long wait early with EAGAIN; the last part of a
        // wait is a `poll` that keeps the deadline (see "Deadlines" in
        // `policy`).
        if !policy::socket_wait_fits(self.timeouts.read, deadline)
            && !policy::ready_by(self.stream, PollFlags::IN, deadline)
        {
            return self.deadline();
        }
        match step::read(self.stream, self.conn, self.wire, site, self.w) {
            Moved::Told { next, .. } => {
                self.reg.set_idle(false, &site.shutdown);
                Some(next)
            }
            // SO_RCVTIMEO ran out: `Conn` judges the deadline.
            Moved::Again => self.deadline(),
            Moved::Retry => Some(Interest::Read),
        }
    }

    fn write(&mut self) -> Option<Interest> {
        let deadline = self.conn.deadline(self.site).unwrap_or_else(Instant::now);
        // As for reading: SO_SNDTIMEO ends a long wait for room early; near
        // the deadline, `poll` waits for it.
        if !policy::socket_wait_fits(self.timeouts.write, deadline)
            && !policy::ready_by(self.stream, PollFlags::OUT, deadline)
        {
            return self.deadline();
        }
        match step::write(self.stream, self.conn, self.wire, self.site, self.w) {
            Moved::Told { next, .. } => Some(next),
            // No room within SO_SNDTIMEO: `Conn` judges the write timeout.
            Moved::Again => self.deadline(),
            Moved::Retry => Some(Interest::Write),
        }
    }

    fn work(&mut self) -> Option<Interest> {
        Some(policy::work(self.stream, self.conn, self.site, self.w))
    }

    fn hold(&mut self) -> Option<Interest> {
        let event = policy::hold(self.stream, self.conn.held_until(), self.conn, self.site);
        Some(self.conn.on(event, self.site, self.w))
    }

    /// The close (see `closing.rs`), its waits in `poll`.
    fn close(&mut self, linger: bool) {
        let mut closing = Closing::new(linger);
        while let Close::Wait { ready, until } = closing.step(self.stream, self.wire, self.site) {
            let flags = match ready {
                Ready::Read => PollFlags::IN,
                Ready::Write => PollFlags::OUT,
            };
            policy::ready_by(self.stream, flags, until);
        }
    }
}

/// A read that does not wait: `Some(n)` if bytes (or EOF) were there.
fn read_now(stream: &TcpStream, buf: &mut [u8]) -> Option<usize> {
    rustix::net::recv(stream, buf, rustix::net::RecvFlags::DONTWAIT)
        .ok()
        .map(|(n, _)| n)
}

/// What the accept loop should do after a connection was handed over.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Next {
    Continue,
    Stop,
}

/// What an accept loop does besides accepting, for the engines that need more
/// than [`accept_loop`]: `fork` waits on its children's pipe too, sweeps them
/// periodically, and stops accepting at `--max-conns`.
pub(crate) trait Acceptor {
    /// Takes one accepted connection.
    fn handle(&mut self, stream: TcpStream, peer: SocketAddr) -> Next;
    /// Room for another connection now? While not, the listeners are left
    /// out of the wait: clients wait in the backlog.
    fn has_room(&self) -> bool {
        true
    }
    /// One more descriptor to wait on beside the listeners.
    fn extra(&self) -> Option<BorrowedFd<'_>> {
        None
    }
    /// The longest wait before [`Acceptor::tick`] runs anyway.
    fn period(&self) -> Option<Duration> {
        None
    }
    /// Runs after every wait; `extra_ready`: [`Acceptor::extra`] woke it.
    fn tick(&mut self, _extra_ready: bool) {}
}

/// An [`Acceptor`] that only hands connections on.
struct Plain<F>(F);

impl<F: FnMut(TcpStream, SocketAddr) -> Next> Acceptor for Plain<F> {
    fn handle(&mut self, stream: TcpStream, peer: SocketAddr) -> Next {
        (self.0)(stream, peer)
    }
}

/// Accepts until shutdown is asked for, handing each connection to `handle`.
pub(crate) fn accept_loop(
    listeners: &[TcpListener],
    site: &Shared,
    handle: impl FnMut(TcpStream, SocketAddr) -> Next,
) {
    accept_with(listeners, site, &mut Plain(handle));
}

/// The accept loop of every blocking engine, written once.
///
/// The listeners (every `--addr`) are non-blocking and polled together with
/// the shutdown pipe, so a signal wakes the loop at once. On `EMFILE`/`ENFILE`/`ENOBUFS`/`ENOMEM` the
/// loop backs off (10 ms, doubling to 500 ms) instead of spinning on a listener
/// that stays readable; it recovers by itself when descriptors are free again.
pub(crate) fn accept_with(listeners: &[TcpListener], site: &Shared, acceptor: &mut impl Acceptor) {
    let mut accepting = Accepting::default();
    loop {
        let room = acceptor.has_room();
        let want = if room {
            PollFlags::IN
        } else {
            PollFlags::empty()
        };
        // Made per poll (it borrows the acceptor); an accepted connection
        // costs far more.
        let mut fds: Vec<PollFd<'_>> = Vec::with_capacity(listeners.len() + 2);
        fds.extend(listeners.iter().map(|l| PollFd::new(l, want)));
        fds.push(PollFd::from_borrowed_fd(
            site.shutdown.wake_fd(),
            PollFlags::IN,
        ));
        if let Some(fd) = acceptor.extra() {
            fds.push(PollFd::from_borrowed_fd(fd, PollFlags::IN));
        }
        let timeout = acceptor.period().map(policy::timespec);
        match rustix::event::poll(&mut fds, timeout.as_ref()) {
            Ok(_) | Err(Errno::INTR) => {}
            Err(e) => {
                eprintln!("servelab: poll on the listener failed: {e}; stopping");
                site.shutdown.trigger();
                return;
            }
        }
        let n = listeners.len();
        let wake = !fds[n].revents().is_empty();
        let extra_ready = fds.get(n + 1).is_some_and(|f| !f.revents().is_empty());
        let ready: Vec<bool> = fds[..n].iter().map(|f| !f.revents().is_empty()).collect();
        drop(fds);
        if wake || site.shutdown.is_requested() {
            site.shutdown.trigger();
            return;
        }
        acceptor.tick(extra_ready);
        // Take every connection that is ready on each ready listener, then poll again.
        for (listener, _) in listeners.iter().zip(ready).filter(|(_, r)| *r) {
            while acceptor.has_room() {
                match listener.accept() {
                    Ok((stream, peer)) => {
                        accepting.took();
                        if acceptor.handle(stream, peer) == Next::Stop {
                            return;
                        }
                        if site.shutdown.is_requested() {
                            return;
                        }
                    }
                    Err(e) => match accepting.failed_io(&e) {
                        Step::Retry => continue,
                        Step::Wait => break,
                        Step::Pause(d) => {
                            wait_or_shutdown(site, d);
                            break;
                        }
                    },
                }
            }
        }
    }
}

/// Sleeps for `d` unless shutdown is asked for first.
pub(crate) fn wait_or_shutdown(site: &Shared, d: Duration) {
    let mut fds = [PollFd::from_borrowed_fd(
        site.shutdown.wake_fd(),
        PollFlags::IN,
    )];
    let _ = rustix::event::poll(&mut fds, Some(&policy::timespec(d)));
}

/// Best effort "503 Service Unavailable" to a connection we cannot take, from
/// the accepting thread: the socket is fresh, so the small write does not block
/// (and `SO_SNDTIMEO` bounds it anyway); then a short non-blocking drain of what
/// the client already sent, so the close is less likely to become a reset.
pub(crate) fn refuse(mut stream: TcpStream, site: &Shared) {
    site.stats.conn_opened();
    site.stats.dropped();
    if site.tls.is_some() {
        // No plaintext 503 on a TLS port, and no handshake for a connection
        // we cannot serve: a close.
        site.stats.conn_closed();
        return;
    }
    site.stats.response(503);
    let mut out = Vec::with_capacity(512);
    let mut clock = crate::runtime::clock::Clock::new();
    clock.tick();
    let persist = crate::site::response::Persist {
        keep_alive: false,
        http10: false,
    };
    crate::site::handler::error_at(
        servelab_http::Status::SERVICE_UNAVAILABLE,
        clock.http(),
        persist,
        false,
        &mut out,
    );
    if stream.write_all(&out).is_ok() {
        site.stats.sent(out.len() as u64);
    }
    let _ = stream.shutdown(Side::Write);
    let mut sink = [0u8; 4096];
    while let Some(n) = read_now(&stream, &mut sink) {
        if n == 0 {
            break;
        }
    }
    site.stats.conn_closed();
}
