//! One connection of an event loop ([`super::evloop`]): its socket, its
//! [`Conn`], and what the loop knows of its readiness and timer. In a file of
//! its own because it also travels to a worker and back ([`super::handoff`]),
//! which should not depend on the loop that sent it.

use std::os::fd::OwnedFd;
use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};
use std::time::Instant;

use super::closing::Closing;
use super::wire::Wire;
use crate::conn::{Conn, Interest};

/// What an event loop learned about a connection while a worker had it.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct Away {
    /// A read edge came: bytes (or the end) may wait.
    pub(super) readable: bool,
    /// The client's close was signalled.
    pub(super) fin: bool,
    /// Its timer entry came due and was dropped.
    pub(super) timer_lost: bool,
}

/// Who holds a connection that an event loop sent to a worker
/// ([`super::handoff`]), shared by the two. It lets a worker give back a
/// keep-alive connection without waking the loop: the loop is woken anyway by
/// the client's next request (a read edge on the socket, which stays in its
/// epoll set), and then takes the connection back. The one race, an edge that
/// the loop saw while the worker still held the connection, is what this
/// settles: whichever of the two comes second knows, and the worker then wakes
/// the loop after all.
#[derive(Debug, Default)]
pub(crate) struct Handover(AtomicU8);

impl Handover {
    /// With a worker.
    const AWAY: u8 = 1;
    /// The loop saw a read edge meanwhile.
    const EDGE: u8 = 2;

    /// The loop sends the connection to a worker.
    pub(crate) fn sent(&self) {
        self.0.store(Self::AWAY, Ordering::Release);
    }

    /// The loop saw a read edge (or a timer came due) while its slot was
    /// empty. True while the worker still holds the connection (it will wake
    /// the loop when it gives it back); false when it has given it back
    /// already: the loop takes it back now.
    pub(crate) fn edge_while_away(&self) -> bool {
        self.0.fetch_or(Self::EDGE, Ordering::AcqRel) & Self::AWAY != 0
    }

    /// The worker has put the connection on the way back (it must do so
    /// first). True when the loop saw an edge meanwhile and must be woken.
    pub(crate) fn returned(&self) -> bool {
        self.0.swap(0, Ordering::AcqRel) & Self::EDGE != 0
    }
}

/// A connection of an event loop.
#[derive(Debug)]
pub(crate) struct Connection {
    pub(super) sock: OwnedFd,
    pub(super) conn: Conn,
    pub(super) interest: Interest,
    /// Edge-triggered readiness as last known: reading may return bytes.
    pub(super) readable: bool,
    /// Writing may make progress.
    pub(super) writable: bool,
    /// The earliest timer entry in the heap for this slot.
    pub(super) armed: Option<Instant>,
    /// The close, once it has begun ([`Closing`]).
    pub(super) closing: Option<Closing>,
    /// In the epoll set yet (see [`super::evloop::EventLoop`]).
    pub(super) registered: bool,
    /// Not read yet since it was accepted (see "Deadlines" in
    /// [`super::policy`]).
    pub(super) fresh: bool,
    /// The client's close (`RDHUP`, `HUP` or `ERR`) has been signalled (and
    /// told to `conn`): no edge comes for what is still to be read.
    pub(super) fin: bool,
    /// Shared with the loop while a worker has it (`event` only).
    pub(super) handover: Option<Arc<Handover>>,
    /// Plain, or TLS beneath `conn` (see [`crate::tls`]).
    pub(super) wire: Wire,
}

impl Connection {
    /// A connection just accepted: the request often arrives with (or right
    /// after) the handshake, so it is read at once rather than after an edge.
    pub(super) fn accepted(sock: OwnedFd, conn: Conn, wire: Wire) -> Connection {
        Connection {
            sock,
            conn,
            interest: Interest::Read,
            readable: true,
            writable: true,
            armed: None,
            closing: None,
            // Registered only once it has to wait: a request that arrived with
            // the handshake is answered and, with `Connection: close`, closed
            // without ever touching the epoll set (two syscalls and an epitem
            // saved per connection, as h2o does).
            registered: false,
            fresh: true,
            fin: false,
            handover: None,
            wire,
        }
    }

    /// Back from a worker ([`super::handoff`]), which left its wish in
    /// `interest`, with what the loop saw meanwhile (`away`): its read edges
    /// still reached the loop, so it is readable only if one came or it was
    /// before it left (no `recv` that finds nothing); its timer entry is armed
    /// afresh only if it came due meanwhile. A worker that wrote may have met
    /// a full socket and waited for room itself, so it may be written to.
    pub(super) fn came_back(&mut self, away: Away) {
        self.readable |= away.readable;
        self.fin |= away.fin;
        self.writable = true;
        if away.timer_lost {
            self.armed = None;
        }
    }
}
