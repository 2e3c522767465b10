//! Wall-clock strings, formatted once per second per worker.
//!
//! Every response carries a `Date` and every log line a CLF timestamp; both only
//! change once a second, so each worker keeps the formatted bytes
//! (`servelab_http::date::HttpDate`) and redoes them when the second changes.
//! Reading the clock is a vDSO call, no syscall.

use std::time::SystemTime;

use servelab_http::date::HttpDate;

/// A worker's cached date strings.
#[derive(Debug, Clone)]
pub(crate) struct Clock(HttpDate);

impl Clock {
    pub(crate) fn new() -> Clock {
        Clock(HttpDate::new(SystemTime::now()))
    }

    /// Brings the strings up to date with the current second.
    pub(crate) fn tick(&mut self) {
        self.0.update(SystemTime::now());
    }

    /// `Date:` value, IMF-fixdate.
    pub(crate) fn http(&self) -> &[u8; 29] {
        self.0.http()
    }

    /// Access-log timestamp, `10/Oct/2000:13:55:36 +0000`.
    pub(crate) fn clf(&self) -> &[u8; 26] {
        self.0.clf()
    }
}
