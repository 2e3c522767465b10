//! How an event loop sleeps until its next timed event, and wakes on time:
//! the timerfd in its epoll set and the learnt wake-up lead. Shared by the
//! HTTP/1.1 and HTTP/2 loops, which differ only in what their deadlines are.

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
pub(super) fn wait_events(
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

/// Whether an event is the wake-up timer's.
#[inline]
pub(super) fn is_timer(ev: &epoll::Event) -> bool {
    ev.data.u64() == TIMER_TOKEN
}
