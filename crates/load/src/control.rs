//! What the event-loop threads of one run share: the request tickets, the
//! progress counters and the stop flag.
//!
//! Nothing else crosses threads during a run: each thread records into its own
//! `Recorder`, and the recorders are added once the threads have finished.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// State shared by all threads of a run.
#[derive(Debug)]
pub(crate) struct RunControl {
    /// Requests handed out so far, when the run is limited by count.
    pub issued: AtomicU64,
    /// The request limit (`u64::MAX`: none).
    pub limit: u64,
    /// Completed requests per thread, for the progress bar.
    pub progress: Vec<AtomicU64>,
    /// Set to stop every thread at its next loop turn (the caller's flag, if any).
    pub stop: Arc<AtomicBool>,
    /// Some thread has connected at least once.
    pub connected: AtomicBool,
    /// Some thread has seen a connect fail on every address of its target.
    pub connect_failed: AtomicBool,
}

impl RunControl {
    pub(crate) fn new(threads: usize, limit: Option<u64>, stop: Arc<AtomicBool>) -> RunControl {
        RunControl {
            issued: AtomicU64::new(0),
            limit: limit.unwrap_or(u64::MAX),
            progress: (0..threads).map(|_| AtomicU64::new(0)).collect(),
            stop,
            connected: AtomicBool::new(false),
            connect_failed: AtomicBool::new(false),
        }
    }

    /// Whether a run that has lasted `elapsed` should stop because its target
    /// is unreachable: connects have failed and none ever succeeded, on any
    /// thread, for [`NEVER_CONNECTED`](crate::connect_failure::NEVER_CONNECTED).
    pub(crate) fn never_connected(&self, elapsed: std::time::Duration) -> bool {
        elapsed >= crate::connect_failure::NEVER_CONNECTED
            && self.connect_failed.load(Ordering::Relaxed)
            && !self.connected.load(Ordering::Relaxed)
    }

    /// Takes the right to start one more request; exact across threads.
    #[inline]
    pub(crate) fn take_ticket(&self) -> bool {
        if self.limit == u64::MAX {
            return true;
        }
        self.issued.fetch_add(1, Ordering::Relaxed) < self.limit
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tickets_are_exact_across_threads() {
        let control = Arc::new(RunControl::new(4, Some(10_007), Arc::default()));
        let taken: u64 = (0..4)
            .map(|_| {
                let c = Arc::clone(&control);
                std::thread::spawn(move || (0..).take_while(|_| c.take_ticket()).count() as u64)
            })
            .collect::<Vec<_>>()
            .into_iter()
            .map(|h| h.join().unwrap())
            .sum();
        assert_eq!(taken, 10_007);
        assert!(RunControl::new(1, None, Arc::default()).take_ticket());
    }
}
