//! One read and one write of a connection, written once for every driver
//! that makes its own syscalls (blocking, the epoll loop, `event`'s workers,
//! tokio's task): the call through the [`Wire`], and the outcome told to
//! [`Conn::on`] as an [`Event`]. What a driver supplies is what it does when
//! the socket has nothing to give or no room ([`Moved::Again`]): an event
//! loop waits for the next edge, a blocking driver lets `Conn` judge its
//! deadline, a worker polls, tokio's task hands the `EAGAIN` to `try_io`
//! (which clears its readiness) and awaits readiness.
//!
//! Both are `#[inline(always)]`: they are the keep-alive request's path, and
//! the loop's branches on [`Moved`] fold into the ones it had. (With a plain
//! `#[inline]` the write stayed a call of its own, and callgrind counted 39
//! more instructions per keep-alive request on `reactor`.)

use std::os::fd::AsFd;

use rustix::io::Errno;

use super::wire::Wire;
use crate::conn::{Conn, Event, Interest};
use crate::runtime::shared::{Local, Shared};

/// What one read or write did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Moved {
    /// `Conn` was told, and wants `next`. `short`: fewer bytes moved than
    /// there was room for (a read) or than were offered (a write), so the
    /// socket is drained or full: an edge-triggered loop waits for the next
    /// edge.
    Told { next: Interest, short: bool },
    /// `EAGAIN`: nothing to read or no room now.
    Again,
    /// Interrupted by a signal: try again.
    Retry,
}

/// Reads into [`Conn::read_space`] and tells `conn` ([`tell_read`]).
#[inline(always)]
pub(crate) fn read(
    sock: impl AsFd,
    conn: &mut Conn,
    wire: &mut Wire,
    site: &Shared,
    w: &mut Local,
) -> Moved {
    let space = conn.read_space();
    let want = space.len();
    match wire.recv(sock, space, site) {
        Ok(n) => Moved::Told {
            next: tell_read(conn, wire, n, site, w),
            short: n < want,
        },
        Err(Errno::AGAIN) => Moved::Again,
        Err(Errno::INTR) => Moved::Retry,
        Err(_) => Moved::Told {
            next: conn.on(Event::ReadFailed, site, w),
            short: false,
        },
    }
}

/// Tells `conn` that `n` plaintext bytes came into [`Conn::read_space`]
/// (0: the end of input), on every driver (the ring too). Before the first
/// bytes, what TLS's ALPN chose ([`Wire::alpn_h2`]), which decides the
/// protocol (see [`Conn::set_alpn`]).
#[inline(always)]
pub(crate) fn tell_read(
    conn: &mut Conn,
    wire: &Wire,
    n: usize,
    site: &Shared,
    w: &mut Local,
) -> Interest {
    if n > 0 && conn.alpn_unknown() {
        conn.set_alpn(wire.alpn_h2());
    }
    conn.on(Event::Read(n), site, w)
}

/// Writes what [`Conn::next_write`] offers (with `MSG_MORE` when a file body
/// follows) and tells `conn`.
#[inline(always)]
pub(crate) fn write(
    sock: impl AsFd,
    conn: &mut Conn,
    wire: &mut Wire,
    site: &Shared,
    w: &mut Local,
) -> Moved {
    let more = conn.file_follows();
    let (result, offered) = match conn.next_write() {
        Some(chunk) => {
            let offered = wire.offered(&chunk);
            (wire.send(sock, chunk, more), offered)
        }
        None => (Ok(0), 0),
    };
    match result {
        Ok(n) => Moved::Told {
            next: conn.on(Event::Wrote(n), site, w),
            short: n < offered,
        },
        Err(Errno::AGAIN) => Moved::Again,
        Err(Errno::INTR) => Moved::Retry,
        // A reset or a broken pipe.
        Err(_) => Moved::Told {
            next: conn.on(Event::WriteFailed, site, w),
            short: false,
        },
    }
}
