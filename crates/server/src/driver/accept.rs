//! What an accept loop decides, written once for the four ways of waiting:
//! the blocking loop ([`super::blocking::accept_with`]), the event loop
//! ([`super::evloop`]), tokio's (`engines::tokio_rt`) and the ring's
//! multishot accept ([`super::ring`]).
//!
//! The four loops stay four because they wait differently: `poll` on a
//! blocking thread, an epoll edge among the connections of one loop, an
//! `async` accept inside `tokio::select!`, which cannot be a blocking call
//! without taking a runtime thread, and a completion. What they decide about
//! an error is the same, and lives here: [`Accepting::failed`] says whether
//! to try again at once, go back to waiting, or pause (and for how long),
//! and a loop that serves connections while it pauses asks
//! [`Accepting::paused_until`] and [`Accepting::resumes`] when to take
//! connections again; the loop only carries that out in its own way of
//! waiting. The rest of what an accepted connection meets is decided once
//! elsewhere: its count and the check that shutdown was not forced already
//! ([`policy::opened`]), the cap of the engines that have one ([`has_room`]),
//! and the 503 of a connection that cannot be taken
//! ([`super::blocking::refuse`]).
//!
//! - `EINTR`, `ECONNABORTED`: one client's trouble (it reset the connection
//!   before it was taken) or a signal; try again at once.
//! - `EMFILE`, `ENFILE`, `ENOBUFS`, `ENOMEM` ([`policy::is_resource_error`]):
//!   the system is out of something; pause 10 ms, doubling to 500 ms while it
//!   lasts ([`policy::Backoff`]), so that the loop serves what it has instead
//!   of spinning on a listener that stays readable.
//! - `EAGAIN` and anything else: nothing more to take now; wait for the
//!   listener again (a persistent unknown error must not spin the loop).

use std::net::{Ipv4Addr, SocketAddr};
use std::time::{Duration, Instant};

use rustix::io::Errno;
use rustix::net::SocketAddrAny;

use super::policy::{self, Backoff};
use crate::runtime::shared::Shared;

/// What a loop does after a failed `accept`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Step {
    /// Call `accept` again now.
    Retry,
    /// Nothing more to take now: wait for the listener to be readable.
    Wait,
    /// Out of resources: accept nothing for this long (shutdown still ends
    /// the pause).
    Pause(Duration),
}

/// An accept loop's memory of its recent failures, and of the pause they
/// began.
#[derive(Debug, Default)]
pub(crate) struct Accepting {
    backoff: Backoff,
    /// The pause of the last [`Step::Pause`] ends then.
    paused: Option<Instant>,
}

impl Accepting {
    /// A connection was taken: the next resource error starts the back-off
    /// afresh.
    pub(crate) fn took(&mut self) {
        self.backoff.reset();
    }

    /// `accept` failed with `e`: what next.
    pub(crate) fn failed(&mut self, e: Errno) -> Step {
        match e {
            Errno::INTR | Errno::CONNABORTED => Step::Retry,
            e if policy::is_resource_error(e) => {
                let d = self.backoff.next();
                self.paused = Some(Instant::now() + d);
                Step::Pause(d)
            }
            _ => Step::Wait,
        }
    }

    /// While a pause lasts, when it ends: a loop that serves its connections
    /// meanwhile takes no new one, and wakes then at the latest.
    pub(crate) fn paused_until(&self) -> Option<Instant> {
        self.paused
    }

    /// Is the pause over by `now`? True once, when the loop is to take
    /// connections again (unless shutdown has begun meanwhile).
    pub(crate) fn resumes(&mut self, now: Instant) -> bool {
        if self.paused.is_some_and(|t| now >= t) {
            self.paused = None;
            return true;
        }
        false
    }

    /// Shutdown has begun: no new connection will be taken, so no pause
    /// ends.
    pub(crate) fn stop(&mut self) {
        self.paused = None;
    }

    /// [`Accepting::failed`] for the standard library's error type (as
    /// `accept` returns it: with the OS error number; one without is treated
    /// as an unknown error, [`Step::Wait`]).
    pub(crate) fn failed_io(&mut self, e: &std::io::Error) -> Step {
        self.failed(Errno::from_io_error(e).unwrap_or(Errno::IO))
    }
}

/// The address of an accepted client, as `accept` (or `getpeername`) gave
/// it; `0.0.0.0:0` where none was given (only the log prints it).
pub(crate) fn peer(addr: Option<SocketAddrAny>) -> SocketAddr {
    addr.and_then(|a| SocketAddr::try_from(a).ok())
        .unwrap_or_else(|| SocketAddr::from((Ipv4Addr::UNSPECIFIED, 0)))
}

/// Room for another connection, for the engines that give each its own
/// thread or process (`--max-conns` of them at most); at the cap, clients
/// wait in the listen backlog rather than being refused.
pub(crate) fn has_room(live: usize, site: &Shared) -> bool {
    live < site.config.max_conns
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resource_errors_pause_longer_until_a_connection_is_taken() {
        let mut a = Accepting::default();
        let ms = Duration::from_millis;
        assert_eq!(a.failed(Errno::MFILE), Step::Pause(ms(10)));
        assert_eq!(a.failed(Errno::NFILE), Step::Pause(ms(20)));
        assert_eq!(
            a.failed_io(&std::io::Error::from(Errno::NOBUFS)),
            Step::Pause(ms(40))
        );
        a.took();
        assert_eq!(a.failed(Errno::NOMEM), Step::Pause(ms(10)));
    }

    #[test]
    fn a_pause_ends_once_at_its_instant_and_not_after_shutdown() {
        let mut a = Accepting::default();
        assert_eq!(a.paused_until(), None);
        let before = Instant::now();
        let Step::Pause(d) = a.failed(Errno::MFILE) else {
            panic!("a resource error pauses")
        };
        let until = a.paused_until().expect("paused");
        assert!(until >= before + d);
        assert!(!a.resumes(until - Duration::from_millis(1)), "not yet");
        assert!(a.resumes(until));
        assert!(!a.resumes(until), "once");
        assert_eq!(a.paused_until(), None);
        a.failed(Errno::MFILE);
        a.stop();
        assert_eq!(a.paused_until(), None);
        assert!(!a.resumes(until + Duration::from_secs(1)));
    }

    #[test]
    fn one_clients_errors_retry_and_the_rest_wait() {
        let mut a = Accepting::default();
        assert_eq!(a.failed(Errno::CONNABORTED), Step::Retry);
        assert_eq!(a.failed(Errno::INTR), Step::Retry);
        assert_eq!(a.failed_io(&std::io::Error::from(Errno::INTR)), Step::Retry);
        assert_eq!(a.failed(Errno::AGAIN), Step::Wait);
        assert_eq!(a.failed_io(&std::io::Error::from(Errno::AGAIN)), Step::Wait);
        assert_eq!(a.failed(Errno::INVAL), Step::Wait);
        assert_eq!(a.failed_io(&std::io::Error::other("x")), Step::Wait);
    }
}
