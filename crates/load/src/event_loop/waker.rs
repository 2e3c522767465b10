//! How an event loop sleeps until its next timed event, and wakes on time:
//! the timerfd in its epoll set and the learnt wake-up lead; and how it polls
//! before it blocks while requests are in flight ([`poll_then_wait`], why in
//! [`super`]'s docs). Shared by the HTTP/1.1 and HTTP/2 loops, which differ
//! only in what their deadlines are.

use std::os::fd::OwnedFd;
use std::time::{Duration, Instant};

use super::{TIMER_TOKEN, WakeLead};
use rustix::event::epoll;

/// The wake-up timer of one loop (see [`super::wake_timer`] for why a
/// timerfd) and what it is armed for.
#[derive(Debug)]
pub(super) struct Waker {
    timer: OwnedFd,
    /// The deadline the timerfd is armed for, so it is armed once per deadline.
    armed_for: Option<Instant>,
    /// When the timerfd is set to expire: the deadline less the wake lead.
    armed_at: Option<Instant>,
    /// How early the timerfd is set before a deadline (see [`WakeLead`]).
    lead: WakeLead,
}

impl Waker {
    pub(super) fn new(epoll: &OwnedFd) -> std::io::Result<Waker> {
        Ok(Waker {
            timer: super::wake_timer(epoll)?,
            armed_for: None,
            armed_at: None,
            lead: WakeLead::default(),
        })
    }

    /// How long `epoll_wait` may sleep from `now`: until `until`, which is the
    /// loop's next timed event when `timed` (then the timer is armed for it,
    /// a lead ahead, and inside the lead the loop polls instead of sleeping),
    /// or a bound of its own otherwise.
    pub(super) fn plan(
        &mut self,
        now: Instant,
        until: Instant,
        timed: bool,
    ) -> std::io::Result<Duration> {
        let mut wait = until.saturating_duration_since(now);
        if timed {
            let lead = self.lead.get();
            if wait <= lead {
                // Inside the lead: a wake-up would land late, so poll until
                // the deadline instead of sleeping.
                wait = Duration::ZERO;
            } else if self.armed_for != Some(until) {
                self.arm(wait - lead)?;
                self.armed_for = Some(until);
                self.armed_at = Some(now + (wait - lead));
            }
        }
        Ok(wait)
    }

    /// The timer's event woke the loop at `woke`, from a sleep begun at
    /// `slept_from`: learn how late this machine wakes.
    pub(super) fn woke(&mut self, woke: Instant, slept_from: Instant) {
        // Edge-triggered: nothing to read (see `wake_timer`). Before the
        // expiry, the event is a stale edge of an earlier expiry, found
        // after the timer was re-armed.
        if let Some(at) = self.armed_at.filter(|&at| woke >= at) {
            self.armed_at = None;
            if slept_from < at {
                self.lead.learn(woke - at);
            }
        }
    }

    /// Arms the timer to expire `wait` from now (not for a zero wait: the
    /// loop does not sleep then).
    fn arm(&self, wait: Duration) -> std::io::Result<()> {
        if wait.is_zero() {
            return Ok(());
        }
        let zero = rustix::time::Timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        let spec = rustix::time::Itimerspec {
            it_interval: zero,
            it_value: timespec(wait),
        };
        rustix::time::timerfd_settime(
            &self.timer,
            rustix::time::TimerfdTimerFlags::empty(),
            &spec,
        )?;
        Ok(())
    }
}

/// A duration as the kernel's timespec.
pub(super) fn timespec(d: Duration) -> rustix::time::Timespec {
    rustix::time::Timespec {
        tv_sec: d.as_secs() as i64,
        tv_nsec: i64::from(d.subsec_nanos()),
    }
}

/// One `epoll_wait` of at most `wait`; `Ok(None)` when a signal cut it short.
fn wait_events(
    epoll: &OwnedFd,
    events: &mut [epoll::Event],
    wait: Duration,
) -> std::io::Result<Option<usize>> {
    match epoll::wait(epoll, events, Some(&timespec(wait))) {
        Ok(n) => Ok(Some(n)),
        Err(rustix::io::Errno::INTR) => Ok(None),
        Err(e) => Err(e.into()),
    }
}

/// What a loop with requests in flight does before it blocks in
/// `epoll_wait`: nap on its own timer, then poll. Both zero: it blocks at once.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Idle {
    /// Sleep this long off the epoll wait queue (`--nap`), so that the data
    /// that arrives meanwhile wakes nobody: on loopback the waker would be
    /// the server, on its own CPU time.
    pub nap: Duration,
    /// Then call `epoll_wait` with a zero timeout until something is ready or
    /// this long has passed (`--poll-before-sleep`).
    pub poll: Duration,
}

/// One `epoll_wait` with a zero timeout: `Some` of what [`wait_events`]
/// returned when something is ready (or a signal cut it short), `None` when
/// nothing is.
fn poll_once(
    epoll: &OwnedFd,
    events: &mut [epoll::Event],
) -> std::io::Result<Option<Option<usize>>> {
    Ok(match wait_events(epoll, events, Duration::ZERO)? {
        Some(0) => None,
        got => Some(got),
    })
}

/// `epoll_wait` for at most `wait` from `from`, after what `idle` asks: one
/// zero-timeout poll, and if nothing is ready a nap of `idle.nap` (at most
/// `wait`); then zero-timeout polls until something is ready or `idle.poll`
/// (at most what is left of `wait`) has passed since the nap, at least one
/// after a nap; and only then a blocking wait for the rest of `wait`.
/// A thread that blocks is woken by whoever makes its socket ready, and on
/// loopback that is the server (see the module docs of [`super`]). One
/// monotonic clock read per poll (a vDSO read, a small part of the
/// zero-timeout system call it follows).
///
/// Returns the events as [`wait_events`] does, and when the blocking wait
/// began: `None` when a poll found the events and the thread never blocked
/// (so the wake-up timer learns no latency from it).
pub(super) fn poll_then_wait(
    epoll: &OwnedFd,
    events: &mut [epoll::Event],
    mut wait: Duration,
    idle: Idle,
    mut from: Instant,
) -> std::io::Result<(Option<usize>, Option<Instant>)> {
    let nap = idle.nap.min(wait);
    if !nap.is_zero() {
        if let Some(got) = poll_once(epoll, events)? {
            return Ok((got, None));
        }
        // EINTR (a signal) ends the nap early, which only shortens it.
        let _ = rustix::thread::nanosleep(&timespec(nap));
        let now = Instant::now();
        wait = wait.saturating_sub(now.saturating_duration_since(from));
        from = now;
    }
    let spin = idle.poll.min(wait);
    if spin.is_zero() && nap.is_zero() {
        return Ok((wait_events(epoll, events, wait)?, Some(from)));
    }
    // After a nap the loop polls once even without a budget: what came
    // during the nap is taken up without counting as a blocked wait.
    let until = from + spin;
    loop {
        if let Some(got) = poll_once(epoll, events)? {
            return Ok((got, None));
        }
        let now = Instant::now();
        if now >= until {
            let rest = wait.saturating_sub(now - from);
            return Ok((wait_events(epoll, events, rest)?, Some(now)));
        }
    }
}

/// Whether an event is the wake-up timer's.
#[inline]
pub(super) fn is_timer(ev: &epoll::Event) -> bool {
    ev.data.u64() == TIMER_TOKEN
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write as _;
    use std::os::unix::net::UnixStream;

    fn epoll_on(sock: &UnixStream) -> OwnedFd {
        let ep = epoll::create(epoll::CreateFlags::CLOEXEC).unwrap();
        epoll::add(
            &ep,
            sock,
            epoll::EventData::new_u64(7),
            epoll::EventFlags::IN | epoll::EventFlags::ET,
        )
        .unwrap();
        ep
    }

    fn events() -> Vec<epoll::Event> {
        vec![
            epoll::Event {
                flags: epoll::EventFlags::empty(),
                data: epoll::EventData::new_u64(0),
            };
            4
        ]
    }

    #[test]
    fn a_ready_socket_is_found_by_the_poll_without_blocking() {
        let (a, mut b) = UnixStream::pair().unwrap();
        let ep = epoll_on(&a);
        b.write_all(b"x").unwrap();
        let mut ev = events();
        let from = Instant::now();
        let (n, blocked_from) = poll_then_wait(
            &ep,
            &mut ev,
            Duration::from_secs(5),
            polls(Duration::from_millis(1)),
            from,
        )
        .unwrap();
        assert_eq!(n, Some(1));
        assert_eq!(ev[0].data.u64(), 7);
        // Found while polling: the loop never slept, and the wake-up timer
        // must learn nothing from it.
        assert_eq!(blocked_from, None);
    }

    #[test]
    fn with_nothing_ready_it_polls_out_its_budget_then_blocks() {
        let (a, _b) = UnixStream::pair().unwrap();
        let ep = epoll_on(&a);
        let mut ev = events();
        let budget = Duration::from_micros(300);
        let from = Instant::now();
        let (n, blocked_from) =
            poll_then_wait(&ep, &mut ev, Duration::from_millis(2), polls(budget), from).unwrap();
        assert_eq!(n, Some(0));
        // It blocked only once the whole budget had passed.
        let blocked_from = blocked_from.expect("nothing came: it blocked");
        assert!(blocked_from >= from + budget);
    }

    #[test]
    fn a_zero_budget_blocks_at_once_and_the_budget_never_outlasts_the_wait() {
        let (a, _b) = UnixStream::pair().unwrap();
        let ep = epoll_on(&a);
        let mut ev = events();
        let from = Instant::now();
        // Off: straight to the blocking wait, which began at `from`.
        let got = poll_then_wait(
            &ep,
            &mut ev,
            Duration::from_micros(100),
            Idle::default(),
            from,
        );
        assert_eq!(got.unwrap(), (Some(0), Some(from)));
        // A loop that must not sleep (wait zero) neither polls nor naps.
        let both = Idle {
            nap: Duration::from_millis(1),
            poll: Duration::from_millis(1),
        };
        let got = poll_then_wait(&ep, &mut ev, Duration::ZERO, both, from);
        assert_eq!(got.unwrap(), (Some(0), Some(from)));
    }

    fn polls(poll: Duration) -> Idle {
        Idle {
            poll,
            ..Idle::default()
        }
    }

    fn naps(nap: Duration) -> Idle {
        Idle {
            nap,
            ..Idle::default()
        }
    }

    #[test]
    fn data_that_comes_during_a_nap_waits_for_its_end_and_is_taken_without_blocking() {
        let (a, mut b) = UnixStream::pair().unwrap();
        let ep = epoll_on(&a);
        let mut ev = events();
        let nap = Duration::from_millis(50);
        let writer = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(5));
            b.write_all(b"x").unwrap();
            b
        });
        let from = Instant::now();
        let (n, blocked_from) =
            poll_then_wait(&ep, &mut ev, Duration::from_secs(5), naps(nap), from).unwrap();
        let _b = writer.join().unwrap();
        assert_eq!(n, Some(1));
        // Nobody woke the napping thread: the data was found when the nap
        // ended, by a poll, and the loop never blocked.
        assert!(Instant::now() >= from + nap);
        assert_eq!(blocked_from, None);
    }

    #[test]
    fn with_nothing_ready_it_naps_then_blocks_and_the_nap_never_outlasts_the_wait() {
        let (a, _b) = UnixStream::pair().unwrap();
        let ep = epoll_on(&a);
        let mut ev = events();
        let nap = Duration::from_millis(2);
        let from = Instant::now();
        let (n, blocked_from) =
            poll_then_wait(&ep, &mut ev, Duration::from_millis(4), naps(nap), from).unwrap();
        assert_eq!(n, Some(0));
        let blocked_from = blocked_from.expect("nothing came: it blocked after the nap");
        assert!(blocked_from >= from + nap);
        // A nap longer than the wait is cut to the wait: a loop's next timed
        // event (a think time, an arrival) is never missed for a nap.
        let from = Instant::now();
        let (n, _) = poll_then_wait(
            &ep,
            &mut ev,
            Duration::from_millis(3),
            naps(Duration::from_secs(60)),
            from,
        )
        .unwrap();
        assert_eq!(n, Some(0));
        assert!(from.elapsed() < Duration::from_secs(30));
    }
}
