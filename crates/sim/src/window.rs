//! The kept window of one replication: recording completions, cutting the warm-up,
//! and turning cumulative counters into metrics.
//!
//! The event loop keeps cumulative counters and time integrals ([`Cum`]). The window
//! stores every completion (4 bytes each, for MSER-5 and the percentiles) and a
//! snapshot of the counters every 5 completions, so that after the run the warm-up
//! cut, in batches of 5, selects a snapshot and every metric is the difference of two
//! snapshots over the time between them; no second pass over the run is needed.

use std::sync::Mutex;

use crate::error::{Result, SimError};
use crate::stats::quantiles;

/// Buffers of closed replications, for the next ones to reuse. A point holds all its
/// replications until its warm-up cut is chosen, then frees them together, and the
/// allocator gave that memory back to the kernel: fresh buffers for the next point
/// cost page faults, 5% of a seed-002 sweep's CPU time. Reuse keeps the pages.
/// Contents are cleared, so results do not depend on it.
static SPARE: Mutex<Vec<(Vec<Obs>, Vec<Cum>)>> = Mutex::new(Vec::new());

/// Most bytes [`SPARE`] keeps after a run.
const SPARE_BYTES: usize = 64 << 20;

fn bytes(obs: &Vec<Obs>, snaps: &Vec<Cum>) -> usize {
    obs.capacity() * size_of::<Obs>() + snaps.capacity() * size_of::<Cum>()
}

/// Most completions one replication keeps (every one is stored for MSER-5 and the
/// percentiles, plus a snapshot per 5: about 25 bytes each, so 0.5 GB here).
pub(crate) const MAX_KEPT: usize = 20_000_000;

/// Cumulative counters and time integrals at one instant.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Cum {
    pub(crate) t: f64,
    /// Integral of the number of cores running a thread.
    pub(crate) busy: f64,
    /// Integral of the number of cores switching context.
    pub(crate) switching: f64,
    /// Integral of the buffer length.
    pub(crate) buffer: f64,
    /// Integral of the number of requests on the server.
    pub(crate) in_system: f64,
    pub(crate) arrivals: u64,
    pub(crate) completions: u64,
    pub(crate) good: u64,
    pub(crate) bad: u64,
    /// Sum of the response times (R_attempt) of good completions.
    pub(crate) good_rt: f64,
    /// Sum of the users' response times (R_user) of good completions.
    pub(crate) good_user_rt: f64,
    /// Users' response periods ended: answered, given up, or blocked and thinking
    /// again (one user cycle each, for Little's law).
    pub(crate) cycles: u64,
    /// Sum of the lengths of those periods (from the end of thinking to their end).
    pub(crate) cycle_rt: f64,
    /// Requests stopped because their user had gone (`OnAbandon::Cancel`).
    pub(crate) cancelled: u64,
    pub(crate) drops: u64,
    pub(crate) timeouts: u64,
    pub(crate) gave_up: u64,
}

/// The metrics of one replication after warm-up deletion. Rates are per second.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct RepMetrics {
    pub(crate) throughput: f64,
    pub(crate) goodput: f64,
    pub(crate) badput: f64,
    pub(crate) attempt_response_time: f64,
    pub(crate) user_response_time: f64,
    /// User cycles (response periods ended) per second.
    pub(crate) cycle_rate: f64,
    /// Mean response period of a user, censored periods included.
    pub(crate) cycle_time: f64,
    /// Users still waiting at the end of the run (counted to the end, lower bounds).
    pub(crate) waiting_at_end: f64,
    pub(crate) p50: f64,
    pub(crate) p90: f64,
    pub(crate) p99: f64,
    pub(crate) utilisation: f64,
    pub(crate) switch_fraction: f64,
    pub(crate) drop_rate: f64,
    pub(crate) drop_fraction: f64,
    pub(crate) timeout_rate: f64,
    pub(crate) give_up_rate: f64,
    pub(crate) cancel_rate: f64,
    pub(crate) mean_buffer: f64,
    pub(crate) mean_in_system: f64,
    pub(crate) duration: f64,
}

/// What one replication returns.
#[derive(Clone, Copy, Debug)]
pub(crate) struct RepOutput {
    pub(crate) metrics: RepMetrics,
    /// Completions deleted as warm-up.
    pub(crate) warmup_deleted: u64,
    /// Simulated time at which the kept window starts.
    pub(crate) warmup_time: f64,
    /// Completions kept.
    pub(crate) kept: u64,
    /// Events processed (stale ones included).
    pub(crate) events: u64,
}

/// One completion: its response time as an `f32` (4 bytes: a replication keeps every
/// completion, and memory traffic, page faults included, was an eighth of the run
/// time with 16-byte records), negated for badput. `-0.0` is negative too, so a zero
/// response time keeps its flag.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Obs(f32);

impl Obs {
    pub(crate) fn new(rt: f64, good: bool) -> Obs {
        let rt = rt as f32;
        Obs(if good { rt } else { -rt })
    }
    fn good(self) -> bool {
        !self.0.is_sign_negative()
    }
    fn rt(self) -> f64 {
        f64::from(self.0.abs())
    }
}

/// The completions and snapshots of one replication since its window opened.
#[derive(Debug)]
pub(crate) struct Window {
    obs: Vec<Obs>,
    snaps: Vec<Cum>,
    target: u64,
}

impl Drop for Window {
    fn drop(&mut self) {
        let (obs, snaps) = (
            std::mem::take(&mut self.obs),
            std::mem::take(&mut self.snaps),
        );
        if let Ok(mut spare) = SPARE.lock() {
            let held: usize = spare.iter().map(|(o, s)| bytes(o, s)).sum();
            if held + bytes(&obs, &snaps) <= SPARE_BYTES {
                spare.push((obs, snaps));
            }
        }
    }
}

impl Window {
    /// A window that will be full after `target` completions (`u64::MAX`: never).
    pub(crate) fn new(target: u64) -> Window {
        // Reserve for the run, but never more than 1M entries up front.
        let reserve = target.min(1 << 20) as usize;
        let spare = SPARE.lock().ok().and_then(|mut s| s.pop());
        let (mut obs, mut snaps) = spare.unwrap_or_default();
        obs.clear();
        snaps.clear();
        obs.reserve(reserve);
        snaps.reserve(reserve / 5 + 2);
        Window { obs, snaps, target }
    }

    /// Starts recording with the counters as they are now.
    pub(crate) fn open(&mut self, now: Cum) {
        self.snaps.push(now);
    }

    /// Records a completion (`now` includes it); true when the window is full.
    #[inline]
    pub(crate) fn record(&mut self, o: Obs, now: &Cum) -> Result<bool> {
        if self.obs.len() >= MAX_KEPT {
            return Err(SimError::InvalidRun(format!(
                "a replication of more than {MAX_KEPT} completions would need gigabytes \
                 (about 25 bytes each); use more replications or a shorter horizon"
            )));
        }
        self.obs.push(o);
        if self.obs.len() % 5 == 0 {
            self.snaps.push(*now);
        }
        Ok(self.obs.len() as u64 >= self.target)
    }

    /// The run is over at `end`: a replication whose warm-up cut is still to be
    /// chosen (see `warmup`).
    ///
    /// `censored` is the number of users still waiting at `end` and the sum of their
    /// waits so far.
    pub(crate) fn finish(
        mut self,
        end: Cum,
        censored: (u64, f64),
        cores: u32,
        events: u64,
    ) -> Replication {
        if self.snaps.is_empty() {
            // A horizon shorter than the fixed warm-up: nothing kept.
            self.snaps.push(end);
        }
        Replication {
            window: self,
            end,
            censored,
            cores,
            events,
        }
    }
}

/// A replication that has run, before its warm-up cut: the cut may depend on the
/// other replications of its point (see `warmup`).
#[derive(Debug)]
pub(crate) struct Replication {
    window: Window,
    end: Cum,
    censored: (u64, f64),
    cores: u32,
    events: u64,
}

/// The two series the warm-up cut is computed on, one value per batch of 5
/// completions.
#[derive(Debug, Default)]
pub(crate) struct Series {
    /// Batch means of the response times (good and bad completions).
    pub(crate) rt: Vec<f64>,
    /// Time-average number of requests on the server during each batch (which shows
    /// transients of the state itself, drops and buffer, that response times hide
    /// behind a full buffer).
    pub(crate) occupancy: Vec<f64>,
}

impl Replication {
    /// Number of whole batches of 5 completions recorded.
    pub(crate) fn batches(&self) -> usize {
        (self.window.obs.len() / 5).min(self.window.snaps.len() - 1)
    }

    /// The batch series of this replication (see [`Series`]).
    pub(crate) fn series(&self) -> Series {
        let w = &self.window;
        let m = self.batches();
        let rt = w.obs[..5 * m]
            .chunks_exact(5)
            .map(|c| c.iter().map(|o| o.rt()).sum::<f64>() / 5.0)
            .collect();
        let mut last = 0.0;
        let occupancy = w.snaps[..=m]
            .windows(2)
            .map(|s| {
                let dt = s[1].t - s[0].t;
                if dt > 0.0 {
                    last = (s[1].in_system - s[0].in_system) / dt;
                }
                last
            })
            .collect();
        Series { rt, occupancy }
    }

    /// Deletes the first `d` batches of 5 completions and computes the metrics of the
    /// rest, up to the end of the run.
    pub(crate) fn close(&self, d: usize) -> RepOutput {
        let (w, end, cores, events) = (&self.window, self.end, self.cores, self.events);
        let d = d.min(w.snaps.len() - 1);
        let start = w.snaps[d];
        let kept = &w.obs[(5 * d).min(w.obs.len())..];
        let mut good_rts: Vec<f64> = kept.iter().filter(|o| o.good()).map(|o| o.rt()).collect();
        // The values are f32s widened to f64; print them as the short decimals they are
        // (0.919, not 0.9190000295639038) in tables and JSON.
        let tidy = |v: f64| {
            if v.is_finite() {
                (v as f32).to_string().parse().unwrap_or(v)
            } else {
                v
            }
        };
        let [p50, p90, p99] = quantiles(&mut good_rts, [0.50, 0.90, 0.99]).map(tidy);
        let dt = end.t - start.t;
        let core_time = dt * f64::from(cores);
        let per_s = |a: u64, b: u64| (a - b) as f64 / dt;
        let arrivals = end.arrivals - start.arrivals;
        let (censored_n, censored_rt) = self.censored;
        let metrics = RepMetrics {
            throughput: per_s(end.completions, start.completions),
            goodput: per_s(end.good, start.good),
            badput: per_s(end.bad, start.bad),
            attempt_response_time: (end.good_rt - start.good_rt) / (end.good - start.good) as f64,
            // Users still waiting at the end count to the end of the run, as lower
            // bounds: dropping them biased R_user low past the collapse, where the
            // longest waits are the ones that have not ended.
            user_response_time: (end.good_user_rt - start.good_user_rt + censored_rt)
                / (end.good - start.good + censored_n) as f64,
            cycle_rate: per_s(end.cycles, start.cycles),
            cycle_time: (end.cycle_rt - start.cycle_rt + censored_rt)
                / (end.cycles - start.cycles + censored_n) as f64,
            waiting_at_end: censored_n as f64,
            p50,
            p90,
            p99,
            utilisation: (end.busy - start.busy) / core_time,
            switch_fraction: (end.switching - start.switching) / core_time,
            drop_rate: per_s(end.drops, start.drops),
            drop_fraction: if arrivals > 0 {
                (end.drops - start.drops) as f64 / arrivals as f64
            } else {
                f64::NAN
            },
            timeout_rate: per_s(end.timeouts, start.timeouts),
            give_up_rate: per_s(end.gave_up, start.gave_up),
            cancel_rate: per_s(end.cancelled, start.cancelled),
            mean_buffer: (end.buffer - start.buffer) / dt,
            mean_in_system: (end.in_system - start.in_system) / dt,
            duration: dt,
        };
        RepOutput {
            metrics,
            warmup_deleted: 5 * d as u64,
            warmup_time: start.t,
            kept: kept.len() as u64,
            events,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cum(t: f64, completions: u64, in_system: f64) -> Cum {
        Cum {
            t,
            completions,
            good: completions,
            in_system,
            good_rt: completions as f64,
            ..Cum::default()
        }
    }

    #[test]
    fn observations_keep_their_flag() {
        assert!(Obs::new(0.0, true).good());
        assert!(!Obs::new(0.0, false).good());
        assert_eq!(Obs::new(1.5, false).rt(), 1.5);
    }

    #[test]
    fn metrics_are_differences_of_snapshots() {
        // 10 completions of response time 1 over 10 s, 2 requests on the server on
        // average; no warm-up cut for a fixed warm-up.
        let mut w = Window::new(10);
        w.open(cum(0.0, 0, 0.0));
        for i in 1..=10u64 {
            let full = w
                .record(Obs::new(1.0, true), &cum(i as f64, i, 2.0 * i as f64))
                .unwrap();
            assert_eq!(full, i == 10);
        }
        let out = w.finish(cum(10.0, 10, 20.0), (0, 0.0), 4, 99).close(0);
        assert_eq!(out.metrics.throughput, 1.0);
        assert_eq!(out.metrics.attempt_response_time, 1.0);
        assert_eq!(out.metrics.mean_in_system, 2.0);
        assert_eq!(out.metrics.p50, 1.0);
        assert_eq!((out.kept, out.events, out.warmup_deleted), (10, 99, 0));
    }

    #[test]
    fn mser_cut_removes_a_transient_in_either_series() {
        // Response times flat, occupancy 10 for two batches then alternating 0.5 and
        // 1.5 (mean 1): the occupancy series decides, and cuts exactly two batches.
        let mut w = Window::new(u64::MAX);
        w.open(cum(0.0, 0, 0.0));
        let mut integral = 0.0;
        for i in 1..=40u64 {
            let batch = (i - 1) / 5;
            let level = match batch {
                0 | 1 => 10.0,
                b if b % 2 == 0 => 0.5,
                _ => 1.5,
            };
            integral += level * 0.2; // 0.2 s per completion
            w.record(Obs::new(1.0, true), &cum(i as f64 * 0.2, i, integral))
                .unwrap();
        }
        let out = crate::warmup::close_point(
            vec![w.finish(cum(8.0, 40, integral), (0, 0.0), 1, 0)],
            crate::spec::Warmup::Mser5,
        )
        .remove(0);
        assert_eq!(out.warmup_deleted, 10);
        assert!(
            (out.metrics.mean_in_system - 1.0).abs() < 1e-9,
            "{:?}",
            out.metrics
        );
    }
}
