//! How to run a model: replications, run length, warm-up and seed.

use serde::Serialize;

use crate::error::{Result, SimError};

/// Most batches a replication's MSER series holds (24 bytes each: 192 KiB). When a
/// run fills it, adjacent batches are merged in pairs and the batch size doubles (see
/// `window::Series`); a power of two, so that the merges land on batch boundaries. Runs of
/// up to `5 * SERIES_MAX` completions (40,960: seed 002's 20,000 and the lab's
/// defaults) keep batches of 5, so their cut is exactly MSER-5's as before.
pub(crate) const SERIES_MAX: usize = 1 << 13;

/// Most MSER batches of one point, held at once to choose the warm-up cut: each
/// replication's series holds at most 8,192 batches of 24 bytes (192 KiB), whatever
/// its length, so this bounds replications x batches (about 1 GB here).
pub const MAX_POINT_BATCHES: u64 = 40_000_000;

/// Most requests one replication may be asked for: a bound on the run time (about
/// a minute of one core per 100 M), not on memory, which no longer grows with the
/// requests (the MSER-5 series is bounded too, since issue 27).
pub const MAX_REQUESTS: u64 = 10_000_000_000;

/// How long one replication runs (after its warm-up when the warm-up is fixed).
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Length {
    /// Until this many requests have completed (good or bad). Rounded up to a multiple
    /// of 5, the MSER-5 batch size.
    ///
    /// Short runs are biased where the system relaxes slowly, at the knee (the server
    /// starts empty). With the warm-up cut of one replication at a time
    /// (`Warmup::Mser5Each`), at seed 002's knee (N = 144, 400 replications) R read
    /// 2.5% low with 4,000 requests and 0.7% low with 20,000. The default cut, on the
    /// replication average, deletes more when there are more replications; at c = 8,
    /// N = N* = 568 with 100 replications of 4,000 requests it left R 0.2% low and
    /// its intervals covered 98% of the time (per replication: 6.8% low, 12%). Near
    /// N*, 20,000 requests or more still buy narrower intervals for the same work.
    Requests(u64),
    /// Until this much simulated time has passed, in seconds.
    Horizon(f64),
}

/// How the initial transient (all users start thinking, the server empty) is removed.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Warmup {
    /// MSER-5 on the replication average (the default): delete the prefix of batches
    /// of 5 completions that minimises the standard error of the rest (searched over
    /// the first half of the run), computed on the batch-by-batch average over the
    /// point's replications of two series, response times and the time-average number
    /// on the server per batch; the later cut wins, and every replication is cut
    /// there. Response times alone miss transients that a full buffer hides from them
    /// (drops, occupancy). Why pooled: see the `warmup` module.
    Mser5,
    /// MSER-5 on each replication alone (the default before schema 2): deletes too
    /// little near the knee once there are many replications. Kept for comparison.
    Mser5Each,
    /// Delete everything before this simulated time, in seconds; the run length counts
    /// from there.
    Fixed(f64),
}

/// Replications, run length, warm-up and seed of a run.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct RunSpec {
    /// Independent replications per point (at least 2 for an interval).
    pub reps: u32,
    /// Length of each replication.
    pub length: Length,
    /// Warm-up deletion.
    pub warmup: Warmup,
    /// Master seed; each (point, replication) gets its own stream derived from it.
    pub seed: u64,
}

impl Default for RunSpec {
    /// 10 replications of 20,000 requests, MSER-5, seed 1 (seed 002's sweep).
    fn default() -> RunSpec {
        RunSpec {
            reps: 10,
            length: Length::Requests(20_000),
            warmup: Warmup::Mser5,
            seed: 1,
        }
    }
}

impl RunSpec {
    /// Checks that the run can produce a result.
    pub fn validate(&self) -> Result<()> {
        let bad = |m: &str| Err(SimError::InvalidRun(m.to_string()));
        if self.reps == 0 {
            return bad("need at least one replication");
        }
        if self.reps > 100_000 {
            return bad("at most 100,000 replications per point");
        }
        let mser = matches!(self.warmup, Warmup::Mser5 | Warmup::Mser5Each);
        match self.length {
            Length::Requests(0) => return bad("need at least one request per replication"),
            Length::Requests(r) if r > MAX_REQUESTS => {
                return Err(SimError::InvalidRun(format!(
                    "at most {MAX_REQUESTS} requests per replication; use more replications"
                )));
            }
            Length::Horizon(h) if !(h > 0.0 && h.is_finite()) => {
                return bad("the horizon must be positive");
            }
            _ => {}
        }
        if let (true, Length::Requests(r)) = (mser, self.length) {
            // Choosing the cut needs the batch series of every replication of a
            // point at once; a fixed warm-up keeps none.
            let batches = (r / 5).min(SERIES_MAX as u64);
            if u64::from(self.reps).saturating_mul(batches) > MAX_POINT_BATCHES {
                return Err(SimError::InvalidRun(format!(
                    "{} replications of {r} requests hold more than {MAX_POINT_BATCHES} \
                     MSER-5 batches per point (about 1 GB, held at once to choose the \
                     warm-up cut); use fewer replications, or a fixed warm-up",
                    self.reps
                )));
            }
        }
        if let Warmup::Fixed(w) = self.warmup {
            if !(w >= 0.0 && w.is_finite()) {
                return bad("the warm-up must be finite and non-negative");
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_is_valid_and_nonsense_is_not() {
        RunSpec::default().validate().unwrap();
        RunSpec {
            reps: 10,
            length: Length::Requests(10_000_000),
            warmup: Warmup::Mser5Each,
            ..RunSpec::default()
        }
        .validate()
        .unwrap();
        RunSpec {
            reps: 2,
            length: Length::Requests(1_000_000_000),
            warmup: Warmup::Fixed(10.0),
            ..RunSpec::default()
        }
        .validate()
        .unwrap();
        // The MSER-5 series no longer grows with the run (issue 27): 200 M requests
        // per replication are allowed, as with a fixed warm-up.
        RunSpec {
            reps: 40,
            length: Length::Requests(200_000_000),
            ..RunSpec::default()
        }
        .validate()
        .unwrap();
        let bad = [
            RunSpec {
                reps: 0,
                ..RunSpec::default()
            },
            RunSpec {
                reps: 1_000_000,
                ..RunSpec::default()
            },
            RunSpec {
                length: Length::Requests(0),
                ..RunSpec::default()
            },
            RunSpec {
                length: Length::Requests(1 << 40),
                ..RunSpec::default()
            },
            RunSpec {
                length: Length::Horizon(0.0),
                ..RunSpec::default()
            },
            RunSpec {
                length: Length::Horizon(f64::INFINITY),
                ..RunSpec::default()
            },
            RunSpec {
                warmup: Warmup::Fixed(-1.0),
                ..RunSpec::default()
            },
            RunSpec {
                reps: 100_000,
                length: Length::Requests(40_000_000),
                ..RunSpec::default()
            },
        ];
        for s in bad {
            assert!(
                matches!(s.validate(), Err(SimError::InvalidRun(_))),
                "{s:?}"
            );
        }
    }
}
