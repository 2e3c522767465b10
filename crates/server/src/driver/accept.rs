//! What an accept loop does after `accept` fails, written once for the three
//! ways of waiting: the blocking loop ([`super::blocking::accept_with`]), the
//! event loop ([`super::evloop`]) and tokio's (`engines::tokio_rt`).
//!
//! The three loops stay three because they wait differently: `poll` on a
//! blocking thread, an epoll edge among the connections of one loop, and an
//! `async` accept inside `tokio::select!`, which cannot be a blocking call
//! without taking a runtime thread. What they decide about an error is the
//! same, and lives here: [`Accepting::failed`] says whether to try again at
//! once, go back to waiting, or pause (and for how long); the loop only
//! carries that out in its own way of waiting.
//!
//! - `EINTR`, `ECONNABORTED`: one client's trouble (it reset the connection
//!   before it was taken) or a signal; try again at once.
//! - `EMFILE`, `ENFILE`, `ENOBUFS`, `ENOMEM` ([`policy::is_resource_error`]):
//!   the system is out of something; pause 10 ms, doubling to 500 ms while it
//!   lasts ([`policy::Backoff`]), so that the loop serves what it has instead
//!   of spinning on a listener that stays readable.
//! - `EAGAIN` and anything else: nothing more to take now; wait for the
//!   listener again (a persistent unknown error must not spin the loop).

use std::time::Duration;

use rustix::io::Errno;

use super::policy::{self, Backoff};

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

/// An accept loop's memory of its recent failures.
#[derive(Debug, Default)]
pub(crate) struct Accepting {
    backoff: Backoff,
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
            e if policy::is_resource_error(e) => Step::Pause(self.backoff.next()),
            _ => Step::Wait,
        }
    }

    /// [`Accepting::failed`] for the standard library's error type (as
    /// `accept` returns it: with the OS error number; one without is treated
    /// as an unknown error, [`Step::Wait`]).
    pub(crate) fn failed_io(&mut self, e: &std::io::Error) -> Step {
        self.failed(Errno::from_io_error(e).unwrap_or(Errno::IO))
    }
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
