//! The progress bar: drawn on stderr only when stderr is a terminal.
//!
//! The event-loop threads never touch the bar: each publishes its count of
//! completed requests in an atomic once per loop turn, and the calling thread
//! polls those ten times a second. A run piped into a file or started by the lab
//! prints nothing here.

use std::io::IsTerminal;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressStyle};

use crate::control::RunControl;

/// A bar that follows the request count or the elapsed time.
#[derive(Debug)]
pub(crate) struct Progress {
    bar: Option<ProgressBar>,
    by_requests: bool,
    start: Instant,
}

impl Progress {
    /// A bar for a run limited by `requests` or `duration`; hidden unless `wanted`
    /// and stderr is a terminal.
    pub(crate) fn new(wanted: bool, requests: Option<u64>, duration: Option<Duration>) -> Progress {
        let start = Instant::now();
        if !wanted || !std::io::stderr().is_terminal() {
            return Progress {
                bar: None,
                by_requests: false,
                start,
            };
        }
        let (len, by_requests) = match (requests, duration) {
            (Some(n), _) => (n, true),
            (None, Some(d)) => (d.as_millis() as u64, false),
            (None, None) => (0, true),
        };
        let bar = ProgressBar::new(len);
        let template = if by_requests {
            "{elapsed_precise} [{bar:40}] {pos}/{len} requests ({per_sec})"
        } else {
            "{elapsed_precise} [{bar:40}] {msg} requests"
        };
        if let Ok(style) = ProgressStyle::with_template(template) {
            bar.set_style(style.progress_chars("=> "));
        }
        Progress {
            bar: Some(bar),
            by_requests,
            start,
        }
    }

    /// Redraws from the threads' counters.
    pub(crate) fn update(&self, control: &RunControl) {
        let Some(bar) = &self.bar else {
            return;
        };
        let done: u64 = control
            .progress
            .iter()
            .map(|c| c.load(Ordering::Relaxed))
            .sum();
        if self.by_requests {
            bar.set_position(done);
        } else {
            bar.set_position(self.start.elapsed().as_millis() as u64);
            bar.set_message(done.to_string());
        }
    }

    /// Removes the bar.
    pub(crate) fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }

    /// Whether a bar is drawn.
    pub(crate) fn visible(&self) -> bool {
        self.bar.is_some()
    }
}
