//! Wall-clock strings, formatted once per second per worker.
//!
//! Every response carries a `Date` and every log line a CLF timestamp; both only
//! change once a second, so each worker keeps the formatted bytes
//! (`servelab_http::date::HttpDate`) and redoes them when the second changes,
//! together with the status line, `Date` and `Server` of a `200` as one block
//! (`servelab_http::response::OkStart`), which a whole file's head copies.
//!
//! The wall clock is not even read per request. A connection reads the
//! monotonic clock once when a request starts (its service time is measured
//! from then), and [`Clock::tick_at`] takes that instant: the wall clock is read
//! only once the monotonic clock has passed the instant at which the cached
//! second ends. Each clock read is a vDSO call of about 20 ns, and a
//! keep-alive request used to make six of them, 3% of the server's CPU per
//! request (`perf record` on `reactor` with `wrk -c50`, 2026-11-26).
//!
//! A step of the wall clock (NTP, an operator's `date -s`) shows in `Date`
//! within a second: until then the cached second ends as the monotonic clock
//! predicted.

use std::time::{Duration, Instant, SystemTime};

use servelab_http::date::HttpDate;
use servelab_http::response::OkStart;

/// A worker's cached date strings, the monotonic instant until which they
/// hold, and the instant of the last tick (when the request being answered
/// started).
#[derive(Debug, Clone)]
pub(crate) struct Clock {
    date: HttpDate,
    /// The status line, `Date` and `Server` of a `200`, renewed with `date`.
    ok: OkStart,
    now: Instant,
    /// When the cached second ends (or earlier): before it, `tick_at` reads
    /// no clock.
    until: Instant,
}

impl Clock {
    pub(crate) fn new() -> Clock {
        let now = Instant::now();
        let wall = SystemTime::now();
        let date = HttpDate::new(wall);
        Clock {
            date,
            ok: OkStart::new(&date),
            now,
            until: now + left_in_second(wall),
        }
    }

    /// Brings the strings up to date with the current second.
    pub(crate) fn tick(&mut self) {
        self.tick_at(Instant::now());
    }

    /// Brings the strings up to date as of `now`, an instant the caller has
    /// just read: the wall clock is read only when the cached second is over.
    pub(crate) fn tick_at(&mut self, now: Instant) {
        self.now = now;
        if now < self.until {
            return;
        }
        // `now` was read before `wall`, so the instant computed here is at or
        // before the true end of `wall`'s second: never a stale string.
        let wall = SystemTime::now();
        if self.date.update(wall) {
            self.ok = OkStart::new(&self.date);
        }
        self.until = now + left_in_second(wall);
    }

    /// The instant of the last tick: for a request, when it started. What is
    /// decided for the request (a cached file's freshness) is decided as of
    /// then, without another clock read.
    pub(crate) fn now(&self) -> Instant {
        self.now
    }

    /// `Date:` value, IMF-fixdate.
    pub(crate) fn http(&self) -> &[u8; 29] {
        self.date.http()
    }

    /// The start of a `200` head as of this second (see [`OkStart`]).
    pub(crate) fn ok_start(&self) -> &OkStart {
        &self.ok
    }

    /// Access-log timestamp, `10/Oct/2000:13:55:36 +0000`.
    pub(crate) fn clf(&self) -> &[u8; 26] {
        self.date.clf()
    }
}

/// What is left of `wall`'s second (all of it for a time before 1970).
fn left_in_second(wall: SystemTime) -> Duration {
    let into = wall
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    Duration::from_nanos(u64::from(1_000_000_000 - into))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_strings_follow_the_wall_clock_across_a_second() {
        let mut c = Clock::new();
        let first = *c.http();
        // Before `until` the wall clock is not read: with `until` moved a
        // minute ahead, a second later the string is still the old one.
        let until = c.until;
        c.until = Instant::now() + Duration::from_secs(60);
        std::thread::sleep(Duration::from_millis(1100));
        c.tick();
        assert_eq!(*c.http(), first);
        // Once `until` has passed, it is.
        c.until = until;
        let before = HttpDate::new(SystemTime::now());
        c.tick();
        let after = HttpDate::new(SystemTime::now());
        assert_ne!(*c.http(), first);
        // The 200's block follows the date.
        assert_eq!(c.ok_start(), &OkStart::new(&c.date));
        assert_eq!(&c.ok_start().as_bytes()[23..52], c.http());
        assert!(
            c.http() == before.http() || c.http() == after.http(),
            "{:?}",
            String::from_utf8_lossy(c.http())
        );
    }

    #[test]
    fn what_is_left_of_a_second_is_at_most_one_second() {
        let t = SystemTime::UNIX_EPOCH + Duration::new(5, 250_000_000);
        assert_eq!(left_in_second(t), Duration::from_millis(750));
        let whole = SystemTime::UNIX_EPOCH + Duration::from_secs(7);
        assert_eq!(left_in_second(whole), Duration::from_secs(1));
    }
}
