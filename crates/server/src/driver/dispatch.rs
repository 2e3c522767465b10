//! The one loop that carries out what [`crate::conn::Conn`] asks: the match
//! on [`Interest`], written once for every driver ([`carry`]). A driver
//! supplies only how it does each thing its own way ([`Carry`]): a thread
//! blocks in the syscall ([`super::blocking`]); the epoll loop goes as far
//! as the socket's last known readiness allows ([`super::evloop`]); `event`'s
//! worker serves until the connection wants to read, then gives it back
//! ([`super::handoff`]); the ring reads what the kernel delivered and seals
//! what is to be sent ([`super::ring`]); a tokio task reads and writes inside
//! tokio's `try_io` ([`super::tokio_task`]).
//!
//! Each method either tells `Conn` and hands on what it wants next
//! (`Some`), or says that the driver has to wait first (`None`): the loop
//! then returns the [`Interest`] it stopped at, and the driver waits for it
//! in its own way (an edge or the timer, a completion, an `.await`) and
//! calls [`carry`] again. [`Interest::Close`] always ends the loop: the
//! driver has begun the close (or leaves it to whoever carries it out), and
//! what follows it (the rest of the close, freeing a slot, counting the
//! close) is the caller's.
//!
//! What stays with a driver is its waiting. The epoll loop and the ring wait
//! for any interest the same way (an edge or a completion, and the timer), so
//! they need no second look at where [`carry`] stopped. A tokio task awaits a
//! different future for each (read readiness with the deadline and shutdown,
//! room within the write timeout, the hold's timer, the close), and so
//! matches on it once more: a match of waits, not of steps. A future could
//! not be a [`Carry`] method itself: the loop here is synchronous, and
//! borrows the thread's `Local`, which a task must not hold across an
//! `.await`.
//!
//! Cost: [`carry`] and the loops' methods are `#[inline(always)]`, so each
//! driver gets its own copy of the loop, compiled as if written by hand
//! (the borrowed view a driver passes in is taken apart into registers).
//! `bench/callgrind.sh` counted a keep-alive request at 2,958 instructions
//! on `reactor` and 3,940 on `uring` with a match per driver, and 2,928 and
//! 3,916 with this loop: no more (reruns of one build differ by a few
//! dozen).

use crate::conn::Interest;

/// How a driver carries out each [`Interest`]; see the module docs. Every
/// method that returns `Some` has told `Conn` (or changed nothing that needs
/// telling: a retry after `EINTR` hands back the same interest).
pub(crate) trait Carry {
    /// [`Interest::Read`]: read and tell `Conn`, or `None` to wait for bytes
    /// (or the deadline) first.
    fn read(&mut self) -> Option<Interest>;
    /// [`Interest::Write`]: write what `Conn` offers and tell it, or `None`
    /// to wait for room (or the deadline) first.
    fn write(&mut self) -> Option<Interest>;
    /// [`Interest::Work`]: spend the CPU ([`super::policy::work`]), or
    /// `None` to hand the connection to a thread that spends it.
    fn work(&mut self) -> Option<Interest>;
    /// [`Interest::Hold`]: wait out a `--delay` hold on this thread and tell
    /// `Conn` how it ended, or `None` (as here, for a driver that serves
    /// others meanwhile) to wait for the timer or the client's close first.
    #[inline(always)]
    fn hold(&mut self) -> Option<Interest> {
        None
    }
    /// [`Interest::Close`]: begin the close (`linger`: a lingering one), as
    /// far as it goes now; the driver finishes it.
    fn close(&mut self, linger: bool);
}

/// Carries out `interest` and what `Conn` wants after it, until the driver
/// has to wait or the connection closes; returns the interest it stopped at.
#[inline(always)]
pub(crate) fn carry<C: Carry>(c: &mut C, mut interest: Interest) -> Interest {
    loop {
        let next = match interest {
            Interest::Read => c.read(),
            Interest::Write => c.write(),
            Interest::Work => c.work(),
            Interest::Hold => c.hold(),
            Interest::Close { linger } => {
                c.close(linger);
                return interest;
            }
        };
        match next {
            Some(next) => interest = next,
            None => return interest,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A driver whose answers are scripted: each call takes the next one and
    /// writes down what was asked.
    struct Script {
        answers: Vec<Option<Interest>>,
        asked: Vec<&'static str>,
    }

    impl Script {
        fn next(&mut self, what: &'static str) -> Option<Interest> {
            self.asked.push(what);
            self.answers.remove(0)
        }
    }

    impl Carry for Script {
        fn read(&mut self) -> Option<Interest> {
            self.next("read")
        }
        fn write(&mut self) -> Option<Interest> {
            self.next("write")
        }
        fn work(&mut self) -> Option<Interest> {
            self.next("work")
        }
        fn hold(&mut self) -> Option<Interest> {
            self.next("hold")
        }
        fn close(&mut self, linger: bool) {
            self.asked.push(if linger { "linger" } else { "close" });
        }
    }

    fn run(start: Interest, answers: Vec<Option<Interest>>) -> (Interest, Vec<&'static str>) {
        let mut s = Script {
            answers,
            asked: Vec::new(),
        };
        let stopped = carry(&mut s, start);
        assert!(s.answers.is_empty(), "answers left: {:?}", s.answers);
        (stopped, s.asked)
    }

    #[test]
    fn a_keep_alive_request_goes_round_until_the_socket_is_drained() {
        let (stopped, asked) = run(
            Interest::Read,
            vec![
                Some(Interest::Work),
                Some(Interest::Write),
                Some(Interest::Read),
                None,
            ],
        );
        assert_eq!(stopped, Interest::Read);
        assert_eq!(asked, ["read", "work", "write", "read"]);
    }

    #[test]
    fn it_stops_where_the_driver_has_to_wait() {
        let (stopped, asked) = run(Interest::Write, vec![Some(Interest::Hold), None]);
        assert_eq!(stopped, Interest::Hold);
        assert_eq!(asked, ["write", "hold"]);
        let (stopped, _) = run(Interest::Work, vec![None]);
        assert_eq!(stopped, Interest::Work);
    }

    #[test]
    fn a_close_is_begun_once_and_ends_the_loop() {
        let (stopped, asked) = run(Interest::Read, vec![Some(Interest::Close { linger: true })]);
        assert_eq!(stopped, Interest::Close { linger: true });
        assert_eq!(asked, ["read", "linger"]);
        let (stopped, asked) = run(Interest::Close { linger: false }, vec![]);
        assert_eq!(stopped, Interest::Close { linger: false });
        assert_eq!(asked, ["close"]);
    }
}
