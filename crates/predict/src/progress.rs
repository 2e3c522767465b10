//! What a prediction says while it runs: a bar on a terminal, one line per
//! step elsewhere (a CI log, a pipe, `2> file`), or nothing.
//!
//! Why lines and not silence off a terminal: a prediction measures for one to
//! three minutes, and a log that shows nothing for that long cannot be told
//! from a hung job. A line per step (the probes, each calibration step, the
//! fit, each validation load) says where it is and what it has seen so far,
//! without the bar's redraws, which a log would keep as garbage.

use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressStyle};

/// How a prediction reports its progress.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProgressMode {
    /// A bar that redraws in place (stderr is a terminal).
    Bar,
    /// One line per step on stderr, prefixed `servelab: predict:`.
    Lines,
    /// Nothing.
    Off,
}

impl ProgressMode {
    /// The bar when stderr is a terminal, else lines; `Off` when not wanted.
    pub fn for_stderr(wanted: bool) -> ProgressMode {
        use std::io::IsTerminal as _;
        match (wanted, std::io::stderr().is_terminal()) {
            (false, _) => ProgressMode::Off,
            (true, true) => ProgressMode::Bar,
            (true, false) => ProgressMode::Lines,
        }
    }
}

/// The progress of one run.
#[derive(Debug)]
pub(crate) struct Progress {
    bar: ProgressBar,
    lines: bool,
    start: Instant,
}

impl Progress {
    /// A progress report of `mode` for a run of about `total` measured time.
    pub(crate) fn new(mode: ProgressMode, total: Duration) -> Progress {
        let bar = if mode == ProgressMode::Bar {
            let b = ProgressBar::new(total.as_millis() as u64);
            b.set_style(
                ProgressStyle::with_template("{elapsed:>4} [{bar:30}] {msg}")
                    .unwrap_or_else(|_| ProgressStyle::default_bar()),
            );
            b
        } else {
            ProgressBar::hidden()
        };
        Progress {
            bar,
            lines: mode == ProgressMode::Lines,
            start: Instant::now(),
        }
    }

    /// A run that says nothing (tests).
    #[cfg(test)]
    pub(crate) fn off() -> Progress {
        Progress::new(ProgressMode::Off, Duration::ZERO)
    }

    /// What is happening now: the bar's message only (a warm-up, a repeat),
    /// too fine for a line of its own.
    pub(crate) fn doing(&self, what: impl Into<String>) {
        self.bar.set_message(what.into());
    }

    /// A step begun or done: the bar's message, or a line with the time since
    /// the start.
    pub(crate) fn step(&self, what: impl Into<String>) {
        let what = what.into();
        if self.lines {
            eprintln!(
                "servelab: predict: [{:>5.1} s] {what}",
                self.start.elapsed().as_secs_f64()
            );
        }
        self.bar.set_message(what);
    }

    /// Measured time done.
    pub(crate) fn advance(&self, measured: Duration) {
        self.bar.inc(measured.as_millis() as u64);
    }

    /// Removes the bar.
    pub(crate) fn finish(&self) {
        self.bar.finish_and_clear();
    }
}
